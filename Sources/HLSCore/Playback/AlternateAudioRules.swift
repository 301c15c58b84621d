// An alternate audio rendition's next step (issue 14: what stays in the shell is I/O). The rendition loads beside the
// variant, one segment at a time while its buffered end is behind the variant's: for a VOD by time on the rendition's
// own timeline (its segments need not share the variant's boundaries), for a live stream by media sequence number,
// aligned on the variant's segment with the same number (placed at that segment's start, so the two share one
// timeline). The shell loads, demuxes and places what this says; the rule reads no clock and does no I/O.

public enum AlternateAudioRules {
    /// What the rendition's loader does next.
    public enum Step: Sendable, Equatable {
        /// Nothing now: the audio is not behind the variant; or (live) the variant has not buffered the segment the
        /// audio follows yet, or the rendition's playlist does not list it yet and its reload is not due.
        case wait
        /// Load the rendition's playlist: the first time, or (live) again because it does not list the next segment
        /// yet and a reload is due.
        case loadPlaylist
        /// The rendition ended (a VOD: no segment of it ends after the audio's buffered end).
        case endTrack
        /// Load the rendition's segment at `index` in its playlist, placed at `startSeconds` on the session's timeline.
        case load(index: Int, startSeconds: Double)
        /// Live: segment `mediaSequence` left the rendition's window before it was loaded: skipped (logged), the next
        /// one follows.
        case skipExpired(mediaSequence: Int)
    }

    /// A variant's segment buffered: its media sequence number and where it starts on the session's timeline.
    public struct BufferedSegment: Sendable, Equatable {
        public var mediaSequence: Int
        public var startSeconds: Double

        public init(mediaSequence: Int, startSeconds: Double) {
            self.mediaSequence = mediaSequence
            self.startSeconds = startSeconds
        }
    }

    /// How far from the variant's segment start an audio end may lie and still align on it, seconds.
    public static let alignmentToleranceSeconds = 0.05
    /// How far past the audio's buffered end a VOD segment must reach to be the next one, seconds (below it, the
    /// segment is taken as already buffered: timestamps rounded to the millisecond).
    public static let vodEndToleranceSeconds = 0.001

    /// The next step, and (live) the media sequence number the loader follows after it (`nextMediaSequence` as it
    /// goes in: nil until it has aligned on the variant, and nil again when the variant never buffered that number).
    ///
    /// - Parameters:
    ///   - playlist: the rendition's playlist, nil until it is loaded; `timeline`: its segments' starts (a VOD's).
    ///   - mainEndSeconds, audioEndSeconds: the variant's and the rendition's buffered ends; `mainEnded`: the variant
    ///     has no more media (the audio then loads to its own end).
    ///   - variantSegments: the variant's latest buffered segments, oldest first.
    ///   - secondsSinceReload: since the rendition's playlist was last loaded (nil: never).
    public static func nextStep(
        playlist: MediaPlaylist?, timeline: SegmentTimeline, nextMediaSequence: Int?, mainEndSeconds: Double, audioEndSeconds: Double,
        mainEnded: Bool, variantSegments: [BufferedSegment], secondsSinceReload: Double?
    ) -> (step: Step, nextMediaSequence: Int?) {
        guard audioEndSeconds < mainEndSeconds - vodEndToleranceSeconds || mainEnded else { return (.wait, nextMediaSequence) }
        guard let playlist else { return (.loadPlaylist, nextMediaSequence) }
        if playlist.endList {
            guard let i = timeline.firstSegmentIndex(in: playlist, endingAfter: audioEndSeconds, toleranceSeconds: vodEndToleranceSeconds) else {
                return (.endTrack, nextMediaSequence)
            }
            let next = playlist.segments[i]
            return (.load(index: i, startSeconds: timeline.startSeconds(ofMediaSequence: next.mediaSequence) ?? audioEndSeconds), nextMediaSequence)
        }
        // Live: align on the variant's segment starting where the audio ends (or the first after it).
        var msn = nextMediaSequence
        if msn == nil {
            guard
                let aligned = variantSegments.first(where: { abs($0.startSeconds - audioEndSeconds) < alignmentToleranceSeconds })
                    ?? variantSegments.first(where: { $0.startSeconds >= audioEndSeconds - alignmentToleranceSeconds })
            else { return (.wait, nil) }
            msn = aligned.mediaSequence
        }
        let number = msn!
        guard let entry = variantSegments.first(where: { $0.mediaSequence == number }) else {
            // The variant has not buffered this number yet: wait for it. It went past it (skipped): align again later.
            if let last = variantSegments.last, last.mediaSequence < number { return (.wait, number) }
            return (.wait, nil)
        }
        guard let index = playlist.segmentIndex(ofMediaSequence: number) else {
            if let first = playlist.segments.first, number < first.mediaSequence { return (.skipExpired(mediaSequence: number), number + 1) }
            let delay = LivePlaylistRules.reloadDelaySeconds(
                targetDurationSeconds: LivePlaylistRules.targetDurationSeconds(for: playlist), playlistChanged: false)
            return ((secondsSinceReload.map { $0 >= delay } ?? true) ? .loadPlaylist : .wait, number)
        }
        return (.load(index: index, startSeconds: entry.startSeconds), number)
    }
}
