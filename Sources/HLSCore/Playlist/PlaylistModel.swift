// The playlist model, named after RFC 8216 (and its successor draft,
// draft-pantos-hls-rfc8216bis). Each field's comment names the tag or
// attribute it comes from. All types are plain values: parsing is pure
// (see PlaylistParser), and reconciling a reloaded live playlist with the
// previous one is a separate job.

import Foundation

/// The result of parsing one playlist: RFC 8216 §4 distinguishes a
/// Multivariant Playlist (§4.3.4, "master" in RFC 8216) from a Media Playlist (§4.3.3).
public enum Playlist: Sendable, Equatable {
    case multivariant(MultivariantPlaylist)
    case media(MediaPlaylist)
}

/// A tag the parser does not interpret. Kept so nothing is silently lost
/// (RFC 8216 §4.1: "clients MUST ignore any tags they do not recognize").
public struct UnknownTag: Sendable, Equatable {
    /// The whole line, e.g. `#EXT-X-CUE-OUT:30`.
    public var line: String
    /// 1-based line number in the playlist text.
    public var lineNumber: Int
    public init(line: String, lineNumber: Int) {
        self.line = line
        self.lineNumber = lineNumber
    }
}

/// EXT-X-START (§4.4.2.2).
public struct StartPoint: Sendable, Equatable {
    /// TIME-OFFSET, seconds; negative counts from the end of the playlist.
    public var timeOffsetSeconds: Double
    /// PRECISE=YES.
    public var precise: Bool
    public init(timeOffsetSeconds: Double, precise: Bool) {
        self.timeOffsetSeconds = timeOffsetSeconds
        self.precise = precise
    }
}

/// EXT-X-DEFINE (§4.4.2.3), as declared (after resolution the values are substituted).
public enum VariableDefinition: Sendable, Equatable {
    case value(name: String, value: String)
    case importFromParent(name: String)
    case queryParameter(name: String)
}

/// RESOLUTION attribute: decimal-resolution `WxH`.
public struct Resolution: Sendable, Equatable, Hashable {
    public var width: Int
    public var height: Int
    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}

/// EXT-X-STREAM-INF (§4.4.6.2) with the URI line that follows it: one Variant Stream.
public struct VariantStream: Sendable, Equatable {
    /// The resolved URI of the variant's Media Playlist.
    public var uri: URL
    /// BANDWIDTH, bits per second: the peak segment bit rate (required).
    public var bandwidthBps: Int
    /// AVERAGE-BANDWIDTH, bits per second.
    public var averageBandwidthBps: Int?
    /// SCORE (draft).
    public var score: Double?
    /// CODECS, split on commas.
    public var codecs: [String]
    /// SUPPLEMENTAL-CODECS (draft), raw.
    public var supplementalCodecs: String?
    /// RESOLUTION.
    public var resolution: Resolution?
    /// FRAME-RATE, frames per second.
    public var frameRate: Double?
    /// HDCP-LEVEL.
    public var hdcpLevel: String?
    /// VIDEO-RANGE.
    public var videoRange: String?
    /// AUDIO group id.
    public var audioGroup: String?
    /// VIDEO group id.
    public var videoGroup: String?
    /// SUBTITLES group id.
    public var subtitlesGroup: String?
    /// CLOSED-CAPTIONS group id; nil when absent or NONE (see `closedCaptionsNone`).
    public var closedCaptionsGroup: String?
    /// CLOSED-CAPTIONS=NONE (an enumerated string, not a quoted group id).
    public var closedCaptionsNone: Bool
    /// PATHWAY-ID (content steering), default "." per the draft.
    public var pathwayID: String?
    /// STABLE-VARIANT-ID (draft).
    public var stableVariantID: String?
    /// All attributes as parsed, for logging and for attributes not modelled.
    public var attributes: [String: String]

