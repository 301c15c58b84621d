// hlsplay-mpc (`RiskAwareMPC`): MPC priced in two futures weighted by the stall predictor's risk. Checks the
// hand-computed point where the risk flips a choice, that no risk is MPC, the risk's edges (nil, NaN, > 1),
// and that the predictor's last risk reaches the rule and its record.

import Testing
@testable import HLSCore

@Suite struct RiskAwareMPCTests {
    static let ladderBps: [Double] = [470_000, 1_060_000, 3_000_000, 5_900_000, 16_500_000]

    /// One segment ahead, no switch penalty, μ = 4 (the top rung in Mbit/s), a 5 s silence.
    static var oneStep: RiskAwareMPC.Configuration {
        var c = RiskAwareMPC.Configuration()
        c.horizonSegments = 1
        c.switchPenalty = 0
        c.silentSeconds = 5
        return c
    }

    /// A ladder as the session hands it to a rule: one rung per variant.
    static func rungs(_ bitratesBps: [Double] = ladderBps) -> [LadderRung] {
        bitratesBps.enumerated().map { LadderRung(variantIndex: $0.offset, bandwidthBps: Int($0.element)) }
    }

    /// A session's call of a rule over 2 s segments.
    static func decide(
        _ state: inout AbrRuleState, _ snapshot: SelectionSnapshot, hlsplay: SelectionDecision, atSeconds: Double = 10
    ) -> (decision: SelectionDecision, record: AbrRuleRecord) {
        let (decision, record, _) = state.decide(
            snapshot: snapshot, hlsplay: hlsplay, segmentDurationSeconds: 2, at: .init(seconds: atSeconds))
        return (decision, record)
    }

    @Test func risk_flipsTheChoice_whereTheExpectedQoEsCross() {
        // Rungs 1 and 4 Mbit/s, 2 s segments, 6 s of buffer, 4 Mbit/s predicted. As predicted: rung 1 downloads in
        // 2 s (QoE 4), rung 0 in 0.5 s (QoE 1). Silent 5 s first: rung 1 takes 7 s, 1 s of rebuffering (4 − 4 = 0);
        // rung 0 takes 5.5 s, none (1). Expected: rung 1 4 − 4p, rung 0 1: rung 1 while p < 0.75.
        func rung(_ p: Double?) -> Int {
            RiskAwareMPC.decide(
                bitratesBps: [1_000_000, 4_000_000], segmentDurationSeconds: 2, bufferSeconds: 6, lastRung: 1, throughputBps: 4_000_000,
                stallRisk: p, configuration: Self.oneStep
            ).rung
        }
        #expect(rung(nil) == 1 && rung(0) == 1 && rung(0.7) == 1)
        #expect(rung(0.8) == 0 && rung(1) == 0)
        let d = RiskAwareMPC.decide(
            bitratesBps: [1_000_000, 4_000_000], segmentDurationSeconds: 2, bufferSeconds: 6, lastRung: 1, throughputBps: 4_000_000,
            stallRisk: 0.5, configuration: Self.oneStep)
        #expect(d.rung == 1 && abs(d.plannedQoE - 2) < 1e-9)
        #expect(d.plannedRebufferSeconds == 0 && abs(d.riskyRebufferSeconds - 1) < 1e-9)
    }

    @Test func riskEdges_nilNaNAndNegativeAreNoRisk_aboveOneIsCertainty() {
        func decide(_ p: Double?) -> RiskAwareMPC.Decision {
            RiskAwareMPC.decide(
                bitratesBps: [1_000_000, 4_000_000], segmentDurationSeconds: 2, bufferSeconds: 6, lastRung: 1, throughputBps: 4_000_000,
                stallRisk: p, configuration: Self.oneStep)
        }
        #expect(decide(.nan) == decide(nil) && decide(-3) == decide(0) && decide(nil) == decide(0))
        #expect(decide(7) == decide(1))
    }

