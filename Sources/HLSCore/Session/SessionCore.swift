// The session core: the decision state a playing session holds and the rules
// that move it, as one value type both shells feed — PlayerSession (threads,
// libcurl, FFmpeg, a wall-clock monitor) and VirtualSession (a manual clock
// and a simulated link). It never reads a clock or performs I/O: every event
// is a mutating method that takes the time it happened and returns the
// actions for the shell to perform, in order (write an event to the log, put
// the next request on a fresh connection, cancel the request in flight).
//
// What it owns: the media clock (PlaybackTimeline), the bandwidth estimator,
// the startup/recovery cap, the over-selection cap and the recent-throughput
// evidence behind it, the network-limit coalescer, the stall predictor and
// the policy controller with its knobs, the current variant, and the last
// connection's RTT and first-byte time. What stays in a shell: requests and
// their bytes, demux and decode, playlists, live and LL-HLS pacing, the
// estimate store file — I/O, and state that only describes I/O.
//
// docs/architecture.md ("The session core") shows which event moves what.

/// What the core asks its shell to do, in order.
public enum SessionCoreAction: Sendable, Equatable {
    /// Write this event to the session log.
    case record(SessionEvent)
    /// The next request goes on a fresh connection (a wedge, or the cap's reconnect).
    case reconnectNext
    /// The policy controller changed the playback policy: the start and resume thresholds moved.
    case policyChanged
}

/// Why the core wants the request in flight cancelled.
public enum InFlightCancel: String, Sendable, Equatable {
    /// No byte for the wedge window: the same request again on a fresh connection (WedgeRules decides).
    case wedged
    /// Far below the rung's bitrate with too little buffer: abandoned, the choice capped below the rung.
    case overSelected = "over-selected"
    /// The reference rule's own abandonment (BOLA-E's, `--abr bola-e` or `dynamic` in BOLA-E mode): abandoned, the
    /// same segment re-requested at the rung the rule chose; no cap.
    case abrAbandoned = "abr-abandoned"

    /// The `request.end.cancelReason` of a request cancelled for this.
    public var requestCancelReason: RequestCancelReason {
        switch self {
        case .wedged: .wedged
        case .overSelected: .overSelected
        case .abrAbandoned: .abrAbandoned
        }
    }
}

/// The monitor's judgement of the request in flight (`SessionCore.judgeInFlight`).
public struct InFlightJudgement: Sendable, Equatable {
    /// What the byte-progress rules found, whatever they concluded.
    public var assessment: ByteProgressAssessment
    /// Cancel the request for this reason; nil: let it run (the trickle rule may still judge it).
    public var cancel: InFlightCancel?
    /// `abrAbandoned`: the reference rule's judgement, as logged (`abr.abandon`) and as its state takes it.
    public var abr: AbrAbandonRecord? = nil
    var bolaAbandonment: BolaAbandonment? = nil
}

public struct SessionCore: Sendable {
    /// The decision rules and their tunables: the parts of the player's configuration the core reads.
    public struct Configuration: Sendable, Equatable {
        public var playback: PlaybackConfiguration
        public var estimator: BandwidthEstimator.Configuration
        public var startupCap: StartupCapConfiguration
        public var networkLimit: NetworkLimitClassifier
        public var byteProgress: ByteProgressClassifier
        /// The variant selector; its up-switch safety factor also sets how far delivery evidence lifts an over-selection cap.
        public var selector: VariantSelector
        /// `--variant`: play this variant whatever the estimate (nil: choose).
        public var pinnedVariantIndex: Int?
        public var upSwitchSafetyFactor: Double { selector.upSwitchSafetyFactor }
        /// Segment transfers whose slowest throughput is the audio-only fallback's evidence, count.
        public var recentSegmentThroughputCount: Int
        /// `--peak-bitrate`: the user's own cap, bits per second (nil: none).
        public var userPeakBitrateBps: Int?
        /// The user set `--resume-buffer` / `--startup-buffer`: a policy's value does not override it.
        public var resumeBufferSetByUser: Bool
        public var startupBufferSetByUser: Bool
        /// `--abr`: the adaptation rule (hlsplay's own by default).
        public var abr: AbrRuleName = .hlsplay

