// The policy controller (issue 5 §3): the model predicts risk, the controller
// owns the decision. A value-type state machine fed (risk, features, now) and
// returning actions; it never reads a clock and never touches the player.
//
// Rules (all thresholds inclusive on the way up, strict on the way down):
// - Escalate (to a more defensive policy) when risk ≥ that policy's enter
//   threshold; lowLatency may jump straight to defensiveDownshift.
// - De-escalate one level at a time when risk < the current policy's exit
//   threshold (exit < enter: hysteresis).
// - Cooldown: no change until `cooldownSeconds` after the previous change.
// - Dwell: no de-escalation until `minimumDwellSeconds` after entering the
//   current policy (escalations only wait for the cooldown: protection is
//   never delayed by dwell).
// - Predictor failure (nil or non-finite risk): log `predictorFailed` once per
//   failing run and move up to `failurePolicy` at once (a safety move that
//   ignores the cooldown); never move down while failing.
//
// The start: before the first start the controller is evaluated once per
// segment that lands (with the buffer it makes), and a policy's resume
// threshold then gates the start too (PolicyKnobs.startupBufferSeconds): a
// start is a resume from nothing. 7 of 22 real stalls without a controller
// came within 10 s of the start, most after a 2 s start on a link slower than
// the rung. A user's --startup-buffer wins; LL-HLS keeps its PART-HOLD-BACK.
//
// Caps: the defensive downshift caps the peak bitrate at the rung below the
// rung being fetched when it was entered (or that rung, at the bottom of the
// ladder). When a startup/recovery cap also exists, the LOWER cap wins
// (`PeakBitrateCaps`, the one cap combiner): the policy can only tighten the startup cap,
// never raise or release it, and releasing the startup cap does not release
// the policy's.

import Foundation

public struct PolicyController: Sendable, Equatable {
    public struct Configuration: Sendable, Equatable, Codable {
        /// Risk at or above which lowLatency → preload. The four risk thresholds were chosen on the training traces
        /// only; how, and what the alternatives gave: docs/stall-prediction.md, "Controller on vs off, third round".
        public var preloadEnterRisk: Double = 0.30
        /// Risk below which preload → lowLatency.
        public var preloadExitRisk: Double = 0.15
        /// Risk at or above which → defensiveDownshift.
        public var downshiftEnterRisk: Double = 0.75
        /// Risk below which defensiveDownshift → preload.
        public var downshiftExitRisk: Double = 0.55
        /// Minimum seconds between two policy changes.
        public var cooldownSeconds: Double = 3
        /// Minimum seconds in a policy before moving to a less defensive one.
        public var minimumDwellSeconds: Double = 10
        /// Policy used (at least) while the predictor fails.
        public var failurePolicy: PlaybackPolicy = .preload

        /// Knobs per policy, seconds (the downshift's cap is computed on entry). lowLatency keeps the automatic
        /// forward-buffer target (`SessionCore.automaticForwardBufferSeconds`) and the riskier policies add
        /// to it: only buffer built before a throughput drop protects. Every policy resumes at most at the
        /// uncontrolled 4 s, since nearly every stall begins in defensiveDownshift and its resume threshold sets the
        /// stall length. The values that lost, and by how much: docs/stall-prediction.md, "Controller on vs off".
        public var lowLatencyForwardBufferSeconds: Double = 30
        public var lowLatencyResumeBufferSeconds: Double = 2
        public var preloadForwardBufferSeconds: Double = 45
        public var preloadResumeBufferSeconds: Double = 4
        public var downshiftForwardBufferSeconds: Double = 60
        public var downshiftResumeBufferSeconds: Double = 4

        public init() {}

        public enum Invalid: Error, Sendable, Equatable {
            /// A threshold outside [0, 1], or exit ≥ enter, or preload's enter ≥ downshift's enter.
            case thresholds
            /// Negative cooldown or dwell, or a non-positive buffer knob.
            case durations
        }

