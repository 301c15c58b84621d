// The summary of many sessions run together (`hlsplay --sessions N`).

import Foundation

public struct AggregateSummary: Sendable, Equatable, Codable {
    public var type = "aggregate"
    public var sessions: Int
    /// Sessions per exit reason.
    public var exitReasons: [String: Int]
    /// Time to first frame over the sessions that reached one, seconds (nearest-rank percentiles).
    public var timeToFirstFrameP50Seconds: Double?
    public var timeToFirstFrameP90Seconds: Double?
    public var timeToFirstFrameP99Seconds: Double?
    public var timeToFirstFrameMaxSeconds: Double?
    /// Sessions that never showed a frame.
    public var sessionsWithoutFirstFrame: Int
    /// Time to playback start (the media clock first advancing) over the sessions that started, seconds
    /// (nearest-rank percentiles; absent in aggregates written before it existed).
    public var timeToPlaybackStartP50Seconds: Double? = nil
    public var timeToPlaybackStartP90Seconds: Double? = nil
    public var timeToPlaybackStartP99Seconds: Double? = nil
    public var timeToPlaybackStartMaxSeconds: Double? = nil
    /// Sessions whose playback never started.
    public var sessionsWithoutPlaybackStart: Int? = nil
    /// The wait for the start buffer after the first frame, over the sessions that started, seconds.
    public var startupWaitP50Seconds: Double? = nil
    public var startupWaitP90Seconds: Double? = nil
    public var startupWaitMaxSeconds: Double? = nil
    public var sessionsWithStalls: Int
    public var stallCount: Int
    public var stallSeconds: Double
    public var playedSeconds: Double
    /// Mean of the sessions' average bitrates, bits per second.
    public var meanAverageBitrateBps: Double
    /// All sessions' stall seconds ÷ (their played + stall seconds) (absent: nothing played or stalled).
    public var rebufferRatio: Double? = nil
    /// Mean of the sessions' `qoe.linearQoEPerChunk`, over the sessions that have one.
    public var meanLinearQoEPerChunk: Double? = nil
    public var requests: Int
    public var failedRequests: Int
    public var bytes: Int
    /// Wall-clock seconds from the first session's start to the last one's end.
    public var wallSeconds: Double
    public var requestsPerSecond: Double
    /// Bits per second received, all sessions together.
    public var throughputBps: Double

    /// The nearest-rank percentile `p` (0–100) of `values` (nil when empty).
    public static func percentile(_ values: [Double], _ p: Double) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }

    public static func make(from summaries: [SessionSummary], wallSeconds: Double) -> AggregateSummary {
        let ttff = summaries.compactMap(\.timeToFirstFrameSeconds)
        var reasons: [String: Int] = [:]
        for s in summaries { reasons[s.exitReason.rawValue, default: 0] += 1 }
        let requests = summaries.reduce(0) { $0 + $1.requests }
        let bytes = summaries.reduce(0) { $0 + $1.bytes }
        var aggregate = AggregateSummary(
            sessions: summaries.count, exitReasons: reasons,
            timeToFirstFrameP50Seconds: percentile(ttff, 50), timeToFirstFrameP90Seconds: percentile(ttff, 90),
            timeToFirstFrameP99Seconds: percentile(ttff, 99), timeToFirstFrameMaxSeconds: ttff.max(),
            sessionsWithoutFirstFrame: summaries.count - ttff.count,
            sessionsWithStalls: summaries.filter { $0.stallCount > 0 }.count,
            stallCount: summaries.reduce(0) { $0 + $1.stallCount },
            stallSeconds: summaries.reduce(0) { $0 + $1.stallSeconds },
            playedSeconds: summaries.reduce(0) { $0 + $1.playedSeconds },
            meanAverageBitrateBps: summaries.isEmpty ? 0 : summaries.reduce(0) { $0 + $1.averageBitrateBps } / Double(summaries.count),
            requests: requests, failedRequests: summaries.reduce(0) { $0 + $1.failedRequests }, bytes: bytes,
            wallSeconds: wallSeconds, requestsPerSecond: wallSeconds > 0 ? Double(requests) / wallSeconds : 0,
            throughputBps: wallSeconds > 0 ? Double(bytes) * 8 / wallSeconds : 0)
        let starts = summaries.compactMap(\.timeToPlaybackStartSeconds)
        let waits = summaries.compactMap(\.startupWaitSeconds)
        aggregate.timeToPlaybackStartP50Seconds = percentile(starts, 50)
        aggregate.timeToPlaybackStartP90Seconds = percentile(starts, 90)
        aggregate.timeToPlaybackStartP99Seconds = percentile(starts, 99)
        aggregate.timeToPlaybackStartMaxSeconds = starts.max()
        aggregate.sessionsWithoutPlaybackStart = summaries.count - starts.count
        aggregate.startupWaitP50Seconds = percentile(waits, 50)
        aggregate.startupWaitP90Seconds = percentile(waits, 90)
        aggregate.startupWaitMaxSeconds = waits.max()
        let watched = aggregate.playedSeconds + aggregate.stallSeconds
        aggregate.rebufferRatio = watched > 0 ? aggregate.stallSeconds / watched : nil
        let perChunk = summaries.compactMap { $0.qoe?.linearQoEPerChunk }
        aggregate.meanLinearQoEPerChunk = perChunk.isEmpty ? nil : perChunk.reduce(0, +) / Double(perChunk.count)
        return aggregate
    }
}
