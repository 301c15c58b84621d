// --header, --cookie, --user-agent, --referer, --proxy through the real binary, checked against the
// origin's own request log (what arrived), with the values planted as secrets in no output.

import Foundation
import HLSOrigin
import Testing
import TestSupport

@Suite(.serialized, .tags(.realTime)) struct RequestOptionsTests {
    @Test func addedHeaders_reachEveryRequest_oneHostsOnlyItsOwn_valuesInNoOutput() throws {
        let samples = try Repo.requireSamples("short-2s")
        let (run, origin) = try withLoggedOrigin(samples) { server in
            try runHlsplay([
                server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--duration", "1",
                "--header", "X-Api-Key: APIKEY-SECRET-5150", "--header", "127.0.0.1/X-Scoped: for-this-host",
                "--header", "other.example/X-Elsewhere: not-here", "--cookie", "session=COOKIE-SECRET-7781; theme=dark",
                "--user-agent", "QA-Agent/2.0 (hlsplay test)", "--referer", "https://player.example/watch"
            ])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let requests = origin.map { $0.headers ?? [:] }
        #expect(requests.count == run.summary?["requests"] as? Int && !requests.isEmpty)
        for headers in requests {
            #expect(headers["x-api-key"] == "APIKEY-SECRET-5150")
            #expect(headers["x-scoped"] == "for-this-host")
            #expect(headers["x-elsewhere"] == nil, "a header for another host is not sent here")
            #expect(headers["cookie"] == "session; theme", "the origin logs cookie names only: \(headers["cookie"] ?? "-")")
            #expect(headers["user-agent"] == "QA-Agent/2.0 (hlsplay test)")
            #expect(headers["referer"] == "https://player.example/watch")
        }
        // The values are in no output; the header record keeps names, hosts and lengths.
        let outputs = [
            run.stdout, run.stderr, run.rawLogLines.joined(separator: "\n"),
            String(decoding: try JSONSerialization.data(withJSONObject: run.har ?? [:]), as: UTF8.self)
        ]
        for secret in ["APIKEY-SECRET-5150", "COOKIE-SECRET-7781"] {
            #expect(!outputs.contains { $0.contains(secret) }, "\(secret) leaked")
        }
        let configuration = run.logLines.first?["configuration"] as? [String: Any]
        let recorded = configuration?["requestHeaders"] as? [[String: Any]] ?? []
        #expect(recorded.map { $0["name"] as? String ?? "" } == ["X-Api-Key", "X-Scoped", "X-Elsewhere", "Cookie", "Referer"])
        #expect(recorded.first?["valueBytes"] as? Int == "APIKEY-SECRET-5150".utf8.count)
        #expect(configuration?["userAgent"] as? String == "QA-Agent/2.0 (hlsplay test)")
    }

    @Test func proxy_everyRequestGoesThroughIt() throws {
        // A proxy that refuses connections: the session cannot reach the origin, which sees nothing.
        let samples = try Repo.requireSamples("short-2s")
        let (run, origin) = try withLoggedOrigin(samples) { server in
            try runHlsplay(
                [
                    server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
                    "--proxy", "http://127.0.0.1:1"
                ], timeoutSeconds: 90)
        }
        #expect(run.status == 69, "a network failure: \(run.stderr)")
        #expect(run.stderr.contains("127.0.0.1") && run.stderr.lowercased().contains("connect"), "\(run.stderr)")
        #expect(origin.isEmpty, "the origin was never asked directly: \(origin.map(\.path))")
        #expect((run.logLines.first?["configuration"] as? [String: Any])?["proxy"] as? String == "http://127.0.0.1:1")
    }

    @Test func ipv6Loopback_playsLikeIPv4_withTheBracketedHostInTheRecords() throws {
        var config = OriginConfiguration()
        config.bindAddress = "::1"
        let server = OriginServer(root: try Repo.requireSamples("short-2s"), configuration: config)
        try server.start(port: 0)
        let url = server.baseURL.appendingPathComponent("master.m3u8").absoluteString
        #expect(url.hasPrefix("http://[::1]:"), "\(url)")
        let run = try runHlsplay([url, "--headless", "--json", "--duration", "1"])
        server.stop()
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.summary?["exitReason"] as? String == "durationReached")
        #expect((run.summary?["decodedVideoFrames"] as? Int ?? 0) > 0)
        let ends = run.events("request.end")
        #expect(!ends.isEmpty && ends.allSatisfy { ($0["url"] as? String ?? "").hasPrefix("http://[::1]:") && $0["ok"] as? Bool == true })
        let gate = run.events("cap.gate").first?["networkKey"] as? [String: Any]
        #expect(gate?["originHost"] as? String == "::1")
    }

    @Test func malformedValues_areUsageErrors() throws {
        let master = try Repo.requireSamples("short-2s").appendingPathComponent("master.m3u8").path
        for (args, says) in [
            (["--header", "NoColon"], "--header"), (["--header", "Bad Name: x"], "--header"),
            (["--cookie", "nocookie"], "--cookie"), (["--proxy", ""], "--proxy"),
            (["--cacert", "/nonexistent/ca.pem"], "--cacert: cannot read"), (["--cacert", master], "holds no PEM certificate")
        ] {
            let run = try runHlsplay([master, "--headless"] + args, timeoutSeconds: 30)
            #expect(run.status == 64, "\(args): \(run.status) \(run.stderr)")
            #expect(run.stderr.contains(says), "\(args): \(run.stderr)")
        }
    }
}
