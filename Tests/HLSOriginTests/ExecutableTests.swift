import Foundation
import Glibc
import Testing
import TestSupport
@testable import HLSOrigin

extension OriginTests {
    @Test func executableServesAndExitsZeroOnSIGTERM() throws {
        let f = try Fixture() // reuse its folder; its own server is not used
        let process = Process()
        process.executableURL = try requireOriginBinary()
        let faults = f.root.appendingPathComponent("faults.json")
        try Data(#"[{"pathPattern": "*.m3u8", "action": {"type": "status", "code": 503, "retryAfterSeconds": 2}}]"#.utf8)
            .write(to: faults)
        let log = f.root.appendingPathComponent("requests.jsonl")
        process.arguments = [
            f.root.path, "--port", "0", "--rate", "100mbit", "--rtt", "1ms",
            "--faults", faults.path, "--log", log.path
        ]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        let first = readFirstLine(out.fileHandleForReading)
        #expect(first.hasPrefix("listening on http://127.0.0.1:"))
        #expect(first.hasSuffix("/"))
        let portText = first.dropFirst("listening on http://127.0.0.1:".count).dropLast()
        let port = try #require(UInt16(portText))
        #expect(port != 0)

        let c = try RawClient(port: port)
        let r = try c.get("/v/seg0.ts")
        #expect(r.status == 200)
        #expect(r.body == Fixture.segment)

        let faulted = try c.get("/v/index.m3u8")
        #expect(faulted.status == 503)
        #expect(faulted.headers["retry-after"] == "2")

        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)

        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        let entries = try lines.map { try JSONDecoder().decode(RequestLogEntry.self, from: Data($0.utf8)) }
        #expect(entries.map(\.status) == [200, 503])
        #expect(entries.allSatisfy { $0.shaping == "rate=100000000bps rtt=0.001s" })
    }

    @Test func executableUsageErrorsExit64NamingTheBadWord() throws {
        let dir = FileManager.default.temporaryDirectory.path
        let bad = try runOriginToExit([dir, "--bogus"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--bogus"))
        let rate = try runOriginToExit([dir, "--rate", "fast"])
        #expect(rate.status == 64)
        #expect(rate.stderr.contains("fast"))
        let rtt = try runOriginToExit([dir, "--rtt", "5parsecs"])
        #expect(rtt.status == 64)
        #expect(rtt.stderr.contains("5parsecs"))
        let connections = try runOriginToExit([dir, "--max-connections", "0"])
        #expect(connections.status == 64)
        #expect(connections.stderr.contains("--max-connections: '0' is not a connection count"))
        let missing = try runOriginToExit([])
        #expect(missing.status == 64)
        let help = try runOriginToExit(["--help"])
        #expect(help.status == 0)
        #expect(help.stdout.contains("usage: hls-origin ROOT"))
        #expect(help.stdout.contains("--max-connections N"))
    }
}
