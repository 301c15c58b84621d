import Foundation
import HLSCore
import HLSOrigin
import Testing
import TestSupport

@testable import HLSPlayer

/// Every trace of ../shared/data/traces that loads, with every `--abr` rule, through both shells (ShellParityTests'
/// harness): every pair must agree exactly (decisions and instants). Minutes of CPU, so tagged `.long`: the full run
/// (CI) plays it, `Tools/test.sh --fast` does not; alone:
/// `swift test --skip-build --disable-xctest --filter ShellParitySweepTests`; `PARITY_SWEEP_CHUNK`
/// sets the scripted loader's progress chunk, bytes (default: ShellParityTests.trickleChunkBytes, 128: all 448 pairs
/// agree; at 1024, ShellParityTests.progressChunkBytes, the 16 pairs of the two traces that fall to a few kbit/s
/// differ — the real shell's coarse progress, not the rules).
@Suite(.serialized, .tags(.long)) struct ShellParitySweepTests {
    @Test func everyTraceEveryRule_agreementCounted() throws {
        let chunk = ProcessInfo.processInfo.environment["PARITY_SWEEP_CHUNK"].flatMap(Int.init) ?? ShellParityTests.trickleChunkBytes
        let root = Repo.sharedData.appendingPathComponent("traces")
        let files = (FileManager.default.enumerator(atPath: root.path)?.allObjects as? [String] ?? [])
            .filter { !$0.hasSuffix(".md") }.sorted()
        var traces: [(String, TraceLink)] = []
        for file in files {
            let url = root.appendingPathComponent(file)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue,
                let trace = try? ThroughputTrace.load(contentsOf: url)
            else { continue }
            traces.append((file, TraceLink(schedule: LinkSchedule(trace: trace))))
        }
        let rules = AbrRuleName.allCases
        var agreed = 0
        var differing: [String] = []
        for (name, link) in traces {
            for rule in rules {
                let (real, virtual, realSummary, virtualSummary) = try ShellParityTests.bothShells(link: link, chunkBytes: chunk) { $0.abr = rule }
                if real == virtual, real.timed == virtual.timed, realSummary.exitReason == virtualSummary.exitReason {
                    agreed += 1
                } else {
                    differing.append("\(name) \(rule.rawValue)")
                }
            }
        }
        print("parity sweep, \(chunk)-byte progress: \(traces.count) traces × \(rules.count) rules: \(agreed) of \(traces.count * rules.count) agree")
        for pair in differing { print("  differ: \(pair)") }
        #expect(differing.isEmpty, "\(differing)")
    }
}
