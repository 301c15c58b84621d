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
        // Without a risk the rule is MPC: the same first rung and QoE at every buffer, link and last rung.
        for throughput in [300_000.0, 900_000, 2_500_000, 7_000_000, 25_000_000] {
            for last in [nil, 0, 2, 4] as [Int?] {
                let mpc = ModelPredictiveRule.decide(
                    bitratesBps: Self.ladderBps, segmentDurationSeconds: 2, bufferSeconds: bufferSeconds, lastRung: last,
                    throughputBps: throughput)
                let own = RiskAwareMPC.decide(
                    bitratesBps: Self.ladderBps, segmentDurationSeconds: 2, bufferSeconds: bufferSeconds, lastRung: last,
                    throughputBps: throughput, stallRisk: nil)
                #expect(
                    own.rung == mpc.rung && abs(own.plannedQoE - mpc.plannedQoE) < 1e-9,
                    "throughput \(throughput), last \(String(describing: last))")
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
        let rungs = Self.ladderBps.enumerated().map { LadderRung(variantIndex: $0.offset, bandwidthBps: Int($0.element)) }
        let snapshot = SelectionSnapshot(
            ladder: rungs, estimateBps: 8_000_000, estimateIsMeasured: true, bufferSeconds: 3, currentVariantIndex: 3)
        let hlsplay = SelectionDecision(variantIndex: 2, reason: .downSwitch, sustainableVariantIndex: 2)
        var calm = AbrRuleState(name: .hlsplayMPC)
        let (calmDecision, calmRecord, _) = calm.decide(snapshot: snapshot, hlsplay: hlsplay, segmentDurationSeconds: 2, at: .init(seconds: 10))
        #expect(calmRecord.stallRisk == nil && calmRecord.reason == "plan")
        var risky = AbrRuleState(name: .hlsplayMPC)
        risky.stallRiskObserved(0.9)
        let (riskyDecision, riskyRecord, _) = risky.decide(snapshot: snapshot, hlsplay: hlsplay, segmentDurationSeconds: 2, at: .init(seconds: 10))
        #expect(riskyRecord.stallRisk == 0.9)
        let rebuffer = try #require(riskyRecord.riskyRebufferSeconds)
        #expect(rebuffer >= 0)
        #expect(riskyDecision.variantIndex < calmDecision.variantIndex, "a 0.9 risk on a 3 s buffer plans lower")
    }
}
