// The estimate-aware startup/recovery cap, as a value-type state machine.
//
// The cap is a function of one question: is there a trustworthy throughput
// estimate? Warm (a fresh stored estimate): no cap, the estimator starts from
// it. Cold (none): probe at the lowest eligible rung (or preferredPeakBitRate),
// release the probe cap on the first frame to whatever fresh network-limited
// delivery has earned, and let each further step be earned the same way.
// Recovery (after a stall, wedge, load failure or live resync: the estimate is
// suspect): demote the pre-failure estimate to a prior, cap low again, re-probe
// on a fresh connection, and ramp back only when fresh delivery confirms it.
//
// Every event is a `mutating func event(_:)` returning actions; the runtime
// performs them (set SelectionSnapshot.peakBitrateCapBps, seed the estimator,
// reconnect, log). The cap only ever narrows which rungs are eligible: no
// variant is removed. Time is passed in. Policy: docs/startup-cap.md.

import Foundation

/// `--startup-cap`.
public enum StartupCapMode: String, Sendable, Equatable, Codable, CaseIterable {
    /// The estimate-availability gate (the default).
    case auto
    /// No startup or recovery cap (warm starts still seed the estimator).
    case off
    /// AVFoundation's startsOnFirstEligibleVariant: the lowest rung until the
    /// first frame, on every start, then no cap; nothing on recovery.
    case firstVariant = "first-variant"
}

public enum StartupCapPhase: String, Sendable, Equatable, Codable {
    /// Before the session started.
    case idle
    /// No cap: warm start, mode off, or the ramp reached the top rung.
    case uncapped
    /// Cold (or first-variant) start before the first frame: the probe cap.
    case probing
    /// After the first frame or a downshift: the cap is what fresh delivery earned.
    case ramping
    /// After a failure: the probe cap on a fresh connection, the old estimate a prior.
    case recovering
}

public struct StartupCapConfiguration: Sendable, Equatable, Codable {
    public var mode: StartupCapMode = .auto
    /// preferredPeakBitRate for the probe, bits per second: when set, cold and
    /// recovery probes cap here instead of at the lowest rung.
    public var preferredPeakBitRateBps: Int?
    /// A rung is supported by a sample when its BANDWIDTH ≤ this × the
    /// sample's throughput. Same as the selector's up-switch factor, so an
    /// earned rung is one the selector would also pick. Fraction.
    public var rampSafetyFactor: Double = 0.7
    /// A rung is unlocked when this many consecutive fresh network-limited
    /// samples all support it (the lowest of them decides). Two, so one lucky
    /// burst cannot open the ladder. Count.
    public var samplesToUnlock: Int = 2
    /// Weight of a warm seed, seconds of transfer time: enough to drive the
    /// first choice, little enough that ~one segment of fresh samples
    /// outweighs it (the estimator's fast half-life is 3 s).
    public var warmSeedWeightSeconds: Double = 2
    /// Weight of the demoted prior after a failure, seconds of transfer time:
    /// a hint, outweighed by the first fresh sample.
    public var recoveryPriorWeightSeconds: Double = 0.5
    /// In recovery, fresh delivery at ≥ this share of the prior confirms that
    /// the link is unchanged (the request was lost, not the link): ramp back
    /// at once. Fraction.
    public var recoveryConfirmShare: Double = 0.8
    /// Consecutive fresh network-limited samples needed to confirm the prior. Count.
    public var recoveryConfirmSamples: Int = 2
    /// Seconds after entering recovery when an unconfirmed prior is dropped:
    /// the link has not come back at its old rate; from then on the ramp is
    /// earned on evidence only.
    public var recoveryPriorLifetimeSeconds: Double = 30
    /// A ramp (not a recovery) ends — no cap — once the forward buffer holds this many seconds: the buffer is
    /// the margin then, and the rule's own choice may go above what two deliveries at 1/`rampSafetyFactor` of a
    /// rung have earned (on a link carrying 1.0–1.43× the next rung the ramp never earns it). nil: the ramp
    /// ends only when earned. Seconds of media ahead of the playhead. 20 s: chosen on the ABR tuning traces
    /// (docs/startup-cap.md, "Release on a healthy buffer").
    public var rampReleaseBufferSeconds: Double? = 20

