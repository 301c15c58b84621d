import Foundation
import HLSCore
import HLSOrigin
import Testing

/// The stall-risk predictor and policy controller in the real binary, on a
/// link that collapses mid-play.
@Suite(.serialized) struct PolicyTests {
    func collapsingOrigin<T>(_ samples: URL, _ body: (URL) throws -> T) throws -> T {
        var config = OriginConfiguration()
        config.rateBitsPerSecond = 8_000_000
        // The link carries nothing from 3 s to 11 s of server time.
        config.linkCollapses = [LinkCollapse(atSeconds: 3, durationSeconds: 8)]
        let server = OriginServer(root: samples, configuration: config)
        try server.start(port: 0)
        defer { server.stop() }
        return try body(server.baseURL)
    }

    @Test func thresholdPredictor_linkCollapse_policyMovesToDefensiveDownshift_withRiskAndFeaturesLogged() throws {
        let samples = try Repo.requireSamples("ladder-2s")
        let run = try collapsingOrigin(samples) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
                            "--predictor", "threshold", "--duration", "14"])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let risks = run.events("risk.sample")
        #expect(!risks.isEmpty)
        #expect(risks.allSatisfy { $0["predictor"] as? String == "threshold" && $0["phase"] as? String == "playing" })
        let change = try #require(run.events("policy.change").first { $0["to"] as? String == "defensiveDownshift" })
        #expect((change["risk"] as? Double ?? 0) >= 0.75)
        let features = try #require(change["features"] as? [String: Any])
        #expect((features["bufferSeconds"] as? Double ?? 99) < 2)
        let knobs = try #require(change["knobs"] as? [String: Any])
        #expect(knobs["preferredForwardBufferDurationSeconds"] as? Double
                == PolicyController.Configuration().downshiftForwardBufferSeconds)
        #expect(run.summary?["predictor"] as? String == "threshold")
        #expect((run.summary?["policyChanges"] as? Int ?? 0) >= 1)
    }

    @Test func predictorOff_noControllerNoRiskSamples() throws {
        let samples = try Repo.requireSamples("short-2s")
        let run = try withOrigin(samples) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--predictor", "off", "--duration", "2"])
        }
        #expect(run.status == 0)
        #expect(run.events("risk.sample").isEmpty)
        #expect(run.summary?["predictor"] == nil)
    }

    @Test func missingModelFile_fallsBackToHeuristic_logged() throws {
        let samples = try Repo.requireSamples("short-2s")
        let run = try withOrigin(samples) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
                            "--model", "/nonexistent/model.json", "--duration", "3"])
        }
        #expect(run.status == 0)
        #expect(run.events("error").contains { $0["category"] as? String == "predictor" })
        #expect(run.summary?["predictor"] as? String == "heuristic")
    }

    @Test func defaultPredictor_isTheShippedModel() throws {
        let samples = try Repo.requireSamples("short-2s")
        let run = try withOrigin(samples) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--duration", "3"])
        }
        #expect(run.status == 0)
        let name: String = run.summary?["predictor"] as? String ?? ""
        #expect(name.hasPrefix("model:stall-logistic"), "predictor \(name)")
    }
}
