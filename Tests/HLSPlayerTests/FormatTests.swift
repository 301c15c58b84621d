import Foundation
import Testing
import TestSupport

/// Packagings beyond MPEG-TS segments, end to end on real media made by
/// FFmpeg's HLS muxer (Samples/make-variants.sh), through the real binary.
@Suite(.serialized, .tags(.realTime)) struct FormatTests {
    func play(_ path: String, in root: URL, extra: [String] = []) throws -> Run {
        try withOrigin(root) { base in
            try runHlsplay([base.appendingPathComponent(path).absoluteString, "--headless", "--json"] + extra)
        }
    }

    func variants() throws -> URL {
        _ = try Repo.requireSamples("short-2s")
        let dir = Repo.samples("variants")
        guard FileManager.default.fileExists(atPath: dir.appendingPathComponent("aes-msn/prog.m3u8").path) else {
            throw TestSetupError("\(dir.path) is missing: run Samples/make-all.sh (Tools/test.sh does)")
        }
        return dir
    }

    @Test func fragmentedMP4_withInitSection_playsEveryFrame_initFetchedOnce() throws {
        let run = try play("fmp4/prog.m3u8", in: try variants())
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(run.summary?["decodedVideoFrames"] as? Int == 192)
        let inits = run.events("request.end").filter { $0["purpose"] as? String == "init-section" }
        #expect(inits.count == 1)
        #expect(run.events("frame.first").first?["height"] as? Int == 360)
    }

    @Test func byteRangeSegments_requestedAsHTTPRanges() throws {
        let run = try play("byterange/prog.m3u8", in: try variants())
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.summary?["decodedVideoFrames"] as? Int == 192)
        let segments = run.events("request.start").filter { $0["purpose"] as? String == "segment" }
        #expect(segments.count == 4)
        #expect(segments.allSatisfy { ($0["url"] as? String ?? "").hasSuffix("/all.ts") && $0["range"] != nil })
        #expect(
            segments.first?["range"] as? String
                == "0-\((run.events("request.end").first { $0["purpose"] as? String == "segment" }?["bytes"] as? Int ?? 0) - 1)")
    }

    @Test func aes128_explicitIV_decryptsAndPlays_keyFetchedOnce() throws {
        let run = try play("aes-iv/prog.m3u8", in: try variants())
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.summary?["decodedVideoFrames"] as? Int == 192)
        #expect(run.events("request.end").filter { $0["purpose"] as? String == "key" }.count == 1)
        // The key bytes appear nowhere in the log (00 11 22 ... ff as hex or base64).
        let log = run.rawLogLines.joined(separator: "\n").lowercased()
        #expect(!log.contains("00112233445566778899aabbccddeeff"))
        #expect(!log.contains("abeim0rvzneimaq7zn3u/w"))
    }

    @Test func aes128_ivFromMediaSequenceNumber_decryptsAndPlays() throws {
        let run = try play("aes-msn/prog.m3u8", in: try variants())
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.summary?["decodedVideoFrames"] as? Int == 192)
    }

    @Test func aes128_wrongKey_isAClearMediaError() throws {
        let source = try variants().appendingPathComponent("aes-iv")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-wrongkey-\(UUID().uuidString)")
        try FileManager.default.copyItem(at: source, to: dir)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data(repeating: 0x42, count: 16).write(to: dir.appendingPathComponent("k.key"))
        let run = try play("prog.m3u8", in: dir)
        #expect(run.status == 65)
        #expect(run.stderr.contains("could not be decrypted"))
        expectValidLog(run)
    }

    @Test func sampleAES_isReportedUnsupported() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-sampleaes-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try """
        #EXTM3U
        #EXT-X-VERSION:5
        #EXT-X-TARGETDURATION:2
        #EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://key",KEYFORMAT="com.apple.streamingkeydelivery",KEYFORMATVERSIONS="1"
        #EXTINF:2,
        seg.ts
        #EXT-X-ENDLIST

        """.write(to: dir.appendingPathComponent("prog.m3u8"), atomically: true, encoding: .utf8)
        let run = try play("prog.m3u8", in: dir)
        #expect(run.status == 65)
        #expect(run.stderr.contains("SAMPLE-AES"))
        #expect(run.stderr.contains("not supported"))
        expectValidLog(run)
    }

    /// A folder with the short ladder's 360p segments linked in and `playlist` written beside them.
    func handWritten(_ playlist: String) throws -> URL {
        let samples = try Repo.requireSamples("short-2s").appendingPathComponent("v1")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-hand-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        for i in 0..<4 {
            let name = String(format: "seg_%05d.ts", i)
            try FileManager.default.createSymbolicLink(at: dir.appendingPathComponent(name), withDestinationURL: samples.appendingPathComponent(name))
        }
        try playlist.write(to: dir.appendingPathComponent("prog.m3u8"), atomically: true, encoding: .utf8)
        return dir
    }

    @Test func gapSegment_skippedWithoutStalling() throws {
        let dir = try handWritten(
            """
            #EXTM3U
            #EXT-X-VERSION:8
            #EXT-X-TARGETDURATION:2
            #EXTINF:2,
            seg_00000.ts
            #EXT-X-GAP
            #EXTINF:2,
            seg_00001.ts
            #EXTINF:2,
            seg_00002.ts
            #EXTINF:2,
            seg_00003.ts
            #EXT-X-ENDLIST

            """)
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try play("prog.m3u8", in: dir)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.summary?["stallCount"] as? Int == 0)
        #expect(run.summary?["segmentsSkipped"] as? Int == 1)
        #expect(abs((run.summary?["playedSeconds"] as? Double ?? 0) - 8) < 0.05)
        #expect(run.events("segment.skipped").first?["reason"] as? String == "EXT-X-GAP")
        // The gap's segment was never requested.
        #expect(!run.events("request.start").contains { ($0["url"] as? String ?? "").hasSuffix("seg_00001.ts") })
        #expect(run.summary?["decodedVideoFrames"] as? Int == 144)
    }

    @Test func discontinuity_timestampsJumpBack_decoderResetAndEveryFramePlayed() throws {
        // The same two segments twice: at the discontinuity the timestamps go back 4 s.
        let dir = try handWritten(
            """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-TARGETDURATION:2
            #EXTINF:2,
            seg_00000.ts
            #EXTINF:2,
            seg_00001.ts
            #EXT-X-DISCONTINUITY
            #EXTINF:2,
            seg_00000.ts
            #EXTINF:2,
            seg_00001.ts
            #EXT-X-ENDLIST

            """)
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try play("prog.m3u8", in: dir)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.summary?["stallCount"] as? Int == 0)
        #expect(run.summary?["decodedVideoFrames"] as? Int == 192)
        #expect(run.summary?["lateVideoFrames"] as? Int == 0)
        let starts = run.events("segment.buffered").compactMap { $0["startSeconds"] as? Double }
        #expect(starts == [0, 2, 4, 6], "segments placed on one continuous media timeline: \(starts)")
    }

    /// EXT-X-DEFINE end to end: the multivariant playlist defines a VALUE and
    /// a QUERYPARAM (taken from the URL it was loaded from); the media playlist
    /// IMPORTs both and builds its segment URIs from them.
    @Test func define_valueQueryParamAndImport_substitutedIntoRequests() throws {
        let dir = try handWritten(
            """
            #EXTM3U
            #EXT-X-VERSION:8
            #EXT-X-DEFINE:IMPORT="stem"
            #EXT-X-DEFINE:IMPORT="token"
            #EXT-X-DEFINE:NAME="ext",VALUE=".ts"
            #EXT-X-TARGETDURATION:2
            #EXTINF:2,
            {$stem}0{$ext}?token={$token}
            #EXTINF:2,
            {$stem}1{$ext}?token={$token}
            #EXTINF:2,
            {$stem}2{$ext}?token={$token}
            #EXT-X-ENDLIST

            """)
        defer { try? FileManager.default.removeItem(at: dir) }
        try """
        #EXTM3U
        #EXT-X-VERSION:8
        #EXT-X-DEFINE:NAME="stem",VALUE="seg_0000"
        #EXT-X-DEFINE:QUERYPARAM="token"
        #EXT-X-STREAM-INF:BANDWIDTH=1307728,RESOLUTION=640x360
        prog.m3u8?token={$token}

        """.write(to: dir.appendingPathComponent("master.m3u8"), atomically: true, encoding: .utf8)
        let run = try withOrigin(dir) { base in
            try runHlsplay([base.absoluteString + "/master.m3u8?token=a1b2", "--headless", "--json", "--no-redact"])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let urls = run.events("request.start").compactMap { $0["url"] as? String }
        #expect(urls.contains { $0.hasSuffix("/prog.m3u8?token=a1b2") }, "\(urls)")
        for i in 0..<3 {
            #expect(urls.contains { $0.hasSuffix("/seg_0000\(i).ts?token=a1b2") }, "\(urls)")
        }
        #expect(run.summary?["segmentsBuffered"] as? Int == 3)
        #expect(run.summary?["decodedVideoFrames"] as? Int == 144)

        // Without the query parameter the multivariant playlist cannot resolve {$token}: a clear playlist error.
        let bad = try play("master.m3u8", in: dir)
        #expect(bad.status != 0)
        #expect(bad.stderr.contains("QUERYPARAM") || bad.stderr.contains("token"), "stderr: \(bad.stderr)")
        expectValidLog(bad)
    }

    /// EXT-X-START TIME-OFFSET=3 on 2 s segments: without PRECISE playback
    /// starts at the containing segment (2 s); with PRECISE=YES at 3 s itself,
    /// the frames of 2–3 s decoded but not presented.
    @Test func start_timeOffset_segmentStart_orPreciseOffset() throws {
        for precise in [false, true] {
            let dir = try handWritten(
                """
                #EXTM3U
                #EXT-X-VERSION:3
                #EXT-X-TARGETDURATION:2
                #EXT-X-START:TIME-OFFSET=3.0\(precise ? ",PRECISE=YES" : "")
                #EXTINF:2,
                seg_00000.ts
                #EXTINF:2,
                seg_00001.ts
                #EXTINF:2,
                seg_00002.ts
                #EXTINF:2,
                seg_00003.ts
                #EXT-X-ENDLIST

                """)
            defer { try? FileManager.default.removeItem(at: dir) }
            let run = try play("prog.m3u8", in: dir)
            #expect(run.status == 0, "stderr: \(run.stderr)")
            expectValidLog(run)
            let expectedStart = precise ? 3.0 : 2.0
            #expect(run.events("segment.buffered").first?["mediaSequence"] as? Int == 1)
            let first = try #require(run.events("frame.first").first)
            let pts = try #require(first["ptsSeconds"] as? Double)
            #expect(pts >= expectedStart - 0.001 && pts < expectedStart + 0.05, "precise \(precise): first frame at \(pts)")
            #expect(abs((run.summary?["playedSeconds"] as? Double ?? 0) - (8 - expectedStart)) < 0.05)
            #expect(run.summary?["lateVideoFrames"] as? Int == 0)
        }
    }

    /// Every segment of a VOD stream is undemuxable: the session ends in a clear
    /// media error once everything was tried, instead of waiting forever to start.
    @Test func everySegmentUndemuxable_endsInAMediaError() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-garbage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var generator = SystemRandomNumberGenerator()
        for i in 0..<2 {
            try Data((0..<20_000).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: dir.appendingPathComponent("seg_\(i).ts"))
        }
        try "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nseg_0.ts\n#EXTINF:2,\nseg_1.ts\n#EXT-X-ENDLIST\n"
            .write(to: dir.appendingPathComponent("prog.m3u8"), atomically: true, encoding: .utf8)
        let started = Date()
        let run = try play("prog.m3u8", in: dir)
        #expect(run.status != 0 && run.status != 130, "status \(run.status), stderr: \(run.stderr)")
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(run.stderr.contains("without a playable frame"), "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(run.summary?["exitReason"] as? String == "error")
        #expect(run.summary?["segmentsSkipped"] as? Int == 2)
        // The message names the events that are in the log, with their counts.
        let message = run.summary?["error"] as? String ?? ""
        #expect(message.contains("2 segments skipped (segment.skipped)"), "\(message)")
        #expect(!message.contains("segment.buffered"), "\(message)")
    }
}
