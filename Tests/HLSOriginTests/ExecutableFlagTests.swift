import Foundation
import Glibc
import Testing
import TestSupport
@testable import HLSOrigin

extension OriginTests {
    @Test func executableTraceLiveAndFaultFlags() throws {
        let f = try Fixture()
        let trace = f.root.appendingPathComponent("net.trace")
        try Data(#"[{"duration_ms": 60000, "bandwidth_kbps": 20000, "latency_ms": 30}]"#.utf8).write(to: trace)
        let log = f.root.appendingPathComponent("requests.jsonl")
        let (process, port) = try launchOrigin([
            f.root.path, "--trace", trace.path, "--trace-format", "sabre",
            "--live", "--window", "2", "--fault-404", "notes.bin", "--fault-503", "audio.aac",
            "--black-hole", "key.key", "--collapse", "50:1", "--log", log.path,
            "--trickle", "seg1.m4s"
        ])
        defer { if process.isRunning { process.terminate() } }
        let c = try RawClient(port: port)
        #expect(try c.get("/v/notes.bin").status == 404)
        let unavailable = try c.get("/v/audio.aac")
        #expect(unavailable.status == 503 && unavailable.headers["retry-after"] == "1")
        let playlist = try c.get("/v/index.m3u8")
        #expect(playlist.status == 200)
        #expect(tagValue(playlist.bodyString, "#EXT-X-MEDIA-SEQUENCE") == 0)
        #expect(liveURIs(playlist.bodyString) == ["seg0.ts?live=0", "seg0.ts?live=1"])
        #expect(try c.get("/v/seg0.ts?live=1").body == Fixture.segment)
        // --trickle: 188 bytes every 0.5 s (the 3-byte file is one piece).
        let trickled = try c.get("/v/seg1.m4s")
        #expect(trickled.body == [5, 6, 7])
        let hole = try RawClient(port: port, timeout: 0.5)
        hole.request("GET", "/v/key.key")
        #expect(hole.readToEnd().end == .timeout)
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let entries = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(RequestLogEntry.self, from: Data($0.utf8))
        }
        #expect(entries.count == 6)
        #expect(entries.filter { $0.path == "/v/seg0.ts" }.map(\.query) == ["live=1"])
        #expect(entries.filter { $0.path == "/v/notes.bin" }.map(\.query) == [nil])
        #expect(entries.allSatisfy { $0.trace == "net.trace" && $0.rttSeconds == 0.03 && $0.rateBitsPerSecond == 20_000_000 })
        // Entries are written when a response ends, so order them by acceptance.
        #expect(
            entries.sorted { $0.accepted < $1.accepted }.map(\.fault) == [
                "status(404)", "status(503,retryAfter=1)", nil, nil, "trickle(188B/0.5s)", "blackHole"
            ])
    }

    @Test func executableRejectsBadTraceAndWindows() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsorigin-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let junk = dir.appendingPathComponent("junk.txt")
        try Data("hello world\n".utf8).write(to: junk)
        let trace = try runOriginToExit([dir.path, "--trace", junk.path])
        #expect(trace.status == 66)
        #expect(trace.stderr.contains("junk.txt"))
        let collapse = try runOriginToExit([dir.path, "--collapse", "soon"])
        #expect(collapse.status == 64 && collapse.stderr.contains("soon"))
        let stale = try runOriginToExit([dir.path, "--stale-playlist", "5:2"])
        #expect(stale.status == 64 && stale.stderr.contains("--live"))
        let format = try runOriginToExit([dir.path, "--trace-format", "csv"])
        #expect(format.status == 64 && format.stderr.contains("csv"))
    }
}