    @Test(arguments: [0.0, 1.5, 4, 9, 20, 29])
    func noRisk_isModelPredictiveControl(bufferSeconds: Double) {
        // Without a risk the rule's plan is MPC's: the same first rung and QoE at every buffer, link and last rung;
        // the rung it returns is that plan's, raised to the sustain floor.
        for throughput in [300_000.0, 900_000, 2_500_000, 7_000_000, 25_000_000] {
            for last in [nil, 0, 2, 4] as [Int?] {
                let mpc = ModelPredictiveRule.decide(
                    bitratesBps: Self.ladderBps, segmentDurationSeconds: 2, bufferSeconds: bufferSeconds, lastRung: last,
                    throughputBps: throughput)
                let own = RiskAwareMPC.decide(
                    bitratesBps: Self.ladderBps, segmentDurationSeconds: 2, bufferSeconds: bufferSeconds, lastRung: last,
                    throughputBps: throughput, stallRisk: nil)
                #expect(
                    own.planRung == mpc.rung && abs(own.plannedQoE - mpc.plannedQoE) < 1e-9,
                    "throughput \(throughput), last \(String(describing: last))")
                #expect(own.rung == max(own.planRung, own.floorRung))
            }
        }
    }

    @Test func certainRisk_neverChoosesHigher_andADeepBufferIgnoresIt() {
        // The silent future only adds rebuffering, so a risk can only lower the choice ...
        for buffer in [0.0, 2, 5, 8, 12] {
            for throughput in [900_000.0, 4_000_000, 12_000_000, 40_000_000] {
                let calm = RiskAwareMPC.decide(
                    bitratesBps: Self.ladderBps, segmentDurationSeconds: 2, bufferSeconds: buffer, lastRung: 2, throughputBps: throughput,
                    stallRisk: 0)
                let risky = RiskAwareMPC.decide(
                    bitratesBps: Self.ladderBps, segmentDurationSeconds: 2, bufferSeconds: buffer, lastRung: 2, throughputBps: throughput,
                    stallRisk: 1)
                #expect(risky.rung <= calm.rung, "buffer \(buffer), throughput \(throughput)")
            }
        }
        // ... and on a 25 s buffer a 5 s silence rebuffers no plan: the top rung stands.
        let deep = RiskAwareMPC.decide(
            bitratesBps: Self.ladderBps, segmentDurationSeconds: 2, bufferSeconds: 25, lastRung: 4, throughputBps: 40_000_000,
            stallRisk: 1)
        #expect(deep.rung == 4 && deep.riskyRebufferSeconds == 0)
    }

    @Test func predictorsRisk_reachesTheRuleAndItsRecord() throws {
        // 3 s of buffer on a link predicted at 8 Mbit/s, playing 5.9 Mbit/s: as predicted that rung fits; a 5 s
        // silence likely (0.9) rebuffers every plan, and the deeper the first rung the longer.
        let snapshot = SelectionSnapshot(
            ladder: Self.rungs(), estimateBps: 8_000_000, estimateIsMeasured: true, bufferSeconds: 3, currentVariantIndex: 3)
        let hlsplay = SelectionDecision(variantIndex: 2, reason: .downSwitch, sustainableVariantIndex: 2)
        var calm = AbrRuleState(name: .hlsplayMPC)
        let (calmDecision, calmRecord) = Self.decide(&calm, snapshot, hlsplay: hlsplay)
        #expect(calmRecord.stallRisk == nil && calmRecord.reason == "plan")
        var risky = AbrRuleState(name: .hlsplayMPC)
        risky.stallRiskObserved(0.9)
        let (riskyDecision, riskyRecord) = Self.decide(&risky, snapshot, hlsplay: hlsplay)
        #expect(riskyRecord.stallRisk == 0.9)
        let rebuffer = try #require(riskyRecord.riskyRebufferSeconds)
        #expect(rebuffer >= 0)
        #expect(riskyDecision.variantIndex < calmDecision.variantIndex, "a 0.9 risk on a 3 s buffer plans lower")
    }

    @Test func noRiskAblation_decidesAsACalmHlsplayMPC_whateverTheRisk() {
        // The same 3 s buffer and 0.9 risk that make hlsplay-mpc plan lower: the ablation prices the predicted future
        // alone, so it chooses as hlsplay-mpc does with no risk, and its record carries none.
        let snapshot = SelectionSnapshot(
            ladder: Self.rungs(), estimateBps: 8_000_000, estimateIsMeasured: true, bufferSeconds: 3, currentVariantIndex: 3)
        let hlsplay = SelectionDecision(variantIndex: 2, reason: .downSwitch, sustainableVariantIndex: 2)
        var calm = AbrRuleState(name: .hlsplayMPC)
        let calmDecision = Self.decide(&calm, snapshot, hlsplay: hlsplay).decision
        var ablation = AbrRuleState(name: .hlsplayMPCNoRisk)
        ablation.stallRiskObserved(0.9)
        let (decision, record) = Self.decide(&ablation, snapshot, hlsplay: hlsplay)
        #expect(decision.variantIndex == calmDecision.variantIndex)
        #expect(record.stallRisk == nil && record.rule == "hlsplay-mpc-no-risk")
        #expect(ablation.errorTracker.overPredictionOnly, "the same error tracker as hlsplay-mpc")
    }

    // MARK: - The sustain floor

    static let floorLadderBps: [Double] = [1_000_000, 2_000_000, 4_000_000, 8_000_000]

    static func floor(buffer: Double, throughput: Double = 5_000_000, risk: Double? = nil) -> Int {
        RiskAwareMPC.floorRung(
            bitratesBps: floorLadderBps, segmentDurationSeconds: 2, bufferSeconds: buffer, throughputBps: throughput, stallRisk: risk)
    }

    @Test func floor_atTheMinimumBuffer_isTheThroughputRulesRung() {
        // 0.9 × 5 Mbit/s = 4.5: the 4 Mbit/s rung's 8 Mbit segment lands in 1.78 s (< 2 s, no drain); the 8 Mbit/s one
        // would drain 1.56 s a segment. With 2 s of buffer (the minimum) no drain is allowed: the throughput rule's rung.
        #expect(Self.floor(buffer: 2) == 2)
        #expect(Self.floor(buffer: 2) == ThroughputRule.rung(bitratesBps: Self.floorLadderBps, throughputBps: 5_000_000))
    }

    @Test func floor_deeperBuffer_holdsARungTheLinkCarriesOnlyJust() {
        // The 8 Mbit/s rung drains 5 × (16 / 4.5 − 2) = 7.78 s over the horizon: allowed from 2 + 7.78 s of buffer.
        #expect(Self.floor(buffer: 9.7) == 2)
        #expect(Self.floor(buffer: 9.8) == 3)
    }

    @Test func floor_standsAside_belowTheMinimumBuffer_andOnARiskAboveItsLimit() {
        #expect(Self.floor(buffer: 1.9) == 0)
        #expect(Self.floor(buffer: 12, risk: 0.2) == 0)
        #expect(Self.floor(buffer: 12, risk: 0.1) == 3)
        #expect(Self.floor(buffer: 12, risk: .nan) == 3 && Self.floor(buffer: 12, risk: nil) == 3)
        #expect(Self.floor(buffer: 12, throughput: 0) == 0)
    }

    @Test func rule_plansDown_floorHoldsTheRungTheLinkCarries() throws {
        // 4.8 s of buffer on rung 0, 1.25 Mbit/s predicted: MPC's best plan saves buffer on rung 0 to spend it on a
        // higher rung at its horizon's end; the 1.08 Mbit/s rung lands in 1.91 s at 0.9 × 1.25 Mbit/s, so the floor
        // holds it, and the record says so.
        let ladder: [Double] = [457_968, 1_076_112, 3_114_032, 6_609_328, 17_407_296]
        let mpc = ModelPredictiveRule.decide(
            bitratesBps: ladder, segmentDurationSeconds: 2, bufferSeconds: 4.8, lastRung: 0, throughputBps: 1_250_000)
        try #require(mpc.rung == 0, "the plan this test is about: MPC's own choice is the bottom rung")
        let snapshot = SelectionSnapshot(
            ladder: Self.rungs(ladder), estimateBps: 1_250_000, estimateIsMeasured: true, bufferSeconds: 4.8, currentVariantIndex: 0)
        let hlsplay = SelectionDecision(variantIndex: 1, reason: .downSwitch, sustainableVariantIndex: 1)
        var state = AbrRuleState(name: .hlsplayMPC)
        let (decision, record) = Self.decide(&state, snapshot, hlsplay: hlsplay, atSeconds: 5)
        #expect(decision.variantIndex == 1 && record.reason == "sustainFloor")
        var robust = AbrRuleState(name: .robustMPC)
        #expect(Self.decide(&robust, snapshot, hlsplay: hlsplay, atSeconds: 5).decision.variantIndex == 0)
    }

    @Test func predictionError_countsOnlyAgainstAMeasuredEstimate() {
        // The first decision uses the configured default (1 Mbit/s, not measured); the segment then lands at 20 Mbit/s.
        // RobustMPC records a 0.95 error and discounts the next five segments by it; hlsplay-mpc records none.
        let snapshot = SelectionSnapshot(
            ladder: Self.rungs(), estimateBps: 1_000_000, estimateIsMeasured: false, bufferSeconds: 0, currentVariantIndex: nil)
        let hlsplay = SelectionDecision(variantIndex: 0, reason: .downSwitch, sustainableVariantIndex: 0)
        for (name, expected) in [(AbrRuleName.robustMPC, 0.95), (.hlsplayMPC, 0.0)] {
            var state = AbrRuleState(name: name)
            _ = Self.decide(&state, snapshot, hlsplay: hlsplay, atSeconds: 0)
            state.segmentLanded(throughputBps: 20_000_000, at: .init(seconds: 0.2))
            #expect(abs(state.errorTracker.maxError - expected) < 1e-9, "\(name)")
        }
    }
}

