// `--abr`: a reference rule's choice reaches SessionCore.decide's decision, logged with its inputs, and the
// caps, a pinned variant and the audio-only rules still bind on top of it (docs/abr.md, "Selecting a rule").

import Foundation
import Testing
@testable import HLSCore

@Suite struct SessionCoreAbrTests {
    static let rungs = SessionCoreTests.rungs

    static func core(_ rule: AbrRuleName, userPeakBps: Int? = nil, pinned: Int? = nil, ladder: [LadderRung] = rungs) -> SessionCore {
        var configuration = SessionCoreTests.configuration(mode: .off, userPeakBps: userPeakBps)
        configuration.abr = rule
        configuration.pinnedVariantIndex = pinned
        var core = SessionCore(configuration: configuration, predictor: nil)
        core.ladderKnown(ladder)
        _ = core.cap(.sessionStarted(gate: .cold(.noEstimate), ladder: ladder, at: SessionCoreTests.at(0)))
        return core
    }

    /// A 6 s segment of `bytes` that took `seconds`, landed at `endedAt`: the estimator's sample and the core's event.
    static func land(_ core: inout SessionCore, bytes: Int, seconds: Double, endedAt: Double) {
        let sample = ThroughputSample(bytes: bytes, transferSeconds: seconds, firstByteSeconds: 0.01)
        _ = core.transferCompleted(purpose: .segment, sample: sample, rttSeconds: 0.01)
        _ = core.segmentTransferred(
            requestID: 1, observation: TransferObservation(bytes: bytes, transferSeconds: seconds, firstByteSeconds: 0.01),
            startedAt: SessionCoreTests.at(endedAt - seconds), endedAt: SessionCoreTests.at(endedAt))
    }

    static func abrRecord(_ action: SessionCoreAction) -> VariantDecisionRecord? {
        if case .record(.variantDecision(let r)) = action { r } else { nil }
    }

    /// A core whose estimate is measured at about 20 Mbit/s (every rung fits 0.9 × it).
    static func measured(_ rule: AbrRuleName, userPeakBps: Int? = nil, pinned: Int? = nil) -> SessionCore {
        var core = core(rule, userPeakBps: userPeakBps, pinned: pinned)
        for i in 0..<4 { land(&core, bytes: 2_500_000, seconds: 1, endedAt: Double(i + 1)) }
        return core
    }

    @Test(arguments: AbrRuleName.allCases.filter { $0 != .hlsplay })
    func eachRule_choiceReachesTheDecision_loggedWithItsName(rule: AbrRuleName) throws {
        var core = Self.measured(rule)
        #expect(core.estimator.hasEstimate)
        let (decision, action) = core.decide(ladder: Self.rungs, at: SessionCoreTests.at(4), mediaSequence: 4, segmentDurationSeconds: 6)
        let record = try #require(Self.abrRecord(action))
        let abr = try #require(record.abr, "a reference rule's decision carries its own record")
        #expect(abr.rule == rule.rawValue)
        #expect(decision.reason == .abrRule)
        #expect(record.decision == decision)
        #expect(!abr.clamped && abr.overriddenBy == nil, "no cap in force")
        #expect(decision.variantIndex == abr.ruleVariantIndex, "the rule's own choice is the decision")
        #expect(core.currentVariant == abr.ruleVariantIndex)
        #expect(abr.segmentDurationSeconds == 6)
    }

    @Test func buffer_basedRules_chooseUnlikeHlsplay_onAnEmptyBuffer() throws {
        // 20 Mbit/s and no buffer: hlsplay's rule and the throughput rule take the top rung; BOLA, which reads the
        // buffer alone, the bottom one; MPC plans against rebuffering and takes less than the top.
        let top = Self.rungs.last!.variantIndex
        var hlsplay = Self.measured(.hlsplay)
        let (own, ownAction) = hlsplay.decide(ladder: Self.rungs, at: SessionCoreTests.at(4), mediaSequence: 4)
        #expect(own.variantIndex == top)
        #expect(Self.abrRecord(ownAction)?.abr == nil, "hlsplay's own rule logs as before: no abr record")
        var throughput = Self.measured(.throughput)
        #expect(throughput.decide(ladder: Self.rungs, at: SessionCoreTests.at(4), mediaSequence: 4).0.variantIndex == top)
        var bola = Self.measured(.bola)
        #expect(bola.decide(ladder: Self.rungs, at: SessionCoreTests.at(4), mediaSequence: 4, segmentDurationSeconds: 6).0.variantIndex == 0)
        var mpc = Self.measured(.mpc)
        let (planned, plannedAction) = mpc.decide(ladder: Self.rungs, at: SessionCoreTests.at(4), mediaSequence: 4, segmentDurationSeconds: 6)
        #expect(planned.variantIndex < top, "6 s of 7.23 Mbit/s at ~20 Mbit/s with no buffer would rebuffer")
        let abr = try #require(Self.abrRecord(plannedAction)?.abr)
        #expect(abr.plannedQoE != nil && abr.plannedRebufferSeconds != nil && abr.reason == "plan")
    }

