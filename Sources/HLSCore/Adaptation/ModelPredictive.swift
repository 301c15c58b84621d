// Model-predictive adaptation (Yin, Jindal, Sekar, Sinopoli, "A Control-Theoretic Approach for Dynamic
// Adaptive Video Streaming over HTTP", SIGCOMM 2015), written from the paper; pure.
//
// At each decision the rule looks `horizonSegments` segments ahead, enumerates every rung sequence, plays
// each forward against a throughput prediction (buffer − download time, + the segment's duration; a
// negative buffer is rebuffering), and takes the first rung of the sequence with the best QoE:
//     Σ q(R_k) − λ · Σ |q(R_k) − q(R_{k−1})| − μ · Σ rebuffer_k
// with q the bitrate in Mbit/s (the paper's linear QoE), λ = 1 and μ = the ladder's top bitrate in Mbit/s
// (as in the MPC and Pensieve papers, and the session summary's QoE score). RobustMPC divides the
// throughput prediction by 1 + the largest relative prediction error of the last few segments
// (`PredictionErrorTracker`), so a link that surprised it recently is planned for pessimistically.

import Foundation

public enum ModelPredictiveRule {
    public struct Configuration: Sendable, Equatable {
        /// Segments planned ahead (the paper uses 5).
        public var horizonSegments = 5
        /// λ, per Mbit/s of bitrate change between consecutive segments.
        public var switchPenalty = 1.0
        /// μ, per second of rebuffering; nil: the top rung's bitrate in Mbit/s.
        public var rebufferPenaltyPerSecond: Double?
        /// The buffer cannot grow past this, seconds: a plan that would overfill waits (no rebuffer, no gain).
        public var bufferCapacitySeconds = 30.0

        public init() {}
    }

    public struct Decision: Sendable, Equatable {
        /// Rung position in the ascending ladder.
        public var rung: Int
        /// The best plan's QoE over the horizon.
        public var plannedQoE: Double
        /// The rebuffering the best plan expects, seconds.
        public var plannedRebufferSeconds: Double
        /// The throughput the plan assumed, bits per second.
        public var plannedThroughputBps: Double
    }

    /// The first rung of the best plan. `bitratesBps` ascending; `segmentBits[k][m]`, when known, is the size of
    /// the k-th segment ahead at rung m (else bitrate × duration); `lastRung` is the rung playing (nil at the start:
    /// no switch penalty for the first segment).
    public static func decide(
        bitratesBps: [Double], segmentDurationSeconds: Double, bufferSeconds: Double, lastRung: Int?, throughputBps: Double,
        segmentBits: [[Double]]? = nil, configuration: Configuration = Configuration()
    ) -> Decision {
        precondition(!bitratesBps.isEmpty && segmentDurationSeconds > 0, "MPC needs a ladder and a segment duration")
        let rungs = bitratesBps.count
        let horizon = max(1, configuration.horizonSegments)
        let mbps = bitratesBps.map { $0 / 1e6 }
        let mu = configuration.rebufferPenaltyPerSecond ?? mbps.max()!
        let throughput = max(throughputBps, 1)
        func bits(_ k: Int, _ m: Int) -> Double {
            if let segmentBits, k < segmentBits.count, m < segmentBits[k].count { return segmentBits[k][m] }
            return bitratesBps[m] * segmentDurationSeconds
        }

        var best = Decision(rung: 0, plannedQoE: -.infinity, plannedRebufferSeconds: 0, plannedThroughputBps: throughput)
        forEachPlan(rungs: rungs, horizon: horizon) { plan in
            let rebuffer = rebufferSeconds(
                plan, bufferSeconds: bufferSeconds, throughputBps: throughput, segmentDurationSeconds: segmentDurationSeconds,
                bufferCapacitySeconds: configuration.bufferCapacitySeconds, bits: bits)
            let qoe = gain(plan, mbps: mbps, lastRung: lastRung, switchPenalty: configuration.switchPenalty) - mu * rebuffer
            if qoe > best.plannedQoE {
                best = Decision(rung: plan[0], plannedQoE: qoe, plannedRebufferSeconds: rebuffer, plannedThroughputBps: throughput)
            }
        }
        return best
    }

