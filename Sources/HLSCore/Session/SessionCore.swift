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
    /// The trickle rule: the rest would arrive too late and there is nothing lower to go to: the same request again
    /// at once on a fresh connection (not an attempt of the retry policy).
    case trickleReRequest = "trickle-re-request"
    /// The trickle rule: still too slow after its re-requests, nothing lower: the request fails, and the session
    /// with it (`InFlightJudgement.failure` says why).
    case trickleFailed = "trickle-failed"

    /// The `request.end.cancelReason` of a request cancelled for this.
    public var requestCancelReason: RequestCancelReason {
        switch self {
        case .wedged: .wedged
        case .overSelected: .overSelected
        case .abrAbandoned: .abrAbandoned
        case .trickleReRequest: .trickleReRequest
        case .trickleFailed: .trickleFailed
        }
    }
}

/// The monitor's judgement of the request in flight (`SessionCore.judgeInFlight`).
public struct InFlightJudgement: Sendable, Equatable {
    /// What the byte-progress rules found, whatever they concluded.
    public var assessment: ByteProgressAssessment
    /// Cancel the request for this reason; nil: let it run. A trickle rule's abandon-lower cancels as `overSelected`.
    public var cancel: InFlightCancel?
    /// `abrAbandoned`: the reference rule's judgement, as logged (`abr.abandon`) and as its state takes it.
    public var abr: AbrAbandonRecord? = nil
    var bolaAbandonment: BolaAbandonment? = nil
    /// The trickle rule's judgement when it is to be logged (`request.trickle`): it acted (abandon-lower,
    /// re-request, fail), or a wait over its budget with nothing lower began. nil: the byte-progress rules
    /// cancelled, or the trickle rule had nothing to say.
    public var trickle: TrickleRecord? = nil
    /// `trickleFailed`: why the request failed, with the rule's inputs (the session's error message).
    public var failure: String? = nil
}

/// The request in flight as the trickle rule needs to know it beyond its bytes (`InFlightSnapshot`): who it is,
/// for its record and its re-requests, and whether a lower rung could take its place.
public struct InFlightRequestInfo: Sendable, Equatable {
    public var requestID: Int
    /// The request ID of the first request of this fetch: a re-request or a retry of the same resource carries it,
    /// so the trickle rule counts its re-requests per fetch (`SessionCore.TrickleFetch`).
    public var fetchID: Int
    public var purpose: RequestPurpose
    /// The URL as `request.start` logged it.
    public var url: String
    /// A segment's media sequence number (nil: unknown, or not a segment).
    public var mediaSequence: Int?
    /// The rendition it belongs to (`audio` for an alternate audio rendition); nil for the variant's own requests.
    public var track: String?
    /// BANDWIDTH of the rung being fetched, bits per second (nil: a playlist, or a rendition without one).
    public var rungBitrateBps: Double?

    public init(
        requestID: Int, fetchID: Int, purpose: RequestPurpose, url: String, mediaSequence: Int?, track: String?,
        rungBitrateBps: Double?
    ) {
        self.requestID = requestID
        self.fetchID = fetchID
        self.purpose = purpose
        self.url = url
        self.mediaSequence = mediaSequence
        self.track = track
        self.rungBitrateBps = rungBitrateBps
    }
}

/// A variant as the segments buffered from it name it (`SessionCore.lastBuffered`).
public struct BufferedVariant: Sendable, Equatable {
    public var variantIndex: Int
    /// Its BANDWIDTH, bits per second.
    public var bandwidthBps: Int
}

