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
        /// The throughput rule's headroom at the start and in the oscillation guard (fraction of the estimate);
        /// abandonment also discounts the request's measured rate by it.
        public var throughputSafetyFactor: Double = ThroughputRule.defaultSafetyFactor
        /// Abandonment: no judgement in the first this-many seconds after a request's first byte (its rate is
        /// not yet measured). Seconds; dash.js's BOLA abandonment uses 0.5 s.
        public var abandonGracePeriodSeconds: Double = 0.5
        /// Abandonment: a new request waits at least this long for its first byte (dash.js's "poor latency",
        /// 0.2 s), seconds; the request's own first-byte time when it was longer.
        public var abandonMinimumLatencySeconds: Double = 0.2

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
        /// The segment re-requested after an abandonment: the rung the abandonment chose (`abandoned`).
        case abandoned
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
    /// The rung of the last segment requested, nil before the first: the rule's choice, or the rung the caller
    /// reported it fetched instead (`fetched(rung:)`), or the rung an abandonment went to.
    public private(set) var lastRung: Int?
    /// Why the last segment's rung was chosen (the first segment: `startup`), nil before the first.
    public private(set) var lastReason: Reason?
    /// The segment duration the rule plans with (the insufficient-buffer rule, abandonment), seconds.
    public private(set) var segmentDurationSeconds: Double

    public init(bitratesBps: [Double], segmentDurationSeconds: Double, configuration: Configuration = Configuration()) {
        precondition(segmentDurationSeconds > 0, "BOLA-E needs a segment duration")
        self.configuration = configuration
        self.segmentDurationSeconds = segmentDurationSeconds
        parameters = BolaParameters(
            bitratesBps: bitratesBps, minimumBufferSeconds: configuration.minimumBufferSeconds,
            bufferTargetSeconds: configuration.bufferTargetSeconds)
    }

    /// The segment duration is known now (a session's first decision comes before any media playlist, with a
    /// default): the rule plans with it from here on.
    public mutating func segmentDurationKnown(_ seconds: Double) {
        if seconds > 0 { segmentDurationSeconds = seconds }
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
        lastReason = reason
        return Decision(rung: rung, reason: reason, waitSeconds: wait, bufferSeconds: bufferSeconds, placeholderSeconds: placeholderSeconds)
    }

    /// The caller fetched rung `rung` for the segment just decided, not the rule's choice (a cap outside BOLA-E
    /// lowered it). The oscillation guard compares against the rung of the previous segment — the bitrate the
    /// player last downloaded (MMSys 2018, BOLA-O: "do not switch up past the throughput rung above the
    /// previous segment's bitrate") — so it is the fetched rung that counts, not the one the rule would have taken.
    public mutating func fetched(rung: Int) {
        guard lastRung != nil, parameters.bitratesBps.indices.contains(rung) else { return }
        lastRung = rung
    }

    /// The re-request after an abandonment: the rung the abandonment chose, without a new BOLA decision (it was
    /// made for this segment a moment ago, on the rest of the one abandoned).
    public mutating func decideAfterAbandonment(_ a: BolaAbandonment, bufferSeconds: Double) -> Decision {
        let rung = a.chosenRung ?? a.rung
        lastRung = rung
        lastReason = .abandoned
        return Decision(rung: rung, reason: .abandoned, waitSeconds: 0, bufferSeconds: bufferSeconds, placeholderSeconds: placeholderSeconds)
    }

    /// The loader sat idle this long between requests (a full buffer, a pause): the real buffer drained by
    /// that much without BOLA's doing, so the placeholder takes it up.
    public mutating func idled(seconds: Double) {
        if seconds > 0 { placeholderSeconds += seconds }
    }

    /// Playback stalled: the placeholder was optimism, drop it.
    public mutating func stalled() { placeholderSeconds = 0 }

    /// BOLA-E's abandonment criterion alone (the paper's comparison, without the guards and the measured rate
    /// of `abandonment(rung:bytesLoaded:…)`, which the sessions use): while rung `rung`'s segment downloads with
    /// `remainingBits` still to come, a lower rung whose whole segment scores better (per bit) than the rest of
    /// this one does is the better use of the link. Returns that rung, or nil to continue.
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