    public init(mode: StartupCapMode = .auto, preferredPeakBitRateBps: Int? = nil) {
        self.mode = mode
        self.preferredPeakBitRateBps = preferredPeakBitRateBps
    }
}

/// A finished transfer, as the cap controller sees it.
public struct CapSample: Sendable, Equatable {
    public var verdict: NetworkLimitVerdict
    /// When the request began: samples from requests that began before the
    /// current probe are not fresh.
    public var requestStartedAt: MonotonicInstant
    public var completedAt: MonotonicInstant
    public init(verdict: NetworkLimitVerdict, requestStartedAt: MonotonicInstant, completedAt: MonotonicInstant) {
        self.verdict = verdict
        self.requestStartedAt = requestStartedAt
        self.completedAt = completedAt
    }
}

public enum StartupCapEvent: Sendable, Equatable {
    /// The session starts with this gate and ladder.
    case sessionStarted(gate: EstimateGate, ladder: [LadderRung], at: MonotonicInstant)
    /// The first frame was decoded.
    case firstFrame(at: MonotonicInstant)
    /// A throughput sample with its network-limited verdict.
    case sample(CapSample)
    /// Playback failed: the estimate is suspect. `estimateBps` is the
    /// pre-failure estimate (nil when it was still the estimator's default).
    case failure(RecoveryReason, estimateBps: Double?, at: MonotonicInstant)
    /// The byte-progress classifier found the in-flight request over-selected.
    /// `measuredBps`: the abandoned transfer's own throughput, when known.
    case overSelected(suggestedCapBps: Double, ratio: Double, measuredBps: Double? = nil, at: MonotonicInstant)
    /// The wall-clock monitor's tick, with its reading of the forward buffer: seconds of media ahead of the playhead
    /// (nil: not read; a ramp's release on a healthy buffer needs it).
    case tick(MonotonicInstant, bufferSeconds: Double? = nil)

    public static func stallStarted(estimateBps: Double?, at: MonotonicInstant) -> Self { .failure(.stall, estimateBps: estimateBps, at: at) }
    public static func wedgeDetected(estimateBps: Double?, at: MonotonicInstant) -> Self { .failure(.wedge, estimateBps: estimateBps, at: at) }
    public static func loadFailed(estimateBps: Double?, at: MonotonicInstant) -> Self { .failure(.loadFailure, estimateBps: estimateBps, at: at) }
    public static func liveResync(estimateBps: Double?, at: MonotonicInstant) -> Self { .failure(.liveResync, estimateBps: estimateBps, at: at) }
}

public enum StartupCapAction: Sendable, Equatable {
    /// Set SelectionSnapshot.peakBitrateCapBps to `capBps` (nil: no cap).
    case setPeakBitrateCap(CapChangeRecord)
    case seedEstimator(EstimatorSeedRecord)
    /// Abandon the current connection; the next request goes on a fresh one.
    case reconnect(ReconnectRecord)
    case log(CapNote)
}

public struct StartupCapController: Sendable, Equatable {
    public let configuration: StartupCapConfiguration
    public private(set) var phase: StartupCapPhase = .idle
    /// The current cap, bits per second (nil: none). Feed it to SelectionSnapshot.peakBitrateCapBps.
    public private(set) var capBps: Int?
    /// The demoted pre-failure estimate while recovering, bits per second.
    public private(set) var priorBps: Double?
    public private(set) var recoveryReason: RecoveryReason?
    /// Fresh network-limited throughputs, oldest first (at most max(samplesToUnlock, recoveryConfirmSamples)).
    public private(set) var streakBps: [Double] = []

    /// Ladder BANDWIDTHs, ascending, distinct.
    private var rungs: [Int] = []
    /// Samples from requests begun before this instant are not fresh.
    private var freshSince = MonotonicInstant(nanoseconds: 0)
    private var recoveryStartedAt: MonotonicInstant?
    /// The cap before the failure (restored on confirmation); `.some(nil)` = it was uncapped.
    private var preFailureCap: Int??
    /// Whether a frame has been decoded yet (an over-selection before it is a failed start).
    private var firstFrameSeen = false

