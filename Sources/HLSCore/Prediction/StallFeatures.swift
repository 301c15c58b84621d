// The inputs of a stall-risk prediction, sampled by the runtime's wall-clock
// monitor (issue 5 §1).
//
// Every source that can be absent is `Double?`: nil means "not measured"
// (no estimate yet, no request in flight, no /proc/pressure/cpu on this
// kernel, no thermal zone), never a made-up value. Each predictor says how it
// treats a missing input; the learned model does it explicitly with a missing
// indicator and a documented imputation value per feature (see
// LogisticStallModel).
//
// Derived features (trend, over-selection, projected completion) are computed
// here, once, so every predictor and the training tool read the same numbers.

import Foundation

public struct StallFeatures: Sendable, Equatable, Codable {
    /// Forward buffer ahead of the playhead, seconds.
    public var bufferSeconds: Double
    /// Fast-EWMA bandwidth estimate, bits per second (nil until measured).
    public var bandwidthFastBps: Double?
    /// Slow-EWMA bandwidth estimate, bits per second (nil until measured).
    public var bandwidthSlowBps: Double?
    /// BANDWIDTH of the rung being fetched, bits per second.
    public var currentRungBitrateBps: Double
    /// BANDWIDTH of the next rung up, bits per second (nil at the top of the ladder).
    public var nextHigherRungBitrateBps: Double?

    /// In-flight media request: body bytes received so far (nil when idle).
    public var inFlightBytesReceived: Double?
    /// In-flight media request: bytes expected (Content-Length or byte range;
    /// nil when idle or unknown).
    public var inFlightBytesExpected: Double?
    /// In-flight media request: seconds since the request started (nil when idle).
    public var inFlightElapsedSeconds: Double?
    /// In-flight media request: seconds since the last body byte, or since the
    /// request started if none has arrived (nil when idle).
    public var inFlightSecondsSinceLastByte: Double?

    /// First-byte time of the last completed media request, seconds.
    public var firstByteSeconds: Double?
    /// Smoothed TCP round-trip time (TCP_INFO), seconds.
    public var rttSeconds: Double?

    /// CPU pressure: PSI `some avg10` from /proc/pressure/cpu, percent (0–100).
    public var cpuPressureAvg10Percent: Double?
    /// Decode lag: wall-clock decode time ÷ media time decoded, over the last
    /// window (≥ 1 means decode cannot keep up).
    public var decodeLagRatio: Double?
    /// Highest thermal-zone temperature, degrees Celsius.
    public var thermalMaxCelsius: Double?

    public init(
        bufferSeconds: Double,
        bandwidthFastBps: Double? = nil, bandwidthSlowBps: Double? = nil,
        currentRungBitrateBps: Double, nextHigherRungBitrateBps: Double? = nil,
        inFlightBytesReceived: Double? = nil, inFlightBytesExpected: Double? = nil,
        inFlightElapsedSeconds: Double? = nil, inFlightSecondsSinceLastByte: Double? = nil,
        firstByteSeconds: Double? = nil, rttSeconds: Double? = nil,
        cpuPressureAvg10Percent: Double? = nil, decodeLagRatio: Double? = nil,
        thermalMaxCelsius: Double? = nil
    ) {
        self.bufferSeconds = bufferSeconds
        self.bandwidthFastBps = bandwidthFastBps
        self.bandwidthSlowBps = bandwidthSlowBps
        self.currentRungBitrateBps = currentRungBitrateBps
        self.nextHigherRungBitrateBps = nextHigherRungBitrateBps
        self.inFlightBytesReceived = inFlightBytesReceived
        self.inFlightBytesExpected = inFlightBytesExpected
        self.inFlightElapsedSeconds = inFlightElapsedSeconds
        self.inFlightSecondsSinceLastByte = inFlightSecondsSinceLastByte
        self.firstByteSeconds = firstByteSeconds
        self.rttSeconds = rttSeconds
        self.cpuPressureAvg10Percent = cpuPressureAvg10Percent
        self.decodeLagRatio = decodeLagRatio
        self.thermalMaxCelsius = thermalMaxCelsius
    }

    /// The features from a session's state at one monitor tick: the estimator's two EWMAs,
    /// the rung being fetched (0 before the first decision) and the next one up the ladder,
    /// the in-flight segment request (nil: idle), and the last request's and device's readings.
    public static func atTick(
        bufferSeconds: Double, estimator: BandwidthEstimator, ladderBitratesBps: [Int], currentRungBps: Int?,
        inFlight: InFlightSnapshot?, firstByteSeconds: Double?, rttSeconds: Double?,
        cpuPressureAvg10Percent: Double?, decodeLagRatio: Double?, thermalMaxCelsius: Double?
    ) -> StallFeatures {
        let rungBps = Double(currentRungBps ?? 0)
        return StallFeatures(
            bufferSeconds: bufferSeconds,
            bandwidthFastBps: estimator.fastBps, bandwidthSlowBps: estimator.slowBps,
            currentRungBitrateBps: rungBps,
            nextHigherRungBitrateBps: ladderBitratesBps.map(Double.init).filter { $0 > rungBps }.min(),
            inFlightBytesReceived: inFlight.map { Double($0.bytesReceived) },
            inFlightBytesExpected: inFlight?.bytesExpected.map(Double.init),
            inFlightElapsedSeconds: inFlight?.elapsedSeconds,
            inFlightSecondsSinceLastByte: inFlight?.secondsSinceLastByte,
            firstByteSeconds: firstByteSeconds, rttSeconds: rttSeconds,
            cpuPressureAvg10Percent: cpuPressureAvg10Percent,
            decodeLagRatio: decodeLagRatio,
            thermalMaxCelsius: thermalMaxCelsius)
    }

