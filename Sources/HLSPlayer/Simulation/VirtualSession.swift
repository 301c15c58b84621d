// A session in virtual time (issue 5 §4): the player's decision code — the
// estimator, the selector, the startup/recovery cap, the network-limit and
// byte-progress classifiers, the media clock, the stall predictor and the
// policy controller, with the configuration the real player would use — run
// against a trace-driven link and a real ladder's segment sizes, as fast as
// the CPU goes. It writes the same session log as a real session.
//
// What it orders like PlayerSession (demux-only VOD): the loader (multivariant
// playlist → gate → decide → media playlist → segments while the buffer is
// under the forward-buffer target, polling every `session.loaderPollSeconds` when it is
// full; a switch loads the new variant's playlist and decides again if the
// cap moved meanwhile) and the monitor (every `monitorIntervalSeconds`:
// advance the media clock, sample the buffer, the byte-progress rules on the
// in-flight segment, the cap's tick, the predictor and controller, the
// duration limit). A segment is playable once its last byte arrives (demux
// takes no virtual time); the first frame is the first segment buffered.
//
// What it leaves out, on purpose: live and LL-HLS, alternate audio, keys and
// init sections, HTTP errors and their retries (a playlist wedged past its
// re-requests is the one failure it retries, as PlayerSession does),
// failover, libcurl's own timeouts (the byte-progress wedge rule fires
// first), decoding, and the CPU: on a
// loaded machine a real session also loses time to scheduling, which is the
// gap docs/stall-prediction.md measures.

import Foundation
import HLSCore

public final class VirtualSession {
    public let configuration: PlayerConfiguration
    public let ladder: SimulatedLadder
    /// Describes the link in the log header (e.g. the trace file).
    public let linkDescription: String

    /// The TCP round-trip time the real runs measure: the origin is on loopback and adds the trace's latency
    /// above TCP, so TCP_INFO reports microseconds (the latency shows in the first-byte time instead).
    static let loopbackRTTSeconds = 0.000_05
    /// A session that has not reached its end after this much virtual time stops (a dead link never delivers).
    static let virtualTimeLimitSeconds = 6 * 3600.0

    private let clock = ManualClock()
    private let recorder: SessionRecorder
    private var connection: SimulatedConnection
    private var link: any SimulatedLink { connection.link }

    // Decision state: the same value types PlayerSession holds.
    private var timeline: PlaybackTimeline
    private var estimator: BandwidthEstimator
    private var capController: StartupCapController
    private var predictor: (any StallPredictor)?
    private var policyController: PolicyController?
    private var policyKnobs: PolicyKnobs?
    private var overSelectionCapBps: Int?
    private var recentSegmentThroughput: RecentSegmentThroughput
    private var currentVariant: Int?
    private var lastFirstByteSeconds: Double?
    private var lastRTTSeconds: Double?
    private var networkLimitedSamples = 0
    private var coalescer = TransferCoalescer()
    private var breakdown = StartupBreakdown()
    /// The first `playback.started` was logged (it carries the start wait after the first frame).
    private var playbackStartRecorded = false

    // Loader state.
    private enum Work: Equatable {
        case multivariant
        case mediaPlaylist(variant: Int, afterStartup: Bool, capAtDecision: Int?)
        case segment(variant: Int, index: Int)
    }
    private struct InFlight {
        var requestID: Int
        var work: Work
        var transfer: SimulatedTransfer
        var abort: InFlightRequest.Abort?
    }
    private var inFlight: InFlight?
    private var loaderWakeAt = 0.0
    private var nextRequestID = 1
    private var nextSegmentIndex = 0
    private var loadedPlaylists: Set<Int> = []
    private var currentLoadVariant: Int?
    private var pendingDecision: SelectionDecision?
    private var lastBufferedVariant: Int?
    private var wedgeReRequests = 0
    /// Attempts of the retry policy made for the request in flight or waiting (re-requests are not attempts).
    private var attempts = 1
    /// A request waiting out the retry policy's backoff, sent when the loader wakes.
    private var pendingRetry: Work?
    private var abandonedAttempts: [Int: Int] = [:]
    private var firstSegmentFetched = false
    private var loaderDone = false

    private var stopReason: ExitReason?
    private var stopError: String?

