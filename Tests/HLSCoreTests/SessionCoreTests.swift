// The session core's events and the actions they return: each test is named
// after what a shell is asked to do (cancel as wedged and reconnect, abandon
// and cap, decide again when the cap moved, change policy), on virtual time.

import Foundation
import Testing
@testable import HLSCore

@Suite struct SessionCoreTests {
    static let ladderBps = [300_000, 620_000, 1_310_000, 3_720_000, 7_230_000]
    static let rungs = ladderBps.enumerated().map { LadderRung(variantIndex: $0.offset, bandwidthBps: $0.element) }

    static func configuration(mode: StartupCapMode = .auto, userPeakBps: Int? = nil) -> SessionCore.Configuration {
        var cap = StartupCapConfiguration()
        cap.mode = mode
        return SessionCore.Configuration(
            playback: PlaybackConfiguration(), estimator: BandwidthEstimator.Configuration(), startupCap: cap,
            networkLimit: NetworkLimitClassifier(), byteProgress: ByteProgressClassifier(),
            selector: VariantSelector(), pinnedVariantIndex: nil, recentSegmentThroughputCount: 3, userPeakBitrateBps: userPeakBps,
            resumeBufferSetByUser: false, startupBufferSetByUser: false)
    }

    static func at(_ seconds: Double) -> MonotonicInstant { MonotonicInstant(seconds: seconds) }

    /// A core that has started on the ladder with a warm estimate (no startup cap).
    static func started(mode: StartupCapMode = .auto, predictor: (any StallPredictor)? = nil) -> SessionCore {
        var core = SessionCore(configuration: configuration(mode: mode), predictor: predictor)
        core.ladderKnown(rungs)
        let record = EstimateRecord(
            networkKey: NetworkKey(originHost: "127.0.0.1", localNetwork: "loopback"), valueBps: 50e6,
            sampleCount: 10, measuredAt: 0)
        _ = core.cap(.sessionStarted(gate: .warm(record), ladder: rungs, at: at(0)))
        return core
    }

    /// A segment of the top rung (7.23 Mbit/s, 6 s) arriving at `throughputBps`, `elapsed` seconds in.
    static func topRungInFlight(throughputBps: Double, elapsed: Double, idle: Double = 0.01, buffer: Double = 0) -> InFlightSnapshot {
        let received = Int(throughputBps * elapsed / 8)
        return InFlightSnapshot(
            bytesReceived: received, bytesExpected: 7_230_000 * 6 / 8, secondsSinceLastByte: idle, elapsedSeconds: elapsed,
            rttSeconds: 0.001, segmentDurationSeconds: 6, rungBitrateBps: 7_230_000,
            measuredThroughputBps: received > 0 ? throughputBps : nil, forwardBufferSeconds: buffer)
    }

    static func records(_ actions: [SessionCoreAction]) -> [SessionEvent] {
        actions.compactMap { if case .record(let e) = $0 { e } else { nil } }
    }

    // MARK: - Abandon

    @Test func overSelectedFetch_cancelledAsOverSelected_capsBelowTheRung_andFeedsTheEstimator() {
        // Startup cap off: only the over-selection cap moves (in auto the cap also recovers; next test).
        var core = Self.started(mode: .off)
        #expect(core.peakBitrateCaps.effectiveBps == nil, "a warm start is uncapped")
        let snapshot = Self.topRungInFlight(throughputBps: 2_000_000, elapsed: 3.2)
        let judgement = core.judgeInFlight(snapshot)
        #expect(judgement.cancel == .overSelected)
        let estimateBefore = core.estimator.estimateBps
        let actions = core.inFlightJudged(requestID: 7, snapshot: snapshot, judgement: judgement, at: Self.at(3.2))
        // Logged with its inputs first, then the estimator's note, then the cap's own record.
        guard case .record(.byteProgress(let record))? = actions.first else {
            Issue.record("the first action records the judgement: \(actions)")
            return
        }
        #expect(record.requestID == 7 && record.snapshot == snapshot)
        #expect(Self.records(actions).contains { if case .capNote(let n) = $0 { n.kind == .overSelection } else { false } })
        // Capped at the rung at or below 0.7 × 2 Mbit/s: 1.31 Mbit/s — the abandoned rung is out of reach.
        #expect(core.overSelectionCapBps == 1_310_000)
        #expect(core.peakBitrateCaps.effectiveBps == 1_310_000)
        #expect(core.estimator.estimateBps < estimateBefore, "the abandoned transfer's 2 Mbit/s pulls the 50 Mbit/s estimate down")
        #expect(!actions.contains(.reconnectNext), "with the startup cap off an abandon keeps the connection")
    }

