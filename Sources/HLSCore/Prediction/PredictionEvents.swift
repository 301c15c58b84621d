// Payloads for the session log's prediction and policy records (issue 5 §3:
// "every policy change logged with the risk and the features behind it").
// They are plain Codable values; the runtime decides how they are wrapped
// into session events (SessionEvent.swift is not changed here).

import Foundation

/// The three safe playback policies, from least to most defensive.
public enum PlaybackPolicy: String, Sendable, Equatable, Codable, CaseIterable, Comparable {
    case lowLatency
    case preload
    case defensiveDownshift

    /// 0, 1, 2: the order of protection.
    public var level: Int {
        switch self {
        case .lowLatency: 0
        case .preload: 1
        case .defensiveDownshift: 2
        }
    }

    public static func < (a: Self, b: Self) -> Bool { a.level < b.level }
}

/// The knobs a policy sets. Names follow AVFoundation so results carry over.
public struct PolicyKnobs: Sendable, Equatable, Codable {
    /// preferredForwardBufferDuration: forward buffer to aim for, seconds.
    public var preferredForwardBufferDurationSeconds: Double
    /// preferredPeakBitRate from the policy: rungs above are not eligible
    /// (bits per second; nil = the policy sets no cap). Combine with the
    /// startup/recovery cap and the others through `PeakBitrateCaps`.
    public var peakBitrateCapBps: Int?
    /// Forward buffer needed to resume after a stall, seconds
    /// (PlaybackConfiguration.resumeBufferSeconds). Before the first start it
    /// also gates the start (`startupBufferSeconds(configuredSeconds:knobs:)`).
    public var resumeBufferSeconds: Double

    public init(preferredForwardBufferDurationSeconds: Double, peakBitrateCapBps: Int?, resumeBufferSeconds: Double) {
        self.preferredForwardBufferDurationSeconds = preferredForwardBufferDurationSeconds
        self.peakBitrateCapBps = peakBitrateCapBps
        self.resumeBufferSeconds = resumeBufferSeconds
    }

    /// The startup threshold while a policy is in force before the first
    /// start: a start is a resume from nothing, so a risky one waits for the
    /// policy's resume threshold; never below the configured startup threshold
    /// (lowLatency's 2 s resume leaves the default 2 s start alone). Seconds.
    public static func startupBufferSeconds(configuredSeconds: Double, knobs: PolicyKnobs) -> Double {
        max(configuredSeconds, knobs.resumeBufferSeconds)
    }

    /// Applies these knobs' thresholds to the media clock: the resume threshold, unless the
    /// user set one (`resumeSetByUser`: the user's wins); and, before the first start, the
    /// start gate (`startupBufferSeconds(configuredSeconds:knobs:)`), unless the user set the
    /// startup threshold or the stream sets it (`gatesStart` false: LL-HLS's PART-HOLD-BACK).
    public func apply(
        to timeline: inout PlaybackTimeline, resumeSetByUser: Bool, startupSetByUser: Bool,
        configuredStartupSeconds: Double, gatesStart: Bool
    ) {
        if !resumeSetByUser {
            timeline.setResumeBufferSeconds(resumeBufferSeconds)
        }
        if timeline.phase == .startingUp, gatesStart, !startupSetByUser {
            timeline.setStartupBufferSeconds(Self.startupBufferSeconds(configuredSeconds: configuredStartupSeconds, knobs: self))
        }
    }
}

public enum PolicyChangeReason: String, Sendable, Equatable, Codable {
    /// Risk reached the next policy's enter threshold.
    case riskAboveEnterThreshold
    /// Risk fell below the current policy's exit threshold (after dwell and cooldown).
    case riskBelowExitThreshold
    /// The predictor failed; moved to the fallback policy.
    case predictorFailedFallback
}

/// One policy change, with everything behind it.
public struct PolicyChange: Sendable, Equatable, Codable {
    public var atSeconds: Double
    public var from: PlaybackPolicy
    public var to: PlaybackPolicy
    /// The risk that triggered it (nil when the predictor failed).
    public var risk: Double?
    public var features: StallFeatures
    public var reason: PolicyChangeReason
    /// The knobs now in force.
    public var knobs: PolicyKnobs

    public init(
        atSeconds: Double, from: PlaybackPolicy, to: PlaybackPolicy, risk: Double?, features: StallFeatures,
        reason: PolicyChangeReason, knobs: PolicyKnobs
    ) {
        self.atSeconds = atSeconds
        self.from = from
        self.to = to
        self.risk = risk
        self.features = features
        self.reason = reason
        self.knobs = knobs
    }
}

/// The predictor failed (threw or returned a non-finite value). Logged once at
/// the start of a failing run; `PredictorRecovery` closes the run.
public struct PredictorFailure: Sendable, Equatable, Codable {
    public var atSeconds: Double
    public var error: String
    /// The policy the controller falls back to while predictions fail.
    public var fallbackPolicy: PlaybackPolicy
    public var features: StallFeatures

    public init(atSeconds: Double, error: String, fallbackPolicy: PlaybackPolicy, features: StallFeatures) {
        self.atSeconds = atSeconds
        self.error = error
        self.fallbackPolicy = fallbackPolicy
        self.features = features
    }
}

/// Predictions work again after a failing run.
public struct PredictorRecovery: Sendable, Equatable, Codable {
    public var atSeconds: Double
    public var failedUpdates: Int
    public var failedForSeconds: Double

    public init(atSeconds: Double, failedUpdates: Int, failedForSeconds: Double) {
        self.atSeconds = atSeconds
        self.failedUpdates = failedUpdates
        self.failedForSeconds = failedForSeconds
    }
}

/// What the controller tells the runtime to do (and log).
public enum PolicyAction: Sendable, Equatable {
    /// Apply `change.knobs` and log the change.
    case changePolicy(PolicyChange)
    /// Log it; a fallback `changePolicy` may follow in the same batch.
    case predictorFailed(PredictorFailure)
    /// Log it.
    case predictorRecovered(PredictorRecovery)
}
