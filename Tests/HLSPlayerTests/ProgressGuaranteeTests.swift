import Foundation
import HLSOrigin
@testable import HLSPlayer
import Testing
import TestSupport

/// The progress guarantee, through the real binary against the real origin: a body that trickles
/// is judged by its projected completion and abandoned, re-requested or failed with a reason;
/// a session in which no new media arrives or plays for --no-progress-timeout ends with exit 75.
/// Before these rules, each case below ran until killed (docs/startup-cap.md §4b).
@Suite(.tags(.realTime)) struct ProgressGuaranteeTests {
    /// 188 bytes (one TS packet) every 0.5 s: 3 kbit/s, never silent long enough for a timeout.
    static let trickle = FaultAction.trickle(bytes: 188, everySeconds: 0.5)

    /// A ladder of some rungs of ladder-2s (2 s segments) in a temp folder: a multivariant playlist
    /// listing them, the rung folders linked from the shared samples.
    static func ladder(rungs: [Int]) throws -> URL {
        let samples = try Repo.requireSamples("ladder-2s")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-rungs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let lines = try String(contentsOf: samples.appendingPathComponent("master.m3u8"), encoding: .utf8)
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var master = Array(lines.prefix { !$0.hasPrefix("#EXT-X-STREAM-INF") })
        for (i, line) in lines.enumerated() where line.hasPrefix("#EXT-X-STREAM-INF") {
            let uri = lines[i + 1]
            guard let rung = Int(uri.dropFirst().prefix { $0.isNumber }), rungs.contains(rung) else { continue }
            master += [line, uri]
            try FileManager.default.createSymbolicLink(
                at: dir.appendingPathComponent("v\(rung)"),
                withDestinationURL: samples.appendingPathComponent("v\(rung)"))
        }
        try (master.joined(separator: "\n") + "\n").write(to: dir.appendingPathComponent("master.m3u8"), atomically: true, encoding: .utf8)
        return dir
    }

    func play(
        _ root: URL, _ configure: (inout OriginConfiguration) -> Void, path: String = "master.m3u8", _ args: [String],
        timeoutSeconds: Double = 90
    ) throws -> (run: Run, wallSeconds: Double) {
        var config = OriginConfiguration()
        configure(&config)
        let started = Date()
        let run = try withOrigin(root, configuration: config) { server in
            try runHlsplay(
                [server.baseURL.appendingPathComponent(path).absoluteString, "--headless", "--json", "--no-status"] + args,
                timeoutSeconds: timeoutSeconds)
        }
        return (run, Date().timeIntervalSince(started))
    }

    // MARK: - Trickle

    /// A single-rung stream whose every segment trickles, at startup: nothing lower to go to, so the
    /// first segment is re-requested once on a fresh connection, then fails with the projection in the
    /// message. Before: no verdict, the player waited (killed after 240 s). Also through a media
    /// playlist URL (no BANDWIDTH: the size comes from Content-Length). With a 5 s no-progress
    /// timeout the watchdog does not fire: trickling bytes are new bytes.
    @Test(arguments: ["master.m3u8", "v0/prog.m3u8"])
    func trickleAtStartup_singleRung_reRequestedThenFailed_withTheProjection(path: String) throws {
        let root = try Self.ladder(rungs: [0])
        defer { try? FileManager.default.removeItem(at: root) }
        let (run, wall) = try play(
            root, { $0.faults = [FaultRule(pathPattern: "*.ts", action: Self.trickle)] }, path: path,
            ["--no-progress-timeout", "5"])
        expectValidLog(run)
        #expect(run.status == 69, "stderr: \(run.stderr)")
        #expect(wall < 30, "a decision within a bounded time: \(wall) s")
        let verdicts = run.events("request.trickle")
        #expect(verdicts.compactMap { ($0["assessment"] as? [String: Any])?["verdict"] as? String } == ["re-request", "fail"])
        let first = try #require(verdicts.first?["assessment"] as? [String: Any])
        #expect(first["reason"] as? String == "over-patience")
        #expect(first["lowerRungAvailable"] as? Bool == false)
        #expect(first["expectedSource"] as? String == "content-length")
        #expect((first["projectedCompletionSeconds"] as? Double ?? 0) > 300, "188 B / 0.5 s: minutes for a 150 kB segment")
        #expect((first["rateBps"] as? Double ?? 0) < 5_000)
        // Judged once the wedge window (3 s) had passed, not at the 10 s request timeouts.
        let judgedAt = try #require((verdicts.first?["snapshot"] as? [String: Any])?["elapsedSeconds"] as? Double)
        #expect(judgedAt >= 3 && judgedAt < 5)
        // The re-request went out at once, on a fresh connection.
        #expect(run.events("request.retry").first?["delaySeconds"] as? Double == 0)
        let segmentStarts = run.events("request.start").filter { $0["purpose"] as? String == "segment" }
        #expect(segmentStarts.count == 2)
        let fatal = try #require(run.events("error").first { $0["fatal"] as? Bool == true })
        #expect(fatal["category"] as? String == "network")
        let message = fatal["message"] as? String ?? ""
        #expect(message.contains("segment 0") && message.contains("trickled") && message.contains("projected completion"), "\(message)")
        #expect(run.stderr.contains("trickled"))
        #expect(run.summary?["trickleVerdicts"] as? Int == 2)
        #expect(run.events("session.noProgress").isEmpty, "bytes kept coming: the watchdog saw progress")
    }

    /// Mid-play on a two-rung ladder, every segment trickles from 3 s on: the top rung's fetch is
    /// abandoned as over-selected, the bottom rung's has nothing lower — re-requested, then failed.
    /// Before: the bottom rung's fetch was waited for with no limit (killed after 240 s).
    @Test func trickleMidPlay_twoRungs_abandonedDownThenFailed() throws {
        let root = try Self.ladder(rungs: [0, 1])
        defer { try? FileManager.default.removeItem(at: root) }
        let (run, wall) = try play(
            root, { $0.faults = [FaultRule(pathPattern: "*.ts", afterSeconds: 3, action: Self.trickle)] },
            ["--forward-buffer", "6"])
        expectValidLog(run)
        #expect(run.status == 69, "stderr: \(run.stderr)")
        #expect(wall < 40, "a decision within a bounded time: \(wall) s")
        let started = try #require(run.events("playback.started").first?["t"] as? Double)
        let verdicts = run.events("request.trickle").compactMap { ($0["assessment"] as? [String: Any])?["verdict"] as? String }
        #expect(verdicts.suffix(2) == ["re-request", "fail"], "\(verdicts)")
        let firstTrickle = try #require(run.events("request.trickle").first?["t"] as? Double)
        #expect(firstTrickle > started, "mid-play")
        // Every trickled fetch ended with a verdict; the last is the fatal one, naming the bottom rung's segment.
        let fatal = try #require(run.events("error").first { $0["fatal"] as? Bool == true })
        #expect((fatal["message"] as? String ?? "").contains("/v0/"), "\(fatal)")
        #expect((fatal["message"] as? String ?? "").contains("nothing lower to go to"))
    }

    /// One trickled request on the only rung, mid-play: the fresh-connection re-request gets the
    /// segment at full speed and playback goes on past it. Before: the trickled segment (10–12 s of
    /// media) was waited for, and the session stalled at 10 s for the ~6 minutes it would take.
    @Test func trickleOnce_singleRung_reRequestRecovers() throws {
        let root = try Self.ladder(rungs: [0])
        defer { try? FileManager.default.removeItem(at: root) }
        let (run, _) = try play(
            root, { $0.faults = [FaultRule(pathPattern: "*.ts", requestIndex: 0, afterSeconds: 3, action: Self.trickle)] },
            ["--forward-buffer", "6", "--duration", "16"], timeoutSeconds: 60)
        expectValidLog(run)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.summary?["exitReason"] as? String == "durationReached")
        let verdicts = run.events("request.trickle").compactMap { ($0["assessment"] as? [String: Any])?["verdict"] as? String }
        #expect(verdicts == ["re-request"])
        let aborted = try #require(run.events("request.trickle").first?["requestID"] as? Int)
        let next = run.events("request.end").first { ($0["requestID"] as? Int ?? 0) > aborted && $0["purpose"] as? String == "segment" }
        #expect(next?["ok"] as? Bool == true)
        #expect(next?["connectionReused"] as? Bool == false)
        #expect((run.summary?["playedSeconds"] as? Double ?? 0) >= 16, "played past the trickled segment")
    }

    // MARK: - No progress

    /// Every request black-holed: nothing ever arrives. With --no-progress-timeout 5 the session ends
    /// 5 s in with exit 75 and the watchdog's inputs in the log. Before: the retry policy gave up on the
    /// multivariant playlist after 44.5 s (exit 69); with no timeout of its own there is no bound to set.
    @Test func blackHoledOrigin_noProgressTimeout_exits75() throws {
        let root = try Self.ladder(rungs: [0])
        defer { try? FileManager.default.removeItem(at: root) }
        let (run, wall) = try play(root, { $0.faults = [FaultRule(pathPattern: "", action: .blackHole)] }, ["--no-progress-timeout", "5"])
        expectValidLog(run)
        #expect(run.status == 75, "stderr: \(run.stderr)")
        #expect(wall < 15, "\(wall) s")
        #expect((run.logLines.first?["configuration"] as? [String: Any])?["noProgressTimeoutSeconds"] as? Double == 5)
        let record = try #require(run.events("session.noProgress").first)
        #expect(record["timeoutSeconds"] as? Double == 5)
        let quiet = try #require(record["secondsWithoutProgress"] as? Double)
        #expect(quiet >= 5 && quiet < 7)
        #expect(record["downloadedBytes"] as? Int == 0)
        #expect(record["phase"] as? String == "startingUp")
        #expect((record["inFlight"] as? String ?? "").contains("multivariant-playlist"))
        // The error event follows the record, then the summary closes the log.
        let fatal = try #require(run.events("error").first { $0["fatal"] as? Bool == true })
        #expect(fatal["category"] as? String == "no-progress")
        let message = fatal["message"] as? String ?? ""
        #expect(message.hasPrefix("no progress for 5.") && message.contains("(--no-progress-timeout 5)"), "\(message)")
        #expect(run.summary?["exitReason"] as? String == "error")
        let summaryError = run.summary?["error"] as? String ?? ""
        #expect(summaryError.contains("no progress"))
        #expect(run.stderr.contains("hlsplay: error: no progress"))
    }

    /// A live stream whose playlist never changes (stale from the start): the player plays what the
    /// window holds, stalls, and its reloads bring nothing new; the 5 s bound ends it before the live
    /// resync policy's first step (a resync there holds, it never replays: LiveResyncTests). Before:
    /// a resync loop that ran until killed (240 s: 19 stalls, 57 live.resync events, the same 6 s replayed).
    @Test func staleLivePlaylist_noProgressTimeout_exits75() throws {
        let samples = try Repo.requireSamples("ladder-2s")
        let (run, wall) = try play(
            samples,
            { config in
                config.live = LiveConfiguration(windowSegments: 6)
                config.live?.stalePlaylists = [StalePlaylist(atSeconds: 0, durationSeconds: 100_000)]
            }, ["--no-progress-timeout", "5"])
        expectValidLog(run)
        #expect(run.status == 75, "stderr: \(run.stderr)")
        #expect(wall < 45, "\(wall) s")
        #expect(run.events("playback.started").count == 1, "the window's segments played")
        let record = try #require(run.events("session.noProgress").first)
        #expect((record["downloadedBytes"] as? Int ?? 0) > 0)
        #expect(run.events("playlist.loaded").contains { $0["changed"] as? Bool == false }, "reloads came back unchanged")
        #expect(run.summary?["isLive"] as? Bool == true)
    }

    /// A decoder that hangs for a minute (injected) while the session reaches its --duration: the
    /// loader and decode threads get 5 s to stop, then the summary is written without the hung one.
    /// Before: the session waited the whole minute for it.
    @Test func hungDecoder_sessionStillEndsWithACompleteLog() throws {
        let samples = try Repo.requireSamples("short-2s")
        let started = Date()
        let run = try withOrigin(samples) { base in
            try runHlsplay(
                [base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--duration", "2"],
                timeoutSeconds: 90, environment: ["HLSPLAY_INJECT_DECODE_HANG_SECONDS": "60"])
        }
        let wall = Date().timeIntervalSince(started)
        expectValidLog(run)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.summary?["exitReason"] as? String == "durationReached")
        #expect(wall < 20, "\(wall) s")
        let stuck = try #require(
            run.events("error").first { ($0["message"] as? String ?? "").contains("did not stop within 5 s") },
            "\(run.events("error"))")
        let stuckMessage = stuck["message"] as? String ?? ""
        #expect(stuckMessage.contains("hlsplay.decode"), "\(stuckMessage)")
        #expect(stuck["fatal"] as? Bool == false)
    }

    @Test func noProgressTimeout_offAndZero_disable_badValue_isAUsageError() throws {
        _ = try Repo.requireSamples("short-2s")
        let bad = try runHlsplay(["--headless", "--no-progress-timeout", "soon"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("'soon'"))
        let negative = try runHlsplay(["--headless", "--no-progress-timeout", "-1"])
        #expect(negative.status == 64)
        for off in ["off", "0"] {
            let root = try Self.ladder(rungs: [0])
            defer { try? FileManager.default.removeItem(at: root) }
            let (run, _) = try play(root, { _ in }, ["--no-progress-timeout", off, "--duration", "1"])
            #expect(run.status == 0, "stderr: \(run.stderr)")
            #expect((run.logLines.first?["configuration"] as? [String: Any])?["noProgressTimeoutSeconds"] as? Double == 0)
        }
    }
}

/// The bounded memory behind "new bytes" and "changed playlist" (PlayerSession+Progress).
@Suite struct RecentEntriesTests {
    @Test func keepsTheNewestKeys_dropsTheOldestQuarterPastTheLimit() {
        var r = RecentEntries<Int>(limit: 8)
        for i in 0..<8 { r.set(i, for: "k\(i)") }
        #expect(r.count == 8)
        #expect(r["k0"] == 0)
        r.set(80, for: "k0") // an update is not a new key
        #expect(r.count == 8 && r["k0"] == 80)
        r.set(8, for: "k8") // one over: the oldest quarter (3 keys) goes
        #expect(r.count == 6)
        #expect(r["k0"] == nil && r["k2"] == nil)
        #expect(r["k3"] == 3 && r["k8"] == 8)
    }
}
