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
    /// Segments more than this far behind the newest are forgotten.
    public var retainedSegmentCount = 4096

    public init() {}

    public func startSeconds(ofMediaSequence msn: Int) -> Double? { starts[msn] }
    public func durationSeconds(ofMediaSequence msn: Int) -> Double? { durations[msn] }

    /// The end of the last known segment.
    public var endSeconds: Double? {
        guard let last = lastKnownMediaSequence, let s = starts[last], let d = durations[last] else { return nil }
        return s + d
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
        if let last = lastKnownMediaSequence, starts.count > retainedSegmentCount {
            for key in starts.keys where key < last - retainedSegmentCount {
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
    /// Returns an index into `playlist.segments`.
    /// (The target duration is `targetDurationSeconds(for:)`: never 0, which
    /// would start past the last segment.) Always a valid index when there are segments.
    public static func startSegmentIndex(for playlist: MediaPlaylist) -> Int {
        guard !playlist.segments.isEmpty else { return 0 }
        let holdBack = playlist.serverControl?.holdBackSeconds ?? 3 * targetDurationSeconds(for: playlist)
        var remaining = holdBack
        var index = playlist.segments.count
        while index > 0 && remaining > 0 {
            index -= 1
            remaining -= playlist.segments[index].durationSeconds
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

    /// Where a VOD stream starts, seconds from its first segment, honouring
    /// EXT-X-START (RFC 8216 §4.3.5.2): with PRECISE=YES the offset itself
    /// (media before it is decoded but not presented); otherwise the start of
    /// the segment that contains it.
    public static func vodStartSeconds(for playlist: MediaPlaylist, start: StartPoint?) -> Double {
        let index = vodStartSegmentIndex(for: playlist, start: start)
        let segmentStart = playlist.segments.prefix(index).reduce(0) { $0 + $1.durationSeconds }
        guard let start, start.precise, !playlist.segments.isEmpty else { return segmentStart }
        let total = playlist.totalDurationSeconds
        let offset = start.timeOffsetSeconds >= 0 ? start.timeOffsetSeconds : total + start.timeOffsetSeconds
        // An offset at or past the end starts at the last segment's start.
        if offset >= segmentStart + playlist.segments[index].durationSeconds { return segmentStart }
        return max(segmentStart, offset)
    }

    /// The segment index to start a VOD stream at, honouring EXT-X-START.
    public static func vodStartSegmentIndex(for playlist: MediaPlaylist, start: StartPoint?) -> Int {
        guard let start, !playlist.segments.isEmpty else { return 0 }
        let total = playlist.totalDurationSeconds
        var offset = start.timeOffsetSeconds >= 0 ? start.timeOffsetSeconds : total + start.timeOffsetSeconds
        offset = min(max(0, offset), total)
        var t = 0.0
        for (i, s) in playlist.segments.enumerated() {
            if offset < t + s.durationSeconds { return i }
            t += s.durationSeconds
        }
        return playlist.segments.count - 1
    }
}
