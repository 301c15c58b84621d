// hls-origin for other players and for checking hlsplay against ground truth: `--bind` (IPv4 or IPv6 literal,
// loopback only in tests), CORS on every answer and OPTIONS preflights, request header fields in the request
// log, `--version`, and the command-line grammar it shares with hlsplay (`--opt=value`, durations with units,
// short usage and exit 64 naming the bad word).

import Foundation
import Glibc
import HLSCore
import Testing
import TestSupport
@testable import HLSOrigin

/// Launches hls-origin with `args`; returns it with the host and port of its first stdout line
/// (`listening on http://HOST:PORT/`, an IPv6 HOST in brackets).
private func launchOriginReadingAddress(_ args: [String]) throws -> (process: Process, line: String, host: String, port: UInt16) {
    let process = Process()
    process.executableURL = try requireOriginBinary()
    process.arguments = args
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    try process.run()
    let line = readFirstLine(out.fileHandleForReading)
    let prefix = "listening on http://"
    guard line.hasPrefix(prefix), line.hasSuffix("/"), let colon = line.dropLast().lastIndex(of: ":"),
        let port = UInt16(line[line.index(after: colon)...].dropLast())
    else {
        process.terminate()
        process.waitUntilExit()
        throw TestSetupError("no listening line from hls-origin, got \(line)")
    }
    var host = String(line[line.index(line.startIndex, offsetBy: prefix.count)..<colon])
    if host.hasPrefix("[") { host = String(host.dropFirst().dropLast()) }
    return (process, line, host, port)
}

