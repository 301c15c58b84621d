import Testing
@testable import HLSCore

/// Live resync → restart → give up, in virtual time.
@Suite struct LiveResyncPolicyTests {
    func t(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: s) }

    func resyncs(_ a: [LiveResyncAction]) -> [LiveResyncRecord] {
        a.compactMap { if case .resyncToLiveEdge(let r) = $0 { r } else { nil } }
    }
    func restarts(_ a: [LiveResyncAction]) -> [LiveResyncRecord] {
        a.compactMap { if case .restart(let r) = $0 { r } else { nil } }
    }

    @Test func thresholds_formulas() {
        let c = LiveResyncConfiguration()
        #expect(c.stallResyncSeconds(targetDurationSeconds: 6) == 12)
        #expect(c.stallResyncSeconds(targetDurationSeconds: 2) == 6)
        #expect(c.resyncDeadlineSeconds(targetDurationSeconds: 6) == 12)
        #expect(c.resyncDeadlineSeconds(targetDurationSeconds: 2) == 6)
        #expect(c.restartDeadlineSeconds(targetDurationSeconds: 6) == 18)
        #expect(c.restartDeadlineSeconds(targetDurationSeconds: 2) == 10)
    }

    @Test func fellOutOfWindow_resyncsAtOnce_withRecoveryCap() {
        var p = LiveResyncPolicy(targetDurationSeconds: 6)
        let a = p.event(.fellOutOfWindow(.segmentRolledOff, at: t(50)))
        let r = resyncs(a)
        #expect(r.count == 1)
        #expect(r[0].trigger == .segmentRolledOff)
        #expect(r[0].recoveryCapApplied)
        #expect(r[0].deadlineSeconds == 12)
        #expect(p.phase == .resyncing)
    }

    @Test func eachTrigger_resyncs() {
        for trigger in [LiveResyncTrigger.segmentRolledOff, .expiredSegment, .behindWindow] {
            var p = LiveResyncPolicy(targetDurationSeconds: 6)
            #expect(resyncs(p.event(.fellOutOfWindow(trigger, at: t(1)))).map(\.trigger) == [trigger])
        }
    }

    @Test func stall_justUnderThreshold_noResync_atThreshold_resync() {
        var p = LiveResyncPolicy(targetDurationSeconds: 6)
        _ = p.event(.stallStarted(at: t(100)))
        #expect(p.phase == .stalled)
        #expect(p.event(.tick(t(111.999))).isEmpty)
        let r = resyncs(p.event(.tick(t(112))))
        #expect(r.map(\.trigger) == [.longStall])
        #expect(r.first?.stalledSeconds == 12)
    }

    @Test func stallEnded_beforeThreshold_backToMonitoring() {
        var p = LiveResyncPolicy(targetDurationSeconds: 6)
        _ = p.event(.stallStarted(at: t(100)))
        _ = p.event(.stallEnded(at: t(104)))
        #expect(p.phase == .monitoring)
        #expect(p.event(.tick(t(200))).isEmpty)
    }

    @Test func resync_playbackResumesInTime_resolved() {
        var p = LiveResyncPolicy(targetDurationSeconds: 6)
        _ = p.event(.fellOutOfWindow(.expiredSegment, at: t(50)))
        #expect(p.event(.frameDecoded(at: t(51))).isEmpty)
        let a = p.event(.stallEnded(at: t(51.5)))
        guard case .resolved(let r)? = a.first else { Issue.record("expected resolved, got \(a)"); return }
        #expect(r.phase == .resyncing)
        #expect(r.episodeSeconds == 1.5)
        #expect(r.firstFrameSeconds == 1)
        #expect(r.resolvedBy == .playbackResumed)
        #expect(p.phase == .monitoring)
    }

    /// Seed: a resync before playback had started resolved on the first decoded frame, so a
    /// loop of pre-start resyncs (each decoding a frame, none reaching the start threshold)
    /// never escalated. A frame is noted, but only the media clock playing ends an episode.
    @Test func preStartResync_framesWithoutPlayback_escalateToRestarts_thenGiveUp() {
        var p = LiveResyncPolicy(targetDurationSeconds: 6)
        _ = p.event(.fellOutOfWindow(.behindWindow, at: t(0)))
        #expect(p.event(.frameDecoded(at: t(1))).isEmpty, "a frame alone does not resolve")
        #expect(p.phase == .resyncing)
        let first = restarts(p.event(.tick(t(12))))
        #expect(first.map(\.attempt) == [1])
        #expect(first.first?.firstFrameSeconds == 1, "the restart says the resync got as far as a frame")
        #expect(p.event(.frameDecoded(at: t(13))).isEmpty)
        #expect(restarts(p.event(.tick(t(30)))).map(\.attempt) == [2])
        #expect(restarts(p.event(.tick(t(48)))).map(\.attempt) == [3])
        _ = p.event(.frameDecoded(at: t(50)))
        let a = p.event(.tick(t(66)))
        guard case .giveUp(let r)? = a.first else { Issue.record("expected giveUp, got \(a)"); return }
        #expect(r.firstFrameSeconds == 2)
        #expect(p.phase == .failed)
    }

    @Test func preStartResync_playbackStarts_resolved() {
        var p = LiveResyncPolicy(targetDurationSeconds: 2)
        _ = p.event(.fellOutOfWindow(.behindWindow, at: t(3)))
        _ = p.event(.frameDecoded(at: t(3.5)))
        let a = p.event(.playbackStarted(at: t(4)))
        guard case .resolved(let r)? = a.first else { Issue.record("expected resolved, got \(a)"); return }
        #expect(r.resolvedBy == .playbackStarted)
        #expect(r.episodeSeconds == 1)
        #expect(p.phase == .monitoring)
        // Nothing left to escalate.
        #expect(p.event(.tick(t(100))).isEmpty)
    }

    @Test func frameOrStart_outsideAnEpisode_changeNothing() {
        var p = LiveResyncPolicy(targetDurationSeconds: 6)
        #expect(p.event(.frameDecoded(at: t(1))).isEmpty)
        #expect(p.event(.playbackStarted(at: t(2))).isEmpty)
        _ = p.event(.stallStarted(at: t(10)))
        #expect(p.event(.frameDecoded(at: t(11))).isEmpty)
        #expect(p.phase == .stalled, "a frame does not end a stall; the clock playing does")
        #expect(resyncs(p.event(.tick(t(22)))).map(\.trigger) == [.longStall])
        let r = resyncs(p.event(.fellOutOfWindow(.behindWindow, at: t(23))))
        #expect(r.isEmpty)
    }

    @Test func resyncDeadline_justUnder_waits_at_escalatesToRestart() {
        var p = LiveResyncPolicy(targetDurationSeconds: 6)
        _ = p.event(.fellOutOfWindow(.behindWindow, at: t(50)))
        #expect(p.event(.tick(t(61.999))).isEmpty)
        let r = restarts(p.event(.tick(t(62))))
        #expect(r.count == 1)
        #expect(r[0].attempt == 1)
        #expect(r[0].deadlineSeconds == 18)
        #expect(r[0].recoveryCapApplied)
        #expect(p.phase == .restarting)
    }

    @Test func restartDeadline_justUnder_waits_at_nextAttempt_thenGiveUpAfterMaximum() {
        var p = LiveResyncPolicy(targetDurationSeconds: 6)
        _ = p.event(.fellOutOfWindow(.behindWindow, at: t(0)))
        _ = p.event(.tick(t(12))) // restart 1
        #expect(p.event(.tick(t(29.999))).isEmpty)
        #expect(restarts(p.event(.tick(t(30)))).map(\.attempt) == [2])
        #expect(restarts(p.event(.tick(t(48)))).map(\.attempt) == [3])
        let a = p.event(.tick(t(66)))
        guard case .giveUp(let r)? = a.first else { Issue.record("expected giveUp, got \(a)"); return }
        #expect(r.attempt == 3)
        #expect(r.episodeSeconds == 66)
        #expect(p.phase == .failed)
        #expect(p.event(.tick(t(1000))).isEmpty)
    }

    @Test func restart_playbackResumes_resolved_countersReset() {
        var p = LiveResyncPolicy(targetDurationSeconds: 6)
        _ = p.event(.fellOutOfWindow(.behindWindow, at: t(0)))
        _ = p.event(.tick(t(12)))
        #expect(p.event(.frameDecoded(at: t(13))).isEmpty)
        let a = p.event(.stallEnded(at: t(14)))
        guard case .resolved(let r)? = a.first else { Issue.record("expected resolved"); return }
        #expect(r.phase == .restarting)
        #expect(r.attempt == 1)
        #expect(p.restartAttempts == 0)
        #expect(p.phase == .monitoring)
    }

    @Test func whileResyncing_furtherTriggersIgnored() {
        var p = LiveResyncPolicy(targetDurationSeconds: 6)
        _ = p.event(.fellOutOfWindow(.behindWindow, at: t(0)))
        #expect(p.event(.fellOutOfWindow(.segmentRolledOff, at: t(1))).isEmpty)
        #expect(p.event(.stallStarted(at: t(1))).isEmpty)
        #expect(p.phase == .resyncing)
    }

    @Test func targetDurationChange_movesTheThresholds() {
        var p = LiveResyncPolicy(targetDurationSeconds: 2)
        _ = p.event(.targetDurationChanged(10))
        _ = p.event(.stallStarted(at: t(0)))
        #expect(p.event(.tick(t(19.999))).isEmpty)
        #expect(resyncs(p.event(.tick(t(20)))).count == 1)
    }

    @Test func record_encodes() {
        var p = LiveResyncPolicy(targetDurationSeconds: 6)
        let r = resyncs(p.event(.fellOutOfWindow(.segmentRolledOff, at: t(0))))[0]
        #expect(SessionLogEncoder().line(r).contains("\"trigger\":\"segment-rolled-off\""))
    }
}

