// Stall features, device-pressure parsing and the three predictors, with
// hand-computed numbers; the shipped model against the trainer's golden vectors.

import Foundation
import Testing
import TestSupport
@testable import HLSCore

@Suite struct StallFeaturesTests {
    @Test func derived_trendOverSelectionAndProjection() {
        let f = StallFeatures(
            bufferSeconds: 1.5, bandwidthFastBps: 2e6, bandwidthSlowBps: 4e6, currentRungBitrateBps: 3e6,
            inFlightBytesReceived: 250_000, inFlightBytesExpected: 750_000, inFlightElapsedSeconds: 1)
        #expect(f.bandwidthEstimateBps == 2e6)
        #expect(f.bandwidthTrendRatio == 0.5)
        #expect(f.overSelectionRatio == 1.5)
        // Own rate: 250 000 B × 8 / 1 s = 2 Mbit/s; 500 000 B left = 4 Mbit → 2 s.
        #expect(f.projectedCompletionSeconds == 2)
        #expect(f.projectedShortfallSeconds == 0.5)
        #expect(f.inFlightProgressFraction == 250_000.0 / 750_000.0)
    }

    @Test func projection_noBytesYet_usesEstimate_noEstimate_isMissing() {
        var f = StallFeatures(
            bufferSeconds: 3, bandwidthFastBps: 1e6, bandwidthSlowBps: 1e6, currentRungBitrateBps: 1e6,
            inFlightBytesReceived: 0, inFlightBytesExpected: 250_000, inFlightElapsedSeconds: 0.5)
        #expect(f.projectedCompletionSeconds == 2)
        f.bandwidthFastBps = nil
        #expect(f.projectedCompletionSeconds == nil)
        #expect(f.overSelectionRatio == nil)
        #expect(f.bandwidthTrendRatio == nil)
    }

    @Test func idle_inFlightFeaturesAreMissing_notZero() {
        let f = StallFeatures(bufferSeconds: 12, currentRungBitrateBps: 1e6)
        #expect(f.projectedCompletionSeconds == nil)
        #expect(f.inFlightProgressFraction == nil)
        #expect(f.value(of: .cpuPressureAvg10Percent) == nil)
        #expect(f.value(of: .bufferSeconds) == 12)
    }

    @Test func codable_roundTrip_keepsMissingAsMissing() throws {
        let f = StallFeatures(bufferSeconds: 2, bandwidthFastBps: 1e6, currentRungBitrateBps: 6.2e5, decodeLagRatio: 0.3)
        let back = try JSONDecoder().decode(StallFeatures.self, from: JSONEncoder().encode(f))
        #expect(back == f)
        #expect(back.bandwidthSlowBps == nil)
    }
}

@Suite struct DevicePressureTests {
    @Test func psi_cpuFile_someAndFull() throws {
        let text = "some avg10=1.10 avg60=1.70 avg300=17.83 total=459104600\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
        let p = try PressureStallInfo.parse(text)
        #expect(p.some == PressureStallLine(avg10Percent: 1.10, avg60Percent: 1.70, avg300Percent: 17.83, totalMicroseconds: 459_104_600))
        #expect(p.full?.totalMicroseconds == 0)
    }

    @Test func psi_oldKernel_noFullLine() throws {
        let p = try PressureStallInfo.parse("some avg10=42.50 avg60=3.00 avg300=1.00 total=12")
        #expect(p.some.avg10Percent == 42.5)
        #expect(p.full == nil)
    }

    @Test func psi_malformed_isTypedError() {
        #expect(throws: PressureStallInfo.ParseError.missingSomeLine) { try PressureStallInfo.parse("") }
        #expect(throws: PressureStallInfo.ParseError.malformedField(line: 1, field: "avg10")) {
            try PressureStallInfo.parse("some avg10=x avg60=1 avg300=1 total=1")
        }
        #expect(throws: PressureStallInfo.ParseError.malformedField(line: 1, field: "total")) {
            try PressureStallInfo.parse("some avg10=1 avg60=1 avg300=1")
        }
    }

    @Test func thermal_millidegrees_andMax() {
        #expect(ThermalZoneReading.celsius(fromSysfsText: "45000\n") == 45)
        #expect(ThermalZoneReading.celsius(fromSysfsText: "n/a") == nil)
        #expect(ThermalZoneReading.maxCelsius([45, nil, 71.5]) == 71.5)
        #expect(ThermalZoneReading.maxCelsius([nil]) == nil)
    }

    @Test func decodeLag_ratio_undefinedWithoutMedia() {
        #expect(DecodeLag.ratio(decodeSeconds: 0.5, mediaSeconds: 2) == 0.25)
        #expect(DecodeLag.ratio(decodeSeconds: 0.5, mediaSeconds: 0) == nil)
    }
}

