// A VOD of 100,000 segments (the parser's PlaylistLimits.maxSegments; 27.8 h of 1 s segments),
// end to end: it starts at its first segment, and EXT-X-START near its end plays that end.
// The playlist cycles ten real 1 s segments (Tools/characterize/long-vod/make-long-vod.sh, ffmpeg, a second
// to make); hls-origin serves it on loopback. Parse time and time to first frame at this size
// are measured by Tools/characterize/long-vod/bench.sh, not asserted here.

import Foundation
import Testing
import TestSupport

@Suite(.serialized, .tags(.realTime)) struct LongVODTests {
    static let segmentCount = 100_000

    /// A fresh folder with the long playlist (`long.m3u8`), EXT-X-START at `start` when given.
    func longVOD(start: String? = nil) throws -> URL {
        _ = try requireFFmpeg()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-long-vod-\(UUID().uuidString)")
        let script = Repo.root.appendingPathComponent("Tools/characterize/long-vod/make-long-vod.sh")
        let made = try runProcess(
            script, [dir.path, String(Self.segmentCount)] + (start.map { [$0] } ?? []), standardInput: .nullDevice,
            timeoutSeconds: 120)
        guard made.status == 0 else { throw TestSetupError("make-long-vod.sh failed: \(made.stderr)") }
        return dir
    }

    func play(_ dir: URL, _ extra: [String]) throws -> Run {
        try withOrigin(dir) { base in
            try runHlsplay(
                [base.appendingPathComponent("long.m3u8").absoluteString, "--headless", "--json"] + extra,
                timeoutSeconds: 180)
        }
    }

    /// Every segment is on the timeline, so playback starts at segment 0 (it once failed with
    /// exit 70, "segment 0 of variant 0 is not on the timeline", past 4,097 segments).
    @Test func hundredThousandSegments_startsAtTheFirstSegment() throws {
        let dir = try longVOD()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try play(dir, ["--duration", "4"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(run.summary?["exitReason"] as? String == "durationReached")
        #expect(run.events("playlist.loaded").first?["segments"] as? Int == Self.segmentCount)
        #expect(run.events("segment.buffered").first?["mediaSequence"] as? Int == 0)
        #expect(run.events("frame.first").count == 1)
        // 4 s of 25 fps were played (and the first second or so of the buffer ahead decoded).
        #expect((run.summary?["decodedVideoFrames"] as? Int ?? 0) >= 95)
        #expect(run.summary?["decodeErrors"] as? Int == 0)
        #expect(run.events("error").filter { $0["fatal"] as? Bool == true }.isEmpty)
        print("100k-segment VOD: time to first frame \(run.summary?["timeToFirstFrameSeconds"] ?? "-") s (debug build)")
    }

    /// EXT-X-START five seconds before the end: the segment that holds it is found and loaded,
    /// and the stream is played to its end (the end of a 27.8 h timeline).
    @Test func hundredThousandSegments_startNearTheEnd_playsToTheEnd() throws {
        let dir = try longVOD(start: "-5")
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try play(dir, [])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(run.summary?["exitReason"] as? String == "completed")
        let buffered = run.events("segment.buffered").compactMap { $0["mediaSequence"] as? Int }
        #expect(buffered.first == Self.segmentCount - 5)
        #expect(buffered.last == Self.segmentCount - 1)
        #expect(run.events("playback.ended").count == 1)
        let played = run.summary?["playedSeconds"] as? Double ?? 0
        #expect(abs(played - 5) < 0.1, "played \(played) s")
        #expect(abs((run.events("playback.started").first?["positionSeconds"] as? Double ?? 0) - Double(Self.segmentCount - 5)) < 0.01)
        #expect(run.summary?["decodeErrors"] as? Int == 0)
    }
}