/// The live-resync path and the cap controller together, as the monitor drives them.
@Suite struct LiveResyncWithRecoveryCapTests {
    func t(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: s) }
    let ladder = [988_000, 4_500_000, 33_808_000].enumerated().map { LadderRung(variantIndex: $0.offset, bandwidthBps: $0.element) }

    /// Seed: AVPlayer's seek-to-live carried no cap, re-selected the over-pick
    /// and re-wedged. Here the resync goes through the recovery cap, so the
    /// selector can only pick the lowest rung on the seek path, even with a
    /// (suspect) 20 Mbps estimate.
    @Test func segmentRollOff_resyncCarriesRecoveryCap_selectorPicksLowestOnSeek() {
        var cap = StartupCapController()
        _ = cap.event(
            .sessionStarted(
                gate: .warm(
                    EstimateRecord(
                        networkKey: NetworkKey(originHost: "o", localNetwork: "n"),
                        valueBps: 40e6, sampleCount: 9, measuredAt: 0)),
                ladder: ladder, at: t(0)))
        #expect(cap.capBps == nil)
        var live = LiveResyncPolicy(targetDurationSeconds: 6)
        let actions = live.event(.fellOutOfWindow(.segmentRolledOff, at: t(95)))
        guard case .resyncToLiveEdge(let r)? = actions.first else { Issue.record("expected a resync"); return }
        #expect(r.recoveryCapApplied)
        _ = cap.event(.liveResync(estimateBps: 20e6, at: t(95)))
        let snapshot = cap.applying(
            to: SelectionSnapshot(
                ladder: ladder, estimateBps: 20e6, estimateIsMeasured: true,
                bufferSeconds: 0, currentVariantIndex: 2))
        let choice = VariantSelector().select(snapshot)
        #expect(choice.variantIndex == 0)
        #expect(choice.reason == .capped)
        // Playback resumes inside the deadline: resolved, no restart.
        #expect(live.event(.tick(t(100))).isEmpty)
        #expect(live.event(.frameDecoded(at: t(100.2))).isEmpty)
        guard case .resolved? = live.event(.stallEnded(at: t(100.5))).first else { Issue.record("expected resolved"); return }
    }
}
