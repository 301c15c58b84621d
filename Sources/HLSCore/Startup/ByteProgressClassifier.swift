// Byte progress on the in-flight request: wedged, over-selected or healthy.
//
// A bare "no progress for T seconds" timer cannot tell a wedged request from
// a slow but healthy one: on a 2 Mbps link a legitimate 6 s segment takes
// 4.5–7 s. Bytes can: a wedged request receives ~0 bytes for N seconds
// (remedy: abort, re-request on a fresh connection, same rung); an
// over-selected one keeps receiving bytes, but its rung's bitrate is far
// above the measured throughput and it will not finish before the buffer runs
// out (remedy: abandon and cap the peak bitrate lower; never remove a
// variant). Everything else is healthy. Pure: the runtime's wall-clock
// monitor passes a snapshot each tick. Formulas: docs/startup-cap.md.

import Foundation

/// The in-flight request as the monitor sees it at one tick.
public struct InFlightSnapshot: Sendable, Equatable, Codable {
    /// Body bytes received so far.
    public var bytesReceived: Int
    /// Content-Length (or byte-range length), when known.
    public var bytesExpected: Int?
    /// Seconds since the last body byte arrived (since the request started
    /// when no byte has arrived yet).
    public var secondsSinceLastByte: Double
    /// Seconds since the request started.
    public var elapsedSeconds: Double
    /// Smoothed RTT of the connection, seconds, when known.
    public var rttSeconds: Double?
    /// Duration of the segment being fetched, seconds of media.
    public var segmentDurationSeconds: Double
    /// BANDWIDTH of the rung being fetched, bits per second.
    public var rungBitrateBps: Double
    /// Measured throughput of this request so far (or the recent estimate), bits per second.
    public var measuredThroughputBps: Double?
    /// Forward buffer, seconds of media.
    public var forwardBufferSeconds: Double

    public init(
        bytesReceived: Int, bytesExpected: Int?, secondsSinceLastByte: Double, elapsedSeconds: Double,
        rttSeconds: Double?, segmentDurationSeconds: Double, rungBitrateBps: Double,
        measuredThroughputBps: Double?, forwardBufferSeconds: Double
    ) {
        self.bytesReceived = bytesReceived
        self.bytesExpected = bytesExpected
        self.secondsSinceLastByte = secondsSinceLastByte
        self.elapsedSeconds = elapsedSeconds
        self.rttSeconds = rttSeconds
        self.segmentDurationSeconds = segmentDurationSeconds
        self.rungBitrateBps = rungBitrateBps
        self.measuredThroughputBps = measuredThroughputBps
        self.forwardBufferSeconds = forwardBufferSeconds
    }
}

public enum ByteProgressVerdict: String, Sendable, Equatable, Codable {
    case healthy
    /// ~0 bytes for the wedge window: abort and re-request on a fresh connection.
    case wedged
    /// Bytes flowing, but far too slowly for this rung: abandon and cap lower.
    case overSelected = "over-selected"
}

/// Why a request was judged healthy (for the log).
public enum HealthyReason: String, Sendable, Equatable, Codable {
    /// The request was judged over-selection-free because the rung fits the throughput.
    case ratioBelowThreshold = "ratio-below-threshold"
    /// The rung is too heavy, but the segment will finish before the buffer runs out.
    case finishesBeforeBufferRunsOut = "finishes-before-buffer-runs-out"
    /// Too little of the request has elapsed to judge over-selection.
    case tooEarlyToJudge = "too-early-to-judge"
    /// No byte for `overSelectionMaximumIdleSeconds`: not flowing, not yet wedged.
    case goingQuiet = "going-quiet"
    /// No throughput measure yet.
    case noThroughputMeasure = "no-throughput-measure"
    /// All expected bytes are in.
    case complete
    /// The rest arrives sooner than the same segment would at the downshifted
    /// rung: abandoning would only lose the bytes already in.
    case finishingBeatsRefetch = "finishing-beats-refetch"
}

/// What the runtime does about an assessment.
public enum ByteProgressRemedy: Sendable, Equatable {
    case none
    /// Abort and re-request the same segment (same rung) on a fresh connection;
    /// feed StartupCapEvent.wedgeDetected to the cap controller.
    case reRequestOnFreshConnection
    /// Abandon the fetch; feed StartupCapEvent.overSelected(suggestedCapBps:…)
    /// to the cap controller, which caps the peak bitrate (never removes a variant).
    case abandonAndCap(suggestedCapBps: Double)
}

/// The classification with every number behind it.
public struct ByteProgressAssessment: Sendable, Equatable, Codable {
    public var verdict: ByteProgressVerdict
    public var healthyReason: HealthyReason?
    /// N: seconds of ~0 bytes that make a wedge, for this request.
    public var wedgeWindowSeconds: Double
    public var idleSeconds: Double
    /// rung bitrate ÷ measured throughput (nil without a throughput measure).
    public var overSelectionRatio: Double?
    /// Seconds until the rest of the segment arrives at the measured throughput.
    public var projectedRemainingSeconds: Double?
    public var forwardBufferSeconds: Double
    /// For `overSelected`: the peak-bitrate cap to apply, bits per second
    /// (measured throughput × `downshiftSafetyFactor`).
    public var suggestedCapBps: Double?
    public init(
        verdict: ByteProgressVerdict, healthyReason: HealthyReason? = nil, wedgeWindowSeconds: Double, idleSeconds: Double,
        overSelectionRatio: Double? = nil, projectedRemainingSeconds: Double? = nil, forwardBufferSeconds: Double,
        suggestedCapBps: Double? = nil
    ) {
        self.verdict = verdict
        self.healthyReason = healthyReason
        self.wedgeWindowSeconds = wedgeWindowSeconds
        self.idleSeconds = idleSeconds
        self.overSelectionRatio = overSelectionRatio
        self.projectedRemainingSeconds = projectedRemainingSeconds
        self.forwardBufferSeconds = forwardBufferSeconds
        self.suggestedCapBps = suggestedCapBps
    }

