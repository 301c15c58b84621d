import Foundation
import Testing
@testable import HLSMedia

/// Demux-only sessions demux a segment `.reusing` the tracks of the rendition's
/// previous segment instead of probing (avformat_find_stream_info decodes the first
/// frames). They must get exactly the packets, timestamps and tracks a probe gives.
@Suite(.serialized)
struct ReusedCodecParametersTests {
    /// One packet as the forward buffer and media clock see it.
    struct PacketFacts: Equatable {
        var kind: TrackKind
        var ptsSeconds: Double?
        var dtsSeconds: Double?
        var durationSeconds: Double?
        var isKeyframe: Bool
        var isCorrupt: Bool
        var size: Int
    }

    static func facts(_ result: DemuxResult) -> [PacketFacts] {
        result.packets.map {
            PacketFacts(
                kind: $0.kind, ptsSeconds: $0.ptsSeconds, dtsSeconds: $0.dtsSeconds, durationSeconds: $0.durationSeconds,
                isKeyframe: $0.isKeyframe, isCorrupt: $0.isCorrupt, size: $0.size)
        }
    }

    static func trackFacts(_ result: DemuxResult) -> [String] { result.tracks.map { "\($0.streamIndex) \($0)" } }

    @Test(arguments: 0..<4)
    func tsSegments_reusingTheFirstSegmentsTracks_samePacketsTimestampsAndTracksAsProbing(rung: Int) throws {
        let fixtures = try Fixtures.get()
        var known = try SegmentDemuxer.demux(segment: fixtures.segment(rung: rung, index: 0)).tracks
        #expect(known.count == 2)
        for index in 1..<4 {
            let segment = try fixtures.segment(rung: rung, index: index)
            let probed = try SegmentDemuxer.demux(segment: segment, hint: .mpegTS, codecParameters: .probe)
            let reused = try SegmentDemuxer.demux(segment: segment, hint: .mpegTS, codecParameters: .reusing(known))

            let expected = Self.facts(probed)
            let got = Self.facts(reused)
            #expect(got.count == expected.count, "rung \(rung) segment \(index)")
            #expect(got == expected, "rung \(rung) segment \(index): packets differ")
            #expect(Self.trackFacts(reused) == Self.trackFacts(probed))
            #expect(reused.warnings == probed.warnings)
            // Every packet timestamped: AAC frames after the first of a PES get theirs only
            // when FFmpeg knows the sample rate (without it they would have none).
            #expect(reused.packets.allSatisfy { $0.ptsSeconds != nil && $0.dtsSeconds != nil })
            #expect(reused.packets(of: .video).count == 48)
            #expect(reused.track(.video)?.width == SegmentMediaTests.rungSizes[rung].0)
            #expect(reused.track(.audio)?.sampleRate == 48_000)
            known = reused.tracks
        }
    }

    @Test func tsSegment_tracksOfAnotherCodec_areNotAdopted_andTheSegmentIsProbed() throws {
        let fixtures = try Fixtures.get()
        // Packed audio has an AAC track but no H.264 one: the video stream must be probed.
        let audioOnly = try SegmentDemuxer.demux(segment: Data(contentsOf: fixtures.packedAudio), hint: .packedAudioADTS).tracks
        let segment = try fixtures.segment(rung: 2, index: 1)
        let probed = try SegmentDemuxer.demux(segment: segment)
        let reused = try SegmentDemuxer.demux(segment: segment, codecParameters: .reusing(audioOnly))
        #expect(Self.facts(reused) == Self.facts(probed))
        #expect(reused.track(.video)?.width == 1280 && reused.track(.video)?.height == 720)
        // Nothing known at all is the same as probing.
        let none = try SegmentDemuxer.demux(segment: segment, codecParameters: .reusing([]))
        #expect(Self.facts(none) == Self.facts(probed))
    }

    /// A new period (after a discontinuity) with the same codecs but another sample rate:
    /// the adopted 48 kHz would misplace the interpolated AAC timestamps, so the segment
    /// must be probed and come out exactly as a probe gives it.
    @Test func tsSegment_otherSampleRate_isProbedAfterAll() throws {
        let fixtures = try Fixtures.get()
        let known = try SegmentDemuxer.demux(segment: fixtures.segment(rung: 1, index: 0)).tracks
        #expect(known.first { $0.kind == .audio }?.sampleRate == 48_000)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-reuse-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.ts"), output = dir.appendingPathComponent("out.ts")
        try fixtures.segment(rung: 1, index: 1).write(to: input)
        let ffmpeg = Process()
        ffmpeg.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        ffmpeg.arguments = [
            "ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i", input.path,
            "-c:v", "copy", "-c:a", "aac", "-ar", "44100", "-f", "mpegts", output.path
        ]
        try ffmpeg.run()
        ffmpeg.waitUntilExit()
        try #require(ffmpeg.terminationStatus == 0, "ffmpeg could not make the 44.1 kHz segment")
        let segment = try Data(contentsOf: output)

        let probed = try SegmentDemuxer.demux(segment: segment)
        let reused = try SegmentDemuxer.demux(segment: segment, codecParameters: .reusing(known))
        #expect(probed.track(.audio)?.sampleRate == 44_100)
        #expect(reused.track(.audio)?.sampleRate == 44_100)
        #expect(Self.facts(reused) == Self.facts(probed))
        #expect(SegmentDemuxer.audioStepsAreEven(reused.packets(of: .audio)))
    }

    @Test func fragmentedMP4_reusing_samePackets() throws {
        let fixtures = try Fixtures.get()
        let segment = try Data(contentsOf: fixtures.fmp4Segment)
        let initSection = try Data(contentsOf: fixtures.fmp4Init)
        let probed = try SegmentDemuxer.demux(segment: segment, initializationSection: initSection, hint: .fragmentedMP4)
        let reused = try SegmentDemuxer.demux(
            segment: segment, initializationSection: initSection, hint: .fragmentedMP4,
            codecParameters: .reusing(probed.tracks))
        #expect(Self.facts(reused) == Self.facts(probed))
        #expect(reused.track(.video)?.width == 416)
    }

    @Test func reusing_damagedInput_failsOrWarnsLikeProbing() throws {
        let fixtures = try Fixtures.get()
        let known = try SegmentDemuxer.demux(segment: fixtures.segment(rung: 1, index: 0)).tracks
        #expect(throws: MediaError.self) {
            _ = try SegmentDemuxer.demux(segment: Data(repeating: 0x55, count: 4096), codecParameters: .reusing(known))
        }
        // Truncated mid-packet: the good packets and the same warning as after a probe.
        let segment = try fixtures.segment(rung: 1, index: 2)
        let cut = segment.prefix(segment.count / 2 + 17)
        let probed = try SegmentDemuxer.demux(segment: cut)
        let reused = try SegmentDemuxer.demux(segment: cut, codecParameters: .reusing(known))
        #expect(reused.warnings.contains { $0.contains("not a multiple of 188") })
        #expect(Self.facts(reused) == Self.facts(probed))
    }
}
