import Foundation
import HLSOrigin
import Testing
import TestSupport

/// Live latency from EXT-X-PROGRAM-DATE-TIME, in every buffer sample and the summary.
@Suite(.serialized, .tags(.realTime)) struct LiveLatencyTests {
    @Test func liveSession_reportsLatencyFromProgramDateTime() throws {
        let samples = try Repo.requireSamples("short-2s")
        var config = OriginConfiguration()
        config.live = LiveConfiguration(windowSegments: 6)
        let server = OriginServer(root: samples, configuration: config)
        try server.start(port: 0)
        defer { server.stop() }
        let run = try runHlsplay([server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--duration", "6"])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let summary = try #require(run.summary)
        #expect(summary["isLive"] as? Bool == true)
        // Playing three target durations (6 s) behind the live edge of a window whose newest
        // segment is being produced: the latency is about 6–10 s, and it holds steady while playing.
        let latency = try #require(summary["liveLatencySeconds"] as? Double)
        #expect(latency > 4 && latency < 14, "live latency \(latency) s")
        let playing = run.events("buffer.sample").filter { $0["phase"] as? String == "playing" }.compactMap { $0["liveLatencySeconds"] as? Double }
        #expect(playing.count > 10)
        #expect((playing.max() ?? 0) - (playing.min() ?? 0) < 1, "steady while playing with no stall: \(playing.min() ?? 0)…\(playing.max() ?? 0)")
        // A VOD session has none.
        let vod = try withOrigin(samples) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--duration", "1"])
        }
        #expect(vod.summary?["liveLatencySeconds"] == nil)
    }
}
