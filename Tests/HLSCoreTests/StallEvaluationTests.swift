// Labelling and metrics against hand-computed numbers.

import Foundation
import Testing
@testable import HLSCore

@Suite struct StallEvaluationTests {
    func sample(_ t: Double) -> StallSample {
        StallSample(timeSeconds: t, features: StallFeatures(bufferSeconds: t, currentRungBitrateBps: 1e6))
    }

    @Test func labels_horizonIsHalfOpenOnTheLeft_stalledExcluded_censoredNegativesDropped() {
        // Stall [5, 6.5), H = 2, session ends at 10.
        let ex = StallLabelling.label(
            samples: (0...9).map { sample(Double($0)) },
            stalls: [StallInterval(startSeconds: 5, endSeconds: 6.5)],
            horizonSeconds: 2, sessionEndSeconds: 10)
        #expect(ex.map(\.timeSeconds) == [0, 1, 2, 3, 4, 7, 8]) // 5, 6 stalled; 9 + 2 > 10 unknown
        #expect(ex.map(\.label) == [false, false, false, true, true, false, false])
        #expect(ex.map(\.secondsToStall) == [nil, nil, nil, 2, 1, nil, nil]) // t = 3: 5 ∈ (3, 5]
    }

    @Test func labels_openEndedStall_excludesToTheEnd_positiveNearEndKept() {
        let ex = StallLabelling.label(
            samples: [sample(8), sample(9), sample(9.5)],
            stalls: [StallInterval(startSeconds: 9.5, endSeconds: nil)],
            horizonSeconds: 2, sessionEndSeconds: 10)
        #expect(ex.map(\.timeSeconds) == [8, 9])
        #expect(ex.map(\.label) == [true, true])
    }

    let scores = [0.1, 0.4, 0.35, 0.8]
    let labels = [false, false, true, true]

    @Test func auc_handComputed_andTies() {
        // Positive pairs: 0.35 > 0.1, 0.35 < 0.4, 0.8 > both → 3 / 4.
        #expect(StallMetrics.rocAUC(scores: scores, labels: labels) == 0.75)
        #expect(StallMetrics.rocAUC(scores: [0.5, 0.5], labels: [true, false]) == 0.5)
        #expect(StallMetrics.rocAUC(scores: [0.5], labels: [true]) == nil)
    }

    @Test func precisionRecall_scoreAtThresholdWarns() {
        let pr = StallMetrics.precisionRecall(scores: scores, labels: labels, threshold: 0.4)
        #expect(pr.truePositives == 1)
        #expect(pr.falsePositives == 1)
        #expect(pr.falseNegatives == 1)
        #expect(pr.precision == 0.5)
        #expect(pr.recall == 0.5)
        #expect(StallMetrics.precisionRecall(scores: scores, labels: labels, threshold: 0.9).precision == nil)
    }

    @Test func brier_andCalibration_handComputed() throws {
        // (0.01 + 0.16 + 0.4225 + 0.04) / 4
        #expect(abs(try #require(StallMetrics.brierScore(scores: scores, labels: labels)) - 0.158125) < 1e-15)
        let bins = StallMetrics.calibration(scores: scores + [1.0], labels: labels + [true], binCount: 2)
        #expect(bins.map(\.count) == [3, 2])
        #expect(abs(try #require(bins[0].meanPredicted) - 0.85 / 3) < 1e-15)
        #expect(bins[0].observedRate == 1.0 / 3)
        #expect(bins[1].meanPredicted == 0.9)
        #expect(bins[1].observedRate == 1)
    }

    @Test func leadTime_unbrokenRunEndingAtStall_withinLookback_andMissed() {
        let s: [Double] = [0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.2, 0.6, 0.7, 0.8]
        var scored = s.enumerated().map { (timeSeconds: Double($0.offset), score: $0.element) }
        scored += [(timeSeconds: 19, score: 0.1)]
        let r = StallMetrics.leadTimes(scored: scored, stallStarts: [10, 20], threshold: 0.5, lookbackSeconds: 5)
        #expect(r.leadSeconds == [3]) // run 7…9 before the stall at 10; 0…5 is broken by 6
        #expect(r.missedStalls == 1) // last sample before 20 did not warn
        // An always-on warning is credited at most the lookback.
        let always = StallMetrics.leadTimes(
            scored: (0..<10).map { (timeSeconds: Double($0), score: 1.0) },
            stallStarts: [10], threshold: 0.5, lookbackSeconds: 5)
        #expect(always.leadSeconds == [5])
    }

    @Test func median_oddEvenEmpty() {
        #expect(StallMetrics.median([3, 1, 2]) == 2)
        #expect(StallMetrics.median([4, 1, 2, 3]) == 2.5)
        #expect(StallMetrics.median([]) == nil)
    }
}