    @Test func userPeakCap_clampsTheRulesChoice_toTheHighestRungItAllows() throws {
        var core = Self.measured(.throughput, userPeakBps: 1_000_000)
        let (decision, action) = core.decide(ladder: Self.rungs, at: SessionCoreTests.at(4), mediaSequence: 4, segmentDurationSeconds: 6)
        let abr = try #require(Self.abrRecord(action)?.abr)
        #expect(abr.ruleBandwidthBps == 7_230_000, "the rule, uncapped, wants the top rung")
        #expect(abr.clamped)
        #expect(decision.variantIndex == 1, "620 kbit/s: the highest rung under the 1 Mbit/s cap")
        #expect(decision.reason == .abrRule)
    }

    @Test func startupCap_bindsAReferenceRuleToo() throws {
        var configuration = SessionCoreTests.configuration(mode: .auto)
        configuration.abr = .throughput
        var core = SessionCore(configuration: configuration, predictor: nil)
        core.ladderKnown(Self.rungs)
        _ = core.cap(.sessionStarted(gate: .cold(.noEstimate), ladder: Self.rungs, at: SessionCoreTests.at(0)))
        let cap = try #require(core.peakBitrateCaps.effectiveBps, "a cold start probes under a cap")
        let (decision, _) = core.decide(ladder: Self.rungs, at: SessionCoreTests.at(0), mediaSequence: nil)
        #expect(Self.rungs[decision.variantIndex].bandwidthBps <= cap)
    }

    @Test func pinnedVariant_standsOverTheRule() throws {
        var core = Self.measured(.bola, pinned: 3)
        let (decision, action) = core.decide(ladder: Self.rungs, at: SessionCoreTests.at(4), mediaSequence: 4, segmentDurationSeconds: 6)
        let abr = try #require(Self.abrRecord(action)?.abr)
        #expect(decision.variantIndex == 3 && decision.reason == .pinned)
        #expect(abr.overriddenBy == "pinned")
        #expect(abr.ruleVariantIndex == 0, "the rule's own choice is still logged")
    }

    @Test func audioOnlyFallback_standsOverTheRule() throws {
        // A measured 200 kbit/s cannot keep the lowest video rung: hlsplay's audio-only fallback stands.
        let ladder = Self.rungs + [LadderRung(variantIndex: 9, bandwidthBps: 64_000, audioOnly: true)]
        var core = Self.core(.throughput, ladder: ladder)
        for i in 0..<4 { Self.land(&core, bytes: 50_000, seconds: 2, endedAt: Double(2 * i + 2)) }
        let (decision, action) = core.decide(ladder: ladder, at: SessionCoreTests.at(8), mediaSequence: 4, segmentDurationSeconds: 6)
        let abr = try #require(Self.abrRecord(action)?.abr)
        #expect(decision.variantIndex == 9 && decision.reason == .audioOnlyFallback)
        #expect(abr.overriddenBy == "audioOnlyFallback")
    }

    @Test func bolaE_stallDropsThePlaceholder() {
        var core = Self.measured(.bolaE)
        _ = core.decide(ladder: Self.rungs, at: SessionCoreTests.at(4), mediaSequence: 4, segmentDurationSeconds: 6)
        #expect((core.abrRule.bolaE?.placeholderSeconds ?? 0) > 0, "BOLA-E's start raises the placeholder to the throughput rung's level")
        _ = core.mediaClock(
            .stallStarted(at: SessionCoreTests.at(5), positionSeconds: 1), sessionStart: SessionCoreTests.at(0))
        #expect(core.abrRule.bolaE?.placeholderSeconds == 0)
    }

