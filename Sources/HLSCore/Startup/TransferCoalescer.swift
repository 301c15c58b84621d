// Small transfers taken together. A segment under the network-limit
// classifier's `minimumBytes` is never evidence on its own, so a ladder whose
// lowest rung has small segments (145 kbit/s × 2 s is 36 KB) would keep the
// cold-start cap on that rung for the whole session. Segments fetched back
// to back on one connection keep the link busy, so their bytes and their
// first-byte and transfer times, summed, measure the link like one larger
// transfer (the gaps between them are left out, so they do not dilute the rate).

import Foundation

public struct TransferCoalescer: Sendable, Equatable {
    /// A transfer that starts within this long after the previous one ended
    /// continues a run, seconds. Between back-to-back segment requests there
    /// is only demuxing (milliseconds); a longer gap means the loader waited
    /// (buffer full), and the connection's window may have shrunk meanwhile.
    public var maximumGapSeconds: Double = 0.5
    /// Small transfers taken together so far: their summed observation, how
    /// many, when the first started and when the last ended.
    public struct Run: Sendable, Equatable {
        public var observation: TransferObservation
        public var transfers: Int
        public var startedAt: MonotonicInstant
        public var endedAt: MonotonicInstant
    }

    /// The run so far (nil: none).
    public private(set) var run: Run?

    public init() {}

    /// The observation to classify for a transfer that ran from `startedAt` to
    /// `endedAt`: itself when it is large enough (or a live-edge segment, whose
    /// pace the producer may set), else the run of small back-to-back
    /// transfers it extends, with the number of transfers in it and when the first started.
    public mutating func observation(
        for o: TransferObservation, startedAt: MonotonicInstant, endedAt: MonotonicInstant,
        minimumBytes: Int
    ) -> (observation: TransferObservation, transfers: Int, startedAt: MonotonicInstant) {
        guard o.bytes < minimumBytes, !o.isLiveEdgeSegment else {
            run = nil
            return (o, 1, startedAt)
        }
        var merged = o
        var transfers = 1
        var first = startedAt
        if let r = run, startedAt.seconds(since: r.endedAt) <= maximumGapSeconds, startedAt >= r.endedAt {
            merged.bytes += r.observation.bytes
            merged.transferSeconds += r.observation.transferSeconds
            merged.firstByteSeconds += r.observation.firstByteSeconds
            merged.readPauseSeconds += r.observation.readPauseSeconds
            merged.mediaBitrateBps = [o.mediaBitrateBps, r.observation.mediaBitrateBps].compactMap { $0 }.max()
            if r.observation.tcpAppLimited == true { merged.tcpAppLimited = true }
            transfers += r.transfers
            first = r.startedAt
        }
        // A run that reached the minimum is classified once, then starts over.
        run = merged.bytes >= minimumBytes ? nil : Run(observation: merged, transfers: transfers, startedAt: first, endedAt: endedAt)
        return (merged, transfers, first)
    }
}
