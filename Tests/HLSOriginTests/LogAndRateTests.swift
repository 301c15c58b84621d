import Foundation
import Glibc
import Testing
@testable import HLSOrigin

extension OriginTests {
    @Test func requestLogIsJSONLinesWithOneEntryPerRequest() throws {
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("origin-log-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: logURL) }
        let f = try Fixture(
            configuration: OriginConfiguration(
                requestLogURL: logURL,
                faults: [FaultRule(pathPattern: "seg1", action: .status(code: 503, retryAfterSeconds: 1))],
                rttSeconds: 0.01))
        let c = try f.client()
        _ = try c.get("/v/index.m3u8")
        _ = try c.get("/v/seg0.ts", headers: ["Range: bytes=0-99"])
        _ = try c.get("/v/seg1.m4s")
        _ = try c.get("/v/missing.ts")
        let d = try f.client()
        d.request("HEAD", "/v/seg0.ts")
        _ = try d.readResponse(head: true)
        f.server.stop()

        let text = try String(contentsOf: logURL, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.last == "") // newline-terminated
        let entries = try lines.dropLast().map { line in
            // Valid JSON object per line, decodable as an entry.
            _ = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
            return try JSONDecoder().decode(RequestLogEntry.self, from: Data(line.utf8))
        }
        #expect(entries.count == 5)
        #expect(entries.count == f.server.requestCount)
        for e in entries {
            let first = try #require(e.firstByteSent)
            let last = try #require(e.lastByteSent)
            #expect(e.accepted <= first)
            #expect(first <= last)
            #expect(first - e.accepted >= 0.009) // RTT
            #expect(e.shaping == "rtt=0.01s")
        }
        let byPath = Dictionary(entries.map { ($0.path, $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byPath["/v/index.m3u8"]?.status == 200)
        #expect(byPath["/v/index.m3u8"]?.requestIndex == 0)
        #expect(byPath["/v/seg0.ts"]?.range == "bytes=0-99")
        #expect(entries[1].status == 206 && entries[1].bodyBytesSent == 100)
        #expect(byPath["/v/seg1.m4s"]?.status == 503)
        #expect(byPath["/v/seg1.m4s"]?.fault == "status(503,retryAfter=1)")
        #expect(byPath["/v/seg1.m4s"]?.requestIndex == 2)
        #expect(byPath["/v/missing.ts"]?.status == 404)
        #expect(entries[4].method == "HEAD" && entries[4].bodyBytesSent == 0)
        #expect(entries[0].connectionID == entries[3].connectionID)
        #expect(entries[4].connectionID != entries[0].connectionID)
        // Sequential requests: accepted times in order.
        #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.accepted <= $1.accepted })
        #expect(entries[0].bytesSent > entries[0].bodyBytesSent)
    }

    /// The only throughput-timing test: 1 MB at 8 Mbit/s ≈ 1 s.
    @Test func constantRatePacing() throws {
        let big = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0) }
        let f = try Fixture(configuration: OriginConfiguration(rateBitsPerSecond: 8_000_000), extraFiles: ["v/big.ts": big])
        let c = try f.client(timeout: 5)
        var body: [UInt8] = []
        let t = try elapsed {
            c.request("GET", "/v/big.ts")
            _ = try c.readHead()
            body = try c.readBody(1_000_000)
        }
        #expect(body.count == 1_000_000)
        #expect(t > 0.85 && t < 1.15, "took \(t) s")
    }

    @Test func tokenBucketSharesTheRate() {
        let bucket = TokenBucketShaper(bitsPerSecond: 800_000) // 100 kB/s
        #expect(bucket.preferredChunkSize == 1024)
        var wait = 0.0
        for i in 0..<10 { wait = bucket.admit(bytes: 10_000, connectionID: i % 2) }
        // 100 kB requested at once (minus the ~1 KB burst) → the last reservation waits ≈ 1 s.
        #expect(wait > 0.9 && wait < 1.05)
    }
}
