import Foundation
import Glibc
import Testing
@testable import HLSOrigin

/// The link as a client sees it: bytes received in 1 s windows (on the server's clock) against the schedule's
/// integral over the same window. Serialized: each test owns the machine's timing for a few seconds.
@Suite(.serialized, .timeLimit(.minutes(10)), .tags(.realTime))
struct ShapingAccuracyTests {
    /// Seconds of each download.
    static let runSeconds = 4.0
    /// Windows start every `windowStepSeconds` from `firstWindowSeconds` (skips connection set-up) and last 1 s.
    static let firstWindowSeconds = 0.5
    static let windowStepSeconds = 0.5
    static let tolerance = 0.10

    struct Window {
        var start: Double; var expectedBytes: Double; var receivedBytes: Double
        var error: Double { receivedBytes / expectedBytes - 1 }
    }

    /// Starts a server at the trace origin, downloads continuously for `runSeconds`, and returns the windows.
    static func measure(_ configuration: OriginConfiguration, schedule: LinkSchedule) throws -> [Window] {
        let fileBytes = Int(schedule.capacityBytes(until: runSeconds + 1) * 1.2) + 100_000
        let body = [UInt8](repeating: 0x47, count: fileBytes)
        let f = try Fixture(configuration: configuration, extraFiles: ["v/big.ts": body])
        let c = try f.client(timeout: 5)
        c.request("GET", "/v/big.ts")
        var arrivals: [(Double, Int)] = []
        var buf = [UInt8](repeating: 0, count: 256 * 1024)
        while f.server.now() < runSeconds {
            let n = buf.withUnsafeMutableBytes { recv(c.fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw RawClient.ClientError(description: "download ended early: \(n)") }
            arrivals.append((f.server.now(), n))
        }
        var windows: [Window] = []
        var start = firstWindowSeconds
        while start + 1 <= runSeconds {
            let expected = schedule.capacityBytes(until: start + 1) - schedule.capacityBytes(until: start)
            let received = arrivals.filter { $0.0 >= start && $0.0 < start + 1 }.reduce(0) { $0 + $1.1 }
            windows.append(Window(start: start, expectedBytes: expected, receivedBytes: Double(received)))
            start += windowStepSeconds
        }
        return windows
    }

    static func check(_ name: String, _ windows: [Window]) {
        let worst = windows.map { abs($0.error) }.max() ?? 0
        print(
            "shaping accuracy \(name): worst 1 s window error \(String(format: "%.1f", worst * 100))% over "
                + "\(windows.count) windows; "
                + windows.map {
                    String(format: "[%.1f s: %.0f/%.0f kB]", $0.start, $0.receivedBytes / 1000, $0.expectedBytes / 1000)
                }.joined(separator: " "))
        #expect(windows.count >= 6)
        for w in windows {
            #expect(
                abs(w.error) <= tolerance,
                "\(name) window at \(w.start) s: received \(Int(w.receivedBytes)) B, link allowed \(Int(w.expectedBytes)) B")
        }
    }

    @Test func constantRate() throws {
        let rate = 6_000_000.0
        let windows = try Self.measure(
            OriginConfiguration(rateBitsPerSecond: rate),
            schedule: LinkSchedule(trace: .constant(bitsPerSecond: rate)))
        Self.check("constant 6 Mbit/s", windows)
    }

    @Test func constantRateThroughTheTraceShaper() throws {
        let trace = ThroughputTrace.constant(bitsPerSecond: 3_000_000)
        let windows = try Self.measure(OriginConfiguration(trace: trace), schedule: LinkSchedule(trace: trace))
        Self.check("constant 3 Mbit/s (trace shaper)", windows)
    }

    /// Pensieve cooked, Norway HSDPA bus: 4.4–5.4 Mbit/s, samples every 0.3–0.6 s.
    @Test func pensieveTrace() throws {
        let trace = try TraceFiles.load("pensieve/hsdpa_norway/norway_bus_15")
        Self.check("pensieve norway_bus_15", try Self.measure(OriginConfiguration(trace: trace), schedule: LinkSchedule(trace: trace)))
    }

    /// Sabre JSON, Belgian 4G bus: 31–36 Mbit/s in ~1 s steps (and a 20 ms latency applied to the first byte).
    @Test func sabreTrace() throws {
        let trace = try TraceFiles.load("sabre/4G_lte_belgium/report_bus_0001.json")
        Self.check("sabre report_bus_0001", try Self.measure(OriginConfiguration(trace: trace), schedule: LinkSchedule(trace: trace)))
    }

    /// Mahimahi, Verizon LTE: falls from 12 to 6 Mbit/s over the first 5 s, packet by packet.
    @Test func mahimahiTrace() throws {
        let trace = try TraceFiles.load("mahimahi/Verizon-LTE-short.down")
        Self.check("mahimahi Verizon-LTE-short", try Self.measure(OriginConfiguration(trace: trace), schedule: LinkSchedule(trace: trace)))
    }

    /// Two connections share the one bottleneck: together they get the link rate, not twice it.
    @Test func connectionsShareTheLink() throws {
        let rate = 4_000_000.0
        let body = [UInt8](repeating: 1, count: 3_000_000)
        let f = try Fixture(configuration: OriginConfiguration(trace: .constant(bitsPerSecond: rate)), extraFiles: ["v/big.ts": body])
        let a = try f.client(timeout: 5), b = try f.client(timeout: 5)
        a.request("GET", "/v/big.ts")
        b.request("GET", "/v/big.ts")
        let start = f.server.now()
        var total = 0
        var buf = [UInt8](repeating: 0, count: 65536)
        var perClient = [0, 0]
        while f.server.now() < start + 2 {
            for (i, c) in [a, b].enumerated() {
                let n = buf.withUnsafeMutableBytes { recv(c.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if n > 0 { total += n; perClient[i] += n }
            }
            usleep(2000)
        }
        let expected = rate / 8 * (f.server.now() - start)
        #expect(abs(Double(total) / expected - 1) < 0.1, "two connections got \(total) B, link allowed \(Int(expected)) B")
        #expect(perClient.allSatisfy { $0 > total / 5 }, "one connection starved: \(perClient)")
    }
}
