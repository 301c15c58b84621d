// Model-predictive adaptation (Yin et al., SIGCOMM 2015): hand-computed plans, the robust error bound,
// and the exhaustive search agreeing with a brute force written differently.

import HLSCore
import Testing

@Suite struct ModelPredictiveTests {
    static let ladderBps: [Double] = [470_000, 1_060_000, 3_000_000, 5_900_000, 16_500_000]

    @Test func oneStepHorizon_matchesTheHandComputedQoE() {
        // Two rungs, 1 and 4 Mbit/s, 2 s segments, 1 s of buffer, 2 Mbit/s predicted, playing rung 0; μ = 4, λ = 1.
        // Rung 0: download 1 s, no rebuffer, QoE 1. Rung 1: download 4 s, 3 s rebuffer: 4 − 3 (switch) − 4·3 = −11.
        var c = ModelPredictiveRule.Configuration()
        c.horizonSegments = 1
        let d = ModelPredictiveRule.decide(
            bitratesBps: [1_000_000, 4_000_000], segmentDurationSeconds: 2, bufferSeconds: 1, lastRung: 0, throughputBps: 2_000_000,
            configuration: c)
        #expect(d.rung == 0 && abs(d.plannedQoE - 1) < 1e-9 && d.plannedRebufferSeconds == 0)
        // With 10 s of buffer the 4 Mbit/s segment downloads in 4 s without rebuffering: 4 − 3 = 1 ties rung 0's 1;
        // the first plan found (the lower rung) wins a tie.
        let deep = ModelPredictiveRule.decide(
            bitratesBps: [1_000_000, 4_000_000], segmentDurationSeconds: 2, bufferSeconds: 10, lastRung: 0, throughputBps: 2_000_000,
            configuration: c)
        #expect(deep.rung == 0 && abs(deep.plannedQoE - 1) < 1e-9)
        // Already on rung 1 with a deep buffer: no switch penalty to stay, 4 beats 1 − 3.
        let stay = ModelPredictiveRule.decide(
            bitratesBps: [1_000_000, 4_000_000], segmentDurationSeconds: 2, bufferSeconds: 10, lastRung: 1, throughputBps: 2_000_000,
            configuration: c)
        #expect(stay.rung == 1 && abs(stay.plannedQoE - 4) < 1e-9)
    }

    @Test func extremes_topOnAFastLinkAndDeepBuffer_bottomOnAStarvedOne() {
        let fast = ModelPredictiveRule.decide(
            bitratesBps: Self.ladderBps, segmentDurationSeconds: 2, bufferSeconds: 20, lastRung: 4, throughputBps: 60_000_000)
        #expect(fast.rung == 4 && fast.plannedRebufferSeconds == 0)
        let starved = ModelPredictiveRule.decide(
            bitratesBps: Self.ladderBps, segmentDurationSeconds: 2, bufferSeconds: 0.5, lastRung: 2, throughputBps: 600_000)
        #expect(starved.rung == 0)
    }

    @Test func exhaustiveSearch_agreesWithARecursiveBruteForce() {
        // A recursive formulation of the same objective, over a 3-rung ladder, horizon 3, several states.
        let rates: [Double] = [500_000, 1_500_000, 4_000_000]
        var c = ModelPredictiveRule.Configuration()
        c.horizonSegments = 3
        c.bufferCapacitySeconds = 12
        func best(_ k: Int, _ buffer: Double, _ prev: Int?, _ throughput: Double) -> Double {
            if k == 3 { return 0 }
            var out = -Double.infinity
            for m in 0..<3 {
                let download = rates[m] * 2 / throughput
                let rebuffer = max(0, download - buffer)
                let next = min(max(0, buffer - download) + 2, 12)
                let gain = rates[m] / 1e6 - (prev.map { abs(rates[m] - rates[$0]) / 1e6 } ?? 0) - 4 * rebuffer
                out = max(out, gain + best(k + 1, next, m, throughput))
            }
            return out
        }
        for (buffer, prev, throughput) in [(0.0, nil as Int?, 800_000.0), (3, 1, 1_200_000), (8, 2, 2_500_000), (1, 0, 5_000_000)] {
            let d = ModelPredictiveRule.decide(
                bitratesBps: rates, segmentDurationSeconds: 2, bufferSeconds: buffer, lastRung: prev, throughputBps: throughput,
                configuration: c)
            #expect(abs(d.plannedQoE - best(0, buffer, prev, throughput)) < 1e-9, "buffer \(buffer) prev \(String(describing: prev))")
        }
    }

    @Test func robustBound_dividesByOnePlusTheLargestRecentError_overTheLastFive() {
        var tracker = PredictionErrorTracker()
        #expect(tracker.robust(3_000_000) == 3_000_000)
        tracker.record(predictedBps: 3_000_000, actualBps: 2_000_000) // 50 %
        tracker.record(predictedBps: 2_000_000, actualBps: 2_000_000) // 0 %
        #expect(abs(tracker.maxError - 0.5) < 1e-12)
        #expect(abs(tracker.robust(3_000_000) - 2_000_000) < 1e-6)
        for _ in 0..<5 { tracker.record(predictedBps: 1_100_000, actualBps: 1_000_000) } // 10 %, pushes the 50 % out
        #expect(abs(tracker.maxError - 0.1) < 1e-12 && tracker.recentErrors.count == 5)
        // A pessimistic prediction plans a lower rung than the raw one.
        let raw = ModelPredictiveRule.decide(
            bitratesBps: Self.ladderBps, segmentDurationSeconds: 2, bufferSeconds: 4, lastRung: 3, throughputBps: 7_000_000)
        var wild = PredictionErrorTracker()
        wild.record(predictedBps: 7_000_000, actualBps: 2_000_000)
        let robust = ModelPredictiveRule.decide(
            bitratesBps: Self.ladderBps, segmentDurationSeconds: 2, bufferSeconds: 4, lastRung: 3, throughputBps: wild.robust(7_000_000))
        #expect(raw.rung == 3 && robust.rung < raw.rung, "raw \(raw.rung), robust \(robust.rung)")
    }

    @Test func overPredictionOnly_aLinkFasterThanPredictedIsNoError_aSlowerOneIs() {
        var both = PredictionErrorTracker()
        var over = PredictionErrorTracker(overPredictionOnly: true)
        both.record(predictedBps: 1_000_000, actualBps: 4_000_000) // the link stepped up: under-predicted by 75 %
        over.record(predictedBps: 1_000_000, actualBps: 4_000_000)
        #expect(abs(both.maxError - 0.75) < 1e-12)
        #expect(over.maxError == 0 && over.robust(4_000_000) == 4_000_000)
        over.record(predictedBps: 3_000_000, actualBps: 2_000_000) // over-predicted by 50 %
        #expect(abs(over.maxError - 0.5) < 1e-12)
    }

    @Test func hlsplayMPC_countsOverPredictionsOnly_robustMPCBothWays() {
        #expect(AbrRuleState(name: .hlsplayMPC).errorTracker.overPredictionOnly)
        #expect(!AbrRuleState(name: .robustMPC).errorTracker.overPredictionOnly)
    }
}
