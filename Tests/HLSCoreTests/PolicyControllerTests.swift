// PolicyController in virtual time: every threshold, the cooldown and the
// dwell with a pair just under and at the boundary; predictor failure and
// the cap rule.

import Foundation
import Testing
@testable import HLSCore

@Suite struct PolicyControllerTests {
    static let ladder = [620_000, 1_310_000, 3_720_000, 7_230_000]
    let features = StallFeatures(bufferSeconds: 3, bandwidthFastBps: 2e6, bandwidthSlowBps: 2e6, currentRungBitrateBps: 3_720_000)

    func at(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: 100 + s) }

    func controller(_ initial: PlaybackPolicy = .lowLatency) throws -> PolicyController {
        try PolicyController(ladderBitratesBps: Self.ladder, initialPolicy: initial)
    }

    func changes(_ actions: [PolicyAction]) -> [PolicyChange] {
        actions.compactMap { if case .changePolicy(let c) = $0 { c } else { nil } }
    }

    /// A controller that entered `policy` at t = 0 (from lowLatency, by risk).
    func entered(_ policy: PlaybackPolicy) throws -> PolicyController {
        var c = try controller()
        let risk = policy == .preload ? 0.5 : 0.9
        _ = c.update(risk: risk, features: features, at: at(0))
        #expect(c.policy == policy)
        return c
    }

    @Test func defaultThresholds_areTheTunedOnes() {
        // Chosen on the controller's outcome in virtual time (docs/stall-prediction.md); the pairs below use them.
        let c = PolicyController.Configuration()
        #expect(c.preloadEnterRisk == 0.30 && c.preloadExitRisk == 0.15)
        #expect(c.downshiftEnterRisk == 0.75 && c.downshiftExitRisk == 0.55)
    }

    @Test func startThreshold_isTheLargerOfTheConfiguredStartAndThePolicysResume() throws {
        let c = try controller()
        #expect(PolicyKnobs.startupBufferSeconds(configuredSeconds: 2, knobs: c.knobs(for: .lowLatency)) == 2)
        #expect(PolicyKnobs.startupBufferSeconds(configuredSeconds: 2, knobs: c.knobs(for: .preload)) == 4)
        #expect(PolicyKnobs.startupBufferSeconds(configuredSeconds: 2, knobs: c.knobs(for: .defensiveDownshift)) == 4)
        #expect(PolicyKnobs.startupBufferSeconds(configuredSeconds: 5, knobs: c.knobs(for: .preload)) == 5)
    }

    @Test func preloadEnter_justUnder_stays_at_enters() throws {
        var c = try controller()
        #expect(c.update(risk: 0.2999, features: features, at: at(0)).isEmpty)
        let ch = changes(c.update(risk: 0.30, features: features, at: at(0.25)))
        #expect(ch.count == 1)
        #expect(ch.first?.from == .lowLatency)
        #expect(ch.first?.to == .preload)
        #expect(ch.first?.risk == 0.30)
        #expect(ch.first?.reason == .riskAboveEnterThreshold)
        #expect(ch.first?.features == features)
        #expect(ch.first?.knobs == PolicyKnobs(preferredForwardBufferDurationSeconds: 45, peakBitrateCapBps: nil, resumeBufferSeconds: 4))
    }

    @Test func downshiftEnter_justUnder_goesToPreload_at_jumpsStraightToDownshift() throws {
        var a = try controller()
        #expect(changes(a.update(risk: 0.7499, features: features, at: at(0))).first?.to == .preload)
        var b = try controller()
        let ch = changes(b.update(risk: 0.75, features: features, at: at(0)))
        #expect(ch.first?.to == .defensiveDownshift)
        // Cap at the rung below the one being fetched (3.72 → 1.31 Mbit/s).
        #expect(
            ch.first?.knobs
                == PolicyKnobs(
                    preferredForwardBufferDurationSeconds: 60, peakBitrateCapBps: 1_310_000,
                    resumeBufferSeconds: 4))
        #expect(b.knobs.peakBitrateCapBps == 1_310_000)
    }

    @Test func cooldown_escalationJustBefore_blocked_at_allowed() throws {
        var c = try entered(.preload)
        #expect(c.update(risk: 0.9, features: features, at: at(2.999)).isEmpty)
        #expect(changes(c.update(risk: 0.9, features: features, at: at(3.0))).first?.to == .defensiveDownshift)
    }

    @Test func dwell_deEscalationJustBefore_blocked_at_allowed() throws {
        var c = try entered(.preload)
        #expect(c.update(risk: 0.1, features: features, at: at(9.999)).isEmpty)
        let ch = changes(c.update(risk: 0.1, features: features, at: at(10)))
        #expect(ch.first?.to == .lowLatency)
        #expect(ch.first?.reason == .riskBelowExitThreshold)
    }

    @Test func preloadExit_atThreshold_stays_justUnder_leaves() throws {
        var c = try entered(.preload)
        #expect(c.update(risk: 0.15, features: features, at: at(20)).isEmpty)
        #expect(changes(c.update(risk: 0.1499, features: features, at: at(20.25))).first?.to == .lowLatency)
    }

    @Test func downshiftExit_atThreshold_stays_justUnder_stepsDownOneLevel() throws {
        var c = try entered(.defensiveDownshift)
        #expect(c.update(risk: 0.55, features: features, at: at(20)).isEmpty)
        // Even a very low risk steps down one level at a time.
        let ch = changes(c.update(risk: 0.01, features: features, at: at(20.25)))
        #expect(ch.first?.to == .preload)
        #expect(c.knobs.peakBitrateCapBps == nil)
        // The next step waits for the dwell in preload again.
        #expect(c.update(risk: 0.01, features: features, at: at(30.249)).isEmpty)
        #expect(changes(c.update(risk: 0.01, features: features, at: at(30.25))).first?.to == .lowLatency)
    }

    @Test func hysteresis_riskBetweenExitAndEnter_holdsEitherPolicy() throws {
        var low = try controller()
        var pre = try entered(.preload)
        for t in stride(from: 20.0, to: 40, by: 0.25) {
            #expect(low.update(risk: 0.2, features: features, at: at(t)).isEmpty)
            #expect(pre.update(risk: 0.2, features: features, at: at(t)).isEmpty)
        }
    }

    /// A risk that flips across every threshold each 0.25 s sample for a minute:
    /// cooldown and dwell bound the changes (the article's "do not let the model
    /// change policy too frequently").
    @Test func noisyRisk_changesBoundedByCooldownAndDwell() throws {
        var c = try controller()
        var changeTimes: [Double] = []
        var visited = Set<PlaybackPolicy>()
        for k in 0..<240 {
            let t = Double(k) * 0.25
            let risk = k % 2 == 0 ? 0.95 : 0.05
            changeTimes += changes(c.update(risk: risk, features: features, at: at(t))).map { $0.atSeconds - 100 }
            visited.insert(c.policy)
        }
        #expect(!visited.contains(.lowLatency))
        // Downshift at 0; the first low sample after the 10 s dwell steps down to
        // preload (10.25); the first high sample after the 3 s cooldown goes back up
        // (13.5). Preload never dwells long enough to reach lowLatency: a noisy
        // signal leaves the controller on the defensive side.
        #expect(Array(changeTimes.prefix(3)) == [0, 10.25, 13.5])
        for (a, b) in zip(changeTimes, changeTimes.dropFirst()) { #expect(b - a >= 3 - 1e-9) }
        #expect(changeTimes.count <= 10)
        #expect(c.policy != .lowLatency)
    }

    @Test func predictorFailure_logsOnce_fallsBackToPreload_thenRecovers() throws {
        var c = try controller()
        let first = c.update(risk: nil, failure: "model exploded", features: features, at: at(0))
        #expect(first.count == 2)
        guard case .predictorFailed(let f) = first[0] else { Issue.record("expected predictorFailed"); return }
        #expect(f.error == "model exploded")
        #expect(f.fallbackPolicy == .preload)
        #expect(changes(first).first?.reason == .predictorFailedFallback)
        #expect(changes(first).first?.risk == nil)
        #expect(c.isPredictorFailing)
        #expect(c.update(risk: .nan, features: features, at: at(0.25)).isEmpty) // same failing run: not logged again
        let back = c.update(risk: 0.0, features: features, at: at(1))
        #expect(back == [.predictorRecovered(PredictorRecovery(atSeconds: at(1).seconds, failedUpdates: 2, failedForSeconds: 1))])
        #expect(c.policy == .preload) // dwell still holds after recovery
    }

    @Test func predictorFailure_ignoresCooldown_andNeverDeEscalates() throws {
        var c = try entered(.preload)
        _ = c.update(risk: 0.1, features: features, at: at(10)) // → lowLatency
        #expect(changes(c.update(risk: nil, features: features, at: at(10.25))).first?.to == .preload)
        var d = try entered(.defensiveDownshift)
        let acts = d.update(risk: nil, features: features, at: at(50))
        #expect(acts.count == 1)
        #expect(d.policy == .defensiveDownshift)
    }

    @Test func evaluate_throwingPredictor_isAFailure() throws {
        struct Broken: StallPredictor {
            var horizonSeconds: Double { 5 }
            var predictorName: String { "broken" }
            func stallProbability(_ f: StallFeatures) throws -> Double { throw StallPredictionError.nonFiniteResult }
        }
        var c = try controller()
        let (risk, actions) = c.evaluate(Broken(), features: features, at: at(0))
        #expect(risk == nil)
        guard case .predictorFailed(let f) = actions.first else { Issue.record("expected predictorFailed"); return }
        #expect(f.error.contains("nonFiniteResult"))
        #expect(c.policy == .preload)
    }

    @Test func downshiftCap_atBottomRung_holdsBottom() throws {
        var c = try controller()
        var f = features
        f.currentRungBitrateBps = 620_000
        #expect(changes(c.update(risk: 1, features: f, at: at(0))).first?.knobs.peakBitrateCapBps == 620_000)
        #expect(PolicyController.rungBelow(7_230_000, ladderBitratesBps: Self.ladder) == 3_720_000)
        #expect(PolicyController.rungBelow(500_000, ladderBitratesBps: []) == 500_000)
    }

    @Test func configuration_invariantsChecked() {
        var bad = PolicyController.Configuration()
        bad.preloadExitRisk = bad.preloadEnterRisk
        #expect(throws: PolicyController.Configuration.Invalid.thresholds) {
            try PolicyController(configuration: bad, ladderBitratesBps: Self.ladder)
        }
        var crossed = PolicyController.Configuration()
        crossed.downshiftEnterRisk = 0.3
        crossed.downshiftExitRisk = 0.2
        #expect(throws: PolicyController.Configuration.Invalid.thresholds) { try crossed.validated() }
        var neg = PolicyController.Configuration()
        neg.cooldownSeconds = -1
        #expect(throws: PolicyController.Configuration.Invalid.durations) { try neg.validated() }
    }
}
