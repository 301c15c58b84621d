import Foundation
import Glibc
import Testing
import TestSupport
@testable import HLSOrigin

/// Trace parsing and the capacity arithmetic: pure, no clock.
@Suite struct TraceTests {
    @Test func mahimahiOnePacketPerMillisecondIs12Mbit() throws {
        let t = try ThroughputTrace.parse("1\n", name: "one.down")
        #expect(t.loopDurationSeconds == 0.001)
        #expect(abs(t.meanBitsPerSecond - 12_000_000) < 1)
        // Looped: 1 s of it is 1000 packets.
        #expect(abs(t.capacityBytes(until: 1) - 1_500_000) < 1e-3)
    }

    @Test func mahimahiBinsOpportunitiesAndKeepsOutages() throws {
        // 20 packets in the first 10 ms, none until 30 ms, one at 30 ms (period 30 ms).
        let text = (Array(repeating: "5", count: 20) + ["30"]).joined(separator: "\n")
        let t = try ThroughputTrace.parse(text, name: "x", format: .mahimahi)
        #expect(t.loopDurationSeconds == 0.03)
        #expect(t.rateBitsPerSecond(at: 0.005) == 20 * 1500 * 8 / 0.01)
        #expect(t.rateBitsPerSecond(at: 0.015) == 0)
        #expect(t.rateBitsPerSecond(at: 0.025) == 1500 * 8 / 0.01)
        #expect(abs(t.loopBytes - 21 * 1500) < 1e-6)
        #expect(throws: TraceError.self) { try ThroughputTrace.parse("5\n3\n", name: "x", format: .mahimahi) }
        #expect(throws: TraceError.self) { try ThroughputTrace.parse("abc\n", name: "x", format: .mahimahi) }
    }

    @Test func pensieveHoldsEachRateUntilTheNextTimestamp() throws {
        let t = try ThroughputTrace.parse("0.0\t1.0\n2.0\t3.0\n2.5\t0.5\n", name: "cooked")
        #expect(t.pieces.map(\.durationSeconds) == [2.0, 0.5, 0.5]) // last held as long as the step before it
        #expect(t.pieces.map(\.rateBitsPerSecond) == [1e6, 3e6, 0.5e6])
        #expect(t.loopDurationSeconds == 3.0)
        #expect(abs(t.capacityBytes(until: 2.25) - (2 * 1e6 + 0.25 * 3e6) / 8) < 1e-6)
        // Looped: 3 s later the same again plus one loop.
        #expect(abs(t.capacityBytes(until: 5.25) - (t.loopBytes + (2 * 1e6 + 0.25 * 3e6) / 8)) < 1e-6)
        #expect(t.rateBitsPerSecond(at: 3.1) == 1e6)
        #expect(throws: TraceError.self) { try ThroughputTrace.parse("0 1\n2\n", name: "x", format: .pensieve) }
    }

    @Test func sabreCarriesRateAndLatency() throws {
        let json = #"[{"duration_ms": 1500, "bandwidth_kbps": 2000, "latency_ms": 75}, {"duration_ms": 500, "bandwidth_kbps": 0, "latency_ms": 150}]"#
        let t = try ThroughputTrace.parse(json, name: "net.json")
        #expect(t.pieces.count == 2)
        #expect(t.piece(at: 1.0) == .init(durationSeconds: 1.5, rateBitsPerSecond: 2e6, latencySeconds: 0.075))
        #expect(t.piece(at: 1.7).latencySeconds == 0.15)
        #expect(t.rateBitsPerSecond(at: 1.7) == 0)
        // The outage: capacity reached at the end of piece 0 is next available only after the loop wraps.
        #expect(try #require(t.time(whenCapacityReaches: t.loopBytes + 1)) > 2.0)
        #expect(throws: TraceError.self) { try ThroughputTrace.parse("[{\"x\": 1}]", name: "bad.json") }
    }

    @Test func formatDetection() {
        #expect(ThroughputTrace.detectFormat(fileName: "a.json", text: "") == .sabre)
        #expect(ThroughputTrace.detectFormat(fileName: "ATT.down", text: "") == .mahimahi)
        #expect(ThroughputTrace.detectFormat(fileName: "trace_1", text: "0\n0\n3\n") == .mahimahi)
        #expect(ThroughputTrace.detectFormat(fileName: "norway", text: "0.0\t4.6\n0.5\t4.4\n") == .pensieve)
        #expect(ThroughputTrace.detectFormat(fileName: "x", text: "  [ {\"duration_ms\": 1}]") == .sabre)
        #expect(ThroughputTrace.detectFormat(fileName: "x", text: "hello world") == nil)
    }

