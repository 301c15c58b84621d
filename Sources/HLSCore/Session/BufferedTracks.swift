// How far each track's media reaches on the media timeline, and which tracks have ended: the variant's own and an
// alternate audio rendition's. What can play is the minimum of the tracks still loading; the stream ends when
// every track has. Held by the session core (SessionCore.tracks), fed by both shells.

/// Where a segment's media goes: the variant's own track, or an alternate audio rendition's (EXT-X-MEDIA
/// TYPE=AUDIO with a URI).
public enum BufferTrack: Sendable, Equatable { case main, alternateAudio }

public struct BufferedTracks: Sendable, Equatable {
    /// Where the variant's media ends, seconds of media time.
    public private(set) var mainEndSeconds = 0.0
    /// Where the alternate audio rendition's media ends; nil without one.
    public private(set) var audioEndSeconds: Double?
    /// The variant's segments are all buffered (VOD).
    public private(set) var mainEnded = false
    /// The audio rendition's segments are all buffered (VOD).
    public private(set) var audioEnded = false

    public init() {}

    /// The end of what can play: the minimum of the tracks still loading (an ended track no longer holds the
    /// other back).
    public var combinedEndSeconds: Double {
        guard let audioEndSeconds, !audioEnded else { return mainEndSeconds }
        return min(mainEndSeconds, audioEndSeconds)
    }

    /// Every track has ended: so has the stream.
    public var allEnded: Bool { mainEnded && (audioEndSeconds == nil || audioEnded) }

    /// Both tracks start at `seconds` (the start, or a seek that dropped what was buffered); `alternateAudio`:
    /// whether an audio rendition loads beside the variant (unchanged when nil).
    public mutating func placed(at seconds: Double, alternateAudio: Bool? = nil) {
        mainEndSeconds = seconds
        if alternateAudio ?? (audioEndSeconds != nil) { audioEndSeconds = seconds } else { audioEndSeconds = nil }
    }

    /// `track`'s media now reaches `end` (never backwards).
    public mutating func extend(_ track: BufferTrack, to end: Double) {
        switch track {
        case .main: mainEndSeconds = max(mainEndSeconds, end)
        case .alternateAudio: audioEndSeconds = max(audioEndSeconds ?? end, end)
        }
    }

    /// `track` has no more media.
    public mutating func end(_ track: BufferTrack) {
        switch track {
        case .main: mainEnded = true
        case .alternateAudio: audioEnded = true
        }
    }

    /// The buffer a main-track segment ending at `end` makes at `positionSeconds`: up to the audio track's end
    /// while that one still loads.
    public func bufferSeconds(mainEndingAt end: Double, positionSeconds: Double) -> Double {
        let audioEnd = audioEnded ? end : (audioEndSeconds ?? end)
        return max(0, min(end, audioEnd) - positionSeconds)
    }
}
