// Where a live resync lands (docs/startup-cap.md §5): forward to the live
// start point, or nowhere — never back.
//
// A resync "to the live edge" means the start point of the reloaded playlist:
// HOLD-BACK (three target durations) from its end, or for LL-HLS an
// INDEPENDENT part PART-HOLD-BACK from its end. When the playlist has stopped
// advancing, that point is *behind* what the player already loaded and
// played; jumping to it replayed the same segments, stalled again, resynced
// again — a loop only the no-progress watchdog ended. So:
//
//   - the start point is ahead of everything loaded → seek there (drop the
//     forward buffer, load from the start point);
//   - it is not, but the playhead's segment has left the window (loading ran
//     ahead while the playhead fell behind) → drop the buffer and go on
//     loading where loading was: the playhead jumps forward, loading never
//     goes back;
//   - otherwise there is nothing newer to jump to → hold: keep the buffer and
//     the load position and wait for the playlist to advance (reloading at the
//     RFC 8216 §6.3.4 cadence); the resync policy's deadlines escalate if it
//     does not.
//
// Pure: positions in, a landing out.

import Foundation

public enum LiveResyncLanding: Sendable, Equatable {
    /// Drop the forward buffer and load from this position (a whole segment when `part` is nil).
    case seek(to: LowLatencyPosition)
    /// Drop the forward buffer (the playhead, out of the window, jumps to where loading is) and keep
    /// loading where loading was.
    case skipBuffered
    /// Keep the forward buffer and the load position: wait for the playlist to advance.
    case hold

    /// The log's name for it (`landing` in `live.resync`).
    public var name: String {
        switch self {
        case .seek: "seek"
        case .skipBuffered: "skip-buffered"
        case .hold: "hold"
        }
    }
}

public enum LiveResyncRules {
    /// Where a resync lands.
    /// - `edgeStart`: the reloaded playlist's start point (a whole segment, or an LL-HLS part).
    /// - `lastLoaded`: the last segment (part nil) or part fully loaded at the current position; nil
    ///   when nothing is (the session has not loaded anything yet, or the position was lost).
    /// - `playheadMediaSequence`: the segment the playhead is in, when it is in one that was loaded.
    /// - `windowFirstMediaSequence`: the reloaded playlist's first segment.
    public static func landing(
        edgeStart: LowLatencyPosition, lastLoaded: LowLatencyPosition?,
        playheadMediaSequence: Int?, windowFirstMediaSequence: Int
    ) -> LiveResyncLanding {
        guard let lastLoaded, !isAhead(edgeStart, of: lastLoaded) else { return .seek(to: edgeStart) }
        if let playhead = playheadMediaSequence, playhead < windowFirstMediaSequence { return .skipBuffered }
        return .hold
    }

    /// Whether a unit starting at `start` comes after the whole of `loaded`: a later segment, or a later
    /// part of the same segment (a whole segment loaded holds all its parts).
    public static func isAhead(_ start: LowLatencyPosition, of loaded: LowLatencyPosition) -> Bool {
        if start.msn != loaded.msn { return start.msn > loaded.msn }
        guard let loadedPart = loaded.part else { return false }
        return (start.part ?? 0) > loadedPart
    }
}

/// A resync worked out on the reloaded playlist (`LiveResyncRules.plan`): where the start point is, what was
/// loaded, where loading was and where it goes on. The shell logs it (`live.resync`) and performs it: on `hold`
/// nothing moves; on a seek or a skip it drops the forward buffer and moves the loader to `toMediaSequence`.
public struct LiveResyncPlan: Sendable, Equatable {
    public var landing: LiveResyncLanding
    /// The reloaded playlist's start point: HOLD-BACK from its end, or for LL-HLS the fresh LL-HLS start.
    public var edge: LowLatencyPosition
    /// The last segment (or LL-HLS part) fully loaded; nil when nothing is.
    public var lastLoaded: LowLatencyPosition?
    /// The segment loading would go on in (LL-HLS: the one holding the part after the last loaded).
    public var fromMediaSequence: Int
    /// The segment loading goes on in: the start point's on a seek, else `fromMediaSequence`.
    public var toMediaSequence: Int
    /// The start point's part, on an LL-HLS seek.
    public var toPart: Int?
    /// An LL-HLS seek: loading starts afresh part by part from the start point, as at startup (the shell forgets
    /// the last part loaded and logs the new start).
    public var freshLowLatencyStart: Bool
}

extension LiveResyncRules {
    /// The resync on the reloaded `playlist`. `lowLatencyLoaded`: the last LL-HLS unit loaded part by part (nil:
    /// none); `nextMediaSequence`: the loader's next segment; `segmentsLoaded`: whether a segment was fetched yet
    /// (without one nothing counts as loaded); `playheadMediaSequence`: the segment the playhead is in, when it was
    /// loaded. Nil: an empty playlist, nothing to land on.
    public static func plan(
        for playlist: MediaPlaylist, lowLatencyLoaded: LowLatencyPosition?, nextMediaSequence: Int, segmentsLoaded: Bool,
        playheadMediaSequence: Int?
    ) -> LiveResyncPlan? {
        guard let first = playlist.segments.first else { return nil }
        // LL-HLS loads part by part from `lowLatencyLoaded`: the resync must move that position (keeping it made
        // the seek a no-op: loading went on from the old part, a stall's length behind live).
        let lowLatencyStart = LowLatencyRules.loadsPartByPart(playlist) ? LowLatencyRules.startPosition(for: playlist) : nil
        let edge =
            lowLatencyStart?.position
            ?? LowLatencyPosition(msn: playlist.segments[LivePlaylistRules.startSegmentIndex(for: playlist)].mediaSequence)
        let partByPart = lowLatencyStart != nil
        let lastLoaded: LowLatencyPosition? =
            partByPart ? lowLatencyLoaded : (segmentsLoaded ? LowLatencyPosition(msn: nextMediaSequence - 1) : nil)
        let landing = landing(
            edgeStart: edge, lastLoaded: lastLoaded, playheadMediaSequence: playheadMediaSequence,
            windowFirstMediaSequence: first.mediaSequence)
        let from = partByPart ? (lowLatencyLoaded.map { $0.part == nil ? $0.msn + 1 : $0.msn } ?? nextMediaSequence) : nextMediaSequence
        var plan = LiveResyncPlan(
            landing: landing, edge: edge, lastLoaded: lastLoaded, fromMediaSequence: from, toMediaSequence: from, toPart: nil,
            freshLowLatencyStart: false)
        if case .seek(let start) = landing {
            plan.toMediaSequence = start.msn
            plan.toPart = start.part
            plan.freshLowLatencyStart = partByPart
        }
        return plan
    }
}