    @Test func timeIsTheInverseOfCapacity() throws {
        let t = try ThroughputTrace.parse("0 1\n1 0\n2 4\n3 2\n", name: "p", format: .pensieve)
        for x in stride(from: 0.05, to: 9.0, by: 0.173) {
            let bytes = t.capacityBytes(until: x)
            let back = try #require(t.time(whenCapacityReaches: bytes))
            // Inside a zero-rate piece the inverse is the start of the outage.
            #expect(abs(t.capacityBytes(until: back) - bytes) < 1e-6)
            #expect(back <= x + 1e-9)
        }
        let zero = try ThroughputTrace.parse("0 0\n1 0\n", name: "z", format: .pensieve)
        #expect(zero.time(whenCapacityReaches: 1) == nil)
    }

    @Test func collapsesCutCapacityOutOfTheSchedule() throws {
        let s = LinkSchedule(
            trace: .constant(bitsPerSecond: 8_000_000),
            collapses: [
                LinkCollapse(atSeconds: 1, durationSeconds: 2),
                LinkCollapse(atSeconds: 2.5, durationSeconds: 1)
            ]) // merged to 1..3.5
        #expect(s.collapses == [LinkCollapse(atSeconds: 1, durationSeconds: 2.5)])
        #expect(s.capacityBytes(until: 1) == 1_000_000)
        #expect(s.capacityBytes(until: 3) == 1_000_000)
        #expect(abs(s.capacityBytes(until: 4) - 1_500_000) < 1e-6)
        #expect(s.rateBitsPerSecond(at: 2) == 0)
        #expect(s.rateBitsPerSecond(at: 3.6) == 8_000_000)
        // The byte after the first megabyte can only go once the collapse ends.
        #expect(abs(try #require(s.time(whenCapacityReaches: 1_000_001)) - 3.5) < 1e-5)
        #expect(abs(try #require(s.time(whenCapacityReaches: 500_000)) - 0.5) < 1e-9)
    }

    /// A response's later chunks keep their place on the link when the sending thread is late (up to
    /// `maximumCatchUpSeconds`); a new response after the same gap does not get the idle capacity back.
    @Test func lateContinuingChunksCatchUpButOnlySoFar() {
        let rate = 8_000_000.0 // 1 MB/s
        func run(gapSeconds: Double, bytes: Int, continuing: Bool) -> Double {
            let shaper = TraceShaper(trace: .constant(bitsPerSecond: rate))
            shaper.serverStarted(monotonicOrigin: monotonicNow())
            _ = shaper.admit(bytes: 10_000, connectionID: 1, continuing: false) // done at 0.01 s
            usleep(useconds_t(gapSeconds * 1e6))
            return shaper.admit(bytes: bytes, connectionID: 1, continuing: continuing)
        }
        // 80 kB after 0.1 s: continuing → done at 0.09 s, send now; a new response → floor at t − 2 ms
        // (newResponseSlackSeconds), waits ≈ 78 ms.
        #expect(run(gapSeconds: 0.1, bytes: 80_000, continuing: true) < 0.03)
        let fresh = run(gapSeconds: 0.1, bytes: 80_000, continuing: false)
        #expect(fresh > 0.065 && fresh < 0.085)
        // 400 kB after 0.5 s: catch-up is capped at 0.25 s, so it still waits ≈ 0.4 − 0.25 = 0.15 s.
        let capped = run(gapSeconds: 0.5, bytes: 400_000, continuing: true)
        #expect(capped > 0.12 && capped < 0.18)
    }

    /// Every real trace shipped in shared/data/traces parses, with a plausible mean rate.
    @Test func realTracesParse() throws {
        let dir = try TraceFiles.directory()
        var count = 0
        let files = FileManager.default.enumerator(at: dir, includingPropertiesForKeys: nil)!
        for case let url as URL in files {
            let name = url.lastPathComponent
            guard !url.hasDirectoryPath, name != "README.md", !name.hasPrefix("bbb"), !(name == "movie.json") else { continue }
            let t = try ThroughputTrace.load(contentsOf: url)
            #expect(t.meanBitsPerSecond > 10_000 && t.meanBitsPerSecond < 200e6, "\(name): \(t.meanBitsPerSecond)")
            count += 1
        }
        #expect(count >= 50)
    }
}

enum TraceFiles {
    /// `$HLSPLAY_TRACES`, else `../shared/data/traces` next to the package.
    static func directory() throws -> URL {
        let candidates = [
            ProcessInfo.processInfo.environment["HLSPLAY_TRACES"],
            Repo.sharedData.appendingPathComponent("traces").path,
            "/work/shared/data/traces"
        ].compactMap { $0 }
        for c in candidates where FileManager.default.fileExists(atPath: c + "/README.md") {
            return URL(fileURLWithPath: c)
        }
        throw TraceError("trace folder not found (set HLSPLAY_TRACES); looked in \(candidates)")
    }

    static func load(_ relative: String) throws -> ThroughputTrace {
        try ThroughputTrace.load(contentsOf: directory().appendingPathComponent(relative))
    }
}
