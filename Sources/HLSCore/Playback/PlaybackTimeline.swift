// The media clock and the stall rules, as a value type.
//
// The playhead advances at wall-clock rate while playing and freezes while
// stalled. The buffer is what has been demuxed ahead of the playhead. A
// stall starts at the exact instant the playhead reaches the end of what is
// buffered (computed, not sampled, so a coarse tick does not blur it) and
// ends when the buffer ahead reaches the resume threshold. Every change is
// returned as an action, with the instant it happened; the runtime logs it.

/// Thresholds of the playback rules.
public struct PlaybackConfiguration: Sendable, Equatable, Codable {
    /// Forward buffer needed to start playing once the first frame is
    /// decoded, seconds. (AVFoundation's automaticallyWaitsToMinimizeStalling
    /// behaves alike; ExoPlayer's bufferForPlaybackMs is 2.5 s.)
    public var startupBufferSeconds: Double = 2.0
    /// Forward buffer needed to resume after a stall, seconds. Larger than
    /// the startup threshold so a thin link does not stutter in and out.
    public var resumeBufferSeconds: Double = 4.0

    public init(startupBufferSeconds: Double = 2.0, resumeBufferSeconds: Double = 4.0) {
        self.startupBufferSeconds = startupBufferSeconds
        self.resumeBufferSeconds = resumeBufferSeconds
    }
}

public enum PlaybackPhase: String, Sendable, Equatable, Codable {
    /// Before the first start: waiting for the first frame and the startup buffer.
    case startingUp
    case playing
    /// The buffer ran dry; the clock is frozen.
    case stalled
    /// The end of the stream was played.
    case ended
}

public enum PlaybackAction: Sendable, Equatable {
    case started(at: MonotonicInstant, positionSeconds: Double, bufferSeconds: Double)
    case stallStarted(at: MonotonicInstant, positionSeconds: Double)
    case stallEnded(at: MonotonicInstant, positionSeconds: Double, stallSeconds: Double, bufferSeconds: Double)
    case ended(at: MonotonicInstant, positionSeconds: Double)
}

public struct PlaybackTimeline: Sendable, Equatable {
    public private(set) var configuration: PlaybackConfiguration
    public private(set) var phase: PlaybackPhase = .startingUp
    /// Media time where playback begins, seconds.
    public private(set) var startPositionSeconds: Double
    /// End of the media buffered ahead, seconds of media time.
    public private(set) var bufferedEndSeconds: Double
    /// No more media will be appended (VOD fully fetched).
    public private(set) var endOfStream = false
    public private(set) var firstFrameDecoded = false
    public private(set) var stallCount = 0
    public private(set) var totalStallSeconds = 0.0
    public private(set) var stallStartedAt: MonotonicInstant?
    /// The most media the stream can hold ahead of the playhead (the live
    /// window, or what is left of a VOD); the start and resume thresholds in
    /// force are never above it. nil: no ceiling.
    public private(set) var thresholdCeiling: PlaybackThresholdCeiling?

    /// Buffer within this of a threshold counts as reaching it (sums of the
    /// same durations added in another order), seconds.
    public static let thresholdToleranceSeconds = 1e-6

    private var anchorPosition: Double
    private var anchorInstant: MonotonicInstant?

    public init(configuration: PlaybackConfiguration = .init(), startPositionSeconds: Double = 0) {
        self.configuration = configuration
        self.startPositionSeconds = startPositionSeconds
        self.bufferedEndSeconds = startPositionSeconds
        self.anchorPosition = startPositionSeconds
    }

    /// The playhead at `now`, seconds of media time.
    public func positionSeconds(at now: MonotonicInstant) -> Double {
        guard phase == .playing, let anchorInstant else { return anchorPosition }
        return min(anchorPosition + max(0, now.seconds(since: anchorInstant)), bufferedEndSeconds)
    }

    /// Forward buffer at `now`, seconds (never negative).
    public func bufferSeconds(at now: MonotonicInstant) -> Double {
        max(0, bufferedEndSeconds - positionSeconds(at: now))
    }

    /// Media seconds played so far.
    public func playedSeconds(at now: MonotonicInstant) -> Double {
        max(0, positionSeconds(at: now) - startPositionSeconds)
    }

    /// The startup threshold in force: the configured one, clamped to the ceiling, seconds.
    public var startupThresholdSeconds: Double {
        min(configuration.startupBufferSeconds, thresholdCeiling?.seconds ?? .infinity)
    }

    /// The resume threshold in force: the configured one, clamped to the ceiling, seconds.
    public var resumeThresholdSeconds: Double {
        min(configuration.resumeBufferSeconds, thresholdCeiling?.seconds ?? .infinity)
    }

    /// Sets (or clears) what the stream can hold ahead; the thresholds are clamped to it from the next check.
    public mutating func setThresholdCeiling(_ ceiling: PlaybackThresholdCeiling?) {
        thresholdCeiling = ceiling
    }

    /// The thresholds the ceiling lowers now (the startup one only before the first start).
    public var clampedThresholds: [ThresholdClamp] {
        var out: [ThresholdClamp] = []
        if phase == .startingUp, startupThresholdSeconds < configuration.startupBufferSeconds {
            out.append(
                ThresholdClamp(
                    threshold: .startup, requestedSeconds: configuration.startupBufferSeconds,
                    clampedSeconds: startupThresholdSeconds, ceiling: thresholdCeiling))
        }
        if resumeThresholdSeconds < configuration.resumeBufferSeconds {
            out.append(
                ThresholdClamp(
                    threshold: .resume, requestedSeconds: configuration.resumeBufferSeconds,
                    clampedSeconds: resumeThresholdSeconds, ceiling: thresholdCeiling))
        }
        return out
    }