@Suite struct BaselinePredictorTests {
    func f(_ buffer: Double, est: Double? = nil, rung: Double = 1e6) -> StallFeatures {
        StallFeatures(bufferSeconds: buffer, bandwidthFastBps: est, bandwidthSlowBps: est, currentRungBitrateBps: rung)
    }

    @Test func threshold_justUnder2s_is1_at2s_is0() throws {
        let p = BufferThresholdPredictor()
        #expect(try p.stallProbability(f(1.999)) == 1)
        #expect(try p.stallProbability(f(2.0)) == 0)
        #expect(p.horizonSeconds == 5)
    }

    @Test func thresholdRamp_linearToZero() throws {
        let p = BufferThresholdPredictor(thresholdSeconds: 2, rampWidthSeconds: 3)
        #expect(try p.stallProbability(f(2.0)) == 1)
        #expect(try p.stallProbability(f(3.5)) == 0.5)
        #expect(try p.stallProbability(f(5.0)) == 0)
    }

    @Test func heuristic_articleFormula_handComputed() throws {
        let h = HeuristicPredictor()
        // buffer 1.5 → (3 − 1.5)/3 = 0.5; rung 3 Mbit/s over 2 Mbit/s → 1.5 × 0.25 = 0.375.
        #expect(abs(try h.stallProbability(f(1.5, est: 2e6, rung: 3e6)) - 0.875) < 1e-12)
        // buffer 6 → 0; 1/2 × 0.25 = 0.125.
        #expect(try h.stallProbability(f(6, est: 2e6, rung: 1e6)) == 0.125)
        // No estimate: bitrate pressure counts as 1 → 0.25.
        #expect(try h.stallProbability(f(6)) == 0.25)
    }

    @Test func heuristic_devicePenalty_levels_boundaryPairs_andClamp() throws {
        var x = f(6, est: 2e6, rung: 1e6)
        x.cpuPressureAvg10Percent = 9.99
        #expect(HeuristicPredictor.devicePenalty(x) == 0)
        x.cpuPressureAvg10Percent = 10
        #expect(HeuristicPredictor.devicePenalty(x) == 0.10)
        x.decodeLagRatio = 0.8
        #expect(HeuristicPredictor.devicePenalty(x) == 0.25)
        x.thermalMaxCelsius = 89.9
        #expect(HeuristicPredictor.devicePenalty(x) == 0.25)
        x.thermalMaxCelsius = 90
        #expect(HeuristicPredictor.devicePenalty(x) == 0.40)
        var y = f(0, est: 1e6, rung: 4e6)
        y.thermalMaxCelsius = 95
        #expect(try HeuristicPredictor().stallProbability(y) == 1)
    }

    @Test func nonFiniteBuffer_throws() {
        #expect(throws: StallPredictionError.nonFiniteFeature(.bufferSeconds)) {
            try HeuristicPredictor().stallProbability(f(.nan))
        }
    }
}

@Suite struct LogisticModelPredictorTests {
    /// bias −1; buffer: identity, mean 2, std 2, weight −1; over-selection: log10 clipped to [0.01, 100],
    /// mean 0, std 1, weight 2, missing indicator weight 0.5, imputed at the mean.
    static let tinyModelJSON = """
        {"schema": "hlsplay.stall-model", "schemaVersion": 1, "name": "tiny", "version": "0.0.1", "kind": "logistic",
         "horizonSeconds": 5, "operatingThreshold": 0.5, "bias": -1,
         "features": [
          {"name": "bufferSeconds", "transform": "identity", "imputeValue": 2, "mean": 2, "std": 2, "weight": -1, "missingWeight": 0},
          {"name": "overSelectionRatio", "transform": "log10", "clipMin": 0.01, "clipMax": 100, "imputeValue": 0,
           "mean": 0, "std": 1, "weight": 2, "missingWeight": 0.5}],
         "training": {"tool": "hand", "dataSource": "none", "trainTraces": [], "heldOutTraces": [], "trainExamples": 0,
                      "trainPositives": 0, "l2Penalty": 0}}
        """

