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

    /// A link of 20 Mbit/s that collapses to 0.5 Mbit/s at `collapseSeconds` and stays there (pensieve format).
    static func collapsingTrace(collapseSeconds: Double) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("collapse-\(UUID().uuidString).trace")
        try Data("0.0\t20.0\n\(collapseSeconds)\t0.5\n900.0\t0.5\n".utf8).write(to: url)
        return url
    }

    /// What an `abr.abandon` led to in a log: the cancelled request's end, the re-decision and the re-request.
    static func expectAbandonAndRefetch(_ run: Run, rule: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let abandons = run.events("abr.abandon")
        try #require(!abandons.isEmpty, "the collapse makes \(rule) abandon", sourceLocation: sourceLocation)
        #expect(run.summary?["abrAbandonments"] as? Int == abandons.count, sourceLocation: sourceLocation)
        #expect(
            !run.events("request.byteProgress").contains { ($0["assessment"] as? [String: Any])?["verdict"] as? String == "over-selected" },
            "hlsplay's over-selection abandonment stands aside", sourceLocation: sourceLocation)
        for abandon in abandons {
            let id = try #require(abandon["requestID"] as? Int, sourceLocation: sourceLocation)
            let from = try #require(abandon["fromBandwidthBps"] as? Int, sourceLocation: sourceLocation)
            let to = try #require(abandon["toBandwidthBps"] as? Int, sourceLocation: sourceLocation)
            let toVariant = try #require(abandon["toVariantIndex"] as? Int, sourceLocation: sourceLocation)
            #expect(to < from, "abandoned for a lower rung", sourceLocation: sourceLocation)
            #expect(abandon["rule"] as? String == rule, sourceLocation: sourceLocation)
            // The rule's inputs, enough to see why: the rest would not arrive within a segment's time.
            let loaded = try #require(abandon["bytesLoaded"] as? Int, sourceLocation: sourceLocation)
            let total = try #require(abandon["bytesTotal"] as? Int, sourceLocation: sourceLocation)
            #expect(loaded > 0 && loaded < total, sourceLocation: sourceLocation)
            #expect(
                (abandon["projectedTotalSeconds"] as? Double ?? 0) > (abandon["segmentDurationSeconds"] as? Double ?? .infinity),
                sourceLocation: sourceLocation)
            #expect((abandon["measuredBps"] as? Double ?? .infinity) < Double(from), sourceLocation: sourceLocation)
            #expect(abandon["bufferSeconds"] is Double && abandon["reason"] is String, sourceLocation: sourceLocation)
            // The cancelled request, logged as such.
            let start = try #require(run.events("request.start").first { $0["requestID"] as? Int == id }, sourceLocation: sourceLocation)
            let end = try #require(run.events("request.end").first { $0["requestID"] as? Int == id }, sourceLocation: sourceLocation)
            #expect(end["ok"] as? Bool == false && end["cancelReason"] as? String == "abr-abandoned", "\(end)", sourceLocation: sourceLocation)
            #expect(end["bytes"] as? Int == loaded || (end["bytes"] as? Int ?? 0) >= loaded, sourceLocation: sourceLocation)
            // Then the same segment decided again, at the rung the abandonment chose (under the caps), and fetched.
            let sequence = try #require(start["mediaSequence"] as? Int, sourceLocation: sourceLocation)
            let t = abandon["t"] as? Double ?? 0
            let redecision = try #require(
                run.events("abr.decision").first { ($0["t"] as? Double ?? 0) >= t && $0["mediaSequence"] as? Int == sequence },
                sourceLocation: sourceLocation)
            #expect((redecision["abr"] as? [String: Any])?["reason"] as? String == "abandoned", "\(redecision)", sourceLocation: sourceLocation)
            let variant = try #require((redecision["decision"] as? [String: Any])?["variantIndex"] as? Int, sourceLocation: sourceLocation)
            #expect(variant <= toVariant, sourceLocation: sourceLocation)
            let refetch = try #require(
                run.events("request.start").first {
                    ($0["requestID"] as? Int ?? 0) > id && $0["purpose"] as? String == "segment" && $0["mediaSequence"] as? Int == sequence
                }, "the segment fetched again", sourceLocation: sourceLocation)
            #expect(refetch["variantIndex"] as? Int == variant, sourceLocation: sourceLocation)
            #expect(
                run.events("segment.buffered").contains {
                    $0["mediaSequence"] as? Int == sequence && ($0["variantIndex"] as? Int ?? .max) <= variant
                },
                "and buffered at that rung (or lower, when the re-request was abandoned too)", sourceLocation: sourceLocation)
        }
    }

    @Test func bolaE_linkCollapse_abandonsAndRefetchesLower() throws {
        // ladder-2s: BOLA-E reaches the 7.2 Mbit/s rung by 1.9 s on 20 Mbit/s; at 3 s the link falls to 0.5 Mbit/s.
        // The top-rung segment then in flight is mostly in (finishing it is BOLA's choice); the next, at 3.7 Mbit/s
        // on 18 s of buffer, is abandoned for 1.3 Mbit/s once its own rate shows. Before the abandonment was
        // wired it took 12.7 s and the buffer fell to 7.7 s (with it: refetched by 14.9 s, the buffer never under 15 s).
        let ladder = try Repo.requireSamples("ladder-2s")
        let trace = try Self.collapsingTrace(collapseSeconds: 3)
        defer { try? FileManager.default.removeItem(at: trace) }
        let run = try runHlsplay(
            ["simulate", ladder.path, "--trace", trace.path, "--trace-format", "pensieve", "--json", "--predictor", "off", "--abr", "bola-e"],
            har: false)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        try Self.expectAbandonAndRefetch(run, rule: "bola-e")
        #expect((run.summary?["playedSeconds"] as? Double ?? 0) >= 29.9)
    }

    @Test func dynamic_abandonsByBolaE_inItsBolaMode() throws {
        // DYNAMIC is in BOLA-E mode (buffer above 10 s) on the 7.2 Mbit/s rung when the link collapses at 6 s.
        let ladder = try Repo.requireSamples("ladder-2s")
        let trace = try Self.collapsingTrace(collapseSeconds: 6)
        defer { try? FileManager.default.removeItem(at: trace) }
        let run = try runHlsplay(
            ["simulate", ladder.path, "--trace", trace.path, "--trace-format", "pensieve", "--json", "--predictor", "off", "--abr", "dynamic"],
            har: false)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        try Self.expectAbandonAndRefetch(run, rule: "dynamic")
    }

    @Test func unknownRule_isAUsageError_namingTheRules() throws {
        let run = try runHlsplay(["simulate", "/nonexistent", "--trace", "/nonexistent", "--abr", "bolaa"], har: false)
        #expect(run.status == 64)
        #expect(run.stderr.contains("--abr: 'bolaa' is not one of hlsplay, throughput, bola, bola-e, dynamic, mpc, robust-mpc"))
    }
}