    public init(
        uri: URL, bandwidthBps: Int, averageBandwidthBps: Int? = nil, score: Double? = nil,
        codecs: [String] = [], supplementalCodecs: String? = nil, resolution: Resolution? = nil,
        frameRate: Double? = nil, hdcpLevel: String? = nil, videoRange: String? = nil,
        audioGroup: String? = nil, videoGroup: String? = nil, subtitlesGroup: String? = nil,
        closedCaptionsGroup: String? = nil, closedCaptionsNone: Bool = false,
        pathwayID: String? = nil, stableVariantID: String? = nil, attributes: [String: String] = [:]
    ) {
        self.uri = uri
        self.bandwidthBps = bandwidthBps
        self.averageBandwidthBps = averageBandwidthBps
        self.score = score
        self.codecs = codecs
        self.supplementalCodecs = supplementalCodecs
        self.resolution = resolution
        self.frameRate = frameRate
        self.hdcpLevel = hdcpLevel
        self.videoRange = videoRange
        self.audioGroup = audioGroup
        self.videoGroup = videoGroup
        self.subtitlesGroup = subtitlesGroup
        self.closedCaptionsGroup = closedCaptionsGroup
        self.closedCaptionsNone = closedCaptionsNone
        self.pathwayID = pathwayID
        self.stableVariantID = stableVariantID
        self.attributes = attributes
    }
}

/// EXT-X-I-FRAME-STREAM-INF (§4.4.6.3). Parsed, not played.
public struct IFrameStream: Sendable, Equatable {
    public var uri: URL
    public var bandwidthBps: Int
    public var averageBandwidthBps: Int?
    public var codecs: [String]
    public var resolution: Resolution?
    public var attributes: [String: String]
    public init(
        uri: URL, bandwidthBps: Int, averageBandwidthBps: Int? = nil, codecs: [String] = [],
        resolution: Resolution? = nil, attributes: [String: String] = [:]
    ) {
        self.uri = uri
        self.bandwidthBps = bandwidthBps
        self.averageBandwidthBps = averageBandwidthBps
        self.codecs = codecs
        self.resolution = resolution
        self.attributes = attributes
    }
}

/// EXT-X-MEDIA TYPE (§4.4.6.1).
public enum RenditionType: String, Sendable, Equatable {
    case audio = "AUDIO"
    case video = "VIDEO"
    case subtitles = "SUBTITLES"
    case closedCaptions = "CLOSED-CAPTIONS"
}

/// EXT-X-MEDIA (§4.4.6.1): one Rendition in a group.
public struct Rendition: Sendable, Equatable {
    public var type: RenditionType
    /// URI (resolved); absent for CLOSED-CAPTIONS and for renditions muxed into the variant.
    public var uri: URL?
    public var groupID: String
    public var language: String?
    public var associatedLanguage: String?
    public var name: String
    public var isDefault: Bool
    public var autoselect: Bool
    public var forced: Bool
    /// INSTREAM-ID (CLOSED-CAPTIONS).
    public var instreamID: String?
    public var characteristics: [String]
    /// CHANNELS, raw (e.g. "2" or "16/JOC").
    public var channels: String?
    public var attributes: [String: String]
    public init(
        type: RenditionType, uri: URL?, groupID: String, language: String? = nil,
        associatedLanguage: String? = nil, name: String, isDefault: Bool = false,
        autoselect: Bool = false, forced: Bool = false, instreamID: String? = nil,
        characteristics: [String] = [], channels: String? = nil, attributes: [String: String] = [:]
    ) {
        self.type = type
        self.uri = uri
        self.groupID = groupID
        self.language = language
        self.associatedLanguage = associatedLanguage
        self.name = name
        self.isDefault = isDefault
        self.autoselect = autoselect
        self.forced = forced
        self.instreamID = instreamID
        self.characteristics = characteristics
        self.channels = channels
        self.attributes = attributes
    }
}

/// EXT-X-SESSION-DATA (§4.4.6.4).
public struct SessionData: Sendable, Equatable {
    public var dataID: String
    public var value: String?
    public var uri: URL?
    public var language: String?
    public init(dataID: String, value: String? = nil, uri: URL? = nil, language: String? = nil) {
        self.dataID = dataID
        self.value = value
        self.uri = uri
        self.language = language
    }
}

/// EXT-X-CONTENT-STEERING (draft §4.4.6.6).
public struct ContentSteering: Sendable, Equatable {
    public var serverURI: URL
    public var pathwayID: String?
    public init(serverURI: URL, pathwayID: String? = nil) {
        self.serverURI = serverURI
        self.pathwayID = pathwayID
    }
}

