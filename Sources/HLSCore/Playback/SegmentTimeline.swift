// Where each segment sits on the media timeline, kept across live reloads.
//
// Parsing a playlist and syncing a reloaded live playlist to the previous one
// are different jobs: the parser knows one text; this reconciler knows the
// history. Segments are identified by Media Sequence Number (RFC 8216 §6.2:
// a segment keeps its number across reloads). The first segment of the first
// load starts at media time 0 (or at the EXT-X-START offset's segment), and
// every later segment starts where the previous one ended.

public enum TimelineSync: Sendable, Equatable {
    /// The new playlist overlaps or directly follows what was known.
    case inSync(newSegments: Int)
    /// The first load.
    case initial
    /// The new playlist starts after the last known segment + 1: segments
    /// were missed (the client fell behind the sliding window or the server
    /// jumped). The timeline was re-anchored at the end of what was known.
    case lostSync(firstMediaSequence: Int, lastKnownMediaSequence: Int)
}

public struct SegmentTimeline: Sendable, Equatable {
    /// Start of each known segment, by Media Sequence Number, seconds.
    private var starts: [Int: Double] = [:]
    private var durations: [Int: Double] = [:]
    public private(set) var lastKnownMediaSequence: Int?
    /// Live history kept before the latest playlist's first segment, segments (default
    /// `defaultRetainedHistorySegmentCount`). Every segment the latest playlist lists is always
    /// kept, so a VOD (one playlist that lists everything) keeps all of its segments, bounded by
    /// the parser's `PlaylistLimits.maxSegments`; only what a live window has slid past is forgotten,
    /// beyond this many. The history lets a variant whose window reaches further back (the live
    /// timeline is shared by the variants) be placed on the same timeline.
    public var retainedHistorySegmentCount = SegmentTimeline.defaultRetainedHistorySegmentCount
    /// 4,096 segments: over two hours of 2 s segments behind a live window.
    public static let defaultRetainedHistorySegmentCount = 4096

    public init() {}

    public func startSeconds(ofMediaSequence msn: Int) -> Double? { starts[msn] }
    public func durationSeconds(ofMediaSequence msn: Int) -> Double? { durations[msn] }
    /// How many segments are on the timeline (what the latest playlist lists, plus live history).
    public var knownSegmentCount: Int { starts.count }

    /// The end of the last known segment.
    public var endSeconds: Double? {
        guard let last = lastKnownMediaSequence, let s = starts[last], let d = durations[last] else { return nil }
        return s + d
    }

    /// The index in `playlist.segments` of the first segment that ends more than `toleranceSeconds`
    /// after `seconds` on this timeline, or nil when none does (the playlist ends before). Binary
    /// search, so continuing a VOD by time (a variant switch, an alternate audio rendition) costs
    /// O(log segments): the playlist's segments must be in timeline order, as a VOD's are on the
    /// timeline made from it. A segment not on the timeline counts as starting at 0.
    public func firstSegmentIndex(
        in playlist: MediaPlaylist, endingAfter seconds: Double,
        toleranceSeconds: Double
    ) -> Int? {
        let segments = playlist.segments
        var low = 0
        var high = segments.count
        while low < high {
            let mid = (low + high) / 2
            let end = (starts[segments[mid].mediaSequence] ?? 0) + segments[mid].durationSeconds
            if end > seconds + toleranceSeconds { high = mid } else { low = mid + 1 }
        }
        return low < segments.count ? low : nil
    }

