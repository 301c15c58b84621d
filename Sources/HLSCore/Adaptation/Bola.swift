// BOLA, the buffer-based adaptation rule (Spiteri, Urgaonkar, Sitaraman, "BOLA: Near-Optimal Bitrate
// Adaptation for Online Videos", INFOCOM 2016), with the practical additions of BOLA-E (Spiteri,
// Sitaraman, Sparacio, "From Theory to Practice: Improving Bitrate Adaptation in the DASH Reference
// Player", MMSys 2018): the placeholder buffer, the insufficient-buffer rule, the oscillation guard and
// abandonment. Written from the papers; pure: the caller passes the buffer, the throughput and the time
// it waited, and gets a rung position back with the reason.
//
// BOLA-BASIC picks, for a buffer level Q (seconds), the rung m that maximises
//     (V · (v_m + γp) − Q) / S_m
// where S_m is the rung's segment size (∝ its bitrate, the segment duration being common), v_m =
// ln(S_m / S_0) its utility, and V, γp two parameters. Every objective is negative above
// Q_max = V · (v_top + γp): the buffer is full, wait. Between two adjacent rungs the choice flips at
//     Q(m, m+1) = V · (S_{m+1} (v_m + γp) − S_m (v_{m+1} + γp)) / (S_{m+1} − S_m).
// The parameters are set from two buffer levels a user can read (`Parameters.init`): the bottom rung is
// kept below `minimumBufferSeconds` (= Q(0, 1)) and the top rung is chosen up to `bufferTargetSeconds`
// (= Q_max). docs/abr.md shows the textbook case (1, 2.5 and 5 Mbit/s, an 18 s buffer: switches at 5
// and 10 s).

import Foundation

/// BOLA's parameters for one ladder: utilities, V and γp.
public struct BolaParameters: Sendable, Equatable {
    /// The rungs' bitrates, ascending, bits per second.
    public let bitratesBps: [Double]
    /// v_m = ln(S_m / S_0): 0 for the bottom rung.
    public let utilities: [Double]
    /// V, seconds: the weight of utility against buffer.
    public let v: Double
    /// γp: the weight of playing smoothly (the paper's γ times the segment duration p), dimensionless.
    public let gammaP: Double

    /// Parameters such that the bottom rung is chosen while the buffer is under `minimumBufferSeconds` and the
    /// top rung up to `bufferTargetSeconds`. A one-rung ladder has no switch: V is set so the buffer target holds.
    /// Needs ascending, distinct, positive bitrates and 0 < minimumBufferSeconds < bufferTargetSeconds.
    public init(bitratesBps: [Double], minimumBufferSeconds: Double, bufferTargetSeconds: Double) {
        precondition(!bitratesBps.isEmpty && bitratesBps.allSatisfy { $0 > 0 }, "BOLA needs positive bitrates")
        precondition(zip(bitratesBps, bitratesBps.dropFirst()).allSatisfy { $0 < $1 }, "BOLA needs ascending, distinct bitrates")
        precondition(minimumBufferSeconds > 0 && minimumBufferSeconds < bufferTargetSeconds, "BOLA needs 0 < minimum < target")
        self.bitratesBps = bitratesBps
        let utilities = bitratesBps.map { log($0 / bitratesBps[0]) }
        self.utilities = utilities
        guard bitratesBps.count > 1 else {
            gammaP = 1
            v = bufferTargetSeconds
            return
        }
        // Q(0,1) = V (γp − c) with c = S_0 v_1 / (S_1 − S_0); Q_max = V (v_top + γp). Their ratio r fixes γp.
        let c = bitratesBps[0] * utilities[1] / (bitratesBps[1] - bitratesBps[0])
        let r = bufferTargetSeconds / minimumBufferSeconds
        let top = utilities[utilities.count - 1]
        gammaP = (top + r * c) / (r - 1)
        v = bufferTargetSeconds / (top + gammaP)
    }

    /// BOLA's objective for rung `m` at buffer level `bufferSeconds`, per bit of a segment of `sizeBits`
    /// (a whole segment: its bitrate × duration; a part of one when judging abandonment).
    public func objective(rung m: Int, bufferSeconds: Double, sizeBits: Double) -> Double {
        (v * (utilities[m] + gammaP) - bufferSeconds) / sizeBits
    }

