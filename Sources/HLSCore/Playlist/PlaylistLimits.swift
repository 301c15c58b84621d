// Resource limits for PlaylistParser: a hostile or broken server must not be
// able to make the parser use unbounded memory or time.

/// Limits applied while parsing one playlist. Each is inclusive: a playlist
/// with exactly `maxSegments` segments parses; one more is a
/// `PlaylistError(kind: .limitExceeded)` whose `rule` names the limit
/// (`"PlaylistLimits.maxSegments"`).
public struct PlaylistLimits: Sendable, Equatable {
    /// Size of the playlist in bytes (UTF-8). Default 4 MiB.
    public var maxBytes: Int
    /// Length of one line in bytes, without its line terminator; also applies to a
    /// URI or quoted-string after variable substitution. Default 64 KiB.
    public var maxLineLength: Int
    /// EXT-X-STREAM-INF entries (EXT-X-I-FRAME-STREAM-INF are counted separately against the same limit). Default 512.
    public var maxVariants: Int
    /// Media segments in one Media Playlist. Default 100 000.
    public var maxSegments: Int
    /// EXT-X-MEDIA entries. Default 1024.
    public var maxRenditions: Int
    /// Attributes in one tag's attribute list. Default 128.
    public var maxAttributes: Int
    /// EXT-X-PART entries in one Media Playlist. Default 100 000.
    public var maxPartialSegments: Int
    /// EXT-X-DEFINE entries. Default 1024.
    public var maxVariables: Int
    /// EXT-X-DATERANGE entries. Default 10 000.
    public var maxDateRanges: Int

    public init(
        maxBytes: Int = 4 * 1024 * 1024, maxLineLength: Int = 64 * 1024, maxVariants: Int = 512,
        maxSegments: Int = 100_000, maxRenditions: Int = 1024, maxAttributes: Int = 128,
        maxPartialSegments: Int = 100_000, maxVariables: Int = 1024, maxDateRanges: Int = 10_000
    ) {
        self.maxBytes = maxBytes
        self.maxLineLength = maxLineLength
        self.maxVariants = maxVariants
        self.maxSegments = maxSegments
        self.maxRenditions = maxRenditions
        self.maxAttributes = maxAttributes
        self.maxPartialSegments = maxPartialSegments
        self.maxVariables = maxVariables
        self.maxDateRanges = maxDateRanges
    }

    public static let `default` = PlaylistLimits()

    static func exceeded(_ name: String, limit: Int, lineNumber: Int, what: String) -> PlaylistError {
        PlaylistError(
            kind: .limitExceeded, lineNumber: lineNumber, rule: "PlaylistLimits.\(name)",
            message: "\(what) exceeds the limit \(name)=\(limit)")
    }
}
