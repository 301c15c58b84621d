import Foundation
import HLSOrigin
import Testing
import TestSupport

/// Tokens in URLs stay out of logs, HAR and output unless asked for.
@Suite(.serialized, .tags(.realTime)) struct RedactionTests {
    @Test func queryToken_redactedEverywhere_byDefault_keptWithNoRedact() throws {
        let samples = try Repo.requireSamples("short-2s")
        try withOrigin(samples) { base in
            let url = base.absoluteString + "master.m3u8?token=s3cr3t-value"
            let run = try runHlsplay([url, "--headless", "--json", "--duration", "2"])
            #expect(run.status == 0, "stderr: \(run.stderr)")
            let everything =
                run.rawLogLines.joined() + run.stdout + run.stderr
                + String(decoding: (try? JSONSerialization.data(withJSONObject: run.har ?? [:])) ?? Data(), as: UTF8.self)
            #expect(!everything.contains("s3cr3t-value"))
            #expect(run.rawLogLines.first?.contains("token=REDACTED") == true)

            let open = try runHlsplay([url, "--headless", "--json", "--duration", "2", "--no-redact"])
            #expect(open.rawLogLines.joined().contains("s3cr3t-value"))
        }
    }

    /// Secrets planted everywhere a URL can carry one — userinfo and a token on the master URL,
    /// tokens on the segment URIs of the media playlists — and error paths that put the URL into
    /// a message (a segment answering 404 until the session gives up, a wedged segment): none of
    /// them may appear in any output (stdout, stderr, the session log, the HAR, the HTML report),
    /// in clear or as the basic-auth header libcurl builds from the userinfo.
    @Test(arguments: ["404", "wedge"])
    func plantedSecrets_inNoOutput(errorPath: String) throws {
        let samples = try Repo.requireSamples("short-2s")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-secrets-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let segmentToken = "SEGTOKEN-SECRET-8c1f"
        try FileManager.default.copyItem(at: samples.appendingPathComponent("master.m3u8"), to: dir.appendingPathComponent("master.m3u8"))
        for variant in ["v0", "v1", "v2", "v3"] {
            let from = samples.appendingPathComponent(variant), to = dir.appendingPathComponent(variant)
            try FileManager.default.createDirectory(at: to, withIntermediateDirectories: true)
            for name in try FileManager.default.contentsOfDirectory(atPath: from.path) where name.hasSuffix(".ts") {
                try FileManager.default.createSymbolicLink(at: to.appendingPathComponent(name), withDestinationURL: from.appendingPathComponent(name))
            }
            let playlist = try String(contentsOf: from.appendingPathComponent("prog.m3u8"), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.hasSuffix(".ts") ? "\($0)?token=\(segmentToken)&exp=1999999999" : String($0) }.joined(separator: "\n")
            try playlist.write(to: to.appendingPathComponent("prog.m3u8"), atomically: true, encoding: .utf8)
        }
        let user = "alice-SECRET-user", password = "pw-SECRET-9f3a", masterToken = "MASTERTOKEN-SECRET-77e0"
        let basicAuth = Data("\(user):\(password)".utf8).base64EncodedString()
        let secrets = [user, password, masterToken, segmentToken, basicAuth]
        let fault: FaultRule =
            errorPath == "404"
            ? FaultRule(pathPattern: "*/seg_00002.ts", requestIndex: nil, afterSeconds: nil, action: .status(code: 404, retryAfterSeconds: nil))
            : FaultRule(pathPattern: "*/seg_00001.ts", requestIndex: 0, afterSeconds: nil, action: .stallAfterBytes(bytes: 20_000, seconds: nil))
        let html = dir.appendingPathComponent("report.html")
        let (run, report) = try withOrigin(dir, faults: [fault]) { base in
            var components = URLComponents(url: base.appendingPathComponent("master.m3u8"), resolvingAgainstBaseURL: false)!
            components.user = user
            components.password = password
            components.query = "token=\(masterToken)&v=2"
            let log = dir.appendingPathComponent("s.jsonl")
            let run = try runHlsplay([
                components.url!.absoluteString, "--headless", "--json", "--log", log.path,
                "--har", dir.appendingPathComponent("s.har").path
            ])
            let report = try runProcess(
                Repo.hlsplay, ["report", log.path, "--html", html.path], environment: environmentWithFreshCache(),
                timeoutSeconds: 60)
            return (run, report)
        }
        let logText = (try? String(contentsOf: dir.appendingPathComponent("s.jsonl"), encoding: .utf8)) ?? ""
        let harText = (try? String(contentsOf: dir.appendingPathComponent("s.har"), encoding: .utf8)) ?? ""
        let htmlText = (try? String(contentsOf: html, encoding: .utf8)) ?? ""
        #expect(run.status == (errorPath == "404" ? 69 : 0), "stderr: \(run.stderr)")
        #expect(report.status == 0, "report: \(report.stderr)")
        #expect(!logText.isEmpty && !harText.isEmpty && !htmlText.isEmpty, "every output was written")
        expectValidHAR(text: harText)
        let outputs = [
            ("stdout", run.stdout), ("stderr", run.stderr), ("log", logText), ("HAR", harText), ("report", htmlText),
            ("report stdout", report.stdout), ("report stderr", report.stderr)
        ]
        for (name, text) in outputs {
            for secret in secrets {
                for line in text.split(separator: "\n") where line.contains(secret) {
                    Issue.record("the \(name) holds \(secret): \(line.prefix(600))")
                }
            }
        }
        // The error path really happened and put its URL into the HAR's error text.
        let errors = harText.split(separator: "\n").filter { $0.contains("\"_error\"") }
        #expect(errors.contains { $0.contains("seg_0000") }, "\(errors)")
        // What is left still says which parameters were sent.
        #expect(harText.contains("?token=REDACTED&exp=REDACTED"))
    }
}