// MARK: - The buffer reserve (`--mpc-reserve`)

@Suite struct RiskAwareMPCReserveTests {
    /// One segment ahead, no switch penalty, μ = 4 (the top rung in Mbit/s), a 10 s reserve at 0.25 × μ = 1 per second.
    static func oneStep(reserve: Double?) -> RiskAwareMPC.Configuration {
        var c = RiskAwareMPC.Configuration()
        c.horizonSegments = 1
        c.switchPenalty = 0
        c.reserveSeconds = reserve
        c.reservePriceShare = 0.25
        return c
    }

    static func decide(buffer: Double, throughput: Double, reserve: Double?) -> RiskAwareMPC.Decision {
        RiskAwareMPC.decide(
            bitratesBps: [1_000_000, 4_000_000], segmentDurationSeconds: 2, bufferSeconds: buffer, lastRung: 1, throughputBps: throughput,
            stallRisk: nil, configuration: oneStep(reserve: reserve))
    }

    @Test func reserve_pricesTheShortfallAtTheHorizonsEnd() {
        // 11 s of buffer, 1 Mbit/s predicted. Rung 1's 8 Mbit segment takes 8 s: it ends at 11 − 8 + 2 = 5 s, no
        // rebuffering (QoE 4), but 5 s short of the 10 s reserve: 4 − 1 × 5 = −1. Rung 0 takes 2 s and ends at 11 s
        // (QoE 1, no shortfall). Without the reserve rung 1 wins; with it rung 0.
        let without = Self.decide(buffer: 11, throughput: 1_000_000, reserve: nil)
        #expect(without.rung == 1 && without.reserveShortfallSeconds == 0 && abs(without.plannedQoE - 4) < 1e-9)
        let with = Self.decide(buffer: 11, throughput: 1_000_000, reserve: 10)
        #expect(with.rung == 0 && with.reserveShortfallSeconds == 0 && abs(with.plannedQoE - 1) < 1e-9)
        // At 2 Mbit/s rung 1 takes 4 s and ends at 9 s: 1 s short, 4 − 1 = 3 > 1, so it stays, its shortfall logged.
        let shallow = Self.decide(buffer: 11, throughput: 2_000_000, reserve: 10)
        #expect(shallow.rung == 1 && abs(shallow.reserveShortfallSeconds - 1) < 1e-9 && abs(shallow.plannedQoE - 3) < 1e-9)
    }

