// The audio-only fallback's inputs, shared by the real and the virtual
// session: which rungs of a ladder are audio-only fallbacks, which rungs the
// startup cap and the policy step through, and the recent segment throughput
// the selector and `OverSelectionCap.afterRecentThroughput` take as evidence.
// Pure value types; the sessions hold them and log what they decide.

public enum AudioOnlyRungs {
    /// Whether a variant stream carries audio only: it declares CODECS, every one of them an
    /// audio codec, and no RESOLUTION.
    public static func isAudioOnly(_ variant: VariantStream) -> Bool {
        let audioCodecPrefixes = ["mp4a", "ac-3", "ec-3", "opus", "fLaC"]
        return !variant.codecs.isEmpty && variant.resolution == nil
            && variant.codecs.allSatisfy { codec in audioCodecPrefixes.contains { codec.hasPrefix($0) } }
    }

    /// For each variant stream, in order, whether it is an audio-only fallback rung: audio-only
    /// in a ladder that also has video rungs. A ladder of one kind (all video, or an audio-only
    /// stream) has none: its rungs follow the usual rules (VariantSelector).
    public static func fallbackFlags(_ variants: [VariantStream]) -> [Bool] {
        let audioOnly = variants.map(isAudioOnly)
        let mixed = audioOnly.contains(true) && audioOnly.contains(false)
        return audioOnly.map { mixed && $0 }
    }

    /// The rungs the startup cap ramps through and the policy controller steps between: the
    /// video rungs (every rung when none is video). The audio-only fallback is the selector's call.
    public static func videoRungs(_ ladder: [LadderRung]) -> [LadderRung] {
        let video = ladder.filter { !$0.isAudioOnly }
        return video.isEmpty ? ladder : video
    }
}

/// The throughput of the newest segment transfers, whatever their size: the audio-only
/// fallback's evidence. The audio-only rung's small segments never give network-limited
/// samples, so the estimator alone would keep a session on audio-only after the link
/// recovered; the lowest of these transfers (a cautious reading) tells the selector
/// (`SelectionSnapshot.recentSegmentThroughputBps`) and the over-selection cap
/// (`OverSelectionCap.afterRecentThroughput`) what the link delivers now.
public struct RecentSegmentThroughput: Sendable, Equatable {
    /// How many of the newest segment transfers are kept. Count (≥ 1).
    public let count: Int
    /// The kept transfers' throughputs, oldest first, bits per second.
    public private(set) var throughputsBps: [Double] = []

    public init(count: Int) {
        self.count = max(1, count)
    }

    /// Adds a segment transfer of `bytes` body bytes over `transferSeconds` (first byte to last);
    /// a transfer of no measurable duration is left out. Returns whether it was added.
    @discardableResult
    public mutating func add(bytes: Int, transferSeconds: Double) -> Bool {
        guard transferSeconds > 0 else { return false }
        throughputsBps.append(Double(bytes) * 8 / transferSeconds)
        if throughputsBps.count > count { throughputsBps.removeFirst(throughputsBps.count - count) }
        return true
    }

    /// The lowest of the kept throughputs, bits per second; nil before the first transfer.
    public var lowestBps: Double? { throughputsBps.min() }
}
