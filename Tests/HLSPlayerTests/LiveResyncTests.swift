import Foundation
import HLSOrigin
import Testing

/// Live resync and its escalation to a restart, end to end: hls-origin serves
/// the 2 s ladder as a live stream (3-segment window) and its link collapses
/// for longer than the window, so the playhead's segments roll off while the
/// player cannot fetch anything.
@Suite(.serialized) struct LiveResyncTests {
    func collapsingLiveOrigin<T>(collapseAtSeconds: Double, forSeconds: Double, _ body: (URL) throws -> T) throws -> T {
        let samples = try Repo.requireSamples("ladder-2s")
        var config = OriginConfiguration()
        config.rateBitsPerSecond = 8_000_000
        config.rttSeconds = 0.02
        config.live = LiveConfiguration(windowSegments: 3)
        config.linkCollapses = [LinkCollapse(atSeconds: collapseAtSeconds, durationSeconds: forSeconds)]
        let server = OriginServer(root: samples, configuration: config)
        try server.start(port: 0)
        defer { server.stop() }
        return try body(server.baseURL)
    }

    /// A 20 s collapse: the stall outlasts the long-stall threshold (6 s) → a
    /// resync under the recovery cap; the resync's requests cannot complete
    /// within its 6 s deadline → a restart (multivariant reload); once the link
    /// is back a frame follows → resolved, and playback goes on to --duration.
    @Test func linkCollapseLongerThanWindow_resyncsThenRestarts_thenResolves_underRecoveryCap() throws {
        let run = try collapsingLiveOrigin(collapseAtSeconds: 6, forSeconds: 20) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--duration", "16"],
                           timeoutSeconds: 90)
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let summary = try #require(run.summary)
        #expect(summary["isLive"] as? Bool == true)
        #expect(summary["exitReason"] as? String == "durationReached")

        let steps = run.events("live.resync")
        let actions = steps.compactMap { $0["action"] as? String }
        let resync = try #require(steps.first { $0["action"] as? String == "resync" }, "actions: \(actions)")
        #expect(["long-stall", "segment-rolled-off", "expired-segment"].contains(resync["trigger"] as? String ?? ""))
        #expect(resync["recoveryCapApplied"] as? Bool == true)
        #expect(actions.contains("restart"), "the resync could not produce a frame within its deadline: \(actions)")
        #expect(actions.last == "resolved" || actions.dropLast().contains("resolved"), "a frame followed: \(actions)")
        #expect(!actions.contains("give-up"))
        #expect((summary["liveResyncs"] as? Int ?? 0) >= 1)
        #expect((summary["liveRestarts"] as? Int ?? 0) >= 1)

        // The restart's seek jumped forward over what rolled off during the collapse, and logged where from and to.
        let seeks = steps.filter { $0["action"] as? String == "seeked" }
        let restartSeek = try #require(seeks.last { $0["attempt"] as? Int ?? 0 >= 1 })
        let from = try #require(restartSeek["fromMediaSequence"] as? Int)
        let to = try #require(restartSeek["toMediaSequence"] as? Int)
        #expect(to > from + 3, "a 20 s collapse on 2 s segments rolls the window far past the old position: \(from) → \(to)")
        // No resync while the playhead merely trails a short window from its own buffer.
        #expect(!steps.contains { $0["trigger"] as? String == "behind-window" })
        // The restart reloaded the multivariant playlist.
        let restartAt = try #require(steps.first { $0["action"] as? String == "restart" }?["t"] as? Double)
        #expect(run.events("playlist.loaded").contains { $0["kind"] as? String == "multivariant" && ($0["t"] as? Double ?? 0) > restartAt })
        // The recovery cap was applied on the resync path: a recovery probe at or after the first resync.
        let resyncAt = try #require(resync["t"] as? Double)
        #expect(run.events("cap.change").contains { $0["reason"] as? String == "recovery-probe" && ($0["t"] as? Double ?? 0) >= resyncAt - 0.001 })
        // The stall the collapse caused ended.
        #expect(run.events("stall.end").count == run.events("stall.start").count)
    }
}