    @Test func bolaE_loaderIdleTime_isCounted_andNeverLowersThePlaceholder() throws {
        // Two sessions alike but for 3 s the loader sat idle (the forward-buffer target) before the second decision.
        func secondDecision(at seconds: Double) throws -> AbrRuleRecord {
            var core = Self.measured(.bolaE)
            _ = core.decide(ladder: Self.rungs, at: SessionCoreTests.at(4), mediaSequence: 4, segmentDurationSeconds: 6)
            Self.land(&core, bytes: 2_500_000, seconds: 1, endedAt: 5)
            let (_, action) = core.decide(ladder: Self.rungs, at: SessionCoreTests.at(seconds), mediaSequence: 5, segmentDurationSeconds: 6)
            return try #require(Self.abrRecord(action)?.abr)
        }
        let idle = try secondDecision(at: 8), busy = try secondDecision(at: 5)
        #expect(idle.idleSeconds == 3 && busy.idleSeconds == 0)
        #expect(try #require(idle.placeholderSeconds) >= #require(busy.placeholderSeconds))
    }

    @Test func robustMPC_recordsItsPredictionError_andPlansBelowTheEstimate() throws {
        var core = Self.measured(.robustMPC)
        _ = core.decide(ladder: Self.rungs, at: SessionCoreTests.at(4), mediaSequence: 4, segmentDurationSeconds: 6)
        // The segment came in at a quarter of the prediction.
        Self.land(&core, bytes: 625_000, seconds: 1, endedAt: 5)
        #expect(core.abrRule.errorTracker.recentErrors.count == 1)
        let (_, action) = core.decide(ladder: Self.rungs, at: SessionCoreTests.at(5), mediaSequence: 5, segmentDurationSeconds: 6)
        let abr = try #require(Self.abrRecord(action)?.abr)
        let error = try #require(abr.predictionErrorMax)
        #expect(error > 0)
        #expect(abr.throughputBps < core.estimator.estimateBps, "planned with the estimate ÷ (1 + the error)")
    }
}

/// BOLA-E's state through the caps and its abandonment through the session core (docs/abr.md, "Abandonment").
@Suite struct SessionCoreBolaETests {
    static let rungs = SessionCoreTests.rungs

    static func snapshot(bufferSeconds: Double, estimateBps: Double, capBps: Int?) -> SelectionSnapshot {
        SelectionSnapshot(
            ladder: rungs, estimateBps: estimateBps, estimateIsMeasured: true, bufferSeconds: bufferSeconds, currentVariantIndex: nil,
            peakBitrateCapBps: capBps)
    }

    @Test func oscillationGuard_comparesAgainstTheRungFetched_notTheRulesUncappedChoice() {
        // The first BOLA decision wants the top rung and a cap holds it to 620 kbit/s; the next, uncapped, wants the
        // top again while the throughput rule sustains 3.72 Mbit/s. The previous segment was fetched at 620 kbit/s,
        // so the guard (no up-switch past the throughput rung) holds it to 3.72 Mbit/s, not a jump to the top.
        var state = AbrRuleState(name: .bolaE)
        let hlsplay = SelectionDecision(variantIndex: 0, reason: .hold, sustainableVariantIndex: 0)
        let t = SessionCoreTests.at(0)
        _ = state.decide(
            snapshot: Self.snapshot(bufferSeconds: 0, estimateBps: 10_000_000, capBps: nil), hlsplay: hlsplay, segmentDurationSeconds: 6, at: t)
        let (capped, cappedRecord, _) = state.decide(
            snapshot: Self.snapshot(bufferSeconds: 28, estimateBps: 10_000_000, capBps: 620_000), hlsplay: hlsplay, segmentDurationSeconds: 6, at: t)
        #expect(cappedRecord.ruleVariantIndex == 4 && cappedRecord.clamped && capped.variantIndex == 1, "\(cappedRecord)")
        let (next, record, _) = state.decide(
            snapshot: Self.snapshot(bufferSeconds: 28, estimateBps: 5_000_000, capBps: nil), hlsplay: hlsplay, segmentDurationSeconds: 6, at: t)
        #expect(record.reason == "oscillationGuard", "\(record)")
        #expect(next.variantIndex == 3, "max(throughput rung 3.72 Mbit/s, the 620 kbit/s fetched): \(record)")
    }

    /// A real session's first decision comes before any media playlist (the core plans with the 6 s default);
    /// the next ones know the playlist's 2 s. BOLA-E plans with the duration known now, as the virtual shell's
    /// (which knows it from the start) does: with 6 s its insufficient-buffer rule took a third of the real
    /// affordable rate for the whole session (ShellParityTests found it on norway_car_7).
    @Test func bolaE_plansWithTheSegmentDurationKnownNow_notTheStartDefault() {
        var core = SessionCoreAbrTests.measured(.bolaE)
        _ = core.decide(ladder: Self.rungs, at: SessionCoreTests.at(4), mediaSequence: nil)
        #expect(core.abrRule.bolaE?.segmentDurationSeconds == SessionCore.defaultSegmentDurationSeconds)
        _ = core.decide(ladder: Self.rungs, at: SessionCoreTests.at(4), mediaSequence: 0, segmentDurationSeconds: 2)
        #expect(core.abrRule.bolaE?.segmentDurationSeconds == 2)
    }

