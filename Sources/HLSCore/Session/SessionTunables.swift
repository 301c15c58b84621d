// The session loop's own tunables: how often the loader looks again, how much
// recent evidence the audio-only fallback weighs, and when the decode side is
// judged stuck. The real and the virtual session read the same values from
// `PlayerConfiguration.session`, which the log header shows.

public struct SessionTunables: Sendable, Equatable, Codable {
    /// How often the loader looks again while it may not load (the forward buffer is at its
    /// target, or the byte bound holds), seconds.
    public var loaderPollSeconds: Double
    /// How many of the newest segment transfers the recent-throughput evidence is the lowest of
    /// (RecentSegmentThroughput: the selector's and the over-selection cap's audio-only rule). Count.
    public var recentSegmentThroughputCount: Int
    /// A stream fully loaded with nothing left to decode and still no frame after this long ends
    /// in an error (all its segments were skipped), seconds.
    public var noFrameAtEndSeconds: Double
    /// The decode loop counts as hung when, while playing, a due packet has waited this long with
    /// no packet decoded, seconds.
    public var decodeHangThresholdSeconds: Double

    public init(
        loaderPollSeconds: Double = 0.1, recentSegmentThroughputCount: Int = 3,
        noFrameAtEndSeconds: Double = 1.0, decodeHangThresholdSeconds: Double = 2.0
    ) {
        self.loaderPollSeconds = loaderPollSeconds
        self.recentSegmentThroughputCount = recentSegmentThroughputCount
        self.noFrameAtEndSeconds = noFrameAtEndSeconds
        self.decodeHangThresholdSeconds = decodeHangThresholdSeconds
    }
}

/// The retry policies by what is requested: playlists (needed to go on at all) and media
/// (segments, init sections, keys).
public struct RetryPolicies: Sendable, Equatable, Codable {
    public var playlist: RetryPolicy
    public var segment: RetryPolicy

    public init(playlist: RetryPolicy = .playlist, segment: RetryPolicy = .segment) {
        self.playlist = playlist
        self.segment = segment
    }
}
