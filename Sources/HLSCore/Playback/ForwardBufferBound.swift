// Whether the loader fetches the next segment: the forward buffer is bounded
// in seconds (preferredForwardBufferDuration) and in bytes (`--max-buffer-bytes`,
// the byte twin other players have: ExoPlayer's DefaultLoadControl target buffer
// bytes, Shaka's bufferingGoal over a byte-limited SourceBuffer). Seconds alone
// let 46 MB segments of 2 s fill 30 s of buffer with 690 MB of packets.
//
// The byte bound never stops loading while the buffer is below what playback
// needs to start or resume (the start/resume threshold in force): the decode
// loop takes packets only as the media clock reaches them, and a stalled clock
// waits for that threshold, so stopping below it would wait for ever. It also
// never stops an empty buffer, so a single segment larger than the bound is
// played (the per-response limit, 256 MiB for a segment, still applies). So the
// bytes held exceed the bound only by what those two allow.
//
// Pure: the runtime passes the buffer's level and the bounds in force, and logs
// the episodes `ByteBoundEpisodes` returns.

import Foundation

/// How full the forward buffer is.
public struct ForwardBufferLevel: Sendable, Equatable, Codable {
    /// Media buffered ahead of the playhead (the minimum over the tracks), seconds.
    public var bufferSeconds: Double
    /// Payload bytes of the demuxed packets not yet taken by the decoder (all tracks).
    public var bufferedBytes: Int
    /// What the next segment is expected to add: the last segment's packet bytes (0 before the first).
    public var expectedSegmentBytes: Int

    public init(bufferSeconds: Double, bufferedBytes: Int, expectedSegmentBytes: Int) {
        self.bufferSeconds = bufferSeconds
        self.bufferedBytes = bufferedBytes
        self.expectedSegmentBytes = expectedSegmentBytes
    }
}

/// The bounds in force.
public struct ForwardBufferBounds: Sendable, Equatable, Codable {
    /// The forward-buffer target (preferredForwardBufferDuration, or the policy's, or automatic), seconds.
    public var targetSeconds: Double
    /// `--max-buffer-bytes`; nil: no byte bound.
    public var maxBytes: Int?
    /// The byte bound does not hold loading below this: the start threshold before the
    /// first start, the resume threshold after (as clamped to what the stream can hold), seconds.
    public var floorSeconds: Double

    public init(targetSeconds: Double, maxBytes: Int?, floorSeconds: Double) {
        self.targetSeconds = targetSeconds
        self.maxBytes = maxBytes
        self.floorSeconds = floorSeconds
    }
}

/// The loader's answer for now.
public enum ForwardBufferGate: String, Sendable, Equatable, Codable {
    /// Fetch the next segment.
    case load
    /// The seconds target is reached.
    case holdSeconds = "seconds-target"
    /// The byte bound is what stops loading.
    case holdBytes = "byte-bound"
}

public enum ForwardBufferRule {
    /// Load unless the seconds target is reached, or the next segment would take the bytes
    /// held past the byte bound while the buffer is above the floor and not empty.
    public static func gate(_ level: ForwardBufferLevel, _ bounds: ForwardBufferBounds) -> ForwardBufferGate {
        if level.bufferSeconds >= bounds.targetSeconds { return .holdSeconds }
        if let maxBytes = bounds.maxBytes, overBytes(level, maxBytes: maxBytes),
            level.bufferedBytes > 0, level.bufferSeconds >= bounds.floorSeconds
        {
            return .holdBytes
        }
        return .load
    }

    /// Whether the next segment would take the bytes held past `maxBytes`.
    static func overBytes(_ level: ForwardBufferLevel, maxBytes: Int) -> Bool {
        level.bufferedBytes + level.expectedSegmentBytes > maxBytes
    }
}

/// An episode in which the byte bound stopped loading, logged as `buffer.byteBound`
/// when it starts (`holding`, with the level and bounds) and when it ends (`released`).
public struct ByteBoundRecord: Sendable, Equatable, Codable {
    public enum Action: String, Sendable, Equatable, Codable {
        case holding, released
    }
    /// Why a hold ended.
    public enum Release: String, Sendable, Equatable, Codable {
        /// The decoder took enough packets: the next segment fits under the bound.
        case bytes
        /// The seconds target now holds loading (the byte bound no longer is what stops it).
        case secondsTarget = "seconds-target"
        /// The buffer fell below the start/resume threshold: loading goes on over the bound.
        case floor
        /// The session ended while holding.
        case sessionEnded = "session-ended"
    }
    public var action: Action
    public var level: ForwardBufferLevel
    public var bounds: ForwardBufferBounds
    /// `released`: why, and how long the episode held loading, seconds.
    public var releasedBy: Release?
    public var heldSeconds: Double?

    public init(
        action: Action, level: ForwardBufferLevel, bounds: ForwardBufferBounds,
        releasedBy: Release? = nil, heldSeconds: Double? = nil
    ) {
        self.action = action
        self.level = level
        self.bounds = bounds
        self.releasedBy = releasedBy
        self.heldSeconds = heldSeconds
    }
}

/// Turns the loader's successive gates into episodes: one record when the byte bound
/// starts holding, one when it stops.
public struct ByteBoundEpisodes: Sendable {
    private var heldSince: MonotonicInstant?
    /// The level and bounds last observed (what `finish` reports).
    private var last: (level: ForwardBufferLevel, bounds: ForwardBufferBounds)?

    public init() {}

    /// Whether an episode is open.
    public var isHolding: Bool { heldSince != nil }

    /// The record to log for this gate, if it opens or closes an episode.
    public mutating func observe(
        _ gate: ForwardBufferGate, level: ForwardBufferLevel, bounds: ForwardBufferBounds,
        at now: MonotonicInstant
    ) -> ByteBoundRecord? {
        last = (level, bounds)
        switch (gate, heldSince) {
        case (.holdBytes, nil):
            heldSince = now
            return ByteBoundRecord(action: .holding, level: level, bounds: bounds)
        case (.holdBytes, _?):
            return nil
        case (_, let since?):
            heldSince = nil
            let release: ByteBoundRecord.Release
            if gate == .holdSeconds {
                release = .secondsTarget
            } else if let maxBytes = bounds.maxBytes, ForwardBufferRule.overBytes(level, maxBytes: maxBytes), level.bufferedBytes > 0 {
                release = .floor
            } else {
                release = .bytes
            }
            return ByteBoundRecord(
                action: .released, level: level, bounds: bounds, releasedBy: release,
                heldSeconds: now.seconds(since: since))
        case (_, nil):
            return nil
        }
    }

    /// At the end of the session: the open episode, closed (with the level last observed).
    public mutating func finish(at now: MonotonicInstant) -> ByteBoundRecord? {
        guard let since = heldSince, let last else { return nil }
        heldSince = nil
        return ByteBoundRecord(
            action: .released, level: last.level, bounds: last.bounds, releasedBy: .sessionEnded,
            heldSeconds: now.seconds(since: since))
    }
}
