// Per-session quality-of-experience figures, computed from what the session recorded
// (the chunks it buffered, the media interval it played, its stalls), so the real player
// and the virtual session report them from the same code (docs/session-log.md, "QoE").

import Foundation

/// One chunk the session buffered: a segment of the variant (an LL-HLS part is a chunk of its own).
public struct QoEChunk: Sendable, Equatable {
    public var variantIndex: Int
    /// The variant's declared BANDWIDTH, bits per second.
    public var bandwidthBps: Int
    /// Where the chunk sits on the media timeline, seconds.
    public var startSeconds: Double
    public var durationSeconds: Double
    /// The chunk's body bytes as received.
    public var bytes: Int
    public init(variantIndex: Int, bandwidthBps: Int, startSeconds: Double, durationSeconds: Double, bytes: Int) {
        self.variantIndex = variantIndex
        self.bandwidthBps = bandwidthBps
        self.startSeconds = startSeconds
        self.durationSeconds = durationSeconds
        self.bytes = bytes
    }
}

/// Media time played at one rung.
public struct RungPlayTime: Sendable, Equatable, Codable {
    public var variantIndex: Int
    /// The rung's declared BANDWIDTH, bits per second.
    public var bandwidthBps: Int
    /// Media seconds of the rung played.
    public var playedSeconds: Double
    public init(variantIndex: Int, bandwidthBps: Int, playedSeconds: Double) {
        self.variantIndex = variantIndex
        self.bandwidthBps = bandwidthBps
        self.playedSeconds = playedSeconds
    }
}

/// The summary's `qoe` object. Ratios and means whose denominator is zero are absent.
public struct SessionQoE: Sendable, Equatable, Codable {
    /// Chunks with some media time played (the media interval from the start position to the final position).
    public var playedChunks: Int
    /// Declared BANDWIDTH of the played chunks, weighted by the media time played of each, bits per second.
    public var averageDeclaredBitrateBps: Double?
    /// Measured bitrate of the played chunks (each chunk's bytes × 8 ÷ its duration), weighted the same way,
    /// bits per second: for whole chunks, the bits of the chunks played ÷ their duration.
    public var averageMeasuredBitrateBps: Double?
    /// stallSeconds ÷ (playedSeconds + stallSeconds).
    public var rebufferRatio: Double?
    /// stallCount per 60 s of media played.
    public var stallsPerMinute: Double?
    /// Changes of rung between consecutive played chunks (what the viewer saw; `variantSwitches` counts
    /// the loader's switches, including those of chunks never played).
    public var playedSwitches: Int
    /// Mean |BANDWIDTH change| over those switches, bits per second.
    public var meanSwitchMagnitudeBps: Double?
    /// Media seconds played at each rung, by variant index (rungs never played are left out).
    public var rungs: [RungPlayTime]
    /// μ of the linear QoE: the ladder's top declared bitrate in Mbit/s, the penalty per second of rebuffering.
    public var linearQoERebufferWeight: Double?
    /// The linear QoE (MPC, Yin et al. SIGCOMM 2015; Pensieve, Mao et al. SIGCOMM 2017):
    /// Σ chunk bitrate (Mbit/s) − μ × stallSeconds − Σ |bitrate change between consecutive chunks| (Mbit/s).
    /// Absent when no chunk was played or the ladder declares no bitrate (μ = 0).
    public var linearQoE: Double?
    /// linearQoE ÷ playedChunks.
    public var linearQoEPerChunk: Double?
    /// The three terms of linearQoE: the bitrate utility, the rebuffer penalty and the smoothness penalty.
    public var linearQoEBitrateSum: Double?
    public var linearQoERebufferPenalty: Double?
    public var linearQoESwitchPenalty: Double?

    public init(
        playedChunks: Int, averageDeclaredBitrateBps: Double?, averageMeasuredBitrateBps: Double?,
        rebufferRatio: Double?, stallsPerMinute: Double?, playedSwitches: Int, meanSwitchMagnitudeBps: Double?,
        rungs: [RungPlayTime], linearQoERebufferWeight: Double?, linearQoE: Double?, linearQoEPerChunk: Double?,
        linearQoEBitrateSum: Double?, linearQoERebufferPenalty: Double?, linearQoESwitchPenalty: Double?
    ) {
        self.playedChunks = playedChunks
        self.averageDeclaredBitrateBps = averageDeclaredBitrateBps
        self.averageMeasuredBitrateBps = averageMeasuredBitrateBps
        self.rebufferRatio = rebufferRatio
        self.stallsPerMinute = stallsPerMinute
        self.playedSwitches = playedSwitches
        self.meanSwitchMagnitudeBps = meanSwitchMagnitudeBps
        self.rungs = rungs
        self.linearQoERebufferWeight = linearQoERebufferWeight
        self.linearQoE = linearQoE
        self.linearQoEPerChunk = linearQoEPerChunk
        self.linearQoEBitrateSum = linearQoEBitrateSum
        self.linearQoERebufferPenalty = linearQoERebufferPenalty
        self.linearQoESwitchPenalty = linearQoESwitchPenalty
    }