        public init(
            playback: PlaybackConfiguration, estimator: BandwidthEstimator.Configuration, startupCap: StartupCapConfiguration,
            networkLimit: NetworkLimitClassifier, byteProgress: ByteProgressClassifier, selector: VariantSelector,
            pinnedVariantIndex: Int?, recentSegmentThroughputCount: Int, userPeakBitrateBps: Int?, resumeBufferSetByUser: Bool,
            startupBufferSetByUser: Bool
        ) {
            self.playback = playback
            self.estimator = estimator
            self.startupCap = startupCap
            self.networkLimit = networkLimit
            self.byteProgress = byteProgress
            self.selector = selector
            self.pinnedVariantIndex = pinnedVariantIndex
            self.recentSegmentThroughputCount = recentSegmentThroughputCount
            self.userPeakBitrateBps = userPeakBitrateBps
            self.resumeBufferSetByUser = resumeBufferSetByUser
            self.startupBufferSetByUser = startupBufferSetByUser
        }
    }

    public let configuration: Configuration
    /// The media clock: position, buffered end, phase (startingUp, playing, stalled, ended).
    public var timeline: PlaybackTimeline
    public var estimator: BandwidthEstimator
    public var capController: StartupCapController
    /// nil with `--predictor off`; set once, before the first event that uses it.
    public var predictor: (any StallPredictor)?
    public var policyController: PolicyController?
    /// The knobs of the policy in force (nil: no controller).
    public private(set) var policyKnobs: PolicyKnobs?
    /// Whether a policy's startup threshold gates the first start (false where the stream cannot hold it).
    public var policyGatesStart = true
    /// The cap an over-selection abandon set: the abandoned rung is not chosen again until fresh delivery earns it back.
    public private(set) var overSelectionCapBps: Int?
    public private(set) var recentSegmentThroughput: RecentSegmentThroughput
    public private(set) var coalescer = TransferCoalescer()
    /// Segment samples with evidence about the link (network-limited, or a lower bound): the estimate store keeps
    /// a session's estimate only when there is at least one.
    public private(set) var networkLimitedSamples = 0
    /// The first `playback.started` was logged (it carries the start wait after the first frame).
    public private(set) var playbackStartRecorded = false
    /// The variant the last selection chose.
    public var currentVariant: Int?
    /// RTT of the last connection (TCP_INFO), seconds.
    public var lastRTTSeconds: Double?
    /// First-byte time of the last segment, seconds.
    public var lastFirstByteSeconds: Double?
    /// Every rung's BANDWIDTH and the video rungs' (all rungs' when none is video), bits per second;
    /// empty until the ladder is known (`ladderKnown`).
    public private(set) var ladderBitratesBps: [Int] = []
    public private(set) var videoLadderBitratesBps: [Int] = []
    /// The reference rule's state (`--abr`; unused with hlsplay's own rule).
    public private(set) var abrRule: AbrRuleState
    /// The wait the last decision asked for before its request (BOLA, BOLA-E: the buffer is above the chosen
    /// rung's full level), seconds; the shell's loader waits it out. Always 0 with hlsplay's own rule.
    public private(set) var decisionWaitSeconds = 0.0
    /// The segment duration a reference rule plans with when the shell knows none yet (the multivariant
    /// playlist's first decision), seconds: the HLS authoring specification's recommended 6 s.
    public static let defaultSegmentDurationSeconds = 6.0

    public init(configuration: Configuration, predictor: (any StallPredictor)?) {
        self.configuration = configuration
        self.predictor = predictor
        abrRule = AbrRuleState(name: configuration.abr)
        timeline = PlaybackTimeline(configuration: configuration.playback)
        estimator = BandwidthEstimator(configuration: configuration.estimator)
        capController = StartupCapController(configuration: configuration.startupCap)
        recentSegmentThroughput = RecentSegmentThroughput(count: configuration.recentSegmentThroughputCount)
    }

    /// The estimate when it is measured; nil while it is still the default.
    public var measuredEstimateBps: Double? { estimator.hasEstimate ? estimator.estimateBps : nil }

    /// Every peak-bitrate cap in force; `effectiveBps` is the one selection uses.
    public var peakBitrateCaps: PeakBitrateCaps {
        PeakBitrateCaps(
            userBps: configuration.userPeakBitrateBps, policyBps: policyKnobs?.peakBitrateCapBps,
            overSelectionBps: overSelectionCapBps, startupBps: capController.capBps)
    }

    /// Whether the cap in force differs from the one a decision was made under: a decision made before the
    /// cap moved (while a playlist loaded, say) is made again.
    public func capMoved(since capAtDecisionBps: Int?) -> Bool { peakBitrateCaps.effectiveBps != capAtDecisionBps }

