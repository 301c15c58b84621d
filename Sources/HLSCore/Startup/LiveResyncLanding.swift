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
