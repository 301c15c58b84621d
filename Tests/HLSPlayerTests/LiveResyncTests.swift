import Foundation
import HLSCore
import HLSOrigin
import Testing
import TestSupport

/// Live resync and its escalation to a restart, end to end: hls-origin serves
/// the 2 s ladder as a live stream (3-segment window) and its link collapses
/// for longer than the window, so the playhead's segments roll off while the
/// player cannot fetch anything.
@Suite(.serialized, .tags(.realTime)) struct LiveResyncTests {
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
            try runHlsplay(
                [base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--duration", "16"],
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
        // The step cut the request hanging on the collapsed link; the loop came back to its top and performed the
        // step (a seek after the cut), and the cut was no failure of the session.
        let cuts = run.events("request.end").filter { $0["cancelReason"] as? String == "live-resync" }
        let cutAt = try #require(cuts.first?["t"] as? Double, "a request was in flight when the resync was asked for")
        #expect(seeks.contains { ($0["t"] as? Double ?? 0) >= cutAt })
        #expect(!run.events("error").contains { $0["fatal"] as? Bool == true })
    }

    /// hls-origin serving ladder-2s live (6-segment window) whose playlist freezes at `staleAt`
    /// for `staleFor` seconds, with its request log; hlsplay plays it with `args`.
    func staleLive(staleAt: Double, staleFor: Double, _ args: [String], timeoutSeconds: Double) throws -> (run: Run, origin: [RequestLogEntry]) {
        let samples = try Repo.requireSamples("ladder-2s")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-stale-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let requestLog = dir.appendingPathComponent("requests.jsonl")
        var config = OriginConfiguration(requestLogURL: requestLog)
        config.live = LiveConfiguration(windowSegments: 6)
        config.live?.stalePlaylists = [StalePlaylist(atSeconds: staleAt, durationSeconds: staleFor)]
        let run = try withOrigin(samples, configuration: config) { server in
            try runHlsplay(
                [
                    server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--no-status",
                    "--peak-bitrate", "4m"
                ] + args, timeoutSeconds: timeoutSeconds)
        }
        return (run, try readRequestLog(requestLog))
    }

    /// The media sequences of the variant's buffered segments, in order.
    func bufferedSequences(_ run: Run) -> [Int] {
        run.events("segment.buffered").filter { $0["track"] == nil }.compactMap { $0["mediaSequence"] as? Int }
    }

    /// Live segments the origin answered, by their `live=K` number, in order.
    func servedLiveSegments(_ origin: [RequestLogEntry]) -> [Int] {
        origin.filter { $0.path.hasSuffix(".ts") && $0.status == 200 }.compactMap { entry in
            entry.query?.split(separator: "&").first { $0.hasPrefix("live=") }.flatMap { Int($0.dropFirst(5)) }
        }
    }

    /// Seed: the live window stops advancing at 3 s and never again. Each long-stall resync "to the
    /// live edge" jumped back to the start point of the frozen window (segment 4) and replayed 4, 5, 6,
    /// played them, stalled, resynced again — the frame of each replay resolving the episode — until the
    /// no-progress watchdog ended it: exit 75 after 80.6 s, 6 resyncs, segments 4–6 buffered 7 times.
    /// Now a resync never lands before what was loaded: it holds (nothing dropped, nothing replayed)
    /// and waits for the playlist, reloading at the RFC cadence; the policy's deadlines escalate to
    /// restarts and give up with the staleness named, well before the 60 s watchdog.
    @Test func staleWindowForever_resyncNeverReplays_holdsAndGivesUpNamingTheStalePlaylist() throws {
        let (run, origin) = try staleLive(staleAt: 3, staleFor: 100_000, [], timeoutSeconds: 150)
        expectValidLog(run)
        #expect(run.status == 69, "stderr: \(run.stderr)")
        let summary = try #require(run.summary)
        #expect(summary["isLive"] as? Bool == true)
        #expect(summary["exitReason"] as? String == "error")

        // Never a repeat: not in what was buffered, not in what the origin served.
        let buffered = bufferedSequences(run)
        #expect(!buffered.isEmpty)
        #expect(Set(buffered).count == buffered.count, "a segment buffered twice: \(buffered)")
        let served = servedLiveSegments(origin)
        #expect(Set(served).count == served.count, "a live segment downloaded twice: \(served)")

        // Every step held: the start point was behind what was loaded, nothing was dropped.
        let steps = run.events("live.resync")
        let actions = steps.compactMap { $0["action"] as? String }
        #expect(actions.first == "resync", "\(actions)")
        #expect(!actions.contains("seeked"), "no jump back: \(actions)")
        #expect(!actions.contains("resolved"), "nothing new ever played: \(actions)")
        let held = steps.filter { $0["action"] as? String == "held" }
        #expect(held.count == 4, "the resync and each of the 3 restarts held: \(actions)")
        for h in held {
            #expect(h["landing"] as? String == "hold")
            let from = try #require(h["fromMediaSequence"] as? Int)
            #expect(h["toMediaSequence"] as? Int == from)
            #expect((h["edgeMediaSequence"] as? Int ?? .max) < from)
            #expect(h["lastLoadedMediaSequence"] as? Int == from - 1)
            #expect(h["droppedBufferSeconds"] as? Double == 0)
            #expect((h["playlistUnchangedSeconds"] as? Double ?? 0) > LivePlaylistStaleness.boundSeconds(targetDurationSeconds: 2))
        }
        #expect(steps.filter { $0["action"] as? String == "restart" }.count == LiveResyncConfiguration().maximumRestarts)
        #expect(actions.last == "give-up")

        // The staleness was reported when the playlist crossed RFC 8216 §6.2.1's bound, before any resync.
        let stale = try #require(run.events("live.stale").first)
        #expect(stale["state"] as? String == "stale")
        #expect(stale["boundSeconds"] as? Double == 3)
        #expect((stale["t"] as? Double ?? .infinity) < (steps.first?["t"] as? Double ?? 0))

        // Ended by the resync policy's own escalation (S + D + 3R after the stall), not the watchdog.
        #expect(run.events("session.noProgress").isEmpty)
        let fatal = try #require(run.events("error").first { $0["fatal"] as? Bool == true })
        #expect(fatal["category"] as? String == "network")
        let message = fatal["message"] as? String ?? ""
        #expect(message.contains("live stream lost: playback did not resume after a resync and 3 restarts"), "\(message)")
        #expect(message.contains("the live playlist did not change over") && message.contains("RFC 8216 §6.2.1"), "\(message)")
        #expect(run.stderr.contains("hlsplay: error: live stream lost"))
        let stallAt = try #require(run.events("stall.start").first?["t"] as? Double)
        let endedAt = try #require(fatal["t"] as? Double)
        let c = LiveResyncConfiguration()
        let escalation =
            c.stallResyncSeconds(targetDurationSeconds: 2) + c.resyncDeadlineSeconds(targetDurationSeconds: 2)
            + Double(c.maximumRestarts) * c.restartDeadlineSeconds(targetDurationSeconds: 2)
        #expect(endedAt - stallAt >= escalation - 0.5, "\(endedAt - stallAt) s")
        #expect(endedAt - stallAt < escalation + 6, "\(endedAt - stallAt) s")
        #expect(endedAt - stallAt < NoProgressWatchdog.defaultTimeoutSeconds - 10, "well before the watchdog")
    }

    /// A playlist that freezes for 6 s mid-play and then jumps to the live clock: more than RFC 8216
    /// §6.2.1's 1.5 target durations (reported), less than the long-stall threshold. The player waits
    /// for it, reloading at the RFC cadence — no resync, nothing replayed — and plays on.
    @Test func staleWindowForAWhile_waitedFor_noResync_noReplay() throws {
        let (run, origin) = try staleLive(staleAt: 3, staleFor: 6, ["--duration", "14"], timeoutSeconds: 90)
        expectValidLog(run)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.summary?["exitReason"] as? String == "durationReached")
        #expect(run.events("live.resync").isEmpty)
        let buffered = bufferedSequences(run)
        #expect(Set(buffered).count == buffered.count, "\(buffered)")
        let served = servedLiveSegments(origin)
        #expect(Set(served).count == served.count, "\(served)")
        #expect(run.events("playlist.loaded").contains { $0["kind"] as? String == "media" && $0["changed"] as? Bool == false })
        let states = run.events("live.stale").compactMap { $0["state"] as? String }
        #expect(states == ["stale", "advanced"], "\(states)")
    }

    /// hls-origin serving ladder-2s as LL-HLS (0.5 s parts, 6-segment window) on an 8 Mbit/s link
    /// that delivers nothing from `collapseAt` for `collapseFor` seconds; hlsplay plays it with `args`.
    func collapsingLowLatency(collapseAt: Double, collapseFor: Double, _ args: [String]) throws -> (run: Run, origin: [RequestLogEntry]) {
        let samples = try Repo.requireSamples("ladder-2s")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-llcollapse-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let requestLog = dir.appendingPathComponent("requests.jsonl")
        var config = OriginConfiguration(requestLogURL: requestLog)
        config.rateBitsPerSecond = 8_000_000
        config.rttSeconds = 0.02
        config.live = LiveConfiguration(windowSegments: 6, lowLatency: LowLatencyConfiguration(partTargetSeconds: 0.5))
        config.linkCollapses = [LinkCollapse(atSeconds: collapseAt, durationSeconds: collapseFor)]
        let run = try withOrigin(samples, configuration: config) { server in
            try runHlsplay(
                [server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--no-status"] + args,
                timeoutSeconds: 120)
        }
        return (run, try readRequestLog(requestLog))
    }

    /// Seed: an LL-HLS part whose fetch was abandoned — wedged twice on the lowest rung (nothing lower
    /// to decide for after the first wedge), or over-selected — threw out of the LL-HLS step, and the
    /// session ended as an internal error ("hlsplay: error: SegmentAbandoned()", exit 70) 11.5 s in,
    /// during a 6.5 s collapse. Now the loader decides again, as it does for whole segments, and plays on.
    @Test func lowLatency_linkCollapse_abandonedPartDecidesAgain_playsOn() throws {
        let (run, _) = try collapsingLowLatency(collapseAt: 6, collapseFor: 6.5, ["--duration", "16", "--variant", "0"])
        expectValidLog(run)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.summary?["exitReason"] as? String == "durationReached")
        #expect(!run.stderr.contains("SegmentAbandoned"))
        let wedges = run.events("request.byteProgress").filter { ($0["assessment"] as? [String: Any])?["verdict"] as? String == "wedged" }
        #expect(wedges.count >= 2, "the collapse wedged a part twice: \(wedges.count) wedge verdicts")
        // The first wedge of a part, on the lowest rung, is asked for again at once (the loader core's reRequestPart):
        // the same part, the same attempt, after a request.retry of no delay.
        let starts = run.events("request.start")
        let parts = Set(starts.filter { $0["purpose"] as? String == "segment" }.compactMap { $0["requestID"] as? Int })
        let firstWedge = try #require(wedges.compactMap { $0["requestID"] as? Int }.first { parts.contains($0) })
        let retry = run.events("request.retry").first { $0["requestID"] as? Int == firstWedge }
        #expect(retry?["delaySeconds"] as? Double == 0, "\(String(describing: retry))")
        let wedged = try #require(starts.first { $0["requestID"] as? Int == firstWedge })
        let again = try #require(starts.first { ($0["requestID"] as? Int ?? 0) > firstWedge && $0["purpose"] as? String == "segment" })
        #expect(again["url"] as? String == wedged["url"] as? String, "the same part asked for again")
        #expect(again["attempt"] as? Int == wedged["attempt"] as? Int)
        // Parts kept coming after the collapse.
        let collapseEnd = 12.5
        #expect(run.events("segment.buffered").contains { $0["part"] != nil && ($0["t"] as? Double ?? 0) > collapseEnd })
    }

    /// Seed: a long-stall resync on an LL-HLS stream kept the LL-HLS position (the last part loaded),
    /// so the "seek" did nothing: loading went on from the old part and the session played on 10.4 s
    /// behind live (2.6 s before a 10 s link collapse), forever; only a position that left the
    /// playlist (fell behind) moved it. Now the resync starts afresh as at startup: an INDEPENDENT part
    /// PART-HOLD-BACK from the end, and the first part loaded after it is that one.
    @Test func lowLatency_longStallResync_landsAtAFreshLowLatencyStart() throws {
        let (run, _) = try collapsingLowLatency(collapseAt: 6, collapseFor: 10, ["--duration", "25"])
        expectValidLog(run)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.summary?["exitReason"] as? String == "durationReached")
        let steps = run.events("live.resync")
        let actions = steps.compactMap { $0["action"] as? String }
        let seek = try #require(steps.first { $0["action"] as? String == "seeked" }, "\(actions)")
        #expect(seek["trigger"] as? String == "long-stall")
        #expect(seek["landing"] as? String == "seek")
        let to = try #require(seek["toMediaSequence"] as? Int)
        let toPart = seek["toPart"] as? Int
        #expect(toPart != nil, "an LL-HLS start is a part")
        #expect(seek["edgeMediaSequence"] as? Int == to)
        #expect(seek["edgePart"] as? Int == toPart)
        #expect(to > (seek["lastLoadedMediaSequence"] as? Int ?? .max), "forward of what was loaded")
        #expect(actions.contains("resolved"), "\(actions)")

        // The same start is logged as a fresh LL-HLS start, PART-HOLD-BACK (1.5 s) or more from the end.
        let seekAt = try #require(seek["t"] as? Double)
        let start = run.events("lowlatency.start").first { ($0["t"] as? Double ?? 0) >= seekAt - 0.001 }
        #expect(start?["msn"] as? Int == to)
        #expect(start?["part"] as? Int == toPart)
        #expect((start?["distanceFromEndSeconds"] as? Double ?? 0) >= (start?["partHoldBackSeconds"] as? Double ?? .infinity) - 0.001)

        // Loading goes on from there: the first part after the seek is the start, none before it.
        let after = run.events("segment.buffered").filter { ($0["t"] as? Double ?? 0) > seekAt }
        let first = try #require(after.first)
        #expect(first["mediaSequence"] as? Int == to)
        #expect(first["part"] as? Int == toPart)
        #expect(!after.contains { ($0["mediaSequence"] as? Int ?? .max) < to }, "nothing from the old position")

        // Back near the live edge: the latency once playing again is the fresh start's distance from
        // the end (2 s) and the age of the playlist the resync reloaded during the collapse — 4.1–4.6 s
        // measured — not the collapse's 10 s (10.4 s before).
        let resolvedAt = try #require(steps.first { $0["action"] as? String == "resolved" }?["t"] as? Double)
        let latencies = run.events("buffer.sample").filter { ($0["t"] as? Double ?? 0) > resolvedAt + 1 && $0["phase"] as? String == "playing" }
            .compactMap { $0["liveLatencySeconds"] as? Double }
        #expect(!latencies.isEmpty)
        #expect((latencies.max() ?? .infinity) < 7, "latency after the resync: \(latencies.max() ?? -1) s")
    }
}