    public init(configuration: PlayerConfiguration, ladder: SimulatedLadder, link: any SimulatedLink, linkDescription: String,
                logPath: String?) throws {
        self.configuration = configuration
        self.ladder = ladder
        self.linkDescription = linkDescription
        connection = SimulatedConnection(link: link)
        recorder = try SessionRecorder(logPath: logPath, harPath: nil, clock: clock, sessionStart: clock.now(), wallStart: Date(),
                                       outgoing: OutgoingText(redactsURLs: configuration.redactURLs))
        timeline = PlaybackTimeline(configuration: configuration.playback)
        estimator = BandwidthEstimator(configuration: configuration.estimator)
        capController = StartupCapController(configuration: configuration.startupCap)
        recentSegmentThroughput = RecentSegmentThroughput(count: configuration.session.recentSegmentThroughputCount)
    }

    private var now: MonotonicInstant { clock.now() }
    private var nowSeconds: Double { clock.now().seconds }
    private var rungs: [LadderRung] {
        ladder.variants.enumerated().map { i, v in
            LadderRung(variantIndex: i, bandwidthBps: v.bandwidthBps, width: v.resolution?.width, height: v.resolution?.height,
                       audioOnly: v.audioOnly)
        }
    }
    private var ladderBitratesBps: [Int] { ladder.variants.map(\.bandwidthBps) }
    /// The video rungs' BANDWIDTHs (all rungs' when none is video): what the startup cap ramps
    /// through and the policy controller steps between (PlayerSession.videoLadderBitratesBps).
    private var videoLadderBitratesBps: [Int] { AudioOnlyRungs.videoRungs(rungs).map(\.bandwidthBps) }

    /// Plays the session to its end (the stream's end, `--duration`, or the virtual time limit).
    public func run() -> SessionSummary {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var header = SessionHeader(hlsplayVersion: hlsplayVersion, url: configuration.url.absoluteString,
                                   startedAt: formatter.string(from: Date()), configuration: configuration,
                                   host: HostInfo.current(ffmpeg: "none (virtual time)", libcurl: "none (virtual time)"))
        header.simulation = SimulationHeader(ladder: ladder.name, link: linkDescription)
        recorder.writeHeader(header)
        let (chosen, problem) = SessionDecisions.makePredictor(configuration, defaultModelPath: ModelLocator.defaultModelPath)
        predictor = chosen
        if let problem { recorder.record(.error(ErrorRecord(fatal: false, category: "predictor", message: problem))) }

        request(.multivariant)
        let interval = configuration.monitorIntervalSeconds
        var nextTick = interval
        while stopReason == nil {
            let loaderAt = loaderDone ? Double.infinity : (inFlight.map { $0.abort != nil ? nowSeconds : $0.transfer.completesAt } ?? loaderWakeAt)
            if nextTick <= loaderAt {
                guard nextTick <= Self.virtualTimeLimitSeconds else {
                    stop(.error, "no end after \(Int(Self.virtualTimeLimitSeconds)) s of virtual time (the link delivers too little)")
                    break
                }
                set(nextTick)
                monitorTick()
                nextTick += interval
            } else {
                set(loaderAt)
                loaderStep()
            }
        }
        return finish()
    }

    private func set(_ seconds: Double) {
        let delta = seconds - nowSeconds
        if delta > 0 { clock.advance(bySeconds: delta) }
    }

    private func stop(_ reason: ExitReason, _ error: String? = nil) {
        if stopReason == nil {
            stopReason = reason
            stopError = error
        }
    }

    private func finish() -> SessionSummary {
        if let f = inFlight {
            recorder.record(.requestEnd(RequestEnd(requestID: f.requestID, url: url(for: f.work), purpose: purpose(of: f.work),
                                                   status: nil, bytes: f.transfer.bodyBytesReceived(at: nowSeconds, link: link),
                                                   ok: false, errorKind: .cancelled, errorMessage: "session stopped")))
        }
        record(timeline.finish(at: now))
        recorder.record(.decodeStats(DecodeStats(videoFrames: 0, audioFrames: 0, lateVideoFrames: 0, decodeErrors: 0)))
        recorder.setBreakdown(breakdown)
        let (start, position, estimate) = (timeline.startPositionSeconds, timeline.positionSeconds(at: now),
                                           estimator.hasEstimate ? estimator.estimateBps : nil)
        return recorder.finish { builder in
            builder.summary(url: configuration.url.absoluteString, isLive: false, exitReason: stopReason ?? .completed, error: stopError,
                            startPositionSeconds: start, finalPositionSeconds: position,
                            sessionSeconds: nowSeconds, finalEstimateBps: estimate)
        }
    }

    // MARK: - Monitor (PlayerSession.monitorTick)

