// Live resync: what to do when a live stream's playhead falls out of the
// window or stalls for too long.
//
// First resync to the live edge — with the recovery cap applied on that path
// too (the runtime feeds StartupCapEvent.liveResync to the cap controller),
// so the seek cannot re-select the rung that just failed. If playback does
// not start or resume within a bound, escalate to a full restart (reload the
// multivariant playlist, fresh connection, recovery cap again); after a
// bounded number of restarts, give up. Only the media clock playing again
// ends an episode: a decoded frame does not — one segment can decode while
// the buffer never reaches the start or resume threshold, and a loop of such
// resyncs must still escalate. There is deliberately no "likely to keep up"
// input: while the estimate is suspect that signal is the corrupted one. Pure
// value type, time passed in. Thresholds: docs/startup-cap.md.

import Foundation

public struct LiveResyncConfiguration: Sendable, Equatable, Codable {
    // Stall threshold S = max(minimumStallResyncSeconds, stallResyncTargetDurations × target duration).
    /// A live stall this many target durations long triggers a resync. By
    /// then the wedge and over-selection detectors (seconds) have had their
    /// turn; a stall this long means the position itself is going stale. Count.
    public var stallResyncTargetDurations: Double = 2
    /// Lower bound of S, seconds (short target durations).
    public var minimumStallResyncSeconds: Double = 6
    // Resync deadline D = max(minimumResyncDeadlineSeconds, resyncDeadlineTargetDurations × target duration).
    /// Playback must start or resume within this many target durations of a
    /// resync: one playlist reload plus the resume threshold's worth of
    /// lowest-rung media, with room for a link at half the rung's rate. Count.
    public var resyncDeadlineTargetDurations: Double = 2
    /// Lower bound of D, seconds.
    public var minimumResyncDeadlineSeconds: Double = 6
    // Restart deadline R = max(minimumRestartDeadlineSeconds, restartDeadlineTargetDurations × target duration).
    /// A restart also reloads the multivariant playlist (one more round
    /// trip, maybe a new connection): one target duration more than a resync. Count.
    public var restartDeadlineTargetDurations: Double = 3
    /// Lower bound of R, seconds.
    public var minimumRestartDeadlineSeconds: Double = 10
    /// Restarts tried before giving up (fatal error). Count.
    public var maximumRestarts: Int = 3

    public init() {}

    public func stallResyncSeconds(targetDurationSeconds td: Double) -> Double {
        max(minimumStallResyncSeconds, stallResyncTargetDurations * td)
    }
    public func resyncDeadlineSeconds(targetDurationSeconds td: Double) -> Double {
        max(minimumResyncDeadlineSeconds, resyncDeadlineTargetDurations * td)
    }
    public func restartDeadlineSeconds(targetDurationSeconds td: Double) -> Double {
        max(minimumRestartDeadlineSeconds, restartDeadlineTargetDurations * td)
    }
}

/// Why the playhead is out of the live window.
public enum LiveResyncTrigger: String, Sendable, Equatable, Codable {
    /// The next segment is no longer in the playlist.
    case segmentRolledOff = "segment-rolled-off"
    /// The next segment returned 404 (expired on the server).
    case expiredSegment = "expired-segment"
    /// The playhead is further behind the live edge than the window is long.
    case behindWindow = "behind-window"
    /// A live stall lasted the stall threshold.
    case longStall = "long-stall"
}

public enum LiveResyncPhase: String, Sendable, Equatable, Codable {
    case monitoring
    case stalled
    /// Seeking to the live edge, waiting for a frame.
    case resyncing
    /// Full restart in progress, waiting for a frame.
    case restarting
    /// Gave up after `maximumRestarts`.
    case failed
}

