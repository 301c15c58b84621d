// A live playlist that stopped advancing.
//
// RFC 8216 §6.2.1: a server MUST make each new version of a live Media
// Playlist available no later than 1.5 target durations after the previous
// one. A client that reloads at the §6.3.4 cadence (a target duration after a
// change, half of it after an unchanged answer) therefore sees two or three
// unchanged answers in a row at most; a playlist unchanged for longer is
// stale: the packager stopped, or a cache in front of the origin keeps
// serving an old copy.
//
// What players do with one: AVFoundation reports it (CoreMedia -12888,
// "Playlist File unchanged for longer than 1.5 * target duration") and stalls;
// ExoPlayer fails the playlist after 3.5 target durations
// (PlaylistStuckException); hls.js goes on reloading. hlsplay goes on
// reloading at the RFC cadence and plays what arrives; this value says when
// the playlist crossed the bound (logged once, `live.stale`) and when it
// advanced again, and a live resync, which has nothing newer to jump to while
// it is stale, holds its position instead of replaying (LiveResyncRules). The
// resync policy's deadlines end a stall that does not recover.
//
// Pure: each reload's newest position and the time are passed in.

import Foundation

/// A live playlist crossed the RFC 8216 §6.2.1 update bound, or advanced again after that (`live.stale`).
public struct LivePlaylistStaleRecord: Sendable, Equatable, Codable {
    public enum State: String, Sendable, Equatable, Codable {
        /// Unchanged for longer than the bound.
        case stale
        /// Its newest position changed again.
        case advanced
    }
    public var state: State
    /// Seconds since the playlist last advanced (for `advanced`: how long it had not).
    public var unchangedSeconds: Double
    /// The bound: `updateBoundTargetDurations` × the target duration, seconds.
    public var boundSeconds: Double
    public var targetDurationSeconds: Double
    /// Reloads that came back unchanged since the playlist last advanced.
    public var unchangedReloads: Int
    /// The newest segment listed when it last advanced; for LL-HLS also the parts of the segment in progress.
    public var lastMediaSequence: Int
    public var trailingParts: Int
    /// For `advanced`: the newest segment now listed.
    public var newLastMediaSequence: Int?
    /// What happened, in a sentence.
    public var message: String

    public init(
        state: State, unchangedSeconds: Double, boundSeconds: Double, targetDurationSeconds: Double, unchangedReloads: Int,
        lastMediaSequence: Int, trailingParts: Int, newLastMediaSequence: Int? = nil
    ) {
        self.state = state
        self.unchangedSeconds = unchangedSeconds
        self.boundSeconds = boundSeconds
        self.targetDurationSeconds = targetDurationSeconds
        self.unchangedReloads = unchangedReloads
        self.lastMediaSequence = lastMediaSequence
        self.trailingParts = trailingParts
        self.newLastMediaSequence = newLastMediaSequence
        switch state {
        case .stale:
            message = String(
                format:
                    "the live playlist has not changed for %.1f s (%@; newest segment %d), longer than the %g target durations (%.1f s) RFC 8216 §6.2.1 allows between versions: the packager stopped or a cache serves an old copy; reloading every half target duration (RFC 8216 §6.3.4)",
                unchangedSeconds, LivePlaylistStaleness.reloads(unchangedReloads), lastMediaSequence,
                LivePlaylistStaleness.updateBoundTargetDurations, boundSeconds)
        case .advanced:
            message = String(
                format: "the live playlist changed again after %.1f s unchanged (newest segment %d, now %d)",
                unchangedSeconds, lastMediaSequence, newLastMediaSequence ?? lastMediaSequence)
        }
    }
}

public struct LivePlaylistStaleness: Sendable, Equatable {
    /// RFC 8216 §6.2.1: the longest a server may leave a live Media Playlist unchanged, in target durations.
    public static let updateBoundTargetDurations = 1.5

    /// The newest position of the last playlist that advanced: its last segment and trailing parts.
    public private(set) var lastMediaSequence: Int?
    public private(set) var trailingParts = 0
    /// When the playlist last advanced (the first load counts), and when it was last (re)loaded.
    public private(set) var advancedAt: MonotonicInstant?
    public private(set) var lastReloadAt: MonotonicInstant?
    public private(set) var unchangedReloads = 0
    /// Whether the current run of unchanged reloads crossed the bound (and was reported).
    public private(set) var isStale = false

    public init() {}

    /// "1 reload", "3 reloads": for messages.
    public static func reloads(_ count: Int) -> String { count == 1 ? "1 reload" : "\(count) reloads" }

    /// The bound for this target duration, seconds.
    public static func boundSeconds(targetDurationSeconds: Double) -> Double {
        updateBoundTargetDurations * targetDurationSeconds
    }

    /// Seconds over which reloads found the playlist unchanged: from the load that last changed it
    /// to the latest reload (nil before the first load). Only what reloads saw: a player that did
    /// not reload for a while (its loader busy elsewhere) does not call a playlist stale.
    public var observedUnchangedSeconds: Double? {
        guard let advancedAt, let lastReloadAt else { return nil }
        return lastReloadAt.seconds(since: advancedAt)
    }

    /// A (re)load of the variant's live playlist, whose newest segment is `lastMediaSequence` with
    /// `trailingParts` parts of the next one listed. Returns a record when the playlist crosses the
    /// bound (once per run of unchanged reloads) and when a stale playlist advances again.
    /// `targetDurationSeconds`: the live rules' (`LivePlaylistRules.targetDurationSeconds(for:)`).
    public mutating func reloaded(
        lastMediaSequence last: Int, trailingParts parts: Int, targetDurationSeconds: Double,
        at now: MonotonicInstant
    ) -> LivePlaylistStaleRecord? {
        let bound = Self.boundSeconds(targetDurationSeconds: targetDurationSeconds)
        lastReloadAt = now
        guard let previous = lastMediaSequence, let since = advancedAt else {
            lastMediaSequence = last
            trailingParts = parts
            advancedAt = now
            return nil
        }
        // Any other newest position counts (a packager that restarted its numbering is not stale).
        let advanced = last != previous || parts != trailingParts
        let unchanged = now.seconds(since: since)
        if advanced {
            var record: LivePlaylistStaleRecord?
            if isStale {
                record = LivePlaylistStaleRecord(
                    state: .advanced, unchangedSeconds: unchanged, boundSeconds: bound,
                    targetDurationSeconds: targetDurationSeconds, unchangedReloads: unchangedReloads,
                    lastMediaSequence: previous, trailingParts: trailingParts, newLastMediaSequence: last)
            }
            lastMediaSequence = last
            trailingParts = parts
            advancedAt = now
            unchangedReloads = 0
            isStale = false
            return record
        }
        unchangedReloads += 1
        guard !isStale, unchanged > bound else { return nil }
        isStale = true
        return LivePlaylistStaleRecord(
            state: .stale, unchangedSeconds: unchanged, boundSeconds: bound,
            targetDurationSeconds: targetDurationSeconds, unchangedReloads: unchangedReloads,
            lastMediaSequence: previous, trailingParts: trailingParts)
    }
}
