// Set-up shared by the real session (PlayerSession) and the virtual-time one
// (VirtualSession), so both run the same code between the HLSCore value
// types: which predictor and controller a configuration gets, how the policy
// knobs meet the user's thresholds, and how the features are assembled. The
// rules themselves are in HLSCore: the caps combine through `PeakBitrateCaps`,
// the over-selection cap moves by `OverSelectionCap`, a wedge's outcome is
// `WedgeRules`.

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

    /// Applies a policy's knobs to the media clock: the resume threshold (unless
    /// the user set one) and, before the first start, the start gate (unless the
    /// user set the startup threshold or the stream sets it, `gatesStart` false).
    static func apply(_ knobs: PolicyKnobs, to timeline: inout PlaybackTimeline, configuration: PlayerConfiguration, gatesStart: Bool) {
        if !configuration.resumeBufferSetByUser {
            timeline.setResumeBufferSeconds(knobs.resumeBufferSeconds)
        }
        if timeline.phase == .startingUp, gatesStart, !configuration.startupBufferSetByUser {
            timeline.setStartupBufferSeconds(PolicyKnobs.startupBufferSeconds(configuredSeconds: configuration.playback.startupBufferSeconds, knobs: knobs))
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
}