    public var remedy: ByteProgressRemedy {
        switch verdict {
        case .healthy: .none
        case .wedged: .reRequestOnFreshConnection
        case .overSelected: .abandonAndCap(suggestedCapBps: suggestedCapBps ?? 0)
        }
    }
}

public struct ByteProgressClassifier: Sendable, Equatable, Codable {
    // Wedge window N = clamp(wedgeRTTMultiple × RTT + wedgeSegmentShare × segment duration,
    //                        minimumWedgeWindowSeconds, maximumWedgeWindowSeconds).

    /// RTTs of silence allowed: covers TCP's retransmission backoff after a
    /// few losses (RTO ≥ RTT, doubling). Count.
    public var wedgeRTTMultiple: Double = 10
    /// Share of a segment's duration of silence allowed: a longer segment
    /// means a longer request and more room for a server-side hiccup. Fraction.
    public var wedgeSegmentShare: Double = 0.5
    /// Lower bound of N, seconds: below this a loss-recovery pause on a
    /// healthy link (RTO backoff 0.2+0.4+0.8+1.6 s) would false-fire.
    public var minimumWedgeWindowSeconds: Double = 3
    /// Upper bound of N, seconds: hls.js's first-byte ceiling; waiting longer
    /// only wastes buffer.
    public var maximumWedgeWindowSeconds: Double = 10
    /// RTT used in the formula when the connection has none yet, seconds.
    public var defaultRTTSeconds: Double = 0.1

    /// Over-selection needs rung bitrate ÷ throughput at or above this. "Far
    /// above 1": a rung twice the link rate takes two segment durations per
    /// segment. Ratio.
    public var overSelectionRatio: Double = 2
    /// Over-selection is judged only after this share of a segment duration
    /// has elapsed (hls.js's abandon rule waits half a segment), so the
    /// throughput of a young request is not over-read. Fraction.
    public var overSelectionMinimumElapsedShare: Double = 0.5
    /// The cap suggested on abandon is this × the measured throughput (the
    /// selector's up-switch factor). Fraction. It also sets when abandoning
    /// pays: the same segment at that cap takes this × segment duration, so a
    /// fetch whose rest arrives sooner than that is finished instead.
    public var downshiftSafetyFactor: Double = 0.7
    /// Over-selection is a verdict about a request whose bytes are still
    /// arriving: the last byte must have come within this long, seconds. A
    /// request that has gone quiet is on its way to a wedge, whose remedy is a
    /// new request, not a lower bitrate; it must not be downshifted meanwhile.
    public var overSelectionMaximumIdleSeconds: Double = 1

    public init() {}

    /// N for a request, seconds.
    public func wedgeWindowSeconds(rttSeconds: Double?, segmentDurationSeconds: Double) -> Double {
        let rtt = rttSeconds.flatMap { $0 > 0 && $0.isFinite ? $0 : nil } ?? defaultRTTSeconds
        let raw = wedgeRTTMultiple * rtt + wedgeSegmentShare * max(0, segmentDurationSeconds)
        return min(max(raw, minimumWedgeWindowSeconds), maximumWedgeWindowSeconds)
    }

    public func classify(_ s: InFlightSnapshot) -> ByteProgressAssessment {
        let window = wedgeWindowSeconds(rttSeconds: s.rttSeconds, segmentDurationSeconds: s.segmentDurationSeconds)
        let idle = max(0, s.secondsSinceLastByte)
        var a = ByteProgressAssessment(
            verdict: .healthy, wedgeWindowSeconds: window, idleSeconds: idle,
            forwardBufferSeconds: s.forwardBufferSeconds)
        if let expected = s.bytesExpected, expected > 0, s.bytesReceived >= expected {
            a.healthyReason = .complete
            return a
        }
        if idle >= window {
            a.verdict = .wedged
            return a
        }
        guard let throughput = s.measuredThroughputBps, throughput > 0, throughput.isFinite else {
            a.healthyReason = .noThroughputMeasure
            return a
        }
        let ratio = s.rungBitrateBps / throughput
        let expected = s.bytesExpected.map(Double.init) ?? s.rungBitrateBps * s.segmentDurationSeconds / 8
        let remaining = max(0, expected - Double(s.bytesReceived))
        let projected = remaining * 8 / throughput
        a.overSelectionRatio = ratio
        a.projectedRemainingSeconds = projected
        guard idle < overSelectionMaximumIdleSeconds else {
            a.healthyReason = .goingQuiet
            return a
        }
        guard s.elapsedSeconds >= overSelectionMinimumElapsedShare * s.segmentDurationSeconds else {
            a.healthyReason = .tooEarlyToJudge
            return a
        }
        guard ratio >= overSelectionRatio else {
            a.healthyReason = .ratioBelowThreshold
            return a
        }
        guard projected >= s.forwardBufferSeconds else {
            a.healthyReason = .finishesBeforeBufferRunsOut
            return a
        }
        // Refetching the segment at the downshifted rung (downshiftSafetyFactor ×
        // throughput) takes downshiftSafetyFactor × segment duration at this throughput.
        guard projected >= downshiftSafetyFactor * s.segmentDurationSeconds else {
            a.healthyReason = .finishingBeatsRefetch
            return a
        }
        a.verdict = .overSelected
        a.suggestedCapBps = throughput * downshiftSafetyFactor
        return a
    }
}
