// `--abr NAME`: which adaptation rule chooses the rung, and the state the reference rules keep between
// decisions. Pure: the session core (SessionCore.decide) calls `decide` with the snapshot it built and the
// hlsplay rule's decision on it, and tells the state about the events it already gets (a segment landed
// with its throughput, a stall started); nothing here reads a clock.
//
// How the caps bind (docs/abr.md, "Selecting a rule"): a reference rule chooses among the ladder's video
// rungs (every rung when none has video) as if nothing capped it; its choice is then lowered to the highest
// rung at or below it that the peak-bitrate cap in force allows (startup/recovery cap, over-selection cap,
// the policy's cap, --peak-bitrate; --max-resolution has already removed rungs from the ladder). Where the
// hlsplay rule's decision is not about the estimate at all — a pinned variant, a cap below every rung, or
// an audio-only rung (the cellular fallback) — that decision stands and the rule's choice is only logged.

/// `--abr NAME`: the adaptation rule of a session.
public enum AbrRuleName: String, Sendable, Equatable, Codable, CaseIterable {
    /// hlsplay's first rule (`VariantSelector`): up-switch when a rung fits 0.7 × the estimate and the buffer
    /// holds 4 s, keep it while it fits 0.9 × (the default until hlsplay-mpc replaced it; docs/abr.md).
    case hlsplay
    /// The highest rung within 0.9 × the estimate (`ThroughputRule`).
    case throughput
    /// BOLA-BASIC on the real buffer (`BolaParameters`).
    case bola
    /// BOLA-E: placeholder, insufficient-buffer rule, oscillation guard (`BolaE`).
    case bolaE = "bola-e"
    /// dash.js's DYNAMIC: throughput at low buffer, BOLA-E at high (`DynamicRule`).
    case dynamic
    /// Model-predictive control over 5 segments (`ModelPredictiveRule`).
    case mpc
    /// MPC on the estimate divided by 1 + the largest recent prediction error (`PredictionErrorTracker`).
    case robustMPC = "robust-mpc"
    /// hlsplay's own rule and the default: RobustMPC priced in two futures weighted by the stall predictor's risk
    /// (none with the controller off), its first rung raised to the sustain floor (`RiskAwareMPC`).
    case hlsplayMPC = "hlsplay-mpc"
    /// hlsplay-mpc with the stall risk left out: its plans priced in the predicted future alone, its sustain floor
    /// never standing aside for risk (an ablation, docs/abr.md: what the risk term is worth).
    case hlsplayMPCNoRisk = "hlsplay-mpc-no-risk"

    /// The rule a session uses when `--abr` is not given (docs/abr.md, "hlsplay's default rule": on the evaluation
    /// traces it beats the reference rules and hlsplay's first rule on QoE, paired by trace).
    public static let `default`: AbrRuleName = .hlsplayMPC

    /// hlsplay-mpc and its ablation: the same rule but for the risk.
    var isHlsplayMPC: Bool { self == .hlsplayMPC || self == .hlsplayMPCNoRisk }
}