    // MARK: - Events

    /// Chooses a variant from `ladder` (the rungs selection may use) with the estimate, the buffer at `now`,
    /// every cap in force and the recent throughput; the decision becomes the current variant and is logged
    /// with its inputs (`mediaSequence`: the segment it is for, nil at the start). With a reference rule
    /// (`--abr`), that rule chooses under the caps (`AbrRuleState.decide`; `segmentDurationSeconds`: the
    /// segments' duration where the shell knows it) and `decisionWaitSeconds` is the wait it asks for.
    public mutating func decide(
        ladder: [LadderRung], at now: MonotonicInstant, mediaSequence: Int?, segmentDurationSeconds: Double? = nil
    ) -> (SelectionDecision, SessionCoreAction) {
        let snapshot = SelectionSnapshot(
            ladder: ladder, estimateBps: estimator.estimateBps, estimateIsMeasured: estimator.hasEstimate,
            bufferSeconds: timeline.bufferSeconds(at: now), currentVariantIndex: currentVariant,
            peakBitrateCapBps: peakBitrateCaps.effectiveBps, pinnedVariantIndex: configuration.pinnedVariantIndex,
            recentSegmentThroughputBps: recentSegmentThroughput.lowestBps)
        var decision = configuration.selector.select(snapshot)
        var abrRecord: AbrRuleRecord?
        if configuration.abr != .hlsplay {
            let (ruled, record, wait) = abrRule.decide(
                snapshot: snapshot, hlsplay: decision, segmentDurationSeconds: segmentDurationSeconds ?? Self.defaultSegmentDurationSeconds,
                at: now)
            decision = ruled
            abrRecord = record
            decisionWaitSeconds = wait
        }
        currentVariant = decision.variantIndex
        return (
            decision,
            .record(
                .variantDecision(
                    VariantDecisionRecord(
                        inputs: snapshot, decision: decision, estimatorFastBps: estimator.fastBps,
                        estimatorSlowBps: estimator.slowBps, mediaSequence: mediaSequence, abr: abrRecord)))
        )
    }

    /// The media clock did something (started, stalled, resumed, ended): its record, stamped in seconds since
    /// `sessionStart`; the first start carries the wait since the first frame (`firstFrameAtSeconds`, session
    /// seconds, nil before one); a stall also tells the startup/recovery cap.
    public mutating func mediaClock(_ action: PlaybackAction, sessionStart: MonotonicInstant, firstFrameAtSeconds: Double?) -> [SessionCoreAction] {
        switch action {
        case let .started(at, position, buffered):
            defer { playbackStartRecorded = true }
            return [
                .record(
                    .playbackStarted(
                        .started(
                            atSeconds: at.seconds(since: sessionStart), positionSeconds: position, bufferSeconds: buffered,
                            firstFrameAtSeconds: firstFrameAtSeconds, isFirstStart: !playbackStartRecorded)))
            ]
        case let .stallStarted(at, position):
            abrRule.stalled()
            return [.record(.stallStart(PlaybackChange(atSeconds: at.seconds(since: sessionStart), positionSeconds: position, bufferSeconds: 0)))]
                + cap(.stallStarted(estimateBps: measuredEstimateBps, at: at))
        case let .stallEnded(at, position, stall, buffered):
            return [
                .record(
                    .stallEnd(
                        PlaybackChange(
                            atSeconds: at.seconds(since: sessionStart), positionSeconds: position,
                            bufferSeconds: buffered, stallSeconds: stall)))
            ]
        case let .ended(at, position):
            return [.record(.playbackEnded(PlaybackChange(atSeconds: at.seconds(since: sessionStart), positionSeconds: position)))]
        }
    }

    /// The ladder is known (the multivariant playlist, or a media playlist played alone).
    public mutating func ladderKnown(_ rungs: [LadderRung]) {
        ladderBitratesBps = rungs.map(\.bandwidthBps)
        videoLadderBitratesBps = AudioOnlyRungs.videoRungs(rungs).map(\.bandwidthBps)
    }

    /// Starts the policy controller (nil: none) and applies its first policy's knobs.
    public mutating func policyControllerStarted(_ controller: PolicyController?) {
        policyController = controller
        if let controller { applyKnobs(controller.knobs) }
    }

