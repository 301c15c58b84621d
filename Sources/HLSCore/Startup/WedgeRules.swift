// What happens to a request the byte-progress rule found wedged
// (`ByteProgressClassifier`, docs/startup-cap.md §4), and how often an
// abandoned segment is tried again. The real and the virtual session both act
// on these outcomes, so a wedge ends the same way in both.
//
// - A segment wedged for the first time is asked for again on a fresh
//   connection, or — with little buffer left and a lower rung to go to — goes
//   back through the selector (under the recovery cap the wedge set off). Wedged
//   again, it is abandoned.
// - A playlist wedged is asked for again at once, up to `maxPlaylistReRequests`
//   times; past that each wedge is a timeout for the playlist retry policy —
//   backoff, bounded attempts, then the session fails — as any other transfer
//   failure of a playlist.
// - A segment abandoned (wedged twice on a request, or over-selected)
//   `maxAbandonmentsPerSegment` times ends the session.

public struct WedgeRules: Sendable, Equatable, Codable {
    /// After a wedge with less than this many segment durations buffered, the segment is
    /// asked for again through a new decision — under the recovery cap, at the probe rung —
    /// instead of on the same rung: a collapsed link and a lost request look alike at that
    /// moment, and a lower rung ends a collapse's stall sooner while costing a lost request
    /// only one lower-quality segment. Segment durations.
    public var reDecideBelowBufferSegments: Double
    /// A wedged playlist request is asked for again at once this many times (≈ this × the
    /// 3 s wedge window of a dead link) before further wedges count as attempts of the
    /// playlist retry policy. Count.
    public var maxPlaylistReRequests: Int
    /// Times one segment may be abandoned (wedged twice on a request, or over-selected)
    /// before the session gives up. Count.
    public var maxAbandonmentsPerSegment: Int

    public init(reDecideBelowBufferSegments: Double = 2, maxPlaylistReRequests: Int = 6, maxAbandonmentsPerSegment: Int = 5) {
        self.reDecideBelowBufferSegments = reDecideBelowBufferSegments
        self.maxPlaylistReRequests = maxPlaylistReRequests
        self.maxAbandonmentsPerSegment = maxAbandonmentsPerSegment
    }

    /// What a wedged segment request gets.
    public enum SegmentOutcome: String, Sendable, Equatable {
        /// The same request again at once, on a fresh connection (not an attempt of the retry policy).
        case reRequest
        /// Back through the selector for the same segment (not an abandonment).
        case reDecide
        /// Abandoned: counted against `maxAbandonmentsPerSegment`, then decided again.
        case abandon
    }

    /// The outcome for a segment request found wedged, after `earlierWedges` wedges of the
    /// same request; `bufferSeconds` is the forward buffer now, `rungBps` the wedged rung's
    /// BANDWIDTH (nil: unknown, never re-decided).
    public func afterSegmentWedge(
        earlierWedges: Int, bufferSeconds: Double, segmentDurationSeconds: Double,
        rungBps: Int?, ladderBitratesBps: [Int]
    ) -> SegmentOutcome {
        guard earlierWedges == 0 else { return .abandon }
        guard let rungBps else { return .reRequest }
        return reDecides(
            bufferSeconds: bufferSeconds, segmentDurationSeconds: segmentDurationSeconds,
            rungBps: rungBps, ladderBitratesBps: ladderBitratesBps) ? .reDecide : .reRequest
    }

    /// Whether a segment wedged for the first time goes back through the selector: less than
    /// `reDecideBelowBufferSegments` segment durations buffered and a rung below the wedged one.
    public func reDecides(bufferSeconds: Double, segmentDurationSeconds: Double, rungBps: Int, ladderBitratesBps: [Int]) -> Bool {
        bufferSeconds < reDecideBelowBufferSegments * segmentDurationSeconds && ladderBitratesBps.contains { $0 < rungBps }
    }

    /// What a wedged playlist request gets.
    public enum PlaylistOutcome: Sendable, Equatable {
        /// The same request again at once, on a fresh connection (not an attempt of the retry policy).
        case reRequest
        /// A failed attempt of the playlist retry policy, with this error (a first-byte timeout).
        case failedAttempt(LoadError)
    }

    /// The outcome for the `wedges`-th wedge (≥ 1) of a playlist request for `url`, which had
    /// received `bytesReceived` bytes when it was cut.
    public func afterPlaylistWedge(wedges: Int, url: String, bytesReceived: Int) -> PlaylistOutcome {
        if wedges <= maxPlaylistReRequests { return .reRequest }
        return .failedAttempt(
            LoadError(
                kind: .firstByteTimeout, url: url, bytesReceived: bytesReceived,
                message: "no byte for the wedge window (byte-progress monitor), \(wedges) times"))
    }

    /// Whether the session gives up on a segment abandoned `abandonments` times (this one included).
    public func givesUp(afterAbandonments abandonments: Int) -> Bool {
        abandonments >= maxAbandonmentsPerSegment
    }

    /// The session's error when it gives up on segment `mediaSequence` (`givesUp`); `partByPart` for an LL-HLS
    /// segment loaded as parts. One wording for every loader (VOD, live, LL-HLS).
    public func givingUpMessage(segment mediaSequence: Int, partByPart: Bool = false) -> String {
        "segment \(mediaSequence) could not be loaded\(partByPart ? " part by part" : ""): wedged or abandoned \(maxAbandonmentsPerSegment) times on every rung tried"
    }
}
