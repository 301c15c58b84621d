import Foundation
import Glibc
import Testing
@testable import HLSOrigin

@Suite(.timeLimit(.minutes(10)), .tags(.realTime))
struct LinkFaultTests {
    /// Link collapse at 0.6 s for 1 s on an 8 Mbit/s link: a running download receives nothing during it, a request
    /// made during it gets its first byte only after it, and the log says the link was collapsed.
    @Test func linkCollapseStopsTheSharedLink() throws {
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("collapse-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: logURL) }
        let body = [UInt8](repeating: 7, count: 2_000_000)
        let f = try Fixture(
            configuration: OriginConfiguration(
                requestLogURL: logURL, rateBitsPerSecond: 8_000_000,
                linkCollapses: [LinkCollapse(atSeconds: 0.6, durationSeconds: 1.0)]), extraFiles: ["v/big.ts": body])
        let c = try f.client(timeout: 5)
        c.request("GET", "/v/big.ts")
        var arrivals: [(Double, Int)] = []
        var buf = [UInt8](repeating: 0, count: 65536)
        var total = 0
        var probeFirstByte: Double?
        let probe = try f.client(timeout: 5)
        while total < body.count + 100 {
            if probeFirstByte == nil, f.server.now() >= 1.0, arrivals.count > 0 {
                probe.request("GET", "/v/index.m3u8")
                _ = try probe.readResponse()
                probeFirstByte = f.server.now()
            }
            let n = buf.withUnsafeMutableBytes { recv(c.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n > 0 { arrivals.append((f.server.now(), n)); total += n; continue }
            if n == 0 { break }
            usleep(1000)
        }
        let during = arrivals.filter { $0.0 >= 0.65 && $0.0 < 1.55 }.reduce(0) { $0 + $1.1 }
        let before = arrivals.filter { $0.0 < 0.6 }.reduce(0) { $0 + $1.1 }
        #expect(during <= 2 * TraceShaper.minimumChunkBytes, "\(during) B arrived during the collapse")
        #expect(abs(Double(before) / 600_000 - 1) < 0.1, "\(before) B before the collapse")
        let end = try #require(arrivals.last?.0)
        #expect(end > 2.9 && end < 3.3, "2 MB at 1 MB/s with 1 s of collapse ended at \(end) s")
        let probeAt = try #require(probeFirstByte)
        #expect(probeAt >= 1.6)
        f.server.stop()
        let entries = try String(contentsOf: logURL, encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(RequestLogEntry.self, from: Data($0.utf8))
        }
        let probeEntry = try #require(entries.first { $0.path == "/v/index.m3u8" })
        #expect(probeEntry.linkCollapsed == true)
        #expect(probeEntry.rateBitsPerSecond == 0)
        #expect(probeEntry.shaping.contains("collapsed"))
        #expect(try #require(probeEntry.firstByteSent) >= 1.6)
        let big = try #require(entries.first { $0.path == "/v/big.ts" })
        #expect(big.rateBitsPerSecond == 8_000_000 && big.linkCollapsed == nil && big.shaping == "rate=8000000bps")
    }

    @Test func traceLatencyIsTheFirstByteDelayAndTheLogShowsTheTracePosition() throws {
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("latency-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: logURL) }
        let trace = try ThroughputTrace.parse(
            #"[{"duration_ms": 400, "bandwidth_kbps": 50000, "latency_ms": 150}, {"duration_ms": 400, "bandwidth_kbps": 40000, "latency_ms": 20}]"#,
            name: "t.json")
        let f = try Fixture(configuration: OriginConfiguration(requestLogURL: logURL, trace: trace))
        let c = try f.client()
        let slow = try elapsed { _ = try c.get("/v/init.mp4") }
        f.sleep(untilServerTime: 0.45)
        let fast = try elapsed { _ = try c.get("/v/init.mp4") }
        // Lower bounds are the point; upper bounds only catch a hang (the machine is shared and noisy).
        #expect(slow >= 0.15 && slow < 2)
        #expect(fast >= 0.02 && fast < 2)
        f.server.stop()
        let entries = try String(contentsOf: logURL, encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(RequestLogEntry.self, from: Data($0.utf8))
        }
        #expect(entries.count == 2)
        #expect(entries[0].rttSeconds == 0.15 && entries[1].rttSeconds == 0.02)
        for e in entries { #expect((e.firstByteSent ?? 0) - e.accepted >= (e.rttSeconds ?? 1)) }
        #expect(entries[0].trace == "t.json" && entries[1].rateBitsPerSecond == 40_000_000)
        #expect(try #require(entries[1].tracePositionSeconds) >= 0.45)
        #expect(entries[1].shaping.hasPrefix("trace=t.json pos=0.4"))
        #expect(entries[1].shaping.hasSuffix("rate=40000000bps rtt=0.02s"))
    }

    @Test func scenarioFileCarriesRulesCollapsesAndStaleWindows() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("scenario-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(
            """
            {"faults": [{"pathPattern": "*.ts", "requestIndex": 2, "action": {"type": "blackHole"}}],
             "linkCollapses": [{"atSeconds": 20, "durationSeconds": 5}],
             "stalePlaylists": [{"atSeconds": 30, "durationSeconds": 10}]}
            """.utf8
        ).write(to: url)
        let s = try OriginServer.loadScenario(from: url)
        #expect(s.faults == [FaultRule(pathPattern: "*.ts", requestIndex: 2, action: .blackHole)])
        #expect(s.linkCollapses == [LinkCollapse(atSeconds: 20, durationSeconds: 5)])
        #expect(s.stalePlaylists == [StalePlaylist(atSeconds: 30, durationSeconds: 10)])
        var config = OriginConfiguration()
        s.apply(to: &config)
        #expect(config.live == nil) // stale windows need live mode
        config.live = LiveConfiguration()
        s.apply(to: &config)
        #expect(config.live?.stalePlaylists.count == 1)
        // The plain array form still loads.
        try Data(#"[{"pathPattern": "x", "action": {"type": "resetConnection"}}]"#.utf8).write(to: url)
        #expect(try OriginServer.loadScenario(from: url).faults.count == 1)
        try Data(#"{"faults": [{"pathPattern": "x", "action": {"type": "nope"}}]}"#.utf8).write(to: url)
        #expect(throws: (any Error).self) { try OriginServer.loadScenario(from: url) }
    }
}

extension Fixture {
    func sleep(untilServerTime t: Double) {
        let left = t - server.now()
        if left > 0 { usleep(useconds_t(left * 1e6)) }
    }
}
