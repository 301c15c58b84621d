// The over-selection cap: how it is set when a request on too high a rung is
// abandoned, and how delivery earns the rungs above it back
// (docs/startup-cap.md §4). Pure: each rule takes the cap in force and the
// evidence, and returns the cap after it; the session keeps the value, logs
// the move and combines it with the other caps through `PeakBitrateCaps`.

public enum OverSelectionCap {
    /// Whether abandoning an over-selected request on `rungBps` pays: only when a lower rung
    /// exists to go to (without one, the trickle rule judges the request instead).
    public static func abandons(rungBps: Double, ladderBitratesBps: [Int]) -> Bool {
        ladderBitratesBps.contains { Double($0) < rungBps }
    }

    /// The cap after abandoning a request on `abandonedRungBps`: the rung at or below the
    /// classifier's suggestion, and strictly below the abandoned rung (the bottom rung when
    /// there is none), never raising a cap already in force (`current`). Bits per second.
    public static func afterAbandoning(
        _ abandonedRungBps: Double, suggestedCapBps: Double, current: Int?,
        ladderBitratesBps: [Int]
    ) -> Int {
        let rungs = ladderBitratesBps.sorted()
        let below = rungs.last { Double($0) <= suggestedCapBps } ?? rungs.first
        let capBps = min(below ?? Int(suggestedCapBps), rungs.last { Double($0) < abandonedRungBps } ?? rungs.first ?? Int(suggestedCapBps))
        return min(current ?? Int.max, capBps)
    }

    /// Fresh network-limited delivery (`evidenceBps`, the classifier's lower bound) earns back
    /// the rungs above the cap it supports — BANDWIDTH ≤ `upSwitchSafetyFactor` × evidence, the
    /// selector's own up-switch rule: the new cap, nil when the top rung is supported (released),
    /// or `current` when the evidence earns nothing.
    public static func afterEvidence(
        _ evidenceBps: Double, current: Int?, ladderBitratesBps: [Int],
        upSwitchSafetyFactor: Double
    ) -> Int? {
        guard let current else { return nil }
        let supported = ladderBitratesBps.filter { Double($0) <= upSwitchSafetyFactor * evidenceBps }.max() ?? 0
        guard supported > current else { return current }
        return supported >= (ladderBitratesBps.max() ?? 0) ? nil : supported
    }

    /// On the audio-only fallback, a cap below every video rung is lifted to the lowest video
    /// rung once the recent segment transfers (`recentBps`, the lowest of them) support it by
    /// the same rule: the audio-only rung's small segments never give network-limited evidence,
    /// so `afterEvidence` alone would keep the session on audio-only after the link recovered.
    public static func afterRecentThroughput(
        _ recentBps: Double?, current: Int?, videoLadderBitratesBps: [Int],
        upSwitchSafetyFactor: Double
    ) -> Int? {
        guard let current, let recentBps, let lowest = videoLadderBitratesBps.min(), current < lowest else { return current }
        return Double(lowest) <= upSwitchSafetyFactor * recentBps ? lowest : current
    }
}