/// A Multivariant Playlist (§4.3.4).
public struct MultivariantPlaylist: Sendable, Equatable {
    /// The URL the playlist was loaded from (base for relative URIs).
    public var baseURL: URL
    /// EXT-X-VERSION; nil when absent (treated as 1).
    public var version: Int?
    /// EXT-X-INDEPENDENT-SEGMENTS.
    public var independentSegments: Bool
    /// EXT-X-START.
    public var start: StartPoint?
    /// EXT-X-DEFINE, in order.
    public var definitions: [VariableDefinition]
    /// Resolved variable values (NAME -> VALUE) after EXT-X-DEFINE processing.
    public var variables: [String: String]
    /// EXT-X-STREAM-INF + URI, in playlist order.
    public var variants: [VariantStream]
    /// EXT-X-I-FRAME-STREAM-INF.
    public var iFrameStreams: [IFrameStream]
    /// EXT-X-MEDIA.
    public var renditions: [Rendition]
    /// EXT-X-SESSION-DATA.
    public var sessionData: [SessionData]
    /// EXT-X-SESSION-KEY.
    public var sessionKeys: [EncryptionKey]
    /// EXT-X-CONTENT-STEERING.
    public var contentSteering: ContentSteering?
    /// Tags not interpreted.
    public var unknownTags: [UnknownTag]
    /// Problems tolerated while parsing (see the parser's leniency policy).
    public var warnings: [PlaylistWarning]

    public init(
        baseURL: URL, version: Int? = nil, independentSegments: Bool = false, start: StartPoint? = nil,
        definitions: [VariableDefinition] = [], variables: [String: String] = [:],
        variants: [VariantStream] = [], iFrameStreams: [IFrameStream] = [], renditions: [Rendition] = [],
        sessionData: [SessionData] = [], sessionKeys: [EncryptionKey] = [],
        contentSteering: ContentSteering? = nil, unknownTags: [UnknownTag] = [], warnings: [PlaylistWarning] = []
    ) {
        self.baseURL = baseURL
        self.version = version
        self.independentSegments = independentSegments
        self.start = start
        self.definitions = definitions
        self.variables = variables
        self.variants = variants
        self.iFrameStreams = iFrameStreams
        self.renditions = renditions
        self.sessionData = sessionData
        self.sessionKeys = sessionKeys
        self.contentSteering = contentSteering
        self.unknownTags = unknownTags
        self.warnings = warnings
    }
}

/// EXT-X-PLAYLIST-TYPE (§4.4.3.5).
public enum PlaylistType: String, Sendable, Equatable {
    case event = "EVENT"
    case vod = "VOD"
}

/// EXT-X-BYTERANGE / BYTERANGE attribute: `length[@offset]`. In a parsed playlist
/// offset + length ≤ `PlaylistRanges.maxByteRangeEnd` (2^53−1).
public struct ByteRange: Sendable, Equatable, Hashable {
    /// Bytes.
    public var length: Int
    /// The offset; nil in the playlist means "continues from the end of the
    /// previous sub-range of the same resource" and the parser fills it in
    /// where it can, so after parsing this is nil only where it could not be derived.
    public var offset: Int?
    public init(length: Int, offset: Int?) {
        self.length = length
        self.offset = offset
    }

    /// The first byte requested: the offset, 0 when unknown.
    public var firstByte: Int { max(0, offset ?? 0) }
    /// One past the last byte of the range (saturating, so a hand-built range cannot trap).
    public var endByte: Int { firstByte.saturatingAdd(max(0, length)) }
    /// The last byte an HTTP Range request asks for (RFC 9110 §14.1.2, inclusive): at least the
    /// first byte (a zero length asks for one byte), saturating.
    public var lastByte: Int { firstByte.saturatingAdd(max(1, length) - 1) }
    /// `first-last`, the value of an HTTP `Range: bytes=` header and of the log's `range` field.
    public var httpRange: String { "\(firstByte)-\(lastByte)" }
}

/// EXT-X-KEY METHOD (§4.4.4.4).
public enum EncryptionMethod: Sendable, Equatable {
    case none
    case aes128
    case sampleAES
    case sampleAESCTR
    case other(String)
}

/// EXT-X-KEY / EXT-X-SESSION-KEY.
public struct EncryptionKey: Sendable, Equatable {
    public var method: EncryptionMethod
    public var uri: URL?
    /// IV: 16 bytes from a hexadecimal-sequence; nil means "derive from the media sequence number".
    public var iv: [UInt8]?
    /// KEYFORMAT, default "identity".
    public var keyFormat: String
    /// KEYFORMATVERSIONS, raw.
    public var keyFormatVersions: String?
    public init(
        method: EncryptionMethod, uri: URL? = nil, iv: [UInt8]? = nil,
        keyFormat: String = "identity", keyFormatVersions: String? = nil
    ) {
        self.method = method
        self.uri = uri
        self.iv = iv
        self.keyFormat = keyFormat
        self.keyFormatVersions = keyFormatVersions
    }
}