public struct LiveResyncRecord: Sendable, Equatable, Codable {
    public var trigger: LiveResyncTrigger
    public var phase: LiveResyncPhase
    /// Restart attempt (0 for a resync).
    public var attempt: Int
    /// Seconds the stall had lasted, when there was one.
    public var stalledSeconds: Double?
    /// Seconds allowed for a frame to follow this step.
    public var deadlineSeconds: Double?
    /// Seconds since the first resync of this episode.
    public var episodeSeconds: Double?
    public var targetDurationSeconds: Double
    /// Always true: resyncs and restarts go through the recovery cap.
    public var recoveryCapApplied: Bool
    /// Seconds from the step (resync or restart) to the first frame decoded from its new position;
    /// nil when none came. For a restart or give-up: of the step that ran out of time. A frame
    /// without playback starting or resuming does not end the episode.
    public var firstFrameSeconds: Double?
    /// For `resolved`: what ended the episode.
    public var resolvedBy: LiveResyncResolution?
    public init(
        trigger: LiveResyncTrigger, phase: LiveResyncPhase, attempt: Int, stalledSeconds: Double?, deadlineSeconds: Double?,
        episodeSeconds: Double?, targetDurationSeconds: Double, recoveryCapApplied: Bool,
        firstFrameSeconds: Double? = nil, resolvedBy: LiveResyncResolution? = nil
    ) {
        self.trigger = trigger
        self.phase = phase
        self.attempt = attempt
        self.stalledSeconds = stalledSeconds
        self.deadlineSeconds = deadlineSeconds
        self.episodeSeconds = episodeSeconds
        self.targetDurationSeconds = targetDurationSeconds
        self.recoveryCapApplied = recoveryCapApplied
        self.firstFrameSeconds = firstFrameSeconds
        self.resolvedBy = resolvedBy
    }
}

/// What ended a resync episode: the media clock playing again.
public enum LiveResyncResolution: String, Sendable, Equatable, Codable {
    /// The stall ended: the resume threshold was buffered at the new position.
    case playbackResumed = "playback-resumed"
    /// The first start: the episode began before playback had ever started.
    case playbackStarted = "playback-started"
}

public enum LiveResyncEvent: Sendable, Equatable {
    case fellOutOfWindow(LiveResyncTrigger, at: MonotonicInstant)
    case stallStarted(at: MonotonicInstant)
    /// The media clock plays again after a stall (this resolves a resync or restart).
    case stallEnded(at: MonotonicInstant)
    /// Playback started for the first time (this resolves a resync or restart decided before it).
    case playbackStarted(at: MonotonicInstant)
    /// A frame was decoded from the position a resync or restart moved to: noted in the
    /// records (`firstFrameSeconds`), but it does not end the episode — playback must play.
    case frameDecoded(at: MonotonicInstant)
    case targetDurationChanged(Double)
    case tick(MonotonicInstant)
}

public enum LiveResyncAction: Sendable, Equatable {
    /// Seek to the live edge; feed StartupCapEvent.liveResync to the cap controller first.
    case resyncToLiveEdge(LiveResyncRecord)
    /// Reload the multivariant playlist and start over on a fresh connection, recovery cap applied.
    case restart(LiveResyncRecord)
    /// Playback started or resumed: the episode is over.
    case resolved(LiveResyncRecord)
    /// Restarts exhausted: end the session with an error.
    case giveUp(LiveResyncRecord)
}

public struct LiveResyncPolicy: Sendable, Equatable {
    public let configuration: LiveResyncConfiguration
    public private(set) var targetDurationSeconds: Double
    public private(set) var phase: LiveResyncPhase = .monitoring
    public private(set) var restartAttempts = 0

    private var stallStartedAt: MonotonicInstant?
    private var stepStartedAt: MonotonicInstant?
    private var episodeStartedAt: MonotonicInstant?
    private var firstFrameAt: MonotonicInstant?
    private var trigger: LiveResyncTrigger = .longStall

    public init(targetDurationSeconds: Double, configuration: LiveResyncConfiguration = .init()) {
        self.targetDurationSeconds = targetDurationSeconds
        self.configuration = configuration
    }

