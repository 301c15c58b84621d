// `--abr NAME` end to end: `hlsplay simulate` of every rule on the real 2 s sample ladder and a trace of the
// tuning side of Tools/abr/trace-split.json (never an evaluation trace), each session completing with its
// rule in the header and on every decision.

import Foundation
import HLSCore
import Testing
import TestSupport

@Suite struct AbrSimulationTests {
    /// A Norway HSDPA trace: tuning side (the split is checked below, so a re-split cannot silently move it).
    static let tuningTrace = "pensieve/hsdpa_norway/norway_bus_1"

    @Test(arguments: AbrRuleName.allCases)
    func simulate_eachRule_completes_andLogsItsName(rule: AbrRuleName) throws {
        let ladder = try Repo.requireSamples("ladder-2s")
        let split = try JSONSerialization.jsonObject(with: Data(contentsOf: Repo.root.appendingPathComponent("Tools/abr/trace-split.json")))
        #expect(((split as? [String: Any])?["tuning"] as? [String])?.contains(Self.tuningTrace) == true, "a tuning trace")
        let trace = Repo.sharedData.appendingPathComponent("traces/" + Self.tuningTrace)
        guard FileManager.default.fileExists(atPath: trace.path) else { throw TestSetupError("shared trace \(trace.path) is missing") }
        let run = try runHlsplay(
            ["simulate", ladder.path, "--trace", trace.path, "--duration", "60", "--json", "--predictor", "off", "--abr", rule.rawValue], har: false)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let configuration = try #require(run.logLines.first?["configuration"] as? [String: Any])
        #expect(configuration["abr"] as? String == rule.rawValue)
        #expect((run.summary?["playedSeconds"] as? Double ?? 0) >= 29.9, "the whole 30 s ladder played")
        let decisions = run.events("abr.decision")
        #expect(decisions.count >= 10)
        let records = decisions.compactMap { $0["abr"] as? [String: Any] }
        if rule == .hlsplay {
            #expect(records.isEmpty, "hlsplay's own rule logs as before")
        } else {
            #expect(records.count == decisions.count, "every decision carries the rule's record")
            #expect(records.allSatisfy { $0["rule"] as? String == rule.rawValue })
            #expect(decisions.contains { ($0["decision"] as? [String: Any])?["reason"] as? String == "abrRule" })
        }
    }

    @Test func unknownRule_isAUsageError_namingTheRules() throws {
        let run = try runHlsplay(["simulate", "/nonexistent", "--trace", "/nonexistent", "--abr", "bolaa"], har: false)
        #expect(run.status == 64)
        #expect(run.stderr.contains("--abr: 'bolaa' is not one of hlsplay, throughput, bola, bola-e, dynamic, mpc, robust-mpc"))
    }
}
