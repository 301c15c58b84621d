import Foundation
import HLSOrigin
import Testing

/// The progress guarantee, through the real binary against the real origin: a body that trickles
/// is judged by its projected completion and abandoned, re-requested or failed with a reason.
/// Before this rule, each case below ran until killed (docs/startup-cap.md §4b).
@Suite struct ProgressGuaranteeTests {
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
            try FileManager.default.createSymbolicLink(at: dir.appendingPathComponent("v\(rung)"),
                                                       withDestinationURL: samples.appendingPathComponent("v\(rung)"))
        }
        try (master.joined(separator: "\n") + "\n").write(to: dir.appendingPathComponent("master.m3u8"), atomically: true, encoding: .utf8)
        return dir
    }

    func play(_ root: URL, _ configure: (inout OriginConfiguration) -> Void, path: String = "master.m3u8", _ args: [String],
              timeoutSeconds: Double = 90) throws -> (run: Run, wallSeconds: Double) {
        var config = OriginConfiguration()
        configure(&config)
        let started = Date()
        let run = try withOrigin(root, configuration: config) { server in
            try runHlsplay([server.baseURL.appendingPathComponent(path).absoluteString, "--headless", "--json", "--no-status"] + args,
                           timeoutSeconds: timeoutSeconds)
        }
        return (run, Date().timeIntervalSince(started))
    }

    // MARK: - Trickle

    /// A single-rung stream whose every segment trickles, at startup: nothing lower to go to, so the
    /// first segment is re-requested once on a fresh connection, then fails with the projection in the
    /// message. Before: no verdict, the player waited (killed after 240 s). Also through a media
    /// playlist URL (no BANDWIDTH: the size comes from Content-Length).
    @Test(arguments: ["master.m3u8", "v0/prog.m3u8"])
    func trickleAtStartup_singleRung_reRequestedThenFailed_withTheProjection(path: String) throws {
        let root = try Self.ladder(rungs: [0])
        defer { try? FileManager.default.removeItem(at: root) }
        let (run, wall) = try play(root, { $0.faults = [FaultRule(pathPattern: "*.ts", action: Self.trickle)] }, path: path, [])
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
    }

    /// Mid-play on a two-rung ladder, every segment trickles from 3 s on: the top rung's fetch is
    /// abandoned as over-selected, the bottom rung's has nothing lower — re-requested, then failed.
    /// Before: the bottom rung's fetch was waited for with no limit (killed after 240 s).
    @Test func trickleMidPlay_twoRungs_abandonedDownThenFailed() throws {
        let root = try Self.ladder(rungs: [0, 1])
        defer { try? FileManager.default.removeItem(at: root) }
        let (run, wall) = try play(root, { $0.faults = [FaultRule(pathPattern: "*.ts", afterSeconds: 3, action: Self.trickle)] },
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
        let (run, _) = try play(root, { $0.faults = [FaultRule(pathPattern: "*.ts", requestIndex: 0, afterSeconds: 3, action: Self.trickle)] },
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
}
