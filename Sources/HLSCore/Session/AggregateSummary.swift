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
    public var sessionsWithStalls: Int
    public var stallCount: Int
    public var stallSeconds: Double
    public var playedSeconds: Double
    /// Mean of the sessions' average bitrates, bits per second.
    public var meanAverageBitrateBps: Double
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
        return AggregateSummary(
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
    }
}