/// A reference rule's choice and what it saw, logged on `abr.decision` as `abr`.
public struct AbrRuleRecord: Sendable, Equatable, Codable {
    /// The rule's `--abr` name.
    public var rule: String
    /// The rule's own choice before the caps: the variant and its BANDWIDTH.
    public var ruleVariantIndex: Int
    public var ruleBandwidthBps: Int
    /// Why the rule chose it: `throughput`, `bola`, BOLA-E's `startup`, `bola`, `oscillationGuard`,
    /// `insufficientBuffer`, `abandoned` (the re-request after an abandonment: the rung it chose), `plan`
    /// (MPC's best plan), or hlsplay-mpc's `sustainFloor` (the rung its discounted throughput and buffer sustain over the
    /// horizon, above the plan's first rung: `RiskAwareMPC.floorRung`).
    public var reason: String
    /// The caps lowered the rule's choice to the highest rung they allow (the decision's `variantIndex`).
    public var clamped: Bool
    /// The hlsplay rule's decision stood instead (its reason: `pinned`, `capBelowLadder`, `audioOnlyUnderCap`,
    /// `audioOnlyFallback`, or `audioOnly` while playing an audio-only rung); absent: the rule decided.
    public var overriddenBy: String?
    /// The buffer the rule saw, seconds.
    public var bufferSeconds: Double
    /// The throughput the rule used, bits per second (RobustMPC: after dividing by 1 + `predictionErrorMax`).
    public var throughputBps: Double
    /// The segment duration the rule planned with, seconds.
    public var segmentDurationSeconds: Double
    /// BOLA-E: the placeholder buffer after the decision, seconds; the loader idle time it took up since the
    /// last segment landed, seconds.
    public var placeholderSeconds: Double?
    public var idleSeconds: Double?
    /// BOLA / BOLA-E: the loader waits this long before requesting the segment (the buffer is above the
    /// chosen rung's full level), seconds; 0 when the caps or the hlsplay rule changed the choice.
    public var waitSeconds: Double?
    /// DYNAMIC: which rule decided (`throughput`, `bola-e`).
    public var dynamicMode: String?
    /// MPC: the best plan's linear QoE over the horizon and the rebuffering it expects, seconds.
    public var plannedQoE: Double?
    public var plannedRebufferSeconds: Double?
    /// RobustMPC: the largest relative throughput prediction error of the recent segments.
    public var predictionErrorMax: Double?
    /// hlsplay-mpc: the stall predictor's last risk (probability of a stall within its horizon; absent: no
    /// predictor, or none evaluated yet, taken as 0), and the rebuffering the best plan expects if the link
    /// is silent for the predictor's horizon first, seconds.
    public var stallRisk: Double?
    public var riskyRebufferSeconds: Double?
    /// hlsplay-mpc with a buffer reserve (`--mpc-reserve`): the reserve, and how far the best plan ends its horizon
    /// below min(the buffer, the reserve), seconds.
    public var reserveSeconds: Double?
    public var reserveShortfallSeconds: Double?
}

/// A reference rule's abandonment of the segment request in flight (`abr.abandon`): BOLA-E's judgement
/// (`BolaAbandonment`) with the rungs as variants. Logged when the shell cancels the request on it; the
/// re-request is for `toVariantIndex` (its `abr.decision` has reason `abandoned`).
public struct AbrAbandonRecord: Sendable, Equatable, Codable {
    /// The request cancelled (set by the session core when it logs the record).
    public var requestID: Int?
    /// The `--abr` rule whose abandonment fired (`bola-e`, or `dynamic` in its BOLA-E mode).
    public var rule: String
    /// Why: `bola`, `startupThroughput` or `insufficientBuffer` (`BolaAbandonment.Reason`).
    public var reason: String
    /// The rung abandoned and the rung BOLA-E chose instead: variant and BANDWIDTH.
    public var fromVariantIndex: Int
    public var fromBandwidthBps: Int
    public var toVariantIndex: Int
    public var toBandwidthBps: Int
    /// Body bytes received and expected when judged.
    public var bytesLoaded: Int
    public var bytesTotal: Int
    /// The request's own rate since its first byte, bits per second, and that time, seconds.
    public var measuredBps: Double
    public var sinceFirstByteSeconds: Double
    /// The first-byte wait counted for a new request, seconds.
    public var latencySeconds: Double
    /// The real buffer and BOLA-E's placeholder when judged (before the abandonment deflates it), seconds.
    public var bufferSeconds: Double
    public var placeholderSeconds: Double
    public var segmentDurationSeconds: Double
    /// The whole segment's projected time at the discounted measured rate with the latency, seconds.
    public var projectedTotalSeconds: Double
    /// Bytes still to come after a new request's first-byte wait, and the bytes that could arrive within the
    /// safe fraction of the buffer.
    public var remainingAfterLatencyBytes: Double
    public var safeBytes: Double