    private func monitorTick() {
        record(timeline.advance(to: now))
        let transfer = inFlight?.transfer
        let received = transfer.map { $0.bodyBytesReceived(at: nowSeconds, link: link) }
        let sample = BufferSample(
            phase: timeline.phase, positionSeconds: timeline.positionSeconds(at: now),
            bufferedEndSeconds: timeline.bufferedEndSeconds, bufferSeconds: timeline.bufferSeconds(at: now),
            estimateBps: estimator.estimateBps, variantIndex: currentVariant,
            inFlightIdleSeconds: transfer.map { nowSeconds - $0.lastByteAt(at: nowSeconds, link: link) }, inFlightBytes: received,
            liveLatencySeconds: nil)
        recorder.record(.bufferSample(sample))
        checkInFlight(bufferSeconds: sample.bufferSeconds)
        capEvent(.tick(now))
        evaluatePolicy(bufferSeconds: sample.bufferSeconds, phase: sample.phase)
        if timeline.phase == .ended {
            stop(.completed)
        } else if let limit = configuration.durationLimitSeconds, timeline.playedSeconds(at: now) >= limit {
            stop(.durationReached)
        }
    }

    private func record(_ actions: [PlaybackAction]) {
        for action in actions {
            switch action {
            case let .started(at, position, buffered):
                recorder.record(.playbackStarted(.started(atSeconds: at.seconds, positionSeconds: position, bufferSeconds: buffered,
                                                          firstFrameAtSeconds: breakdown.firstFrameAtSeconds, isFirstStart: !playbackStartRecorded)))
                playbackStartRecorded = true
            case let .stallStarted(at, position):
                recorder.record(.stallStart(PlaybackChange(atSeconds: at.seconds, positionSeconds: position, bufferSeconds: 0)))
                capEvent(.stallStarted(estimateBps: measuredEstimate, at: at))
            case let .stallEnded(at, position, stall, buffered):
                recorder.record(.stallEnd(PlaybackChange(atSeconds: at.seconds, positionSeconds: position, bufferSeconds: buffered, stallSeconds: stall)))
            case let .ended(at, position):
                recorder.record(.playbackEnded(PlaybackChange(atSeconds: at.seconds, positionSeconds: position)))
            }
        }
    }

    private var measuredEstimate: Double? { estimator.hasEstimate ? estimator.estimateBps : nil }

    // MARK: - Byte progress (PlayerSession.checkInFlight)

    private func checkInFlight(bufferSeconds: Double) {
        guard let f = inFlight, f.abort == nil else { return }
        let duration: Double
        let rungBps: Double
        switch f.work {
        case .segment(let variant, let index):
            duration = ladder.variants[variant].segments[index].durationSeconds
            rungBps = Double(ladder.variants[variant].bandwidthBps)
        case .mediaPlaylist, .multivariant:
            duration = 0
            rungBps = 0
        }
        let t = nowSeconds
        let body = f.transfer.bodyBytesReceived(at: t, link: link)
        let sinceFirst = t - f.transfer.firstByteAt
        let snapshot = InFlightSnapshot(
            bytesReceived: body, bytesExpected: t >= f.transfer.firstByteAt ? f.transfer.bodyBytes : nil,
            secondsSinceLastByte: t - f.transfer.lastByteAt(at: t, link: link), elapsedSeconds: t - f.transfer.startedAt,
            rttSeconds: lastRTTSeconds, segmentDurationSeconds: duration, rungBitrateBps: rungBps,
            measuredThroughputBps: body > 0 && sinceFirst > 0 ? Double(body) * 8 / sinceFirst : nil,
            forwardBufferSeconds: bufferSeconds)
        let assessment = configuration.byteProgress.classify(snapshot)
        switch assessment.remedy {
        case .none:
            return
        case .reRequestOnFreshConnection:
            inFlight?.abort = .wedged
        case .abandonAndCap:
            guard OverSelectionCap.abandons(rungBps: rungBps, ladderBitratesBps: ladderBitratesBps) else { return }
            inFlight?.abort = .overSelected
        }
        connection.cancel(f.transfer, at: t)
        recorder.record(.byteProgress(ByteProgressRecord(requestID: f.requestID, snapshot: snapshot, assessment: assessment)))
        switch assessment.remedy {
        case .reRequestOnFreshConnection:
            capEvent(.wedgeDetected(estimateBps: measuredEstimate, at: now))
        case .abandonAndCap(let cap):
            overSelectionCapBps = OverSelectionCap.afterAbandoning(rungBps, suggestedCapBps: cap,
                                                                   current: overSelectionCapBps, ladderBitratesBps: ladderBitratesBps)
            if snapshot.measuredThroughputBps != nil, body > 0 {
                let partial = ThroughputSample(bytes: body, transferSeconds: snapshot.elapsedSeconds, firstByteSeconds: 0)
                let verdict = estimator.add(partial)
                recorder.record(.capNote(CapNote(kind: .overSelection, phase: capController.phase,
                    detail: String(format: "abandoned after %d bytes at %.0f bps (estimator: %@); choice capped at %d bps until delivery earns more",
                                   partial.bytes, partial.throughputBps(minimumSeconds: 0.001), verdict.rawValue, overSelectionCapBps ?? 0))))
            }
            capEvent(.overSelected(suggestedCapBps: cap, ratio: assessment.overSelectionRatio ?? 0, measuredBps: snapshot.measuredThroughputBps, at: now))
        case .none:
            break
        }
    }

