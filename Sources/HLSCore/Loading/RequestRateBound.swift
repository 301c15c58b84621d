// The request-rate bound: however the loader is driven — a reload asked for in
// a loop, a delta update that never merges, a server that does not block —
// requests of one kind never go out faster than the playlist's own durations
// allow. A backstop under the pacing the live and LL-HLS rules already do,
// not a replacement for it: a correct loader stays inside it and is never
// held back; a loop that would hammer the server is slowed to the bound and
// logged.
//
// Per resource kind (playlists, LL-HLS parts, segments) and track (the
// variant's, an alternate audio rendition's), a generic cell rate algorithm:
// `burst` requests may go back to back, after which one more may start every
// `minimumIntervalSeconds`. The interval is half of the duration the kind is
// paced by (RFC 8216 §6.3.4 reloads an unchanged playlist after half the
// target duration; the LL-HLS draft's client rules pace on the part target),
// so a session that keeps up with real time uses at most half the bound.
// Pure value type: the instant is an argument; the runtime sleeps until the
// start it is given.

import Foundation

/// What a request fetches, as the rate bound counts it.
public enum PacedRequestKind: String, Sendable, Equatable, Hashable, Codable, CaseIterable {
    /// Multivariant and media playlists (reloads, blocking reloads, delta updates).
    case playlist
    /// LL-HLS parts (listed or preload-hinted).
    case part
    /// Media segments (whole segments of an LL-HLS stream included).
    case segment
}

/// What a kind's bound is derived from: the playlist in force and the forward-buffer target.
public struct RequestRateInputs: Sendable, Equatable, Codable {
    /// The target duration the live rules use (`LivePlaylistRules.targetDurationSeconds(for:)`), seconds; nil before a media playlist is known.
    public var targetDurationSeconds: Double?
    /// EXT-X-PART-INF PART-TARGET, seconds (LL-HLS only).
    public var partTargetSeconds: Double?
    /// The mean EXTINF of the playlist's segments, seconds.
    public var meanSegmentDurationSeconds: Double?
    /// The forward-buffer target in force: segments and parts may be fetched back to back up to it, seconds.
    public var forwardBufferTargetSeconds: Double

    public init(
        targetDurationSeconds: Double? = nil, partTargetSeconds: Double? = nil, meanSegmentDurationSeconds: Double? = nil,
        forwardBufferTargetSeconds: Double
    ) {
        self.targetDurationSeconds = targetDurationSeconds
        self.partTargetSeconds = partTargetSeconds
        self.meanSegmentDurationSeconds = meanSegmentDurationSeconds
        self.forwardBufferTargetSeconds = forwardBufferTargetSeconds
    }

    /// The inputs a media playlist gives (`forwardBufferTargetSeconds` from the session).
    public init(playlist: MediaPlaylist, forwardBufferTargetSeconds: Double) {
        let durations = playlist.segments.map(\.durationSeconds)
        self.init(
            targetDurationSeconds: LivePlaylistRules.targetDurationSeconds(for: playlist),
            partTargetSeconds: playlist.partTargetSeconds,
            meanSegmentDurationSeconds: durations.isEmpty ? nil : durations.reduce(0, +) / Double(durations.count),
            forwardBufferTargetSeconds: forwardBufferTargetSeconds)
    }
}

/// One kind's bound: `burst` requests back to back, then one per `minimumIntervalSeconds`.
public struct RequestRateLimit: Sendable, Equatable, Codable {
    public var kind: PacedRequestKind
    /// Sustained: at most one request per this, seconds.
    public var minimumIntervalSeconds: Double
    /// Requests that may start back to back before the interval applies. Count.
    public var burst: Int
    /// Which duration the interval is half of, in words (e.g. "half the part target").
    public var basis: String
    public var inputs: RequestRateInputs

    public init(kind: PacedRequestKind, minimumIntervalSeconds: Double, burst: Int, basis: String, inputs: RequestRateInputs) {
        self.kind = kind
        self.minimumIntervalSeconds = minimumIntervalSeconds
        self.burst = burst
        self.basis = basis
        self.inputs = inputs
    }

    /// The most requests this bound lets start within `seconds`. Count.
    public func maximumRequests(inSeconds seconds: Double) -> Int {
        burst.saturatingAdd(Int(saturating: (max(0, seconds) / minimumIntervalSeconds).rounded(.down)))
    }
}

