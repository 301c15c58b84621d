// Which throughput samples say something about the link.
//
// A sample counts as network-limited only when the network, not something
// else, set its pace: the transfer was long enough (in bytes and in round
// trips) that the first byte and slow start did not dominate it, the client
// kept reading, the server was not producing the bytes as it sent them (a
// live-edge segment), and, when the kernel says so, TCP was not app-limited.
// Only network-limited samples may earn a step up of the startup/recovery
// cap. Pure: every input is passed in. Thresholds: docs/startup-cap.md.

import Foundation

/// What the loader knows about one finished transfer.
public struct TransferObservation: Sendable, Equatable, Codable {
    /// Body bytes received.
    public var bytes: Int
    /// Seconds from the first body byte to the last.
    public var transferSeconds: Double
    /// Seconds from the request start to the first body byte.
    public var firstByteSeconds: Double
    /// Smoothed RTT of the connection, seconds (TCP_INFO), when known.
    public var rttSeconds: Double?
    /// Seconds during the transfer when the client was not reading (its
    /// buffer was full, the player paused reading). 0 when it read throughout.
    public var readPauseSeconds: Double
    /// The segment was the newest in the live playlist when requested (it may
    /// still have been being produced while it was sent).
    public var isLiveEdgeSegment: Bool
    /// The media bitrate of the segment's rung, bits per second, when known.
    public var mediaBitrateBps: Double?
    /// TCP_INFO's delivery-rate app-limited flag at the end of the transfer, when available.
    public var tcpAppLimited: Bool?

    public init(
        bytes: Int, transferSeconds: Double, firstByteSeconds: Double, rttSeconds: Double? = nil,
        readPauseSeconds: Double = 0, isLiveEdgeSegment: Bool = false, mediaBitrateBps: Double? = nil,
        tcpAppLimited: Bool? = nil
    ) {
        self.bytes = bytes
        self.transferSeconds = transferSeconds
        self.firstByteSeconds = firstByteSeconds
        self.rttSeconds = rttSeconds
        self.readPauseSeconds = readPauseSeconds
        self.isLiveEdgeSegment = isLiveEdgeSegment
        self.mediaBitrateBps = mediaBitrateBps
        self.tcpAppLimited = tcpAppLimited
    }

    /// Bits per second over the transfer time (nil when it cannot be computed).
    public var throughputBps: Double? {
        guard bytes > 0, transferSeconds > 0, transferSeconds.isFinite else { return nil }
        return Double(bytes) * 8 / transferSeconds
    }

    /// Over-selection ratio of the fetch: the rung's bitrate ÷ the measured
    /// throughput (≈ 1 or below: sustainable; ≫ 1: over-selected). Nil
    /// without both numbers.
    public var overSelectionRatio: Double? {
        guard let media = mediaBitrateBps, media > 0, let bps = throughputBps else { return nil }
        return media / bps
    }
}

/// Why a sample is not network-limited.
public enum NotNetworkLimitedReason: String, Sendable, Equatable, Codable, CaseIterable {
    /// No bytes or a non-positive / non-finite duration.
    case invalid
    /// Fewer bytes than `minimumBytes`.
    case tooFewBytes = "too-few-bytes"
    /// The transfer lasted fewer than `minimumTransferRTTs` round trips: slow start dominates.
    case tooFewRoundTrips = "too-few-round-trips"
    /// The wait for the first byte was at least `maximumFirstByteShare` of the request.
    case firstByteDominated = "first-byte-dominated"
    /// The client paused reading for at least `maximumReadPauseShare` of the transfer.
    case readingPaused = "reading-paused"
    /// A live-edge segment delivered at about the media rate: the producer set the pace.
    case liveEdgeProducerPaced = "live-edge-producer-paced"
    /// The kernel flagged the delivery rate app-limited.
    case tcpAppLimited = "tcp-app-limited"
}