    /// Changes the resume threshold (a playback policy's knob); applies from the next stall check.
    public mutating func setResumeBufferSeconds(_ seconds: Double) {
        configuration.resumeBufferSeconds = max(0, seconds)
    }

    /// Changes the startup threshold (before playback starts): e.g. an LL-HLS
    /// stream starts as soon as PART-HOLD-BACK is buffered.
    public mutating func setStartupBufferSeconds(_ seconds: Double) {
        precondition(phase == .startingUp, "the startup threshold is set before playback starts")
        configuration.startupBufferSeconds = max(0, seconds)
    }

    /// Sets where playback begins (before anything is buffered): e.g. the live start point.
    public mutating func setStartPosition(_ seconds: Double) {
        precondition(phase == .startingUp, "the start position is set before playback starts")
        startPositionSeconds = seconds
        anchorPosition = seconds
        bufferedEndSeconds = max(bufferedEndSeconds, seconds)
        if bufferedEndSeconds < seconds { bufferedEndSeconds = seconds }
    }

    /// Moves time forward to `now`: the buffer may have run dry, or a start may be due.
    public mutating func advance(to now: MonotonicInstant) -> [PlaybackAction] {
        var actions: [PlaybackAction] = []
        if phase == .playing, let anchorInstant {
            let dryAt = anchorInstant.advanced(bySeconds: bufferedEndSeconds - anchorPosition)
            if now >= dryAt {
                anchorPosition = bufferedEndSeconds
                self.anchorInstant = dryAt
                if endOfStream {
                    phase = .ended
                    actions.append(.ended(at: dryAt, positionSeconds: anchorPosition))
                } else {
                    phase = .stalled
                    stallCount += 1
                    stallStartedAt = dryAt
                    actions.append(.stallStarted(at: dryAt, positionSeconds: anchorPosition))
                }
            }
        }
        if phase == .startingUp || phase == .stalled {
            let ahead = bufferedEndSeconds - anchorPosition
            let threshold = phase == .startingUp ? startupThresholdSeconds : resumeThresholdSeconds
            let enough = ahead + Self.thresholdToleranceSeconds >= threshold || (endOfStream && ahead > 0)
            if firstFrameDecoded && enough {
                if phase == .stalled, let stalledAt = stallStartedAt {
                    let stall = max(0, now.seconds(since: stalledAt))
                    totalStallSeconds += stall
                    stallStartedAt = nil
                    actions.append(.stallEnded(at: now, positionSeconds: anchorPosition, stallSeconds: stall, bufferSeconds: ahead))
                } else {
                    actions.append(.started(at: now, positionSeconds: anchorPosition, bufferSeconds: ahead))
                }
                phase = .playing
                anchorInstant = now
            } else if endOfStream && ahead <= 0 && firstFrameDecoded {
                // Nothing left to play.
                if phase == .stalled, let stalledAt = stallStartedAt {
                    totalStallSeconds += max(0, now.seconds(since: stalledAt))
                    stallStartedAt = nil
                }
                phase = .ended
                actions.append(.ended(at: now, positionSeconds: anchorPosition))
            }
        }
        return actions
    }

    /// Media was appended up to `endSeconds` at `now` (the buffered end never moves backwards here).
    public mutating func appendBuffered(upTo endSeconds: Double, at now: MonotonicInstant) -> [PlaybackAction] {
        var actions = advance(to: now)
        bufferedEndSeconds = max(bufferedEndSeconds, endSeconds)
        actions += advance(to: now)
        return actions
    }

    /// A seek to new media (a live resync to the edge): what was buffered
    /// ahead of the playhead is dropped and new media continues from the
    /// playhead. While playing, a stall starts at once (nothing is ahead) and
    /// ends when the resume threshold is buffered again.
    public mutating func discardBuffered(at now: MonotonicInstant) -> [PlaybackAction] {
        var actions = advance(to: now)
        let position = positionSeconds(at: now)
        if phase == .playing {
            anchorPosition = position
            anchorInstant = now
        }
        bufferedEndSeconds = position
        actions += advance(to: now)
        return actions
    }

    /// No more media will come.
    public mutating func markEndOfStream(at now: MonotonicInstant) -> [PlaybackAction] {
        var actions = advance(to: now)
        endOfStream = true
        actions += advance(to: now)
        return actions
    }

    /// The first video frame was decoded.
    public mutating func markFirstFrameDecoded(at now: MonotonicInstant) -> [PlaybackAction] {
        var actions = advance(to: now)
        firstFrameDecoded = true
        actions += advance(to: now)
        return actions
    }

    /// Stops the clock where it is (the session is ending), closing an open stall.
    public mutating func finish(at now: MonotonicInstant) -> [PlaybackAction] {
        var actions = advance(to: now)
        let position = positionSeconds(at: now)
        if phase == .stalled, let stalledAt = stallStartedAt {
            let stall = max(0, now.seconds(since: stalledAt))
            totalStallSeconds += stall
            stallStartedAt = nil
            actions.append(.stallEnded(at: now, positionSeconds: position, stallSeconds: stall, bufferSeconds: bufferedEndSeconds - position))
        }
        if phase != .ended {
            anchorPosition = position
            anchorInstant = now
            phase = .ended
        }
        return actions
    }

    /// Stall seconds so far, counting an open stall up to `now`.
    public func stallSeconds(at now: MonotonicInstant) -> Double {
        totalStallSeconds + (stallStartedAt.map { max(0, now.seconds(since: $0)) } ?? 0)
    }
}