public enum RequestRateRules {
    /// The interval is this fraction of the duration a kind is paced by. Half: an
    /// unchanged live playlist is reloaded after half the target duration
    /// (RFC 8216 §6.3.4), and media that keeps up with real time needs one
    /// segment (or part) per duration, so a correct session uses at most half the bound.
    public static let intervalFraction = 0.5
    /// No kind may go faster than one request per this, whatever the playlist
    /// says (EXTINF:0, PART-TARGET=0.001): at most 10 requests a second, seconds.
    public static let minimumIntervalFloorSeconds = 0.1
    /// The interval before any media playlist is known (the multivariant
    /// playlist, the first media playlist), seconds.
    public static let unknownDurationIntervalSeconds = 0.5
    /// Playlists that may be requested back to back: the multivariant, a media
    /// and an audio rendition's playlist at start, a variant switch, a resync
    /// or restart, the full reload after a delta update that does not merge. Count.
    public static let playlistBurst = 4
    /// Segments or parts back to back beyond those that fill the forward-buffer
    /// target (retries, a re-requested wedge, a segment re-decided on another rung). Count.
    public static let mediaBurstSlack = 4

    /// The bound of `kind` under `inputs`.
    public static func limit(for kind: PacedRequestKind, inputs: RequestRateInputs) -> RequestRateLimit {
        let paced: (seconds: Double, basis: String)?
        switch kind {
        case .playlist:
            if let part = positive(inputs.partTargetSeconds) {
                paced = (part, "half the part target")
            } else if let target = positive(inputs.targetDurationSeconds) {
                paced = (target, "half the target duration")
            } else {
                paced = nil
            }
        case .part:
            paced = positive(inputs.partTargetSeconds).map { ($0, "half the part target") }
        case .segment:
            if let mean = positive(inputs.meanSegmentDurationSeconds) {
                paced = (mean, "half the mean segment duration")
            } else {
                paced = positive(inputs.targetDurationSeconds).map { ($0, "half the target duration") }
            }
        }
        var interval = paced.map { intervalFraction * $0.seconds } ?? unknownDurationIntervalSeconds
        var basis = paced?.basis ?? "no media playlist yet"
        if interval < minimumIntervalFloorSeconds {
            interval = minimumIntervalFloorSeconds
            basis += " (below the floor: the floor)"
        }
        let burst: Int
        switch kind {
        case .playlist:
            burst = playlistBurst
        case .part, .segment:
            // Enough to fill the forward-buffer target back to back, counted in units of
            // at least two floors (a unit shorter than that would make the burst unbounded).
            let unit = max(paced?.seconds ?? unknownDurationIntervalSeconds / intervalFraction, minimumIntervalFloorSeconds / intervalFraction)
            let fill = max(0, inputs.forwardBufferTargetSeconds.isFinite ? inputs.forwardBufferTargetSeconds : 0) / unit
            burst = Int(min(fill.rounded(.up), 100_000)) + mediaBurstSlack
        }
        return RequestRateLimit(kind: kind, minimumIntervalSeconds: interval, burst: burst, basis: basis, inputs: inputs)
    }

    private static func positive(_ value: Double?) -> Double? {
        guard let value, value.isFinite, value > 0 else { return nil }
        return value
    }
}

/// An episode in which the bound held requests of one kind back: logged when
/// it starts (`holding`, with the bound and its inputs) and when it ends
/// (`released`: a whole burst was free again, or the session ended).
public struct RequestPacingEpisode: Sendable, Equatable, Codable {
    public enum Action: String, Sendable, Equatable, Codable {
        /// The first request the bound held back.
        case holding
        /// The bound no longer holds anything back (or the session ended): the episode's totals.
        case released
    }
    public var action: Action
    public var kind: PacedRequestKind
    /// `audio` for an alternate audio rendition's requests; absent for the variant's.
    public var track: String?
    /// The bound in force, with what it was derived from.
    public var limit: RequestRateLimit
    /// `holding`: how long the first held request waits, seconds.
    public var waitSeconds: Double?
    /// `released`: requests held back in the episode, and their waits added up (seconds).
    public var heldRequests: Int?
    public var heldSeconds: Double?
    /// `released`: requests of the kind in the episode, held or not.
    public var requests: Int?
    /// `released`: from the first hold to the release, seconds.
    public var episodeSeconds: Double?
    /// `released` at the end of the session rather than because the pressure stopped.
    public var sessionEnded: Bool?
    /// Set by the runtime: the request held back first (`holding`) and why it was made.
    public var url: String?
    public var purpose: RequestPurpose?

    public init(action: Action, kind: PacedRequestKind, track: String?, limit: RequestRateLimit) {
        self.action = action
        self.kind = kind
        self.track = track
        self.limit = limit
    }
}