public struct NetworkLimitVerdict: Sendable, Equatable, Codable {
    /// Every reason that disqualified it (empty when it counts).
    public var reasons: [NotNetworkLimitedReason]
    /// Bits per second over the transfer, when computable.
    public var throughputBps: Double?
    /// For a transfer of at least `minimumBytes` that is not network-limited:
    /// bits per second over the whole request, first-byte wait included. The
    /// link carried those bytes in that time, so this can only under-state
    /// it — slow start, a slow server, a paced producer all make it lower,
    /// never higher. A ramp may rely on it (it cannot over-select); nothing
    /// may conclude from it that the link is slow.
    public var lowerBoundBps: Double?
    public var isNetworkLimited: Bool { reasons.isEmpty }
    /// What a ramp-up may rely on: the throughput of a network-limited
    /// transfer, else the whole-request lower bound of a large enough one, else nothing.
    public var evidenceBps: Double? { isNetworkLimited ? throughputBps : lowerBoundBps }
    public init(reasons: [NotNetworkLimitedReason], throughputBps: Double?, lowerBoundBps: Double? = nil) {
        self.reasons = reasons
        self.throughputBps = throughputBps
        self.lowerBoundBps = lowerBoundBps
    }
}

public struct NetworkLimitClassifier: Sendable, Equatable, Codable {
    /// A transfer of fewer body bytes than this is not network-limited, bytes.
    /// 64 KiB is ~45 full-size TCP segments: past the initial window and the
    /// first few slow-start rounds (the estimator's floor is 16 KiB; earning a
    /// higher cap asks for more).
    public var minimumBytes: Int = 64 * 1024
    /// The transfer must last at least this many RTTs (when the RTT is
    /// known). Under ~4 RTTs slow start, not the bottleneck, sets the rate. Count.
    public var minimumTransferRTTs: Double = 4
    /// The first-byte wait must be under this share of the whole request
    /// (first byte + transfer); at it the request measured latency, not the link. Fraction.
    public var maximumFirstByteShare: Double = 0.5
    /// Reading pauses must be under this share of the transfer time; at it
    /// the client, not the network, set the pace. Fraction.
    public var maximumReadPauseShare: Double = 0.1
    /// A live-edge segment whose throughput is under this multiple of its
    /// media bitrate was probably paced by the producer (it arrived about as
    /// fast as it was encoded). Ratio.
    public var liveEdgeRateRatio: Double = 1.5

    public init() {}

    public func classify(_ o: TransferObservation) -> NetworkLimitVerdict {
        let bps = o.throughputBps
        guard o.bytes > 0, o.transferSeconds > 0, o.transferSeconds.isFinite, let bps else {
            return NetworkLimitVerdict(reasons: [.invalid], throughputBps: nil)
        }
        var reasons: [NotNetworkLimitedReason] = []
        if o.bytes < minimumBytes { reasons.append(.tooFewBytes) }
        if let rtt = o.rttSeconds, rtt > 0, o.transferSeconds < minimumTransferRTTs * rtt { reasons.append(.tooFewRoundTrips) }
        let total = o.firstByteSeconds + o.transferSeconds
        if total > 0, o.firstByteSeconds / total >= maximumFirstByteShare { reasons.append(.firstByteDominated) }
        if o.readPauseSeconds >= maximumReadPauseShare * o.transferSeconds, o.readPauseSeconds > 0 { reasons.append(.readingPaused) }
        if o.isLiveEdgeSegment, let media = o.mediaBitrateBps, media > 0, bps < liveEdgeRateRatio * media {
            reasons.append(.liveEdgeProducerPaced)
        }
        if o.tcpAppLimited == true { reasons.append(.tcpAppLimited) }
        let lowerBound = !reasons.isEmpty && !reasons.contains(.tooFewBytes) && total > 0 ? Double(o.bytes) * 8 / total : nil
        return NetworkLimitVerdict(reasons: reasons, throughputBps: bps, lowerBoundBps: lowerBound)
    }
}