    func load(_ json: String, horizon: Double? = nil) throws(StallModelLoadError) -> LogisticModelPredictor {
        try LogisticModelPredictor(jsonData: Data(json.utf8), requiredHorizonSeconds: horizon)
    }

    @Test func tinyModel_handComputed() throws {
        let p = try load(Self.tinyModelJSON)
        // logit = −1 − (4 − 2)/2 + 2·log10(10) = 0 → 0.5.
        let over = StallFeatures(bufferSeconds: 4, bandwidthFastBps: 1e6, bandwidthSlowBps: 1e6, currentRungBitrateBps: 1e7)
        #expect(try p.logit(over) == 0)
        #expect(try p.stallProbability(over) == 0.5)
        // No estimate: over-selection missing → −1 − 1 + 2·0 + 0.5 = −1.5.
        let cold = StallFeatures(bufferSeconds: 4, currentRungBitrateBps: 1e7)
        #expect(abs(try p.stallProbability(cold) - 1 / (1 + exp(1.5))) < 1e-15)
        // Clipped: 1e9 over-selection counts as 100 → logit −2 + 4 = 2.
        let wild = StallFeatures(bufferSeconds: 4, bandwidthFastBps: 1e3, bandwidthSlowBps: 1e3, currentRungBitrateBps: 1e12)
        #expect(try p.logit(wild) == 2)
        #expect(p.predictorName == "model:tiny@0.0.1")
    }