    init(_ a: BolaAbandonment, rule: String, rungs: [LadderRung]) {
        let to = a.chosenRung ?? a.rung
        requestID = nil
        self.rule = rule
        reason = a.reason.rawValue
        (fromVariantIndex, fromBandwidthBps) = (rungs[a.rung].variantIndex, rungs[a.rung].bandwidthBps)
        (toVariantIndex, toBandwidthBps) = (rungs[to].variantIndex, rungs[to].bandwidthBps)
        (bytesLoaded, bytesTotal, measuredBps, sinceFirstByteSeconds) = (a.bytesLoaded, a.bytesTotal, a.measuredBps, a.sinceFirstByteSeconds)
        (latencySeconds, bufferSeconds, placeholderSeconds) = (a.latencySeconds, a.bufferSeconds, a.placeholderSeconds)
        (segmentDurationSeconds, projectedTotalSeconds) = (a.segmentDurationSeconds, a.projectedTotalSeconds)
        (remainingAfterLatencyBytes, safeBytes) = (a.remainingAfterLatencyBytes, a.safeBytes)
    }
}

/// The reference rule's state between decisions: BOLA-E's placeholder and last rung, DYNAMIC's mode,
/// RobustMPC's error tracker, and what the idle-time accounting needs.
public struct AbrRuleState: Sendable, Equatable {
    /// Below this buffer BOLA keeps the bottom rung, seconds (dash.js's BOLA: 10 s).
    public static let bolaMinimumBufferSeconds = 10.0
    /// BOLA chooses the top rung up to this buffer, seconds: hlsplay's automatic forward-buffer target.
    public static let bolaBufferTargetSeconds = 30.0

    public let name: AbrRuleName
    public private(set) var bolaE: BolaE?
    public private(set) var dynamic = DynamicRule()
    public private(set) var errorTracker: PredictionErrorTracker
    /// The throughput the last decision predicted for its segment (RobustMPC's error), bits per second.
    private var predictedBps: Double?
    /// When the last segment landed, and the rule's own waits since (not idle time), seconds.
    private var lastSegmentEndedAt: MonotonicInstant?
    private var ruleWaitSinceSegmentSeconds = 0.0
    /// The rungs of the last decision, ascending (one per bitrate): the positions BOLA-E's state refers to.
    private var rungs: [LadderRung] = []
    /// An abandonment the shell acted on: the next decision (the same segment, re-requested) takes its rung.
    private var pendingAbandonment: BolaAbandonment?
    /// The stall predictor's last risk (hlsplay-mpc's risk term); nil before one, or when it failed.
    public private(set) var lastStallRisk: Double?
    /// hlsplay-mpc's buffer reserve (`--mpc-reserve`), seconds; nil: none.
    public let mpcReserveSeconds: Double?

    public init(name: AbrRuleName, mpcReserveSeconds: Double? = nil) {
        self.name = name
        self.mpcReserveSeconds = mpcReserveSeconds
        errorTracker = PredictionErrorTracker(overPredictionOnly: name.isHlsplayMPC)
    }

    /// Whether a reference rule's own abandonment judges the request in flight, instead of hlsplay's
    /// over-selection abandonment: BOLA-E always, DYNAMIC while BOLA-E decides (docs/abr.md, "Abandonment").
    public var ownsAbandonment: Bool { bolaE != nil && (name == .bolaE || name == .dynamic && dynamic.usingBola) }