/// EXT-X-MAP (§4.4.4.5): the Media Initialization Section.
public struct MediaInitializationSection: Sendable, Equatable {
    public var uri: URL
    public var byteRange: ByteRange?
    public init(uri: URL, byteRange: ByteRange? = nil) {
        self.uri = uri
        self.byteRange = byteRange
    }
}

/// EXT-X-DATERANGE (§4.4.5.1).
public struct DateRange: Sendable, Equatable {
    public var id: String
    public var classID: String?
    public var startDate: Date?
    public var endDate: Date?
    public var durationSeconds: Double?
    public var plannedDurationSeconds: Double?
    public var endOnNext: Bool
    /// All attributes as parsed (X-…, SCTE35-…).
    public var attributes: [String: String]
    public init(
        id: String, classID: String? = nil, startDate: Date? = nil, endDate: Date? = nil,
        durationSeconds: Double? = nil, plannedDurationSeconds: Double? = nil, endOnNext: Bool = false,
        attributes: [String: String] = [:]
    ) {
        self.id = id
        self.classID = classID
        self.startDate = startDate
        self.endDate = endDate
        self.durationSeconds = durationSeconds
        self.plannedDurationSeconds = plannedDurationSeconds
        self.endOnNext = endOnNext
        self.attributes = attributes
    }
}

/// EXT-X-PART (draft §4.4.4.9): a Partial Segment.
public struct PartialSegment: Sendable, Equatable {
    public var uri: URL
    public var durationSeconds: Double
    public var independent: Bool
    public var byteRange: ByteRange?
    public var gap: Bool
    public init(uri: URL, durationSeconds: Double, independent: Bool = false, byteRange: ByteRange? = nil, gap: Bool = false) {
        self.uri = uri
        self.durationSeconds = durationSeconds
        self.independent = independent
        self.byteRange = byteRange
        self.gap = gap
    }
}

/// One Media Segment (§3) with the tags that apply to it.
public struct MediaSegment: Sendable, Equatable {
    /// The Media Sequence Number of this segment (§6.3.5 / EXT-X-MEDIA-SEQUENCE + index). Parsed: it and
    /// the next one are at most `PlaylistRanges.maxMediaSequence` (2^53−1), so `+ 1` cannot overflow.
    public var mediaSequence: Int
    /// The Discontinuity Sequence Number (EXT-X-DISCONTINUITY-SEQUENCE + preceding EXT-X-DISCONTINUITY count);
    /// parsed: at most `PlaylistRanges.maxDiscontinuitySequence`.
    public var discontinuitySequence: Int
    /// The resolved segment URI.
    public var uri: URL
    /// EXTINF duration, seconds.
    public var durationSeconds: Double
    /// EXTINF title, possibly empty.
    public var title: String
    /// EXT-X-BYTERANGE.
    public var byteRange: ByteRange?
    /// EXT-X-DISCONTINUITY precedes this segment.
    public var discontinuity: Bool
    /// EXT-X-KEY in force (nil = unencrypted).
    public var key: EncryptionKey?
    /// EXT-X-MAP in force.
    public var initializationSection: MediaInitializationSection?
    /// EXT-X-PROGRAM-DATE-TIME of this segment (explicit, or extrapolated from an earlier one).
    public var programDateTime: Date?
    /// EXT-X-GAP.
    public var gap: Bool
    /// EXT-X-BITRATE in force, bits per second (the tag is in kbit/s).
    public var bitrateBps: Int?
    /// EXT-X-PART tags that belong to this segment.
    public var parts: [PartialSegment]
    /// Every EXT-X-KEY in force, one per KEYFORMAT, in playlist order (several
    /// DRM systems may key the same segments). `key` is the "identity" one if
    /// present, else the first. Empty = unencrypted.
    public var keys: [EncryptionKey]

    public init(
        mediaSequence: Int, discontinuitySequence: Int = 0, uri: URL, durationSeconds: Double,
        title: String = "", byteRange: ByteRange? = nil, discontinuity: Bool = false,
        key: EncryptionKey? = nil, initializationSection: MediaInitializationSection? = nil,
        programDateTime: Date? = nil, gap: Bool = false, bitrateBps: Int? = nil, parts: [PartialSegment] = [],
        keys: [EncryptionKey]? = nil
    ) {
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.uri = uri
        self.durationSeconds = durationSeconds
        self.title = title
        self.byteRange = byteRange
        self.discontinuity = discontinuity
        self.key = key
        self.initializationSection = initializationSection
        self.programDateTime = programDateTime
        self.gap = gap
        self.bitrateBps = bitrateBps
        self.parts = parts
        self.keys = keys ?? (key.map { [$0] } ?? [])
    }
}

