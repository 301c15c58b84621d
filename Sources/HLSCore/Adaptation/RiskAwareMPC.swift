// hlsplay's own rule and the default (`--abr hlsplay-mpc`): model-predictive control whose rebuffer term is the stall
// predictor's risk. Pure.
//
// RobustMPC (ModelPredictive.swift) plans every rung sequence over a few segments against one throughput
// prediction; a plan that expects no rebuffering is priced as if the link could not fail. hlsplay has what
// the published rule lacks: a stall predictor (docs/stall-prediction.md) that, from the buffer, the
// estimator's fast and slow averages, the first-byte time and the request in flight, gives the probability
// that playback stalls within its horizon. This rule prices each plan in two futures:
//   - the link delivers as predicted (probability 1 − p), and
//   - the link delivers nothing for the predictor's horizon first (probability p, the predicted stall risk),
// and takes the first rung of the plan with the best expected QoE
//     (1 − p) · QoE(plan | predicted link) + p · QoE(plan | link silent for H seconds, then as predicted)
// with the linear QoE of the MPC papers (Σ Mbit/s − λ · Σ |change| − μ · rebuffer s). A low risk leaves the
// plan to the throughput prediction; a high one makes the rebuffering a deep rung would cause in the silent
// future count, in proportion to how likely the predictor thinks it is. Without a predictor (`--predictor
// off`) p is 0 and the rule is MPC on its throughput prediction.
//
// The plan's first rung is then raised to the sustain floor (`floorRung`) when that is higher: the highest rung
// the discounted throughput and the buffer above a minimum sustain over the horizon, while the predicted risk is
// low. MPC's horizon has no value for the buffer left at its end, so without the floor its first rung dithers
// down to save buffer for a higher rung it then rarely reaches (docs/abr.md).
//
// A buffer reserve (`reserveSeconds`; a session's is `defaultReserveSeconds` unless `--mpc-reserve` says otherwise) gives the buffer left at the
// horizon's end a price: a plan ending with less than min(the buffer now, the reserve) pays a share of μ per
// second short, and the floor spends no buffer below the reserve. It is for links that fade for longer than
// the buffer after a good spell (3G), where a plan that spends a deep buffer on a rung above the link's rate
// has nothing left when the link goes quiet (docs/abr.md, "Extra tuning traces").

import Foundation

public enum RiskAwareMPC {
    /// A session's buffer reserve unless `--mpc-reserve` says otherwise, seconds. Chosen on the tuning traces with the
    /// extra tuning traces (docs/abr.md, "The buffer reserve": off, 10, 15, 20 and 25 s tried; 10 s kept the most
    /// sessions within 10 % of the best reference rule and raised the median QoE; deeper reserves cost more bitrate
    /// than the rebuffering they saved). `Configuration.reserveSeconds` itself defaults to none: the rule is pure.
    public static let defaultReserveSeconds = 10.0

    public struct Configuration: Sendable, Equatable {
        /// Segments planned ahead (as MPC: 5).
        public var horizonSegments = 5
        /// λ, per Mbit/s of bitrate change between consecutive segments (as MPC: 1).
        public var switchPenalty = 1.0
        /// μ, per second of rebuffering; nil: the top rung's bitrate in Mbit/s (as MPC and the summary's QoE).
        public var rebufferPenaltyPerSecond: Double?
        /// The buffer cannot grow past this, seconds (hlsplay's automatic forward-buffer target).
        public var bufferCapacitySeconds = 30.0
        /// How long the link is silent in the risky future, seconds: the stall predictor's horizon.
        public var silentSeconds = defaultStallHorizonSeconds
        /// The sustain floor applies from this buffer up, seconds (one 2 s segment): below it the plan alone
        /// decides, as a thin buffer is where a rung the link carries can still stall. Chosen on the tuning
        /// traces (docs/abr.md).
        public var floorMinimumBufferSeconds = 2.0
        /// The sustain floor stands aside when the stall predictor's risk is above this probability: a stall the
        /// predictor sees coming is the plan's to price. Chosen on the tuning traces (docs/abr.md).
        public var floorMaximumRisk = 0.1
        /// The floor is the highest rung whose bitrate is at most this fraction of the throughput the plan uses
        /// (the throughput rule's headroom, `ThroughputRule.defaultSafetyFactor`).
        public var floorSafetyFactor = ThroughputRule.defaultSafetyFactor
        /// The buffer reserve, seconds (nil: none). A plan ending its horizon with less buffer than min(the buffer
        /// now, the reserve) pays `reservePriceShare` × μ per second short, and the sustain floor drains the buffer no
        /// lower than min(the buffer now, the reserve).
        public var reserveSeconds: Double?
        /// The price of one second of reserve shortfall at the horizon's end, as a share of μ (the price of one
        /// second of rebuffering): a second of buffer spent below the reserve is worth this share of a stalled one.
        /// Chosen on the tuning traces with the extra tuning traces (docs/abr.md, "The buffer reserve": 0.05, 0.1,
        /// 0.25 and 0.5 tried; 0.25 and 0.5 gave the same counts at a 10 s reserve, the smaller was kept).
        public var reservePriceShare = 0.25

        public init() {}
    }

    public struct Decision: Sendable, Equatable {
        /// Rung position in the ascending ladder: the plan's first rung, raised to the sustain floor.
        public var rung: Int
        /// The best plan's first rung, and the sustain floor (`floorRung`; 0 where it stands aside).
        public var planRung: Int
        public var floorRung: Int
        /// The best plan's expected QoE over the horizon.
        public var plannedQoE: Double
        /// The rebuffering the best plan expects with the link as predicted, and with it silent first, seconds.
        public var plannedRebufferSeconds: Double
        public var riskyRebufferSeconds: Double
        /// How far the best plan ends below the reserve with the link as predicted, seconds (0 without a reserve).
        public var reserveShortfallSeconds = 0.0
    }