    @Test func reserve_belowItThePlanKeepsTheBufferItHas_neverHasToGrowIt() {
        // 4 s of buffer under a 10 s reserve, 4 Mbit/s predicted: rung 1 takes 2 s and ends at 4 s, what it had. The
        // reserve asks for min(buffer, reserve) = 4 s: no shortfall, so rung 1 as without it. At 2 Mbit/s rung 1
        // ends at 2 s, 2 s short (4 − 2 = 2 > 1): still rung 1; at 1 Mbit/s it would rebuffer 4 s (4 − 16 − 2 < 1).
        let kept = Self.decide(buffer: 4, throughput: 4_000_000, reserve: 10)
        let plain = Self.decide(buffer: 4, throughput: 4_000_000, reserve: nil)
        #expect(kept.planRung == 1 && plain.planRung == 1 && kept.plannedQoE == plain.plannedQoE && kept.reserveShortfallSeconds == 0)
        let two = Self.decide(buffer: 4, throughput: 2_000_000, reserve: 10)
        #expect(two.rung == 1 && abs(two.reserveShortfallSeconds - 2) < 1e-9)
        #expect(Self.decide(buffer: 4, throughput: 1_000_000, reserve: 10).rung == 0)
    }

    @Test func reserve_theFloorSpendsNoBufferBelowIt() {
        // Rungs 1 and 4 Mbit/s, 2 s segments, 5 ahead, 0.9 × 2 Mbit/s: rung 1's segment lands in 4.44 s, a 2.44 s
        // drain each, 12.2 s over the horizon. 20 s of buffer: without a reserve 18 s may go (rung 1), with a 10 s
        // reserve 10 s (rung 0). Under the reserve (8 s) the floor drains nothing: rung 1 only where it lands within
        // 2 s (0.9 × 5 Mbit/s: 1.78 s).
        func floor(_ buffer: Double, _ throughput: Double, _ reserve: Double?) -> Int {
            var c = RiskAwareMPC.Configuration()
            c.reserveSeconds = reserve
            return RiskAwareMPC.floorRung(
                bitratesBps: [1_000_000, 4_000_000], segmentDurationSeconds: 2, bufferSeconds: buffer, throughputBps: throughput,
                stallRisk: nil, configuration: c)
        }
        #expect(floor(20, 2_000_000, nil) == 1 && floor(20, 2_000_000, 10) == 0)
        #expect(floor(8, 2_000_000, 10) == 0 && floor(8, 5_000_000, 10) == 1)
        #expect(floor(1, 5_000_000, 10) == 0, "below the floor's minimum buffer it stands aside, reserve or not")
    }

