// Decision glue shared by the real session (PlayerSession) and the
// virtual-time one (VirtualSession), so both run the same code between the
// HLSCore value types: which predictor and controller a configuration gets,
// how the features are assembled, and how the over-selection cap moves.

import Foundation
import HLSCore

enum SessionDecisions {
    /// The predictor a configuration asks for; `problem` says why it fell back to the heuristic (logged by the caller).
    static func makePredictor(_ configuration: PlayerConfiguration, defaultModelPath: () -> String?)
        -> (predictor: (any StallPredictor)?, problem: String?) {
        switch configuration.predictor {
        case .off:
            return (nil, nil)
        case .heuristic:
            return (HeuristicPredictor(), nil)
        case .threshold:
            return (BufferThresholdPredictor(), nil)
        case .model:
            guard let path = configuration.modelPath ?? defaultModelPath() else {
                return (HeuristicPredictor(), "model file \(ModelLocator.modelFile) not found (set HLSPLAY_MODEL or --model); using the heuristic predictor")
            }
            do {
                return (try LogisticModelPredictor(contentsOfFile: path, requiredHorizonSeconds: defaultStallHorizonSeconds), nil)
            } catch {
                return (HeuristicPredictor(), "cannot load the stall model \(path): \(error); using the heuristic predictor")
            }
        }
    }

    /// The policy controller for a ladder; an invalid configuration falls back to the defaults, with a problem to log.
    static func makePolicyController(_ configuration: PlayerConfiguration, ladderBitratesBps: [Int])
        -> (controller: PolicyController?, problem: String?) {
        do {
            return (try PolicyController(configuration: configuration.policy, ladderBitratesBps: ladderBitratesBps), nil)
        } catch {
            return (try? PolicyController(ladderBitratesBps: ladderBitratesBps),
                    "invalid policy configuration (\(error)); using the defaults")
        }
    }

    /// The in-flight segment request, as the features see it.
    struct InFlightView {
        var bytesReceived: Int
        var bytesExpected: Int?
        var elapsedSeconds: Double
        var secondsSinceLastByte: Double
    }

    /// The predictor's features from the session's state at one monitor tick.
    static func stallFeatures(bufferSeconds: Double, estimator: BandwidthEstimator, ladderBitratesBps: [Int], currentRungBps: Int?,
                              inFlight: InFlightView?, firstByteSeconds: Double?, rttSeconds: Double?,
                              cpuPressureAvg10Percent: Double?, decodeLagRatio: Double?, thermalMaxCelsius: Double?) -> StallFeatures {
        let rungBps = Double(currentRungBps ?? 0)
        return StallFeatures(
            bufferSeconds: bufferSeconds,
            bandwidthFastBps: estimator.fastBps, bandwidthSlowBps: estimator.slowBps,
            currentRungBitrateBps: rungBps,
            nextHigherRungBitrateBps: ladderBitratesBps.map(Double.init).filter { $0 > rungBps }.min(),
            inFlightBytesReceived: inFlight.map { Double($0.bytesReceived) },
            inFlightBytesExpected: inFlight?.bytesExpected.map(Double.init),
            inFlightElapsedSeconds: inFlight?.elapsedSeconds,
            inFlightSecondsSinceLastByte: inFlight?.secondsSinceLastByte,
            firstByteSeconds: firstByteSeconds, rttSeconds: rttSeconds,
            cpuPressureAvg10Percent: cpuPressureAvg10Percent,
            decodeLagRatio: decodeLagRatio,
            thermalMaxCelsius: thermalMaxCelsius)
    }

    /// Fresh network-limited delivery earns back rungs above an over-selection
    /// cap, as far as `evidenceBps` supports them: the new cap (nil: released,
    /// the top rung is supported), or the old one when the evidence earns nothing.
    static func overSelectionCap(afterEvidence evidenceBps: Double, current: Int?, ladderBitratesBps: [Int], upSwitchSafetyFactor: Double) -> Int? {
        guard let current else { return nil }
        let supported = ladderBitratesBps.filter { Double($0) <= upSwitchSafetyFactor * evidenceBps }.max() ?? 0
        guard supported > current else { return current }
        return supported >= (ladderBitratesBps.max() ?? 0) ? nil : supported
    }

    /// The over-selection cap after abandoning a request on `abandonedRungBps`:
    /// the rung at or below the classifier's suggestion, and strictly below the
    /// abandoned rung (the bottom rung when there is none), never raising an existing cap.
    static func overSelectionCap(afterAbandoning abandonedRungBps: Double, suggestedCapBps: Double, current: Int?, ladderBitratesBps: [Int]) -> Int {
        let rungs = ladderBitratesBps.sorted()
        let below = rungs.last { Double($0) <= suggestedCapBps } ?? rungs.first
        let capBps = min(below ?? Int(suggestedCapBps), rungs.last { Double($0) < abandonedRungBps } ?? rungs.first ?? Int(suggestedCapBps))
        return min(current ?? Int.max, capBps)
    }
}
