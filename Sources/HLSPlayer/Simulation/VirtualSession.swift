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

    // Decision state: the session core PlayerSession feeds too.
    private var core: SessionCore
    private var breakdown = StartupBreakdown()

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
        core.ladderKnown(rungs)
    }

    private var now: MonotonicInstant { clock.now() }
    private var nowSeconds: Double { clock.now().seconds }
    private var rungs: [LadderRung] {
        ladder.variants.enumerated().map { i, v in
            LadderRung(
                variantIndex: i, bandwidthBps: v.bandwidthBps, width: v.resolution?.width, height: v.resolution?.height,
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
        var header = SessionHeader(
            hlsplayVersion: hlsplayVersion, url: configuration.url.absoluteString,
            startedAt: formatter.string(from: Date()), configuration: configuration,
            host: HostInfo.current(ffmpeg: "none (virtual time)", libcurl: "none (virtual time)"))
        header.simulation = SimulationHeader(ladder: ladder.name, link: linkDescription)
        recorder.writeHeader(header)
        let (chosen, problem) = SessionDecisions.makePredictor(configuration, defaultModelPath: ModelLocator.defaultModelPath)
        core.predictor = chosen
        if let problem { recorder.record(.error(ErrorRecord(fatal: false, category: "core.predictor", message: problem))) }

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
            recorder.record(
                .requestEnd(
                    RequestEnd(
                        requestID: f.requestID, url: url(for: f.work), purpose: purpose(of: f.work),
                        status: nil, bytes: f.transfer.bodyBytesReceived(at: nowSeconds, link: link),
                        ok: false, errorKind: .cancelled, errorMessage: "session stopped")))
        }
        record(core.timeline.finish(at: now))
        recorder.record(.decodeStats(DecodeStats(videoFrames: 0, audioFrames: 0, lateVideoFrames: 0, decodeErrors: 0)))
        recorder.setBreakdown(breakdown)
        let (start, position, estimate) = (
            core.timeline.startPositionSeconds, core.timeline.positionSeconds(at: now),
            core.estimator.hasEstimate ? core.estimator.estimateBps : nil
        )
        return recorder.finish { builder in
            builder.summary(
                url: configuration.url.absoluteString, isLive: false, exitReason: stopReason ?? .completed, error: stopError,
                startPositionSeconds: start, finalPositionSeconds: position,
                sessionSeconds: nowSeconds, finalEstimateBps: estimate)
        }
    }

    // MARK: - Monitor (PlayerSession.monitorTick)

    private func monitorTick() {
        record(core.timeline.advance(to: now))
        let transfer = inFlight?.transfer
        let received = transfer.map { $0.bodyBytesReceived(at: nowSeconds, link: link) }
        let sample = BufferSample(
            phase: core.timeline.phase, positionSeconds: core.timeline.positionSeconds(at: now),
            bufferedEndSeconds: core.timeline.bufferedEndSeconds, bufferSeconds: core.timeline.bufferSeconds(at: now),
            estimateBps: core.estimator.estimateBps, variantIndex: core.currentVariant,
            inFlightIdleSeconds: transfer.map { nowSeconds - $0.lastByteAt(at: nowSeconds, link: link) }, inFlightBytes: received,
            liveLatencySeconds: nil)
        recorder.record(.bufferSample(sample))
        checkInFlight(bufferSeconds: sample.bufferSeconds)
        capEvent(.tick(now))
        evaluatePolicy(bufferSeconds: sample.bufferSeconds, phase: sample.phase)
        if core.timeline.phase == .ended {
            stop(.completed)
        } else if let limit = configuration.durationLimitSeconds, core.timeline.playedSeconds(at: now) >= limit {
            stop(.durationReached)
        }
    }

    private func record(_ actions: [PlaybackAction]) {
        for action in actions {
            perform(core.mediaClock(action, sessionStart: MonotonicInstant(seconds: 0), firstFrameAtSeconds: breakdown.firstFrameAtSeconds))
        }
    }

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
            rttSeconds: core.lastRTTSeconds, segmentDurationSeconds: duration, rungBitrateBps: rungBps,
            measuredThroughputBps: body > 0 && sinceFirst > 0 ? Double(body) * 8 / sinceFirst : nil,
            forwardBufferSeconds: bufferSeconds)
        let judgement = core.judgeInFlight(snapshot)
        guard let cancel = judgement.cancel else { return }
        inFlight?.abort = cancel == .wedged ? .wedged : .overSelected
        connection.cancel(f.transfer, at: t)
        perform(core.inFlightCancelled(requestID: f.requestID, snapshot: snapshot, judgement: judgement, at: now))
    }

    // MARK: - Core actions

    private func perform(_ actions: [SessionCoreAction]) {
        for action in actions {
            switch action {
            case .record(let event): recorder.record(event)
            // Every simulated request after the first reuses the one connection; a fresh one costs nothing here.
            case .reconnectNext, .policyChanged: break
            }
        }
    }

    private func capEvent(_ event: StartupCapEvent) { perform(core.cap(event)) }

    // MARK: - Predictor and controller (PlayerSession.evaluatePolicy)

    private func evaluatePolicy(bufferSeconds: Double, phase: PlaybackPhase, atSegmentLanding: Bool = false) {
        let t = nowSeconds
        let segmentInFlight: StallFeatures.InFlight? = inFlight.flatMap { f in
            guard case .segment = f.work else { return nil }
            return StallFeatures.InFlight(
                bytesReceived: f.transfer.bodyBytesReceived(at: t, link: link),
                bytesExpected: t >= f.transfer.firstByteAt ? f.transfer.bodyBytes : nil,
                elapsedSeconds: t - f.transfer.startedAt, secondsSinceLastByte: t - f.transfer.lastByteAt(at: t, link: link))
        }
        perform(
            core.policyStep(
                bufferSeconds: bufferSeconds, phase: phase, atSegmentLanding: atSegmentLanding,
                currentRungBps: core.currentVariant.map { ladder.variants[$0].bandwidthBps }, inFlight: segmentInFlight,
                device: DeviceReadings(), at: now))
    }

    private var forwardBufferTarget: Double {
        configuration.forwardBufferTargetSeconds(
            policySeconds: core.policyKnobs?.preferredForwardBufferDurationSeconds,
            startupSeconds: core.timeline.configuration.startupBufferSeconds,
            resumeSeconds: core.timeline.configuration.resumeBufferSeconds)
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
        let (verdict, throughput) = core.transferCompleted(purpose: purpose(of: f.work), sample: sample, rttSeconds: Self.loopbackRTTSeconds)
        if case .segment = f.work, !firstSegmentFetched { breakdown.firstSegmentFirstByteAtSeconds = transfer.firstByteAt }
        recorder.record(
            .requestEnd(
                RequestEnd(
                    requestID: f.requestID, url: url(for: f.work), purpose: purpose(of: f.work), status: 200,
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
        recorder.record(
            .requestEnd(
                RequestEnd(
                    requestID: f.requestID, url: url(for: f.work), purpose: purpose(of: f.work), status: nil,
                    bytes: received, ok: false, errorKind: .cancelled,
                    errorMessage: abort == .wedged ? "wedged (byte-progress monitor)" : "abandoned: over-selected")))
        let outcome: WedgeRules.SegmentOutcome =
            abort == .wedged
            ? configuration.wedge.afterSegmentWedge(
                earlierWedges: wedgeReRequests, bufferSeconds: core.timeline.bufferSeconds(at: now),
                segmentDurationSeconds: ladder.variants[v].segments[i].durationSeconds,
                rungBps: ladder.variants[v].bandwidthBps, ladderBitratesBps: ladderBitratesBps)
            : .abandon
        switch outcome {
        case .reRequest:
            // The first wedge with buffer in hand: the same request again on a fresh connection.
            recorder.record(
                .retryScheduled(
                    RetryScheduled(requestID: f.requestID, url: url(for: f.work), attemptsMade: 0, delaySeconds: 0, errorKind: .transferTimeout)))
            wedgeReRequests += 1
            request(f.work)
            return
        case .reDecide:
            // Little buffer left: decide again under the recovery cap (not an abandonment).
            recorder.record(
                .retryScheduled(
                    RetryScheduled(requestID: f.requestID, url: url(for: f.work), attemptsMade: 0, delaySeconds: 0, errorKind: .transferTimeout)))
        case .abandon:
            // Over-selected, or wedged again: an abandonment, bounded per segment.
            abandonedAttempts[i, default: 0] += 1
            if configuration.wedge.givesUp(afterAbandonments: abandonedAttempts[i, default: 0]) {
                stop(
                    .error,
                    "segment \(i) could not be loaded: wedged or abandoned \(configuration.wedge.maxAbandonmentsPerSegment) times on every rung tried"
                )
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
            recorder.record(
                .requestEnd(
                    RequestEnd(
                        requestID: f.requestID, url: shownURL, purpose: purpose, status: nil, bytes: bytesReceived,
                        ok: false, errorKind: .transferTimeout,
                        errorMessage: "no byte for the wedge window (byte-progress monitor); re-requested")))
            recorder.record(
                .retryScheduled(
                    RetryScheduled(requestID: f.requestID, url: shownURL, attemptsMade: attempts - 1, delaySeconds: 0, errorKind: .transferTimeout)))
            request(f.work, attempt: attempts)
        case .failedAttempt(let error):
            recorder.record(
                .requestEnd(
                    RequestEnd(
                        requestID: f.requestID, url: shownURL, purpose: purpose, status: nil, bytes: bytesReceived,
                        ok: false, errorKind: error.kind, errorMessage: error.message)))
            capEvent(.loadFailed(estimateBps: core.measuredEstimateBps, at: now))
            switch configuration.retry.playlist.decide(after: error, attemptsMade: attempts) {
            case .retry(let delay):
                recorder.record(
                    .retryScheduled(
                        RetryScheduled(requestID: f.requestID, url: shownURL, attemptsMade: attempts, delaySeconds: delay, errorKind: error.kind)))
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
        recorder.record(
            .playlistLoaded(
                PlaylistLoaded(url: configuration.url.absoluteString, kind: "multivariant", variants: ladder.variants.count, warnings: [])))
        // The gate: a simulated session has no estimate store, so it starts cold.
        let gate = EstimateGate.classify(nil, forcedCold: true, configuration: configuration.estimateStore)
        recorder.record(
            .capGate(
                GateDecisionRecord(
                    gate: gate, lookup: nil, networkKey: nil, mode: configuration.startupCap.mode,
                    configuration: configuration.estimateStore)))
        // The probe and the ramp step through the video rungs, not an audio-only fallback below them.
        capEvent(.sessionStarted(gate: gate, ladder: AudioOnlyRungs.videoRungs(rungs), at: now))
        if core.predictor != nil {
            let (made, problem) = SessionDecisions.makePolicyController(configuration, ladderBitratesBps: videoLadderBitratesBps)
            if let problem { recorder.record(.error(ErrorRecord(fatal: false, category: "policy", message: problem))) }
            core.policyControllerStarted(made)
        }
        let decision = decide(segmentIndex: nil)
        pendingDecision = decision
        core.timeline.setStartPosition(0)
        request(.mediaPlaylist(variant: decision.variantIndex, afterStartup: true, capAtDecision: nil))
    }

    /// The cap in force: the lowest of every peak-bitrate cap (nil: none).
    private var effectivePeakCapBps: Int? { core.peakBitrateCaps.effectiveBps }

    private func decide(segmentIndex: Int?) -> SelectionDecision {
        let (decision, record) = core.decide(ladder: rungs, at: now, mediaSequence: segmentIndex)
        perform([record])
        return decision
    }

    /// The loader's top: wait while the buffer is full, end the stream, or decide and fetch the next segment.
    private func nextSegment() {
        guard stopReason == nil else { return }
        if core.timeline.bufferSeconds(at: now) >= forwardBufferTarget {
            loaderWakeAt = nowSeconds + configuration.session.loaderPollSeconds
            return
        }
        let previous = currentLoadVariant ?? 0
        guard let variant = currentLoadVariant.map({ ladder.variants[$0] }), nextSegmentIndex < variant.segments.count else {
            record(core.timeline.markEndOfStream(at: now))
            loaderDone = true
            return
        }
        let capAtDecision = effectivePeakCapBps
        let decision = pendingDecision ?? decide(segmentIndex: nextSegmentIndex)
        pendingDecision = nil
        let v = decision.variantIndex
        if v != previous || !loadedPlaylists.contains(v) {
            // VOD ladders may not share segment boundaries: continue by time.
            let bufferedEnd = core.timeline.bufferedEndSeconds
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
            record(core.timeline.markEndOfStream(at: now))
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
            rttSeconds: core.lastRTTSeconds, readPauseSeconds: 0, isLiveEdgeSegment: false,
            mediaBitrateBps: Double(ladder.variants[variant].bandwidthBps), tcpAppLimited: nil)
        perform(
            core.segmentTransferred(
                requestID: requestID, observation: observation, startedAt: MonotonicInstant(seconds: startedAt),
                endedAt: now))
    }

    private func buffered(variant v: Int, index i: Int, bytes: Int, finishedAt: Double) {
        let segments = ladder.variants[v].segments
        let start = segments.prefix(i).reduce(0) { $0 + $1.durationSeconds }
        let end = start + segments[i].durationSeconds
        if core.timeline.phase == .startingUp {
            // The controller judges the start itself (PlayerSession.fetchAndBuffer).
            evaluatePolicy(bufferSeconds: max(0, end - core.timeline.positionSeconds(at: now)), phase: .startingUp, atSegmentLanding: true)
        }
        record(core.timeline.appendBuffered(upTo: end, at: now))
        let ahead = core.timeline.bufferSeconds(at: now)
        let rung = ladder.variants[v]
        if let previous = lastBufferedVariant, previous != v {
            recorder.record(
                .variantSwitch(
                    VariantSwitch(
                        fromVariantIndex: previous, toVariantIndex: v, fromBandwidthBps: ladder.variants[previous].bandwidthBps,
                        toBandwidthBps: rung.bandwidthBps, atPositionSeconds: start)))
        }
        lastBufferedVariant = v
        recorder.record(
            .segmentBuffered(
                SegmentBuffered(
                    variantIndex: v, bandwidthBps: rung.bandwidthBps, mediaSequence: i, startSeconds: start,
                    durationSeconds: segments[i].durationSeconds,
                    bytes: bytes, videoPackets: 0, audioPackets: 0, corruptPackets: 0, demuxSeconds: 0, bufferedEndSeconds: end, bufferSeconds: ahead)
            ))
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
            let actions = core.timeline.markFirstFrameDecoded(at: now)
            recorder.record(
                .firstFrame(
                    FirstFrame(
                        timeToFirstFrameSeconds: nowSeconds, variantIndex: v, width: rung.resolution?.width,
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