        /// Checks the invariants (ExoPlayer's DefaultLoadControl checks its own likewise).
        public func validated() throws(Invalid) -> Configuration {
            let risks = [preloadEnterRisk, preloadExitRisk, downshiftEnterRisk, downshiftExitRisk]
            guard risks.allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= 1 }),
                preloadExitRisk < preloadEnterRisk, downshiftExitRisk < downshiftEnterRisk,
                preloadEnterRisk < downshiftEnterRisk
            else { throw .thresholds }
            let buffers = [
                lowLatencyForwardBufferSeconds, lowLatencyResumeBufferSeconds, preloadForwardBufferSeconds,
                preloadResumeBufferSeconds, downshiftForwardBufferSeconds, downshiftResumeBufferSeconds
            ]
            guard cooldownSeconds >= 0, minimumDwellSeconds >= 0, buffers.allSatisfy({ $0 > 0 }) else { throw .durations }
            return self
        }
    }

    public let configuration: Configuration
    /// Ladder BANDWIDTHs, bits per second (any order); used to find the rung below on downshift.
    public var ladderBitratesBps: [Int]

    public private(set) var policy: PlaybackPolicy
    /// When the current policy was entered (nil: the initial policy, never changed).
    public private(set) var enteredAt: MonotonicInstant?
    public private(set) var lastChangeAt: MonotonicInstant?
    /// The defensive downshift's cap, fixed on entry.
    public private(set) var downshiftCapBps: Int?
    private var failingSince: MonotonicInstant?
    private var failedUpdates = 0

    public init(
        configuration: Configuration = .init(), ladderBitratesBps: [Int], initialPolicy: PlaybackPolicy = .lowLatency
    )
        throws(Configuration.Invalid)
    {
        self.configuration = try configuration.validated()
        self.ladderBitratesBps = ladderBitratesBps
        self.policy = initialPolicy
    }

    /// True while the predictor's last update failed.
    public var isPredictorFailing: Bool { failingSince != nil }

    /// The knobs of the current policy.
    public var knobs: PolicyKnobs { knobs(for: policy) }

    public func knobs(for policy: PlaybackPolicy) -> PolicyKnobs {
        let c = configuration
        switch policy {
        case .lowLatency:
            return PolicyKnobs(
                preferredForwardBufferDurationSeconds: c.lowLatencyForwardBufferSeconds,
                peakBitrateCapBps: nil, resumeBufferSeconds: c.lowLatencyResumeBufferSeconds)
        case .preload:
            return PolicyKnobs(
                preferredForwardBufferDurationSeconds: c.preloadForwardBufferSeconds,
                peakBitrateCapBps: nil, resumeBufferSeconds: c.preloadResumeBufferSeconds)
        case .defensiveDownshift:
            return PolicyKnobs(
                preferredForwardBufferDurationSeconds: c.downshiftForwardBufferSeconds,
                peakBitrateCapBps: downshiftCapBps, resumeBufferSeconds: c.downshiftResumeBufferSeconds)
        }
    }

    /// The highest ladder rung strictly below `currentBps`, or the lowest rung
    /// when there is none below (the cap then holds the bottom rung); with an
    /// empty ladder, `currentBps` itself.
    public static func rungBelow(_ currentBps: Int, ladderBitratesBps: [Int]) -> Int {
        if let below = ladderBitratesBps.filter({ $0 < currentBps }).max() { return below }
        return ladderBitratesBps.min().map { min($0, currentBps) } ?? currentBps
    }

    /// Runs `predictor` and feeds the result (or its failure) to `update`.
    public mutating func evaluate(
        _ predictor: some StallPredictor, features: StallFeatures,
        at now: MonotonicInstant
    ) -> (risk: Double?, actions: [PolicyAction]) {
        do {
            let risk = try predictor.stallProbability(features)
            return (risk, update(risk: risk, features: features, at: now))
        } catch {
            return (nil, update(risk: nil, failure: String(describing: error), features: features, at: now))
        }
    }

    /// One controller step. `risk` nil (or non-finite) means the predictor
    /// failed; `failure` describes why, for the log.
    public mutating func update(
        risk: Double?, failure: String? = nil, features: StallFeatures,
        at now: MonotonicInstant
    ) -> [PolicyAction] {
        var actions: [PolicyAction] = []
        guard let risk, risk.isFinite else {
            failedUpdates += 1
            if failingSince == nil {
                failingSince = now
                actions.append(
                    .predictorFailed(
                        PredictorFailure(
                            atSeconds: now.seconds, error: failure ?? (risk == nil ? "no risk" : "non-finite risk"),
                            fallbackPolicy: max(policy, configuration.failurePolicy), features: features)))
            }
            if policy < configuration.failurePolicy {
                actions.append(
                    change(
                        to: configuration.failurePolicy, risk: nil, features: features,
                        reason: .predictorFailedFallback, at: now))
            }
            return actions
        }
        if let since = failingSince {
            actions.append(
                .predictorRecovered(
                    PredictorRecovery(
                        atSeconds: now.seconds, failedUpdates: failedUpdates,
                        failedForSeconds: now.seconds(since: since))))
            failingSince = nil
            failedUpdates = 0
        }

        let cooledDown = lastChangeAt.map { now.seconds(since: $0) >= configuration.cooldownSeconds } ?? true
        guard cooledDown else { return actions }
        let c = configuration

        // Escalation first: protection is never delayed by dwell.
        var up: PlaybackPolicy?
        if risk >= c.downshiftEnterRisk, policy < .defensiveDownshift {
            up = .defensiveDownshift
        } else if risk >= c.preloadEnterRisk, policy < .preload {
            up = .preload
        }
        if let up {
            actions.append(change(to: up, risk: risk, features: features, reason: .riskAboveEnterThreshold, at: now))
            return actions
        }

        let dwelt = enteredAt.map { now.seconds(since: $0) >= c.minimumDwellSeconds } ?? true
        guard dwelt else { return actions }
        switch policy {
        case .defensiveDownshift where risk < c.downshiftExitRisk:
            actions.append(change(to: .preload, risk: risk, features: features, reason: .riskBelowExitThreshold, at: now))
        case .preload where risk < c.preloadExitRisk:
            actions.append(change(to: .lowLatency, risk: risk, features: features, reason: .riskBelowExitThreshold, at: now))
        default:
            break
        }
        return actions
    }

    private mutating func change(
        to next: PlaybackPolicy, risk: Double?, features: StallFeatures,
        reason: PolicyChangeReason, at now: MonotonicInstant
    ) -> PolicyAction {
        let from = policy
        policy = next
        enteredAt = now
        lastChangeAt = now
        if next == .defensiveDownshift {
            let current = Int(saturating: max(0, features.currentRungBitrateBps.rounded()))
            downshiftCapBps = Self.rungBelow(current, ladderBitratesBps: ladderBitratesBps)
        } else {
            downshiftCapBps = nil
        }
        return .changePolicy(
            PolicyChange(
                atSeconds: now.seconds, from: from, to: next, risk: risk, features: features,
                reason: reason, knobs: knobs(for: next)))
    }
}