    @Test func overSelectedFetch_inAutoMode_capRecoversFromTheLowestRung_onAFreshConnection() {
        var core = Self.started(mode: .auto)
        let snapshot = Self.topRungInFlight(throughputBps: 2_000_000, elapsed: 3.2)
        let actions = core.inFlightJudged(requestID: 7, snapshot: snapshot, judgement: core.judgeInFlight(snapshot), at: Self.at(3.2))
        #expect(core.overSelectionCapBps == 1_310_000)
        #expect(core.capController.phase == .recovering)
        #expect(core.peakBitrateCaps.effectiveBps == 300_000, "the recovery probe is the lowest of the caps")
        #expect(actions.contains(.reconnectNext))
        let seed = Self.records(actions).compactMap { if case .capEstimatorSeed(let s) = $0 { s } else { nil } }.first
        #expect(seed?.bps == 2_000_000, "the abandoned transfer's throughput is the recovery's prior")
    }

    @Test func overSelection_onTheLowestRung_isNotAbandoned() {
        let core = Self.started()
        let lowest = InFlightSnapshot(
            bytesReceived: 40_000, bytesExpected: 300_000 * 6 / 8, secondsSinceLastByte: 0.01, elapsedSeconds: 4,
            rttSeconds: 0.001, segmentDurationSeconds: 6, rungBitrateBps: 300_000,
            measuredThroughputBps: 80_000, forwardBufferSeconds: 0)
        let judgement = core.judgeInFlight(lowest)
        #expect(judgement.assessment.verdict == .overSelected, "the rule's verdict stands")
        #expect(judgement.cancel == nil, "but there is no lower rung to go to")
    }

    @Test func healthyFetch_isLeftAlone() {
        let core = Self.started()
        let judgement = core.judgeInFlight(Self.topRungInFlight(throughputBps: 20_000_000, elapsed: 3.2))
        #expect(judgement.cancel == nil)
        #expect(judgement.assessment.verdict == .healthy)
    }

    // MARK: - Wedge

    @Test func wedgedRequest_cancelledAsWedged_nextRequestOnAFreshConnection_capRecovers() {
        var core = Self.started()
        let silent = Self.topRungInFlight(throughputBps: 2_000_000, elapsed: 5, idle: 4)
        let judgement = core.judgeInFlight(silent)
        #expect(judgement.cancel == .wedged)
        let actions = core.inFlightJudged(requestID: 3, snapshot: silent, judgement: judgement, at: Self.at(5))
        #expect(actions.contains(.reconnectNext))
        #expect(core.capController.phase == .recovering)
        #expect(core.peakBitrateCaps.effectiveBps != nil, "recovery probes low")
        #expect(core.overSelectionCapBps == nil, "a wedge is not an over-selection")
    }

    // MARK: - The cap a loader compares a decision's against

    /// The loader cores decide again when the cap in force differs from the one a decision was taken under
    /// (`LoaderCoreTests`, `LiveLoaderCoreTests`): a stall moves it.
    @Test func stall_movesTheCapInForce() {
        var core = Self.started()
        let capAtDecision = core.peakBitrateCaps.effectiveBps
        _ = core.cap(.stallStarted(estimateBps: 1_000_000, at: Self.at(10)))
        #expect(core.peakBitrateCaps.effectiveBps != capAtDecision, "a stall put the cap into recovery")
    }

    @Test func userCap_alwaysInForce() {
        var core = SessionCore(configuration: Self.configuration(mode: .off, userPeakBps: 1_000_000), predictor: nil)
        core.ladderKnown(Self.rungs)
        _ = core.cap(.sessionStarted(gate: .cold(.noEstimate), ladder: Self.rungs, at: Self.at(0)))
        #expect(core.peakBitrateCaps.effectiveBps == 1_000_000)
    }

    // MARK: - Delivery earns rungs back