    public init(configuration: StartupCapConfiguration = .init()) {
        self.configuration = configuration
    }

    /// The cap the probe uses: preferredPeakBitRate, else the lowest rung.
    public var probeCapBps: Int? { configuration.preferredPeakBitRateBps ?? rungs.first }

    /// `snapshot` with this controller's cap applied (the lower of any cap it already has).
    public func applying(to snapshot: SelectionSnapshot) -> SelectionSnapshot {
        var s = snapshot
        s.peakBitrateCapBps = PeakBitrateCaps.lowest([capBps, s.peakBitrateCapBps])
        return s
    }

    /// The cap that a streak supporting `supportBps` earns: the highest rung
    /// with BANDWIDTH ≤ rampSafetyFactor × supportBps; nil when that is the top rung.
    public func earnedCap(supportBps: Double) -> Int? {
        let limit = configuration.rampSafetyFactor * supportBps
        guard let top = rungs.last else { return nil }
        guard let earned = rungs.last(where: { Double($0) <= limit }) else { return rungs.first }
        return earned == top ? nil : earned
    }

    public mutating func event(_ e: StartupCapEvent) -> [StartupCapAction] {
        switch e {
        case .sessionStarted(let gate, let ladder, let at):
            return sessionStarted(gate: gate, ladder: ladder, at: at)
        case .firstFrame:
            return firstFrame()
        case .sample(let s):
            return sample(s)
        case .failure(let reason, let estimate, let at):
            return failure(reason, estimateBps: estimate, at: at)
        case .overSelected(let suggested, let ratio, let measured, let at):
            return overSelected(suggestedCapBps: suggested, ratio: ratio, measuredBps: measured, at: at)
        case .tick(let now, let bufferSeconds):
            return tick(now) + (bufferSeconds.map { bufferLevel($0) } ?? [])
        }
    }

    /// A ramp ends once the buffer holds `rampReleaseBufferSeconds`; a recovery keeps its cap until fresh
    /// delivery confirms or earns it.
    private mutating func bufferLevel(_ seconds: Double) -> [StartupCapAction] {
        guard phase == .ramping, capBps != nil, let release = configuration.rampReleaseBufferSeconds, seconds >= release else { return [] }
        return [setCap(nil, reason: .releasedOnHealthyBuffer, phase: .uncapped)]
    }

    // MARK: - Events

    private mutating func sessionStarted(gate: EstimateGate, ladder: [LadderRung], at: MonotonicInstant) -> [StartupCapAction] {
        rungs = Array(Set(ladder.map(\.bandwidthBps))).sorted()
        freshSince = at
        streakBps = []
        priorBps = nil
        recoveryReason = nil
        recoveryStartedAt = nil
        preFailureCap = nil
        var actions: [StartupCapAction] = [
            .log(CapNote(kind: .gate, phase: phase, detail: "gate \(gate.kind), mode \(configuration.mode.rawValue), \(rungs.count) rungs"))
        ]
        if case .warm(let record) = gate {
            actions.append(
                .seedEstimator(
                    EstimatorSeedRecord(
                        resetFirst: false, bps: record.valueBps,
                        weightSeconds: configuration.warmSeedWeightSeconds, reason: .warmStart)))
        }
        switch configuration.mode {
        case .off:
            actions.append(setCap(nil, reason: .policyOff, phase: .uncapped))
        case .firstVariant:
            actions.append(setCap(rungs.first, reason: .firstVariantProbe, phase: .probing))
        case .auto:
            switch gate {
            case .warm:
                actions.append(setCap(nil, reason: .warmEstimate, phase: .uncapped))
            case .cold:
                actions.append(setCap(probeCapBps, reason: .coldProbe, phase: .probing))
            case .recovery(let reason, let prior):
                phase = .probing
                capBps = probeCapBps
                actions += enterRecovery(reason, estimateBps: prior, at: at)
            }
        }
        return actions
    }

