// The numeric ranges the parser accepts. RFC 8216 §4.2 types a decimal-integer
// as 0 to 2^64−1 and a decimal-floating-point without a bound; a player has to
// do arithmetic on them (the next Media Sequence Number, a byte range's last
// byte, seconds to nanoseconds), so a playlist whose numbers would overflow
// that arithmetic is refused where it is read, with the line and the rule
// (`PlaylistError.Kind.outOfRange`), instead of crashing the process later.
// Policy and reasons: docs/playlist-parsing.md, "Numbers".

import Foundation

public enum PlaylistRanges {
    /// 2^53 − 1, the largest integer that a Double, JavaScript and jq hold exactly: every integer
    /// the session log carries (Media Sequence Numbers, byte offsets, bit rates) reads back as
    /// written, and Int arithmetic on it (+1, + a segment count) has 2^63 − 2^53 of headroom.
    public static let maxExactInteger = 9_007_199_254_740_991

    /// The Media Sequence Number of every segment (EXT-X-MEDIA-SEQUENCE + EXT-X-SKIP's
    /// SKIPPED-SEGMENTS + its index) and of the one after the last (the segment a blocking reload
    /// or a live reload waits for) is at most this. Real streams number from 0, or from a clock
    /// (seconds or milliseconds since 1970 divided by the segment duration: below 2^41).
    public static let maxMediaSequence = maxExactInteger
    /// EXT-X-DISCONTINUITY-SEQUENCE plus the EXT-X-DISCONTINUITY tags of the playlist.
    public static let maxDiscontinuitySequence = maxExactInteger
    /// The end (offset + length) of every byte range: EXT-X-BYTERANGE, EXT-X-MAP and EXT-X-PART
    /// BYTERANGE, PRELOAD-HINT BYTERANGE-START + BYTERANGE-LENGTH. 8 PiB; bytes.
    public static let maxByteRangeEnd = maxExactInteger
    /// BANDWIDTH, AVERAGE-BANDWIDTH and EXT-X-BITRATE (× 1000), bits per second.
    public static let maxBitrateBps = maxExactInteger
    /// EXT-X-RENDITION-REPORT LAST-MSN and LAST-PART.
    public static let maxReportedPosition = maxExactInteger
    /// RESOLUTION width and height each, pixels: FFmpeg's `int`, and width × height fits in 64 bits.
    public static let maxResolutionSide = Int(Int32.max)

    /// EXTINF, EXT-X-TARGETDURATION, EXT-X-PART DURATION and PART-TARGET, seconds: 10^6 s (11.6
    /// days). Segments are seconds long (RFC 8216 §6.2.1 suggests 6 s targets), but hls.js's own test
    /// playlists write EXTINF:1000000 and hls.js plays them, so that is where the bound sits; a
    /// segment of 10^6 s is 10^15 ns, far inside every conversion the player makes of it.
    public static let maxSegmentDurationSeconds = 1_000_000.0
    /// HOLD-BACK, PART-HOLD-BACK, CAN-SKIP-UNTIL and EXT-X-DATERANGE DURATION / PLANNED-DURATION,
    /// seconds: the longest playlist the default limits allow (100 000 segments of 10^6 s).
    public static let maxSpanSeconds = 100_000_000_000.0

    // What each range error's rule says (after "PlaylistRanges: ").
    static let mediaSequenceRange = "a Media Sequence Number, and the one after the last segment, is at most 2^53-1"
    static let discontinuitySequenceRange = "a Discontinuity Sequence Number is at most 2^53-1"
    static let byteRangeRange = "a byte range's offset + length is at most 2^53-1"
    static let bitrateRange = "a bit rate (BANDWIDTH, AVERAGE-BANDWIDTH, EXT-X-BITRATE) is at most 2^53-1 bit/s"
    static let reportRange = "LAST-MSN and LAST-PART are at most 2^53-1"
    static let durationRange = "a duration (EXTINF, EXT-X-TARGETDURATION, PART DURATION, PART-TARGET) is at most 1000000 s"
    static let spanRange = "HOLD-BACK, PART-HOLD-BACK, CAN-SKIP-UNTIL and DATERANGE durations are at most 100000000000 s"

    /// The rule every range error names.
    static func rule(_ what: String) -> String {
        "PlaylistRanges: \(what) (docs/playlist-parsing.md, \"Numbers\")"
    }

    static func error(_ lineNumber: Int, _ message: String, rule what: String) -> PlaylistError {
        PlaylistError(kind: .outOfRange, lineNumber: lineNumber, rule: rule(what), message: message)
    }
}