    @Test func networkLimitedSamples_liftTheOverSelectionCap() {
        var core = Self.started()
        let snapshot = Self.topRungInFlight(throughputBps: 2_000_000, elapsed: 3.2)
        _ = core.inFlightJudged(requestID: 1, snapshot: snapshot, judgement: core.judgeInFlight(snapshot), at: Self.at(3.2))
        #expect(core.overSelectionCapBps == 1_310_000)
        // Three 1 MB segments at 40 Mbit/s, network-limited: 0.7 × 40 Mbit/s supports the top rung again.
        var t = 4.0
        for id in 2...4 {
            let observation = TransferObservation(
                bytes: 1_000_000, transferSeconds: 0.2, firstByteSeconds: 0.001, rttSeconds: 0.001,
                mediaBitrateBps: 1_310_000)
            let actions = core.segmentTransferred(requestID: id, observation: observation, startedAt: Self.at(t), endedAt: Self.at(t + 0.2))
            #expect(Self.records(actions).contains { if case .sampleVerdict(let v) = $0 { v.requestID == id } else { false } })
            t += 2
        }
        #expect(core.networkLimitedSamples == 3)
        #expect(
            (core.overSelectionCapBps ?? Int.max) > 1_310_000, "fresh delivery earned rungs back: \(String(describing: core.overSelectionCapBps))")
    }

    // MARK: - Cap actions the shell performs

    @Test func capReconnect_becomesReconnectNext_beforeItsRecord() {
        var core = SessionCore(configuration: Self.configuration(), predictor: nil)
        core.ladderKnown(Self.rungs)
        let actions = core.cap(.sessionStarted(gate: .recovery(.stall, priorBps: 2_000_000), ladder: Self.rungs, at: Self.at(0)))
        if let i = actions.firstIndex(of: .reconnectNext) {
            #expect(i + 1 < actions.count)
            if case .record(.capReconnect) = actions[i + 1] {} else { Issue.record("reconnect then its record: \(actions)") }
        }
        // A seed the cap asks for is performed by the core, not the shell.
        let seeds = Self.records(actions).compactMap { if case .capEstimatorSeed(let s) = $0 { s } else { nil } }
        if let seed = seeds.first, let bps = seed.bps {
            #expect(abs(core.estimator.estimateBps - bps) < 1, "seeded at \(bps): \(core.estimator.estimateBps)")
        }
    }

    // MARK: - Policy

    @Test func policyStep_riskHigh_changesPolicy_appliesItsKnobs_andSaysSo() throws {
        var core = Self.started(predictor: BufferThresholdPredictor())
        core.policyControllerStarted(try PolicyController(ladderBitratesBps: Self.ladderBps, initialPolicy: .lowLatency))
        _ = core.timeline.appendBuffered(upTo: 6, at: Self.at(0))
        _ = core.timeline.markFirstFrameDecoded(at: Self.at(0))
        let before = core.policyKnobs
        var changed = false
        var t = 1.0
        // Buffer 1 s (under the threshold predictor's 2 s) for long enough to pass the controller's dwell.
        while t < 60 && !changed {
            let actions = core.policyStep(
                bufferSeconds: 1, phase: .playing, atSegmentLanding: false, currentRungBps: 7_230_000,
                inFlight: nil, device: DeviceReadings(), at: Self.at(t))
            #expect(Self.records(actions).contains { if case .stallRisk(let r) = $0 { r.risk == 1 } else { false } })
            changed = Self.records(actions).contains { if case .policyChange = $0 { true } else { false } }
            t += 0.25
        }
        #expect(changed, "a sustained risk of 1 changes the policy")
        #expect(core.policyKnobs != before)
        #expect(core.policyController?.policy != .lowLatency)
    }

    @Test func policyStep_withoutPredictor_orWhileStartingUp_doesNothing() throws {
        var core = Self.started()
        #expect(
            core.policyStep(
                bufferSeconds: 1, phase: .playing, atSegmentLanding: false, currentRungBps: nil, inFlight: nil,
                device: DeviceReadings(), at: Self.at(1)
            ).isEmpty)
        var withPredictor = Self.started(predictor: BufferThresholdPredictor())
        withPredictor.policyControllerStarted(try PolicyController(ladderBitratesBps: Self.ladderBps))
        #expect(
            withPredictor.policyStep(
                bufferSeconds: 1, phase: .startingUp, atSegmentLanding: false, currentRungBps: nil, inFlight: nil,
                device: DeviceReadings(), at: Self.at(1)
            ).isEmpty)
        #expect(
            !withPredictor.policyStep(
                bufferSeconds: 1, phase: .startingUp, atSegmentLanding: true, currentRungBps: nil, inFlight: nil,
                device: DeviceReadings(), at: Self.at(1)
            ).isEmpty, "a landing segment judges the start")
    }
}