/// EXT-X-SERVER-CONTROL (draft §4.4.3.8).
public struct ServerControl: Sendable, Equatable {
    public var canBlockReload: Bool
    public var canSkipUntilSeconds: Double?
    public var canSkipDateRanges: Bool
    public var holdBackSeconds: Double?
    public var partHoldBackSeconds: Double?
    public init(
        canBlockReload: Bool = false, canSkipUntilSeconds: Double? = nil, canSkipDateRanges: Bool = false,
        holdBackSeconds: Double? = nil, partHoldBackSeconds: Double? = nil
    ) {
        self.canBlockReload = canBlockReload
        self.canSkipUntilSeconds = canSkipUntilSeconds
        self.canSkipDateRanges = canSkipDateRanges
        self.holdBackSeconds = holdBackSeconds
        self.partHoldBackSeconds = partHoldBackSeconds
    }
}

/// EXT-X-PRELOAD-HINT (draft §4.4.5.3).
public struct PreloadHint: Sendable, Equatable {
    /// TYPE: PART or MAP.
    public var type: String
    public var uri: URL
    public var byteRangeStart: Int?
    public var byteRangeLength: Int?
    public init(type: String, uri: URL, byteRangeStart: Int? = nil, byteRangeLength: Int? = nil) {
        self.type = type
        self.uri = uri
        self.byteRangeStart = byteRangeStart
        self.byteRangeLength = byteRangeLength
    }
}

/// EXT-X-RENDITION-REPORT (draft §4.4.5.4).
public struct RenditionReport: Sendable, Equatable {
    public var uri: URL
    public var lastMediaSequence: Int?
    public var lastPart: Int?
    public init(uri: URL, lastMediaSequence: Int? = nil, lastPart: Int? = nil) {
        self.uri = uri
        self.lastMediaSequence = lastMediaSequence
        self.lastPart = lastPart
    }
}

/// EXT-X-SKIP (draft §4.4.5.2): a delta update skipped segments.
public struct SkipInfo: Sendable, Equatable {
    public var skippedSegments: Int
    public var recentlyRemovedDateRanges: [String]
    public init(skippedSegments: Int, recentlyRemovedDateRanges: [String] = []) {
        self.skippedSegments = skippedSegments
        self.recentlyRemovedDateRanges = recentlyRemovedDateRanges
    }
}

/// A Media Playlist (§4.3.3).
public struct MediaPlaylist: Sendable, Equatable {
    public var baseURL: URL
    public var version: Int?
    public var independentSegments: Bool
    public var start: StartPoint?
    public var definitions: [VariableDefinition]
    public var variables: [String: String]
    /// EXT-X-TARGETDURATION, seconds (required).
    public var targetDurationSeconds: Double
    /// EXT-X-MEDIA-SEQUENCE (default 0): the Media Sequence Number of the first segment.
    public var mediaSequence: Int
    /// EXT-X-DISCONTINUITY-SEQUENCE (default 0).
    public var discontinuitySequence: Int
    /// EXT-X-PLAYLIST-TYPE.
    public var playlistType: PlaylistType?
    /// EXT-X-ENDLIST.
    public var endList: Bool
    /// EXT-X-I-FRAMES-ONLY.
    public var iFramesOnly: Bool
    public var segments: [MediaSegment]
    public var dateRanges: [DateRange]
    /// EXT-X-SERVER-CONTROL.
    public var serverControl: ServerControl?
    /// EXT-X-PART-INF PART-TARGET, seconds.
    public var partTargetSeconds: Double?
    /// Parts after the last complete segment (the segment being produced at the live edge).
    public var trailingParts: [PartialSegment]
    public var preloadHints: [PreloadHint]
    public var renditionReports: [RenditionReport]
    /// EXT-X-SKIP, present in a delta update.
    public var skip: SkipInfo?
    public var unknownTags: [UnknownTag]
    public var warnings: [PlaylistWarning]

    /// Sum of segment durations, seconds.
    public var totalDurationSeconds: Double { segments.reduce(0) { $0 + $1.durationSeconds } }