    /// Reconciles a (re)loaded playlist with what is known.
    public mutating func update(with playlist: MediaPlaylist) -> TimelineSync {
        guard let first = playlist.segments.first else { return lastKnownMediaSequence == nil ? .initial : .inSync(newSegments: 0) }
        var sync: TimelineSync
        var cursor: Double
        if let last = lastKnownMediaSequence, let end = endSeconds {
            if first.mediaSequence > last + 1 {
                sync = .lostSync(firstMediaSequence: first.mediaSequence, lastKnownMediaSequence: last)
                cursor = end
            } else if let s = starts[first.mediaSequence] {
                sync = .inSync(newSegments: 0)
                cursor = s
            } else {
                // Overlap starts before what we kept: walk back from the first known segment.
                sync = .inSync(newSegments: 0)
                cursor = end
                if let known = playlist.segments.first(where: { starts[$0.mediaSequence] != nil }), let ks = starts[known.mediaSequence] {
                    let before = playlist.segments.prefix { $0.mediaSequence < known.mediaSequence }
                    cursor = ks - before.reduce(0) { $0 + $1.durationSeconds }
                }
            }
        } else {
            sync = .initial
            cursor = 0
        }
        var added = 0
        for segment in playlist.segments {
            if let known = starts[segment.mediaSequence] {
                cursor = known + segment.durationSeconds
                durations[segment.mediaSequence] = segment.durationSeconds
                continue
            }
            starts[segment.mediaSequence] = cursor
            durations[segment.mediaSequence] = segment.durationSeconds
            cursor += segment.durationSeconds
            if segment.mediaSequence > (lastKnownMediaSequence ?? Int.min) { lastKnownMediaSequence = segment.mediaSequence }
            added += 1
        }
        if case .inSync = sync { sync = .inSync(newSegments: added) }
        // Forget live history older than the retained count before the first listed segment
        // (never a listed one: what the playlist lists is what the player may still load).
        let keepFrom = first.mediaSequence - retainedHistorySegmentCount
        if starts.count > playlist.segments.count + retainedHistorySegmentCount {
            for key in starts.keys where key < keepFrom {
                starts[key] = nil
                durations[key] = nil
            }
        }
        return sync
    }
}

/// Live-playlist rules (RFC 8216 §6.3.3, §6.3.4).
public enum LivePlaylistRules {
    /// Where to start a live stream: the segment holding the point HOLD-BACK
    /// seconds (default three target durations) before the end of the playlist.
    /// Returns an index into `playlist.segments`: the last segment when there is no hold-back
    /// (HOLD-BACK=0). The target duration is `targetDurationSeconds(for:)`: never 0 (ffmpeg writes
    /// `#EXT-X-TARGETDURATION:0` for sub-second segments). Always a valid index when there are segments.
    public static func startSegmentIndex(for playlist: MediaPlaylist) -> Int {
        guard !playlist.segments.isEmpty else { return 0 }
        let holdBack = playlist.serverControl?.holdBackSeconds ?? 3 * targetDurationSeconds(for: playlist)
        var remaining = holdBack
        var index = playlist.segments.count - 1
        while index > 0 && remaining > playlist.segments[index].durationSeconds {
            remaining -= playlist.segments[index].durationSeconds
            index -= 1
        }
        return min(index, playlist.segments.count - 1)
    }

    /// Seconds to wait before reloading: the target duration after a reload
    /// that changed the playlist, half of it after one that did not. Pass
    /// `targetDurationSeconds(for:)`; a target duration that is not positive
    /// counts as `fallbackTargetDurationSeconds`, so no reload follows another at once.
    public static func reloadDelaySeconds(targetDurationSeconds: Double, playlistChanged: Bool) -> Double {
        let target = targetDurationSeconds.isFinite && targetDurationSeconds > 0 ? targetDurationSeconds : fallbackTargetDurationSeconds
        return playlistChanged ? target : target / 2
    }

    /// Where a VOD stream starts (EXT-X-START, RFC 8216 §4.3.5.2): the segment that holds the
    /// offset (a negative offset counts from the end; clamped to the playlist, so an offset at or
    /// past the end starts at the last segment), that segment's start (seconds from the first
    /// segment), and how far into it the clock starts: with PRECISE=YES the offset itself (media
    /// before it is decoded but not presented), otherwise 0. One pass for the duration and one to
    /// the segment, once at startup.
    public static func vodStartPosition(
        for playlist: MediaPlaylist, start: StartPoint?
    )
        -> (segmentIndex: Int, segmentStartSeconds: Double, offsetIntoSegmentSeconds: Double)
    {
        guard let start, !playlist.segments.isEmpty else { return (0, 0, 0) }
        let total = playlist.totalDurationSeconds
        let requested = start.timeOffsetSeconds >= 0 ? start.timeOffsetSeconds : total + start.timeOffsetSeconds
        let offset = min(max(0, requested), total)
        var index = 0
        var segmentStart = 0.0
        for (i, s) in playlist.segments.enumerated() {
            index = i
            if offset < segmentStart + s.durationSeconds || i == playlist.segments.count - 1 { break }
            segmentStart += s.durationSeconds
        }
        guard start.precise, requested < segmentStart + playlist.segments[index].durationSeconds else {
            return (index, segmentStart, 0)
        }
        return (index, segmentStart, max(0, requested - segmentStart))
    }