public struct SessionCore: Sendable {
    /// The decision rules and their tunables: the parts of the player's configuration the core reads.
    public struct Configuration: Sendable, Equatable {
        public var playback: PlaybackConfiguration
        public var estimator: BandwidthEstimator.Configuration
        public var startupCap: StartupCapConfiguration
        public var networkLimit: NetworkLimitClassifier
        public var byteProgress: ByteProgressClassifier
        /// The trickle rule for the request in flight (docs/startup-cap.md §4b).
        public var trickle = TrickleClassifier()
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
        /// `--abr`: the adaptation rule (`AbrRuleName.default` unless given).
        public var abr: AbrRuleName = .default
        /// `--mpc-reserve`: hlsplay-mpc's buffer reserve, seconds (nil: none; `RiskAwareMPC.Configuration.reserveSeconds`).
        public var mpcReserveSeconds: Double? = RiskAwareMPC.defaultReserveSeconds
        /// `--forward-buffer` (AVPlayerItem.preferredForwardBufferDuration): keep loading while the forward buffer is
        /// below this, seconds; 0: the policy's target, else `SessionCore.automaticForwardBufferSeconds`.
        public var preferredForwardBufferDurationSeconds: Double = 0
        /// `--duration`: the session ends once this much media has played, seconds (nil: at the stream's end).
        public var durationLimitSeconds: Double?

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
    /// How far each track's media reaches, and which have ended; the media clock gets their minimum.
    public private(set) var tracks = BufferedTracks()
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
    /// The trickle rule's state of the fetch in flight (nil before the rule first judged one).
    public private(set) var trickleFetch: TrickleFetch?
    /// The variant of the last segment buffered, with its BANDWIDTH (nil before the first): a segment of another
    /// variant is a `variant.switch` (`segmentBuffered`).
    public private(set) var lastBuffered: BufferedVariant?
    /// Time to first frame and its parts, seconds since the session started: filled by the start's events
    /// (`multivariantPlaylistLoaded` … `firstFrame`); the `frame.first` record and the summary carry it.
    public private(set) var breakdown = StartupBreakdown()
    /// The start and resume thresholds lowered to what the stream holds, as last logged: the value asked for.
    public private(set) var loggedThresholdClamps: [ThresholdClamp.Threshold: Double] = [:]
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
        abrRule = AbrRuleState(name: configuration.abr, mpcReserveSeconds: configuration.mpcReserveSeconds)
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
    /// `sessionStart`; the first start carries the wait since the first frame (`breakdown`); a stall also tells the
    /// startup/recovery cap.
    public mutating func mediaClock(_ action: PlaybackAction, sessionStart: MonotonicInstant) -> [SessionCoreAction] {
        let firstFrameAtSeconds = breakdown.firstFrameAtSeconds
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

    /// The estimate-availability gate is known (`lookup`: what the estimate store said for `networkKey`; nil when
    /// it was not read): its record, then the startup/recovery cap starts on `ladder`'s video rungs — a cold start
    /// probes the lowest video rung, not an audio-only fallback below it.
    public mutating func gateClassified(
        _ gate: EstimateGate, lookup: EstimateLookup?, networkKey: NetworkKey?, estimateStore: EstimateStoreConfiguration,
        ladder: [LadderRung], at now: MonotonicInstant
    ) -> [SessionCoreAction] {
        let record = GateDecisionRecord(
            gate: gate, lookup: lookup, networkKey: networkKey, mode: configuration.startupCap.mode, configuration: estimateStore)
        return [.record(.capGate(record))] + cap(.sessionStarted(gate: gate, ladder: AudioOnlyRungs.videoRungs(ladder), at: now))
    }

    // MARK: - Tracks and segment landings

    /// Both tracks start at `seconds`: the start, or a seek that dropped what was buffered (`alternateAudio`:
    /// whether an audio rendition loads beside the variant; unchanged when nil).
    public mutating func tracksPlaced(at seconds: Double, alternateAudio: Bool? = nil) {
        tracks.placed(at: seconds, alternateAudio: alternateAudio)
    }

    /// `track`'s media now reaches `end`: the media clock gets the tracks' minimum (it may start or resume).
    public mutating func trackExtended(_ track: BufferTrack, to end: Double, at now: MonotonicInstant) -> [PlaybackAction] {
        tracks.extend(track, to: end)
        return timeline.appendBuffered(upTo: tracks.combinedEndSeconds, at: now)
    }

    /// `track` has no more media (VOD): it no longer holds the other back, and when every track has ended the
    /// stream has.
    public mutating func trackEnded(_ track: BufferTrack, at now: MonotonicInstant) -> [PlaybackAction] {
        tracks.end(track)
        var actions = timeline.appendBuffered(upTo: tracks.combinedEndSeconds, at: now)
        if tracks.allEnded { actions += timeline.markEndOfStream(at: now) }
        return actions
    }

    /// A variant's segment, demuxed (`segmentDemuxed` came first), lands in the forward buffer: before the first
    /// start the controller judges the start with the buffer this segment makes (`device()` read only then); the
    /// main track reaches the segment's end; a `variant.switch` when the segment before was another variant's. In
    /// that order, as the shell performs them: the controller's records, what the media clock did (which the shell
    /// passes to `mediaClock` with its own reactions), the switch.
    public mutating func segmentLanded(
        _ landing: SegmentLanding, currentRungBps: Int?, at now: MonotonicInstant, sessionStart: MonotonicInstant,
        device: () -> DeviceReadings
    ) -> (policy: [SessionCoreAction], clock: [PlaybackAction], buffered: [SessionCoreAction]) {
        var policy: [SessionCoreAction] = []
        if timeline.phase == .startingUp, runsPolicy {
            // No request is in flight as a segment lands: the loader fetches one thing at a time.
            let bufferSeconds = tracks.bufferSeconds(mainEndingAt: landing.endSeconds, positionSeconds: timeline.positionSeconds(at: now))
            policy = policyStep(
                bufferSeconds: bufferSeconds, phase: .startingUp, atSegmentLanding: true, currentRungBps: currentRungBps, inFlight: nil,
                device: device(), at: MonotonicInstant(seconds: now.seconds(since: sessionStart)))
        }
        let clock = trackExtended(.main, to: landing.endSeconds, at: now)
        let buffered = segmentBuffered(variantIndex: landing.variantIndex, bandwidthBps: landing.bandwidthBps, startSeconds: landing.startSeconds)
        return (policy, clock, buffered)
    }

    /// A segment of variant `variantIndex` (BANDWIDTH `bandwidthBps`) was buffered from `startSeconds` on the
    /// media timeline: a `variant.switch` record when the segment buffered before it was another variant's.
    public mutating func segmentBuffered(variantIndex: Int, bandwidthBps: Int, startSeconds: Double) -> [SessionCoreAction] {
        defer { lastBuffered = BufferedVariant(variantIndex: variantIndex, bandwidthBps: bandwidthBps) }
        guard let previous = lastBuffered, previous.variantIndex != variantIndex else { return [] }
        let change = VariantSwitch(
            fromVariantIndex: previous.variantIndex, toVariantIndex: variantIndex, fromBandwidthBps: previous.bandwidthBps,
            toBandwidthBps: bandwidthBps, atPositionSeconds: startSeconds)
        return [.record(.variantSwitch(change))]
    }

    // MARK: - The start's breakdown (session seconds: since the session started)

    /// The multivariant playlist (or a media playlist played alone) arrived at `atSeconds`.
    public mutating func multivariantPlaylistLoaded(atSeconds: Double) {
        breakdown.multivariantPlaylistAtSeconds = atSeconds
        breakdown.multivariantPlaylistSeconds = atSeconds
    }

    /// The first variant's media playlist arrived at `atSeconds` (later ones change nothing); `playedAlone`: the
    /// session's URL was this media playlist, so loading it took no time of its own.
    public mutating func mediaPlaylistLoaded(atSeconds: Double, playedAlone: Bool = false) {
        guard breakdown.mediaPlaylistAtSeconds == nil else { return }
        breakdown.mediaPlaylistAtSeconds = atSeconds
        breakdown.mediaPlaylistSeconds = playedAlone ? 0 : atSeconds - (breakdown.multivariantPlaylistAtSeconds ?? 0)
    }

    /// A segment request's first byte came at `atSeconds`, before any segment was buffered (a request abandoned
    /// before the first segment was buffered is overwritten by the one that was).
    public mutating func segmentFirstByte(atSeconds: Double) {
        guard lastBuffered == nil else { return }
        breakdown.firstSegmentFirstByteAtSeconds = atSeconds
    }

    /// The first segment to be buffered finished arriving at `lastByteAtSeconds` and was demuxed by
    /// `demuxedAtSeconds` in `demuxSeconds` (before `segmentBuffered`; later segments change nothing).
    public mutating func segmentDemuxed(lastByteAtSeconds: Double, demuxedAtSeconds: Double, demuxSeconds: Double) {
        guard lastBuffered == nil else { return }
        breakdown.firstSegmentLastByteAtSeconds = lastByteAtSeconds
        breakdown.demuxedAtSeconds = demuxedAtSeconds
        breakdown.demuxSeconds = demuxSeconds
    }

    /// The first frame playback waits for was decoded at `now` (a demux-only session: the first segment buffered):
    /// the breakdown's last parts; returns the `frame.first` record and the cap's `firstFrame` actions, and what the
    /// media clock did (it may start), which the shell passes to `mediaClock` with its own reactions (live, CMCD).
    /// Nothing after the first.
    public mutating func firstFrame(
        at now: MonotonicInstant, sessionStart: MonotonicInstant, variantIndex: Int, kind: String = "video", width: Int?, height: Int?,
        ptsSeconds: Double?
    ) -> (actions: [SessionCoreAction], clock: [PlaybackAction]) {
        guard !timeline.firstFrameDecoded else { return ([], []) }
        let at = now.seconds(since: sessionStart)
        breakdown.firstFrameAtSeconds = at
        if let last = breakdown.firstSegmentLastByteAtSeconds, let first = breakdown.firstSegmentFirstByteAtSeconds {
            breakdown.firstSegmentFirstByteSeconds = first - (breakdown.mediaPlaylistAtSeconds ?? 0)
            breakdown.firstSegmentLastByteSeconds = last - first
        }
        breakdown.firstFrameDecodeSeconds = at - (breakdown.demuxedAtSeconds ?? at)
        let clock = timeline.markFirstFrameDecoded(at: now)
        let record = FirstFrame(
            timeToFirstFrameSeconds: at, variantIndex: variantIndex, kind: kind, width: width, height: height, ptsSeconds: ptsSeconds,
            breakdown: breakdown)
        return ([.record(.firstFrame(record))] + cap(.firstFrame(at: now)), clock)
    }

    /// Whether playback is over at `now`, and why: the media clock ended (`completed`: the stream's end played), or
    /// `--duration`'s media has played (`durationReached`); nil while it goes on. The monitor asks on every tick.
    public func playbackEnd(at now: MonotonicInstant) -> ExitReason? {
        if timeline.phase == .ended { return .completed }
        if let limit = configuration.durationLimitSeconds, timeline.playedSeconds(at: now) >= limit { return .durationReached }
        return nil
    }

    // MARK: - Thresholds the stream can hold

    /// What the stream can hold ahead changed (a live window's reload, the rest of a VOD after the start): the media
    /// clock's thresholds follow it; returns the `playback.threshold` records of the ones it lowers.
    public mutating func thresholdCeilingSet(_ ceiling: PlaybackThresholdCeiling?) -> [SessionCoreAction] {
        timeline.setThresholdCeiling(ceiling)
        return thresholdClamps()
    }

    /// The start and resume thresholds the ceiling lowers that the log has not said yet (`playback.threshold`): each
    /// once per value asked for; a threshold no longer lowered is forgotten, so a later lowering is said again.
    public mutating func thresholdClamps() -> [SessionCoreAction] {
        let clamps = timeline.clampedThresholds
        var fresh: [SessionCoreAction] = []
        for threshold in [ThresholdClamp.Threshold.startup, .resume] {
            guard let clamp = clamps.first(where: { $0.threshold == threshold }) else {
                loggedThresholdClamps[threshold] = nil
                continue
            }
            if loggedThresholdClamps[threshold] != clamp.requestedSeconds {
                loggedThresholdClamps[threshold] = clamp.requestedSeconds
                fresh.append(.record(.thresholdClamp(clamp)))
            }
        }
        return fresh
    }

    /// The policy controller starts (with a predictor; nothing without one) on `ladderBitratesBps`, the video rungs
    /// the shell plays: an invalid `policy` configuration falls back to the defaults, logged; the first policy's
    /// knobs apply, and the thresholds they ask for that the stream cannot hold are logged.
    public mutating func startPolicyController(_ policy: PolicyController.Configuration, ladderBitratesBps: [Int]) -> [SessionCoreAction] {
        guard predictor != nil else { return [] }
        var out: [SessionCoreAction] = []
        let controller: PolicyController?
        do {
            controller = try PolicyController(configuration: policy, ladderBitratesBps: ladderBitratesBps)
        } catch {
            controller = try? PolicyController(ladderBitratesBps: ladderBitratesBps)
            let message = "invalid policy configuration (\(error)); using the defaults"
            out.append(.record(.error(ErrorRecord(fatal: false, category: "policy", message: message))))
        }
        guard let controller else { return out }
        policyControllerStarted(controller)
        return out + thresholdClamps()
    }

    // MARK: - The forward-buffer target

    /// The forward-buffer target when the user set none and no policy is in force, seconds.
    public static let automaticForwardBufferSeconds: Double = 30

    /// The forward-buffer target, seconds: the user's (`preferredSeconds` > 0), else the policy's
    /// (`policySeconds`), else automatic; never below the startup and resume thresholds, since a target under the
    /// resume threshold would stop loading before playback could ever resume after a stall.
    public static func forwardBufferTargetSeconds(
        preferredSeconds: Double, policySeconds: Double?, startupSeconds: Double, resumeSeconds: Double
    ) -> Double {
        let target = preferredSeconds > 0 ? preferredSeconds : (policySeconds ?? automaticForwardBufferSeconds)
        return max(target, startupSeconds, resumeSeconds)
    }

    /// The forward-buffer target in force now: the user's, the policy's knobs, the media clock's thresholds (which a
    /// policy may have moved).
    public var forwardBufferTargetSeconds: Double {
        Self.forwardBufferTargetSeconds(
            preferredSeconds: configuration.preferredForwardBufferDurationSeconds,
            policySeconds: policyKnobs?.preferredForwardBufferDurationSeconds, startupSeconds: timeline.configuration.startupBufferSeconds,
            resumeSeconds: timeline.configuration.resumeBufferSeconds)
    }

    /// What the loader decides on at `now` (LoaderCore): the buffer, the target, the buffered end, the peak cap in force.
    public func loaderInputs(at now: MonotonicInstant, byteBoundHolds: Bool = false) -> LoaderCore.Inputs {
        LoaderCore.Inputs(
            bufferSeconds: timeline.bufferSeconds(at: now), forwardBufferTargetSeconds: forwardBufferTargetSeconds,
            bufferedEndSeconds: timeline.bufferedEndSeconds, peakCapBps: peakBitrateCaps.effectiveBps, byteBoundHolds: byteBoundHolds)
    }

    /// The monitor's buffer sample at `now`: the media clock, the estimate and the current variant, with what the
    /// shell knows of the request in flight (seconds since its last byte, its body bytes so far) and, live, the
    /// latency behind the program date.
    public func bufferSample(
        at now: MonotonicInstant, inFlightIdleSeconds: Double?, inFlightBytes: Int?, liveLatencySeconds: Double? = nil
    ) -> BufferSample {
        BufferSample(
            phase: timeline.phase, positionSeconds: timeline.positionSeconds(at: now), bufferedEndSeconds: timeline.bufferedEndSeconds,
            bufferSeconds: timeline.bufferSeconds(at: now), estimateBps: estimator.estimateBps, variantIndex: currentVariant,
            inFlightIdleSeconds: inFlightIdleSeconds, inFlightBytes: inFlightBytes, liveLatencySeconds: liveLatencySeconds)
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

    /// The byte-progress rules alone on the request in flight (a segment, or a playlist with duration and rung 0);
    /// a shell's monitor uses `judgeInFlight(_:request:at:)`, which adds the trickle rule. Pure: the shell cancels
    /// the request when `cancel` is set, then reports it with `inFlightJudged`.
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

    /// The trickle rule's state of one fetch: the request of it in flight, the byte samples its recent rate is
    /// measured from, the fresh-connection re-requests the rule made for the fetch, and whether the request's wait
    /// over its budget was logged. A new request of the same fetch (`InFlightRequestInfo.fetchID`) starts a new
    /// rate window and may log its wait again; the re-requests count on.
    public struct TrickleFetch: Sendable {
        public let fetchID: Int
        public fileprivate(set) var requestID: Int
        public fileprivate(set) var reRequests = 0
        public fileprivate(set) var waitLogged = false
        fileprivate var rateWindow = ByteRateWindow()
    }

    /// One monitor tick's judgement of the request in flight: the byte-progress rules (`judgeInFlight(_:)`), then,
    /// when they let it run, the trickle rule (docs/startup-cap.md §4b) on its projected completion — a segment's
    /// or a playlist's only. The trickle rule's verdicts: abandon for a lower rung (cancel `overSelected`; with a
    /// reference rule that owns abandonment it stands aside), re-request at once on a fresh connection
    /// (`trickleReRequest`, counted per fetch), fail (`trickleFailed`, with `failure`), or wait — logged once per
    /// request when the wait is over its budget. Mutating only for the rule's own state (`trickleFetch`): the shell
    /// cancels the request when `cancel` is set, then calls `inFlightJudged`.
    public mutating func judgeInFlight(
        _ snapshot: InFlightSnapshot, request: InFlightRequestInfo, at now: MonotonicInstant
    ) -> InFlightJudgement {
        var judgement = judgeInFlight(snapshot)
        guard judgement.cancel == nil else { return judgement }
        switch request.purpose {
        case .segment, .mediaPlaylist, .multivariantPlaylist: break
        case .initSection, .key, .steeringManifest: return judgement
        }
        var fetch =
            trickleFetch.flatMap { $0.fetchID == request.fetchID ? $0 : nil }
            ?? TrickleFetch(fetchID: request.fetchID, requestID: request.requestID)
        if fetch.requestID != request.requestID {
            // The same fetch asked for again: a new transfer to measure, the re-requests so far kept.
            fetch.requestID = request.requestID
            fetch.rateWindow = ByteRateWindow()
            fetch.waitLogged = false
        }
        defer { trickleFetch = fetch }
        let rule = configuration.trickle
        let wedgeWindow = judgement.assessment.wedgeWindowSeconds
        let window = rule.rateWindowSeconds(wedgeWindowSeconds: wedgeWindow)
        fetch.rateWindow.add(bytes: snapshot.bytesReceived, at: now, keepSeconds: window)
        let elapsed = snapshot.elapsedSeconds
        let waited: Double
        switch timeline.phase {
        case .playing, .ended: waited = 0
        case .startingUp: waited = elapsed
        case .stalled: waited = min(elapsed, timeline.stallStartedAt.map { max(0, now.seconds(since: $0)) } ?? elapsed)
        }
        // A lower rung helps a variant's segment only: not a pinned variant, an audio rendition or a playlist.
        let lower =
            request.purpose == .segment && request.track == nil && configuration.pinnedVariantIndex == nil
            && request.rungBitrateBps.map { rung in ladderBitratesBps.contains { Double($0) < rung } } == true
        let trickle = TrickleSnapshot(
            bytesReceived: snapshot.bytesReceived, bytesExpected: snapshot.bytesExpected, rungBitrateBps: request.rungBitrateBps,
            segmentDurationSeconds: snapshot.segmentDurationSeconds, elapsedSeconds: elapsed,
            secondsSinceLastByte: snapshot.secondsSinceLastByte, averageRateBps: snapshot.measuredThroughputBps,
            recentRateBps: fetch.rateWindow.rateBps(windowSeconds: window), rateWindowSeconds: window,
            forwardBufferSeconds: snapshot.forwardBufferSeconds, waitedSeconds: waited, lowerRungAvailable: lower,
            reRequestsSoFar: fetch.reRequests, wedgeWindowSeconds: wedgeWindow)
        let assessment = rule.classify(trickle)
        switch assessment.verdict {
        case .healthy:
            // A wait over the budget with nothing lower is logged once per request, so the log says why the player waits.
            guard assessment.reason == .overBudgetWithinPatience, !fetch.waitLogged else { return judgement }
            fetch.waitLogged = true
        case .abandonLower:
            // A reference rule with its own abandonment (BOLA-E) is evaluated as published: this stands aside.
            guard !abrRule.ownsAbandonment else { return judgement }
            judgement.cancel = .overSelected
        case .reRequest:
            judgement.cancel = .trickleReRequest
            fetch.reRequests += 1
        case .fail:
            judgement.cancel = .trickleFailed
            var what = request.purpose == .segment ? "segment \(request.mediaSequence.map(String.init) ?? "?")" : request.purpose.rawValue
            if let track = request.track { what += " (\(track))" }
            let made = fetch.reRequests
            judgement.failure =
                "\(what) \(request.url) trickled: \(assessment.summary); still too slow after \(made) fresh-connection re-request\(made == 1 ? "" : "s") and nothing lower to go to"
        }
        judgement.trickle = TrickleRecord(
            requestID: request.requestID, purpose: request.purpose.rawValue, url: request.url, snapshot: trickle, assessment: assessment)
        return judgement
    }

    /// Whether the predictor and the policy controller run (`policyStep` does something): both exist.
    public var runsPolicy: Bool { predictor != nil && policyController != nil }

    /// A monitor tick's decisions after its buffer sample, in order: the byte-progress and trickle rules on the
    /// request in flight (`checkInFlight`; the shell cuts it when the judgement's `cancel` is set), the cap's tick
    /// and its buffer reading (a ramp ends on a healthy buffer), and while playing one predictor and controller step (`policyStep`, on session time; `device()` read only
    /// then). Both shells' monitors.
    public mutating func monitorDecisions(
        bufferSeconds: Double, phase: PlaybackPhase, inFlight: MonitoredRequest?, currentRungBps: Int?, at now: MonotonicInstant,
        sessionStart: MonotonicInstant, device: () -> DeviceReadings
    ) -> (judgement: InFlightJudgement?, actions: [SessionCoreAction]) {
        var judgement: InFlightJudgement?
        var out: [SessionCoreAction] = []
        if let inFlight, inFlight.judged {
            let checked = checkInFlight(inFlight.progress, request: inFlight.request, at: now)
            (judgement, out) = (checked.judgement, checked.actions)
        }
        out += cap(.tick(now, bufferSeconds: bufferSeconds))
        if phase == .playing, runsPolicy {
            out += policyStep(
                bufferSeconds: bufferSeconds, phase: phase, atSegmentLanding: false, currentRungBps: currentRungBps,
                inFlight: inFlight?.segmentProgress, device: device(), at: MonotonicInstant(seconds: now.seconds(since: sessionStart)))
        }
        return (judgement, out)
    }

    /// The monitor's check of the request in flight, whole: `judgeInFlight(_:request:at:)`, then `inFlightJudged`
    /// on its judgement. The shell cancels the request when the judgement's `cancel` is set and performs the actions.
    public mutating func checkInFlight(
        _ snapshot: InFlightSnapshot, request: InFlightRequestInfo, at now: MonotonicInstant
    ) -> (judgement: InFlightJudgement, actions: [SessionCoreAction]) {
        let judgement = judgeInFlight(snapshot, request: request, at: now)
        return (judgement, inFlightJudged(requestID: request.requestID, snapshot: snapshot, judgement: judgement, at: now))
    }

    /// The shell performed the core's judgement of the request in flight (cancelled it when `cancel` was set): what
    /// follows. The trickle rule's judgement is logged with its inputs (`request.trickle`); its abandon-lower caps
    /// the choice below the rung at what is arriving (`abandonedForLowerRung`), its re-request puts the next request
    /// on a fresh connection. A byte-progress cancel is logged with its inputs (`request.byteProgress`); a wedge
    /// puts the next request on a fresh connection and tells the cap; an over-selection caps the choice below the
    /// abandoned rung and feeds the abandoned transfer's throughput to the estimator (it is evidence too). Nothing
    /// when the judgement let the request run silently.
    public mutating func inFlightJudged(
        requestID: Int, snapshot: InFlightSnapshot, judgement: InFlightJudgement,
        at now: MonotonicInstant
    ) -> [SessionCoreAction] {
        if let trickle = judgement.trickle {
            // A trickle cut ends a busy transfer too: idle time (BOLA-E's placeholder) counts from here.
            if judgement.cancel != nil { abrRule.transferCutShort(at: now) }
            return trickleJudged(trickle, at: now)
        }
        guard judgement.cancel != nil else { return [] }
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
        case nil, .abrAbandoned, .trickleReRequest, .trickleFailed:
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

    /// The trickle rule's judgement performed: logged; an abandon-lower caps as an over-selection does, at what is
    /// arriving, and decides again; a re-request goes on a fresh connection.
    private mutating func trickleJudged(_ record: TrickleRecord, at now: MonotonicInstant) -> [SessionCoreAction] {
        var out: [SessionCoreAction] = [.record(.trickle(record))]
        switch record.assessment.verdict {
        case .abandonLower:
            let rate = record.assessment.rateBps ?? 0
            let rung = record.snapshot.rungBitrateBps ?? 0
            out += abandonedForLowerRung(
                rungBitrateBps: rung, suggestedCapBps: rate * configuration.byteProgress.downshiftSafetyFactor,
                bytesReceived: record.snapshot.bytesReceived, elapsedSeconds: record.snapshot.elapsedSeconds,
                measuredBps: rate > 0 ? rate : nil, ratio: rate > 0 ? rung / rate : 0, at: now)
        case .reRequest:
            out.append(.reconnectNext)
        case .healthy, .fail:
            break
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
        inFlight: InFlightSnapshot?, device: DeviceReadings, at now: MonotonicInstant
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
        // A policy's thresholds may be more than the stream can hold: logged when lowered.
        if changed { out += thresholdClamps() }
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

/// The request in flight as the monitor sees it (SessionCore.monitorDecisions): which request, and its progress at
/// the tick. The in-flight rules judge it when `judged` (a segment of known duration or a playlist, not already
/// being cut; a key, an init section or a steering manifest never); the stall predictor reads a segment's progress.
public struct MonitoredRequest: Sendable, Equatable {
    public var request: InFlightRequestInfo
    /// Its bytes and times at the tick (a playlist's segment duration and rung bitrate are 0).
    public var progress: InFlightSnapshot
    public var judged: Bool

    public init(request: InFlightRequestInfo, progress: InFlightSnapshot, judged: Bool) {
        self.request = request
        self.progress = progress
        self.judged = judged
    }

    /// What the stall predictor reads of a segment's transfer (its bytes and times); nil for anything else.
    public var segmentProgress: InFlightSnapshot? { request.purpose == .segment ? progress : nil }
}

/// A variant's segment as it lands in the forward buffer (SessionCore.segmentLanded).
public struct SegmentLanding: Sendable, Equatable {
    public var variantIndex: Int
    /// The variant's BANDWIDTH, bits per second.
    public var bandwidthBps: Int
    /// Where the segment's media starts and ends on the media timeline, seconds.
    public var startSeconds: Double
    public var endSeconds: Double

    public init(variantIndex: Int, bandwidthBps: Int, startSeconds: Double, endSeconds: Double) {
        self.variantIndex = variantIndex
        self.bandwidthBps = bandwidthBps
        self.startSeconds = startSeconds
        self.endSeconds = endSeconds
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
