import Testing
@testable import HLSCore

/// The estimate-aware startup/recovery cap, in virtual time: every transition,
/// boundary pairs for its thresholds, and the seed's scenarios.
@Suite struct StartupCapControllerTests {
    /// A ladder shaped like the seed's insane_newer_p200_h264 (360p … 4K).
    static let ladder: [LadderRung] = [988_000, 1_540_000, 2_500_000, 4_500_000, 8_000_000, 15_000_000, 33_808_000]
        .enumerated().map { LadderRung(variantIndex: $0.offset, bandwidthBps: $0.element) }
    let key = NetworkKey(originHost: "origin", localNetwork: "lo")

    func t(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: s) }

    func controller(
        _ gate: EstimateGate, mode: StartupCapMode = .auto, preferred: Int? = nil, at: Double = 0
    ) -> (StartupCapController, [StartupCapAction]) {
        var c = StartupCapController(configuration: StartupCapConfiguration(mode: mode, preferredPeakBitRateBps: preferred))
        let actions = c.event(.sessionStarted(gate: gate, ladder: Self.ladder, at: t(at)))
        return (c, actions)
    }

    func warmGate(_ bps: Double = 20e6) -> EstimateGate {
        .warm(EstimateRecord(networkKey: key, valueBps: bps, sampleCount: 10, measuredAt: 1_800_000_000))
    }

    /// A network-limited sample of `bps`, request begun at `started`.
    func nl(_ bps: Double, started: Double, done: Double? = nil) -> StartupCapEvent {
        .sample(
            CapSample(
                verdict: NetworkLimitVerdict(reasons: [], throughputBps: bps), requestStartedAt: t(started), completedAt: t(done ?? started + 0.5)))
    }

    func caps(_ actions: [StartupCapAction]) -> [CapChangeRecord] {
        actions.compactMap { if case .setPeakBitrateCap(let r) = $0 { r } else { nil } }
    }
    func notes(_ actions: [StartupCapAction]) -> [CapNoteKind] {
        actions.compactMap { if case .log(let n) = $0 { n.kind } else { nil } }
    }
    func seeds(_ actions: [StartupCapAction]) -> [EstimatorSeedRecord] {
        actions.compactMap { if case .seedEstimator(let r) = $0 { r } else { nil } }
    }
    func reconnects(_ actions: [StartupCapAction]) -> [ReconnectRecord] {
        actions.compactMap { if case .reconnect(let r) = $0 { r } else { nil } }
    }

    // MARK: Session start, per gate and mode

    @Test func warm_auto_noCap_estimatorSeeded() {
        let (c, a) = controller(warmGate(12e6))
        #expect(c.phase == .uncapped)
        #expect(c.capBps == nil)
        #expect(caps(a).map(\.reason) == [.warmEstimate])
        #expect(seeds(a) == [EstimatorSeedRecord(resetFirst: false, bps: 12e6, weightSeconds: 2, reason: .warmStart)])
        #expect(notes(a) == [.gate])
    }

    @Test func cold_auto_capsAtLowestRung() {
        let (c, a) = controller(.cold(.noEstimate))
        #expect(c.phase == .probing)
        #expect(c.capBps == 988_000)
        #expect(caps(a) == [CapChangeRecord(capBps: 988_000, previousCapBps: nil, reason: .coldProbe, phase: .probing)])
        #expect(seeds(a).isEmpty)
    }

    @Test func cold_auto_preferredPeakBitRate_capsThere() {
        let (c, _) = controller(.cold(.expired), preferred: 2_000_000)
        #expect(c.capBps == 2_000_000)
        #expect(c.probeCapBps == 2_000_000)
    }

    @Test func recoveryGate_atStart_probesLowWithPrior() {
        let (c, a) = controller(.recovery(.restart, priorBps: 9e6))
        #expect(c.phase == .recovering)
        #expect(c.capBps == 988_000)
        #expect(c.priorBps == 9e6)
        #expect(reconnects(a) == [ReconnectRecord(reason: .restart, priorBps: 9e6)])
    }

    @Test func off_noCap_warmStillSeeds_failuresOnlyLogged() {
        var (c, a) = controller(warmGate(), mode: .off)
        #expect(c.capBps == nil)
        #expect(caps(a).map(\.reason) == [.policyOff])
        #expect(seeds(a).count == 1)
        a = c.event(.wedgeDetected(estimateBps: 20e6, at: t(5)))
        #expect(notes(a) == [.ignoredByMode])
        #expect(c.capBps == nil)
        a = c.event(.overSelected(suggestedCapBps: 1e6, ratio: 17, at: t(6)))
        #expect(notes(a) == [.ignoredByMode])
        #expect(c.capBps == nil)
    }

    @Test func firstVariant_capsLowestEvenWarm_releasesFullyOnFirstFrame() {
        var (c, a) = controller(warmGate(), mode: .firstVariant)
        #expect(c.capBps == 988_000)
        #expect(caps(a).map(\.reason) == [.firstVariantProbe])
        a = c.event(.firstFrame(at: t(0.8)))
        #expect(caps(a) == [CapChangeRecord(capBps: nil, previousCapBps: 988_000, reason: .releasedOnFirstFrame, phase: .uncapped)])
        a = c.event(.stallStarted(estimateBps: 5e6, at: t(10)))
        #expect(notes(a) == [.ignoredByMode])
        #expect(c.capBps == nil)
    }

    // MARK: Cold: release on first frame, then earn each step

    @Test func cold_firstFrame_tooFewSamples_capHeldAtProbe() {
        var (c, _) = controller(.cold(.noEstimate))
        _ = c.event(nl(20e6, started: 0.1))
        let a = c.event(.firstFrame(at: t(0.8)))
        #expect(notes(a) == [.firstFrameCapHeld])
        #expect(caps(a).isEmpty)
        #expect(c.capBps == 988_000)
        #expect(c.phase == .ramping)
        // The next fresh sample completes the streak and earns the step.
        let b = c.event(nl(20e6, started: 1))
        #expect(caps(b).map(\.reason) == [.earnedStep])
        #expect(c.capBps == 8_000_000)
    }

    @Test func cold_firstFrame_withStreak_releasedToEarnedRung() {
        var (c, _) = controller(.cold(.noEstimate))
        _ = c.event(nl(20e6, started: 0.1))
        _ = c.event(nl(20e6, started: 0.5))
        let a = c.event(.firstFrame(at: t(0.8)))
        // 0.7 × 20 Mbps = 14 Mbps → the 8 Mbps rung.
        #expect(
            caps(a) == [
                CapChangeRecord(
                    capBps: 8_000_000, previousCapBps: 988_000, reason: .releasedOnFirstFrame,
                    phase: .ramping, supportBps: 20e6, samplesBps: [20e6, 20e6])
            ])
    }

    @Test func ramp_healthyBuffer_justUnderRelease_capHeld_atRelease_noCap() {
        var (c, _) = controller(.cold(.noEstimate))
        _ = c.event(.firstFrame(at: t(0.8)))
        #expect(c.phase == .ramping && c.capBps == 988_000)
        let release = StartupCapConfiguration().rampReleaseBufferSeconds!
        #expect(caps(c.event(.tick(t(30), bufferSeconds: release - 0.001))).isEmpty)
        #expect(c.capBps == 988_000)
        let a = c.event(.tick(t(31), bufferSeconds: release))
        #expect(caps(a).map(\.reason) == [.releasedOnHealthyBuffer])
        #expect(c.capBps == nil && c.phase == .uncapped)
        #expect(caps(c.event(.tick(t(32), bufferSeconds: 40))).isEmpty, "once")
    }

    @Test func recovery_healthyBuffer_keepsItsCap_untilDeliveryConfirmsIt() {
        var (c, _) = controller(warmGate())
        _ = c.event(.stallStarted(estimateBps: 19e6, at: t(20)))
        #expect(c.phase == .recovering)
        #expect(caps(c.event(.tick(t(25), bufferSeconds: 60))).isEmpty)
        #expect(c.capBps == 988_000)
    }

    @Test func ramp_healthyBuffer_withoutARelease_capHeld() {
        var configuration = StartupCapConfiguration()
        configuration.rampReleaseBufferSeconds = nil
        var c = StartupCapController(configuration: configuration)
        _ = c.event(.sessionStarted(gate: .cold(.noEstimate), ladder: Self.ladder, at: t(0)))
        _ = c.event(.firstFrame(at: t(0.8)))
        #expect(caps(c.event(.tick(t(30), bufferSeconds: 1000))).isEmpty)
        #expect(c.capBps == 988_000)
    }

    @Test func ramp_safetyFactor_justUnderSupports_lowerRung_atSupports_higher() {
        // The 4.5 Mbps rung needs a streak minimum ≥ 4.5 Mbps ÷ 0.7 = 6 428 571.43 bps.
        for (bps, expected) in [(6_428_571.0, 2_500_000), (6_428_572.0, 4_500_000)] {
            var (c, _) = controller(.cold(.noEstimate))
            _ = c.event(.firstFrame(at: t(0.5)))
            _ = c.event(nl(bps, started: 1))
            _ = c.event(nl(bps, started: 2))
            #expect(c.capBps == expected, "streak at \(bps)")
        }
    }

    @Test func ramp_samplesToUnlock_oneIsNotEnough_twoIs() {
        var (c, _) = controller(.cold(.noEstimate))
        _ = c.event(.firstFrame(at: t(0.5)))
        #expect(caps(c.event(nl(10e6, started: 1))).isEmpty)
        #expect(c.capBps == 988_000)
        #expect(caps(c.event(nl(10e6, started: 2))).map(\.capBps) == [4_500_000])
    }

    @Test func ramp_lowestOfStreakDecides() {
        var (c, _) = controller(.cold(.noEstimate))
        _ = c.event(.firstFrame(at: t(0.5)))
        _ = c.event(nl(30e6, started: 1))
        _ = c.event(nl(4e6, started: 2)) // 0.7 × 4 Mbps = 2.8 → 2.5 Mbps rung
        #expect(c.capBps == 2_500_000)
    }

    @Test func ramp_notNetworkLimitedSamples_neitherCountNorBreakStreak() {
        var (c, _) = controller(.cold(.noEstimate))
        _ = c.event(.firstFrame(at: t(0.5)))
        _ = c.event(nl(10e6, started: 1))
        let appLimited = StartupCapEvent.sample(
            CapSample(
                verdict: NetworkLimitVerdict(reasons: [.tcpAppLimited], throughputBps: 100e6),
                requestStartedAt: t(2), completedAt: t(2.1)))
        #expect(c.event(appLimited).isEmpty)
        #expect(c.streakBps == [10e6])
        _ = c.event(nl(10e6, started: 3))
        #expect(c.capBps == 4_500_000)
    }

    @Test func ramp_staleSample_fromBeforeProbe_notCounted() {
        var (c, _) = controller(.cold(.noEstimate), at: 10)
        let a = c.event(nl(20e6, started: 9.9, done: 10.2))
        #expect(notes(a) == [.staleSample])
        #expect(c.streakBps.isEmpty)
    }

    @Test func ramp_reachesTopRung_capRemoved() {
        var (c, _) = controller(.cold(.noEstimate))
        _ = c.event(.firstFrame(at: t(0.5)))
        _ = c.event(nl(50e6, started: 1))
        let a = c.event(nl(50e6, started: 2)) // 0.7 × 50 = 35 ≥ 33.808
        #expect(caps(a).map(\.capBps) == [nil])
        #expect(c.phase == .uncapped)
    }

    @Test func ramp_neverLowersTheCap_onSlowSamples() {
        var (c, _) = controller(.cold(.noEstimate))
        _ = c.event(.firstFrame(at: t(0.5)))
        _ = c.event(nl(10e6, started: 1))
        _ = c.event(nl(10e6, started: 2))
        #expect(c.capBps == 4_500_000)
        _ = c.event(nl(1e6, started: 3))
        _ = c.event(nl(1e6, started: 4))
        #expect(c.capBps == 4_500_000) // lowering is the selector's job (and over-selection's)
    }

    // MARK: Over-selection downshift

    @Test func overSelected_capsAtHighestRungUnderSuggestion_thenRampNeedsFreshSamples() {
        var (c, _) = controller(warmGate())
        _ = c.event(.firstFrame(at: t(1)))
        let a = c.event(.overSelected(suggestedCapBps: 1_400_000, ratio: 16.9, at: t(3)))
        let r = caps(a)
        #expect(r.map(\.capBps) == [988_000])
        #expect(r.first?.reason == .overSelectionDownshift)
        #expect(r.first?.overSelectionRatio == 16.9)
        #expect(c.phase == .ramping)
        #expect(notes(c.event(nl(20e6, started: 2.5))) == [.staleSample])
        _ = c.event(nl(3e6, started: 4))
        _ = c.event(nl(3e6, started: 5))
        #expect(c.capBps == 1_540_000) // 0.7 × 3 = 2.1
    }

    /// Before the first frame an over-selection proves the warm estimate wrong:
    /// re-probe at the lowest rung with the transfer's own throughput as the
    /// prior (not the downshift, which would start on a higher rung). The first
    /// frame is the boundary: just after it, the same event is a downshift.
    @Test func overSelectedBeforeFirstFrame_isAFailedStart_reProbesLowestWithMeasuredPrior() {
        var (c, _) = controller(warmGate(50e6))
        let a = c.event(.overSelected(suggestedCapBps: 1_400_000, ratio: 16.9, measuredBps: 2e6, at: t(3)))
        #expect(caps(a).map(\.capBps) == [988_000])
        #expect(caps(a).first?.reason == .recoveryProbe)
        #expect(caps(a).first?.overSelectionRatio == 16.9)
        #expect(c.phase == .recovering)
        #expect(c.recoveryReason == .startupOverSelection)
        #expect(c.priorBps == 2e6)
        #expect(seeds(a) == [EstimatorSeedRecord(resetFirst: true, bps: 2e6, weightSeconds: 0.5, reason: .recoveryPrior)])
        #expect(reconnects(a).map(\.reason) == [.startupOverSelection])
        // Fresh delivery at the measured rate confirms it: back to uncapped (the warm start was uncapped).
        _ = c.event(.firstFrame(at: t(5)))
        _ = c.event(nl(1.9e6, started: 3.5))
        let confirmed = caps(c.event(nl(1.9e6, started: 4.5)))
        #expect(confirmed.map(\.reason) == [.recoveryConfirmed])
        #expect(c.capBps == nil)

        var (d, _) = controller(warmGate(50e6))
        _ = d.event(.firstFrame(at: t(2.999)))
        let b = d.event(.overSelected(suggestedCapBps: 1_400_000, ratio: 16.9, measuredBps: 2e6, at: t(3)))
        #expect(caps(b).map(\.reason) == [.overSelectionDownshift])
        #expect(d.phase == .ramping)
    }

    @Test func overSelected_suggestionAtOrAboveCurrentCap_noChange() {
        var (c, _) = controller(.cold(.noEstimate))
        _ = c.event(.firstFrame(at: t(1)))
        #expect(c.event(.overSelected(suggestedCapBps: 1_000_000, ratio: 3, at: t(3))).isEmpty)
        #expect(c.capBps == 988_000)
    }

    // MARK: Recovery

    @Test func failure_fromWarm_capsLow_demotesEstimateToPrior_reconnects() {
        var (c, _) = controller(warmGate())
        let a = c.event(.stallStarted(estimateBps: 19e6, at: t(20)))
        #expect(c.phase == .recovering)
        #expect(c.recoveryReason == .stall)
        #expect(caps(a).map(\.reason) == [.recoveryProbe])
        #expect(c.capBps == 988_000)
        #expect(seeds(a) == [EstimatorSeedRecord(resetFirst: true, bps: 19e6, weightSeconds: 0.5, reason: .recoveryPrior)])
        #expect(reconnects(a) == [ReconnectRecord(reason: .stall, priorBps: 19e6)])
    }

    @Test func failure_eachReason_entersRecovery() {
        for event in [
            StartupCapEvent.stallStarted(estimateBps: 5e6, at: t(9)), .wedgeDetected(estimateBps: 5e6, at: t(9)),
            .loadFailed(estimateBps: 5e6, at: t(9)), .liveResync(estimateBps: 5e6, at: t(9))
        ] {
            var (c, _) = controller(warmGate())
            _ = c.event(event)
            #expect(c.phase == .recovering)
            #expect(c.capBps == 988_000)
        }
    }

    @Test func failure_withoutMeasuredEstimate_resetOnly() {
        var (c, _) = controller(.cold(.noEstimate))
        let a = c.event(.wedgeDetected(estimateBps: nil, at: t(4)))
        #expect(seeds(a) == [EstimatorSeedRecord(resetFirst: true, bps: nil, weightSeconds: 0.5, reason: .recoveryPrior)])
        #expect(c.priorBps == nil)
    }

    @Test func recovery_confirmShare_justUnder_rampsOnEvidence_atShare_confirmsAndRestores() {
        // Prior 20 Mbps; confirmation needs ≥ 0.8 × 20 = 16 Mbps.
        var (c, _) = controller(warmGate())
        _ = c.event(.wedgeDetected(estimateBps: 20e6, at: t(10)))
        _ = c.event(nl(15_999_999, started: 10.1))
        let under = c.event(nl(15_999_999, started: 10.5))
        #expect(caps(under).map(\.reason) == [.earnedStep])
        #expect(c.capBps == 8_000_000)
        #expect(c.phase == .recovering)

        var (d, _) = controller(warmGate())
        _ = d.event(.wedgeDetected(estimateBps: 20e6, at: t(10)))
        _ = d.event(nl(16e6, started: 10.1))
        let at = d.event(nl(16e6, started: 10.5))
        #expect(caps(at).map(\.reason) == [.recoveryConfirmed])
        #expect(d.capBps == nil) // it was uncapped before the failure
        #expect(d.phase == .uncapped)
        #expect(d.priorBps == nil)
    }

    @Test func recovery_confirmSamples_oneIsNotEnough_twoIs() {
        var (c, _) = controller(warmGate())
        _ = c.event(.wedgeDetected(estimateBps: 20e6, at: t(10)))
        #expect(caps(c.event(nl(20e6, started: 10.1))).isEmpty)
        #expect(c.phase == .recovering)
        #expect(caps(c.event(nl(20e6, started: 10.5))).map(\.reason) == [.recoveryConfirmed])
    }

    @Test func recovery_confirmation_restoresPreFailureCapOrBetter() {
        // Ramping at 4.5 Mbps, then a stall; confirmation restores ≥ 4.5 Mbps.
        var (c, _) = controller(.cold(.noEstimate))
        _ = c.event(.firstFrame(at: t(0.5)))
        _ = c.event(nl(7e6, started: 1))
        _ = c.event(nl(7e6, started: 2))
        #expect(c.capBps == 4_500_000)
        _ = c.event(.stallStarted(estimateBps: 7e6, at: t(10)))
        #expect(c.capBps == 988_000)
        _ = c.event(nl(6e6, started: 10.1))
        let a = c.event(nl(6e6, started: 10.6))
        #expect(caps(a).map(\.reason) == [.recoveryConfirmed])
        #expect(c.capBps == 4_500_000)
        #expect(c.phase == .ramping)
    }

    @Test func recovery_priorLifetime_justUnder_kept_at_dropped_capUnchanged() {
        var (c, _) = controller(warmGate())
        _ = c.event(.wedgeDetected(estimateBps: 20e6, at: t(10)))
        #expect(c.event(.tick(t(39.999))).isEmpty)
        #expect(c.priorBps == 20e6)
        let a = c.event(.tick(t(40)))
        #expect(notes(a) == [.priorExpired])
        #expect(c.priorBps == nil)
        #expect(c.capBps == 988_000)
        #expect(c.phase == .recovering)
    }

    @Test func recovery_repeatedFailure_keepsFirstPrior_renewsConnection_noReseed() {
        var (c, _) = controller(warmGate())
        _ = c.event(.wedgeDetected(estimateBps: 20e6, at: t(10)))
        let a = c.event(.stallStarted(estimateBps: 0.9e6, at: t(15)))
        #expect(notes(a) == [.repeatedFailure])
        #expect(seeds(a).isEmpty)
        #expect(reconnects(a) == [ReconnectRecord(reason: .stall, priorBps: 20e6)])
        #expect(c.priorBps == 20e6)
        // Samples of requests begun before the second failure are no longer fresh.
        #expect(notes(c.event(nl(20e6, started: 14))) == [.staleSample])
    }

    @Test func applying_composesWithAnExistingCap() {
        let (c, _) = controller(.cold(.noEstimate))
        let base = SelectionSnapshot(ladder: Self.ladder, estimateBps: 20e6, estimateIsMeasured: true, bufferSeconds: 0, currentVariantIndex: nil)
        #expect(c.applying(to: base).peakBitrateCapBps == 988_000)
        var lower = base; lower.peakBitrateCapBps = 500_000
        #expect(c.applying(to: lower).peakBitrateCapBps == 500_000)
        let (w, _) = controller(warmGate())
        #expect(w.applying(to: base).peakBitrateCapBps == nil)
    }

    @Test func capChangeRecord_encodesForTheLog() {
        let (_, a) = controller(.cold(.noEstimate))
        let line = SessionLogEncoder().line(caps(a)[0])
        #expect(line == #"{"capBps":988000,"phase":"probing","reason":"cold-probe","samplesBps":[]}"#)
    }

    // MARK: The seed's scenarios

    /// Fetches `count` 6 s segments over a link of `linkBps` (RTT 20 ms),
    /// choosing each rung with the real selector under the controller's cap,
    /// feeding the real classifier and estimator. Returns the rungs fetched.
    func simulate(
        _ c: inout StartupCapController, estimator e: inout BandwidthEstimator, linkBps: Double, from start: Double,
        count: Int, current: inout Int?
    ) -> (rungs: [Int], end: Double) {
        let selector = VariantSelector()
        let classifier = NetworkLimitClassifier()
        var now = start
        var fetched: [Int] = []
        for k in 0..<count {
            let snap = c.applying(
                to: SelectionSnapshot(
                    ladder: Self.ladder, estimateBps: e.estimateBps, estimateIsMeasured: e.hasEstimate,
                    bufferSeconds: Double(k) * 6, currentVariantIndex: current))
            let choice = selector.select(snap)
            let rung = Self.ladder[choice.variantIndex].bandwidthBps
            fetched.append(rung)
            current = choice.variantIndex
            let bytes = Int(Double(rung) * 6 / 8)
            let transfer = Double(bytes) * 8 / linkBps
            let obs = TransferObservation(bytes: bytes, transferSeconds: transfer, firstByteSeconds: 0.04, rttSeconds: 0.02)
            e.add(ThroughputSample(bytes: bytes, transferSeconds: transfer, firstByteSeconds: 0.04))
            let started = now
            now += 0.04 + transfer
            _ = c.event(.sample(CapSample(verdict: classifier.classify(obs), requestStartedAt: t(started), completedAt: t(now))))
        }
        return (fetched, now)
    }

    /// Seed: a cold 4K over-select on a 20 Mbps link wedged AVPlayer for
    /// 89.7 s. Here the cold start is capped at the lowest rung (first
    /// segment ≈ 0.3 s at 20 Mbps), the cap is released on first frame to what
    /// delivery earned, and the ramp stops where 20 Mbps supports: never 4K.
    @Test func cold4KOverSelect_20MbpsLink_cappedLowThenRamps() {
        var (c, _) = controller(.cold(.noEstimate))
        var e = BandwidthEstimator()
        var current: Int?
        let first = simulate(&c, estimator: &e, linkBps: 20e6, from: 0, count: 1, current: &current)
        #expect(first.rungs == [988_000])
        #expect(first.end < 0.5)
        _ = c.event(.firstFrame(at: t(first.end + 0.05)))
        let rest = simulate(&c, estimator: &e, linkBps: 20e6, from: first.end + 0.05, count: 8, current: &current)
        #expect(rest.rungs.first! < 33_808_000)
        #expect(!rest.rungs.contains(33_808_000))
        #expect(!rest.rungs.contains(15_000_000)) // needs 21.4 Mbps
        #expect(rest.rungs.last == 8_000_000)
        #expect(rest.rungs == rest.rungs.sorted()) // only up, never an over-select and fall back
        #expect(c.capBps == 8_000_000)
    }

    /// Seed: after a wedge the two failure modes look alike from history;
    /// the re-probe on a fresh connection tells them apart. Black-holed
    /// request, link fine: fresh delivery at the old rate confirms the prior
    /// within two lowest-rung segments and the cap is lifted.
    @Test func recovery_blackHoledRequest_freshDeliveryAtOldRate_rampsBack() {
        var (c, _) = controller(warmGate(20e6))
        var e = BandwidthEstimator()
        e.seed(estimateBps: 20e6, weightSeconds: 2)
        var current: Int? = 4
        let a = c.event(.wedgeDetected(estimateBps: e.estimateBps, at: t(30)))
        #expect(reconnects(a).count == 1)
        e = BandwidthEstimator() // the runtime performs the reset-and-seed action
        e.seed(estimateBps: seeds(a)[0].bps!, weightSeconds: seeds(a)[0].weightSeconds)
        let probe = simulate(&c, estimator: &e, linkBps: 20e6, from: 30, count: 2, current: &current)
        #expect(probe.rungs == [988_000, 988_000])
        #expect(c.capBps == nil)
        #expect(c.phase == .uncapped)
        #expect(probe.end - 30 < 2 * 6) // within two segment durations
    }

    /// Link collapse: the fresh connection still starves (no delivery, then a
    /// trickle): the cap stays at the probe, the prior expires, and only when
    /// the link comes back does delivery earn the ramp again.
    @Test func recovery_linkCollapse_starvationStaysCapped_thenEarnsRampWhenLinkReturns() {
        var (c, _) = controller(warmGate(20e6))
        _ = c.event(.wedgeDetected(estimateBps: 20e6, at: t(30)))
        // Starvation: ticks, no samples.
        var now = 30.0
        while now < 60 {
            now += 0.25
            _ = c.event(.tick(t(now)))
            #expect(c.capBps == 988_000)
        }
        #expect(c.priorBps == nil)
        // A trickle at 0.5 Mbps: network-limited, but supports nothing higher.
        var e = BandwidthEstimator()
        var current: Int? = 0
        let trickle = simulate(&c, estimator: &e, linkBps: 0.5e6, from: now, count: 2, current: &current)
        #expect(trickle.rungs == [988_000, 988_000])
        #expect(c.capBps == 988_000)
        // The link returns at 20 Mbps: two fresh samples earn the ramp.
        let back = simulate(&c, estimator: &e, linkBps: 20e6, from: trickle.end, count: 2, current: &current)
        #expect(back.rungs == [988_000, 988_000])
        #expect(c.capBps == 8_000_000)
        #expect(c.phase == .ramping)
        #expect(back.end - trickle.end < 2 * 6)
    }
}