private func requestLog(_ url: URL) throws -> [[String: Any]] {
    try String(contentsOf: url, encoding: .utf8).split(separator: "\n").compactMap {
        try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
}

extension OriginTests {
    // MARK: --bind

    @Test func bind_ipv6Loopback_servesAndPrintsABracketedURL() throws {
        let f = try Fixture()
        let log = f.root.appendingPathComponent("requests.jsonl")
        let origin = try launchOriginReadingAddress([f.root.path, "--bind", "::1", "--log", log.path])
        defer { if origin.process.isRunning { origin.process.terminate() } }
        #expect(origin.line.hasPrefix("listening on http://[::1]:"), "\(origin.line)")
        #expect(origin.host == "::1")
        let c = try RawClient(port: origin.port, host: "::1")
        let r = try c.get("/v/seg0.ts")
        #expect(r.status == 200 && r.body == Fixture.segment)
        // Bound to ::1 only: the IPv4 loopback at the same port is not this origin.
        #expect(throws: (any Error).self) { _ = try RawClient(port: origin.port, host: "127.0.0.1").get("/v/seg0.ts") }
        kill(origin.process.processIdentifier, SIGTERM)
        origin.process.waitUntilExit()
        #expect(origin.process.terminationStatus == 0)
        let entries = try requestLog(log)
        #expect(entries.map { $0["status"] as? Int } == [200])
        #expect(entries.map { $0["clientAddress"] as? String } == ["::1"])
    }

    @Test func bind_bracketedIPv6AndEqualsForm_areAccepted() throws {
        let f = try Fixture()
        let origin = try launchOriginReadingAddress([f.root.path, "--bind=[::1]", "--port=0"])
        defer { if origin.process.isRunning { origin.process.terminate() } }
        #expect(origin.line.hasPrefix("listening on http://[::1]:"))
        #expect(try RawClient(port: origin.port, host: "::1").get("/v/index.m3u8").status == 200)
    }

    @Test func bind_ipv4Loopback_isTheDefaultAndCanBeNamed() throws {
        let f = try Fixture()
        let named = try launchOriginReadingAddress([f.root.path, "--bind", "127.0.0.1"])
        defer { if named.process.isRunning { named.process.terminate() } }
        #expect(named.line.hasPrefix("listening on http://127.0.0.1:"))
        #expect(try RawClient(port: named.port).get("/v/index.m3u8").status == 200)
        let unnamed = try launchOriginReadingAddress([f.root.path])
        defer { if unnamed.process.isRunning { unnamed.process.terminate() } }
        #expect(unnamed.host == "127.0.0.1")
    }

    /// A harness stops the origin as soon as it reads the listening line: the origin exits 0 every time. Its
    /// signal sources used to be installed after that line, and a SIGTERM in between (the signals ignored, no
    /// source yet) was lost: the origin lived on after its test (one was found running 15 minutes later).
    @Test func sigtermRightAfterTheListeningLine_exitsEveryTime() throws {
        let f = try Fixture()
        for attempt in 0..<20 {
            let (process, _) = try launchOrigin([f.root.path])
            kill(process.processIdentifier, attempt.isMultiple(of: 2) ? SIGTERM : SIGINT)
            let deadline = Date(timeIntervalSinceNow: 5)
            while process.isRunning, Date() < deadline { usleep(10_000) }
            let stillRunning = process.isRunning
            if stillRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
            #expect(!stillRunning, "attempt \(attempt): still running 5 s after the signal")
            #expect(stillRunning || process.terminationStatus == 0, "attempt \(attempt): exit \(process.terminationStatus)")
        }
    }

    @Test func bind_hostNameOrJunk_isAUsageErrorNamingIt() throws {
        let dir = FileManager.default.temporaryDirectory.path
        for bad in ["localhost", "example.com", "127.0.0.256", "::g", "[127.0.0.1]", ""] {
            let run = try runOriginToExit([dir, "--bind", bad])
            #expect(run.status == 64, "\(bad): \(run.stderr)")
            #expect(run.stderr.contains("--bind: '\(bad)' is not an IPv4 or IPv6 address literal"), "\(run.stderr)")
        }
    }

    @Test func bindAddress_library_parsesLiteralsAndWritesURLHosts() throws {
        #expect(BindAddress("127.0.0.1")?.family == AF_INET)
        #expect(BindAddress("::1")?.family == AF_INET6)
        #expect(BindAddress("[::1]")?.literal == "::1")
        #expect(BindAddress("::1")?.urlHost == "[::1]")
        #expect(BindAddress("0.0.0.0")?.urlHost == "0.0.0.0")
        #expect(BindAddress("localhost") == nil)
        #expect(BindAddress("[127.0.0.1]") == nil)
        let f = try Fixture()
        var refused = OriginConfiguration()
        refused.bindAddress = "localhost"
        #expect(throws: (any Error).self) { try OriginServer(root: f.root, configuration: refused).start(port: 0) }
        do {
            try OriginServer(root: f.root, configuration: refused).start(port: 0)
        } catch {
            #expect("\(error)".contains("'localhost' is not an IPv4 or IPv6 address literal"))
        }
        var config = OriginConfiguration()
        config.bindAddress = "::1"
        let server = OriginServer(root: f.root, configuration: config)
        try server.start(port: 0)
        defer { server.stop() }
        #expect(server.baseURL.absoluteString == "http://[::1]:\(server.port)/")
        #expect(try RawClient(port: server.port, host: "::1").get("/v/seg0.ts").status == 200)
    }

    // MARK: CORS

    @Test func cors_everyAnswerCarriesAllowOriginAndExposesWhatPlayersRead() throws {
        var config = OriginConfiguration()
        config.faults = [FaultRule(pathPattern: "audio.aac", action: .status(code: 503, retryAfterSeconds: 2))]
        let f = try Fixture(configuration: config)
        let c = try RawClient(port: f.port)
        let whole = try c.get("/v/seg0.ts", headers: ["Origin: http://player.example"])
        let ranged = try c.get("/v/seg0.ts", headers: ["Origin: http://player.example", "Range: bytes=0-99"])
        let missing = try c.get("/v/nothing-here.ts")
        let faulted = try c.get("/v/audio.aac")
        #expect([whole.status, ranged.status, missing.status, faulted.status] == [200, 206, 404, 503] as [Int])
        for r in [whole, ranged, missing, faulted] {
            #expect(r.headers["access-control-allow-origin"] == "*")
            #expect(r.headers["timing-allow-origin"] == "*")
            let exposed = Set(
                (r.headers["access-control-expose-headers"] ?? "").split(separator: ",").map {
                    $0.trimmingCharacters(in: .whitespaces).lowercased()
                })
            #expect(exposed.isSuperset(of: ["content-length", "content-range", "date", "age", "retry-after"]), "\(exposed)")
            #expect(r.headers["date"]?.hasSuffix(" GMT") == true, "\(r.headers)")
        }
        #expect(ranged.headers["content-range"] == "bytes 0-99/100000")
    }

    @Test func cors_preflightAnswers204EchoingTheRequestedHeaders_beforeFaults() throws {
        var config = OriginConfiguration()
        config.faults = [
            FaultRule(pathPattern: "seg0.ts", action: .status(code: 503, retryAfterSeconds: 1)),
            FaultRule(pathPattern: "seg1.m4s", action: .blackHole)
        ]
        let f = try Fixture(configuration: config)
        let log = f.root.appendingPathComponent("requests.jsonl")
        config.requestLogURL = log
        let server = OriginServer(root: f.root, configuration: config)
        try server.start(port: 0)
        defer { server.stop() }
        let c = try RawClient(port: server.port)
        c.request(
            "OPTIONS", "/v/seg0.ts",
            headers: [
                "Origin: http://player.example", "Access-Control-Request-Method: GET",
                "Access-Control-Request-Headers: cmcd-request,CMCD-Object, range"
            ])
        let preflight = try c.readResponse(head: true)
        #expect(preflight.status == 204)
        #expect(preflight.headers["access-control-allow-origin"] == "*")
        #expect(preflight.headers["access-control-allow-methods"] == "GET, HEAD, OPTIONS")
        #expect(preflight.headers["access-control-allow-headers"] == "cmcd-request, CMCD-Object, range")
        #expect(preflight.headers["access-control-max-age"] == "600")
        #expect(preflight.headers["content-length"] == nil, "a 204 has no Content-Length (RFC 9110 §8.6)")
        #expect(preflight.headers["access-control-allow-private-network"] == nil, "not asked, not granted")
        // The connection stays usable (no stray body bytes) and the fault still applies to the GET.
        let get = try c.get("/v/seg0.ts", headers: ["Origin: http://player.example"])
        #expect(get.status == 503 && get.headers["access-control-allow-origin"] == "*")
        // A header name that is not a token is dropped, not echoed; none asked, none echoed.
        c.request("OPTIONS", "/v/index.m3u8", headers: ["Access-Control-Request-Headers: x-ok, bad name, x(y)"])
        #expect(try c.readResponse(head: true).headers["access-control-allow-headers"] == "x-ok")
        c.request("OPTIONS", "/v/index.m3u8", headers: ["Access-Control-Request-Method: GET", "Access-Control-Request-Private-Network: true"])
        #expect(try c.readResponse(head: true).headers["access-control-allow-private-network"] == "true")
        // A black-holed path still answers its preflight; the GET is black-holed as before.
        c.request("OPTIONS", "/v/seg1.m4s", headers: ["Access-Control-Request-Method: GET"])
        #expect(try c.readResponse(head: true).status == 204)
        c.request("OPTIONS", "*")
        let plain = try c.readResponse(head: true)
        #expect(plain.status == 204 && plain.headers["allow"] == "GET, HEAD, OPTIONS")
        #expect(plain.headers["access-control-allow-headers"] == nil)
        // Other methods: 405 naming what is allowed.
        c.request("DELETE", "/v/index.m3u8")
        let delete = try c.readResponse()
        #expect(delete.status == 405 && delete.headers["allow"] == "GET, HEAD, OPTIONS")
        let hole = try RawClient(port: server.port, timeout: 0.5)
        hole.request("GET", "/v/seg1.m4s")
        #expect(hole.readToEnd().end == .timeout)
        server.stop()
        let entries = try requestLog(log)
        #expect(entries.filter { $0["method"] as? String == "OPTIONS" }.map { $0["status"] as? Int } == [204, 204, 204, 204, 204])
        #expect(entries.filter { $0["method"] as? String == "OPTIONS" }.allSatisfy { $0["fault"] == nil })
    }

    // MARK: request header fields in the log

    @Test func log_recordsEveryRequestHeader_cookieNamesAndAuthSchemeOnly() throws {
        let f = try Fixture()
        let log = f.root.appendingPathComponent("requests.jsonl")
        var config = OriginConfiguration()
        config.requestLogURL = log
        let server = OriginServer(root: f.root, configuration: config)
        try server.start(port: 0)
        defer { server.stop() }
        let c = try RawClient(port: server.port)
        _ = try c.get(
            "/v/seg0.ts",
            headers: [
                "Range: bytes=10-19", "User-Agent: test-agent/1", "Referer: http://player.example/page",
                "CMCD-Request: bl=2100,mtp=4000,su", "CMCD-Object: br=1200,d=2000,ot=av", "CMCD-Session: sf=h,sid=\"abc\"",
                "Cookie: session=SECRET1; theme=dark", "Cookie: other=SECRET2", "Authorization: Bearer SECRET3",
                "X-Repeat: a", "X-Repeat: b"
            ])
        server.stop()
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(!text.contains("SECRET"), "credentials written to the log: \(text)")
        let entry = try #require(try requestLog(log).first)
        #expect(entry["clientAddress"] as? String == "127.0.0.1")
        let headers = try #require(entry["headers"] as? [String: String])
        #expect(headers["host"] == "127.0.0.1")
        #expect(headers["range"] == "bytes=10-19")
        #expect(headers["user-agent"] == "test-agent/1")
        #expect(headers["referer"] == "http://player.example/page")
        #expect(headers["cmcd-request"] == "bl=2100,mtp=4000,su")
        #expect(headers["cmcd-object"] == "br=1200,d=2000,ot=av")
        #expect(headers["cmcd-session"] == "sf=h,sid=\"abc\"")
        #expect(headers["cookie"] == "session; theme; other")
        #expect(headers["authorization"] == "Bearer REDACTED")
        #expect(headers["x-repeat"] == "a, b")
    }

    // MARK: the command line

    @Test func version_printsTheProjectVersion() throws {
        let run = try runOriginToExit(["--version"])
        #expect(run.status == 0)
        #expect(run.stdout == "hls-origin \(ProjectVersion.string)\n")
    }

    @Test func usageError_isShortNamesTheWordAndPointsToHelp() throws {
        let dir = FileManager.default.temporaryDirectory.path
        let cases: [([String], String)] = [
            ([dir, "--bogus"], "unknown option '--bogus'"),
            ([dir, "--bogus=3"], "unknown option '--bogus=3'"),
            ([dir, "--rtt", "5parsecs"], "--rtt: '5parsecs' is not a duration"),
            ([dir, "--rtt=-1"], "--rtt: '-1' is not a duration"),
            ([dir, "--rate=fast"], "--rate: 'fast' is not a bit rate"),
            ([dir, "--window", "0"], "--window: '0' is not a window length"),
            ([dir, "--live=yes"], "'--live=yes': --live takes no value"),
            ([dir, "--log"], "--log needs a value"),
            ([dir, dir], "unexpected argument")
        ]
        for (args, message) in cases {
            let run = try runOriginToExit(args)
            #expect(run.status == 64, "\(args)")
            #expect(run.stderr.hasPrefix("hls-origin: \(message)"), "\(args): \(run.stderr)")
            #expect(run.stderr.contains("See 'hls-origin --help'."), "\(run.stderr)")
            // Short: a few lines, not the whole help.
            #expect(run.stderr.split(separator: "\n").count <= 6, "\(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
    }

    @Test func help_documentsBindVersionAndTheValueForms() throws {
        let help = try runOriginToExit(["--help"])
        #expect(help.status == 0)
        for text in ["--bind ADDR", "--version", "--opt=value", "500ms", "CORS"] {
            #expect(help.stdout.contains(text), "\(text)")
        }
    }

    @Test func valueForms_equalsAndUnits_configureTheSameLink() throws {
        let f = try Fixture()
        var shapings: [String] = []
        for forms in [["--rate", "100mbit", "--rtt", "0.05"], ["--rate=100m", "--rtt=50ms"], ["--rate=100000000", "--rtt", "50000us"]] {
            let log = f.root.appendingPathComponent("requests-\(shapings.count).jsonl")
            let (process, port) = try launchOrigin([f.root.path, "--log=\(log.path)"] + forms)
            defer { if process.isRunning { process.terminate() } }
            #expect(try RawClient(port: port).get("/v/index.m3u8").status == 200)
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
            shapings += try requestLog(log).compactMap { $0["shaping"] as? String }
        }
        #expect(shapings == Array(repeating: "rate=100000000bps rtt=0.05s", count: 3))
    }
}
