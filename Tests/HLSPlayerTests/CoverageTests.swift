import Foundation
import HLSOrigin
import Testing
import TestSupport

/// Issue 6's features end to end on real media (Samples/make-variants.sh),
/// through hls-origin and the real binary: alternate audio, redundant variants
/// and failover, content steering, key rotation, Low-Latency HLS.
@Suite(.serialized, .tags(.realTime)) struct CoverageTests {
    func variants() throws -> URL {
        _ = try Repo.requireSamples("short-2s")
        let dir = Repo.samples("variants")
        // The newest recipe's file: an older build of the samples lacks it.
        guard FileManager.default.fileExists(atPath: dir.appendingPathComponent("redundant/steering-later.json").path) else {
            throw TestSetupError("\(dir.path) is missing the coverage samples: run Samples/make-all.sh (Tools/test.sh does)")
        }
        return dir
    }

    func play(_ root: URL, _ path: String, faults: [FaultRule] = [], extra: [String] = []) throws -> Run {
        try withOrigin(root, faults: faults) { base in
            try runHlsplay([URL(string: path, relativeTo: base)!.absoluteString, "--headless", "--json", "--cold", "--no-redact"] + extra)
        }
    }

    func paths(_ run: Run, purpose: String? = nil) -> [String] {
        run.events("request.start").filter { purpose == nil || $0["purpose"] as? String == purpose }
            .compactMap { ($0["url"] as? String).flatMap { URL(string: $0)?.path } }
    }

    // MARK: Alternate audio

    /// The DEFAULT English rendition plays beside video-only variants: its own
    /// playlist and segments, every audio segment placed with the timestamp
    /// offset of the video segment at the same moment (aligned), the buffer the
    /// minimum of the two tracks, and the variant's own audio never decoded (it has none).
    @Test func alternateAudio_defaultRendition_ownSegments_alignedWithVideo() throws {
        let run = try play(try variants().appendingPathComponent("alt-audio"), "master.m3u8")
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let choice = try #require(run.events("audio.rendition").first)
        #expect(choice["language"] as? String == "en")
        #expect(choice["reason"] as? String == "default")
        #expect((choice["candidates"] as? [String])?.count == 2)
        let summary = try #require(run.summary)
        #expect(summary["stallCount"] as? Int == 0)
        #expect(summary["audioSegmentsBuffered"] as? Int == 4)
        #expect((summary["decodedAudioFrames"] as? Int ?? 0) >= 370, "8 s of 48 kHz AAC is 375 frames")
        #expect(paths(run, purpose: "segment").filter { $0.hasPrefix("/en/") }.count == 4)
        let buffered = run.events("segment.buffered")
        let video = buffered.filter { $0["track"] == nil }
        let audio = buffered.filter { $0["track"] as? String == "audio" }
        #expect(audio.count == 4 && video.count == 4)
        for a in audio {
            let start = try #require(a["startSeconds"] as? Double)
            let v = try #require(video.first { abs(($0["startSeconds"] as? Double ?? -9) - start) < 0.05 }, "a video segment at \(start)")
            let audioOffset = try #require(a["timelineOffsetSeconds"] as? Double)
            let videoOffset = try #require(v["timelineOffsetSeconds"] as? Double)
            #expect(abs(audioOffset - videoOffset) < 0.001, "audio at \(start) placed with offset \(audioOffset), video with \(videoOffset)")
        }
        // Each track's buffered end is in the buffer samples; the buffer is never more than the lagging track allows.
        let samples = run.events("buffer.sample").filter { $0["audioBufferedEndSeconds"] != nil }
        #expect(!samples.isEmpty)
        for s in samples {
            let end = s["bufferedEndSeconds"] as? Double ?? 0
            let v = s["videoBufferedEndSeconds"] as? Double ?? 0
            let a = s["audioBufferedEndSeconds"] as? Double ?? 0
            #expect(end <= min(v, a) + 0.001 || end <= max(v, a) + 0.001 && (s["phase"] as? String == "ended"))
        }
    }

    /// The same rendition served live (hls-origin --live, looping with a discontinuity): the audio follows the
    /// variant's media sequence numbers (AlternateAudioRules), each audio segment placed at the start and with the
    /// timestamp offset of the video segment of the same number, across the loop's discontinuities; none skipped.
    @Test func alternateAudio_live_followsTheVariantsNumbers_alignedAcrossTheLoop() throws {
        var config = OriginConfiguration()
        config.live = LiveConfiguration(windowSegments: 3)
        let run = try withOrigin(try variants().appendingPathComponent("alt-audio"), configuration: config) { server in
            Thread.sleep(forTimeInterval: 2)
            return try runHlsplay([
                server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--cold", "--no-redact",
                "--duration", "12"
            ])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let summary = try #require(run.summary)
        #expect(summary["isLive"] as? Bool == true)
        #expect(summary["stallCount"] as? Int == 0)
        #expect(run.events("segment.skipped").isEmpty)
        let buffered = run.events("segment.buffered")
        let video = buffered.filter { $0["track"] == nil }
        let audio = buffered.filter { $0["track"] as? String == "audio" }
        #expect(audio.count >= 5, "12 s of 2 s segments: \(audio.count) audio segments")
        #expect(audio.count <= video.count)
        for a in audio {
            let number = try #require(a["mediaSequence"] as? Int)
            let v = try #require(video.first { $0["mediaSequence"] as? Int == number }, "a video segment numbered \(number)")
            #expect(abs((a["startSeconds"] as? Double ?? -1) - (v["startSeconds"] as? Double ?? -9)) < 0.001, "segment \(number)")
            #expect(abs((a["timelineOffsetSeconds"] as? Double ?? -1) - (v["timelineOffsetSeconds"] as? Double ?? -9)) < 0.001, "segment \(number)")
        }
        // Numbers in order, none twice, and the loop's discontinuity crossed (offsets change along the stream).
        let numbers = audio.compactMap { $0["mediaSequence"] as? Int }
        #expect(numbers == Array(numbers.sorted()) && Set(numbers).count == numbers.count, "\(numbers)")
        #expect(Set(audio.compactMap { $0["timelineOffsetSeconds"] as? Double }).count >= 2)
    }

    @Test func alternateAudio_audioLangFlag_picksFrench_andFMP4Renditions() throws {
        let dir = try variants()
        let run = try play(dir.appendingPathComponent("alt-audio"), "master.m3u8", extra: ["--audio-lang", "fr"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let choice = try #require(run.events("audio.rendition").first)
        #expect(choice["language"] as? String == "fr")
        #expect(choice["reason"] as? String == "requested-language")
        #expect(paths(run, purpose: "segment").filter { $0.hasPrefix("/fr/") }.count == 4)
        #expect(paths(run).allSatisfy { !$0.hasPrefix("/en/") })

        let mp4 = try play(dir.appendingPathComponent("alt-audio-fmp4"), "master.m3u8")
        #expect(mp4.status == 0, "stderr: \(mp4.stderr)")
        #expect(mp4.summary?["audioSegmentsBuffered"] as? Int == 4)
        #expect((mp4.summary?["decodedAudioFrames"] as? Int ?? 0) >= 370)
        #expect((mp4.summary?["decodedVideoFrames"] as? Int ?? 0) == 192)
    }

    /// Packed audio: the English rendition as raw ADTS .aac segments beside
    /// MPEG-TS video; each placed on its playlist time (no transport timestamps).
    @Test func alternateAudio_packedADTSRendition_playsOnPlaylistTime() throws {
        let run = try play(try variants().appendingPathComponent("alt-audio-packed"), "master.m3u8")
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(paths(run, purpose: "segment").filter { $0.hasSuffix(".aac") }.count == 4)
        #expect(run.summary?["audioSegmentsBuffered"] as? Int == 4)
        #expect((run.summary?["decodedAudioFrames"] as? Int ?? 0) >= 370)
        #expect(run.summary?["stallCount"] as? Int == 0)
        let audio = run.events("segment.buffered").filter { $0["track"] as? String == "audio" }
        let starts = audio.compactMap { $0["startSeconds"] as? Double }
        #expect(zip(starts, [0, 2.005333, 4.010666, 6.015999]).allSatisfy { abs($0 - $1) < 0.01 }, "\(starts)")
    }

    /// An audio segment that never comes (404) is skipped, visibly: the video
    /// goes on, the log names the track and the segment.
    @Test func alternateAudio_missingAudioSegment_skippedAndLogged_videoContinues() throws {
        let fault = FaultRule(
            pathPattern: "/en/seg_00002.ts", requestIndex: nil, afterSeconds: nil, action: .status(code: 404, retryAfterSeconds: nil))
        let run = try play(try variants().appendingPathComponent("alt-audio"), "master.m3u8", faults: [fault])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let skipped = try #require(run.events("segment.skipped").first { $0["track"] as? String == "audio" })
        #expect(skipped["mediaSequence"] as? Int == 2)
        #expect(run.events("error").contains { $0["category"] as? String == "audio" && ($0["message"] as? String ?? "").contains("audio segment 2") })
        #expect(run.summary?["segmentsBuffered"] as? Int == 4)
        #expect(run.summary?["audioSegmentsBuffered"] as? Int == 3)
        #expect(run.summary?["decodedVideoFrames"] as? Int == 192)
    }

    // MARK: fMP4 init section changing mid-stream

    /// Two fMP4 renditions of the same content (234p and 360p, their own init
    /// sections) joined in one playlist: the EXT-X-MAP changes at segment 2,
    /// with EXT-X-DISCONTINUITY as RFC 8216 §4.3.2.3 asks and without it (the
    /// decoder is reopened for the new avcC record; these samples also carry
    /// their parameter sets in band, so this checks the switch is clean, not
    /// that it would fail otherwise). Both inits are fetched once, every frame
    /// decodes, nothing errors.
    @Test(arguments: [true, false])
    func fmp4_initSectionChangesMidStream_decoderReopened(withDiscontinuity: Bool) throws {
        let root = try variants().appendingPathComponent("alt-audio-fmp4")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-mapchange-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for v in ["v0", "v1"] {
            try FileManager.default.createSymbolicLink(at: dir.appendingPathComponent(v), withDestinationURL: root.appendingPathComponent(v))
        }
        try """
        #EXTM3U
        #EXT-X-VERSION:7
        #EXT-X-TARGETDURATION:2
        #EXT-X-PLAYLIST-TYPE:VOD
        #EXT-X-MAP:URI="v0/init.mp4"
        #EXTINF:2,
        v0/seg_00000.m4s
        #EXTINF:2,
        v0/seg_00001.m4s
        \(withDiscontinuity ? "#EXT-X-DISCONTINUITY\n" : "")#EXT-X-MAP:URI="v1/init.mp4"
        #EXTINF:2,
        v1/seg_00002.m4s
        #EXTINF:2,
        v1/seg_00003.m4s
        #EXT-X-ENDLIST

        """.write(to: dir.appendingPathComponent("prog.m3u8"), atomically: true, encoding: .utf8)
        let run = try play(dir, "prog.m3u8")
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(paths(run, purpose: "init-section").sorted() == ["/v0/init.mp4", "/v1/init.mp4"])
        #expect(run.summary?["decodedVideoFrames"] as? Int == 192)
        #expect(run.summary?["decodeErrors"] as? Int == 0)
        #expect(run.summary?["stallCount"] as? Int == 0)
        #expect(!run.events("error").contains { $0["category"] as? String == "ffmpeg" || $0["category"] as? String == "decode" })
    }

    // MARK: Redundant variants and content steering

    /// Every segment on path a/ answers 503: after two consecutive errors the
    /// variant is excluded and the same rung loads from b/.
    @Test func redundantVariants_repeatedErrors_failOverToTheOtherURI() throws {
        let fault = FaultRule(pathPattern: "/a/*/seg_*", requestIndex: nil, afterSeconds: nil, action: .status(code: 503, retryAfterSeconds: nil))
        let run = try play(try variants().appendingPathComponent("redundant"), "master.m3u8", faults: [fault])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let segments = paths(run, purpose: "segment")
        #expect(segments.first?.hasPrefix("/a/") == true, "starts on the first of the redundant pair: \(segments)")
        let excluded = try #require(run.events("failover").first { $0["kind"] as? String == "excluded" })
        #expect((excluded["detail"] as? String ?? "").contains("503"))
        let switched = try #require(run.events("failover").first { $0["kind"] as? String == "switched" })
        #expect(switched["variantIndex"] as? Int == 2)
        #expect(switched["fromVariantIndex"] as? Int == 0)
        #expect(run.events("segment.buffered").count == 4)
        #expect(segments.filter { $0.hasPrefix("/b/") }.count >= 4)
        #expect(run.summary?["stallCount"] as? Int == 0)
    }

    /// EXT-X-CONTENT-STEERING: starts on pathway a (the tag's PATHWAY-ID), loads
    /// the manifest (PATHWAY-PRIORITY b, a) with _HLS_pathway, moves to b.
    @Test func contentSteering_manifestPriority_movesToPathwayB() throws {
        let run = try play(try variants().appendingPathComponent("redundant"), "steering.m3u8")
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let manifest = try #require(run.events("request.start").first { $0["purpose"] as? String == "steering-manifest" })
        #expect((manifest["url"] as? String ?? "").contains("_HLS_pathway=a"))
        #expect(run.events("steering").contains { $0["kind"] as? String == "pathway" && $0["pathway"] as? String == "b" })
        let segments = paths(run, purpose: "segment")
        #expect(!segments.isEmpty && segments.allSatisfy { $0.hasPrefix("/b/") }, "\(segments)")
    }

    /// PATHWAY-CLONES: the manifest clones pathway b as c (b's URIs with cdn=c) and prefers c: the clones are
    /// variants from the start, and every media playlist loads from them.
    @Test func contentSteering_pathwayClones_loadFromTheClone() throws {
        let run = try play(try variants().appendingPathComponent("redundant"), "steering-clones.m3u8")
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(run.events("steering").contains { $0["kind"] as? String == "pathway" && $0["pathway"] as? String == "c" })
        // PARAMS go on the clone's playlist URIs; its segments are relative to them, so on b's paths.
        let playlists = run.events("request.start").filter { $0["purpose"] as? String == "media-playlist" }.compactMap { $0["url"] as? String }
        #expect(!playlists.isEmpty && playlists.allSatisfy { $0.contains("/b/") && $0.contains("cdn=c") }, "\(playlists)")
        let segments = paths(run, purpose: "segment")
        #expect(!segments.isEmpty && segments.allSatisfy { $0.hasPrefix("/b/") }, "\(segments)")
        #expect(run.events("segment.buffered").count >= 4)
    }

    /// Mid-stream PATHWAY-CLONES: the first steering manifest prefers pathway b for a second and names, as its
    /// RELOAD-URI, the one that clones b as c and prefers c. On a 2 Mbit/s link the 8 s stream loads for seconds,
    /// so that reload comes between segments: the clones join the ladder then (variants 4 and 5, after a/v0,
    /// a/v1, b/v0, b/v1), and the next decision loads from them — the segments before the reload from b's
    /// variants, the ones after from c's, the media sequence unbroken.
    @Test func contentSteering_clonesAddedMidStream_theNextDecisionLoadsFromThem() throws {
        var config = OriginConfiguration()
        config.rateBitsPerSecond = 2_000_000
        let root = try variants().appendingPathComponent("redundant")
        let run = try withOrigin(root, configuration: config) { server in
            try runHlsplay([
                URL(string: "steering-later.m3u8", relativeTo: server.baseURL)!.absoluteString, "--headless", "--json", "--cold", "--no-redact"
            ])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let lines = run.logLines
        func isRequest(_ e: [String: Any], _ purpose: String) -> Bool {
            e["type"] as? String == "request.start" && e["purpose"] as? String == purpose
        }
        let manifests = lines.indices.filter { isRequest(lines[$0], "steering-manifest") }
        let reload = try #require(
            manifests.first { (lines[$0]["url"] as? String ?? "").contains("steering-clones.json") }, "the RELOAD-URI was never loaded")
        #expect((lines[manifests[0]]["url"] as? String ?? "").contains("steering-later.json"))
        let segments = lines.indices.filter { isRequest(lines[$0], "segment") }
        let before = segments.filter { $0 < reload }.compactMap { lines[$0]["variantIndex"] as? Int }
        let after = segments.filter { $0 > reload }.compactMap { lines[$0]["variantIndex"] as? Int }
        #expect(!before.isEmpty && before.allSatisfy { $0 == 2 || $0 == 3 }, "before the reload, pathway b: \(before)")
        #expect(!after.isEmpty && after.allSatisfy { $0 == 4 || $0 == 5 }, "after it, the clones: \(after)")
        // The clones' playlists carry the URI-REPLACEMENT's PARAMS; their segments are b's files.
        let clonePlaylists = lines.indices.filter { $0 > reload && isRequest(lines[$0], "media-playlist") }.compactMap { lines[$0]["url"] as? String }
        #expect(!clonePlaylists.isEmpty && clonePlaylists.allSatisfy { $0.contains("/b/") && $0.contains("cdn=c") }, "\(clonePlaylists)")
        #expect(run.events("steering").contains { $0["kind"] as? String == "pathway" && $0["pathway"] as? String == "c" })
        // Every segment of the stream once, in order, across the change of pathway.
        let buffered = run.events("segment.buffered").compactMap { $0["mediaSequence"] as? Int }
        #expect(buffered == Array(0..<4), "\(buffered)")
    }

    // MARK: Key rotation

    /// A new EXT-X-KEY every two segments (explicit IV, media-sequence IV,
    /// METHOD=NONE, explicit IV again): each key fetched once, every frame decoded,
    /// no key bytes in the log.
    @Test func aes128_keyRotation_everyKeyFetchedOnce_everyFramePlays() throws {
        let dir = try variants().appendingPathComponent("aes-rotate")
        let run = try play(dir, "prog.m3u8")
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let keys = paths(run, purpose: "key")
        #expect(keys.sorted() == ["/k1.key", "/k2.key", "/k3.key"])
        #expect(run.summary?["decodedVideoFrames"] as? Int == 384)
        #expect(run.summary?["decodeErrors"] as? Int == 0)
        for name in ["k1.key", "k2.key", "k3.key"] {
            let hex = try Data(contentsOf: dir.appendingPathComponent(name)).map { String(format: "%02x", $0) }.joined()
            #expect(!run.rawLogLines.joined().lowercased().contains(hex))
        }
    }

    // MARK: Low-Latency HLS

    /// hls-origin --ll-hls (0.5 s parts): parts and preload hints fetched,
    /// blocking reloads with _HLS_msn/_HLS_part, start at PART-HOLD-BACK, live
    /// latency in the summary well under the 3 target durations of regular HLS.
    @Test func lowLatency_partsAndBlockingReloads_latencyBelowRegularHoldBack() throws {
        let samples = try Repo.requireSamples("ladder-2s")
        var config = OriginConfiguration()
        config.live = LiveConfiguration(windowSegments: 6)
        config.live?.lowLatency = LowLatencyConfiguration(partTargetSeconds: 0.5)
        let server = OriginServer(root: samples, configuration: config)
        try server.start(port: 0)
        defer { server.stop() }
        Thread.sleep(forTimeInterval: 4) // a few segments into the stream
        let run = try runHlsplay([
            server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--cold", "--no-redact", "--duration", "8"
        ])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let start = try #require(run.events("lowlatency.start").first)
        #expect(start["partHoldBackSeconds"] as? Double == 1.5)
        #expect(run.events("segment.buffered").filter { $0["part"] != nil }.count >= 8)
        let reloads = run.events("request.start").filter { $0["purpose"] as? String == "media-playlist" }.compactMap { $0["url"] as? String }
        #expect(reloads.filter { $0.contains("_HLS_msn=") && $0.contains("_HLS_part=") }.count >= 4, "\(reloads)")
        let summary = try #require(run.summary)
        #expect(summary["isLive"] as? Bool == true)
        #expect(summary["stallCount"] as? Int == 0)
        let latency = try #require(summary["averageLiveLatencySeconds"] as? Double)
        #expect(latency < 3.0, "LL-HLS latency \(latency) s; regular HLS holds back 6 s here")
    }
}