/// BOLA-E's abandonment judgement of one segment request in flight: what it saw, what it derived, and what it
/// concluded (`chosenRung` nil: let it run, `reason` says why). Rung positions are in the ascending ladder.
public struct BolaAbandonment: Sendable, Equatable {
    /// Why the request runs on, or why it is abandoned.
    public enum Reason: String, Sendable, Equatable, Codable {
        // Let it run:
        /// Less than the grace period since the first byte: the rate is not measured yet.
        case gracePeriod
        /// Less is left to come (after the new request's first-byte wait) than a whole bottom-rung segment.
        case remainderBelowBottomSegment
        /// The buffer is above BOLA's buffer target: nothing would be requested now anyway.
        case bufferAmple
        /// At the measured rate (discounted) the whole segment arrives within one segment duration.
        case arrivesWithinSegmentDuration
        /// BOLA's objective on the rest of this segment beats every whole lower segment, and the rest arrives
        /// within the safe fraction of the buffer.
        case bolaPrefersContinuing
        // Abandon:
        /// BOLA's objective: a whole lower segment scores better per byte than the rest of this one.
        case bola
        /// The first segment (before any BOLA decision): the highest rung the measured rate sustains.
        case startupThroughput
        /// The rest would not arrive within the safe fraction of the buffer: the highest lower rung that would.
        case insufficientBuffer
    }

    /// The rung of the request in flight.
    public var rung: Int
    /// Body bytes received and expected.
    public var bytesLoaded: Int
    public var bytesTotal: Int
    /// The request's own rate since its first byte, bits per second.
    public var measuredBps: Double
    /// Time since the first byte, seconds.
    public var sinceFirstByteSeconds: Double
    /// The first-byte wait a new request is expected to pay (this one's, at least the configured minimum), seconds.
    public var latencySeconds: Double
    /// The real buffer and BOLA-E's placeholder when judged, seconds.
    public var bufferSeconds: Double
    public var placeholderSeconds: Double
    public var segmentDurationSeconds: Double
    /// The whole segment's time at the discounted measured rate, with the latency, seconds.
    public var projectedTotalSeconds: Double
    /// The bytes still to come once a new request would have its first byte (at least 1).
    public var remainingAfterLatencyBytes: Double
    /// The bytes that can arrive within the safe fraction of the buffer at the measured rate.
    public var safeBytes: Double
    /// Where to go (a lower rung), nil: let it run.
    public var chosenRung: Int?
    public var reason: Reason

    public var abandons: Bool { chosenRung != nil }
}