    /// The index in `segments` of the segment numbered `msn`, or nil when the playlist does not
    /// list it. Constant time for a parsed playlist, whose numbers are consecutive
    /// (EXT-X-MEDIA-SEQUENCE + skipped + index); a scan only if the numbers are not (a hand-built value).
    public func segmentIndex(ofMediaSequence msn: Int) -> Int? {
        guard let first = segments.first else { return nil }
        let guess = msn - first.mediaSequence
        if segments.indices.contains(guess) && segments[guess].mediaSequence == msn { return guess }
        if let last = segments.last, last.mediaSequence - first.mediaSequence == segments.count - 1 { return nil }
        return segments.firstIndex { $0.mediaSequence == msn }
    }

    /// The segment numbered `msn`, or nil when the playlist does not list it (see `segmentIndex(ofMediaSequence:)`).
    public func segment(withMediaSequence msn: Int) -> MediaSegment? {
        segmentIndex(ofMediaSequence: msn).map { segments[$0] }
    }
    /// True when the playlist can still change (no EXT-X-ENDLIST).
    public var isLive: Bool { !endList }

    public init(
        baseURL: URL, version: Int? = nil, independentSegments: Bool = false, start: StartPoint? = nil,
        definitions: [VariableDefinition] = [], variables: [String: String] = [:],
        targetDurationSeconds: Double, mediaSequence: Int = 0, discontinuitySequence: Int = 0,
        playlistType: PlaylistType? = nil, endList: Bool = false, iFramesOnly: Bool = false,
        segments: [MediaSegment] = [], dateRanges: [DateRange] = [], serverControl: ServerControl? = nil,
        partTargetSeconds: Double? = nil, trailingParts: [PartialSegment] = [], preloadHints: [PreloadHint] = [],
        renditionReports: [RenditionReport] = [], skip: SkipInfo? = nil,
        unknownTags: [UnknownTag] = [], warnings: [PlaylistWarning] = []
    ) {
        self.baseURL = baseURL
        self.version = version
        self.independentSegments = independentSegments
        self.start = start
        self.definitions = definitions
        self.variables = variables
        self.targetDurationSeconds = targetDurationSeconds
        self.mediaSequence = mediaSequence
        self.discontinuitySequence = discontinuitySequence
        self.playlistType = playlistType
        self.endList = endList
        self.iFramesOnly = iFramesOnly
        self.segments = segments
        self.dateRanges = dateRanges
        self.serverControl = serverControl
        self.partTargetSeconds = partTargetSeconds
        self.trailingParts = trailingParts
        self.preloadHints = preloadHints
        self.renditionReports = renditionReports
        self.skip = skip
        self.unknownTags = unknownTags
        self.warnings = warnings
    }
}

/// A problem the parser tolerated (policy: see PlaylistParser).
public struct PlaylistWarning: Sendable, Equatable, CustomStringConvertible {
    public var lineNumber: Int
    public var message: String
    /// The rule the tolerated text breaks, when the message does not already name it
    /// (e.g. "RFC 8216 §4.1: ...").
    public var rule: String?
    public init(lineNumber: Int, message: String, rule: String? = nil) {
        self.lineNumber = lineNumber
        self.message = message
        self.rule = rule
    }
    public var description: String { "line \(lineNumber): \(message)" + (rule.map { " (\($0))" } ?? "") }
}

/// A fatal playlist error: names the line and the rule broken.
public struct PlaylistError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        case missingHeader
        case syntax
        case missingRequiredTag
        case missingRequiredAttribute
        case invalidAttributeValue
        case missingURI
        case invalidURI
        case mixedPlaylistKinds
        case variableError
        case limitExceeded
        case notUTF8
        case constraintViolation
        /// A number outside the range the player can do arithmetic on (`PlaylistRanges`).
        case outOfRange
    }
    public var kind: Kind
    /// 1-based line number, or 0 when the error is about the whole playlist.
    public var lineNumber: Int
    /// The rule broken, e.g. "RFC 8216 §4.3.1.1: EXTM3U MUST be the first line".
    public var rule: String
    public var message: String
    public init(kind: Kind, lineNumber: Int, rule: String, message: String) {
        self.kind = kind
        self.lineNumber = lineNumber
        self.rule = rule
        self.message = message
    }
    public var description: String {
        lineNumber > 0 ? "line \(lineNumber): \(message) (\(rule))" : "\(message) (\(rule))"
    }
}
