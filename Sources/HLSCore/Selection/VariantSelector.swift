// Variant selection (ABR) as a pure function of a snapshot.
//
// The selector never does I/O and never reads a clock: it gets the ladder,
// the estimate, the buffer level, the current rung and the caps, and returns
// the rung with the reason. Hysteresis comes from two factors: a rung is
// chosen going up only if it fits in `upSwitchSafetyFactor` of the estimate
// (and the buffer is deep enough), but the current rung is kept as long as it
// fits in `keepSafetyFactor` of the estimate.

/// One rung of the ladder, as the selector sees it.
public struct LadderRung: Sendable, Equatable, Codable {
    /// Index into the multivariant playlist's variants.
    public var variantIndex: Int
    /// BANDWIDTH, bits per second.
    public var bandwidthBps: Int
    public var width: Int?
    public var height: Int?

    public init(variantIndex: Int, bandwidthBps: Int, width: Int? = nil, height: Int? = nil) {
        self.variantIndex = variantIndex
        self.bandwidthBps = bandwidthBps
        self.width = width
        self.height = height
    }
}

/// Everything the selector decides from.
public struct SelectionSnapshot: Sendable, Equatable, Codable {
    /// The ladder, in any order (the selector sorts by bandwidth).
    public var ladder: [LadderRung]
    /// Bandwidth estimate, bits per second.
    public var estimateBps: Double
    /// False while the estimate is the estimator's default.
    public var estimateIsMeasured: Bool
    /// Forward buffer, seconds.
    public var bufferSeconds: Double
    /// The variant being fetched now, if any.
    public var currentVariantIndex: Int?
    /// preferredPeakBitRate: rungs above this are not eligible (bits per second; nil = no cap).
    public var peakBitrateCapBps: Int?
    /// A variant the user pinned (`--variant`), chosen regardless of the estimate.
    public var pinnedVariantIndex: Int?

    public init(ladder: [LadderRung], estimateBps: Double, estimateIsMeasured: Bool, bufferSeconds: Double,
                currentVariantIndex: Int?, peakBitrateCapBps: Int? = nil, pinnedVariantIndex: Int? = nil) {
        self.ladder = ladder
        self.estimateBps = estimateBps
        self.estimateIsMeasured = estimateIsMeasured
        self.bufferSeconds = bufferSeconds
        self.currentVariantIndex = currentVariantIndex
        self.peakBitrateCapBps = peakBitrateCapBps
        self.pinnedVariantIndex = pinnedVariantIndex
    }
}

public enum SelectionReason: String, Sendable, Equatable, Codable {
    /// First choice of the session: the highest rung that fits the estimate.
    case initial
    /// The user pinned this variant.
    case pinned
    /// The estimate supports a higher rung and the buffer is deep enough.
    case upSwitch
    /// The estimate supports a higher rung but the buffer is too shallow to risk it.
    case holdLowBuffer
    /// The current rung no longer fits the estimate.
    case downSwitch
    /// The current rung is above the peak-bitrate cap.
    case capped
    /// No rung is under the cap; the lowest is used.
    case capBelowLadder
    /// Nothing changed.
    case hold
}

public struct SelectionDecision: Sendable, Equatable, Codable {
    public var variantIndex: Int
    public var reason: SelectionReason
    /// The highest eligible rung that fits `upSwitchSafetyFactor` × estimate, for the log.
    public var sustainableVariantIndex: Int
    public init(variantIndex: Int, reason: SelectionReason, sustainableVariantIndex: Int) {
        self.variantIndex = variantIndex
        self.reason = reason
        self.sustainableVariantIndex = sustainableVariantIndex
    }
}

public struct VariantSelector: Sendable, Equatable, Codable {
    /// A higher rung is chosen only if its BANDWIDTH ≤ this × estimate.
    public var upSwitchSafetyFactor: Double = 0.7
    /// The current rung is kept while its BANDWIDTH ≤ this × estimate (> up factor: hysteresis).
    public var keepSafetyFactor: Double = 0.9
    /// Switching up needs at least this much forward buffer, seconds.
    public var minimumBufferForUpSwitchSeconds: Double = 4

    public init() {}

    public func select(_ s: SelectionSnapshot) -> SelectionDecision {
        precondition(!s.ladder.isEmpty, "select needs a ladder")
        let ladder = s.ladder.sorted { ($0.bandwidthBps, $0.variantIndex) < ($1.bandwidthBps, $1.variantIndex) }
        let eligible = s.peakBitrateCapBps.map { cap in ladder.filter { $0.bandwidthBps <= cap } } ?? ladder
        let lowest = eligible.first ?? ladder[0]
        let sustainable = eligible.last { Double($0.bandwidthBps) <= upSwitchSafetyFactor * s.estimateBps } ?? lowest

        if let pinned = s.pinnedVariantIndex, ladder.contains(where: { $0.variantIndex == pinned }) {
            return SelectionDecision(variantIndex: pinned, reason: .pinned, sustainableVariantIndex: sustainable.variantIndex)
        }
        if eligible.isEmpty {
            return SelectionDecision(variantIndex: lowest.variantIndex, reason: .capBelowLadder, sustainableVariantIndex: lowest.variantIndex)
        }
        guard let currentIndex = s.currentVariantIndex,
              let current = ladder.first(where: { $0.variantIndex == currentIndex }) else {
            return SelectionDecision(variantIndex: sustainable.variantIndex, reason: .initial, sustainableVariantIndex: sustainable.variantIndex)
        }
        if let cap = s.peakBitrateCapBps, current.bandwidthBps > cap {
            let target = min(sustainable.bandwidthBps, eligible.last!.bandwidthBps)
            let choice = eligible.last { $0.bandwidthBps <= target } ?? lowest
            return SelectionDecision(variantIndex: choice.variantIndex, reason: .capped, sustainableVariantIndex: sustainable.variantIndex)
        }
        if sustainable.bandwidthBps > current.bandwidthBps {
            if s.bufferSeconds >= minimumBufferForUpSwitchSeconds {
                return SelectionDecision(variantIndex: sustainable.variantIndex, reason: .upSwitch, sustainableVariantIndex: sustainable.variantIndex)
            }
            return SelectionDecision(variantIndex: current.variantIndex, reason: .holdLowBuffer, sustainableVariantIndex: sustainable.variantIndex)
        }
        if Double(current.bandwidthBps) > keepSafetyFactor * s.estimateBps {
            return SelectionDecision(variantIndex: sustainable.variantIndex, reason: .downSwitch, sustainableVariantIndex: sustainable.variantIndex)
        }
        return SelectionDecision(variantIndex: current.variantIndex, reason: .hold, sustainableVariantIndex: sustainable.variantIndex)
    }
}