    /// Bits per second in one Mbit/s, the unit of the linear QoE's bitrate terms.
    public static let bpsPerMbps = 1_000_000.0

    /// The QoE of a session that buffered `chunks` (in the order buffered), played the media interval
    /// `startPositionSeconds`…`finalPositionSeconds`, and stalled `stallCount` times for `stallSeconds`
    /// in all; `ladderTopBps` is the highest declared BANDWIDTH of the ladder (μ's basis; nil: the highest
    /// of the chunks). A chunk counts as played when some of its media time lies in the played interval
    /// and was not discarded before it played (a later chunk starting before its end); the bitrate averages
    /// and per-rung times weigh it by that much, the linear QoE counts it whole.
    public static func compute(
        chunks: [QoEChunk], startPositionSeconds: Double, finalPositionSeconds: Double,
        stallCount: Int, stallSeconds: Double, ladderTopBps: Int?
    ) -> SessionQoE {
        // Chunks are appended at the end of the buffer, so a chunk that starts before an earlier one ends
        // means the buffer was discarded there (a live resync): the earlier chunk's media from that point on
        // was dropped unplayed. Each chunk's media ends at the earliest start of any chunk buffered after it.
        var playedEnds = chunks.map { $0.startSeconds + $0.durationSeconds }
        var laterStart = Double.infinity
        for i in chunks.indices.reversed() {
            playedEnds[i] = min(playedEnds[i], laterStart)
            laterStart = min(laterStart, chunks[i].startSeconds)
        }
        var played: [(chunk: QoEChunk, seconds: Double)] = []
        for (c, end) in zip(chunks, playedEnds) {
            let overlap = min(end, finalPositionSeconds) - max(c.startSeconds, startPositionSeconds)
            if overlap > 0 { played.append((c, overlap)) }
        }

        let playedSeconds = played.reduce(0) { $0 + $1.seconds }
        var declared = 0.0, measured = 0.0
        var rungSeconds: [Int: (bandwidth: Int, seconds: Double)] = [:]
        for (c, seconds) in played {
            declared += Double(c.bandwidthBps) * seconds
            if c.durationSeconds > 0 { measured += Double(c.bytes) * 8 / c.durationSeconds * seconds }
            rungSeconds[c.variantIndex, default: (c.bandwidthBps, 0)].seconds += seconds
        }
        var switches = 0
        var switchMagnitudeBps = 0.0
        for (a, b) in zip(played, played.dropFirst()) where a.chunk.variantIndex != b.chunk.variantIndex {
            switches += 1
            switchMagnitudeBps += Double(abs(b.chunk.bandwidthBps - a.chunk.bandwidthBps))
        }
        let mediaPlayed = max(0, finalPositionSeconds - startPositionSeconds)
        let top = ladderTopBps ?? played.map(\.chunk.bandwidthBps).max()
        let mu = top.map { Double($0) / bpsPerMbps }
        var qoe = SessionQoE(
            playedChunks: played.count,
            averageDeclaredBitrateBps: playedSeconds > 0 ? declared / playedSeconds : nil,
            averageMeasuredBitrateBps: playedSeconds > 0 ? measured / playedSeconds : nil,
            rebufferRatio: mediaPlayed + stallSeconds > 0 ? stallSeconds / (mediaPlayed + stallSeconds) : nil,
            stallsPerMinute: mediaPlayed > 0 ? Double(stallCount) / mediaPlayed * 60 : nil,
            playedSwitches: switches, meanSwitchMagnitudeBps: switches > 0 ? switchMagnitudeBps / Double(switches) : nil,
            rungs: rungSeconds.keys.sorted().map {
                RungPlayTime(variantIndex: $0, bandwidthBps: rungSeconds[$0]!.bandwidth, playedSeconds: rungSeconds[$0]!.seconds)
            },
            linearQoERebufferWeight: mu, linearQoE: nil, linearQoEPerChunk: nil,
            linearQoEBitrateSum: nil, linearQoERebufferPenalty: nil, linearQoESwitchPenalty: nil)
        if let mu, mu > 0, !played.isEmpty {
            let utility = played.reduce(0) { $0 + Double($1.chunk.bandwidthBps) / bpsPerMbps }
            let rebuffer = mu * stallSeconds
            let smoothness = switchMagnitudeBps / bpsPerMbps
            let total = utility - rebuffer - smoothness
            qoe.linearQoEBitrateSum = utility
            qoe.linearQoERebufferPenalty = rebuffer
            qoe.linearQoESwitchPenalty = smoothness
            qoe.linearQoE = total
            qoe.linearQoEPerChunk = total / Double(played.count)
        }
        return qoe
    }
}
