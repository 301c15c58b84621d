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
        /// Risk at or above which lowLatency → preload.
        ///
        /// 0.30 / 0.15 (were 0.40 / 0.25): chosen with `hlsplay simulate` on the
        /// *training* traces at 16 start offsets (docs/stall-prediction.md,
        /// "Controller on vs off, third round"). With the start judged by the
        /// controller, 0.50 / 0.40 / 0.30 / 0.25 / 0.20 gave 409 / 400 / 389 /
        /// 385 / 385 stalls against 426 without a controller, at the same
        /// bitrate, for 0.7 / 0.9 / 1.1 / 1.2 / 1.3 s later starts; below 0.30
        /// the gain flattens while the start keeps moving.
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

        /// Knobs per policy (the downshift's cap is computed on entry), seconds.
        ///
        /// Tuned on real hlsplay runs (docs/stall-prediction.md, "Controller on
        /// vs off"). The first values (6 / 15 / 30 s forward buffer, 2 / 4 / 6 s
        /// resume) lost to the controller being off (30 s, resume 4 s) on the
        /// held-out traces: 96.7 s stalled against 43.2 s with the v1 model,
        /// 104.5 s against 44.3 s with v2. Two causes:
        /// - A stall is warned 2–3 s ahead, but it happens when throughput has
        ///   already fallen below the bottom rung; only buffer built *before*
        ///   the drop protects, and lowLatency's 6 s target kept the buffer at
        ///   ~6 s in calm periods. lowLatency now keeps the automatic target
        ///   (`PlayerConfiguration.automaticForwardBufferSeconds`, 30 s) and the
        ///   riskier policies add to it.
        /// - Nearly every stall begins in defensiveDownshift (a low buffer is
        ///   high risk), so its resume threshold sets the stall length: 6 s
        ///   doubled the time per stall (10.7 s against 4.8 s with v1) without
        ///   sparing repeat stalls. It now resumes at 4 s, like playback without a
        ///   controller; the downshift protects through its cap and buffer.
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
