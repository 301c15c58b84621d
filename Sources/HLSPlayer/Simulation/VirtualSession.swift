// A session in virtual time (issue 5 §4): the session core (SessionCore) and
// the loader's sequencing (LoaderCore), with the configuration a real session
// would use, against a trace-driven link and a real ladder's segment sizes, as
// fast as the CPU goes; it writes the same session log. This shell holds no
// decision state: it moves a ManualClock to the next event (a monitor tick, a
// transfer's last byte, a cancel, the loader's wake), feeds it to the cores and
// performs what they return. It orders like a demux-only VOD session of the
// real shell (ShellParityTests holds the two to the same decisions at the same
// instants); what it leaves out, and why, is in docs/architecture.md ("The
// session core and its two shells") and docs/stall-prediction.md.

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
    /// The manual clock starts at its epoch: session seconds are the clock's.
    static let sessionStart = MonotonicInstant(nanoseconds: 0)

    private let clock = ManualClock()
    private let recorder: SessionRecorder
    private var connection: SimulatedConnection
    private var link: any SimulatedLink { connection.link }
    private var core: SessionCore
    private var loader: LoaderCore

    // I/O: the request on the link, the loader's timer, what the log has said.
    private var inFlight: SimulatedRequest?
    private var wakeAt = 0.0
    private var nextRequestID = 1
    /// The request ID of the current fetch's first request.
    private var fetchID = 1
    private var stopReason: ExitReason?
    private var stopError: String?

    public init(
        configuration: PlayerConfiguration, ladder: SimulatedLadder, link: any SimulatedLink, linkDescription: String,
        logPath: String?
    ) throws {
        self.configuration = configuration
        self.ladder = ladder
        self.linkDescription = linkDescription
        connection = SimulatedConnection(link: link)
        recorder = try SessionRecorder(
            logPath: logPath, harPath: nil, clock: clock, sessionStart: clock.now(), wallStart: Date(),
            outgoing: OutgoingText(redactsURLs: configuration.redactURLs))
        core = SessionCore(configuration: configuration.core, predictor: nil)
        core.ladderKnown(ladder.rungs)
        loader = LoaderCore(
            variants: ladder.loaderVariants, wedge: configuration.wedge, playlistRetry: configuration.retry.playlist,
            pollSeconds: configuration.session.loaderPollSeconds)
    }

    private var now: MonotonicInstant { clock.now() }
    private var nowSeconds: Double { clock.now().seconds }

    /// Plays the session to its end (the stream's end, `--duration`, or the virtual time limit).
    public func run() -> SessionSummary {
        recorder.writeHeader(
            .startingNow(
                url: configuration.url.absoluteString, configuration: configuration,
                host: HostInfo.current(ffmpeg: "none (virtual time)", libcurl: "none (virtual time)"),
                simulation: SimulationHeader(ladder: ladder.name, link: linkDescription)))
        let (chosen, problem) = SessionDecisions.makePredictor(configuration, defaultModelPath: ModelLocator.defaultModelPath)
        core.predictor = chosen
        if let problem { recorder.record(.error(ErrorRecord(fatal: false, category: "predictor", message: problem))) }

        perform(loader.start())
        let interval = configuration.monitorIntervalSeconds
        var nextTick = interval
        while stopReason == nil {
            let loaderAt = loader.isDone ? Double.infinity : (inFlight.map { $0.cancel != nil ? nowSeconds : $0.transfer.completesAt } ?? wakeAt)
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
        if stopReason == nil { (stopReason, stopError) = (reason, error) }
    }

    private func finish() -> SessionSummary {
        if let end = inFlight?.cutEnd(at: nowSeconds, link: link, ladder: ladder, sessionURL: configuration.url) {
            recorder.record(.requestEnd(CutShort.sessionStopped.requestEnd(end)))
        }
        record(core.timeline.finish(at: now))
        recorder.record(.decodeStats(DecodeStats(videoFrames: 0, audioFrames: 0, lateVideoFrames: 0, decodeErrors: 0)))
        recorder.setBreakdown(core.breakdown)
        let (start, position) = (core.timeline.startPositionSeconds, core.timeline.positionSeconds(at: now))
        let estimate = core.estimator.hasEstimate ? core.estimator.estimateBps : nil
        return recorder.finish { builder in
            builder.summary(
                url: configuration.url.absoluteString, isLive: false, exitReason: stopReason ?? .completed, error: stopError,
                startPositionSeconds: start, finalPositionSeconds: position, sessionSeconds: nowSeconds, finalEstimateBps: estimate)
        }
    }

    // MARK: - Monitor

    private func monitorTick() {
        record(core.timeline.advance(to: now))
        let t = nowSeconds
        let transfer = inFlight?.transfer
        let sample = core.bufferSample(
            at: now, inFlightIdleSeconds: transfer.map { t - $0.lastByteAt(at: t, link: link) },
            inFlightBytes: transfer.map { $0.bodyBytesReceived(at: t, link: link) })
        recorder.record(.bufferSample(sample))
        let (judgement, actions) = core.monitorDecisions(
            bufferSeconds: sample.bufferSeconds, phase: sample.phase,
            inFlight: inFlight?.monitored(
                at: t, link: link, ladder: ladder, rttSeconds: core.lastRTTSeconds, forwardBufferSeconds: sample.bufferSeconds,
                sessionURL: configuration.url),
            currentRungBps: core.currentVariant.map { ladder.variants[$0].bandwidthBps }, at: now, sessionStart: Self.sessionStart
        ) { DeviceReadings() }
        if let cancel = judgement?.cancel, let f = inFlight {
            inFlight?.cancel = cancel
            inFlight?.failure = judgement?.failure
            connection.cancel(f.transfer, at: t)
        }
        perform(actions)
        if let end = core.playbackEnd(at: now) { stop(end) }
    }

    // MARK: - The cores' actions

    private func record(_ actions: [PlaybackAction]) {
        for action in actions {
            perform(core.mediaClock(action, sessionStart: Self.sessionStart))
        }
    }

    private func perform(_ actions: [SessionCoreAction]) {
        for case .record(let event) in actions { recorder.record(event) }
        // reconnectNext: every simulated request after the first reuses the one connection, and a fresh one costs
        // nothing here.
    }

    private func perform(_ actions: [LoaderCore.Action]) {
        for action in actions {
            switch action {
            case .fetch(let work, let attempt): request(work, attempt: attempt, sameFetch: attempt > 1)
            case .reRequest(let work, let attempt): request(work, attempt: attempt, sameFetch: true)
            case .decide(let mediaSequence, let reason):
                let (decision, record) = core.decide(
                    ladder: ladder.rungs, at: now, mediaSequence: mediaSequence, segmentDurationSeconds: segmentDurationSeconds)
                perform([record])
                if reason == .startup { core.timeline.setStartPosition(0) }
                perform(loader.decided(variant: decision.variantIndex, inputs: loaderInputs, at: now, waitSeconds: core.decisionWaitSeconds))
            case .record(let event): recorder.record(event)
            case .loadFailed: perform(core.cap(.loadFailed(estimateBps: core.measuredEstimateBps, at: now)))
            case .wait(let seconds): wakeAt = seconds
            case .endOfStream: record(core.trackEnded(.main, at: now))
            case .fail(let message), .internalError(let message): stop(.error, message)
            }
        }
    }

    /// The ladder's longest segment, seconds: what a reference rule plans with.
    private var segmentDurationSeconds: Double? {
        loader.variants.flatMap { $0.segmentDurationsSeconds ?? [] }.max()
    }

    private var loaderInputs: LoaderCore.Inputs { core.loaderInputs(at: now) }

    // MARK: - Requests

    private func loaderStep() {
        guard let f = inFlight else { return perform(loader.wake(loaderInputs, at: now)) }
        inFlight = nil
        guard let cancel = f.cancel else { return completed(f) }
        let wire = f.cutEnd(at: nowSeconds, link: link, ladder: ladder, sessionURL: configuration.url)
        perform(loader.transferCancelled(cancel, wire: wire, inputs: loaderInputs, at: now, failure: f.failure))
    }

    /// Starts `work` on the link; `sameFetch`: a re-request or a retry of the request before (one fetch, one fetch ID).
    private func request(_ work: LoaderCore.Work, attempt: Int, sameFetch: Bool) {
        if !sameFetch { fetchID = nextRequestID }
        let request = SimulatedRequest(
            requestID: nextRequestID, work: work, transfer: connection.start(at: nowSeconds, bodyBytes: ladder.bytes(for: work)),
            fetchID: fetchID)
        recorder.record(.requestStart(request.start(attempt: attempt, ladder: ladder, sessionURL: configuration.url)))
        inFlight = request
        nextRequestID += 1
    }

    private func completed(_ f: SimulatedRequest) {
        let transfer = f.transfer
        let (verdict, throughput) = core.transferCompleted(
            purpose: f.work.purpose, sample: transfer.measured.1, rttSeconds: Self.loopbackRTTSeconds)
        if f.work.segment != nil { core.segmentFirstByte(atSeconds: transfer.firstByteAt) }
        recorder.record(.requestEnd(f.finishedEnd(ladder: ladder, sessionURL: configuration.url, verdict: verdict, throughputBps: throughput)))
        switch f.work {
        case .multivariant: multivariantLoaded(at: transfer.completesAt)
        case .mediaPlaylist(let v, let afterStartup, _) where afterStartup:
            core.mediaPlaylistLoaded(atSeconds: nowSeconds)
            // A VOD cannot hold more than what is left after the start.
            perform(core.thresholdCeilingSet(.vod(remainingSeconds: ladder.durationSeconds(variant: v))))
        case .mediaPlaylist: break
        case .segment(let v, let i):
            let observation = f.observation(ladder: ladder, rttSeconds: core.lastRTTSeconds)
            perform(
                core.segmentTransferred(
                    requestID: f.requestID, observation: observation, startedAt: MonotonicInstant(seconds: transfer.startedAt), endedAt: now))
            buffered(variant: v, index: i, finishedAt: transfer.completesAt)
        }
        perform(loader.transferFinished(loaderInputs, at: now))
    }

    private func multivariantLoaded(at t: Double) {
        core.multivariantPlaylistLoaded(atSeconds: t)
        recorder.record(.playlistLoaded(ladder.multivariantLoaded(sessionURL: configuration.url)))
        // The gate: a simulated session has no estimate store, so it starts cold.
        let store = configuration.estimateStore
        let gate = EstimateGate.classify(nil, forcedCold: true, configuration: store)
        perform(core.gateClassified(gate, lookup: nil, networkKey: nil, estimateStore: store, ladder: ladder.rungs, at: now))
        perform(core.startPolicyController(configuration.policy, ladderBitratesBps: core.videoLadderBitratesBps))
    }

    private func buffered(variant v: Int, index i: Int, finishedAt: Double) {
        let (rung, (start, end)) = (ladder.variants[v], ladder.span(variant: v, index: i))
        // Demux takes no virtual time: the segment is demuxed as its last byte lands.
        core.segmentDemuxed(lastByteAtSeconds: finishedAt, demuxedAtSeconds: nowSeconds, demuxSeconds: 0)
        let landed = core.segmentLanded(
            SegmentLanding(variantIndex: v, bandwidthBps: rung.bandwidthBps, startSeconds: start, endSeconds: end),
            currentRungBps: core.currentVariant.map { ladder.variants[$0].bandwidthBps }, at: now, sessionStart: Self.sessionStart
        ) { DeviceReadings() }
        perform(landed.policy)
        record(landed.clock)
        perform(landed.buffered)
        recorder.record(.segmentBuffered(ladder.buffered(variant: v, index: i, bufferSeconds: core.timeline.bufferSeconds(at: now))))
        // Demux only: the first buffered segment stands in for the first frame.
        let (actions, clockActions) = core.firstFrame(
            at: now, sessionStart: Self.sessionStart, variantIndex: v, width: rung.resolution?.width, height: rung.resolution?.height,
            ptsSeconds: nil)
        perform(actions)
        record(clockActions)
    }
}