    /// Where a VOD stream starts, seconds from its first segment, honouring
    /// EXT-X-START (see `vodStartPosition`).
    public static func vodStartSeconds(for playlist: MediaPlaylist, start: StartPoint?) -> Double {
        let position = vodStartPosition(for: playlist, start: start)
        return position.segmentStartSeconds + position.offsetIntoSegmentSeconds
    }

    /// The segment index to start a VOD stream at, honouring EXT-X-START (see `vodStartPosition`).
    public static func vodStartSegmentIndex(for playlist: MediaPlaylist, start: StartPoint?) -> Int {
        vodStartPosition(for: playlist, start: start).segmentIndex
    }

    /// What a live loader does next for the segment it wants, numbered `nextMediaSequence`, in its variant's
    /// current playlist: load it where it is listed (found by number, in constant time); end the track past
    /// the last segment of an ended playlist; resync when it has left the window (numbered below the first
    /// listed); else it is not published yet, and the playlist is reloaded `reloadDelaySeconds` after the
    /// last reload (`secondsSinceLastReload` ago; 0 when there was none).
    public static func nextStep(
        for nextMediaSequence: Int, in playlist: MediaPlaylist, secondsSinceLastReload: Double, lastReloadChanged: Bool
    ) -> LiveLoaderStep {
        if let index = playlist.segmentIndex(ofMediaSequence: nextMediaSequence) { return .load(segmentIndex: index) }
        if playlist.endList { return .endOfTrack }
        if let first = playlist.segments.first, nextMediaSequence < first.mediaSequence {
            return .fellBehind(windowStartsAt: first.mediaSequence)
        }
        let delay = reloadDelaySeconds(targetDurationSeconds: targetDurationSeconds(for: playlist), playlistChanged: lastReloadChanged)
        return .reload(afterSeconds: max(0, delay - secondsSinceLastReload))
    }

    /// After a live reload: whether the playhead (in the segment numbered `playheadMediaSequence`) is further behind
    /// the window's first segment than the window is long — the position is gone, and the loader resyncs to the live
    /// edge. Merely outside the window is normal: a player at HOLD-BACK on a short window plays segments that have
    /// just left it, from its own buffer. An empty window says nothing.
    public static func playheadIsBehindWindow(playheadMediaSequence: Int, in playlist: MediaPlaylist) -> Bool {
        guard let first = playlist.segments.first else { return false }
        return first.mediaSequence - playheadMediaSequence > playlist.segments.count
    }

    /// A live segment numbered `mediaSequence` answered 404 or 410 after its retries, and its playlist was
    /// loaded again (`reloaded`): true when the window now starts after it — it expired, and the loader resyncs
    /// to the live edge; false when it is still listed (or the window is empty): a broken stream, not an expiry.
    public static func hasExpired(_ mediaSequence: Int, in reloaded: MediaPlaylist) -> Bool {
        guard let first = reloaded.segments.first else { return false }
        return mediaSequence < first.mediaSequence
    }
}

/// A live loader's next step for the segment it wants (`LivePlaylistRules.nextStep`).
public enum LiveLoaderStep: Sendable, Equatable {
    /// The segment is listed: load it (its index in the playlist's `segments`).
    case load(segmentIndex: Int)
    /// The playlist has ended (EXT-X-ENDLIST) and the segment is past its last: the track has ended.
    case endOfTrack
    /// The segment is numbered below the window's first (`windowStartsAt`): it has left the window, and the
    /// loader resyncs to the live edge under the recovery cap.
    case fellBehind(windowStartsAt: Int)
    /// Not published yet: reload the playlist `afterSeconds` from now (0: at once).
    case reload(afterSeconds: Double)
}
