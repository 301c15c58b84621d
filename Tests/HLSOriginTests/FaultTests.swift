import Foundation
import Glibc
import Testing
@testable import HLSOrigin

extension OriginTests {
    static func faulted(_ rules: [FaultRule], log: URL? = nil) throws -> Fixture {
        try Fixture(configuration: OriginConfiguration(requestLogURL: log, faults: rules))
    }

    @Test func statusFaultWithRetryAfter() throws {
        let f = try Self.faulted([FaultRule(pathPattern: "*.m3u8", action: .status(code: 503, retryAfterSeconds: 7))])
        let c = try f.client()
        let r = try c.get("/v/index.m3u8")
        #expect(r.status == 503)
        #expect(r.headers["retry-after"] == "7")
        // Other paths are unaffected, and the connection stays usable.
        #expect(try c.get("/v/seg1.m4s").status == 200)
        #expect(try c.get("/v/index.m3u8").status == 503)
    }

    @Test func blackHoleNeverAnswers() throws {
        let f = try Self.faulted([FaultRule(pathPattern: "seg0", action: .blackHole)])
        let c = try f.client(timeout: 1.0)
        c.request("GET", "/v/seg0.ts")
        let t = elapsed {
            let r = c.readToEnd()
            #expect(r.bytes.isEmpty)
            #expect(r.end == .timeout)
        }
        #expect(t >= 0.95)
        #expect(f.server.requestCount == 1)
        // Stopping the server ends the black-holed connection promptly.
        #expect(elapsed { f.server.stop() } < 1.0)
    }