extension BolaE {
    /// BOLA-E's abandonment (Spiteri, Sitaraman, Sparacio, MMSys 2018, §"abandonment"; the authors' dash.js
    /// BolaAbandonRule for its guards): while rung `rung`'s segment downloads, `bytesLoaded` of `bytesTotal` in,
    /// `sinceFirstByteSeconds` after its first byte came `firstByteSeconds` after the request, with
    /// `bufferSeconds` buffered — would BOLA rather have a whole lower segment than the rest of this one?
    ///
    /// It runs on when a guard holds (in order): the grace period; the remainder, or the remainder after a new
    /// request's first-byte wait, is smaller than a bottom-rung segment; the buffer is above the buffer target;
    /// the whole segment arrives within one segment duration at the discounted measured rate. Otherwise it
    /// compares BOLA's objective per byte, on buffer + placeholder less the latency: continuing is worth
    /// (V(v_m + γp) − Q) over the bytes still to come; a lower rung i (whose whole segment, sized in proportion to
    /// its bitrate, is smaller than those bytes) is worth (V(v_i + γp) − Q) over its segment. For the first
    /// segment (no BOLA decision yet) the choice is the highest rung the measured rate sustains. Last, the
    /// insufficient-buffer rule on the real buffer: if the rest would not arrive within the safe fraction of the
    /// buffer, go down anyway; and never to a rung whose segment would not either. Nil: not a judgeable request
    /// (the bottom rung, no byte yet, the size unknown, or a rung not in the ladder).
    public func abandonment(
        rung m: Int, bytesLoaded: Int, bytesTotal: Int, sinceFirstByteSeconds: Double, firstByteSeconds: Double,
        bufferSeconds: Double, segmentDurationSeconds duration: Double
    ) -> BolaAbandonment? {
        let bitrates = parameters.bitratesBps
        guard m > 0, m < bitrates.count, bytesLoaded > 0, bytesTotal > bytesLoaded, sinceFirstByteSeconds > 0, duration > 0 else {
            return nil
        }
        let c = configuration
        let measured = Double(bytesLoaded) * 8 / sinceFirstByteSeconds
        let discounted = c.throughputSafetyFactor * measured
        let latency = max(firstByteSeconds, c.abandonMinimumLatencySeconds)
        let total = Double(bytesTotal)
        let remaining = total - Double(bytesLoaded)
        /// Rung i's whole segment, bytes: this one's size in proportion to the bitrates.
        func size(_ i: Int) -> Double { total * bitrates[i] / bitrates[m] }
        let remainingAfterLatency = max(1, remaining - latency * discounted / 8)
        let buffer = max(0, bufferSeconds)
        var a = BolaAbandonment(
            rung: m, bytesLoaded: bytesLoaded, bytesTotal: bytesTotal, measuredBps: measured, sinceFirstByteSeconds: sinceFirstByteSeconds,
            latencySeconds: latency, bufferSeconds: buffer, placeholderSeconds: placeholderSeconds, segmentDurationSeconds: duration,
            projectedTotalSeconds: latency + total * 8 / discounted, remainingAfterLatencyBytes: remainingAfterLatency,
            safeBytes: max(0, c.insufficientBufferSafetyFactor * measured * (buffer - latency) / 8), chosenRung: nil,
            reason: .bolaPrefersContinuing)
        if sinceFirstByteSeconds < c.abandonGracePeriodSeconds {
            a.reason = .gracePeriod
        } else if remaining <= size(0) || remainingAfterLatency <= size(0) {
            a.reason = .remainderBelowBottomSegment
        } else if buffer > c.bufferTargetSeconds {
            a.reason = .bufferAmple
        } else if a.projectedTotalSeconds <= duration {
            a.reason = .arrivesWithinSegmentDuration
        }
        guard a.reason == .bolaPrefersContinuing else { return a }

        // The rungs worth going to: those whose whole segment is smaller than what is left of this one.
        var lowest = 0
        while lowest + 1 < m, size(lowest + 1) < remainingAfterLatency { lowest += 1 }
        var chosen = m
        var reason = BolaAbandonment.Reason.bola
        if lastReason == nil || lastReason == .startup {
            // The first segment: the highest rung (up to `lowest`) whose bitrate the discounted rate sustains.
            chosen = 0
            for i in 0...lowest where size(i) * 8 / duration <= discounted { chosen = i }
            reason = .startupThroughput
        } else {
            // A new request pays the latency: the buffer will be that much lower, this one that much further on.
            let q = max(0, buffer + placeholderSeconds - latency)
            var best = parameters.objective(rung: m, bufferSeconds: q, sizeBits: remainingAfterLatency * 8)
            for i in 0...lowest {
                let score = parameters.objective(rung: i, bufferSeconds: q, sizeBits: size(i) * 8)
                if score > best {
                    best = score
                    chosen = i
                }
            }
        }
        if chosen == m, remainingAfterLatency > a.safeBytes {
            chosen = lowest
            reason = .insufficientBuffer
        }
        guard chosen < m else { return a }
        while chosen > 0, size(chosen) > a.safeBytes { chosen -= 1 }
        a.chosenRung = chosen
        a.reason = reason
        return a
    }

    /// The shell abandoned the request on `a`: the placeholder deflates to where BOLA would just choose the new
    /// rung (to one segment below the bottom rung's switch point when it is the bottom), so the re-decisions after
    /// an abandonment are conservative; the re-request is for `a.chosenRung` (`decideAfterAbandonment`).
    public mutating func abandoned(_ a: BolaAbandonment) {
        guard let new = a.chosenRung else { return }
        let want =
            new > 0
            ? parameters.minimumBufferSeconds(forRung: new)
            : (parameters.bitratesBps.count > 1 ? parameters.switchBufferSeconds(from: 0) - a.segmentDurationSeconds : 0)
        if a.bufferSeconds + placeholderSeconds > want { placeholderSeconds = max(0, want - a.bufferSeconds) }
        lastRung = new
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