    // MARK: Derived features

    /// The estimate the selector uses: the lower of fast and slow (nil if either is missing).
    public var bandwidthEstimateBps: Double? {
        guard let f = bandwidthFastBps, let s = bandwidthSlowBps else { return nil }
        return min(f, s)
    }

    /// Bandwidth trend: fast ÷ slow (< 1 falling, > 1 rising; nil if either is missing or slow is 0).
    public var bandwidthTrendRatio: Double? {
        guard let f = bandwidthFastBps, let s = bandwidthSlowBps, s > 0 else { return nil }
        return f / s
    }

    /// Over-selection ratio: current rung bitrate ÷ estimate (> 1: the rung does not fit).
    /// nil without an estimate; an estimate of 0 counts as `StallFeatures.minimumEstimateBps`.
    public var overSelectionRatio: Double? {
        guard let e = bandwidthEstimateBps else { return nil }
        return currentRungBitrateBps / max(e, Self.minimumEstimateBps)
    }

    /// Floor for divisions by a throughput, bits per second (1 kbit/s).
    public static let minimumEstimateBps: Double = 1_000

    /// Seconds until the in-flight request completes at its own delivery rate so
    /// far (bytes received ÷ elapsed), or at the estimate when it has no rate yet.
    /// nil when idle or the expected size is unknown; +∞ is never returned: with
    /// neither a rate nor an estimate the projection is nil.
    public var projectedCompletionSeconds: Double? {
        guard let expected = inFlightBytesExpected, let received = inFlightBytesReceived else { return nil }
        let remainingBits = max(0, expected - received) * 8
        if remainingBits == 0 { return 0 }
        if let elapsed = inFlightElapsedSeconds, elapsed > 0, received > 0 {
            return remainingBits / max(received * 8 / elapsed, Self.minimumEstimateBps)
        }
        guard let e = bandwidthEstimateBps else { return nil }
        return remainingBits / max(e, Self.minimumEstimateBps)
    }

    /// Projected completion minus forward buffer, seconds: > 0 means the buffer
    /// runs dry before the in-flight segment arrives (hls.js's abandon-rule test).
    public var projectedShortfallSeconds: Double? {
        projectedCompletionSeconds.map { $0 - bufferSeconds }
    }

    /// Fraction of the in-flight request received (0–1; nil when idle or size unknown).
    public var inFlightProgressFraction: Double? {
        guard let expected = inFlightBytesExpected, let received = inFlightBytesReceived, expected > 0 else { return nil }
        return min(1, max(0, received / expected))
    }

    /// A feature by its stable name (the names in model files and training data).
    public func value(of name: StallFeatureName) -> Double? {
        switch name {
        case .bufferSeconds: bufferSeconds
        case .bandwidthFastBps: bandwidthFastBps
        case .bandwidthSlowBps: bandwidthSlowBps
        case .bandwidthEstimateBps: bandwidthEstimateBps
        case .bandwidthTrendRatio: bandwidthTrendRatio
        case .currentRungBitrateBps: currentRungBitrateBps
        case .nextHigherRungBitrateBps: nextHigherRungBitrateBps
        case .overSelectionRatio: overSelectionRatio
        case .inFlightBytesReceived: inFlightBytesReceived
        case .inFlightBytesExpected: inFlightBytesExpected
        case .inFlightElapsedSeconds: inFlightElapsedSeconds
        case .inFlightSecondsSinceLastByte: inFlightSecondsSinceLastByte
        case .inFlightProgressFraction: inFlightProgressFraction
        case .projectedCompletionSeconds: projectedCompletionSeconds
        case .projectedShortfallSeconds: projectedShortfallSeconds
        case .firstByteSeconds: firstByteSeconds
        case .rttSeconds: rttSeconds
        case .cpuPressureAvg10Percent: cpuPressureAvg10Percent
        case .decodeLagRatio: decodeLagRatio
        case .thermalMaxCelsius: thermalMaxCelsius
        }
    }
}

/// Stable feature names, shared by model files, the training tool and session logs.
public enum StallFeatureName: String, Sendable, Equatable, Codable, CaseIterable {
    case bufferSeconds
    case bandwidthFastBps
    case bandwidthSlowBps
    case bandwidthEstimateBps
    case bandwidthTrendRatio
    case currentRungBitrateBps
    case nextHigherRungBitrateBps
    case overSelectionRatio
    case inFlightBytesReceived
    case inFlightBytesExpected
    case inFlightElapsedSeconds
    case inFlightSecondsSinceLastByte
    case inFlightProgressFraction
    case projectedCompletionSeconds
    case projectedShortfallSeconds
    case firstByteSeconds
    case rttSeconds
    case cpuPressureAvg10Percent
    case decodeLagRatio
    case thermalMaxCelsius
}
