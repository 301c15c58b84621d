import Foundation
import HLSOrigin
import Testing
import TestSupport

/// Playback start and the QoE figures through the real binary against a real origin: the session's wall
/// time is accounted for (start + played + stalled + the time after the end), with the wait for the start
/// buffer that the time to first frame alone leaves out.
@Suite(.serialized, .tags(.realTime)) struct PlaybackStartQoETests {
    /// The monitor's tick, seconds: the session ends on one, so the accounting holds within one.
    static let monitorTickSeconds = 0.25

    /// A summary's figures as numbers.
    func seconds(_ summary: [String: Any], _ key: String) -> Double? { summary[key] as? Double }

    @Test func shapedLink_playbackStartAfterTheStartBuffer_andTheSessionTimeAddsUp() throws {
        let samples = try Repo.requireSamples("short-2s")
        // 0.3 Mbit/s under the bottom rung (0.62 Mbit/s): each 2 s segment takes about 4 s. The first frame
        // comes with the first segment; a 4 s start buffer (set, so that no policy decides it) needs the
        // second, so playback waits seconds after the first frame, and stalls on the way (8 s of media).
        var configuration = OriginConfiguration()
        configuration.rateBitsPerSecond = 300_000
        let run = try withOrigin(samples, configuration: configuration) { server in
            try runHlsplay(
                [
                    server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
                    "--startup-buffer", "4"
                ], timeoutSeconds: 180)
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let summary = try #require(run.summary)
        #expect(summary["exitReason"] as? String == "completed")
        let ttff = try #require(seconds(summary, "timeToFirstFrameSeconds"))
        let start = try #require(seconds(summary, "timeToPlaybackStartSeconds"))
        let wait = try #require(seconds(summary, "startupWaitSeconds"))
        #expect(abs(start - ttff - wait) < 1e-6)
        #expect(wait > 2, "a second segment at 0.3 Mbit/s takes about 4 s after the first frame: waited \(wait) s")
        // The summary's start is the first playback.started, which carries the wait too.
        let started = try #require(run.events("playback.started").first)
        #expect(started["atSeconds"] as? Double == start)
        #expect(started["startupWaitSeconds"] as? Double == wait)
        let startup = try #require(summary["startup"] as? [String: Any])
        #expect(startup["playbackStartAtSeconds"] as? Double == start && startup["startupWaitSeconds"] as? Double == wait)

        let session = try #require(seconds(summary, "sessionSeconds"))
        let played = try #require(seconds(summary, "playedSeconds"))
        let stalled = try #require(seconds(summary, "stallSeconds"))
        let ended = try #require(seconds(summary, "playbackEndedAtSeconds"))
        #expect(run.events("playback.ended").first?["atSeconds"] as? Double == ended)
        let accounted = start + played + stalled + (session - ended)
        #expect(
            abs(session - accounted) <= Self.monitorTickSeconds,
            "session \(session) s vs start \(start) + played \(played) + stalled \(stalled) + tail \(session - ended)")

        // QoE: what was played, by rung, and the linear score's terms add up.
        let qoe = try #require(summary["qoe"] as? [String: Any])
        let chunks = try #require(qoe["playedChunks"] as? Int)
        #expect(chunks == 4, "8 s of 2 s segments")
        let rungs = try #require(qoe["rungs"] as? [[String: Any]])
        let rungSeconds = rungs.reduce(0.0) { $0 + ($1["playedSeconds"] as? Double ?? 0) }
        #expect(abs(rungSeconds - played) < 0.05, "time per rung \(rungSeconds) s, played \(played) s")
        let ratio = try #require(qoe["rebufferRatio"] as? Double)
        #expect(abs(ratio - stalled / (played + stalled)) < 1e-9)
        // μ is the ladder's top rung in Mbit/s.
        #expect(qoe["linearQoERebufferWeight"] as? Double == 7.225216)
        let total = try #require(qoe["linearQoE"] as? Double)
        let terms = try ["linearQoEBitrateSum", "linearQoERebufferPenalty", "linearQoESwitchPenalty"].map { try #require(qoe[$0] as? Double) }
        #expect(abs(total - (terms[0] - terms[1] - terms[2])) < 1e-9)
        #expect(abs(terms[1] - 7.225216 * stalled) < 1e-9)
        #expect(abs(try #require(qoe["linearQoEPerChunk"] as? Double) - total / Double(chunks)) < 1e-9)
        let measured = try #require(qoe["averageMeasuredBitrateBps"] as? Double)
        #expect(measured > 100_000 && measured < 8_000_000, "measured bitrate \(measured)")
    }

    @Test func neverStarted_interruptedOr404_playbackStartAbsent_andTheHumanSummarySaysSo() throws {
        let samples = try Repo.requireSamples("short-2s")
        // 50 kbit/s: the first 2 s segment (≥ 150 kB) cannot arrive before the interrupt at 3 s.
        var configuration = OriginConfiguration()
        configuration.rateBitsPerSecond = 50_000
        let interrupted = try withOrigin(samples, configuration: configuration) { server in
            try runHlsplay(
                [server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless"],
                interruptAfterSeconds: 3)
        }
        let missing = try withOrigin(samples) { base in
            try runHlsplay([base.appendingPathComponent("nothing-here.m3u8").absoluteString, "--headless", "--json"])
        }
        for (run, reason) in [(interrupted, "interrupted"), (missing, "error")] {
            expectValidLog(run)
            let summary = try #require(run.summary)
            #expect(summary["exitReason"] as? String == reason)
            for key in ["timeToPlaybackStartSeconds", "startupWaitSeconds", "playbackEndedAtSeconds"] {
                #expect(summary[key] == nil, "\(reason): \(key) absent")
            }
            #expect(run.events("playback.started").isEmpty)
            #expect(seconds(summary, "playedSeconds") == 0 && seconds(summary, "stallSeconds") == 0)
            let qoe = try #require(summary["qoe"] as? [String: Any])
            #expect(qoe["playedChunks"] as? Int == 0 && qoe["linearQoE"] == nil)
        }
        #expect(interrupted.stdout.contains("playback start           never"), "stdout: \(interrupted.stdout)")
        #expect(interrupted.stdout.contains("linear QoE               - (no chunk played)"))
    }
}