@Suite struct SessionCoreDecisionTests {
    @Test func decide_underTheOverSelectionCap_becomesTheCurrentVariant_loggedWithItsInputs() {
        var core = SessionCoreTests.started(mode: .off)
        let snapshot = SessionCoreTests.topRungInFlight(throughputBps: 2_000_000, elapsed: 3.2)
        _ = core.inFlightJudged(requestID: 1, snapshot: snapshot, judgement: core.judgeInFlight(snapshot), at: SessionCoreTests.at(3.2))
        let (decision, record) = core.decide(ladder: SessionCoreTests.rungs, at: SessionCoreTests.at(3.3), mediaSequence: 0)
        #expect(SessionCoreTests.ladderBps[decision.variantIndex] <= 1_310_000, "the abandoned rung and those above it are out of reach")
        #expect(core.currentVariant == decision.variantIndex)
        guard case .record(.variantDecision(let logged)) = record else {
            Issue.record("the decision is logged: \(record)")
            return
        }
        #expect(logged.inputs.peakBitrateCapBps == 1_310_000)
        #expect(logged.mediaSequence == 0)
    }

    @Test func overSelectionCapLifted_byNetworkLimitedDelivery_isLoggedWithItsReason() {
        var core = SessionCoreTests.started(mode: .off)
        let snapshot = SessionCoreTests.topRungInFlight(throughputBps: 2_000_000, elapsed: 3.2)
        _ = core.inFlightJudged(requestID: 1, snapshot: snapshot, judgement: core.judgeInFlight(snapshot), at: SessionCoreTests.at(3.2))
        var notes: [CapNote] = []
        var t = 4.0
        for id in 2...4 {
            let observation = TransferObservation(
                bytes: 1_000_000, transferSeconds: 0.2, firstByteSeconds: 0.001, rttSeconds: 0.001,
                mediaBitrateBps: 1_310_000)
            let actions = core.segmentTransferred(
                requestID: id, observation: observation, startedAt: SessionCoreTests.at(t),
                endedAt: SessionCoreTests.at(t + 0.2))
            notes += SessionCoreTests.records(actions).compactMap {
                if case .capNote(let n) = $0, n.kind == .overSelectionCapMoved { n } else { nil }
            }
            t += 2
        }
        #expect(!notes.isEmpty, "the cap moved and the log says so")
        #expect(notes.first?.detail.hasPrefix("over-selection cap 1310000 bps → ") == true, "from the abandon's cap: \(notes)")
        #expect(notes.contains { $0.detail.contains("network-limited") })
    }

    @Test func overSelectionCap_unchanged_logsNothing() {
        var core = SessionCoreTests.started(mode: .off)
        let observation = TransferObservation(
            bytes: 1_000_000, transferSeconds: 0.2, firstByteSeconds: 0.001, rttSeconds: 0.001,
            mediaBitrateBps: 1_310_000)
        let actions = core.segmentTransferred(
            requestID: 2, observation: observation, startedAt: SessionCoreTests.at(1),
            endedAt: SessionCoreTests.at(1.2))
        #expect(core.overSelectionCapBps == nil)
        #expect(!SessionCoreTests.records(actions).contains { if case .capNote(let n) = $0 { n.kind == .overSelectionCapMoved } else { false } })
    }

    // MARK: - Session start, segment landing, the monitor's sample