    // MARK: - Cap (PlayerSession.capEvent)

    private func capEvent(_ event: StartupCapEvent) {
        for action in capController.event(event) {
            switch action {
            case .setPeakBitrateCap(let change):
                recorder.record(.capChange(change))
            case .seedEstimator(let seed):
                if seed.resetFirst { estimator.reset() }
                if let bps = seed.bps { estimator.seed(estimateBps: bps, weightSeconds: seed.weightSeconds) }
                recorder.record(.capEstimatorSeed(seed))
            case .reconnect(let reconnect):
                recorder.record(.capReconnect(reconnect))
            case .log(let note):
                recorder.record(.capNote(note))
            }
        }
    }

    // MARK: - Predictor and controller (PlayerSession.evaluatePolicy)

    private func evaluatePolicy(bufferSeconds: Double, phase: PlaybackPhase, atSegmentLanding: Bool = false) {
        guard let predictor, phase == .playing || atSegmentLanding && phase == .startingUp, var controller = policyController else { return }
        let t = nowSeconds
        let segmentInFlight: StallFeatures.InFlight? = inFlight.flatMap { f in
            guard case .segment = f.work else { return nil }
            return StallFeatures.InFlight(
                bytesReceived: f.transfer.bodyBytesReceived(at: t, link: link),
                bytesExpected: t >= f.transfer.firstByteAt ? f.transfer.bodyBytes : nil,
                elapsedSeconds: t - f.transfer.startedAt, secondsSinceLastByte: t - f.transfer.lastByteAt(at: t, link: link))
        }
        let features = StallFeatures.atTick(
            bufferSeconds: bufferSeconds, estimator: estimator, ladderBitratesBps: ladderBitratesBps,
            currentRungBps: currentVariant.map { ladder.variants[$0].bandwidthBps }, inFlight: segmentInFlight,
            firstByteSeconds: lastFirstByteSeconds, rttSeconds: lastRTTSeconds,
            cpuPressureAvg10Percent: nil, decodeLagRatio: nil, thermalMaxCelsius: nil)
        let (risk, actions) = controller.evaluate(predictor, features: features, at: now)
        policyController = controller
        for case .changePolicy(let change) in actions { applyKnobs(change.knobs) }
        recorder.record(.stallRisk(StallRiskSample(predictor: predictor.predictorName, risk: risk, horizonSeconds: predictor.horizonSeconds,
                                                    policy: controller.policy, phase: phase, features: features)))
        for action in actions {
            switch action {
            case .changePolicy(let change): recorder.record(.policyChange(change))
            case .predictorFailed(let failure): recorder.record(.predictorFailed(failure))
            case .predictorRecovered(let recovery): recorder.record(.predictorRecovered(recovery))
            }
        }
    }

    private func applyKnobs(_ knobs: PolicyKnobs) {
        policyKnobs = knobs
        knobs.apply(to: &timeline, resumeSetByUser: configuration.resumeBufferSetByUser, startupSetByUser: configuration.startupBufferSetByUser,
                    configuredStartupSeconds: configuration.playback.startupBufferSeconds, gatesStart: true)
    }

    private var forwardBufferTarget: Double {
        configuration.forwardBufferTargetSeconds(policySeconds: policyKnobs?.preferredForwardBufferDurationSeconds,
                                                 startupSeconds: timeline.configuration.startupBufferSeconds,
                                                 resumeSeconds: timeline.configuration.resumeBufferSeconds)
    }

    // MARK: - Loader (PlayerSession.startup / fetchSegments / fetchAndBuffer)