    /// Feeds the startup/recovery cap and performs what is the core's to perform (seeding the estimator).
    public mutating func cap(_ event: StartupCapEvent) -> [SessionCoreAction] {
        var out: [SessionCoreAction] = []
        for action in capController.event(event) {
            switch action {
            case .setPeakBitrateCap(let change):
                out.append(.record(.capChange(change)))
            case .seedEstimator(let seed):
                if seed.resetFirst { estimator.reset() }
                if let bps = seed.bps { estimator.seed(estimateBps: bps, weightSeconds: seed.weightSeconds) }
                out.append(.record(.capEstimatorSeed(seed)))
            case .reconnect(let reconnect):
                out.append(.reconnectNext)
                out.append(.record(.capReconnect(reconnect)))
            case .log(let note):
                out.append(.record(.capNote(note)))
            }
        }
        return out
    }

    /// A request completed: its connection's RTT (when measured) is kept; a segment's or init section's
    /// throughput goes to the estimator (the verdict says whether it was taken, and the throughput as the
    /// estimator reads it, bits per second); a segment's first-byte time is kept for the stall features.
    public mutating func transferCompleted(
        purpose: RequestPurpose, sample: ThroughputSample,
        rttSeconds: Double?
    ) -> (verdict: SampleVerdict?, throughputBps: Double?) {
        if let rttSeconds, rttSeconds > 0 { lastRTTSeconds = rttSeconds }
        guard purpose == .segment || purpose == .initSection else { return (nil, nil) }
        let verdict = estimator.add(sample)
        if purpose == .segment { lastFirstByteSeconds = sample.firstByteSeconds }
        return (verdict, sample.throughputBps(minimumSeconds: configuration.estimator.minimumTransferSeconds))
    }

    /// A segment transfer completed: the estimator has had its sample (the shell adds it, as it has the
    /// timings); this judges the transfer network-limited or not (small transfers back to back are judged
    /// together), lets fresh delivery lift an over-selection cap, and tells the startup/recovery cap.
    public mutating func segmentTransferred(
        requestID: Int, observation: TransferObservation, startedAt: MonotonicInstant,
        endedAt: MonotonicInstant
    ) -> [SessionCoreAction] {
        let (classified, transfers, runStartedAt) = coalescer.observation(
            for: observation, startedAt: startedAt, endedAt: endedAt, minimumBytes: configuration.networkLimit.minimumBytes)
        let verdict = configuration.networkLimit.classify(classified)
        var out: [SessionCoreAction] = []
        abrRule.segmentLanded(
            throughputBps: observation.transferSeconds > 0 ? Double(observation.bytes) * 8 / observation.transferSeconds : nil, at: endedAt)
        if recentSegmentThroughput.add(bytes: observation.bytes, transferSeconds: observation.transferSeconds) {
            let before = overSelectionCapBps
            overSelectionCapBps = OverSelectionCap.afterRecentThroughput(
                recentSegmentThroughput.lowestBps, current: overSelectionCapBps,
                videoLadderBitratesBps: videoLadderBitratesBps, upSwitchSafetyFactor: configuration.upSwitchSafetyFactor)
            out += overSelectionCapMoved(
                from: before,
                because: String(
                    format: "the slowest of the last %d segment transfers ran at %.0f bps", recentSegmentThroughput.count,
                    recentSegmentThroughput.lowestBps ?? 0))
        }
        if let evidence = verdict.evidenceBps {
            networkLimitedSamples += 1
            // Fresh delivery earns back rungs above an over-selection cap, as far as it supports them.
            let before = overSelectionCapBps
            overSelectionCapBps = OverSelectionCap.afterEvidence(
                evidence, current: overSelectionCapBps, ladderBitratesBps: ladderBitratesBps,
                upSwitchSafetyFactor: configuration.upSwitchSafetyFactor)
            out += overSelectionCapMoved(from: before, because: String(format: "request %d delivered %.0f bps, network-limited", requestID, evidence))
        }
        out.insert(
            .record(
                .sampleVerdict(
                    SampleVerdictRecord(
                        requestID: requestID, observation: classified, verdict: verdict,
                        coalescedTransfers: transfers))), at: 0)
        out += cap(.sample(CapSample(verdict: verdict, requestStartedAt: runStartedAt, completedAt: endedAt)))
        return out
    }

    /// A note for the log when the over-selection cap moved on fresh delivery (nothing when it did not).
    private func overSelectionCapMoved(from before: Int?, because reason: String) -> [SessionCoreAction] {
        guard overSelectionCapBps != before else { return [] }
        let shown = { (bps: Int?) in bps.map { "\($0) bps" } ?? "none" }
        return [
            .record(
                .capNote(
                    CapNote(
                        kind: .overSelectionCapMoved, phase: capController.phase,
                        detail: "over-selection cap \(shown(before)) → \(shown(overSelectionCapBps)): \(reason)")))
        ]
    }