/// When a request may start, and the pacing episode it opened or closed.
public struct RequestAdmission: Sendable, Equatable {
    /// Start the request at this instant (the one asked about when nothing holds it back).
    public var startAt: MonotonicInstant
    /// Seconds from the instant asked about to `startAt` (0: not held back).
    public var waitSeconds: Double
    /// This request is the first one held back: log it.
    public var opened: RequestPacingEpisode?
    /// The pressure had stopped before this request: the previous episode, closed.
    public var closed: RequestPacingEpisode?
}

/// The bound's state for a session: one schedule per kind and track.
public struct RequestRateBound: Sendable, Equatable {
    /// Waits shorter than this are not holding anything back (clock granularity), seconds.
    public static let heldThresholdSeconds = 0.001

    struct Key: Hashable, Sendable {
        var kind: PacedRequestKind
        var track: String?
    }

    struct Episode: Equatable, Sendable {
        var startedAt: MonotonicInstant
        var limit: RequestRateLimit
        var heldRequests: Int
        var heldSeconds: Double
        var requests: Int
    }

    struct Schedule: Equatable, Sendable {
        /// The theoretical arrival time of the next request (GCRA): every admitted request moves it one interval on.
        var theoreticalArrival: MonotonicInstant
        var episode: Episode?
    }

    private var schedules: [Key: Schedule] = [:]

    public init() {}

    /// Admits one request of `kind` asked for at `now` under `limit`: when it may start
    /// (the caller waits until then), counting it from that start.
    public mutating func admit(
        _ kind: PacedRequestKind, track: String? = nil, limit: RequestRateLimit,
        at now: MonotonicInstant
    ) -> RequestAdmission {
        let key = Key(kind: kind, track: track)
        let interval = max(limit.minimumIntervalSeconds, 0)
        let tolerance = Double(max(limit.burst, 1) - 1) * interval
        var schedule = schedules[key] ?? Schedule(theoreticalArrival: now, episode: nil)
        let previousArrival = schedule.theoreticalArrival
        let idle = previousArrival <= now
        let earliest = schedule.theoreticalArrival.advanced(bySeconds: -tolerance)
        let startAt = max(now, earliest)
        schedule.theoreticalArrival = max(schedule.theoreticalArrival, startAt).advanced(bySeconds: interval)
        let wait = max(0, startAt.seconds(since: now))
        var admission = RequestAdmission(startAt: startAt, waitSeconds: wait, opened: nil, closed: nil)
        if idle, let episode = schedule.episode {
            // A whole burst is free again: what held requests back stopped when the schedule caught up.
            admission.closed = Self.released(episode, kind: kind, track: track, at: previousArrival, sessionEnded: false)
            schedule.episode = nil
        }
        if wait >= Self.heldThresholdSeconds {
            if schedule.episode == nil {
                schedule.episode = Episode(startedAt: now, limit: limit, heldRequests: 1, heldSeconds: wait, requests: 1)
                var opened = RequestPacingEpisode(action: .holding, kind: kind, track: track, limit: limit)
                opened.waitSeconds = wait
                admission.opened = opened
            } else {
                schedule.episode!.heldRequests += 1
                schedule.episode!.heldSeconds += wait
                schedule.episode!.requests += 1
                schedule.episode!.limit = limit
            }
        } else if schedule.episode != nil {
            schedule.episode!.requests += 1
        }
        schedules[key] = schedule
        return admission
    }

    /// Closes the episodes still open (the session is ending).
    public mutating func finish(at now: MonotonicInstant) -> [RequestPacingEpisode] {
        var closed: [RequestPacingEpisode] = []
        for (key, schedule) in schedules.sorted(by: { ($0.key.kind.rawValue, $0.key.track ?? "") < ($1.key.kind.rawValue, $1.key.track ?? "") }) {
            guard let episode = schedule.episode else { continue }
            closed.append(Self.released(episode, kind: key.kind, track: key.track, at: now, sessionEnded: true))
            schedules[key]?.episode = nil
        }
        return closed
    }

    private static func released(
        _ e: Episode, kind: PacedRequestKind, track: String?, at now: MonotonicInstant,
        sessionEnded: Bool
    ) -> RequestPacingEpisode {
        var r = RequestPacingEpisode(action: .released, kind: kind, track: track, limit: e.limit)
        r.heldRequests = e.heldRequests
        r.heldSeconds = e.heldSeconds
        r.requests = e.requests
        r.episodeSeconds = max(0, now.seconds(since: e.startedAt))
        if sessionEnded { r.sessionEnded = true }
        return r
    }
}
