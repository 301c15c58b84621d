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

    /// The selector's own peak-bitrate cap: the lowest of the user's, the policy's
    /// and the over-selection cap (the startup/recovery cap applies on top, through
    /// `StartupCapController.applying(to:)`). Nil: none.
    static func selectionCapBps(_ configuration: PlayerConfiguration, policyKnobs: PolicyKnobs?, overSelectionCapBps: Int?) -> Int? {
        [configuration.preferredPeakBitRateBps, policyKnobs?.peakBitrateCapBps, overSelectionCapBps].compactMap { $0 }.min()
    }

    /// Every cap in force, the startup/recovery cap's included: what a decision was taken under. Nil: none.
    static func effectiveCapBps(_ configuration: PlayerConfiguration, policyKnobs: PolicyKnobs?, overSelectionCapBps: Int?,
                                startupCapBps: Int?) -> Int? {
        [selectionCapBps(configuration, policyKnobs: policyKnobs, overSelectionCapBps: overSelectionCapBps), startupCapBps].compactMap { $0 }.min()
    }

    /// Whether a segment request wedged for the first time goes back through the
    /// selector instead of being asked for again: when less than
    /// `PlayerSession.reDecideAfterWedgeBelowBufferSegments` segment durations are
    /// buffered and a rung below the wedged one exists.
    static func reDecidesAfterWedge(bufferSeconds: Double, segmentDurationSeconds: Double, rungBps: Int, ladderBitratesBps: [Int]) -> Bool {
        bufferSeconds < PlayerSession.reDecideAfterWedgeBelowBufferSegments * segmentDurationSeconds
            && ladderBitratesBps.contains { $0 < rungBps }
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

    /// On the audio-only fallback, an over-selection cap below every video rung is lifted to the
    /// lowest video rung once the recent segment transfers support it (`recentBps`, the lowest
    /// of them): the audio-only rung's small segments never give network-limited evidence, so
    /// `afterEvidence` would keep the session on audio-only after the link recovered.
    static func overSelectionCap(afterRecentThroughput recentBps: Double?, current: Int?, videoLadderBitratesBps: [Int],
                                 upSwitchSafetyFactor: Double) -> Int? {
        guard let current, let recentBps, let lowest = videoLadderBitratesBps.min(), current < lowest else { return current }
        return Double(lowest) <= upSwitchSafetyFactor * recentBps ? lowest : current
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