    /// The byte-progress rules on the request in flight (a segment, or a playlist with duration and rung 0).
    /// Pure: the shell cancels the request when `cancel` is set, then reports it with `inFlightCancelled`.
    /// With a reference rule that has its own abandonment (`AbrRuleState.ownsAbandonment`: BOLA-E, DYNAMIC in
    /// BOLA-E mode) that rule alone judges abandonment, as published: hlsplay's over-selection abandonment stands
    /// aside (the wedge rule, about the transport, still applies).
    public func judgeInFlight(_ snapshot: InFlightSnapshot) -> InFlightJudgement {
        let assessment = configuration.byteProgress.classify(snapshot)
        let ruleAbandons = abrRule.ownsAbandonment
        switch assessment.remedy {
        case .none:
            break
        case .reRequestOnFreshConnection:
            return InFlightJudgement(assessment: assessment, cancel: .wedged)
        case .abandonAndCap where !ruleAbandons:
            // Abandoning pays only when there is a lower rung to go to.
            let abandons = OverSelectionCap.abandons(rungBps: snapshot.rungBitrateBps, ladderBitratesBps: ladderBitratesBps)
            return InFlightJudgement(assessment: assessment, cancel: abandons ? .overSelected : nil)
        case .abandonAndCap:
            break
        }
        if ruleAbandons, let (a, record) = abrRule.abandonment(snapshot), a.abandons {
            return InFlightJudgement(assessment: assessment, cancel: .abrAbandoned, abr: record, bolaAbandonment: a)
        }
        return InFlightJudgement(assessment: assessment, cancel: nil)
    }

    /// Whether hlsplay's own abandonment rules (over-selection, the trickle rule's abandon-lower) stand aside for
    /// the reference rule's (see `judgeInFlight`).
    public var referenceRuleOwnsAbandonment: Bool { abrRule.ownsAbandonment }

    /// The shell cancelled the request in flight on the core's judgement: log it with its inputs; a wedge puts
    /// the next request on a fresh connection and tells the cap; an over-selection caps the choice below the
    /// abandoned rung and feeds the abandoned transfer's throughput to the estimator (it is evidence too).
    public mutating func inFlightCancelled(
        requestID: Int, snapshot: InFlightSnapshot, judgement: InFlightJudgement,
        at now: MonotonicInstant
    ) -> [SessionCoreAction] {
        abrRule.transferCutShort(at: now)
        if judgement.cancel == .abrAbandoned, let a = judgement.bolaAbandonment, var record = judgement.abr {
            // The reference rule's abandonment: logged with its own inputs (hlsplay's byte-progress verdict did
            // not fire); no cap, no estimator sample — the rule's next decision is the re-request's rung.
            abrRule.abandoned(a, at: now)
            record.requestID = requestID
            return [.record(.abrAbandon(record))]
        }
        var out: [SessionCoreAction] = [
            .record(
                .byteProgress(
                    ByteProgressRecord(
                        requestID: requestID, snapshot: snapshot,
                        assessment: judgement.assessment)))
        ]
        switch judgement.cancel {
        case nil, .abrAbandoned:
            break
        case .wedged:
            out.append(.reconnectNext)
            out += cap(.wedgeDetected(estimateBps: measuredEstimateBps, at: now))
        case .overSelected:
            guard case .abandonAndCap(let cap) = judgement.assessment.remedy else { break }
            out += abandonedForLowerRung(
                rungBitrateBps: snapshot.rungBitrateBps, suggestedCapBps: cap, bytesReceived: snapshot.bytesReceived,
                elapsedSeconds: snapshot.measuredThroughputBps.map { _ in snapshot.elapsedSeconds },
                measuredBps: snapshot.measuredThroughputBps, ratio: judgement.assessment.overSelectionRatio ?? 0, at: now)
        }
        return out
    }