    /// BOLA-E's abandonment judgement of the segment request in flight (`snapshot`), when the rule owns
    /// abandonment and the request is judgeable (a rung of the ladder above the bottom, its size known, bytes in).
    public func abandonment(_ snapshot: InFlightSnapshot) -> (BolaAbandonment, AbrAbandonRecord)? {
        guard ownsAbandonment, let bola = bolaE, let total = snapshot.bytesExpected, let measured = snapshot.measuredThroughputBps,
            measured > 0, snapshot.segmentDurationSeconds > 0,
            let m = rungs.firstIndex(where: { Double($0.bandwidthBps) == snapshot.rungBitrateBps })
        else { return nil }
        let sinceFirstByte = Double(snapshot.bytesReceived) * 8 / measured
        guard
            let a = bola.abandonment(
                rung: m, bytesLoaded: snapshot.bytesReceived, bytesTotal: total, sinceFirstByteSeconds: sinceFirstByte,
                firstByteSeconds: max(0, snapshot.elapsedSeconds - sinceFirstByte), bufferSeconds: snapshot.forwardBufferSeconds,
                segmentDurationSeconds: snapshot.segmentDurationSeconds)
        else { return nil }
        return (a, AbrAbandonRecord(a, rule: name.rawValue, rungs: rungs))
    }

    /// The shell cancelled the request in flight on BOLA-E's abandonment `a` at `now`: the placeholder deflates,
    /// and the next decision re-requests the segment at the rung chosen.
    public mutating func abandoned(_ a: BolaAbandonment, at now: MonotonicInstant) {
        bolaE?.abandoned(a)
        pendingAbandonment = a
        transferCutShort(at: now)
    }

    /// A request was cut short at `now` (abandoned, wedged): the loader was busy until then, so idle time
    /// (BOLA-E's placeholder) counts from here, not from the last segment that landed.
    public mutating func transferCutShort(at now: MonotonicInstant) {
        guard lastSegmentEndedAt != nil else { return }
        lastSegmentEndedAt = now
        ruleWaitSinceSegmentSeconds = 0
    }

    /// The hlsplay rule's reasons that stand whatever a reference rule chooses.
    static let standingReasons: Set<SelectionReason> = [.pinned, .capBelowLadder, .audioOnlyUnderCap, .audioOnlyFallback]

