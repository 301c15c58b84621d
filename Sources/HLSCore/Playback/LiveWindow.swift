// What a live playlist's window can hold, and the durations the live rules
// work with when a packager writes what RFC 8216 allows but a naive rule
// cannot use (EXT-X-TARGETDURATION:0 over 0.25 s segments).
//
// Thresholds are clamped to it: a start or resume threshold longer than the
// live window can never be reached without the playhead leaving the window
// (each wait then ends in a resync that throws the buffer away, forever).
// A window shorter than three target durations breaks RFC 8216 §6.2.2 and is
// logged as a warning; the player still plays it.

import Foundation

extension LivePlaylistRules {
    /// The target duration when neither EXT-X-TARGETDURATION nor any segment gives a positive one, seconds.
    public static let fallbackTargetDurationSeconds = 1.0
    /// RFC 8216 §6.2.2: the server MUST NOT remove a segment if that leaves a
    /// live playlist shorter than three target durations. Count of target durations.
    public static let minimumWindowTargetDurations = 3.0

    /// The target duration the live rules use (hold-back, reload cadence, resync
    /// thresholds, the request-rate bound): EXT-X-TARGETDURATION, or the longest
    /// segment when that is longer. RFC 8216 §4.3.3.1 compares each EXTINF
    /// *rounded to the nearest integer* with the target duration, so 0.25 s
    /// segments may come with EXT-X-TARGETDURATION:0 (FFmpeg's hls muxer writes
    /// that), and every rule that multiplies it would use 0. Seconds, > 0.
    public static func targetDurationSeconds(for playlist: MediaPlaylist) -> Double {
        let declared = playlist.targetDurationSeconds.isFinite ? playlist.targetDurationSeconds : 0
        let longest = playlist.segments.lazy.map(\.durationSeconds).filter(\.isFinite).max() ?? 0
        let target = max(declared, longest)
        return target > 0 ? target : fallbackTargetDurationSeconds
    }

    /// The media the live window holds: its segments and the parts of the segment in progress, seconds.
    public static func windowSeconds(of playlist: MediaPlaylist) -> Double {
        playlist.segments.reduce(0) { $0 + $1.durationSeconds } + playlist.trailingParts.reduce(0) { $0 + $1.durationSeconds }
    }

    /// The warning for a live window shorter than three target durations
    /// (RFC 8216 §6.2.2); nil when it is long enough or the playlist has ended.
    public static func shortWindow(_ playlist: MediaPlaylist) -> LiveWindowRecord? {
        guard !playlist.endList, !playlist.segments.isEmpty else { return nil }
        let target = targetDurationSeconds(for: playlist)
        let window = windowSeconds(of: playlist)
        let minimum = minimumWindowTargetDurations * target
        guard window < minimum else { return nil }
        return LiveWindowRecord(
            windowSeconds: window, segments: playlist.segments.count, targetDurationSeconds: target,
            declaredTargetDurationSeconds: playlist.targetDurationSeconds, minimumWindowSeconds: minimum,
            mediaSequence: playlist.mediaSequence)
    }
}

/// A live window shorter than RFC 8216 §6.2.2 allows: logged once, as a warning (`live.window`).
public struct LiveWindowRecord: Sendable, Equatable, Codable {
    /// The window's media: segments and trailing parts, seconds.
    public var windowSeconds: Double
    public var segments: Int
    /// The target duration the rules use (`LivePlaylistRules.targetDurationSeconds(for:)`), and the one written, seconds.
    public var targetDurationSeconds: Double
    public var declaredTargetDurationSeconds: Double
    /// Three target durations, seconds.
    public var minimumWindowSeconds: Double
    public var mediaSequence: Int
    public var warning: String

    public init(
        windowSeconds: Double, segments: Int, targetDurationSeconds: Double, declaredTargetDurationSeconds: Double,
        minimumWindowSeconds: Double, mediaSequence: Int
    ) {
        self.windowSeconds = windowSeconds
        self.segments = segments
        self.targetDurationSeconds = targetDurationSeconds
        self.declaredTargetDurationSeconds = declaredTargetDurationSeconds
        self.minimumWindowSeconds = minimumWindowSeconds
        self.mediaSequence = mediaSequence
        warning = String(
            format:
                "the live window holds %.3f s (%d segments), less than three target durations (%.3f s): RFC 8216 §6.2.2 says a server MUST NOT shorten a live playlist below that; playing it with the start and resume thresholds clamped to the window",
            windowSeconds, segments, minimumWindowSeconds)
    }
}

/// The most media a stream can hold ahead of the playhead, which the start
/// and resume thresholds are clamped to (`PlaybackTimeline.setThresholdCeiling`).
public struct PlaybackThresholdCeiling: Sendable, Equatable, Codable {
    public enum Basis: String, Sendable, Equatable, Codable {
        /// Live: the window's duration. Waiting for more would leave the playhead behind the window.
        case liveWindow = "live-window"
        /// VOD: what is left from the start position to the end.
        case remainingVOD = "remaining-vod"
    }
    public var basis: Basis
    /// The ceiling, seconds.
    public var seconds: Double
    /// Live: the window's segments and the target duration the rules use (seconds).
    public var segments: Int?
    public var targetDurationSeconds: Double?

    public init(basis: Basis, seconds: Double, segments: Int? = nil, targetDurationSeconds: Double? = nil) {
        self.basis = basis
        self.seconds = seconds
        self.segments = segments
        self.targetDurationSeconds = targetDurationSeconds
    }

    /// A live playlist's ceiling: its window (nil for an ended or empty playlist).
    public static func live(_ playlist: MediaPlaylist) -> PlaybackThresholdCeiling? {
        guard !playlist.endList, !playlist.segments.isEmpty else { return nil }
        return PlaybackThresholdCeiling(
            basis: .liveWindow, seconds: LivePlaylistRules.windowSeconds(of: playlist),
            segments: playlist.segments.count,
            targetDurationSeconds: LivePlaylistRules.targetDurationSeconds(for: playlist))
    }

    /// A VOD's ceiling: the media from the start position to the end.
    public static func vod(remainingSeconds: Double) -> PlaybackThresholdCeiling {
        PlaybackThresholdCeiling(basis: .remainingVOD, seconds: max(0, remainingSeconds))
    }
}

/// A start or resume threshold lowered to what the stream can hold (`playback.threshold` in the log).
public struct ThresholdClamp: Sendable, Equatable, Codable {
    public enum Threshold: String, Sendable, Equatable, Codable {
        case startup
        case resume
    }
    public var threshold: Threshold
    /// The threshold asked for (configured, the policy's, LL-HLS's), and the one in force, seconds.
    public var requestedSeconds: Double
    public var clampedSeconds: Double
    /// What the stream can hold, and why.
    public var ceiling: PlaybackThresholdCeiling?

    public init(threshold: Threshold, requestedSeconds: Double, clampedSeconds: Double, ceiling: PlaybackThresholdCeiling? = nil) {
        self.threshold = threshold
        self.requestedSeconds = requestedSeconds
        self.clampedSeconds = clampedSeconds
        self.ceiling = ceiling
    }
}
