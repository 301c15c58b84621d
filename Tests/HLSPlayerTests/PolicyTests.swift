import Foundation
import HLSCore
import HLSOrigin
import Testing
import TestSupport

/// The stall-risk predictor and policy controller in the real binary, on a
/// link that collapses mid-play.
@Suite(.serialized, .tags(.realTime)) struct PolicyTests {
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
            try runHlsplay([
                base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
                "--predictor", "threshold", "--duration", "14"
            ])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let risks = run.events("risk.sample")
        #expect(!risks.isEmpty)
        #expect(risks.allSatisfy { $0["predictor"] as? String == "threshold" })
        // On the monitor only while playing; before the start, once per segment that lands.
        #expect(risks.allSatisfy { ["playing", "startingUp"].contains($0["phase"] as? String ?? "") })
        #expect(risks.filter { $0["phase"] as? String == "startingUp" }.count <= run.events("segment.buffered").count)
        let change = try #require(run.events("policy.change").first { $0["to"] as? String == "defensiveDownshift" })
        #expect((change["risk"] as? Double ?? 0) >= 0.75)
        let features = try #require(change["features"] as? [String: Any])
        #expect((features["bufferSeconds"] as? Double ?? 99) < 2)
        let knobs = try #require(change["knobs"] as? [String: Any])
        #expect(
            knobs["preferredForwardBufferDurationSeconds"] as? Double
                == PolicyController.Configuration().downshiftForwardBufferSeconds)
        #expect(run.summary?["predictor"] as? String == "threshold")
        #expect((run.summary?["policyChanges"] as? Int ?? 0) >= 1)
    }

    static let shippedModel = Repo.root.appendingPathComponent("models/stall-logistic-v2.json").path

    /// The controller judges the start: on a link slower than the bottom rung a
    /// 2 s start would stall at once, so the start waits for the policy's resume
    /// threshold; on a fast link it starts at 2 s as without a controller.
    @Test(arguments: [(500_000, true), (8_000_000, false)])
    func riskyStart_waitsForThePolicysResumeThreshold(rateBps: Int, risky: Bool) throws {
        let samples = try Repo.requireSamples("ladder-2s")
        let run = try withOrigin(samples, configuration: OriginConfiguration(rateBitsPerSecond: Double(rateBps))) { server in
            try runHlsplay([
                server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
                "--no-decode", "--duration", "3", "--model", Self.shippedModel
            ])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let started = try #require(run.events("playback.started").first)
        let buffered = started["bufferSeconds"] as? Double ?? 0
        let startRisks = run.events("risk.sample").filter { $0["phase"] as? String == "startingUp" }
        let first = try #require(startRisks.first, "the landing of the first segment is judged")
        #expect((first["features"] as? [String: Any])?["bufferSeconds"] as? Double == 2)
        if risky {
            #expect((first["risk"] as? Double ?? 0) >= PolicyController.Configuration().preloadEnterRisk)
            let change = try #require(run.events("policy.change").first)
            #expect((change["t"] as? Double ?? 99) <= (started["t"] as? Double ?? 0), "the policy changed before the start")
            #expect(buffered >= PolicyController.Configuration().preloadResumeBufferSeconds - 0.01, "started with \(buffered) s")
        } else {
            #expect((first["risk"] as? Double ?? 1) < PolicyController.Configuration().preloadEnterRisk)
            #expect(abs(buffered - 2) < 0.01, "started with \(buffered) s")
        }
    }

    /// A user's --startup-buffer wins over the policy's start gate.
    @Test func userStartupBuffer_winsOverThePolicy() throws {
        let samples = try Repo.requireSamples("ladder-2s")
        let run = try withOrigin(samples, configuration: OriginConfiguration(rateBitsPerSecond: 500_000)) { server in
            try runHlsplay([
                server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
                "--no-decode", "--duration", "2", "--startup-buffer", "2", "--model", Self.shippedModel
            ])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let started = try #require(run.events("playback.started").first)
        #expect(abs((started["bufferSeconds"] as? Double ?? 0) - 2) < 0.01)
    }

    @Test func predictorOff_noControllerNoRiskSamples() throws {
        let samples = try Repo.requireSamples("short-2s")
        let run = try withOrigin(samples) { base in
            try runHlsplay([
                base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--predictor", "off", "--duration", "2"
            ])
        }
        #expect(run.status == 0)
        #expect(run.events("risk.sample").isEmpty)
        #expect(run.summary?["predictor"] == nil)
    }

    @Test func missingModelFile_fallsBackToHeuristic_logged() throws {
        let samples = try Repo.requireSamples("short-2s")
        let run = try withOrigin(samples) { base in
            try runHlsplay([
                base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
                "--model", "/nonexistent/model.json", "--duration", "3"
            ])
        }
        #expect(run.status == 0)
        #expect(run.events("error").contains { $0["category"] as? String == "predictor" })
        #expect(run.summary?["predictor"] as? String == "heuristic")
    }

    /// The controller is off by default (docs/stall-prediction.md: no QoE gain on unseen networks); `--predictor model`
    /// loads the shipped model, and `--model FILE` alone asks for the model.
    @Test func defaultPredictor_isOff_theShippedModelIsOneFlagAway() throws {
        let samples = try Repo.requireSamples("short-2s")
        let (byDefault, model, modelFile) = try withOrigin(samples) { base in
            let url = base.appendingPathComponent("master.m3u8").absoluteString
            return (
                try runHlsplay([url, "--headless", "--json", "--duration", "2"]),
                try runHlsplay([url, "--headless", "--json", "--duration", "2", "--predictor", "model"]),
                try runHlsplay([url, "--headless", "--json", "--duration", "2", "--model", Self.shippedModel])
            )
        }
        #expect(byDefault.status == 0 && model.status == 0 && modelFile.status == 0)
        #expect(byDefault.summary?["predictor"] == nil)
        #expect(byDefault.events("risk.sample").isEmpty && byDefault.events("policy.change").isEmpty)
        let header = try #require(byDefault.logLines.first, "the log begins with its header")
        #expect((header["configuration"] as? [String: Any])?["predictor"] as? String == "off", "\(header)")
        for run in [model, modelFile] {
            let name: String = run.summary?["predictor"] as? String ?? ""
            #expect(name.hasPrefix("model:stall-logistic"), "predictor \(name)")
            #expect(!run.events("risk.sample").isEmpty)
        }
    }

    /// A flag that means something only with the controller is refused, not dropped, when the controller is off.
    @Test func controllerFlags_withTheControllerOff_areUsageErrors() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-policy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let policy = dir.appendingPathComponent("policy.json")
        try Data(#"{"cooldownSeconds": 3}"#.utf8).write(to: policy)
        let url = "http://127.0.0.1:9/master.m3u8"
        let policyAlone = try runHlsplay([url, "--headless", "--policy", policy.path])
        #expect(policyAlone.status == 64)
        #expect(policyAlone.stderr.contains("off by default"), "\(policyAlone.stderr)")
        let policyOff = try runHlsplay([url, "--headless", "--policy", policy.path, "--predictor", "off"])
        #expect(policyOff.status == 64)
        #expect(policyOff.stderr.contains("--predictor off"), "\(policyOff.stderr)")
        let modelOff = try runHlsplay([url, "--headless", "--model", Self.shippedModel, "--predictor", "heuristic"])
        #expect(modelOff.status == 64)
        #expect(modelOff.stderr.contains("--predictor heuristic takes none"), "\(modelOff.stderr)")
    }
}