    /// The reference rule's decision on `snapshot`, under the caps (see the file's comment); `hlsplay` is the
    /// hlsplay rule's decision on the same snapshot. Returns the decision, its record, and the wait before
    /// the request (seconds).
    public mutating func decide(
        snapshot s: SelectionSnapshot, hlsplay: SelectionDecision, segmentDurationSeconds: Double, at now: MonotonicInstant
    ) -> (SelectionDecision, AbrRuleRecord, waitSeconds: Double) {
        let video = s.ladder.filter { $0.audioOnly != true }
        let kind = (video.isEmpty ? s.ladder : video).sorted { ($0.bandwidthBps, $0.variantIndex) < ($1.bandwidthBps, $1.variantIndex) }
        // One rung per bitrate (the rules need distinct bitrates): the first variant of each.
        var rungs: [LadderRung] = []
        for r in kind where rungs.last?.bandwidthBps != r.bandwidthBps { rungs.append(r) }
        let bitrates = rungs.map { Double($0.bandwidthBps) }
        self.rungs = rungs
        if self.bolaE?.parameters.bitratesBps != bitrates { pendingAbandonment = nil }
        let current = s.currentVariantIndex.flatMap { i in rungs.firstIndex { $0.variantIndex == i } }
        let buffer = max(0, s.bufferSeconds)
        let duration = segmentDurationSeconds > 0 ? segmentDurationSeconds : 1

        var rung = 0
        var wait = 0.0
        var record = AbrRuleRecord(
            rule: name.rawValue, ruleVariantIndex: 0, ruleBandwidthBps: 0, reason: "", clamped: false, bufferSeconds: buffer,
            throughputBps: s.estimateBps, segmentDurationSeconds: duration)
        func bolaE(_ record: inout AbrRuleRecord) -> Int {
            if self.bolaE?.parameters.bitratesBps != bitrates {
                self.bolaE = BolaE(bitratesBps: bitrates, segmentDurationSeconds: duration, configuration: Self.bolaConfiguration)
            }
            // The duration as known now: the first decision's is a default (no media playlist yet).
            self.bolaE?.segmentDurationKnown(duration)
            let idle = idleSeconds(at: now)
            if idle > 0 { self.bolaE?.idled(seconds: idle) }
            let d: BolaE.Decision
            if let a = pendingAbandonment {
                pendingAbandonment = nil
                d = self.bolaE!.decideAfterAbandonment(a, bufferSeconds: buffer)
            } else {
                d = self.bolaE!.decide(bufferSeconds: buffer, throughputBps: s.estimateBps)
            }
            record.reason = d.reason.rawValue
            record.placeholderSeconds = d.placeholderSeconds
            record.idleSeconds = idle
            wait = d.waitSeconds
            return d.rung
        }
        switch name {
        case .hlsplay, .throughput:
            rung = ThroughputRule.rung(bitratesBps: bitrates, throughputBps: s.estimateBps)
            record.reason = "throughput"
        case .bola:
            let p = BolaParameters(
                bitratesBps: bitrates, minimumBufferSeconds: Self.bolaMinimumBufferSeconds, bufferTargetSeconds: Self.bolaBufferTargetSeconds)
            rung = p.rung(bufferSeconds: buffer)
            wait = max(0, buffer - p.fullBufferSeconds(forRung: rung))
            record.reason = "bola"
        case .bolaE:
            rung = bolaE(&record)
        case .dynamic:
            // The re-request after BOLA-E abandoned a segment is BOLA-E's, whichever mode the buffer now calls for.
            if dynamic.useBola(bufferSeconds: buffer) || pendingAbandonment != nil {
                rung = bolaE(&record)
                record.dynamicMode = AbrRuleName.bolaE.rawValue
            } else {
                rung = ThroughputRule.rung(bitratesBps: bitrates, throughputBps: s.estimateBps)
                record.reason = "throughput"
                record.dynamicMode = AbrRuleName.throughput.rawValue
            }
        case .hlsplayMPC, .hlsplayMPCNoRisk:
            // RobustMPC's pessimistic prediction (docs/abr.md: the plain estimate failed a tuning trace).
            let throughput = errorTracker.robust(s.estimateBps)
            record.predictionErrorMax = errorTracker.maxError
            let risk = name == .hlsplayMPC ? lastStallRisk : nil
            let d = RiskAwareMPC.decide(
                bitratesBps: bitrates, segmentDurationSeconds: duration, bufferSeconds: buffer, lastRung: current,
                throughputBps: throughput, stallRisk: risk, configuration: riskAwareConfiguration)
            rung = d.rung
            record.reason = d.floorRung > d.planRung ? "sustainFloor" : "plan"
            record.throughputBps = throughput
            record.plannedQoE = d.plannedQoE
            record.plannedRebufferSeconds = d.plannedRebufferSeconds
            record.riskyRebufferSeconds = d.riskyRebufferSeconds
            record.stallRisk = risk
            if let reserve = mpcReserveSeconds {
                record.reserveSeconds = reserve
                record.reserveShortfallSeconds = d.reserveShortfallSeconds
            }
        case .mpc, .robustMPC:
            var throughput = s.estimateBps
            if name == .robustMPC {
                throughput = errorTracker.robust(s.estimateBps)
                record.predictionErrorMax = errorTracker.maxError
            }
            var configuration = ModelPredictiveRule.Configuration()
            configuration.bufferCapacitySeconds = Self.bolaBufferTargetSeconds
            let d = ModelPredictiveRule.decide(
                bitratesBps: bitrates, segmentDurationSeconds: duration, bufferSeconds: buffer, lastRung: current,
                throughputBps: throughput, configuration: configuration)
            rung = d.rung
            record.reason = "plan"
            record.throughputBps = d.plannedThroughputBps
            record.plannedQoE = d.plannedQoE
            record.plannedRebufferSeconds = d.plannedRebufferSeconds
        }
        // hlsplay-mpc counts a prediction error only against a measured estimate: the configured default before
        // the first measurement is no prediction, and its error would discount five segments of a fast link.
        predictedBps = name.isHlsplayMPC && !s.estimateIsMeasured ? nil : s.estimateBps
        let chosen = rungs[rung]
        record.ruleVariantIndex = chosen.variantIndex
        record.ruleBandwidthBps = chosen.bandwidthBps

        // BOLA-E's oscillation guard compares against the rung actually fetched: tell it where the caps or the
        // hlsplay rule put the segment (a variant outside its rungs, an audio-only one, leaves its last rung).
        let bolaDecided = record.placeholderSeconds != nil
        func fetched(_ variantIndex: Int) {
            if bolaDecided, let position = rungs.firstIndex(where: { $0.variantIndex == variantIndex }) {
                self.bolaE?.fetched(rung: position)
            }
        }
        let onAudioOnly = s.ladder.first { $0.variantIndex == hlsplay.variantIndex }?.audioOnly == true
        if Self.standingReasons.contains(hlsplay.reason) || onAudioOnly {
            record.overriddenBy = Self.standingReasons.contains(hlsplay.reason) ? hlsplay.reason.rawValue : "audioOnly"
            record.waitSeconds = 0
            fetched(hlsplay.variantIndex)
            return (hlsplay, record, 0)
        }
        // The caps: the highest rung at or below the rule's that the cap in force allows.
        let eligible = s.peakBitrateCapBps.map { cap in rungs.filter { $0.bandwidthBps <= cap } } ?? rungs
        guard let lowest = eligible.first else {
            record.overriddenBy = SelectionReason.capBelowLadder.rawValue
            record.waitSeconds = 0
            fetched(hlsplay.variantIndex)
            return (hlsplay, record, 0)
        }
        let final = eligible.last { $0.bandwidthBps <= chosen.bandwidthBps } ?? lowest
        record.clamped = final.variantIndex != chosen.variantIndex
        fetched(final.variantIndex)
        if record.clamped { wait = 0 }
        if wait > 0 { ruleWaitSinceSegmentSeconds += wait }
        if name == .bola || name == .bolaE || record.dynamicMode == AbrRuleName.bolaE.rawValue { record.waitSeconds = wait }
        return (
            SelectionDecision(variantIndex: final.variantIndex, reason: .abrRule, sustainableVariantIndex: hlsplay.sustainableVariantIndex),
            record, wait
        )
    }