    public mutating func event(_ e: LiveResyncEvent) -> [LiveResyncAction] {
        switch e {
        case .targetDurationChanged(let td):
            if td > 0, td.isFinite { targetDurationSeconds = td }
            return []
        case .stallStarted(let at):
            if phase == .monitoring {
                phase = .stalled
                stallStartedAt = at
            }
            return []
        case .frameDecoded(let at):
            if (phase == .resyncing || phase == .restarting) && firstFrameAt == nil { firstFrameAt = at }
            return []
        case .stallEnded(let at), .playbackStarted(let at):
            switch phase {
            case .stalled:
                phase = .monitoring
                stallStartedAt = nil
                return []
            case .resyncing, .restarting:
                var record = self.record(phase: phase, at: at, deadline: nil)
                if case .playbackStarted = e { record.resolvedBy = .playbackStarted } else { record.resolvedBy = .playbackResumed }
                phase = .monitoring
                stallStartedAt = nil
                stepStartedAt = nil
                episodeStartedAt = nil
                firstFrameAt = nil
                restartAttempts = 0
                return [.resolved(record)]
            case .monitoring, .failed:
                return []
            }
        case .fellOutOfWindow(let trigger, let at):
            guard phase == .monitoring || phase == .stalled else { return [] }
            return startResync(trigger, at: at)
        case .tick(let now):
            switch phase {
            case .stalled:
                guard let since = stallStartedAt,
                    now.seconds(since: since) >= configuration.stallResyncSeconds(targetDurationSeconds: targetDurationSeconds)
                else { return [] }
                return startResync(.longStall, at: now)
            case .resyncing:
                guard let step = stepStartedAt,
                    now.seconds(since: step) >= configuration.resyncDeadlineSeconds(targetDurationSeconds: targetDurationSeconds)
                else { return [] }
                return startRestart(at: now)
            case .restarting:
                guard let step = stepStartedAt,
                    now.seconds(since: step) >= configuration.restartDeadlineSeconds(targetDurationSeconds: targetDurationSeconds)
                else { return [] }
                return startRestart(at: now)
            case .monitoring, .failed:
                return []
            }
        }
    }

    private mutating func startResync(_ trigger: LiveResyncTrigger, at: MonotonicInstant) -> [LiveResyncAction] {
        self.trigger = trigger
        phase = .resyncing
        stepStartedAt = at
        episodeStartedAt = at
        firstFrameAt = nil
        return [
            .resyncToLiveEdge(
                record(
                    phase: .resyncing, at: at,
                    deadline: configuration.resyncDeadlineSeconds(targetDurationSeconds: targetDurationSeconds)))
        ]
    }

    private mutating func startRestart(at: MonotonicInstant) -> [LiveResyncAction] {
        guard restartAttempts < configuration.maximumRestarts else {
            phase = .failed
            return [.giveUp(record(phase: .failed, at: at, deadline: nil))]
        }
        // The restart's record says whether the step that ran out of time got as far as a frame.
        let ranOut = stepFirstFrameSeconds
        restartAttempts += 1
        phase = .restarting
        stepStartedAt = at
        firstFrameAt = nil
        var r = record(phase: .restarting, at: at, deadline: configuration.restartDeadlineSeconds(targetDurationSeconds: targetDurationSeconds))
        r.firstFrameSeconds = ranOut
        return [.restart(r)]
    }

    /// Seconds from the current step to the first frame from its new position (nil: none yet).
    private var stepFirstFrameSeconds: Double? {
        guard let frame = firstFrameAt, let step = stepStartedAt else { return nil }
        return frame.seconds(since: step)
    }

    private func record(phase: LiveResyncPhase, at: MonotonicInstant, deadline: Double?) -> LiveResyncRecord {
        LiveResyncRecord(
            trigger: trigger, phase: phase, attempt: restartAttempts,
            stalledSeconds: stallStartedAt.map { at.seconds(since: $0) }, deadlineSeconds: deadline,
            episodeSeconds: episodeStartedAt.map { at.seconds(since: $0) },
            targetDurationSeconds: targetDurationSeconds, recoveryCapApplied: true,
            firstFrameSeconds: stepFirstFrameSeconds)
    }
}
