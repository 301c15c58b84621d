import Foundation
import HLSOrigin
import Testing
import TestSupport

/// The end of a VOD stream, through the real binary and hls-origin on loopback: once the last segment of the
/// variant loading has landed, the session ends the track — no `abr.decision` for a segment that does not exist,
/// no media playlist loaded for it (the rule `LoaderCore` keeps: the current playlist has no segment after the
/// last one loaded). Checked on the sample ladder (aligned segment boundaries) and on a ladder made here whose
/// rungs do not share segment boundaries (a switch continues at the segment holding the buffered end).
@Suite(.serialized, .tags(.realTime)) struct VODEndTests {
    @Test func alignedLadder_noDecisionOrRequestPastTheLastSegment() throws {
        let samples = try Repo.requireSamples("short-2s") // 4 segments of 2 s on every rung
        let run = try withOrigin(samples) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json"])
        }
        try expectEndsAtTheLastSegment(run, segmentCounts: [0: 4, 1: 4, 2: 4, 3: 4], totalSeconds: 8)
    }

    @Test func unalignedLadder_noDecisionOrRequestPastTheLastSegment() throws {
        // 7 s of media: rung 0 in segments of 2, 2, 2, 1 s; rung 1 in segments of 3, 3, 1 s.
        let dir = try MediaDir("vod-end-unaligned")
        for (rung, segmentSeconds, bitrate) in [(0, 2, "300k"), (1, 3, "1200k")] {
            _ = try dir.folder("v\(rung)")
            try FFmpegCLI.run(
                FFmpegCLI.testVideo(seconds: 7) + FFmpegCLI.tone(seconds: 7) + [
                    "-c:v", "libx264", "-preset", "ultrafast", "-g", "30", "-keyint_min", "30", "-sc_threshold", "0",
                    "-b:v", bitrate, "-maxrate", bitrate, "-bufsize", bitrate, "-c:a", "aac", "-b:a", "64k",
                    "-f", "hls", "-hls_time", "\(segmentSeconds)", "-hls_playlist_type", "vod",
                    "-hls_segment_filename", "v\(rung)/seg_%03d.ts", "v\(rung)/prog.m3u8"
                ], in: dir.url)
        }
        try dir.write(
            """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-STREAM-INF:BANDWIDTH=500000,RESOLUTION=320x180
            v0/prog.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=1500000,RESOLUTION=320x180
            v1/prog.m3u8

            """, to: "master.m3u8")
        let run = try withOrigin(dir.url) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json"])
        }
        try expectEndsAtTheLastSegment(run, segmentCounts: [0: 4, 1: 3], totalSeconds: 7)
    }

    /// Played to the end; every decision for a segment names one the variant loading has (media sequence numbers
    /// from 0; `segmentCounts` by variant index); nothing decided or requested after the last segment landed.
    private func expectEndsAtTheLastSegment(
        _ run: Run, segmentCounts: [Int: Int], totalSeconds: Double, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(run.status == 0, "stderr: \(run.stderr)", sourceLocation: sourceLocation)
        expectValidLog(run, sourceLocation: sourceLocation)
        #expect(run.summary?["exitReason"] as? String == "completed", sourceLocation: sourceLocation)
        let played = try #require(run.number("playedSeconds"), sourceLocation: sourceLocation)
        #expect(abs(played - totalSeconds) < 0.1, "played \(played) s of \(totalSeconds) s", sourceLocation: sourceLocation)

        // Walk the log in order: the variant loading is the one whose segment landed last.
        var currentVariant: Int?
        var lastSegmentLine: Int?
        for (line, event) in run.logLines.enumerated() {
            switch event["type"] as? String {
            case "segment.buffered":
                currentVariant = event["variantIndex"] as? Int
                lastSegmentLine = line
            case "abr.decision":
                guard let msn = event["mediaSequence"] as? Int, let v = currentVariant, let count = segmentCounts[v] else { continue }
                #expect(
                    msn < count, "abr.decision for media sequence \(msn) while variant \(v) (segments 0…\(count - 1)) was loading",
                    sourceLocation: sourceLocation)
            default: break
            }
        }
        let last = try #require(lastSegmentLine, "no segment.buffered", sourceLocation: sourceLocation)
        let after = run.logLines[(last + 1)...]
        let decisionsAfter = after.filter { $0["type"] as? String == "abr.decision" }
        #expect(decisionsAfter.isEmpty, "abr.decision after the last segment landed: \(decisionsAfter)", sourceLocation: sourceLocation)
        let requestsAfter = after.filter { $0["type"] as? String == "request.start" }
        #expect(requestsAfter.isEmpty, "requests after the last segment landed: \(requestsAfter)", sourceLocation: sourceLocation)
    }
}