    /// Calls `body` with every sequence of `horizon` rungs out of `rungs`, in lexicographic order (a base-`rungs`
    /// counter, the last segment's rung the fastest digit): the plans MPC and its variants search.
    public static func forEachPlan(rungs: Int, horizon: Int, _ body: ([Int]) -> Void) {
        guard rungs > 0, horizon > 0 else { return }
        var plan = [Int](repeating: 0, count: horizon)
        while true {
            body(plan)
            var digit = horizon - 1
            while digit >= 0 {
                plan[digit] += 1
                if plan[digit] < rungs { break }
                plan[digit] = 0
                digit -= 1
            }
            if digit < 0 { return }
        }
    }

    /// A plan's bitrate and switch terms: Σ q(R_k) − λ · Σ |q(R_k) − q(R_{k−1})|, `mbps` the rungs' bitrates in
    /// Mbit/s, `lastRung` the rung playing (nil: the first segment pays no switch).
    public static func gain(_ plan: [Int], mbps: [Double], lastRung: Int?, switchPenalty: Double) -> Double {
        var gain = 0.0
        var previous = lastRung
        for m in plan {
            gain += mbps[m]
            if let previous { gain -= switchPenalty * abs(mbps[m] - mbps[previous]) }
            previous = m
        }
        return gain
    }

    /// The rebuffering of `plan` played forward from `bufferSeconds` at `throughputBps`, seconds: each download
    /// (`bits(k, m)` / throughput, the first `delaySeconds` late) drains the buffer, a negative buffer is
    /// rebuffering, and each landed segment adds its duration up to `bufferCapacitySeconds`.
    public static func rebufferSeconds(
        _ plan: [Int], bufferSeconds: Double, throughputBps: Double, segmentDurationSeconds: Double, bufferCapacitySeconds: Double,
        delaySeconds: Double = 0, bits: (_ k: Int, _ m: Int) -> Double
    ) -> Double {
        playForward(
            plan, bufferSeconds: bufferSeconds, throughputBps: throughputBps, segmentDurationSeconds: segmentDurationSeconds,
            bufferCapacitySeconds: bufferCapacitySeconds, delaySeconds: delaySeconds, bits: bits
        ).rebufferSeconds
    }

    /// `rebufferSeconds`, with the buffer left once the plan's last segment has landed, seconds.
    public static func playForward(
        _ plan: [Int], bufferSeconds: Double, throughputBps: Double, segmentDurationSeconds: Double, bufferCapacitySeconds: Double,
        delaySeconds: Double = 0, bits: (_ k: Int, _ m: Int) -> Double
    ) -> (rebufferSeconds: Double, endBufferSeconds: Double) {
        var buffer = bufferSeconds
        var rebuffer = 0.0
        for (k, m) in plan.enumerated() {
            let download = bits(k, m) / throughputBps + (k == 0 ? delaySeconds : 0)
            if download > buffer {
                rebuffer += download - buffer
                buffer = 0
            } else {
                buffer -= download
            }
            buffer = min(buffer + segmentDurationSeconds, bufferCapacitySeconds)
        }
        return (rebuffer, buffer)
    }
}

/// RobustMPC's error bound: the largest relative error |predicted − actual| / actual of the last few
/// throughput predictions.
public struct PredictionErrorTracker: Sendable, Equatable {
    /// How many past predictions the bound covers (the paper uses the last 5).
    public let window: Int
    /// Whether only over-predictions count (the link delivered less than predicted): the paper counts the
    /// error both ways, so a link that speeds up discounts the next predictions as much as one that slows
    /// down, although only the second can stall playback. hlsplay-mpc counts over-predictions only.
    public let overPredictionOnly: Bool
    public private(set) var recentErrors: [Double] = []

    public init(window: Int = 5, overPredictionOnly: Bool = false) {
        self.window = max(1, window)
        self.overPredictionOnly = overPredictionOnly
    }

    /// A segment finished: the throughput that was predicted for it and the one it got, bits per second.
    public mutating func record(predictedBps: Double, actualBps: Double) {
        guard actualBps > 0, predictedBps.isFinite else { return }
        let error = overPredictionOnly ? max(0, predictedBps - actualBps) : abs(predictedBps - actualBps)
        recentErrors.append(error / actualBps)
        if recentErrors.count > window { recentErrors.removeFirst(recentErrors.count - window) }
    }

    /// The largest recent error (0 before any).
    public var maxError: Double { recentErrors.max() ?? 0 }

    /// The prediction RobustMPC plans with: `predictedBps` / (1 + the largest recent error).
    public func robust(_ predictedBps: Double) -> Double { predictedBps / (1 + maxError) }
}
