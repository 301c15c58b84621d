// Stall-risk predictors behind one protocol (issue 5 §2).
//
// A predictor answers one question: P(a stall begins within the next
// `horizonSeconds`). It never decides anything — PolicyController does. A
// predictor that throws makes the controller fall back to a safe policy and
// log it.

import Foundation

public protocol StallPredictor: Sendable {
    /// The horizon H of the probability, seconds.
    var horizonSeconds: Double { get }
    /// A short stable name for logs (`heuristic`, `threshold`, `model:<name>@<version>`).
    var predictorName: String { get }
    /// P(stall begins in (now, now + H]), in [0, 1].
    func stallProbability(_ features: StallFeatures) throws -> Double
}

/// Why a prediction could not be made.
public enum StallPredictionError: Error, Sendable, Equatable {
    /// A required input is NaN or infinite.
    case nonFiniteFeature(StallFeatureName)
    /// The computation produced NaN or ±∞.
    case nonFiniteResult
}

/// The default horizon H, seconds (issue 5: "H configurable, default 5 s").
public let defaultStallHorizonSeconds: Double = 5

// MARK: - "Buffer below 2 s": the fixed rule to beat

/// "Buffer below `thresholdSeconds` → 1, else 0", optionally softened into a
/// linear ramp that reaches 0 at `thresholdSeconds + rampWidthSeconds`.
/// Missing inputs cannot happen: the buffer level is always known.
public struct BufferThresholdPredictor: StallPredictor {
    /// The classic rule's threshold, seconds.
    public static let defaultThresholdSeconds: Double = 2

    public var horizonSeconds: Double
    public var thresholdSeconds: Double
    /// 0 = a step (the rule as players ship it).
    public var rampWidthSeconds: Double
    public var predictorName: String { rampWidthSeconds > 0 ? "threshold-ramp" : "threshold" }

    public init(
        thresholdSeconds: Double = defaultThresholdSeconds, rampWidthSeconds: Double = 0,
        horizonSeconds: Double = defaultStallHorizonSeconds
    ) {
        self.thresholdSeconds = thresholdSeconds
        self.rampWidthSeconds = max(0, rampWidthSeconds)
        self.horizonSeconds = horizonSeconds
    }

    public func stallProbability(_ f: StallFeatures) throws -> Double {
        guard f.bufferSeconds.isFinite else { throw StallPredictionError.nonFiniteFeature(.bufferSeconds) }
        if f.bufferSeconds < thresholdSeconds { return 1 }
        guard rampWidthSeconds > 0 else { return 0 }
        return min(1, max(0, (thresholdSeconds + rampWidthSeconds - f.bufferSeconds) / rampWidthSeconds))
    }
}

// MARK: - The article's formula

/// The seed article's DemoStallPredictor, adapted to Linux:
///
///     risk = clamp(bufferPressure + bitratePressure × 0.25 + devicePenalty, 0, 1)
///     bufferPressure  = max(0, 3 − buffer) / 3
///     bitratePressure = rung bitrate ÷ estimate (the over-selection ratio)
///     devicePenalty   = the largest of the CPU-pressure, decode-lag and thermal
///                       penalties, each on the article's 0 / 0.10 / 0.25 / 0.40
///                       scale (nominal / fair / serious / critical)
///
/// Missing inputs: no estimate → bitratePressure = `missingEstimateBitratePressure`
/// (the rung is assumed to just fit); a missing device source adds no penalty.
public struct HeuristicPredictor: StallPredictor {
    /// Buffer below which buffer pressure starts, seconds (the article's 3 s).
    public static let bufferPressureSeconds: Double = 3
    /// Weight of the over-selection ratio (the article's 0.25).
    public static let bitratePressureWeight: Double = 0.25
    /// Bitrate pressure assumed when there is no estimate.
    public static let missingEstimateBitratePressure: Double = 1
    /// The article's thermal-state penalties: fair, serious, critical.
    public static let penaltyFair = 0.10, penaltySerious = 0.25, penaltyCritical = 0.40
    /// PSI cpu `some avg10` percent at which fair / serious / critical begin.
    public static let cpuPressureLevelsPercent: (fair: Double, serious: Double, critical: Double) = (10, 25, 50)
    /// Decode-lag ratio at which fair / serious / critical begin.
    public static let decodeLagLevels: (fair: Double, serious: Double, critical: Double) = (0.5, 0.8, 1.0)
    /// Thermal-zone °C at which fair / serious / critical begin.
    public static let thermalLevelsCelsius: (fair: Double, serious: Double, critical: Double) = (70, 80, 90)

    public var horizonSeconds: Double
    public var predictorName: String { "heuristic" }

    public init(horizonSeconds: Double = defaultStallHorizonSeconds) { self.horizonSeconds = horizonSeconds }

    static func penalty(_ value: Double?, _ levels: (fair: Double, serious: Double, critical: Double)) -> Double {
        guard let v = value else { return 0 }
        if v >= levels.critical { return penaltyCritical }
        if v >= levels.serious { return penaltySerious }
        if v >= levels.fair { return penaltyFair }
        return 0
    }

    /// The device penalty alone (for logs and tests).
    public static func devicePenalty(_ f: StallFeatures) -> Double {
        max(
            penalty(f.cpuPressureAvg10Percent, cpuPressureLevelsPercent),
            penalty(f.decodeLagRatio, decodeLagLevels),
            penalty(f.thermalMaxCelsius, thermalLevelsCelsius))
    }

    public func stallProbability(_ f: StallFeatures) throws -> Double {
        guard f.bufferSeconds.isFinite else { throw StallPredictionError.nonFiniteFeature(.bufferSeconds) }
        let bufferPressure = max(0, Self.bufferPressureSeconds - f.bufferSeconds) / Self.bufferPressureSeconds
        let bitratePressure = f.overSelectionRatio ?? Self.missingEstimateBitratePressure
        guard bitratePressure.isFinite else { throw StallPredictionError.nonFiniteFeature(.overSelectionRatio) }
        let risk = bufferPressure + bitratePressure * Self.bitratePressureWeight + Self.devicePenalty(f)
        guard risk.isFinite else { throw StallPredictionError.nonFiniteResult }
        return min(1, max(0, risk))
    }
}