    @Test func loadErrors_areTyped() {
        let j = Self.tinyModelJSON
        #expect(throws: StallModelLoadError.unknownFeature("bufferMinutes")) {
            try load(j.replacingOccurrences(of: "\"bufferSeconds\"", with: "\"bufferMinutes\""))
        }
        #expect(throws: StallModelLoadError.invalidParameter(feature: "bufferSeconds", parameter: "std")) {
            try load(j.replacingOccurrences(of: "\"std\": 2", with: "\"std\": 0"))
        }
        #expect(throws: StallModelLoadError.unknownTransform(feature: "bufferSeconds", transform: "sqrt")) {
            try load(j.replacingOccurrences(of: "\"identity\"", with: "\"sqrt\""))
        }
        #expect(throws: StallModelLoadError.unsupportedSchema(schema: "hlsplay.stall-model", version: 2)) {
            try load(j.replacingOccurrences(of: "\"schemaVersion\": 1", with: "\"schemaVersion\": 2"))
        }
        #expect(throws: StallModelLoadError.horizonMismatch(modelSeconds: 5, requestedSeconds: 3)) {
            try load(j, horizon: 3)
        }
        #expect(throws: StallModelLoadError.invalidParameter(feature: nil, parameter: "operatingThreshold")) {
            try load(j.replacingOccurrences(of: "\"operatingThreshold\": 0.5", with: "\"operatingThreshold\": 1"))
        }
        do {
            _ = try load("{\"schema\": 1}")
            Issue.record("expected invalidJSON")
        } catch {
            guard case .invalidJSON = error else { Issue.record("got \(error)"); return }
        }
        do {
            _ = try LogisticModelPredictor(contentsOfFile: "/nonexistent/model.json")
            Issue.record("expected unreadableFile")
        } catch {
            guard case .unreadableFile(path: "/nonexistent/model.json", _) = error else { Issue.record("got \(error)"); return }
        }
    }

    static let modelsDirectory = Repo.root.appendingPathComponent("models", isDirectory: true)

    struct Golden: Decodable {
        struct Vector: Decodable { var features: StallFeatures; var probability: Double }
        struct MetricsCheck: Decodable {
            var scores: [Double]
            var labels: [Bool]
            var threshold: Double
            var auc: Double
            var brier: Double
            var precision: Double
            var recall: Double
        }
        var model: String
        var vectors: [Vector]
        var metricsCheck: MetricsCheck
    }

    static func loadGolden(_ model: String = "stall-logistic-v1") throws -> Golden {
        try JSONDecoder().decode(
            Golden.self,
            from: Data(
                contentsOf:
                    modelsDirectory
                    .appendingPathComponent("\(model).golden.json")))
    }

    /// StallMetrics agrees with the trainer's metrics on a held-out subsample,
    /// so the numbers in docs/stall-prediction.md mean what StallMetrics means.
    @Test func metrics_agreeWithTrainer() throws {
        let m = try Self.loadGolden().metricsCheck
        #expect(m.labels.contains(true) && m.labels.contains(false))
        let auc = try #require(StallMetrics.rocAUC(scores: m.scores, labels: m.labels))
        #expect(abs(auc - m.auc) < 1e-12)
        let brier = try #require(StallMetrics.brierScore(scores: m.scores, labels: m.labels))
        #expect(abs(brier - m.brier) < 1e-12)
        let pr = StallMetrics.precisionRecall(scores: m.scores, labels: m.labels, threshold: m.threshold)
        #expect(pr.precision.map { abs($0 - m.precision) < 1e-12 } == true)
        #expect(pr.recall.map { abs($0 - m.recall) < 1e-12 } == true)
    }

    /// The Swift inference reproduces Tools/train/train.py's probabilities on
    /// held-out feature vectors it recorded (models/stall-logistic-v1.golden.json).
    @Test func shippedModel_reproducesTrainerProbabilities() throws {
        let path = Self.modelsDirectory.appendingPathComponent("stall-logistic-v1.json").path
        let p = try LogisticModelPredictor(contentsOfFile: path, requiredHorizonSeconds: defaultStallHorizonSeconds)
        #expect(p.model.version == "1.0.0")
        let golden = try Self.loadGolden()
        #expect(golden.model == "stall-logistic-v1.json")
        #expect(golden.vectors.count >= 6)
        for v in golden.vectors {
            let got = try p.stallProbability(v.features)
            #expect(abs(got - v.probability) <= 1e-12 + 1e-9 * v.probability, "features \(v.features)")
        }
    }

    /// v2, trained on real hlsplay session logs (Tools/train/train_real.py):
    /// it loads with the same schema, for the default horizon, and the Swift
    /// inference reproduces the trainer's probabilities on real held-out
    /// feature vectors (models/stall-logistic-v2.golden.json).
    @Test func modelV2_loads_andReproducesTrainerProbabilities() throws {
        let path = Self.modelsDirectory.appendingPathComponent("stall-logistic-v2.json").path
        let p = try LogisticModelPredictor(contentsOfFile: path, requiredHorizonSeconds: defaultStallHorizonSeconds)
        #expect(p.model.version == "2.0.0")
        #expect(p.model.training.dataSource.hasPrefix("REAL"))
        #expect(p.model.operatingThreshold > 0 && p.model.operatingThreshold < 1)
        let golden = try Self.loadGolden("stall-logistic-v2")
        #expect(golden.model == "stall-logistic-v2.json")
        #expect(golden.vectors.count >= 6)
        // The vectors span low and high risk, so a wrong weight or transform shows.
        #expect(golden.vectors.contains { $0.probability < 0.1 } && golden.vectors.contains { $0.probability > 0.5 })
        for v in golden.vectors {
            let got = try p.stallProbability(v.features)
            #expect(abs(got - v.probability) <= 1e-12 + 1e-9 * v.probability, "features \(v.features)")
        }
    }

    /// StallMetrics agrees with the trainer on v2's real held-out subsample.
    @Test func metricsV2_agreeWithTrainer() throws {
        let m = try Self.loadGolden("stall-logistic-v2").metricsCheck
        #expect(m.labels.contains(true) && m.labels.contains(false))
        let auc = try #require(StallMetrics.rocAUC(scores: m.scores, labels: m.labels))
        #expect(abs(auc - m.auc) < 1e-12)
        let pr = StallMetrics.precisionRecall(scores: m.scores, labels: m.labels, threshold: m.threshold)
        #expect(pr.precision.map { abs($0 - m.precision) < 1e-12 } == true)
        #expect(pr.recall.map { abs($0 - m.recall) < 1e-12 } == true)
    }
}