    /// A BOLA-E core that decided the start and one BOLA segment on a measured 20 Mbit/s.
    static func fetchingTop() -> (SessionCore, SelectionDecision) {
        var core = SessionCoreAbrTests.measured(.bolaE)
        _ = core.decide(ladder: rungs, at: SessionCoreTests.at(4), mediaSequence: 0, segmentDurationSeconds: 6)
        let (d, _) = core.decide(ladder: rungs, at: SessionCoreTests.at(4), mediaSequence: 1, segmentDurationSeconds: 6)
        return (core, d)
    }

    /// The request in flight for rung `rungBps`: `loaded` of `total` bytes, its first byte at 0.1 s, `rateBps` since.
    static func inFlight(rungBps: Int, loaded: Int, total: Int, rateBps: Double, bufferSeconds: Double) -> InFlightSnapshot {
        let sinceFirst = Double(loaded) * 8 / rateBps
        return InFlightSnapshot(
            bytesReceived: loaded, bytesExpected: total, secondsSinceLastByte: 0.1, elapsedSeconds: 0.1 + sinceFirst, rttSeconds: 0.01,
            segmentDurationSeconds: 6, rungBitrateBps: Double(rungBps), measuredThroughputBps: rateBps, forwardBufferSeconds: bufferSeconds)
    }

    @Test func abandonment_cancelsWithItsRecord_noCap_andTheReDecisionTakesItsRung() throws {
        var (core, _) = Self.fetchingTop()
        #expect(core.referenceRuleOwnsAbandonment)
        let rung = Self.rungs[4]
        let total = rung.bandwidthBps * 6 / 8
        // The link collapsed to 150 kbit/s: a tenth in, 5 s of buffer.
        let snapshot = Self.inFlight(rungBps: rung.bandwidthBps, loaded: total / 10, total: total, rateBps: 150_000, bufferSeconds: 5)
        let judgement = core.judgeInFlight(snapshot)
        #expect(judgement.cancel == .abrAbandoned, "\(judgement)")
        let record = try #require(judgement.abr)
        #expect(record.fromVariantIndex == rung.variantIndex && record.toVariantIndex < rung.variantIndex)
        #expect(record.bytesLoaded == total / 10 && record.bytesTotal == total && abs(record.measuredBps - 150_000) < 1)
        let actions = core.inFlightJudged(requestID: 7, snapshot: snapshot, judgement: judgement, at: SessionCoreTests.at(8))
        #expect(actions.contains { if case .record(.abrAbandon(let r)) = $0 { r.requestID == 7 } else { false } }, "\(actions)")
        #expect(!actions.contains { if case .record(.byteProgress) = $0 { true } else { false } }, "not hlsplay's verdict")
        #expect(core.peakBitrateCaps.overSelectionBps == nil, "BOLA-E's abandonment sets no cap")
        let (again, action) = core.decide(ladder: Self.rungs, at: SessionCoreTests.at(8), mediaSequence: 1, segmentDurationSeconds: 6)
        let abr = try #require(SessionCoreAbrTests.abrRecord(action)?.abr)
        #expect(abr.reason == "abandoned" && again.variantIndex == record.toVariantIndex, "\(abr)")
    }

    @Test func overSelectionAbandon_standsAsideForBolaE_butNotForTheThroughputRule() {
        // 5 s of buffer, a tenth of a 6 s top-rung segment in at 150 kbit/s, but only 0.3 s since the first byte:
        // hlsplay's byte-progress rule calls it over-selected; BOLA-E's grace period lets it run.
        func judge(_ rule: AbrRuleName) -> InFlightJudgement {
            var core = SessionCoreAbrTests.measured(rule)
            _ = core.decide(ladder: Self.rungs, at: SessionCoreTests.at(4), mediaSequence: 0, segmentDurationSeconds: 6)
            let total = 7_230_000 * 6 / 8
            var s = Self.inFlight(rungBps: 7_230_000, loaded: 5_625, total: total, rateBps: 150_000, bufferSeconds: 1)
            s.elapsedSeconds = 12
            return core.judgeInFlight(s)
        }
        let throughput = judge(.throughput)
        #expect(throughput.cancel == .overSelected, "hlsplay's rule fires here: \(throughput.assessment)")
        let bola = judge(.bolaE)
        #expect(bola.cancel == nil, "\(bola)")
    }
}