    /// After abandoning a fetch for a lower rung (over-selected, or trickling over its budget): the choice is
    /// capped below the abandoned rung until delivery earns it back, and the transfer's throughput so far
    /// (when `elapsedSeconds` is known and bytes came) goes to the estimator.
    public mutating func abandonedForLowerRung(
        rungBitrateBps: Double, suggestedCapBps: Double, bytesReceived: Int, elapsedSeconds: Double?,
        measuredBps: Double?, ratio: Double, at now: MonotonicInstant
    ) -> [SessionCoreAction] {
        overSelectionCapBps = OverSelectionCap.afterAbandoning(
            rungBitrateBps, suggestedCapBps: suggestedCapBps, current: overSelectionCapBps,
            ladderBitratesBps: ladderBitratesBps)
        var out: [SessionCoreAction] = []
        if let elapsed = elapsedSeconds, bytesReceived > 0 {
            let partial = ThroughputSample(bytes: bytesReceived, transferSeconds: elapsed, firstByteSeconds: 0)
            let verdict = estimator.add(partial)
            let detail = String(
                format: "abandoned after %d bytes at %.0f bps (estimator: %@); choice capped at %d bps until delivery earns more",
                partial.bytes, partial.throughputBps(minimumSeconds: 0.001), verdict.rawValue, overSelectionCapBps ?? 0)
            out.append(.record(.capNote(CapNote(kind: .overSelection, phase: capController.phase, detail: detail))))
        }
        out += cap(.overSelected(suggestedCapBps: suggestedCapBps, ratio: ratio, measuredBps: measuredBps, at: now))
        return out
    }

    /// One predictor and controller step: on the monitor while playing, and before the first start once per
    /// segment that lands (with the buffer that segment makes) to judge the start. `device` carries what the
    /// shell read about the machine (nil fields where it has none).
    public mutating func policyStep(
        bufferSeconds: Double, phase: PlaybackPhase, atSegmentLanding: Bool, currentRungBps: Int?,
        inFlight: StallFeatures.InFlight?, device: DeviceReadings, at now: MonotonicInstant
    ) -> [SessionCoreAction] {
        guard let predictor, phase == .playing || atSegmentLanding && phase == .startingUp, var controller = policyController else { return [] }
        let features = StallFeatures.atTick(
            bufferSeconds: bufferSeconds, estimator: estimator, ladderBitratesBps: ladderBitratesBps, currentRungBps: currentRungBps,
            inFlight: inFlight, firstByteSeconds: lastFirstByteSeconds, rttSeconds: lastRTTSeconds,
            cpuPressureAvg10Percent: device.cpuPressureAvg10Percent, decodeLagRatio: device.decodeLagRatio,
            thermalMaxCelsius: device.thermalMaxCelsius)
        let (risk, actions) = controller.evaluate(predictor, features: features, at: now)
        policyController = controller
        abrRule.stallRiskObserved(risk)
        var changed = false
        for case .changePolicy(let change) in actions {
            applyKnobs(change.knobs)
            changed = true
        }
        var out: [SessionCoreAction] = [
            .record(
                .stallRisk(
                    StallRiskSample(
                        predictor: predictor.predictorName, risk: risk,
                        horizonSeconds: predictor.horizonSeconds,
                        policy: controller.policy, phase: phase, features: features)))
        ]
        for action in actions {
            switch action {
            case .changePolicy(let change): out.append(.record(.policyChange(change)))
            case .predictorFailed(let failure): out.append(.record(.predictorFailed(failure)))
            case .predictorRecovered(let recovery): out.append(.record(.predictorRecovered(recovery)))
            }
        }
        if changed { out.append(.policyChanged) }
        return out
    }

    /// Applies a policy's knobs to the media clock's thresholds. A value the user set on the command line wins.
    public mutating func applyKnobs(_ knobs: PolicyKnobs) {
        policyKnobs = knobs
        knobs.apply(
            to: &timeline, resumeSetByUser: configuration.resumeBufferSetByUser, startupSetByUser: configuration.startupBufferSetByUser,
            configuredStartupSeconds: configuration.playback.startupBufferSeconds, gatesStart: policyGatesStart)
    }
}

/// What a shell read about the machine for the stall predictor; nil where it has no reading (a simulated session).
public struct DeviceReadings: Sendable, Equatable {
    public var cpuPressureAvg10Percent: Double?
    public var decodeLagRatio: Double?
    public var thermalMaxCelsius: Double?
    public init(cpuPressureAvg10Percent: Double? = nil, decodeLagRatio: Double? = nil, thermalMaxCelsius: Double? = nil) {
        self.cpuPressureAvg10Percent = cpuPressureAvg10Percent
        self.decodeLagRatio = decodeLagRatio
        self.thermalMaxCelsius = thermalMaxCelsius
    }
}