    /// The sustain floor: the lowest rung the rule may choose (0: none). MPC's five-segment horizon has no value
    /// for the buffer left at its end, so a plan that first saves buffer on a lower rung and spends it on a
    /// higher one near the end outscores holding a rung the link carries, and the first rung dithers down and up
    /// (each change priced by the QoE). The floor is the highest rung m whose segments, fetched at
    /// `floorSafetyFactor` × `throughputBps` (the throughput the plan used: RobustMPC's discounted estimate),
    /// would drain the buffer over the horizon by no more than the buffer above `floorMinimumBufferSeconds`:
    ///     horizonSegments · max(0, bits_m / (safety · throughput) − d) ≤ buffer − floorMinimumBuffer
    /// so at the minimum buffer it is the throughput rule's rung, and a deeper buffer lets it hold a rung the link
    /// carries only just. With a reserve the buffer kept is min(buffer, reserve) when that is more than the minimum:
    /// below the reserve the floor is the rung the link carries without draining. It stands aside (0) below
    /// `floorMinimumBufferSeconds` and when the stall predictor's
    /// risk is above `floorMaximumRisk` (nil: no predictor, taken as 0): there the plan alone decides.
    public static func floorRung(
        bitratesBps: [Double], segmentDurationSeconds: Double, bufferSeconds: Double, throughputBps: Double, stallRisk: Double?,
        configuration: Configuration = Configuration()
    ) -> Int {
        let p = stallRisk?.isFinite == true ? stallRisk! : 0
        let kept = max(configuration.floorMinimumBufferSeconds, min(bufferSeconds, configuration.reserveSeconds ?? 0))
        let budget = bufferSeconds - kept
        let rate = configuration.floorSafetyFactor * throughputBps
        guard budget >= 0, p <= configuration.floorMaximumRisk, rate > 0, segmentDurationSeconds > 0 else { return 0 }
        let horizon = Double(max(1, configuration.horizonSegments))
        return bitratesBps.lastIndex { bps in
            horizon * max(0, bps * segmentDurationSeconds / rate - segmentDurationSeconds) <= budget
        } ?? 0
    }

    /// The first rung of the plan with the best expected QoE, raised to the sustain floor (`floorRung`) when that
    /// is higher. `bitratesBps` ascending; `lastRung` the rung playing (nil at the start: no switch penalty on the
    /// first segment); `stallRisk` the predictor's probability of a stall within its horizon (nil: no predictor,
    /// taken as 0; clamped to 0…1).
    public static func decide(
        bitratesBps: [Double], segmentDurationSeconds: Double, bufferSeconds: Double, lastRung: Int?, throughputBps: Double,
        stallRisk: Double?, configuration: Configuration = Configuration()
    ) -> Decision {
        precondition(!bitratesBps.isEmpty && segmentDurationSeconds > 0, "MPC needs a ladder and a segment duration")
        let horizon = max(1, configuration.horizonSegments)
        let mbps = bitratesBps.map { $0 / 1e6 }
        let mu = configuration.rebufferPenaltyPerSecond ?? mbps.max()!
        let throughput = max(throughputBps, 1)
        let p = min(1, max(0, (stallRisk?.isFinite == true ? stallRisk! : 0)))
        let silent = max(0, configuration.silentSeconds)

        func bits(_: Int, _ m: Int) -> Double { bitratesBps[m] * segmentDurationSeconds }
        /// The rebuffering of `plan` when the first download starts `delay` late, and the buffer it ends with.
        func play(_ plan: [Int], delay: Double) -> (rebufferSeconds: Double, endBufferSeconds: Double) {
            ModelPredictiveRule.playForward(
                plan, bufferSeconds: max(0, bufferSeconds), throughputBps: throughput, segmentDurationSeconds: segmentDurationSeconds,
                bufferCapacitySeconds: configuration.bufferCapacitySeconds, delaySeconds: delay, bits: bits)
        }
        let reserve = configuration.reserveSeconds.map { min(max(0, bufferSeconds), max(0, $0)) }
        let reservePrice = max(0, configuration.reservePriceShare) * mu

        var best = Decision(rung: 0, planRung: 0, floorRung: 0, plannedQoE: -.infinity, plannedRebufferSeconds: 0, riskyRebufferSeconds: 0)
        ModelPredictiveRule.forEachPlan(rungs: bitratesBps.count, horizon: horizon) { plan in
            let gain = ModelPredictiveRule.gain(plan, mbps: mbps, lastRung: lastRung, switchPenalty: configuration.switchPenalty)
            let predicted = play(plan, delay: 0)
            let rebuffer = predicted.rebufferSeconds
            let risky = p > 0 ? play(plan, delay: silent).rebufferSeconds : rebuffer
            let shortfall = reserve.map { max(0, $0 - predicted.endBufferSeconds) } ?? 0
            let qoe = gain - mu * ((1 - p) * rebuffer + p * risky) - reservePrice * shortfall
            if qoe > best.plannedQoE {
                best = Decision(
                    rung: plan[0], planRung: plan[0], floorRung: 0, plannedQoE: qoe, plannedRebufferSeconds: rebuffer,
                    riskyRebufferSeconds: risky, reserveShortfallSeconds: shortfall)
            }
        }
        best.floorRung = floorRung(
            bitratesBps: bitratesBps, segmentDurationSeconds: segmentDurationSeconds, bufferSeconds: bufferSeconds,
            throughputBps: throughputBps, stallRisk: stallRisk, configuration: configuration)
        best.rung = max(best.planRung, best.floorRung)
        return best
    }
}