    private func loaderStep() {
        if let work = pendingRetry {
            pendingRetry = nil
            request(work, attempt: attempts)
            return
        }
        if let f = inFlight {
            inFlight = nil
            if let abort = f.abort {
                aborted(f, abort)
            } else {
                completed(f)
            }
            return
        }
        nextSegment()
    }

    private func url(for work: Work) -> String {
        switch work {
        case .multivariant: configuration.url.absoluteString
        case .mediaPlaylist(let v, _, _): "v\(v)/prog.m3u8"
        case .segment(let v, let i): "v\(v)/segment-\(i)"
        }
    }

    private func purpose(of work: Work) -> RequestPurpose {
        switch work {
        case .multivariant: .multivariantPlaylist
        case .mediaPlaylist: .mediaPlaylist
        case .segment: .segment
        }
    }

    private func request(_ work: Work, attempt: Int = 1) {
        let bytes: Int
        var start = RequestStart(requestID: nextRequestID, url: url(for: work), purpose: purpose(of: work), attempt: attempt)
        switch work {
        case .multivariant:
            bytes = ladder.multivariantBytes
        case .mediaPlaylist(let v, _, _):
            bytes = ladder.variants[v].playlistBytes
            start.variantIndex = v
        case .segment(let v, let i):
            bytes = ladder.variants[v].segments[i].bytes
            start.variantIndex = v
            start.mediaSequence = i
        }
        recorder.record(.requestStart(start))
        inFlight = InFlight(requestID: nextRequestID, work: work, transfer: connection.start(at: nowSeconds, bodyBytes: bytes))
        nextRequestID += 1
    }

    private func completed(_ f: InFlight) {
        let transfer = f.transfer
        let firstByte = transfer.firstByteAt - transfer.startedAt
        let total = transfer.completesAt - transfer.startedAt
        let timings = TimingsRecord(nameLookupSeconds: 0, connectSeconds: 0, tlsSeconds: 0, firstByteSeconds: firstByte, totalSeconds: total)
        let transferSeconds = max(0, total - firstByte)
        let sample = ThroughputSample(bytes: transfer.bodyBytes, transferSeconds: transferSeconds, firstByteSeconds: firstByte)
        lastRTTSeconds = Self.loopbackRTTSeconds
        var verdict: SampleVerdict?
        var throughput: Double?
        if case .segment = f.work {
            verdict = estimator.add(sample)
            throughput = sample.throughputBps(minimumSeconds: configuration.estimator.minimumTransferSeconds)
            lastFirstByteSeconds = firstByte
            if !firstSegmentFetched { breakdown.firstSegmentFirstByteAtSeconds = transfer.firstByteAt }
        }
        recorder.record(.requestEnd(RequestEnd(requestID: f.requestID, url: url(for: f.work), purpose: purpose(of: f.work), status: 200,
                                               bytes: transfer.bodyBytes, ok: true, connectionReused: f.requestID > 1, timings: timings,
                                               throughputBps: throughput, sampleVerdict: verdict)))
        wedgeReRequests = 0
        attempts = 1
        switch f.work {
        case .multivariant:
            multivariantLoaded(at: transfer.completesAt)
        case .mediaPlaylist(let v, let afterStartup, let capAtDecision):
            loadedPlaylists.insert(v)
            currentLoadVariant = v
            if afterStartup {
                if breakdown.mediaPlaylistAtSeconds == nil {
                    breakdown.mediaPlaylistAtSeconds = nowSeconds
                    breakdown.mediaPlaylistSeconds = nowSeconds - (breakdown.multivariantPlaylistAtSeconds ?? 0)
                }
                nextSegment()
            } else if effectivePeakCapBps != capAtDecision {
                // The cap moved while the playlist loaded: decide again.
                pendingDecision = nil
                nextSegment()
            } else {
                request(.segment(variant: v, index: nextSegmentIndex))
            }
        case .segment(let v, let i):
            classifySample(requestID: f.requestID, sample: sample, variant: v, index: i, startedAt: transfer.startedAt)
            buffered(variant: v, index: i, bytes: transfer.bodyBytes, finishedAt: transfer.completesAt)
            nextSegmentIndex = i + 1
            nextSegment()
        }
    }

