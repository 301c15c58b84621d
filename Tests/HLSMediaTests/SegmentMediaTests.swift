import Foundation
import Testing
@testable import HLSMedia

/// Real FFmpeg on real segments of the sample ladder (24 fps, 2 s GOPs and segments,
/// AAC 48 kHz stereo). Serialized: the FFmpeg log sink is process-wide and the leak
/// check reads this process's resident size.
@Suite(.serialized)
struct SegmentMediaTests {
    static let rungSizes = [(416, 234), (640, 360), (1280, 720), (1920, 1080)]

    // MARK: demux

    @Test func demux_tsSegment_videoAndAudioTracksWithSaneTimestamps() throws {
        let fixtures = try Fixtures.get()
        let result = try SegmentDemuxer.demux(segment: fixtures.segment(rung: 1, index: 1))

        let video = try #require(result.track(.video))
        let audio = try #require(result.track(.audio))
        #expect(video.codecName == "h264")
        #expect(video.width == 640 && video.height == 360)
        #expect(audio.codecName == "aac")
        #expect(audio.sampleRate == 48_000 && audio.channelCount == 2)
        #expect(result.corruptPacketCount == 0)
        #expect(result.warnings.isEmpty)

        let videoPackets = result.packets(of: .video)
        #expect(videoPackets.count == 48)
        #expect(videoPackets.first?.isKeyframe == true)
        #expect(videoPackets.filter(\.isKeyframe).count == 1)
        // Decode order: DTS strictly increases; PTS >= DTS.
        let dts = videoPackets.compactMap(\.dtsSeconds)
        #expect(dts.count == 48)
        #expect(zip(dts, dts.dropFirst()).allSatisfy { $0 < $1 })
        for packet in videoPackets {
            if let pts = packet.ptsSeconds, let d = packet.dtsSeconds { #expect(pts >= d - 1e-9) }
        }
        // Segment 1 starts at media time ~2 s (plus the TS muxer's initial offset).
        let pts = videoPackets.compactMap(\.ptsSeconds).sorted()
        let span = try #require(pts.last) - pts[0] + 1.0 / 24
        #expect(abs(span - 2.0) < 0.01)

        let audioPackets = result.packets(of: .audio)
        let apts = audioPackets.compactMap(\.ptsSeconds)
        #expect(zip(apts, apts.dropFirst()).allSatisfy { $0 < $1 })
        let audioSpan = try #require(apts.last) - apts[0] + 1024.0 / 48_000
        #expect(abs(audioSpan - 2.0) < 0.1)
        #expect(abs(apts[0] - pts[0]) < 0.1, "audio and video start together")
    }

    @Test func demux_fragmentedMP4WithInitSection_readsThroughSeekableAVIO() throws {
        let fixtures = try Fixtures.get()
        let result = try SegmentDemuxer.demux(
            segment: Data(contentsOf: fixtures.fmp4Segment),
            initializationSection: Data(contentsOf: fixtures.fmp4Init),
            hint: .fragmentedMP4)
        #expect(result.track(.video)?.width == 416)
        #expect(result.packets(of: .video).count == 48)
        #expect(result.packets(of: .video).first?.isKeyframe == true)
        let frames = try decodeAll(result)
        #expect(frames.video.count == 48)
        #expect(frames.errors == 0)
    }

    @Test func demux_probeHint_identifiesPlainMP4() throws {
        let fixtures = try Fixtures.get()
        let result = try SegmentDemuxer.demux(segment: Data(contentsOf: fixtures.plainMP4), hint: .probe)
        #expect(result.track(.video)?.codecName == "h264")
        #expect(result.packets(of: .video).count == 48)
    }

    @Test func demux_packedAudioADTS_audioOnly() throws {
        let fixtures = try Fixtures.get()
        let result = try SegmentDemuxer.demux(segment: Data(contentsOf: fixtures.packedAudio), hint: .packedAudioADTS)
        #expect(result.track(.video) == nil)
        #expect(result.track(.audio)?.sampleRate == 48_000)
        let frames = try decodeAll(result)
        let samples = frames.audio.reduce(0) { $0 + $1.sampleCount }
        #expect(samples == result.packets(of: .audio).count * 1024)
        // The hls muxer cuts audio where the video cuts: 91..95 AAC frames per 2 s segment.
        #expect(abs(samples - 96_000) <= 3 * 1024, "got \(samples) samples")
    }

    // MARK: decode

    @Test(arguments: [0, 1, 3])
    func decode_videoSegment_48FramesAtRungSize(rung: Int) throws {
        let fixtures = try Fixtures.get()
        let result = try SegmentDemuxer.demux(segment: fixtures.segment(rung: rung, index: 0))
        let decoder = try TrackDecoder(parameters: #require(result.track(.video)))
        #expect(decoder.codecName == "h264")
        var frames: [DecodedFrame] = []
        for packet in result.packets(of: .video) { frames += try decoder.decode(packet) }
        frames += try decoder.drain()

        #expect(frames.count == 48)
        let (w, h) = Self.rungSizes[rung]
        #expect(frames.allSatisfy { $0.kind == .video && $0.width == w && $0.height == h })
        let pts = frames.compactMap(\.ptsSeconds)
        #expect(pts.count == 48)
        // Presentation order, one frame every 1/24 s.
        for (a, b) in zip(pts, pts.dropFirst()) { #expect(abs((b - a) - 1.0 / 24) < 0.001) }
    }

    @Test func decode_audio_resampledToAbout2sAt48k() throws {
        let fixtures = try Fixtures.get()
        let result = try SegmentDemuxer.demux(segment: fixtures.segment(rung: 1, index: 1))
        let decoder = try TrackDecoder(parameters: #require(result.track(.audio)))
        var frames: [DecodedFrame] = []
        for packet in result.packets(of: .audio) { frames += try decoder.decode(packet) }
        frames += try decoder.drain()
        let samples = frames.reduce(0) { $0 + $1.sampleCount }
        #expect(samples == result.packets(of: .audio).count * 1024)
        #expect(abs(samples - 96_000) <= 2 * 1024, "got \(samples) samples")
        #expect(frames.allSatisfy { $0.kind == .audio })
    }

    @Test func decode_twoConsecutiveSegments_oneDecoderKeepsGoing() throws {
        let fixtures = try Fixtures.get()
        let first = try SegmentDemuxer.demux(segment: fixtures.segment(rung: 1, index: 0))
        let second = try SegmentDemuxer.demux(segment: fixtures.segment(rung: 1, index: 1))
        let video = try TrackDecoder(parameters: #require(first.track(.video)))
        let audio = try TrackDecoder(parameters: #require(first.track(.audio)))
        var videoFrames: [DecodedFrame] = []
        var samples = 0
        for segment in [first, second] {
            for packet in segment.packets {
                switch packet.kind {
                case .video: videoFrames += try video.decode(packet)
                case .audio: samples += try audio.decode(packet).reduce(0) { $0 + $1.sampleCount }
                case .other: break
                }
            }
        }
        videoFrames += try video.drain()
        samples += try audio.drain().reduce(0) { $0 + $1.sampleCount }
        #expect(videoFrames.count == 96)
        let pts = videoFrames.compactMap(\.ptsSeconds)
        #expect(zip(pts, pts.dropFirst()).allSatisfy { $0 < $1 }, "continuous across the boundary")
        // Each AAC packet is 1024 samples; same-rate conversion neither adds nor drops any.
        let audioPackets = first.packets(of: .audio).count + second.packets(of: .audio).count
        #expect(samples == audioPackets * 1024)
        // The TS segmenter cuts audio at PES boundaries, not at exactly 2 s.
        #expect(abs(samples - 192_000) <= 3 * 1024, "got \(samples) samples")
    }

    @Test func decode_switch360pTo1080p_freshDecoderAndFlushedDecoderBothWork() throws {
        let fixtures = try Fixtures.get()
        let low = try SegmentDemuxer.demux(segment: fixtures.segment(rung: 1, index: 0))
        let high = try SegmentDemuxer.demux(segment: fixtures.segment(rung: 3, index: 1))

        // Fresh decoder per rung.
        let lowFrames = try decodeAll(low).video
        #expect(lowFrames.count == 48 && lowFrames.allSatisfy { $0.width == 640 && $0.height == 360 })
        let highFrames = try decodeAll(high, threadCount: 0).video
        #expect(highFrames.count == 48 && highFrames.allSatisfy { $0.width == 1920 && $0.height == 1080 })

        // One decoder, flushed at the switch: the new SPS reconfigures it.
        let decoder = try TrackDecoder(parameters: #require(low.track(.video)))
        var before: [DecodedFrame] = []
        for packet in low.packets(of: .video).prefix(30) { before += try decoder.decode(packet) }
        decoder.flush()
        var after: [DecodedFrame] = []
        for packet in high.packets(of: .video) { after += try decoder.decode(packet) }
        after += try decoder.drain()
        #expect(before.allSatisfy { $0.width == 640 })
        #expect(after.count == 48)
        #expect(after.allSatisfy { $0.width == 1920 && $0.height == 1080 })

        // After drain + flush the same decoder takes the low rung again.
        decoder.flush()
        var again: [DecodedFrame] = []
        for packet in low.packets(of: .video) { again += try decoder.decode(packet) }
        again += try decoder.drain()
        #expect(again.count == 48 && again.allSatisfy { $0.width == 640 })
    }

    // MARK: hostile input: a thrown MediaError or a flagged result, never a crash

    @Test func corrupt_empty_throwsEmptyInput() {
        #expect(throws: MediaError.emptyInput) { try SegmentDemuxer.demux(segment: Data()) }
    }

    @Test func corrupt_garbageBytes_throws() {
        var rng = SeededGenerator(seed: 7)
        let garbage = Data((0..<100_000).map { _ in UInt8.random(in: 0...255, using: &rng) })
        #expect(throws: MediaError.self) { try SegmentDemuxer.demux(segment: garbage) }
        #expect(throws: MediaError.self) { try SegmentDemuxer.demux(segment: garbage, hint: .probe) }
    }

    @Test func corrupt_mp4FedAsTS_throws() throws {
        let fixtures = try Fixtures.get()
        let mp4 = try Data(contentsOf: fixtures.plainMP4)
        #expect(throws: MediaError.self) { try SegmentDemuxer.demux(segment: mp4, hint: .mpegTS) }
    }

    @Test func corrupt_truncatedHalf_returnsGoodPartWithWarning() throws {
        let fixtures = try Fixtures.get()
        let whole = try fixtures.segment(rung: 1, index: 1)
        // Cut mid-TS-packet, as a dropped connection would.
        let half = whole.prefix(whole.count / 2 + 100)
        let result = try SegmentDemuxer.demux(segment: Data(half))
        #expect(result.warnings.contains { $0.contains("not a multiple of 188") }, "\(result.warnings)")
        let videoPackets = result.packets(of: .video).count
        #expect(videoPackets > 10 && videoPackets < 48)
        let frames = try decodeAll(result)
        #expect(frames.video.count > 10)
    }

    @Test func corrupt_bitFlips_flaggedOrThrown() throws {
        let fixtures = try Fixtures.get()
        var bytes = [UInt8](try fixtures.segment(rung: 0, index: 1))
        var rng = SeededGenerator(seed: 42)
        for _ in 0..<2000 {
            let i = Int.random(in: 0..<bytes.count, using: &rng)
            bytes[i] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
        }
        do {
            let result = try SegmentDemuxer.demux(segment: Data(bytes))
            let frames = try decodeAll(result)
            #expect(result.corruptPacketCount > 0 || !result.warnings.isEmpty || frames.errors > 0)
        } catch let error as MediaError {
            _ = error.description
        }
    }

    @Test func corrupt_200SeededMutations_neverCrash() throws {
        let fixtures = try Fixtures.get()
        let original = [UInt8](try fixtures.segment(rung: 0, index: 2))
        var thrown = 0, flagged = 0, clean = 0
        for seed in 0..<200 {
            var rng = SeededGenerator(seed: UInt64(seed) &* 0x1234_5678 &+ 99)
            var bytes = original
            switch seed % 5 {
            case 0: // many single-bit flips
                for _ in 0..<Int.random(in: 1...500, using: &rng) {
                    let i = Int.random(in: 0..<bytes.count, using: &rng)
                    bytes[i] ^= 1 << UInt8.random(in: 0..<8, using: &rng)
                }
            case 1: // truncation anywhere
                bytes.removeLast(Int.random(in: 0..<bytes.count, using: &rng))
            case 2: // a run of random bytes overwritten
                let start = Int.random(in: 0..<bytes.count, using: &rng)
                let end = min(bytes.count, start + Int.random(in: 1...20_000, using: &rng))
                for i in start..<end { bytes[i] = UInt8.random(in: 0...255, using: &rng) }
            case 3: // bytes dropped from the middle (sync lost)
                let start = Int.random(in: 0..<bytes.count, using: &rng)
                let end = min(bytes.count, start + Int.random(in: 1...5_000, using: &rng))
                bytes.removeSubrange(start..<end)
            default: // random bytes inserted
                let at = Int.random(in: 0...bytes.count, using: &rng)
                bytes.insert(
                    contentsOf: (0..<Int.random(in: 1...3_000, using: &rng)).map { _ in
                        UInt8.random(in: 0...255, using: &rng)
                    }, at: at)
            }
            do {
                let result = try SegmentDemuxer.demux(segment: Data(bytes))
                let frames = try decodeAll(result)
                if result.corruptPacketCount > 0 || !result.warnings.isEmpty || frames.errors > 0 {
                    flagged += 1
                } else {
                    clean += 1
                }
            } catch is MediaError {
                thrown += 1
            }
        }
        #expect(thrown + flagged + clean == 200)
        #expect(thrown + flagged > 100, "thrown \(thrown) flagged \(flagged) clean \(clean)")
    }

    // MARK: logging, versions, leaks

    @Test func log_corruptDecode_isCapturedBySink() throws {
        let fixtures = try Fixtures.get()
        LogCollector.shared.install()
        _ = LogCollector.shared.take()
        var bytes = [UInt8](try fixtures.segment(rung: 1, index: 1))
        var rng = SeededGenerator(seed: 3)
        // Damage the middle (video slice data), keep the head so the demux succeeds.
        for _ in 0..<3000 {
            let i = Int.random(in: bytes.count / 4..<bytes.count, using: &rng)
            bytes[i] = UInt8.random(in: 0...255, using: &rng)
        }
        if let result = try? SegmentDemuxer.demux(segment: Data(bytes)) { try decodeAll(result) }
        let lines = LogCollector.shared.take()
        #expect(!lines.isEmpty)
        #expect(lines.allSatisfy { $0.level <= 24 && !$0.text.isEmpty })
    }

    @Test func version_namesFFmpegAndLibraries() {
        let text = FFmpegVersion.description
        #expect(text.hasPrefix("FFmpeg "))
        #expect(text.contains("libavcodec 59."))
    }

    @Test func leak_200DemuxDecodeRuns_residentGrowthBounded() throws {
        let fixtures = try Fixtures.get()
        let segment = try fixtures.segment(rung: 0, index: 1)
        try decodeAll(SegmentDemuxer.demux(segment: segment)) // warm up allocator and tables
        let before = residentBytes()
        for _ in 0..<200 {
            let result = try SegmentDemuxer.demux(segment: segment)
            let frames = try decodeAll(result)
            #expect(frames.video.count == 48)
        }
        let growth = residentBytes() - before
        #expect(before > 0)
        #expect(growth < 30 * 1024 * 1024, "resident memory grew \(growth / 1024) KiB")
    }
}
