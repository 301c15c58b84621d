// The progress guarantee: no input may make a session run forever. Every
// other bound is local — a request's timeouts, the retry policy's attempts,
// the wedge and trickle rules, the live resync policy's restarts — and each
// one can be sidestepped by some combination of faults (a stale live
// playlist that keeps answering, a server that accepts and never answers
// across reconnects, a loader or decoder that hangs). This watchdog is the
// outer bound: when neither the media clock nor the downloaded bytes have
// moved for `timeoutSeconds`, the session ends with an error.
//
// What counts as progress is *new media* (docs/session-log.md "session.noProgress"):
//   - new downloaded bytes: body bytes of media (segments, parts, init
//     sections, keys) beyond what the session already received for the same
//     resource, stalled or not; a playlist that is new or changed — a live
//     playlist reloaded unchanged is not progress, so a stale live stream with
//     an empty buffer times out even though its reloads keep succeeding;
//   - the media clock moving through new media: playing, also a live stream
//     waiting for its next segment while it plays its buffer. Media buffered
//     without new bytes (a segment downloaded again and played again, as a
//     resync into a stale live window used to) moves the clock but is not
//     progress: the clock counts only up to the end of the buffer as it stood
//     when new bytes last extended it.
// Pure: the monitor passes position, buffered end, bytes and now on every tick.

import Foundation

/// What the watchdog saw when it fired; the runtime adds what it knows (phase, buffer, in-flight request).
public struct NoProgressRecord: Sendable, Equatable, Codable {
    /// The configured bound, seconds.
    public var timeoutSeconds: Double
    /// Seconds since new media last arrived or played.
    public var secondsWithoutProgress: Double
    /// The media clock now, and as counted: it counts only up to `newMediaEndSeconds`, seconds.
    public var positionSeconds: Double
    public var countedPositionSeconds: Double
    /// The end of the buffer when new bytes last extended it, seconds of media.
    public var newMediaEndSeconds: Double
    /// The bytes counted as new, unchanged since then.
    public var downloadedBytes: Int
    /// Runtime context: the playback phase and forward buffer at the time.
    public var phase: PlaybackPhase?
    public var bufferSeconds: Double?
    /// Runtime context: the request in flight, if any (purpose, URL, bytes, seconds since its last byte).
    public var inFlight: String?

    public init(
        timeoutSeconds: Double, secondsWithoutProgress: Double, positionSeconds: Double, countedPositionSeconds: Double,
        newMediaEndSeconds: Double, downloadedBytes: Int, phase: PlaybackPhase? = nil, bufferSeconds: Double? = nil,
        inFlight: String? = nil
    ) {
        self.timeoutSeconds = timeoutSeconds
        self.secondsWithoutProgress = secondsWithoutProgress
        self.positionSeconds = positionSeconds
        self.countedPositionSeconds = countedPositionSeconds
        self.newMediaEndSeconds = newMediaEndSeconds
        self.downloadedBytes = downloadedBytes
        self.phase = phase
        self.bufferSeconds = bufferSeconds
        self.inFlight = inFlight
    }
}

public enum NoProgressVerdict: Sendable, Equatable {
    /// The clock or the bytes moved at this observation.
    case progressing
    /// Nothing moved for this many seconds, under the timeout (or the watchdog is off).
    case quiet(secondsWithoutProgress: Double)
    /// Nothing moved for the timeout: end the session.
    case timedOut(NoProgressRecord)
}

public struct NoProgressWatchdog: Sendable, Equatable {
    /// The default bound, seconds: longer than any single recovery hlsplay performs on its own (a
    /// wedge re-request 3–10 s, a retry backoff ≤ 8 s, Retry-After ≤ 30 s, a live restart 10–18 s),
    /// so the watchdog only ends sessions that nothing else would.
    public static let defaultTimeoutSeconds = 60.0
    /// Media-clock moves smaller than this are not progress (rounding of a frozen clock), seconds.
    public static let positionToleranceSeconds = 0.001

    /// nil: off.
    public let timeoutSeconds: Double?
    public private(set) var lastProgressAt: MonotonicInstant
    /// The media clock as counted (never beyond `newMediaEndSeconds`), seconds.
    public private(set) var countedPositionSeconds: Double?
    /// The end of the buffer when new bytes last extended it, seconds of media.
    public private(set) var newMediaEndSeconds: Double?
    public private(set) var downloadedBytes: Int
    /// New bytes arrived that the buffer has not grown by yet (demuxing follows the download).
    public private(set) var newBytesNotYetBuffered = false

    /// Progress is counted from `startedAt` (the session's start).
    public init(timeoutSeconds: Double?, startedAt: MonotonicInstant) {
        self.timeoutSeconds = timeoutSeconds.flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
        self.lastProgressAt = startedAt
        self.downloadedBytes = 0
    }

    /// One observation: the media clock, the end of what is buffered, and the bytes counted as new
    /// so far (never decreasing). The first observation is the baseline: its position is not
    /// progress, and what is buffered by then counts as new media.
    public mutating func observe(
        positionSeconds position: Double, bufferedEndSeconds bufferedEnd: Double,
        downloadedBytes bytes: Int, at now: MonotonicInstant
    ) -> NoProgressVerdict {
        let downloaded = bytes > downloadedBytes
        if downloaded {
            downloadedBytes = bytes
            newBytesNotYetBuffered = true
        }
        // New bytes extend what counts as new media the next time the buffer grows.
        if newMediaEndSeconds == nil {
            // The baseline: whatever is buffered by now came from the bytes counted so far.
            newMediaEndSeconds = bufferedEnd
            newBytesNotYetBuffered = false
        } else if newBytesNotYetBuffered, bufferedEnd > newMediaEndSeconds! {
            newMediaEndSeconds = bufferedEnd
            newBytesNotYetBuffered = false
        }
        let counted = min(position, newMediaEndSeconds ?? position)
        let moved = countedPositionSeconds.map { counted > $0 + Self.positionToleranceSeconds } ?? false
        if countedPositionSeconds == nil || moved { countedPositionSeconds = counted }
        if moved || downloaded {
            lastProgressAt = now
            return .progressing
        }
        let quiet = max(0, now.seconds(since: lastProgressAt))
        guard let timeout = timeoutSeconds, quiet >= timeout else { return .quiet(secondsWithoutProgress: quiet) }
        return .timedOut(
            NoProgressRecord(
                timeoutSeconds: timeout, secondsWithoutProgress: quiet, positionSeconds: position,
                countedPositionSeconds: countedPositionSeconds ?? counted,
                newMediaEndSeconds: newMediaEndSeconds ?? bufferedEnd, downloadedBytes: downloadedBytes))
    }
}