    @Test func stallAfterBytesForeverSendsExactlyNBytes() throws {
        let f = try Self.faulted([FaultRule(pathPattern: "/v/seg0.ts", action: .stallAfterBytes(bytes: 1234, seconds: nil))])
        let c = try f.client(timeout: 0.6)
        c.request("GET", "/v/seg0.ts")
        let head = try c.readHead()
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == "100000")
        let r = c.readToEnd()
        #expect(r.bytes == Array(Fixture.segment[0..<1234]))
        #expect(r.end == .timeout)
    }

    @Test func stallAfterBytesForSecondsThenCompletes() throws {
        let f = try Self.faulted([FaultRule(pathPattern: "seg0.ts", action: .stallAfterBytes(bytes: 500, seconds: 0.4))])
        let c = try f.client(timeout: 3)
        c.request("GET", "/v/seg0.ts")
        var body: [UInt8] = []
        let t = try elapsed {
            _ = try c.readHead()
            body = try c.readBody(100_000)
        }
        #expect(body == Fixture.segment)
        #expect(t >= 0.38)
        #expect(t < 2.0)
    }

    @Test func truncateSendsFewerBytesThanContentLengthThenCloses() throws {
        let f = try Self.faulted([FaultRule(pathPattern: "seg0", action: .truncateAfterBytes(bytes: 4000))])
        let c = try f.client()
        c.request("GET", "/v/seg0.ts")
        let head = try c.readHead()
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == "100000")
        let r = c.readToEnd()
        #expect(r.end == .eof)
        #expect(r.bytes == Array(Fixture.segment[0..<4000]))
    }

    @Test func resetConnectionSendsRST() throws {
        let f = try Self.faulted([FaultRule(pathPattern: "seg0", action: .resetConnection)])
        let c = try f.client()
        c.request("GET", "/v/seg0.ts")
        let r = c.readToEnd()
        #expect(r.bytes.isEmpty)
        #expect(r.end == .reset)
    }

    @Test func slowFirstByteDelaysResponse() throws {
        let f = try Self.faulted([FaultRule(pathPattern: "*.m3u8", action: .slowFirstByte(seconds: 0.5))])
        let c = try f.client()
        var r: RawClient.Response?
        let slow = try elapsed { r = try c.get("/v/index.m3u8") }
        #expect(r?.status == 200)
        #expect(r?.bodyString == Fixture.playlist)
        #expect(slow >= 0.48)
        #expect(slow < 1.5)
        let fast = try elapsed { _ = try c.get("/v/seg1.m4s") }
        #expect(fast < 0.3)
    }

    @Test func trickleSendsTheBodyPieceByPiece_oneEveryPeriod() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("trickle-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: log) }
        let f = try Self.faulted([FaultRule(pathPattern: "seg0.ts", action: .trickle(bytes: 25_000, everySeconds: 0.2))], log: log)
        let c = try f.client(timeout: 3)
        c.request("GET", "/v/seg0.ts")
        let started = monotonicNow()
        let head = try c.readHead()
        #expect(head.status == 200)
        #expect(head.headers["content-length"] == "100000", "the whole length is announced")
        // Four pieces of 25 000 bytes: the first at once, then one per 0.2 s.
        var body: [UInt8] = []
        var arrivals: [Double] = []
        for _ in 0..<4 {
            body += try c.readBody(25_000)
            arrivals.append(monotonicNow() - started)
        }
        #expect(body == Fixture.segment)
        #expect(arrivals[0] < 0.15, "the first piece comes with the headers: \(arrivals)")
        for (a, b) in zip(arrivals, arrivals.dropFirst()) {
            #expect(b - a >= 0.15 && b - a < 0.6, "one piece per period: \(arrivals)")
        }
        // The connection stays usable, and other paths are not trickled.
        var playlist: RawClient.Response?
        let fast = try elapsed { playlist = try c.get("/v/index.m3u8") }
        #expect(playlist?.bodyString == Fixture.playlist)
        #expect(fast < 0.3)
        f.server.stop()
        let entry = try #require(
            try String(contentsOf: log, encoding: .utf8).split(separator: "\n")
                .map { try JSONDecoder().decode(RequestLogEntry.self, from: Data($0.utf8)) }.first { $0.path == "/v/seg0.ts" })
        #expect(entry.fault == "trickle(25000B/0.2s)")
        #expect(entry.bodyBytesSent == 100_000)
    }

    @Test func trickleStopsWhenTheClientGoesAway() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("trickle-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: log) }
        // 188 bytes every 0.1 s would take 53 s for the 100 kB file.
        let f = try Self.faulted([FaultRule(pathPattern: "seg0.ts", action: .trickle(bytes: 188, everySeconds: 0.1))], log: log)
        do {
            let c = try f.client(timeout: 3)
            c.request("GET", "/v/seg0.ts")
            _ = try c.readHead()
            _ = try c.readBody(188 * 3)
        } // the client closes here
        // The server notices within a period or two and logs the response as cut short.
        var entry: RequestLogEntry?
        let deadline = monotonicNow() + 3
        while entry == nil && monotonicNow() < deadline {
            usleep(50_000)
            entry =
                (try? String(contentsOf: log, encoding: .utf8))?.split(separator: "\n")
                .compactMap { try? JSONDecoder().decode(RequestLogEntry.self, from: Data($0.utf8)) }.first
        }
        let e = try #require(entry, "the trickled response ended when the client left")
        #expect(e.bodyBytesSent >= 188 * 3 && e.bodyBytesSent < 188 * 30, "sent \(e.bodyBytesSent)")
    }

    @Test func rttDelaysEveryResponse() throws {
        let f = try Fixture(configuration: OriginConfiguration(rttSeconds: 0.2))
        let c = try f.client()
        let t = try elapsed { _ = try c.get("/v/seg1.m4s") }
        #expect(t >= 0.19)
        #expect(t < 1.0)
    }

    @Test func requestIndexSelectsOnlyTheNthMatchingRequest() throws {
        let f = try Self.faulted([FaultRule(pathPattern: "*.ts", requestIndex: 1, action: .status(code: 500, retryAfterSeconds: nil))])
        // Matching requests counted across connections; non-matching paths do not count.
        let a = try f.client()
        let b = try f.client()
        #expect(try a.get("/v/seg0.ts").status == 200) // match #0
        #expect(try a.get("/v/index.m3u8").status == 200) // not a match
        let second = try b.get("/v/seg0.ts") // match #1
        #expect(second.status == 500)
        #expect(second.headers["retry-after"] == nil)
        #expect(try a.get("/v/seg0.ts").status == 200) // match #2
    }

    @Test func afterSecondsGatesByServerTime() throws {
        let f = try Self.faulted([FaultRule(pathPattern: "seg1", afterSeconds: 0.4, action: .status(code: 404, retryAfterSeconds: nil))])
        let c = try f.client()
        #expect(try c.get("/v/seg1.m4s").status == 200)
        usleep(450_000)
        #expect(try c.get("/v/seg1.m4s").status == 404)
    }

    @Test func globAndSubstringMatching() {
        let glob = FaultRule(pathPattern: "/v/*.ts", action: .blackHole)
        #expect(glob.matches(path: "/v/seg0.ts"))
        #expect(glob.matches(path: "/v/a/b.ts")) // * crosses '/'
        #expect(!glob.matches(path: "/w/seg0.ts"))
        #expect(!glob.matches(path: "/v/seg0.ts.bak"))
        let sub = FaultRule(pathPattern: "seg", action: .blackHole)
        #expect(sub.matches(path: "/v/seg0.ts"))
        #expect(!sub.matches(path: "/v/index.m3u8"))
    }

    @Test func loadFaultsFromJSON() throws {
        let json = """
            [
              {"pathPattern": "*.m3u8", "requestIndex": 1, "action": {"type": "status", "code": 503, "retryAfterSeconds": 2}},
              {"pathPattern": "/v1/seg3.ts", "action": {"type": "truncateAfterBytes", "bytes": 1000}},
              {"pathPattern": "seg", "afterSeconds": 10, "action": {"type": "stallAfterBytes", "bytes": 0, "seconds": 5}},
              {"pathPattern": "a", "action": {"type": "stallAfterBytes", "bytes": 10}},
              {"pathPattern": "b", "action": {"type": "blackHole"}},
              {"pathPattern": "c", "action": {"type": "resetConnection"}},
              {"pathPattern": "d", "action": {"type": "slowFirstByte", "seconds": 1.5}},
              {"pathPattern": "e", "action": {"type": "status", "code": 404}},
              {"pathPattern": "f", "action": {"type": "trickle", "bytes": 188, "everySeconds": 0.5}}
            ]
            """
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("faults-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(json.utf8).write(to: url)
        let rules = try OriginServer.loadFaults(from: url)
        #expect(
            rules == [
                FaultRule(pathPattern: "*.m3u8", requestIndex: 1, action: .status(code: 503, retryAfterSeconds: 2)),
                FaultRule(pathPattern: "/v1/seg3.ts", action: .truncateAfterBytes(bytes: 1000)),
                FaultRule(pathPattern: "seg", afterSeconds: 10, action: .stallAfterBytes(bytes: 0, seconds: 5)),
                FaultRule(pathPattern: "a", action: .stallAfterBytes(bytes: 10, seconds: nil)),
                FaultRule(pathPattern: "b", action: .blackHole),
                FaultRule(pathPattern: "c", action: .resetConnection),
                FaultRule(pathPattern: "d", action: .slowFirstByte(seconds: 1.5)),
                FaultRule(pathPattern: "e", action: .status(code: 404, retryAfterSeconds: nil)),
                FaultRule(pathPattern: "f", action: .trickle(bytes: 188, everySeconds: 0.5))
            ])
        // Wrapped form, and encode/decode round trip.
        try Data(#"{"faults": [{"pathPattern": "x", "action": {"type": "blackHole"}}]}"#.utf8).write(to: url)
        #expect(try OriginServer.loadFaults(from: url) == [FaultRule(pathPattern: "x", action: .blackHole)])
        let encoded = try JSONEncoder().encode(rules)
        #expect(try JSONDecoder().decode([FaultRule].self, from: encoded) == rules)
        // Unknown type is an error.
        try Data(#"[{"pathPattern": "x", "action": {"type": "explode"}}]"#.utf8).write(to: url)
        #expect(throws: (any Error).self) { try OriginServer.loadFaults(from: url) }
        // A trickle needs a piece size and a period above 0.
        try Data(#"[{"pathPattern": "x", "action": {"type": "trickle", "bytes": 0, "everySeconds": 0.5}}]"#.utf8).write(to: url)
        #expect(throws: (any Error).self) { try OriginServer.loadFaults(from: url) }
    }
}

/// Records what the decision point sees; faults the second request on any connection.
final class RecordingPolicy: FaultPolicy, @unchecked Sendable {
    private let lock = NSLock()
    private(set) var seen: [RequestContext] = []
    func fault(for request: RequestContext) -> FaultAction? {
        lock.lock(); seen.append(request); lock.unlock()
        return request.requestIndexOnConnection == 1 ? .status(code: 429, retryAfterSeconds: 3) : nil
    }
}

extension OriginTests {
    @Test func customFaultPolicyIsConsultedOncePerRequest() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("origin-policy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        try Data("x".utf8).write(to: root.appendingPathComponent("a.ts"))
        let policy = RecordingPolicy()
        let server = OriginServer(root: root, configuration: .init(), faultPolicy: policy, shaper: nil)
        let port = try server.start()
        defer { server.stop() }
        let c = try RawClient(port: port)
        #expect(try c.get("/a.ts").status == 200)
        let r = try c.get("/a.ts")
        #expect(r.status == 429)
        #expect(r.headers["retry-after"] == "3")
        #expect(policy.seen.map(\.requestIndexOnConnection) == [0, 1])
        #expect(policy.seen.allSatisfy { $0.path == "/a.ts" && $0.method == "GET" })
    }
}