    @Test func reserve_reachesTheRuleAndItsRecord_onlyWhenSet() {
        // 20 s of buffer on a 0.5 Mbit/s link, playing 3 Mbit/s: without a reserve the plan spends 10 s of buffer on
        // one more 3 Mbit/s segment (12 s to fetch) before the bottom rung; with a 20 s reserve the 9.5 s it would end
        // short cost 0.25 × 16.5 each, more than that segment gains.
        let snapshot = SelectionSnapshot(
            ladder: RiskAwareMPCTests.rungs(), estimateBps: 500_000, estimateIsMeasured: true, bufferSeconds: 20, currentVariantIndex: 2)
        let hlsplay = SelectionDecision(variantIndex: 1, reason: .downSwitch, sustainableVariantIndex: 1)
        var plain = AbrRuleState(name: .hlsplayMPC)
        let (plainDecision, plainRecord) = RiskAwareMPCTests.decide(&plain, snapshot, hlsplay: hlsplay)
        #expect(plainRecord.reserveSeconds == nil && plainRecord.reserveShortfallSeconds == nil)
        var reserved = AbrRuleState(name: .hlsplayMPC, mpcReserveSeconds: 20)
        let (decision, record) = RiskAwareMPCTests.decide(&reserved, snapshot, hlsplay: hlsplay)
        #expect(record.reserveSeconds == 20 && record.reserveShortfallSeconds != nil)
        #expect(plainDecision.variantIndex == 2)
        #expect(decision.variantIndex < plainDecision.variantIndex, "a 20 s reserve keeps the buffer the plain rule spends")
        var robust = AbrRuleState(name: .robustMPC, mpcReserveSeconds: 20)
        #expect(RiskAwareMPCTests.decide(&robust, snapshot, hlsplay: hlsplay).record.reserveSeconds == nil)
    }
}