    static var bolaConfiguration: BolaE.Configuration {
        var c = BolaE.Configuration()
        c.minimumBufferSeconds = bolaMinimumBufferSeconds
        c.bufferTargetSeconds = bolaBufferTargetSeconds
        return c
    }

    var riskAwareConfiguration: RiskAwareMPC.Configuration {
        var c = RiskAwareMPC.Configuration()
        c.bufferCapacitySeconds = Self.bolaBufferTargetSeconds
        c.reserveSeconds = mpcReserveSeconds
        return c
    }

    /// The loader's idle time since the last segment landed (a full buffer, a pause), not counting the
    /// rule's own waits, seconds.
    func idleSeconds(at now: MonotonicInstant) -> Double {
        guard let ended = lastSegmentEndedAt else { return 0 }
        return max(0, now.seconds(since: ended) - ruleWaitSinceSegmentSeconds)
    }

    /// A segment landed at `endedAt` with `throughputBps` (nil: not measured): RobustMPC's error is recorded
    /// against the last prediction; idle time counts from here.
    public mutating func segmentLanded(throughputBps: Double?, at endedAt: MonotonicInstant) {
        lastSegmentEndedAt = endedAt
        ruleWaitSinceSegmentSeconds = 0
        if let predictedBps, let throughputBps {
            errorTracker.record(predictedBps: predictedBps, actualBps: throughputBps)
            self.predictedBps = nil
        }
    }

    /// The stall predictor gave `risk` (nil: it failed): hlsplay-mpc's next decision prices its plans with it.
    public mutating func stallRiskObserved(_ risk: Double?) { lastStallRisk = risk }

    /// Playback stalled: BOLA-E drops its placeholder.
    public mutating func stalled() { bolaE?.stalled() }
}
