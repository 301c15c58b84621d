// Bandwidth estimation that never reads a clock.
//
// Each sample carries its own byte count and transfer duration. Two
// exponentially weighted moving averages, weighted by transfer time with a
// half-life in seconds (a fast one that reacts and a slow one that remembers),
// and the estimate is the lower of the two: quick to fall, slow to rise.
// Until enough transfer time has been seen, a documented default is used.
// Samples that say nothing about the network (tiny transfers dominated by the
// first byte) are rejected, and the verdict is returned so it can be logged.

import Foundation

/// One completed transfer, as measured by the loader.
public struct ThroughputSample: Sendable, Equatable, Codable {
    /// Body bytes received.
    public var bytes: Int
    /// Seconds from the first body byte to the last (transfer time, excluding
    /// the wait for the first byte), or the whole request time when the loader
    /// could not separate them.
    public var transferSeconds: Double
    /// Seconds from request start to first byte.
    public var firstByteSeconds: Double

    public init(bytes: Int, transferSeconds: Double, firstByteSeconds: Double) {
        self.bytes = bytes
        self.transferSeconds = transferSeconds
        self.firstByteSeconds = firstByteSeconds
    }

    /// bits per second over the transfer time (clamped below, see BandwidthEstimator.Configuration).
    public func throughputBps(minimumSeconds: Double) -> Double {
        Double(bytes) * 8 / max(transferSeconds, minimumSeconds)
    }
}

/// Why a sample did or did not count.
public enum SampleVerdict: String, Sendable, Equatable, Codable {
    /// Counted in the estimate.
    case accepted
    /// Fewer bytes than `minimumSampleBytes`: a small transfer measures the round trip, not the link.
    case rejectedTooSmall
    /// No bytes or a non-positive duration.
    case rejectedInvalid
}

public struct BandwidthEstimator: Sendable, Equatable {
    public struct Configuration: Sendable, Equatable, Codable {
        /// Half-life of the fast average, seconds of transfer time.
        public var fastHalfLifeSeconds: Double = 3
        /// Half-life of the slow average, seconds of transfer time.
        public var slowHalfLifeSeconds: Double = 9
        /// Estimate used before enough transfer time has been seen, bits per second.
        public var defaultEstimateBps: Double = 1_000_000
        /// Samples with fewer body bytes than this are rejected (bytes).
        public var minimumSampleBytes: Int = 16 * 1024
        /// A transfer shorter than this is counted as this long, seconds; bounds
        /// the estimate from a single very fast (loopback) transfer.
        public var minimumTransferSeconds: Double = 0.02
        /// Transfer time, seconds, that must have been accepted before the
        /// averages replace the default.
        public var minimumTotalWeightSeconds: Double = 0.01

        public init() {}
    }

    public let configuration: Configuration
    private var fast: WeightedAverage
    private var slow: WeightedAverage
    /// Accepted samples so far.
    public private(set) var acceptedSampleCount = 0

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration
        fast = WeightedAverage(halfLife: configuration.fastHalfLifeSeconds)
        slow = WeightedAverage(halfLife: configuration.slowHalfLifeSeconds)
    }

    /// Forgets every sample (a recovery: the old estimate is suspect).
    public mutating func reset() {
        fast = WeightedAverage(halfLife: configuration.fastHalfLifeSeconds)
        slow = WeightedAverage(halfLife: configuration.slowHalfLifeSeconds)
        acceptedSampleCount = 0
    }

    /// Seeds both averages from an earlier estimate (a warm start), counted as
    /// `weightSeconds` of transfer time.
    public mutating func seed(estimateBps: Double, weightSeconds: Double) {
        guard estimateBps > 0, weightSeconds > 0 else { return }
        fast.add(value: estimateBps, weight: weightSeconds)
        slow.add(value: estimateBps, weight: weightSeconds)
    }

    /// Adds a sample; returns whether it counted.
    @discardableResult
    public mutating func add(_ sample: ThroughputSample) -> SampleVerdict {
        guard sample.bytes > 0, sample.transferSeconds >= 0 else { return .rejectedInvalid }
        guard sample.bytes >= configuration.minimumSampleBytes else { return .rejectedTooSmall }
        let weight = max(sample.transferSeconds, configuration.minimumTransferSeconds)
        let bps = Double(sample.bytes) * 8 / weight
        fast.add(value: bps, weight: weight)
        slow.add(value: bps, weight: weight)
        acceptedSampleCount += 1
        return .accepted
    }

    /// True once enough transfer time has been accepted.
    public var hasEstimate: Bool { fast.totalWeight >= configuration.minimumTotalWeightSeconds }

    /// The fast average, bits per second (nil before any estimate).
    public var fastBps: Double? { hasEstimate ? fast.value : nil }
    /// The slow average, bits per second (nil before any estimate).
    public var slowBps: Double? { hasEstimate ? slow.value : nil }

    /// The estimate: min(fast, slow), or the default before enough samples.
    public var estimateBps: Double {
        guard hasEstimate else { return configuration.defaultEstimateBps }
        return min(fast.value, slow.value)
    }
}

/// An EWMA whose weight is transfer time, with bias correction for the zero start.
struct WeightedAverage: Sendable, Equatable {
    let alpha: Double
    private(set) var estimate = 0.0
    private(set) var totalWeight = 0.0

    init(halfLife: Double) { alpha = halfLife > 0 ? exp(log(0.5) / halfLife) : 0 }

    mutating func add(value: Double, weight: Double) {
        let adjusted = pow(alpha, weight)
        estimate = value * (1 - adjusted) + adjusted * estimate
        totalWeight += weight
    }

    var value: Double {
        let zeroFactor = 1 - pow(alpha, totalWeight)
        return zeroFactor > 0 ? estimate / zeroFactor : estimate
    }
}