    private func aborted(_ f: InFlight, _ abort: InFlightRequest.Abort) {
        let received = f.transfer.bodyBytesReceived(at: nowSeconds, link: link)
        guard case .segment(let v, let i) = f.work else {
            playlistWedged(f, bytesReceived: received)
            return
        }
        recorder.record(.requestEnd(RequestEnd(requestID: f.requestID, url: url(for: f.work), purpose: purpose(of: f.work), status: nil,
                                               bytes: received, ok: false, errorKind: .cancelled,
                                               errorMessage: abort == .wedged ? "wedged (byte-progress monitor)" : "abandoned: over-selected")))
        let outcome: WedgeRules.SegmentOutcome = abort == .wedged
            ? configuration.wedge.afterSegmentWedge(earlierWedges: wedgeReRequests, bufferSeconds: timeline.bufferSeconds(at: now),
                                                    segmentDurationSeconds: ladder.variants[v].segments[i].durationSeconds,
                                                    rungBps: ladder.variants[v].bandwidthBps, ladderBitratesBps: ladderBitratesBps)
            : .abandon
        switch outcome {
        case .reRequest:
            // The first wedge with buffer in hand: the same request again on a fresh connection.
            recorder.record(.retryScheduled(RetryScheduled(requestID: f.requestID, url: url(for: f.work), attemptsMade: 0, delaySeconds: 0, errorKind: .transferTimeout)))
            wedgeReRequests += 1
            request(f.work)
            return
        case .reDecide:
            // Little buffer left: decide again under the recovery cap (not an abandonment).
            recorder.record(.retryScheduled(RetryScheduled(requestID: f.requestID, url: url(for: f.work), attemptsMade: 0, delaySeconds: 0, errorKind: .transferTimeout)))
        case .abandon:
            // Over-selected, or wedged again: an abandonment, bounded per segment.
            abandonedAttempts[i, default: 0] += 1
            if configuration.wedge.givesUp(afterAbandonments: abandonedAttempts[i, default: 0]) {
                stop(.error, "segment \(i) could not be loaded: wedged or abandoned \(configuration.wedge.maxAbandonmentsPerSegment) times on every rung tried")
                return
            }
        }
        wedgeReRequests = 0
        // Decide again for the same segment, under the lowered cap.
        pendingDecision = nil
        nextSegment()
    }

    /// A wedged playlist request (PlayerSession.fetch): asked for again at once up to
    /// `wedge.maxPlaylistReRequests` times, then each wedge is a failed attempt of the playlist
    /// retry policy — backoff, then the session fails — logged as the real session logs it.
    private func playlistWedged(_ f: InFlight, bytesReceived: Int) {
        let shownURL = url(for: f.work)
        let purpose = purpose(of: f.work)
        wedgeReRequests += 1
        switch configuration.wedge.afterPlaylistWedge(wedges: wedgeReRequests, url: shownURL, bytesReceived: bytesReceived) {
        case .reRequest:
            recorder.record(.requestEnd(RequestEnd(requestID: f.requestID, url: shownURL, purpose: purpose, status: nil, bytes: bytesReceived,
                                                   ok: false, errorKind: .transferTimeout,
                                                   errorMessage: "no byte for the wedge window (byte-progress monitor); re-requested")))
            recorder.record(.retryScheduled(RetryScheduled(requestID: f.requestID, url: shownURL, attemptsMade: attempts - 1, delaySeconds: 0, errorKind: .transferTimeout)))
            request(f.work, attempt: attempts)
        case .failedAttempt(let error):
            recorder.record(.requestEnd(RequestEnd(requestID: f.requestID, url: shownURL, purpose: purpose, status: nil, bytes: bytesReceived,
                                                   ok: false, errorKind: error.kind, errorMessage: error.message)))
            capEvent(.loadFailed(estimateBps: measuredEstimate, at: now))
            switch configuration.retry.playlist.decide(after: error, attemptsMade: attempts) {
            case .retry(let delay):
                recorder.record(.retryScheduled(RetryScheduled(requestID: f.requestID, url: shownURL, attemptsMade: attempts, delaySeconds: delay, errorKind: error.kind)))
                attempts += 1
                pendingRetry = f.work
                loaderWakeAt = nowSeconds + delay
            case .giveUp(let reason):
                stop(.error, "\(purpose.rawValue) \(shownURL) failed: \(error.kind.rawValue): \(error.message) — \(reason)")
            }
        }
    }

