// Variant selection (ABR) as a pure function of a snapshot.
//
// The selector never does I/O and never reads a clock: it gets the ladder,
// the estimate, the buffer level, the current rung and the caps, and returns
// the rung with the reason. Hysteresis comes from two factors: a rung is
// chosen going up only if it fits in `upSwitchSafetyFactor` of the estimate
// (and the buffer is deep enough), but the current rung is kept as long as it
// fits in `keepSafetyFactor` of the estimate.
//
// An audio-only rung in a ladder with video (CODECS audio only, no RESOLUTION:
// the cellular fallback real multivariant playlists carry) is chosen only as a
// fallback: when the peak-bitrate cap is below every video rung, or when the
// link cannot keep even the lowest video rung (`keepSafetyFactor` of the better
// of the measured estimate and the recent segment throughput). Back to video is
// an up-switch: the lowest video rung must fit `upSwitchSafetyFactor` of that
// evidence, with the buffer deep enough.

/// One rung of the ladder, as the selector sees it.
public struct LadderRung: Sendable, Equatable, Codable {
    /// Index into the multivariant playlist's variants.
    public var variantIndex: Int
    /// BANDWIDTH, bits per second.
    public var bandwidthBps: Int
    public var width: Int?
    public var height: Int?
    /// The variant carries audio only (true); absent for a rung with video.
    public var audioOnly: Bool?

    public init(variantIndex: Int, bandwidthBps: Int, width: Int? = nil, height: Int? = nil, audioOnly: Bool = false) {
        self.variantIndex = variantIndex
        self.bandwidthBps = bandwidthBps
        self.width = width
        self.height = height
        self.audioOnly = audioOnly ? true : nil
    }

    var isAudioOnly: Bool { audioOnly == true }
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
    /// The lowest throughput of the last few segment transfers, whatever their size (bits per
    /// second; nil: none yet). Small audio-only segments weigh next to nothing in the
    /// transfer-time-weighted estimate, so on the audio-only fallback the estimate alone would
    /// never see the link recover; with a video rung, the fallback is judged on the better of the two.
    public var recentSegmentThroughputBps: Double?

    public init(
        ladder: [LadderRung], estimateBps: Double, estimateIsMeasured: Bool, bufferSeconds: Double,
        currentVariantIndex: Int?, peakBitrateCapBps: Int? = nil, pinnedVariantIndex: Int? = nil,
        recentSegmentThroughputBps: Double? = nil
    ) {
        self.ladder = ladder
        self.estimateBps = estimateBps
        self.estimateIsMeasured = estimateIsMeasured
        self.bufferSeconds = bufferSeconds
        self.currentVariantIndex = currentVariantIndex
        self.peakBitrateCapBps = peakBitrateCapBps
        self.pinnedVariantIndex = pinnedVariantIndex
        self.recentSegmentThroughputBps = recentSegmentThroughputBps
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
    /// The peak-bitrate cap is below every video rung: the audio-only rung under it.
    case audioOnlyUnderCap
    /// The measured estimate cannot keep even the lowest video rung: the audio-only rung.
    case audioOnlyFallback
    /// A reference rule (`--abr`, not hlsplay's) chose, under the caps; `abr` on the record says how.
    case abrRule
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
        let video = s.ladder.filter { !$0.isAudioOnly }, audio = s.ladder.filter(\.isAudioOnly)
        // A ladder of one kind (all video, or an audio-only stream): the usual rules.
        guard !video.isEmpty, !audio.isEmpty else { return selectAmong(s) }
        if let pinned = s.pinnedVariantIndex, s.ladder.contains(where: { $0.variantIndex == pinned }) {
            return selectAmong(s)
        }
        var onVideo = s, onAudio = s
        onVideo.ladder = video
        onAudio.ladder = audio
        let lowestVideo = video.map(\.bandwidthBps).min()!
        let evidenceBps = max(s.estimateBps, s.recentSegmentThroughputBps ?? 0)
        let current = s.currentVariantIndex.flatMap { i in s.ladder.first { $0.variantIndex == i } }
        let videoUnderCap = s.peakBitrateCapBps.map { lowestVideo <= $0 } ?? true

        if let current, current.isAudioOnly {
            // Back to video: an up-switch to the lowest video rung at least, when the cap allows one.
            onVideo.currentVariantIndex = nil
            if videoUnderCap, Double(lowestVideo) <= upSwitchSafetyFactor * evidenceBps,
                s.bufferSeconds >= minimumBufferForUpSwitchSeconds
            {
                let up = selectAmong(onVideo)
                return SelectionDecision(variantIndex: up.variantIndex, reason: .upSwitch, sustainableVariantIndex: up.sustainableVariantIndex)
            }
            let stay = selectAmong(onAudio)
            return audioOnlyDecision(stay, videoUnderCap: videoUnderCap)
        }
        let decision = selectAmong(onVideo)
        if !videoUnderCap {
            onAudio.currentVariantIndex = nil
            let fallback = selectAmong(onAudio)
            // No audio-only rung under the cap either: the lowest video rung, as without one.
            if fallback.reason == .capBelowLadder { return decision }
            return SelectionDecision(
                variantIndex: fallback.variantIndex, reason: .audioOnlyUnderCap, sustainableVariantIndex: fallback.sustainableVariantIndex)
        }
        if s.estimateIsMeasured, Double(lowestVideo) > keepSafetyFactor * evidenceBps {
            onAudio.currentVariantIndex = nil
            let fallback = selectAmong(onAudio)
            return SelectionDecision(
                variantIndex: fallback.variantIndex, reason: .audioOnlyFallback, sustainableVariantIndex: fallback.sustainableVariantIndex)
        }
        return decision
    }

    /// Staying on the audio-only rungs: their own rules, with why audio-only still.
    private func audioOnlyDecision(_ d: SelectionDecision, videoUnderCap: Bool) -> SelectionDecision {
        switch d.reason {
        case .hold, .holdLowBuffer, .initial:
            return SelectionDecision(
                variantIndex: d.variantIndex, reason: videoUnderCap ? .audioOnlyFallback : .audioOnlyUnderCap,
                sustainableVariantIndex: d.sustainableVariantIndex)
        default:
            return d
        }
    }

    /// The rules on one kind of rung.
    private func selectAmong(_ s: SelectionSnapshot) -> SelectionDecision {
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
            let current = ladder.first(where: { $0.variantIndex == currentIndex })
        else {
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