    @Test func gateClassified_recordsTheGateFirst_thenACapThatProbesTheLowestVideoRung() throws {
        var core = SessionCore(configuration: SessionCoreTests.configuration(mode: .auto), predictor: nil)
        // An audio-only rung below the video rungs: the probe does not go down to it.
        let ladder = [LadderRung(variantIndex: 5, bandwidthBps: 64_000, audioOnly: true)] + SessionCoreTests.rungs
        core.ladderKnown(ladder)
        let actions = core.gateClassified(
            .cold(.noEstimate), lookup: .absent, networkKey: nil, estimateStore: EstimateStoreConfiguration(), ladder: ladder,
            at: SessionCoreTests.at(0.2))
        let records = SessionCoreTests.records(actions)
        guard case .capGate(let gate)? = records.first else {
            Issue.record("the gate's record comes first: \(records)")
            return
        }
        #expect(gate.gate == "cold" && gate.coldReason == .noEstimate && gate.lookup == "absent" && gate.mode == .auto)
        let change = try #require(
            records.lazy.compactMap { if case .capChange(let c) = $0 { c } else { nil } }.first, "the cap starts: \(records)")
        #expect(change.capBps == 300_000, "the lowest video rung, not the 64 kbit/s audio-only one")
        #expect(core.peakBitrateCaps.startupBps == 300_000)
    }

    @Test func segmentBuffered_ofAnotherVariant_isAVariantSwitch_fromTheLastBufferedOnesBandwidth() {
        var core = SessionCoreTests.started()
        #expect(core.segmentBuffered(variantIndex: 1, bandwidthBps: 620_000, startSeconds: 0).isEmpty, "the first segment is no switch")
        #expect(core.segmentBuffered(variantIndex: 1, bandwidthBps: 620_000, startSeconds: 2).isEmpty, "nor is the same variant again")
        let actions = core.segmentBuffered(variantIndex: 3, bandwidthBps: 3_720_000, startSeconds: 4)
        #expect(
            actions == [
                .record(
                    .variantSwitch(
                        VariantSwitch(
                            fromVariantIndex: 1, toVariantIndex: 3, fromBandwidthBps: 620_000, toBandwidthBps: 3_720_000,
                            atPositionSeconds: 4)))
            ])
        #expect(core.lastBuffered == BufferedVariant(variantIndex: 3, bandwidthBps: 3_720_000))
    }

    @Test func bufferSample_isTheMediaClockAndEstimateAtThatInstant_withTheShellsInFlightFacts() {
        var core = SessionCoreTests.started()
        _ = core.timeline.appendBuffered(upTo: 6, at: SessionCoreTests.at(1))
        core.currentVariant = 2
        let sample = core.bufferSample(at: SessionCoreTests.at(1.5), inFlightIdleSeconds: 0.25, inFlightBytes: 4_096)
        #expect(sample.phase == core.timeline.phase && sample.bufferedEndSeconds == 6)
        #expect(sample.bufferSeconds == core.timeline.bufferSeconds(at: SessionCoreTests.at(1.5)))
        #expect(sample.estimateBps == core.estimator.estimateBps && sample.variantIndex == 2)
        #expect(sample.inFlightIdleSeconds == 0.25 && sample.inFlightBytes == 4_096 && sample.liveLatencySeconds == nil)
    }

    // MARK: - The start's breakdown

    @Test func breakdown_isFilledByTheStartsEvents_andTheFirstFrameCarriesIt_once() throws {
        var core = SessionCoreTests.started()
        core.multivariantPlaylistLoaded(atSeconds: 0.1)
        core.mediaPlaylistLoaded(atSeconds: 0.3)
        core.mediaPlaylistLoaded(atSeconds: 5) // a later playlist (a switch) is no part of the start
        core.segmentFirstByte(atSeconds: 0.4) // a request abandoned before any segment was buffered…
        core.segmentFirstByte(atSeconds: 0.45) // …is replaced by the one that was
        core.segmentDemuxed(lastByteAtSeconds: 0.9, demuxedAtSeconds: 0.95, demuxSeconds: 0.05)
        _ = core.timeline.appendBuffered(upTo: 2, at: SessionCoreTests.at(0.95))
        _ = core.segmentBuffered(variantIndex: 0, bandwidthBps: 300_000, startSeconds: 0)
        core.segmentFirstByte(atSeconds: 1.0) // the next segment's: after the first was buffered
        core.segmentDemuxed(lastByteAtSeconds: 1.5, demuxedAtSeconds: 1.6, demuxSeconds: 0.1)

        var reference = core
        let (actions, _) = core.firstFrame(
            at: SessionCoreTests.at(1.1), sessionStart: SessionCoreTests.at(0), variantIndex: 0, width: 640, height: 360, ptsSeconds: 0)
        let records = SessionCoreTests.records(actions)
        guard case .firstFrame(let frame)? = records.first else {
            Issue.record("frame.first first: \(records)")
            return
        }
        let b = frame.breakdown
        #expect(frame.timeToFirstFrameSeconds == 1.1 && frame.width == 640 && frame.kind == "video")
        #expect(b.multivariantPlaylistSeconds == 0.1 && b.mediaPlaylistAtSeconds == 0.3)
        #expect(abs((b.mediaPlaylistSeconds ?? 0) - 0.2) < 1e-12, "since the multivariant playlist")
        #expect(b.firstSegmentFirstByteAtSeconds == 0.45 && b.firstSegmentLastByteAtSeconds == 0.9 && b.demuxSeconds == 0.05)
        #expect(abs((b.firstSegmentFirstByteSeconds ?? 0) - 0.15) < 1e-12 && abs((b.firstSegmentLastByteSeconds ?? 0) - 0.45) < 1e-12)
        #expect(abs((b.firstFrameDecodeSeconds ?? 0) - 0.15) < 1e-12, "from the demux's end to the frame")
        #expect(b.firstFrameAtSeconds == 1.1 && core.breakdown == b)
        #expect(actions == [.record(.firstFrame(frame))] + reference.cap(.firstFrame(at: SessionCoreTests.at(1.1))), "then the cap hears of it")

        let again = core.firstFrame(
            at: SessionCoreTests.at(1.2), sessionStart: SessionCoreTests.at(0), variantIndex: 1, width: nil, height: nil, ptsSeconds: nil)
        #expect(again.actions.isEmpty && again.clock.isEmpty && core.breakdown.firstFrameAtSeconds == 1.1, "only the first frame")
    }

    @Test func mediaPlaylistPlayedAlone_tookNoTimeOfItsOwn() {
        var core = SessionCoreTests.started()
        core.multivariantPlaylistLoaded(atSeconds: 0.2)
        core.mediaPlaylistLoaded(atSeconds: 0.2, playedAlone: true)
        #expect(core.breakdown.mediaPlaylistSeconds == 0 && core.breakdown.mediaPlaylistAtSeconds == 0.2)
    }

    @Test func firstFrame_withTheStartBufferFull_startsTheClock_andTheStartCarriesItsWaitSinceTheFrame() throws {
        var core = SessionCoreTests.started()
        _ = core.timeline.appendBuffered(upTo: 30, at: SessionCoreTests.at(0.5))
        let (_, clock) = core.firstFrame(
            at: SessionCoreTests.at(0.8), sessionStart: SessionCoreTests.at(0.3), variantIndex: 0, width: nil, height: nil, ptsSeconds: nil)
        let started = try #require(clock.first { if case .started = $0 { true } else { false } }, "the clock starts: \(clock)")
        let records = SessionCoreTests.records(core.mediaClock(started, sessionStart: SessionCoreTests.at(0.3)))
        guard case .playbackStarted(let start)? = records.first else {
            Issue.record("playback.started: \(records)")
            return
        }
        #expect(abs(start.atSeconds - 0.5) < 1e-9, "session seconds")
        #expect(start.timeToFirstFrameSeconds.map { abs($0 - 0.5) < 1e-9 } == true && start.startupWaitSeconds.map { abs($0) < 1e-9 } == true)
    }

    // MARK: - The forward-buffer target

    @Test func forwardBufferTarget_isTheUsersElseAutomatic_neverBelowTheStartAndResumeThresholds() {
        var configuration = SessionCoreTests.configuration()
        var core = SessionCore(configuration: configuration, predictor: nil)
        #expect(core.forwardBufferTargetSeconds == SessionCore.automaticForwardBufferSeconds, "no user target, no policy")
        configuration.preferredForwardBufferDurationSeconds = 12
        core = SessionCore(configuration: configuration, predictor: nil)
        #expect(core.forwardBufferTargetSeconds == 12)
        // A 1 s target under the resume threshold would stop loading before a stall could end.
        configuration.preferredForwardBufferDurationSeconds = 1
        core = SessionCore(configuration: configuration, predictor: nil)
        let floor = max(core.timeline.configuration.startupBufferSeconds, core.timeline.configuration.resumeBufferSeconds)
        #expect(floor > 1 && core.forwardBufferTargetSeconds == floor)
        #expect(SessionCore.forwardBufferTargetSeconds(preferredSeconds: 0, policySeconds: 45, startupSeconds: 2, resumeSeconds: 4) == 45)
        #expect(SessionCore.forwardBufferTargetSeconds(preferredSeconds: 20, policySeconds: 45, startupSeconds: 2, resumeSeconds: 4) == 20)
    }

    @Test func loaderInputs_areTheMediaClockTheTargetAndThePeakCapInForce() {
        var core = SessionCoreTests.started()
        _ = core.timeline.appendBuffered(upTo: 8, at: SessionCoreTests.at(1))
        let inputs = core.loaderInputs(at: SessionCoreTests.at(1.5))
        #expect(inputs.bufferSeconds == core.timeline.bufferSeconds(at: SessionCoreTests.at(1.5)) && inputs.bufferedEndSeconds == 8)
        #expect(inputs.forwardBufferTargetSeconds == core.forwardBufferTargetSeconds && inputs.peakCapBps == core.peakBitrateCaps.effectiveBps)
        #expect(!inputs.byteBoundHolds && core.loaderInputs(at: SessionCoreTests.at(1.5), byteBoundHolds: true).byteBoundHolds)
    }

    // MARK: - The end of playback

    @Test func playbackEnd_isTheDurationLimitPlayed_orTheStreamsEnd() {
        var configuration = SessionCoreTests.configuration()
        configuration.durationLimitSeconds = 3
        var core = SessionCore(configuration: configuration, predictor: nil)
        _ = core.timeline.appendBuffered(upTo: 10, at: SessionCoreTests.at(0))
        _ = core.timeline.markFirstFrameDecoded(at: SessionCoreTests.at(0.5))
        _ = core.timeline.advance(to: SessionCoreTests.at(1))
        #expect(core.timeline.phase == .playing && core.playbackEnd(at: SessionCoreTests.at(1)) == nil)
        let played = core.timeline.playedSeconds(at: SessionCoreTests.at(10))
        #expect(played >= 3 && core.playbackEnd(at: SessionCoreTests.at(10)) == .durationReached, "\(played) s played")

        configuration.durationLimitSeconds = nil
        core = SessionCore(configuration: configuration, predictor: nil)
        _ = core.timeline.appendBuffered(upTo: 2, at: SessionCoreTests.at(0))
        _ = core.timeline.markEndOfStream(at: SessionCoreTests.at(0))
        _ = core.timeline.markFirstFrameDecoded(at: SessionCoreTests.at(0.1))
        #expect(core.playbackEnd(at: SessionCoreTests.at(1)) == nil, "still playing the last 2 s")
        _ = core.timeline.advance(to: SessionCoreTests.at(5))
        #expect(core.timeline.phase == .ended && core.playbackEnd(at: SessionCoreTests.at(5)) == .completed)
    }

    // MARK: - Thresholds the stream can hold

    @Test func thresholdCeiling_lowersTheThresholds_loggedOncePerValue_andAgainAfterItLifted() throws {
        var core = SessionCoreTests.started()
        let startup = core.timeline.configuration.startupBufferSeconds
        // A VOD with less left than the start threshold asks for.
        let lowered = SessionCoreTests.records(core.thresholdCeilingSet(.vod(remainingSeconds: startup / 2)))
        let clamp = try #require(lowered.lazy.compactMap { if case .thresholdClamp(let c) = $0 { c } else { nil } }.first, "\(lowered)")
        #expect(clamp.threshold == .startup && clamp.requestedSeconds == startup && clamp.clampedSeconds < startup)
        #expect(core.thresholdCeilingSet(.vod(remainingSeconds: startup / 2)).isEmpty, "said once")
        #expect(core.thresholdClamps().isEmpty)
        #expect(core.thresholdCeilingSet(nil).isEmpty, "lifted: nothing to say")
        #expect(!core.thresholdCeilingSet(.vod(remainingSeconds: startup / 2)).isEmpty, "lowered again: said again")
    }

    @Test func startPolicyController_withoutAPredictor_startsNothing_withOne_appliesTheFirstPolicysKnobs() {
        var core = SessionCoreTests.started()
        #expect(core.startPolicyController(PolicyController.Configuration(), ladderBitratesBps: [300_000, 1_200_000]).isEmpty)
        #expect(core.policyController == nil && core.policyKnobs == nil)
        var withPredictor = SessionCoreTests.started(predictor: BufferThresholdPredictor())
        let actions = withPredictor.startPolicyController(PolicyController.Configuration(), ladderBitratesBps: [300_000, 1_200_000])
        #expect(!SessionCoreTests.records(actions).contains { if case .error = $0 { true } else { false } }, "a valid configuration")
        #expect(withPredictor.policyController != nil && withPredictor.policyKnobs == withPredictor.policyController?.knobs)
    }
}
