// hlsplay checked against hls-origin's request log (the ground truth) for CMCD in header mode, and the
// command-line grammar the two binaries share (`--opt=value`, durations with units, --version).

import Foundation
import HLSOrigin
import Testing
import TestSupport

@Suite(.serialized, .tags(.realTime)) struct OriginGroundTruthTests {
    /// `hlsplay --cmcd header` through the hls-origin binary: every request the origin logged carries the
    /// CMCD-* header fields the player sent, with the values the player used, and no CMCD query.
    @Test func cmcdHeader_originLogCarriesTheHeadersHlsplaySent() throws {
        let samples = try Repo.requireSamples("short-2s")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cmcd-header-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let originLog = dir.appendingPathComponent("origin.jsonl")
        let (origin, port) = try launchOrigin([samples.path, "--log=\(originLog.path)"])
        defer { if origin.isRunning { origin.terminate() } }
        let run = try runHlsplay(["http://127.0.0.1:\(port)/master.m3u8", "--headless", "--json", "--cmcd=header"])
        kill(origin.processIdentifier, SIGTERM)
        origin.waitUntilExit()
        #expect(run.status == 0, "stderr: \(run.stderr)")

        let entries = try String(contentsOf: originLog, encoding: .utf8).split(separator: "\n").compactMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }.sorted { ($0["accepted"] as? Double ?? 0) < ($1["accepted"] as? Double ?? 0) }
        #expect(entries.count == run.summary?["requests"] as? Int)
        let headers = entries.map { $0["headers"] as? [String: String] ?? [:] }
        /// One CMCD-* field as key → value (`true` for a bare key).
        func cmcd(_ h: [String: String], _ field: String) -> [String: String] {
            var out: [String: String] = [:]
            for pair in (h[field] ?? "").split(separator: ",") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                out[String(kv[0])] = kv.count > 1 ? String(kv[1]) : "true"
            }
            return out
        }
        #expect(entries.allSatisfy { $0["query"] == nil }, "header mode adds no CMCD query")
        // The origin saw what a client sends, and hlsplay's own User-Agent.
        #expect(headers.allSatisfy { $0["host"] == "127.0.0.1:\(port)" && ($0["user-agent"] ?? "").hasPrefix("hlsplay/") }, "\(headers.first ?? [:])")
        let sessions = headers.map { cmcd($0, "cmcd-session") }
        #expect(sessions.allSatisfy { $0["sf"] == "h" && $0["sid"] != nil && $0["cid"] != nil }, "\(sessions)")
        #expect(Set(sessions.compactMap { $0["sid"] }).count == 1, "one session id")
        #expect(cmcd(headers[0], "cmcd-object")["ot"] == "m")
        let segments = zip(entries, headers).filter { ($0.0["path"] as? String ?? "").hasSuffix(".ts") }.map(\.1)
        #expect(segments.count == 4)
        #expect(segments.allSatisfy { cmcd($0, "cmcd-session")["st"] == "v" }, "the stream type, once known")
        let objects = segments.map { cmcd($0, "cmcd-object") }
        let requests = segments.map { cmcd($0, "cmcd-request") }
        #expect(objects.allSatisfy { $0["ot"] == "av" && $0["d"] == "2000" && $0["br"] != nil && $0["tb"] != nil }, "\(objects)")
        #expect(requests.first?["su"] == "true")
        #expect(requests.dropFirst().allSatisfy { $0["su"] == nil && $0["mtp"] != nil }, "\(requests)")
        #expect(Int(requests.last?["bl"] ?? "") ?? 0 > 0)
        // br is the BANDWIDTH of the variant each segment came from, as hlsplay logged it, in kbps.
        let buffered = run.events("segment.buffered").compactMap { $0["bandwidthBps"] as? Int }
        #expect(objects.compactMap { Int($0["br"] ?? "") } == buffered.map { Int((Double($0) / 1000).rounded()) })
    }

    /// `--opt=value` and durations with units mean what `--opt value` in seconds means.
    @Test func hlsplay_equalsFormAndDurationUnits_setTheSameConfiguration() throws {
        let samples = try Repo.requireSamples("short-2s")
        try withOrigin(samples) { base in
            let url = base.appendingPathComponent("master.m3u8").absoluteString
            let run = try runHlsplay([
                url, "--headless", "--duration=1500ms", "--startup-buffer=1s", "--resume-buffer", "3s",
                "--monitor-interval=0.25", "--peak-bitrate=5m", "--no-progress-timeout=2min"
            ])
            #expect(run.status == 0, "stderr: \(run.stderr)")
            let configuration = try #require(run.logLines.first?["configuration"] as? [String: Any])
            let playback = configuration["playback"] as? [String: Any] ?? [:]
            #expect(configuration["durationLimitSeconds"] as? Double == 1.5)
            #expect(playback["startupBufferSeconds"] as? Double == 1)
            #expect(playback["resumeBufferSeconds"] as? Double == 3)
            #expect(configuration["monitorIntervalSeconds"] as? Double == 0.25)
            #expect(configuration["preferredPeakBitRateBps"] as? Int == 5_000_000)
            #expect(configuration["noProgressTimeoutSeconds"] as? Double == 120)
        }
    }

    /// A bad value is a usage error (64) naming the option and the word, in either form, before anything plays.
    @Test func hlsplay_badValueOrFlagWithValue_isAUsageErrorNamingIt() throws {
        let cases: [([String], String)] = [
            (["--headless", "--duration=soon"], "--duration: 'soon' is not a duration > 0"),
            (["--headless", "--duration", "5parsecs"], "--duration: '5parsecs' is not a duration > 0"),
            (["--headless", "--startup-buffer=-1"], "--startup-buffer: '-1' is not a duration ≥ 0"),
            (["--headless=yes"], "'--headless=yes': --headless takes no value"),
            (["--headless", "--peak-bitrate=fast"], "--peak-bitrate: 'fast' is not a bit rate"),
            (["--headless", "--bogus=1"], "unknown option '--bogus=1'")
        ]
        for (args, message) in cases {
            let run = try runHlsplay(args)
            #expect(run.status == 64, "\(args)")
            #expect(run.stderr.contains("hlsplay: \(message)"), "\(args): \(run.stderr)")
            #expect(run.stderr.contains("Try 'hlsplay --help'."))
        }
        let simulate = try runProcess(Repo.hlsplay, ["simulate", "ladder", "--trace=t", "--rtt=soon"])
        #expect(simulate.status == 64 && simulate.stderr.contains("--rtt: 'soon' is not a duration"), "\(simulate.stderr)")
        // After `--` a word that looks like an option is an operand (here a ladder folder named -ladder).
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("dash-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir.appendingPathComponent("-ladder"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let dashed = try runProcess(Repo.hlsplay, ["simulate", "--trace=t", "--", "-ladder"], currentDirectory: dir)
        #expect(dashed.status != 64 && dashed.stderr.contains("-ladder/master.m3u8"), "\(dashed.stderr)")
        let undashed = try runProcess(Repo.hlsplay, ["simulate", "--trace=t", "-ladder"], currentDirectory: dir)
        #expect(undashed.status == 64 && undashed.stderr.contains("unknown option '-ladder'"), "\(undashed.stderr)")
        let report = try runProcess(Repo.hlsplay, ["report", "--html"])
        #expect(report.status == 64 && report.stderr.contains("--html needs a value"), "\(report.stderr)")
    }

    /// Both binaries print one version.
    @Test func version_hlsOriginAndHlsplayAgree() throws {
        let player = try runProcess(Repo.hlsplay, ["--version"])
        let origin = try runOriginToExit(["--version"])
        #expect(player.status == 0 && origin.status == 0)
        let playerVersion = player.stdout.split(separator: " ").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
        #expect(playerVersion?.isEmpty == false)
        #expect(origin.stdout == "hls-origin \(playerVersion ?? "?")\n", "hlsplay said \(player.stdout)")
    }
}