    private mutating func firstFrame() -> [StartupCapAction] {
        firstFrameSeen = true
        guard phase == .probing else { return [] }
        switch configuration.mode {
        case .firstVariant:
            return [setCap(nil, reason: .releasedOnFirstFrame, phase: .uncapped)]
        case .off:
            return []
        case .auto:
            guard streakBps.count >= configuration.samplesToUnlock, let support = streakBps.min() else {
                phase = .ramping
                return [
                    .log(
                        CapNote(
                            kind: .firstFrameCapHeld, phase: phase,
                            detail:
                                "\(streakBps.count) of \(configuration.samplesToUnlock) fresh network-limited samples; cap held at \(capBps.map(String.init) ?? "none")"
                        ))
                ]
            }
            let earned = higher(earnedCap(supportBps: support), than: capBps)
            return [setCap(earned, reason: .releasedOnFirstFrame, phase: earned == nil ? .uncapped : .ramping, support: support)]
        }
    }

    private mutating func sample(_ s: CapSample) -> [StartupCapAction] {
        guard configuration.mode == .auto, phase != .idle else { return [] }
        guard let bps = s.verdict.evidenceBps else { return [] }
        guard s.requestStartedAt >= freshSince else {
            return [
                .log(
                    CapNote(
                        kind: .staleSample, phase: phase,
                        detail: "request began \(s.requestStartedAt) before the probe began \(freshSince)"))
            ]
        }
        streakBps.append(bps)
        let keep = max(configuration.samplesToUnlock, configuration.recoveryConfirmSamples, 1)
        if streakBps.count > keep { streakBps.removeFirst(streakBps.count - keep) }

        switch phase {
        case .idle, .uncapped, .probing:
            return []
        case .ramping:
            return rampIfEarned()
        case .recovering:
            if let prior = priorBps, streakBps.count >= configuration.recoveryConfirmSamples,
                streakBps.suffix(configuration.recoveryConfirmSamples).allSatisfy({ $0 >= configuration.recoveryConfirmShare * prior })
            {
                let support = streakBps.suffix(configuration.recoveryConfirmSamples).min()!
                let restored: Int? = preFailureCap.flatMap { $0 }.map { higher(earnedCap(supportBps: support), than: $0) } ?? nil
                let record = change(restored, reason: .recoveryConfirmed, phase: restored == nil ? .uncapped : .ramping, support: support)
                priorBps = nil
                recoveryReason = nil
                recoveryStartedAt = nil
                preFailureCap = nil
                return [.setPeakBitrateCap(record)]
            }
            return rampIfEarned()
        }
    }

    private mutating func failure(_ reason: RecoveryReason, estimateBps: Double?, at: MonotonicInstant) -> [StartupCapAction] {
        guard configuration.mode == .auto, phase != .idle else {
            return [.log(CapNote(kind: .ignoredByMode, phase: phase, detail: "\(reason.rawValue) in mode \(configuration.mode.rawValue)"))]
        }
        return enterRecovery(reason, estimateBps: estimateBps, at: at)
    }

    private mutating func overSelected(suggestedCapBps: Double, ratio: Double, measuredBps: Double?, at: MonotonicInstant) -> [StartupCapAction] {
        guard configuration.mode == .auto, phase != .idle else {
            return [
                .log(CapNote(kind: .ignoredByMode, phase: phase, detail: "over-selection (ratio \(ratio)) in mode \(configuration.mode.rawValue)"))
            ]
        }
        if !firstFrameSeen {
            // Before the first frame the buffer is empty and the estimate that
            // chose the rung is proven wrong: re-probe at the lowest rung (the
            // fastest first frame), with the abandoned transfer's own
            // throughput as the prior to confirm — not the estimate.
            var actions = enterRecovery(.startupOverSelection, estimateBps: measuredBps, at: at)
            for i in actions.indices {
                if case .setPeakBitrateCap(var record) = actions[i] {
                    record.overSelectionRatio = ratio
                    actions[i] = .setPeakBitrateCap(record)
                }
            }
            return actions
        }
        let target = rungs.last(where: { Double($0) <= suggestedCapBps }) ?? rungs.first
        guard let target, target < (capBps ?? Int.max) else { return [] }
        freshSince = at
        streakBps = []
        let nextPhase: StartupCapPhase = phase == .recovering ? .recovering : .ramping
        var record = change(target, reason: .overSelectionDownshift, phase: nextPhase)
        record.overSelectionRatio = ratio
        return [.setPeakBitrateCap(record)]
    }