    private func multivariantLoaded(at t: Double) {
        breakdown.multivariantPlaylistAtSeconds = t
        breakdown.multivariantPlaylistSeconds = t
        recorder.record(.playlistLoaded(PlaylistLoaded(url: configuration.url.absoluteString, kind: "multivariant", variants: ladder.variants.count, warnings: [])))
        // The gate: a simulated session has no estimate store, so it starts cold.
        let gate = EstimateGate.classify(nil, forcedCold: true, configuration: configuration.estimateStore)
        recorder.record(.capGate(GateDecisionRecord(gate: gate, lookup: nil, networkKey: nil, mode: configuration.startupCap.mode,
                                                    configuration: configuration.estimateStore)))
        // The probe and the ramp step through the video rungs, not an audio-only fallback below them.
        capEvent(.sessionStarted(gate: gate, ladder: AudioOnlyRungs.videoRungs(rungs), at: now))
        if predictor != nil {
            let (made, problem) = SessionDecisions.makePolicyController(configuration, ladderBitratesBps: videoLadderBitratesBps)
            if let problem { recorder.record(.error(ErrorRecord(fatal: false, category: "policy", message: problem))) }
            policyController = made
            if let made { applyKnobs(made.knobs) }
        }
        let decision = decide(segmentIndex: nil)
        pendingDecision = decision
        timeline.setStartPosition(0)
        request(.mediaPlaylist(variant: decision.variantIndex, afterStartup: true, capAtDecision: nil))
    }

    /// Every peak-bitrate cap in force.
    private var peakBitrateCaps: PeakBitrateCaps {
        PeakBitrateCaps(userBps: configuration.preferredPeakBitRateBps, policyBps: policyKnobs?.peakBitrateCapBps,
                        overSelectionBps: overSelectionCapBps, startupBps: capController.capBps)
    }

    /// The cap in force: the lowest of every peak-bitrate cap (nil: none).
    private var effectivePeakCapBps: Int? { peakBitrateCaps.effectiveBps }

    private func decide(segmentIndex: Int?) -> SelectionDecision {
        let snapshot = SelectionSnapshot(
            ladder: rungs, estimateBps: estimator.estimateBps, estimateIsMeasured: estimator.hasEstimate,
            bufferSeconds: timeline.bufferSeconds(at: now), currentVariantIndex: currentVariant,
            peakBitrateCapBps: effectivePeakCapBps,
            pinnedVariantIndex: configuration.pinnedVariantIndex,
            recentSegmentThroughputBps: recentSegmentThroughput.lowestBps)
        let decision = configuration.selector.select(snapshot)
        recorder.record(.variantDecision(VariantDecisionRecord(inputs: snapshot, decision: decision, estimatorFastBps: estimator.fastBps,
                                                               estimatorSlowBps: estimator.slowBps, mediaSequence: segmentIndex)))
        currentVariant = decision.variantIndex
        return decision
    }

    /// The loader's top: wait while the buffer is full, end the stream, or decide and fetch the next segment.
    private func nextSegment() {
        guard stopReason == nil else { return }
        if timeline.bufferSeconds(at: now) >= forwardBufferTarget {
            loaderWakeAt = nowSeconds + configuration.session.loaderPollSeconds
            return
        }
        let previous = currentLoadVariant ?? 0
        guard let variant = currentLoadVariant.map({ ladder.variants[$0] }), nextSegmentIndex < variant.segments.count else {
            record(timeline.markEndOfStream(at: now))
            loaderDone = true
            return
        }
        let capAtDecision = effectivePeakCapBps
        let decision = pendingDecision ?? decide(segmentIndex: nextSegmentIndex)
        pendingDecision = nil
        let v = decision.variantIndex
        if v != previous || !loadedPlaylists.contains(v) {
            // VOD ladders may not share segment boundaries: continue by time.
            let bufferedEnd = timeline.bufferedEndSeconds
            var start = 0.0
            var index = ladder.variants[v].segments.count
            for (i, s) in ladder.variants[v].segments.enumerated() {
                if start + s.durationSeconds > bufferedEnd + 0.001 { index = i; break }
                start += s.durationSeconds
            }
            nextSegmentIndex = index
            if !loadedPlaylists.contains(v) {
                request(.mediaPlaylist(variant: v, afterStartup: false, capAtDecision: capAtDecision))
                return
            }
            currentLoadVariant = v
        }
        guard nextSegmentIndex < ladder.variants[v].segments.count else {
            record(timeline.markEndOfStream(at: now))
            loaderDone = true
            return
        }
        wedgeReRequests = 0
        attempts = 1
        request(.segment(variant: v, index: nextSegmentIndex))
    }