    /// BOLA-BASIC's choice at `bufferSeconds`: the rung with the largest objective (the bottom rung at any
    /// level where all are negative: the caller waits, see `fullBufferSeconds`).
    public func rung(bufferSeconds: Double) -> Int {
        var best = 0
        var bestScore = -Double.infinity
        for m in bitratesBps.indices {
            let score = objective(rung: m, bufferSeconds: bufferSeconds, sizeBits: bitratesBps[m])
            if score > bestScore {
                best = m
                bestScore = score
            }
        }
        return best
    }

    /// The buffer level at which the choice flips from rung `m` to rung `m + 1`, seconds.
    public func switchBufferSeconds(from m: Int) -> Double {
        let (s0, s1) = (bitratesBps[m], bitratesBps[m + 1])
        return v * (s1 * (utilities[m] + gammaP) - s0 * (utilities[m + 1] + gammaP)) / (s1 - s0)
    }

    /// The lowest buffer level at which BOLA chooses rung `m` (0 for the bottom rung), seconds.
    public func minimumBufferSeconds(forRung m: Int) -> Double {
        m == 0 ? 0 : switchBufferSeconds(from: m - 1)
    }

    /// The buffer level above which rung `m`'s objective is negative: with that rung chosen, a buffer above
    /// it means wait before the next request, seconds.
    public func fullBufferSeconds(forRung m: Int) -> Double { v * (utilities[m] + gammaP) }
}

/// The throughput rule: the highest rung whose bitrate fits a safety fraction of the throughput estimate.
public enum ThroughputRule {
    /// dash.js's ThroughputRule keeps this fraction of the estimate as headroom (0.9: 10 %).
    public static let defaultSafetyFactor = 0.9

    /// The highest rung position (bitrates ascending) with bitrate ≤ safetyFactor × throughputBps; 0 when none fits.
    public static func rung(bitratesBps: [Double], throughputBps: Double, safetyFactor: Double = defaultSafetyFactor) -> Int {
        bitratesBps.lastIndex { $0 <= safetyFactor * throughputBps } ?? 0
    }
}

/// BOLA-E: BOLA with the placeholder buffer, the insufficient-buffer rule, the oscillation guard and
/// abandonment, as a value-type state machine. The shell reports each decision point and each idle wait;
/// it never reads a clock.
public struct BolaE: Sendable, Equatable {
    public struct Configuration: Sendable, Equatable {
        /// Below this buffer BOLA keeps the bottom rung (Q(0, 1)), seconds. dash.js's BOLA uses 10 s.
        public var minimumBufferSeconds: Double = 10
        /// The top rung is chosen up to this buffer (Q_max); above it the rule waits. Seconds; hlsplay's
        /// automatic forward-buffer target.
        public var bufferTargetSeconds: Double = 30
        /// The insufficient-buffer rule: a segment must download within this fraction of the buffer at the
        /// throughput estimate (dash.js's InsufficientBufferRule uses 0.5).
        public var insufficientBufferSafetyFactor: Double = 0.5
        /// The throughput rule's headroom at the start and in the oscillation guard (fraction of the estimate).
        public var throughputSafetyFactor: Double = ThroughputRule.defaultSafetyFactor

        public init() {}
    }

    /// Why BOLA-E chose a rung.
    public enum Reason: String, Sendable, Equatable, Codable {
        /// The first segment: the throughput rule's rung, the placeholder raised to match it.
        case startup
        /// BOLA's objective on buffer + placeholder.
        case bola
        /// BOLA went up past the throughput rule's rung and the last rung: held at the higher of the two.
        case oscillationGuard
        /// The segment would not download within a safe fraction of the buffer: capped.
        case insufficientBuffer
    }

    public struct Decision: Sendable, Equatable {
        /// Rung position in the ascending ladder.
        public var rung: Int
        public var reason: Reason
        /// Wait this long before requesting it (the buffer is above the rung's full level), seconds.
        public var waitSeconds: Double
        /// What the decision saw: the real buffer and the placeholder, seconds.
        public var bufferSeconds: Double
        public var placeholderSeconds: Double
    }

    public let configuration: Configuration
    public let parameters: BolaParameters
    /// Virtual buffer BOLA counts on top of the real one (BOLA-E's placeholder), seconds.
    public private(set) var placeholderSeconds = 0.0
    /// The last rung decided, nil before the first.
    public private(set) var lastRung: Int?
    private let segmentDurationSeconds: Double

    public init(bitratesBps: [Double], segmentDurationSeconds: Double, configuration: Configuration = Configuration()) {
        precondition(segmentDurationSeconds > 0, "BOLA-E needs a segment duration")
        self.configuration = configuration
        self.segmentDurationSeconds = segmentDurationSeconds
        parameters = BolaParameters(
            bitratesBps: bitratesBps, minimumBufferSeconds: configuration.minimumBufferSeconds,
            bufferTargetSeconds: configuration.bufferTargetSeconds)
    }