    private mutating func tick(_ now: MonotonicInstant) -> [StartupCapAction] {
        guard phase == .recovering, let prior = priorBps, let started = recoveryStartedAt,
            now.seconds(since: started) >= configuration.recoveryPriorLifetimeSeconds
        else { return [] }
        priorBps = nil
        return [
            .log(
                CapNote(
                    kind: .priorExpired, phase: phase,
                    detail:
                        "no fresh delivery at ≥ \(configuration.recoveryConfirmShare) × prior \(Int(saturating: prior)) bps within \(configuration.recoveryPriorLifetimeSeconds) s; cap stays \(capBps.map(String.init) ?? "none"), ramp on evidence only"
                ))
        ]
    }

    // MARK: - Helpers

    private mutating func enterRecovery(_ reason: RecoveryReason, estimateBps: Double?, at: MonotonicInstant) -> [StartupCapAction] {
        var actions: [StartupCapAction] = []
        let wasRecovering = phase == .recovering
        if wasRecovering {
            // Keep the first (pre-failure) prior and the cap to restore; renew the connection and the probe.
            actions.append(
                .log(
                    CapNote(
                        kind: .repeatedFailure, phase: phase,
                        detail: "\(reason.rawValue) while recovering from \(recoveryReason?.rawValue ?? "?")")))
        } else {
            preFailureCap = .some(capBps)
            let valid = estimateBps.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
            priorBps = valid
            recoveryStartedAt = at
        }
        recoveryReason = reason
        freshSince = at
        streakBps = []
        let probe = probeCapBps
        let capped = min(probe ?? Int.max, capBps ?? Int.max)
        actions.append(setCap(capped == Int.max ? nil : capped, reason: .recoveryProbe, phase: .recovering))
        if !wasRecovering {
            actions.append(
                .seedEstimator(
                    EstimatorSeedRecord(
                        resetFirst: true, bps: priorBps,
                        weightSeconds: configuration.recoveryPriorWeightSeconds, reason: .recoveryPrior)))
        }
        actions.append(.reconnect(ReconnectRecord(reason: reason, priorBps: priorBps)))
        return actions
    }

    private mutating func rampIfEarned() -> [StartupCapAction] {
        guard streakBps.count >= configuration.samplesToUnlock,
            let support = streakBps.suffix(configuration.samplesToUnlock).min()
        else { return [] }
        let earned = earnedCap(supportBps: support)
        guard isHigher(earned, than: capBps) else { return [] }
        // A live prior keeps the recovery open (fresh delivery may still confirm it).
        let nextPhase: StartupCapPhase = earned == nil ? .uncapped : (phase == .recovering && priorBps != nil ? .recovering : .ramping)
        if nextPhase != .recovering {
            priorBps = nil
            recoveryReason = nil
            recoveryStartedAt = nil
            preFailureCap = nil
        }
        return [.setPeakBitrateCap(change(earned, reason: .earnedStep, phase: nextPhase, support: support))]
    }

    /// nil (no cap) is the highest.
    private func isHigher(_ a: Int?, than b: Int?) -> Bool {
        switch (a, b) {
        case (nil, nil): false
        case (nil, _): true
        case (_, nil): false
        case let (x?, y?): x > y
        }
    }

    private func higher(_ a: Int?, than b: Int?) -> Int? { isHigher(a, than: b) ? a : b }

    private mutating func setCap(_ cap: Int?, reason: CapReason, phase next: StartupCapPhase, support: Double? = nil) -> StartupCapAction {
        .setPeakBitrateCap(change(cap, reason: reason, phase: next, support: support))
    }

    private mutating func change(_ cap: Int?, reason: CapReason, phase next: StartupCapPhase, support: Double? = nil) -> CapChangeRecord {
        let previous = capBps
        capBps = cap
        phase = next
        return CapChangeRecord(
            capBps: cap, previousCapBps: previous, reason: reason, phase: next, supportBps: support,
            samplesBps: streakBps, priorBps: priorBps)
    }
}