    private func classifySample(requestID: Int, sample: ThroughputSample, variant: Int, index: Int, startedAt: Double) {
        let observation = TransferObservation(
            bytes: sample.bytes, transferSeconds: sample.transferSeconds, firstByteSeconds: sample.firstByteSeconds,
            rttSeconds: lastRTTSeconds, readPauseSeconds: 0, isLiveEdgeSegment: false,
            mediaBitrateBps: Double(ladder.variants[variant].bandwidthBps), tcpAppLimited: nil)
        let (classified, transfers, runStartedAt) = coalescer.observation(
            for: observation, startedAt: MonotonicInstant(seconds: startedAt), endedAt: now, minimumBytes: configuration.networkLimit.minimumBytes)
        let verdict = configuration.networkLimit.classify(classified)
        if recentSegmentThroughput.add(bytes: sample.bytes, transferSeconds: sample.transferSeconds) {
            overSelectionCapBps = OverSelectionCap.afterRecentThroughput(
                recentSegmentThroughput.lowestBps, current: overSelectionCapBps,
                videoLadderBitratesBps: videoLadderBitratesBps, upSwitchSafetyFactor: configuration.selector.upSwitchSafetyFactor)
        }
        if let evidence = verdict.evidenceBps {
            networkLimitedSamples += 1
            overSelectionCapBps = OverSelectionCap.afterEvidence(evidence, current: overSelectionCapBps,
                                                                    ladderBitratesBps: ladderBitratesBps,
                                                                    upSwitchSafetyFactor: configuration.selector.upSwitchSafetyFactor)
        }
        recorder.record(.sampleVerdict(SampleVerdictRecord(requestID: requestID, observation: classified, verdict: verdict, coalescedTransfers: transfers)))
        capEvent(.sample(CapSample(verdict: verdict, requestStartedAt: runStartedAt, completedAt: now)))
    }

    private func buffered(variant v: Int, index i: Int, bytes: Int, finishedAt: Double) {
        let segments = ladder.variants[v].segments
        let start = segments.prefix(i).reduce(0) { $0 + $1.durationSeconds }
        let end = start + segments[i].durationSeconds
        if timeline.phase == .startingUp {
            // The controller judges the start itself (PlayerSession.fetchAndBuffer).
            evaluatePolicy(bufferSeconds: max(0, end - timeline.positionSeconds(at: now)), phase: .startingUp, atSegmentLanding: true)
        }
        record(timeline.appendBuffered(upTo: end, at: now))
        let ahead = timeline.bufferSeconds(at: now)
        let rung = ladder.variants[v]
        if let previous = lastBufferedVariant, previous != v {
            recorder.record(.variantSwitch(VariantSwitch(fromVariantIndex: previous, toVariantIndex: v, fromBandwidthBps: ladder.variants[previous].bandwidthBps,
                                                         toBandwidthBps: rung.bandwidthBps, atPositionSeconds: start)))
        }
        lastBufferedVariant = v
        recorder.record(.segmentBuffered(SegmentBuffered(
            variantIndex: v, bandwidthBps: rung.bandwidthBps, mediaSequence: i, startSeconds: start, durationSeconds: segments[i].durationSeconds,
            bytes: bytes, videoPackets: 0, audioPackets: 0, corruptPackets: 0, demuxSeconds: 0, bufferedEndSeconds: end, bufferSeconds: ahead)))
        if !firstSegmentFetched {
            firstSegmentFetched = true
            // Demux only: the first buffered segment stands in for the first frame (PlayerSession.markFirstFrame).
            breakdown.firstSegmentLastByteAtSeconds = finishedAt
            breakdown.demuxedAtSeconds = finishedAt
            breakdown.demuxSeconds = 0
            breakdown.firstFrameAtSeconds = nowSeconds
            if let last = breakdown.firstSegmentLastByteAtSeconds, let first = breakdown.firstSegmentFirstByteAtSeconds {
                breakdown.firstSegmentFirstByteSeconds = first - (breakdown.mediaPlaylistAtSeconds ?? 0)
                breakdown.firstSegmentLastByteSeconds = last - first
            }
            breakdown.firstFrameDecodeSeconds = 0
            let actions = timeline.markFirstFrameDecoded(at: now)
            recorder.record(.firstFrame(FirstFrame(timeToFirstFrameSeconds: nowSeconds, variantIndex: v, width: rung.resolution?.width,
                                                   height: rung.resolution?.height, ptsSeconds: nil, breakdown: breakdown)))
            capEvent(.firstFrame(at: now))
            record(actions)
        }
    }
}

/// What a simulated session's log header says about its inputs.
public struct SimulationHeader: Encodable, Sendable {
    /// The virtual-time simulator wrote this log (no real network, media or decoder).
    public var virtualTime = true
    public var ladder: String
    public var link: String
}