    /// The next segment's rung. `throughputBps`: the estimate, nil while there is none.
    public mutating func decide(bufferSeconds: Double, throughputBps: Double?) -> Decision {
        let bitrates = parameters.bitratesBps
        let throughputRung = throughputBps.map {
            ThroughputRule.rung(bitratesBps: bitrates, throughputBps: $0, safetyFactor: configuration.throughputSafetyFactor)
        }
        var rung: Int
        var reason: Reason
        if lastRung == nil {
            // Startup: the throughput rule's rung, and a placeholder that makes BOLA agree with it, so the first
            // BOLA decisions do not fall to the bottom rung for want of real buffer.
            rung = throughputRung ?? 0
            reason = .startup
            placeholderSeconds = max(placeholderSeconds, parameters.minimumBufferSeconds(forRung: rung) - bufferSeconds)
        } else {
            rung = parameters.rung(bufferSeconds: bufferSeconds + placeholderSeconds)
            reason = .bola
            if let last = lastRung, let throughputRung, rung > last, rung > throughputRung {
                rung = max(throughputRung, last)
                reason = .oscillationGuard
            }
        }
        // Insufficient buffer: the segment at the estimate must download within a fraction of the real buffer.
        if let throughputBps, reason != .startup {
            let affordableBps = throughputBps * configuration.insufficientBufferSafetyFactor * bufferSeconds / segmentDurationSeconds
            let safe = bitrates.lastIndex { $0 <= affordableBps } ?? 0
            if safe < rung {
                rung = safe
                reason = .insufficientBuffer
            }
        }
        // Above the chosen rung's full level: spend the placeholder first, then wait.
        var wait = max(0, bufferSeconds + placeholderSeconds - parameters.fullBufferSeconds(forRung: rung))
        let spent = min(wait, placeholderSeconds)
        placeholderSeconds -= spent
        wait -= spent
        lastRung = rung
        return Decision(rung: rung, reason: reason, waitSeconds: wait, bufferSeconds: bufferSeconds, placeholderSeconds: placeholderSeconds)
    }

    /// The loader sat idle this long between requests (a full buffer, a pause): the real buffer drained by
    /// that much without BOLA's doing, so the placeholder takes it up.
    public mutating func idled(seconds: Double) {
        if seconds > 0 { placeholderSeconds += seconds }
    }

    /// Playback stalled: the placeholder was optimism, drop it.
    public mutating func stalled() { placeholderSeconds = 0 }

    /// BOLA-E's abandonment: while rung `rung`'s segment downloads with `remainingBits` still to come, a lower
    /// rung whose whole segment scores better (per bit) than the rest of this one does is the better use of the
    /// link. Returns that rung, or nil to continue.
    public func abandonment(rung: Int, remainingBits: Double, bufferSeconds: Double) -> Int? {
        guard rung > 0, remainingBits > 0 else { return nil }
        let q = bufferSeconds + placeholderSeconds
        let continuing = parameters.objective(rung: rung, bufferSeconds: q, sizeBits: remainingBits)
        var best: Int?
        var bestScore = continuing
        for m in 0..<rung {
            let score = parameters.objective(rung: m, bufferSeconds: q, sizeBits: parameters.bitratesBps[m] * segmentDurationSeconds)
            if score > bestScore {
                best = m
                bestScore = score
            }
        }
        return best
    }
}

/// dash.js's DYNAMIC strategy: the throughput rule at the start and while the buffer is low, BOLA-E once the
/// buffer is deep, with hysteresis between the two.
public struct DynamicRule: Sendable, Equatable {
    /// Switch to BOLA at or above this buffer, seconds (dash.js switches at 10 s).
    public var switchToBolaBufferSeconds = 10.0
    /// Back to the throughput rule below this buffer, seconds.
    public var switchToThroughputBufferSeconds = 5.0
    public private(set) var usingBola = false

    public init() {}

    /// Which rule decides at `bufferSeconds`, updating the state.
    public mutating func useBola(bufferSeconds: Double) -> Bool {
        if usingBola, bufferSeconds < switchToThroughputBufferSeconds {
            usingBola = false
        } else if !usingBola, bufferSeconds >= switchToBolaBufferSeconds {
            usingBola = true
        }
        return usingBola
    }
}
