// The HLS playlist parser: text in, Playlist out. Pure: no I/O, no clock.

import Foundation

/// Parses RFC 8216 / draft-pantos-hls-rfc8216bis playlists into the model.
///
/// Pure: no I/O, no clock reads. Relative URIs resolve against `baseURL`
/// (RFC 3986, via Foundation's URL resolution).
///
/// ## Leniency policy (also in docs/playlist-parsing.md)
/// The rule of thumb: what breaks the meaning of one tag or segment is fatal;
/// what a player can play through is a warning; cosmetic text variations and
/// server-side publishing rules a client cannot act on are accepted silently.
///
/// **Fatal** (`PlaylistError`, with the line number and the rule):
/// no `#EXTM3U` header (or a tag, a URI or junk before it); a UTF-8 BOM or
/// invalid UTF-8; both Multivariant and Media tags in one playlist; a Media
/// Playlist without EXT-X-TARGETDURATION; EXT-X-TARGETDURATION, EXT-X-VERSION,
/// EXT-X-MEDIA-SEQUENCE, EXT-X-DISCONTINUITY-SEQUENCE, EXT-X-START or
/// EXT-X-INDEPENDENT-SEGMENTS twice; EXT-X-MEDIA-SEQUENCE /
/// EXT-X-DISCONTINUITY-SEQUENCE after the first segment URI; EXTINF or
/// EXT-X-STREAM-INF not followed by a URI line; a URI line with no EXTINF
/// (stray junk lines included); a missing REQUIRED attribute (BANDWIDTH, URI,
/// METHOD, TYPE, GROUP-ID, NAME, ID, DURATION, SKIPPED-SEGMENTS, PART-TARGET,
/// INSTREAM-ID for captions, URI for subtitles…); a malformed attribute list
/// (unterminated quote, duplicate name, missing `=`, stray quote); a value of
/// the wrong type or a bad number (`NaN`, `1e3`, negative EXTINF, unquoted
/// URI); an EXT-X-BYTERANGE without offset that does not follow a sub-range of
/// the same resource; EXT-X-DEFINE errors (undefined reference, duplicate
/// name, IMPORT or QUERYPARAM not found); constraints within one tag
/// (SESSION-DATA with both or neither of VALUE and URI, CLOSED-CAPTIONS
/// rendition with a URI, DEFAULT=YES with AUTOSELECT=NO, FORCED outside
/// subtitles, SESSION-KEY METHOD=NONE, an IV over 128 bits, DATERANGE END-DATE
/// before START-DATE or END-ON-NEXT misuse, CAN-SKIP-DATERANGES without
/// CAN-SKIP-UNTIL); every `PlaylistLimits` limit; a number outside `PlaylistRanges`
/// (a Media Sequence Number or a byte range's end past 2^53−1, a duration past 10^6 s, …:
/// kind `outOfRange`).
///
/// **Tolerated with a warning** (`warnings` on the result): `#` comment lines
/// before `#EXTM3U`; a repeated `#EXTM3U`; EXTINF without a comma; an EXTINF
/// duration that rounds above EXT-X-TARGETDURATION (§4.3.3.1 says MUST NOT;
/// encoders overshoot and players cope); a non-integer EXT-X-TARGETDURATION;
/// an empty BYTERANGE offset (`n@`); a PART byte range whose offset cannot be
/// derived; an unquoted EXT-X-PART BYTERANGE or RECENTLY-REMOVED-DATERANGES
/// (Apple's own LL-HLS examples write them so); EXT-X-PART without
/// EXT-X-PART-INF (hls.js accepts it; whole segments still play); EXT-X-KEY
/// METHOD=NONE with other attributes; a PROGRAM-DATE-TIME without a time zone
/// (read as UTC); an unknown PRELOAD-HINT TYPE; rendition-group
/// inconsistencies across tags (a variant naming a group no EXT-X-MEDIA
/// defines, two members with one NAME or two DEFAULT=YES in a group,
/// CLOSED-CAPTIONS=NONE on only some variants); blanks (SPACE, TAB) where
/// RFC 8216 §4.1/§4.2 allow none but the meaning is unambiguous — at the ends
/// of a line, around a tag's ':', around an attribute list's names, '=',
/// values and ',', around an EXTINF duration or a BYTERANGE's '@' — one
/// warning per kind, counting the lines (`Blanks`). A blank inside a name,
/// number or value, or where a ',' or ':' belongs, is not guessed at: the
/// value or tag it makes is judged as written (docs/playlist-parsing.md,
/// "Whitespace").
///
/// **Silently accepted**: CRLF or LF line ends, blank lines, blanks in an
/// EXTINF title or a comment, no final newline, no EXT-X-VERSION and tags
/// newer than the declared version (compatibility is not enforced),
/// unknown tags (kept in `unknownTags`),
/// comments, START-DATE missing from EXT-X-DATERANGE (optional in the draft),
/// unknown enumerated values (forward compatibility), and server-side
/// publishing rules a client cannot act on (SERVER-CONTROL hold-back minimums,
/// part durations vs PART-TARGET, duplicate PRELOAD-HINT types, overlapping
/// DATERANGEs, DATERANGE without PROGRAM-DATE-TIME, duplicate SESSION-DATA or
/// SESSION-KEY, SCORE on only some variants).
///
/// Duplicate attribute names in one attribute list are fatal (see `AttributeList`).
///
/// PROGRAM-DATE-TIME is extrapolated forward (previous segment's date + its
/// duration) to segments without their own tag, across discontinuities too,
/// and backwards (minus durations) to segments before the first tag.
public enum PlaylistParser {
    /// Parses a playlist already decoded as text.
    public static func parse(
        _ text: String, baseURL: URL, parentVariables: [String: String] = [:],
        limits: PlaylistLimits = .default
    ) throws(PlaylistError) -> Playlist {
        if text.utf8.count > limits.maxBytes {
            throw PlaylistLimits.exceeded(
                "maxBytes", limit: limits.maxBytes, lineNumber: 0,
                what: "playlist size \(text.utf8.count) bytes")
        }
        var parser = Parser(baseURL: baseURL, parentVariables: parentVariables, limits: limits)
        return try parser.run(text)
    }

    /// Parses raw bytes: checks the size limit, then that they are UTF-8 without a BOM
    /// (RFC 8216 §4.1), then parses.
    public static func parse(
        data: Data, baseURL: URL, parentVariables: [String: String] = [:],
        limits: PlaylistLimits = .default
    ) throws(PlaylistError) -> Playlist {
        if data.count > limits.maxBytes {
            throw PlaylistLimits.exceeded(
                "maxBytes", limit: limits.maxBytes, lineNumber: 0,
                what: "playlist size \(data.count) bytes")
        }
        if data.starts(with: [0xEF, 0xBB, 0xBF]) {
            throw PlaylistError(
                kind: .notUTF8, lineNumber: 1,
                rule: "RFC 8216 §4.1: Playlist files MUST NOT contain any Byte Order Mark",
                message: "playlist starts with a UTF-8 byte order mark")
        }
        // One validating pass; only an invalid playlist is split into lines, to name the first bad
        // one (a UTF-8 sequence never spans a line feed, so the verdicts are the same).
        guard let text = String(validating: data, as: UTF8.self) else {
            var lineNumber = 0
            for line in data.split(separator: 0x0A, omittingEmptySubsequences: false) {
                lineNumber += 1
                if String(validating: line, as: UTF8.self) == nil { break }
            }
            throw PlaylistError(
                kind: .notUTF8, lineNumber: lineNumber,
                rule: "RFC 8216 §4.1: Playlist files MUST be encoded in UTF-8",
                message: "line is not valid UTF-8")
        }
        return try parse(text, baseURL: baseURL, parentVariables: parentVariables, limits: limits)
    }
}

// MARK: - Implementation

/// Attributes of one tag, with typed accessors that throw rule-naming errors.
struct Attributes {
    let tag: String
    let lineNumber: Int
    let list: [(name: String, value: AttributeValue)]
    let dict: [String: AttributeValue]

    init(tag: String, lineNumber: Int, list: [(name: String, value: AttributeValue)]) {
        self.tag = tag
        self.lineNumber = lineNumber
        self.list = list
        var d: [String: AttributeValue] = [:]
        for (n, v) in list { d[n] = v }
        self.dict = d
    }

    var raw: [String: String] {
        var d: [String: String] = [:]
        for (n, v) in list { d[n] = v.rawText }
        return d
    }

    func has(_ name: String) -> Bool { dict[name] != nil }

    func wrongType(_ name: String, _ expected: String) -> PlaylistError {
        PlaylistError(
            kind: .invalidAttributeValue, lineNumber: lineNumber,
            rule: "RFC 8216 §4.2: \(tag) \(name) is a \(expected)",
            message: "\(tag) attribute \(name)=\(dict[name]?.rawText ?? "") is not a \(expected)")
    }

    func missing(_ name: String, rule: String) -> PlaylistError {
        PlaylistError(
            kind: .missingRequiredAttribute, lineNumber: lineNumber, rule: rule,
            message: "\(tag) is missing the REQUIRED attribute \(name)")
    }

    func quoted(_ name: String) throws(PlaylistError) -> String? {
        guard let v = dict[name] else { return nil }
        guard let s = v.quotedStringValue else { throw wrongType(name, "quoted-string") }
        return s
    }

    func quoted(_ name: String, required rule: String) throws(PlaylistError) -> String {
        guard let s = try quoted(name) else { throw missing(name, rule: rule) }
        return s
    }

    func enumerated(_ name: String) throws(PlaylistError) -> String? {
        guard let v = dict[name] else { return nil }
        guard let s = v.enumeratedValue else { throw wrongType(name, "enumerated-string") }
        return s
    }

    func yesNo(_ name: String) throws(PlaylistError) -> Bool {
        guard let s = try enumerated(name) else { return false }
        switch s {
        case "YES": return true
        case "NO": return false
        default: throw wrongType(name, "YES or NO enumerated-string")
        }
    }

    func integer(_ name: String) throws(PlaylistError) -> Int? {
        guard let v = dict[name] else { return nil }
        guard let i = v.integerValue else { throw wrongType(name, "decimal-integer") }
        return i
    }

    func integer(_ name: String, required rule: String) throws(PlaylistError) -> Int {
        guard let i = try integer(name) else { throw missing(name, rule: rule) }
        return i
    }

    /// A value above the range `PlaylistRanges` allows for it.
    func outOfRange(_ name: String, above limit: String, _ what: String) -> PlaylistError {
        PlaylistRanges.error(lineNumber, "\(tag) attribute \(name)=\(dict[name]?.rawText.prefix(40) ?? "") is above \(limit)", rule: what)
    }

    /// A decimal-integer at most `max` (`PlaylistRanges`; `what` names the range in the rule).
    func integer(_ name: String, max: Int, range what: String) throws(PlaylistError) -> Int? {
        guard let i = try integer(name) else { return nil }
        guard i <= max else { throw outOfRange(name, above: String(max), what) }
        return i
    }

    func integer(_ name: String, required rule: String, max: Int, range what: String) throws(PlaylistError) -> Int {
        guard let i = try integer(name, max: max, range: what) else { throw missing(name, rule: rule) }
        return i
    }

    /// decimal-floating-point; `signed` also allows a leading minus.
    func double(_ name: String, signed: Bool = false) throws(PlaylistError) -> Double? {
        guard let v = dict[name] else { return nil }
        guard let d = v.doubleValue, signed || d >= 0 else {
            throw wrongType(name, signed ? "signed-decimal-floating-point" : "decimal-floating-point")
        }
        return d
    }

    func double(_ name: String, required rule: String) throws(PlaylistError) -> Double {
        guard let d = try double(name) else { throw missing(name, rule: rule) }
        return d
    }

    /// A non-negative decimal-floating-point at most `max` seconds (`PlaylistRanges`).
    func seconds(_ name: String, max: Double, range what: String) throws(PlaylistError) -> Double? {
        guard let d = try double(name) else { return nil }
        guard d <= max else { throw outOfRange(name, above: "\(Int(max)) s", what) }
        return d
    }

    func seconds(_ name: String, required rule: String, max: Double, range what: String) throws(PlaylistError) -> Double {
        guard let d = try seconds(name, max: max, range: what) else { throw missing(name, rule: rule) }
        return d
    }

    /// decimal-resolution, each side at most `PlaylistRanges.maxResolutionSide`.
    func resolution(_ name: String) throws(PlaylistError) -> Resolution? {
        guard let v = dict[name] else { return nil }
        guard let r = v.resolutionValue else { throw wrongType(name, "decimal-resolution") }
        guard r.width <= PlaylistRanges.maxResolutionSide, r.height <= PlaylistRanges.maxResolutionSide else {
            throw outOfRange(
                name, above: "\(PlaylistRanges.maxResolutionSide) pixels a side",
                "a RESOLUTION side is at most 2^31-1 pixels")
        }
        return r
    }

    func hex(_ name: String) throws(PlaylistError) -> [UInt8]? {
        guard let v = dict[name] else { return nil }
        guard let b = v.hexBytes else { throw wrongType(name, "hexadecimal-sequence") }
        return b
    }
}

/// Every tag the parser reads (the others are kept in `unknownTags`).
private let knownTags: Set<String> = multivariantTags.union(mediaTags).union([
    "#EXTM3U", "#EXT-X-VERSION", "#EXT-X-INDEPENDENT-SEGMENTS", "#EXT-X-START", "#EXT-X-DEFINE"
])
private let multivariantTags: Set<String> = [
    "#EXT-X-STREAM-INF", "#EXT-X-MEDIA", "#EXT-X-I-FRAME-STREAM-INF", "#EXT-X-SESSION-DATA",
    "#EXT-X-SESSION-KEY", "#EXT-X-CONTENT-STEERING"
]
private let mediaTags: Set<String> = [
    "#EXTINF", "#EXT-X-TARGETDURATION", "#EXT-X-MEDIA-SEQUENCE", "#EXT-X-DISCONTINUITY-SEQUENCE",
    "#EXT-X-PLAYLIST-TYPE", "#EXT-X-ENDLIST", "#EXT-X-I-FRAMES-ONLY", "#EXT-X-BYTERANGE",
    "#EXT-X-DISCONTINUITY", "#EXT-X-KEY", "#EXT-X-MAP", "#EXT-X-PROGRAM-DATE-TIME", "#EXT-X-DATERANGE",
    "#EXT-X-GAP", "#EXT-X-BITRATE", "#EXT-X-PART", "#EXT-X-PART-INF", "#EXT-X-SERVER-CONTROL",
    "#EXT-X-PRELOAD-HINT", "#EXT-X-SKIP", "#EXT-X-RENDITION-REPORT"
]

struct Parser {
    let baseURL: URL
    let parentVariables: [String: String]
    let limits: PlaylistLimits

    /// `baseURL`'s absolute string up to and including the last '/' of its path, when it has a
    /// scheme, an authority and a path (see `resolve`).
    let baseDirectory: String?

    init(baseURL: URL, parentVariables: [String: String], limits: PlaylistLimits) {
        self.baseURL = baseURL
        self.parentVariables = parentVariables
        self.limits = limits
        self.baseDirectory = Parser.directory(of: baseURL)
    }

    var warnings: [PlaylistWarning] = []
    var unknownTags: [UnknownTag] = []
    var variables: [String: String] = [:]
    var definitions: [VariableDefinition] = []
    var version: Int?
    var independentSegments = false
    var start: StartPoint?
    var firstMediaTag: (tag: String, line: Int)?
    var firstMultivariantTag: (tag: String, line: Int)?
    /// Blanks tolerated where the meaning is unambiguous, by kind: the index of the warning given
    /// at the kind's first line, how many lines had it, and the last such line.
    var blankNotes: [Blanks: (warningIndex: Int, lines: Int, lastLine: Int)] = [:]

    // Multivariant
    var variants: [VariantStream] = []
    var iFrameStreams: [IFrameStream] = []
    var renditions: [Rendition] = []
    var sessionData: [SessionData] = []
    var sessionKeys: [EncryptionKey] = []
    var contentSteering: ContentSteering?
    var pendingStreamInf: Attributes?

    // Media
    var targetDuration: Double?
    var targetDurationLine = 0
    var mediaSequence = 0
    var mediaSequenceSeen = false
    var discontinuitySequence = 0
    var discontinuitySequenceSeen = false
    var playlistType: PlaylistType?
    var endList = false
    var iFramesOnly = false
    var segments: [MediaSegment] = []
    var dateRanges: [DateRange] = []
    var serverControl: ServerControl?
    var partTarget: Double?
    var pendingParts: [PartialSegment] = []
    var partCount = 0
    var firstPartLine = 0
    var preloadHints: [PreloadHint] = []
    var renditionReports: [RenditionReport] = []
    var skip: SkipInfo?
    var discontinuityCount = 0

    // State applying to the next segment.
    var pendingInf: (duration: Double, title: String, line: Int)?
    var pendingByteRange: (range: ByteRange, line: Int)?
    var pendingDiscontinuity = false
    var pendingGap = false
    var pendingProgramDateTime: Date?
    var currentBitrate: Int?
    var currentKeys: [EncryptionKey] = []
    var currentMap: MediaInitializationSection?
    var lastPartRange: (uri: URL, end: Int)?

    // MARK: Driver

    mutating func run(_ text: String) throws(PlaylistError) -> Playlist {
        var lineNumber = 0
        var sawHeader = false
        for rawLine in text.utf8.split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNumber += 1
            var bytes = rawLine
            if bytes.last == 0x0D { bytes = bytes.dropLast() }
            if bytes.count > limits.maxLineLength {
                throw PlaylistLimits.exceeded(
                    "maxLineLength", limit: limits.maxLineLength, lineNumber: lineNumber,
                    what: "line length \(bytes.count) bytes")
            }
            // Blanks (SPACE, TAB) at the ends of a line are dropped here; whether that deserves a
            // warning depends on the line (none for comments, blank lines and EXTINF titles).
            let leading = bytes.prefix { $0 == 0x20 || $0 == 0x09 }.count
            if leading == bytes.count { continue } // a blank line
            var trailing = 0
            while bytes[bytes.index(bytes.endIndex, offsetBy: -(trailing + 1))] == 0x20
                || bytes[bytes.index(bytes.endIndex, offsetBy: -(trailing + 1))] == 0x09
            { trailing += 1 }
            let line = String(Substring(bytes.dropFirst(leading).dropLast(trailing)))
            let edges = leading > 0 || trailing > 0
            if !sawHeader {
                if line == "#EXTM3U" {
                    sawHeader = true
                    if edges { noteBlanks(.lineEdges, lineNumber, "blanks at the start or end of the line ignored") }
                } else if line.hasPrefix("#") && !line.hasPrefix("#EXT") {
                    warnings.append(PlaylistWarning(lineNumber: lineNumber, message: "comment line before #EXTM3U ignored"))
                } else {
                    throw PlaylistError(
                        kind: .missingHeader, lineNumber: lineNumber,
                        rule: "RFC 8216 §4.3.1.1: EXTM3U MUST be the first line of every Playlist",
                        message: "expected #EXTM3U, found \"\(line.prefix(80))\"")
                }
                continue
            }
            if line.hasPrefix("#EXT") {
                try handleTag(line, lineNumber, leadingBlanks: leading > 0, trailingBlanks: trailing > 0)
            } else if line.hasPrefix("#") {
                continue // comment
            } else {
                if edges { noteBlanks(.lineEdges, lineNumber, "blanks at the start or end of the line ignored") }
                try handleURI(line, lineNumber)
            }
        }
        if !sawHeader {
            throw PlaylistError(
                kind: .missingHeader, lineNumber: 0,
                rule: "RFC 8216 §4.3.1.1: EXTM3U MUST be the first line of every Playlist",
                message: "no #EXTM3U header")
        }
        return try finish()
    }

    mutating func finish() throws(PlaylistError) -> Playlist {
        for note in blankNotes.values where note.lines > 1 {
            let more = note.lines - 1
            warnings[note.warningIndex].message += "; the same on \(more) more line\(more == 1 ? "" : "s")"
        }
        if let s = pendingStreamInf {
            throw PlaylistError(
                kind: .missingURI, lineNumber: s.lineNumber,
                rule: "RFC 8216 §4.3.4.2: the URI line that follows EXT-X-STREAM-INF is REQUIRED",
                message: "EXT-X-STREAM-INF is not followed by a URI line")
        }
        if let inf = pendingInf {
            throw PlaylistError(
                kind: .missingURI, lineNumber: inf.line,
                rule: "RFC 8216 §4.3.2.1: each EXTINF applies to the Media Segment URI that follows it",
                message: "EXTINF is not followed by a URI line")
        }
        if firstMultivariantTag != nil {
            checkGroups()
            return .multivariant(
                MultivariantPlaylist(
                    baseURL: baseURL, version: version, independentSegments: independentSegments, start: start,
                    definitions: definitions, variables: variables, variants: variants, iFrameStreams: iFrameStreams,
                    renditions: renditions, sessionData: sessionData, sessionKeys: sessionKeys,
                    contentSteering: contentSteering, unknownTags: unknownTags, warnings: warnings))
        }
        guard let target = targetDuration else {
            throw PlaylistError(
                kind: .missingRequiredTag, lineNumber: 0,
                rule: "RFC 8216 §4.3.3.1: EXT-X-TARGETDURATION is REQUIRED",
                message: "Media Playlist has no EXT-X-TARGETDURATION")
        }
        if partCount > 0 && partTarget == nil {
            // Tolerated (hls.js does): a player can still play whole segments; only
            // low-latency part loading lacks its target duration.
            warn(firstPartLine, "EXT-X-PART without EXT-X-PART-INF (draft-pantos-hls-rfc8216bis §4.4.3.7 says PART-INF is REQUIRED)")
        }
        backfillProgramDateTime()
        return .media(
            MediaPlaylist(
                baseURL: baseURL, version: version, independentSegments: independentSegments, start: start,
                definitions: definitions, variables: variables, targetDurationSeconds: target,
                mediaSequence: mediaSequence, discontinuitySequence: discontinuitySequence, playlistType: playlistType,
                endList: endList, iFramesOnly: iFramesOnly, segments: segments, dateRanges: dateRanges,
                serverControl: serverControl, partTargetSeconds: partTarget, trailingParts: pendingParts,
                preloadHints: preloadHints, renditionReports: renditionReports, skip: skip,
                unknownTags: unknownTags, warnings: warnings))
    }

    /// Cross-tag constraints of RFC 8216 §4.3.4.1.1 / §4.3.4.2 on rendition groups.
    /// Tolerated with a warning: the player can still choose a variant, and the
    /// warning is logged (policy: per-tag syntax is fatal, cross-tag consistency is not).
    mutating func checkGroups() {
        var seenNames = Set<String>()
        var defaults = Set<String>()
        for r in renditions {
            let key = "\(r.type.rawValue)/\(r.groupID)"
            if !seenNames.insert(key + "/" + r.name).inserted {
                warn(0, "EXT-X-MEDIA group \(key) has two members named \(r.name) (RFC 8216 §4.3.4.1.1: names MUST differ)")
            }
            if r.isDefault && !defaults.insert(key).inserted {
                warn(0, "EXT-X-MEDIA group \(key) has more than one DEFAULT=YES member (RFC 8216 §4.3.4.1.1)")
            }
        }
        let groups = Set(renditions.map { "\($0.type.rawValue)/\($0.groupID)" })
        for v in variants {
            let refs: [(RenditionType, String?)] = [
                (.audio, v.audioGroup), (.video, v.videoGroup),
                (.subtitles, v.subtitlesGroup), (.closedCaptions, v.closedCaptionsGroup)
            ]
            for case let (type, id?) in refs where !groups.contains("\(type.rawValue)/\(id)") {
                warn(
                    0, "variant \(v.uri.lastPathComponent) refers to \(type.rawValue) group \"\(id)\" that no EXT-X-MEDIA defines (RFC 8216 §4.3.4.2)"
                )
            }
        }
        if variants.contains(where: \.closedCaptionsNone) && variants.contains(where: { !$0.closedCaptionsNone }) {
            warn(0, "CLOSED-CAPTIONS=NONE on some variants but not all (RFC 8216 §4.3.4.2)")
        }
    }

    /// Segments before the first EXT-X-PROGRAM-DATE-TIME get a date extrapolated
    /// backwards by their durations (as hls.js and video.js do), so a date is
    /// known for every segment once any is.
    mutating func backfillProgramDateTime() {
        guard let first = segments.firstIndex(where: { $0.programDateTime != nil }), first > 0,
            var date = segments[first].programDateTime
        else { return }
        for i in stride(from: first - 1, through: 0, by: -1) {
            date = date.addingTimeInterval(-segments[i].durationSeconds)
            segments[i].programDateTime = date
        }
    }

    // MARK: Helpers

    mutating func warn(_ line: Int, _ message: String) {
        warnings.append(PlaylistWarning(lineNumber: line, message: message))
    }

    /// Where RFC 8216 allows no blanks but the parser skips them (docs/playlist-parsing.md,
    /// "Whitespace"). One warning per kind, at the first line that has it, naming the rule and
    /// counting the other lines (finish() adds the count): a playlist of 100,000 lines with a
    /// trailing blank each gets one warning, not 100,000.
    enum Blanks: Hashable {
        /// At the start or end of a tag or URI line.
        case lineEdges
        /// Between a tag's name and its ':'.
        case beforeColon
        /// Between a tag's ':' and its value.
        case afterColon
        /// Around a name, '=', a value or ',' in an attribute list.
        case attributeList
        /// Around an EXTINF duration (before its ',').
        case extinfDuration
        /// Around the '@' of a byte range, or at the ends of one in a quoted-string.
        case byteRange

        var rule: String {
            switch self {
            case .attributeList: return "RFC 8216 §4.2: an attribute-list is a comma-separated list of attribute/value pairs with no whitespace"
            default: return "RFC 8216 §4.1: whitespace MUST NOT be present, except for elements in which it is explicitly specified"
            }
        }
    }

    mutating func noteBlanks(_ kind: Blanks, _ lineNumber: Int, _ message: String) {
        if var note = blankNotes[kind] {
            if note.lastLine != lineNumber {
                note.lines += 1
                note.lastLine = lineNumber
                blankNotes[kind] = note
            }
            return
        }
        warnings.append(PlaylistWarning(lineNumber: lineNumber, message: message, rule: kind.rule))
        blankNotes[kind] = (warnings.count - 1, 1, lineNumber)
    }

    static func isBlank(_ c: Character) -> Bool { c == " " || c == "\t" }

    /// `s` without blanks at either end.
    static func trimBlanks(_ s: Substring) -> Substring {
        var t = s.drop(while: isBlank)
        while let last = t.last, isBlank(last) { t = t.dropLast() }
        return t
    }

    /// Replaces `{$name}` references (draft §4.3: variable substitution).
    func substitute(_ s: String, _ lineNumber: Int) throws(PlaylistError) -> String {
        guard s.utf8.contains(UInt8(ascii: "{")), s.contains("{$") else { return s }
        var out = ""
        var rest = Substring(s)
        while let open = rest.range(of: "{$") {
            out += rest[..<open.lowerBound]
            let after = rest[open.upperBound...]
            guard let close = after.firstIndex(of: "}") else {
                out += rest[open.lowerBound...]
                rest = ""
                break
            }
            let name = String(after[..<close])
            if !Parser.isVariableName(name) {
                // Not a variable reference syntactically; keep the text.
                out += "{$"
                rest = after
                continue
            }
            guard let value = variables[name] else {
                throw PlaylistError(
                    kind: .variableError, lineNumber: lineNumber,
                    rule: "draft-pantos-hls-rfc8216bis §4.3: a Variable Reference to a name not defined by a preceding EXT-X-DEFINE is an error",
                    message: "undefined variable reference {$\(name)}")
            }
            out += value
            if out.utf8.count > limits.maxLineLength {
                throw PlaylistLimits.exceeded(
                    "maxLineLength", limit: limits.maxLineLength, lineNumber: lineNumber,
                    what: "value after variable substitution")
            }
            rest = after[after.index(after: close)...]
        }
        out += rest
        return out
    }

    static func isVariableName(_ s: String) -> Bool {
        !s.isEmpty
            && s.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_"
            }
    }

    mutating func attributes(_ tag: String, _ value: String, _ lineNumber: Int) throws(PlaylistError) -> Attributes {
        let subst: (String) throws(PlaylistError) -> String = { [self] (s: String) throws(PlaylistError) -> String in
            try self.substitute(s, lineNumber)
        }
        var blanks = false
        let list = try AttributeList.parse(
            value, lineNumber: lineNumber, maxAttributes: limits.maxAttributes,
            substitute: subst, blanks: &blanks)
        if blanks {
            noteBlanks(.attributeList, lineNumber, "blanks around a name, '=', a value or ',' in the \(tag.dropFirst()) attribute list ignored")
        }
        return Attributes(tag: tag, lineNumber: lineNumber, list: list)
    }

    func resolve(_ s: String, _ lineNumber: Int) throws(PlaylistError) -> URL {
        // A bare file name (`seg_00042.ts`) is the base's directory + the name (RFC 3986 §5.2.2–5.2.3:
        // no scheme, authority, query, fragment or dot segment to handle), which skips Foundation's
        // general resolution: that costs most of a 100,000-segment playlist's parse otherwise.
        if let directory = baseDirectory, Parser.isBareFileName(s), let u = URL(string: directory + s) { return u }
        if let u = URL(string: s, relativeTo: baseURL) { return u.absoluteURL }
        throw PlaylistError(
            kind: .invalidURI, lineNumber: lineNumber, rule: "RFC 3986: URI syntax",
            message: "cannot resolve URI \"\(s.prefix(200))\"")
    }

    /// A relative reference made only of unreserved characters (RFC 3986 §2.3) that is not `.` or `..`.
    static func isBareFileName(_ s: String) -> Bool {
        guard !s.isEmpty, s != ".", s != ".." else { return false }
        return s.utf8.allSatisfy { c in
            (c >= 0x61 && c <= 0x7A) || (c >= 0x41 && c <= 0x5A) || (c >= 0x30 && c <= 0x39)
                || c == 0x2D || c == 0x2E || c == 0x5F || c == 0x7E
        }
    }

    /// `url`'s absolute string without query and fragment, up to and including the last '/' of its
    /// path; nil without a scheme and authority (`scheme://host/...`) or a path.
    static func directory(of url: URL) -> String? {
        let absolute = url.absoluteString
        guard let schemeEnd = absolute.range(of: "://") else { return nil }
        var end = absolute.endIndex
        if let q = absolute[schemeEnd.upperBound...].firstIndex(where: { $0 == "?" || $0 == "#" }) { end = q }
        let withoutQuery = absolute[..<end]
        guard let pathStart = withoutQuery[schemeEnd.upperBound...].firstIndex(of: "/"),
            let lastSlash = withoutQuery.lastIndex(of: "/"), lastSlash >= pathStart
        else { return nil }
        let directory = withoutQuery[...lastSlash]
        // Dot segments in the base's path are removed by RFC 3986 resolution: leave those to Foundation.
        if directory[pathStart...].contains("/./") || directory[pathStart...].contains("/../") { return nil }
        return String(directory)
    }

    static func appearsTwice(_ tag: String, _ lineNumber: Int) -> PlaylistError {
        PlaylistError(
            kind: .constraintViolation, lineNumber: lineNumber,
            rule:
                "RFC 8216 §4.3.5: these tags MUST NOT appear more than once in a Playlist; if a tag appears more than once, clients MUST reject the playlist",
            message: "\(tag) appears more than once")
    }

    func badValue(_ tag: String, _ value: String, _ lineNumber: Int, _ rule: String) -> PlaylistError {
        PlaylistError(
            kind: .invalidAttributeValue, lineNumber: lineNumber, rule: rule,
            message: "\(tag) has an invalid value \"\(value.prefix(80))\"")
    }

    /// `what` (a tag, or a tag and attribute) `value` is above `limit`: the `PlaylistRanges` error.
    static func aboveRange(_ what: String, _ value: String, _ lineNumber: Int, limit: String, _ range: String) -> PlaylistError {
        let shown = value.count > 40 ? value.prefix(40) + "…" : Substring(value)
        return PlaylistRanges.error(lineNumber, "\(what) \(shown) is above \(limit)", rule: range)
    }

    /// A tag's value that must be a decimal-integer (`syntaxRule`) at most `max` (`range`): digits
    /// that do not fit Int (above 2^63-1) are out of range too, not a syntax error.
    func boundedInteger(
        _ tag: String, _ value: Substring, _ lineNumber: Int, max: Int, unit: String = "", syntaxRule: String,
        range: String
    ) throws(PlaylistError) -> Int {
        guard AttributeList.isDigits(value) else { throw badValue(tag, String(value), lineNumber, syntaxRule) }
        guard let n = Int(value), n <= max else {
            throw Parser.aboveRange(tag, String(value), lineNumber, limit: String(max) + unit, range)
        }
        return n
    }

    /// A tag's value that must be a non-negative decimal-floating-point or decimal-integer
    /// (`syntaxRule`) of seconds at most `PlaylistRanges.maxSegmentDurationSeconds`.
    func segmentDuration<S: StringProtocol>(_ tag: String, _ value: S, _ lineNumber: Int, syntaxRule: String) throws(PlaylistError) -> Double {
        guard let d = Numbers.decimalFloat(value), d >= 0 else { throw badValue(tag, String(value), lineNumber, syntaxRule) }
        guard d <= PlaylistRanges.maxSegmentDurationSeconds else {
            throw Parser.aboveRange(
                tag, String(value), lineNumber, limit: "\(Int(PlaylistRanges.maxSegmentDurationSeconds)) s",
                PlaylistRanges.durationRange)
        }
        return d
    }

    /// `length[@offset]` (RFC 8216 §4.3.2.2). An empty offset (`n@`) is read as absent, with a warning.
    mutating func byteRange(_ text: String, _ tag: String, _ lineNumber: Int) throws(PlaylistError) -> ByteRange {
        let rule = "RFC 8216 §4.3.2.2: BYTERANGE is <n>[@<o>], decimal-integers"
        var parts = text.split(separator: "@", omittingEmptySubsequences: false)
        let trimmed = parts.map(Parser.trimBlanks)
        if trimmed.map(\.count) != parts.map(\.count) {
            noteBlanks(.byteRange, lineNumber, "blanks around the numbers of \(tag.hasPrefix("#") ? String(tag.dropFirst()) : tag) ignored")
            parts = trimmed
        }
        guard parts.count <= 2 else { throw badValue(tag, text, lineNumber, rule) }
        let max = PlaylistRanges.maxByteRangeEnd
        let range = PlaylistRanges.byteRangeRange
        let n = try boundedInteger(tag, parts[0], lineNumber, max: max, syntaxRule: rule, range: range)
        if parts.count == 2 {
            if parts[1].isEmpty {
                warn(lineNumber, "\(tag) has an empty offset after '@'; read as no offset")
                return ByteRange(length: n, offset: nil)
            }
            let o = try boundedInteger(tag, parts[1], lineNumber, max: max, syntaxRule: rule, range: range)
            // Both are at most 2^53-1, so the sum cannot overflow.
            if o + n > max { throw Parser.aboveRange("\(tag) offset + length", String(o + n), lineNumber, limit: String(max), range) }
            return ByteRange(length: n, offset: o)
        }
        return ByteRange(length: n, offset: nil)
    }

    /// A range without offset that continues at `previousEnd` (a sub-range of the same resource
    /// that the parser already checked): its end is in range too.
    func continued(_ r: ByteRange, at previousEnd: Int, _ tag: String, _ lineNumber: Int) throws(PlaylistError) -> ByteRange {
        let max = PlaylistRanges.maxByteRangeEnd
        // previousEnd and r.length are at most 2^53-1 each: no overflow.
        if previousEnd + r.length > max {
            throw Parser.aboveRange(
                "\(tag) implicit offset \(previousEnd) + length", String(previousEnd + r.length), lineNumber,
                limit: String(max), PlaylistRanges.byteRangeRange)
        }
        return ByteRange(length: r.length, offset: previousEnd)
    }

    mutating func noteKind(_ tag: String, _ lineNumber: Int) throws(PlaylistError) {
        let rule =
            "RFC 8216 §4.1: a Playlist is either a Media Playlist or a Master Playlist; a client MUST fail to parse one with both kinds of tags"
        if multivariantTags.contains(tag) {
            if let m = firstMediaTag {
                throw PlaylistError(
                    kind: .mixedPlaylistKinds, lineNumber: lineNumber, rule: rule,
                    message: "\(tag) in a playlist that has the Media Playlist tag \(m.tag) at line \(m.line)")
            }
            if firstMultivariantTag == nil { firstMultivariantTag = (tag, lineNumber) }
        } else if mediaTags.contains(tag) {
            if let m = firstMultivariantTag {
                throw PlaylistError(
                    kind: .mixedPlaylistKinds, lineNumber: lineNumber, rule: rule,
                    message: "\(tag) in a playlist that has the Multivariant Playlist tag \(m.tag) at line \(m.line)")
            }
            if firstMediaTag == nil { firstMediaTag = (tag, lineNumber) }
        }
    }

    // MARK: URI lines

    mutating func handleURI(_ line: String, _ lineNumber: Int) throws(PlaylistError) {
        if let inf = pendingStreamInf {
            pendingStreamInf = nil
            let uri = try resolve(try substitute(line, lineNumber), lineNumber)
            try addVariant(inf, uri: uri)
            return
        }
        guard let inf = pendingInf else {
            if firstMultivariantTag != nil {
                throw PlaylistError(
                    kind: .syntax, lineNumber: lineNumber,
                    rule: "RFC 8216 §4.3.4.2: a URI line in a Master Playlist MUST follow EXT-X-STREAM-INF",
                    message: "URI line \"\(line.prefix(80))\" without a preceding EXT-X-STREAM-INF")
            }
            throw PlaylistError(
                kind: .missingRequiredTag, lineNumber: lineNumber,
                rule: "RFC 8216 §4.3.2.1: the EXTINF tag is REQUIRED for each Media Segment",
                message: "URI line \"\(line.prefix(80))\" without a preceding EXTINF")
        }
        pendingInf = nil
        let skipped = skip?.skippedSegments ?? 0
        if segments.count >= limits.maxSegments - skipped {
            throw PlaylistLimits.exceeded(
                "maxSegments", limit: limits.maxSegments, lineNumber: lineNumber,
                what: skipped > 0
                    ? "segment count \(segments.count + 1) + \(skipped) skipped"
                    : "segment count \(segments.count + 1)")
        }
        // EXT-X-MEDIA-SEQUENCE ≤ 2^53-1, SKIPPED-SEGMENTS and the count ≤ maxSegments: no overflow here.
        let msn = mediaSequence + skipped + segments.count
        if msn >= PlaylistRanges.maxMediaSequence {
            throw PlaylistRanges.error(
                lineNumber,
                "segment \(segments.count + 1) has Media Sequence Number \(msn) (EXT-X-MEDIA-SEQUENCE \(mediaSequence)"
                    + (skipped > 0 ? " + \(skipped) skipped" : "")
                    + " + \(segments.count)); the next one would be above \(PlaylistRanges.maxMediaSequence)",
                rule: PlaylistRanges.mediaSequenceRange)
        }
        let discontinuities = discontinuityCount + (pendingDiscontinuity ? 1 : 0)
        if discontinuitySequence + discontinuities > PlaylistRanges.maxDiscontinuitySequence {
            throw PlaylistRanges.error(
                lineNumber,
                "segment \(segments.count + 1) has Discontinuity Sequence Number \(discontinuitySequence) + \(discontinuities), above \(PlaylistRanges.maxDiscontinuitySequence)",
                rule: PlaylistRanges.discontinuitySequenceRange)
        }
        let uri = try resolve(try substitute(line, lineNumber), lineNumber)
        var range: ByteRange?
        if let (r, rl) = pendingByteRange {
            pendingByteRange = nil
            range = r
            if r.offset == nil {
                if let prev = segments.last, prev.uri == uri, let pr = prev.byteRange, let po = pr.offset {
                    range = try continued(r, at: po + pr.length, "EXT-X-BYTERANGE", rl)
                } else if segments.isEmpty && skip != nil {
                    warn(rl, "EXT-X-BYTERANGE without offset follows skipped segments; offset unknown")
                } else {
                    throw PlaylistError(
                        kind: .constraintViolation, lineNumber: rl,
                        rule:
                            "RFC 8216 §4.3.2.2: if the offset is not present, the previous Media Segment MUST be a sub-range of the same media resource",
                        message: "EXT-X-BYTERANGE without offset does not follow a sub-range of \(uri.lastPathComponent)")
                }
            }
        }
        if let t = targetDuration, (inf.duration).rounded() > t {
            warn(inf.line, "EXTINF duration \(inf.duration) rounds above EXT-X-TARGETDURATION \(t) (RFC 8216 §4.3.3.1)")
        }
        var pdt = pendingProgramDateTime
        if pdt == nil, let prev = segments.last, let p = prev.programDateTime {
            pdt = p.addingTimeInterval(prev.durationSeconds)
        }
        if pendingDiscontinuity { discontinuityCount += 1 }
        let key = currentKeys.first(where: { $0.keyFormat == "identity" }) ?? currentKeys.first
        let segment = MediaSegment(
            mediaSequence: msn,
            discontinuitySequence: discontinuitySequence + discontinuityCount,
            uri: uri, durationSeconds: inf.duration, title: inf.title, byteRange: range,
            discontinuity: pendingDiscontinuity, key: key, initializationSection: currentMap,
            programDateTime: pdt, gap: pendingGap, bitrateBps: currentBitrate, parts: pendingParts,
            keys: currentKeys)
        segments.append(segment)
        pendingParts = []
        pendingDiscontinuity = false
        pendingGap = false
        pendingProgramDateTime = nil
    }

    // MARK: Tags

    mutating func handleTag(_ line: String, _ lineNumber: Int, leadingBlanks: Bool, trailingBlanks: Bool) throws(PlaylistError) {
        let tag: String
        let value: String
        var blanksBeforeColon = false
        var blanksAfterColon = false
        // Searched as UTF-8 (ASCII ':' and ',' always sit on character boundaries): much cheaper per line.
        if let colon = line.utf8.firstIndex(of: UInt8(ascii: ":")) {
            let name = line[..<colon]
            blanksBeforeColon = name.last.map(Parser.isBlank) ?? false
            tag = String(blanksBeforeColon ? Parser.trimBlanks(name) : name)
            let rawValue = line[line.index(after: colon)...]
            blanksAfterColon = rawValue.first.map(Parser.isBlank) ?? false
            value = String(blanksAfterColon ? rawValue.drop(while: Parser.isBlank) : rawValue)
        } else {
            tag = line
            value = ""
        }
        if knownTags.contains(tag) {
            // Blanks where RFC 8216 allows none, but whose meaning is unambiguous: skipped, with a warning.
            let titled = tag == "#EXTINF" && value.utf8.contains(UInt8(ascii: ",")) // an EXTINF title is free text, blanks included
            if leadingBlanks || (trailingBlanks && !titled) {
                noteBlanks(
                    tag == "#EXTINF" && !leadingBlanks ? .extinfDuration : .lineEdges, lineNumber,
                    tag == "#EXTINF" && !leadingBlanks
                        ? "blanks around the EXTINF duration ignored"
                        : "blanks at the start or end of the line ignored")
            }
            if blanksBeforeColon { noteBlanks(.beforeColon, lineNumber, "blanks before the ':' of \(tag) ignored") }
            if blanksAfterColon {
                if tag == "#EXTINF" {
                    noteBlanks(.extinfDuration, lineNumber, "blanks around the EXTINF duration ignored")
                } else {
                    noteBlanks(.afterColon, lineNumber, "blanks after '\(tag):' ignored")
                }
            }
        } else if !line.utf8.contains(UInt8(ascii: ":")), let blank = line.firstIndex(where: Parser.isBlank),
            knownTags.contains(String(line[..<blank]))
        {
            // `#EXT-X-ENDLIST now`, `#EXT-X-TARGETDURATION 6`: a blank is not read as the ':' (nor is the
            // rest ignored): the line stays an unknown tag, and the warning says why it was not the tag.
            warnings.append(
                PlaylistWarning(
                    lineNumber: lineNumber,
                    message:
                        "\"\(line.prefix(80))\" is not \(line[..<blank]): a blank where ':' or the end of the line belongs; kept as an unknown tag",
                    rule: Blanks.lineEdges.rule))
        }
        try noteKind(tag, lineNumber)
        switch tag {
        case "#EXTM3U":
            warn(lineNumber, "repeated #EXTM3U ignored")
        case "#EXT-X-VERSION":
            guard version == nil else {
                throw PlaylistError(
                    kind: .constraintViolation, lineNumber: lineNumber,
                    rule: "RFC 8216 §4.3.1.2: a Playlist file MUST NOT contain more than one EXT-X-VERSION tag",
                    message: "EXT-X-VERSION appears twice")
            }
            guard let v = Numbers.integer(Substring(value)) else {
                throw badValue(tag, value, lineNumber, "RFC 8216 §4.3.1.2: EXT-X-VERSION:<n>, a decimal-integer")
            }
            version = v
        case "#EXT-X-INDEPENDENT-SEGMENTS":
            if independentSegments { throw Parser.appearsTwice(tag, lineNumber) }
            independentSegments = true
        case "#EXT-X-START":
            if start != nil { throw Parser.appearsTwice(tag, lineNumber) }
            let a = try attributes(tag, value, lineNumber)
            guard let off = try a.double("TIME-OFFSET", signed: true) else {
                throw a.missing("TIME-OFFSET", rule: "RFC 8216 §4.3.5.2: TIME-OFFSET is REQUIRED")
            }
            start = StartPoint(timeOffsetSeconds: off, precise: try a.yesNo("PRECISE"))
        case "#EXT-X-DEFINE":
            try handleDefine(value, lineNumber)
        case "#EXT-X-STREAM-INF":
            if let prev = pendingStreamInf {
                throw PlaylistError(
                    kind: .missingURI, lineNumber: prev.lineNumber,
                    rule: "RFC 8216 §4.3.4.2: the URI line that follows EXT-X-STREAM-INF is REQUIRED",
                    message: "EXT-X-STREAM-INF is followed by another EXT-X-STREAM-INF, not a URI line")
            }
            let a = try attributes(tag, value, lineNumber)
            _ = try a.integer("BANDWIDTH", required: "RFC 8216 §4.3.4.2: BANDWIDTH is REQUIRED")
            pendingStreamInf = a
        case "#EXT-X-I-FRAME-STREAM-INF":
            try handleIFrameStream(try attributes(tag, value, lineNumber))
        case "#EXT-X-MEDIA":
            try handleMedia(try attributes(tag, value, lineNumber))
        case "#EXT-X-SESSION-DATA":
            let a = try attributes(tag, value, lineNumber)
            let id = try a.quoted("DATA-ID", required: "RFC 8216 §4.3.4.4: DATA-ID is REQUIRED")
            let v = try a.quoted("VALUE")
            let u = try a.quoted("URI")
            if (v == nil) == (u == nil) {
                throw PlaylistError(
                    kind: .constraintViolation, lineNumber: lineNumber,
                    rule: "RFC 8216 §4.3.4.4: each EXT-X-SESSION-DATA MUST contain either a VALUE or URI attribute, but not both",
                    message: "EXT-X-SESSION-DATA needs exactly one of VALUE and URI")
            }
            sessionData.append(
                SessionData(
                    dataID: id, value: v, uri: try u.map { (s) throws(PlaylistError) in try resolve(s, lineNumber) },
                    language: try a.quoted("LANGUAGE")))
        case "#EXT-X-SESSION-KEY":
            let a = try attributes(tag, value, lineNumber)
            let key = try encryptionKey(a)
            if key.method == .none {
                throw PlaylistError(
                    kind: .invalidAttributeValue, lineNumber: lineNumber,
                    rule: "RFC 8216 §4.3.4.5: EXT-X-SESSION-KEY METHOD MUST NOT be NONE",
                    message: "EXT-X-SESSION-KEY with METHOD=NONE")
            }
            sessionKeys.append(key)
        case "#EXT-X-CONTENT-STEERING":
            let a = try attributes(tag, value, lineNumber)
            let uri = try a.quoted("SERVER-URI", required: "draft-pantos-hls-rfc8216bis §4.4.6.6: SERVER-URI is REQUIRED")
            contentSteering = ContentSteering(serverURI: try resolve(uri, lineNumber), pathwayID: try a.quoted("PATHWAY-ID"))
        default:
            try handleMediaTag(tag, value, line, lineNumber)
        }
    }

    mutating func handleDefine(_ value: String, _ lineNumber: Int) throws(PlaylistError) {
        let a = try attributes("#EXT-X-DEFINE", value, lineNumber)
        let name: String
        let resolved: String
        let definition: VariableDefinition
        if let n = try a.quoted("NAME") {
            name = n
            guard let v = try a.quoted("VALUE") else {
                throw a.missing("VALUE", rule: "draft-pantos-hls-rfc8216bis §4.4.2.3: VALUE is REQUIRED with NAME")
            }
            resolved = v
            definition = .value(name: n, value: v)
        } else if let n = try a.quoted("IMPORT") {
            name = n
            guard let v = parentVariables[n] else {
                throw PlaylistError(
                    kind: .variableError, lineNumber: lineNumber,
                    rule: "draft-pantos-hls-rfc8216bis §4.4.2.3: IMPORT of a variable the Multivariant Playlist does not define is an error",
                    message: "EXT-X-DEFINE IMPORT \"\(n)\" not defined by the parent playlist")
            }
            resolved = v
            definition = .importFromParent(name: n)
        } else if let n = try a.quoted("QUERYPARAM") {
            name = n
            let items = URLComponents(url: baseURL, resolvingAgainstBaseURL: true)?.queryItems ?? []
            guard let v = items.first(where: { $0.name == n })?.value else {
                throw PlaylistError(
                    kind: .variableError, lineNumber: lineNumber,
                    rule: "draft-pantos-hls-rfc8216bis §4.4.2.3: QUERYPARAM naming a parameter absent from the Playlist URI is an error",
                    message: "EXT-X-DEFINE QUERYPARAM \"\(n)\" not in the playlist URL query")
            }
            resolved = v
            definition = .queryParameter(name: n)
        } else {
            throw a.missing(
                "NAME, IMPORT or QUERYPARAM",
                rule: "draft-pantos-hls-rfc8216bis §4.4.2.3: EXT-X-DEFINE needs NAME, IMPORT or QUERYPARAM")
        }
        guard Parser.isVariableName(name) else {
            throw PlaylistError(
                kind: .variableError, lineNumber: lineNumber,
                rule: "draft-pantos-hls-rfc8216bis §4.4.2.3: variable names are [a-zA-Z0-9-_]",
                message: "invalid variable name \"\(name)\"")
        }
        guard variables[name] == nil else {
            throw PlaylistError(
                kind: .variableError, lineNumber: lineNumber,
                rule: "draft-pantos-hls-rfc8216bis §4.4.2.3: a Playlist MUST NOT contain two EXT-X-DEFINE tags with the same name",
                message: "EXT-X-DEFINE duplicate variable name \"\(name)\"")
        }
        if definitions.count >= limits.maxVariables {
            throw PlaylistLimits.exceeded(
                "maxVariables", limit: limits.maxVariables, lineNumber: lineNumber,
                what: "EXT-X-DEFINE count \(definitions.count + 1)")
        }
        variables[name] = resolved
        definitions.append(definition)
    }

    mutating func addVariant(_ a: Attributes, uri: URL) throws(PlaylistError) {
        if variants.count >= limits.maxVariants {
            throw PlaylistLimits.exceeded(
                "maxVariants", limit: limits.maxVariants, lineNumber: a.lineNumber,
                what: "variant count \(variants.count + 1)")
        }
        var ccGroup: String?
        var ccNone = false
        if let cc = a.dict["CLOSED-CAPTIONS"] {
            switch cc {
            case .quotedString(let s): ccGroup = s
            case .enumeratedString("NONE"): ccNone = true
            default: throw a.wrongType("CLOSED-CAPTIONS", "quoted-string or NONE")
            }
        }
        variants.append(
            VariantStream(
                uri: uri,
                bandwidthBps: try a.integer(
                    "BANDWIDTH", required: "RFC 8216 §4.3.4.2: BANDWIDTH is REQUIRED",
                    max: PlaylistRanges.maxBitrateBps, range: PlaylistRanges.bitrateRange),
                averageBandwidthBps: try a.integer("AVERAGE-BANDWIDTH", max: PlaylistRanges.maxBitrateBps, range: PlaylistRanges.bitrateRange),
                score: try a.double("SCORE"),
                codecs: Parser.codecs(try a.quoted("CODECS")),
                supplementalCodecs: try a.quoted("SUPPLEMENTAL-CODECS"),
                resolution: try a.resolution("RESOLUTION"),
                frameRate: try a.double("FRAME-RATE"),
                hdcpLevel: try a.enumerated("HDCP-LEVEL"),
                videoRange: try a.enumerated("VIDEO-RANGE"),
                audioGroup: try a.quoted("AUDIO"),
                videoGroup: try a.quoted("VIDEO"),
                subtitlesGroup: try a.quoted("SUBTITLES"),
                closedCaptionsGroup: ccGroup, closedCaptionsNone: ccNone,
                pathwayID: try a.quoted("PATHWAY-ID"),
                stableVariantID: try a.quoted("STABLE-VARIANT-ID"),
                attributes: a.raw))
    }

    static func codecs(_ s: String?) -> [String] {
        guard let s else { return [] }
        return s.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    mutating func handleIFrameStream(_ a: Attributes) throws(PlaylistError) {
        if iFrameStreams.count >= limits.maxVariants {
            throw PlaylistLimits.exceeded(
                "maxVariants", limit: limits.maxVariants, lineNumber: a.lineNumber,
                what: "I-frame variant count \(iFrameStreams.count + 1)")
        }
        let uri = try a.quoted("URI", required: "RFC 8216 §4.3.4.3: URI is REQUIRED in EXT-X-I-FRAME-STREAM-INF")
        iFrameStreams.append(
            IFrameStream(
                uri: try resolve(uri, a.lineNumber),
                bandwidthBps: try a.integer(
                    "BANDWIDTH", required: "RFC 8216 §4.3.4.2: BANDWIDTH is REQUIRED",
                    max: PlaylistRanges.maxBitrateBps, range: PlaylistRanges.bitrateRange),
                averageBandwidthBps: try a.integer("AVERAGE-BANDWIDTH", max: PlaylistRanges.maxBitrateBps, range: PlaylistRanges.bitrateRange),
                codecs: Parser.codecs(try a.quoted("CODECS")),
                resolution: try a.resolution("RESOLUTION"),
                attributes: a.raw))
    }

    mutating func handleMedia(_ a: Attributes) throws(PlaylistError) {
        if renditions.count >= limits.maxRenditions {
            throw PlaylistLimits.exceeded(
                "maxRenditions", limit: limits.maxRenditions, lineNumber: a.lineNumber,
                what: "EXT-X-MEDIA count \(renditions.count + 1)")
        }
        guard let typeText = try a.enumerated("TYPE") else {
            throw a.missing("TYPE", rule: "RFC 8216 §4.3.4.1: TYPE is REQUIRED")
        }
        guard let type = RenditionType(rawValue: typeText) else {
            throw a.wrongType("TYPE", "AUDIO, VIDEO, SUBTITLES or CLOSED-CAPTIONS")
        }
        let group = try a.quoted("GROUP-ID", required: "RFC 8216 §4.3.4.1: GROUP-ID is REQUIRED")
        let name = try a.quoted("NAME", required: "RFC 8216 §4.3.4.1: NAME is REQUIRED")
        let uriText = try a.quoted("URI")
        if type == .closedCaptions && uriText != nil {
            throw PlaylistError(
                kind: .constraintViolation, lineNumber: a.lineNumber,
                rule: "RFC 8216 §4.3.4.1: if TYPE is CLOSED-CAPTIONS, the URI attribute MUST NOT be present",
                message: "EXT-X-MEDIA TYPE=CLOSED-CAPTIONS with a URI")
        }
        if type == .subtitles && uriText == nil {
            throw a.missing("URI", rule: "RFC 8216 §4.3.4.1: URI is REQUIRED if the TYPE is SUBTITLES")
        }
        let instream = try a.quoted("INSTREAM-ID")
        if type == .closedCaptions && instream == nil {
            throw a.missing("INSTREAM-ID", rule: "RFC 8216 §4.3.4.1: INSTREAM-ID is REQUIRED if TYPE is CLOSED-CAPTIONS")
        }
        let isDefault = try a.yesNo("DEFAULT")
        let autoselect = try a.yesNo("AUTOSELECT")
        if isDefault && a.has("AUTOSELECT") && !autoselect {
            throw PlaylistError(
                kind: .constraintViolation, lineNumber: a.lineNumber,
                rule: "RFC 8216 §4.3.4.1: if DEFAULT=YES, AUTOSELECT MUST be YES when present",
                message: "EXT-X-MEDIA DEFAULT=YES with AUTOSELECT=NO")
        }
        let forced = try a.yesNo("FORCED")
        if forced && type != .subtitles {
            throw PlaylistError(
                kind: .constraintViolation, lineNumber: a.lineNumber,
                rule: "RFC 8216 §4.3.4.1: FORCED MUST NOT be present unless TYPE is SUBTITLES",
                message: "EXT-X-MEDIA FORCED on TYPE=\(typeText)")
        }
        renditions.append(
            Rendition(
                type: type, uri: try uriText.map { (s) throws(PlaylistError) in try resolve(s, a.lineNumber) },
                groupID: group, language: try a.quoted("LANGUAGE"),
                associatedLanguage: try a.quoted("ASSOC-LANGUAGE"), name: name, isDefault: isDefault,
                autoselect: autoselect, forced: forced, instreamID: instream,
                characteristics: Parser.codecs(try a.quoted("CHARACTERISTICS")),
                channels: try a.quoted("CHANNELS"), attributes: a.raw))
    }

    func encryptionKey(_ a: Attributes) throws(PlaylistError) -> EncryptionKey {
        guard let m = try a.enumerated("METHOD") else {
            throw a.missing("METHOD", rule: "RFC 8216 §4.3.2.4: METHOD is REQUIRED")
        }
        let method: EncryptionMethod
        switch m {
        case "NONE": method = .none
        case "AES-128": method = .aes128
        case "SAMPLE-AES": method = .sampleAES
        case "SAMPLE-AES-CTR": method = .sampleAESCTR
        default: method = .other(m)
        }
        if method == .none { return EncryptionKey(method: .none) }
        let uriText = try a.quoted("URI", required: "RFC 8216 §4.3.2.4: URI is REQUIRED unless the METHOD is NONE")
        var iv: [UInt8]?
        if let bytes = try a.hex("IV") {
            var b = bytes
            while b.count > 16, b.first == 0 { b.removeFirst() }
            guard b.count <= 16 else {
                throw PlaylistError(
                    kind: .invalidAttributeValue, lineNumber: a.lineNumber,
                    rule: "RFC 8216 §4.3.2.4: IV is a 128-bit hexadecimal-sequence",
                    message: "EXT-X-KEY IV is longer than 128 bits")
            }
            iv = [UInt8](repeating: 0, count: 16 - b.count) + b
        }
        return EncryptionKey(
            method: method, uri: try resolve(uriText, a.lineNumber), iv: iv,
            keyFormat: try a.quoted("KEYFORMAT") ?? "identity",
            keyFormatVersions: try a.quoted("KEYFORMATVERSIONS"))
    }

    mutating func handleMediaTag(_ tag: String, _ value: String, _ line: String, _ lineNumber: Int) throws(PlaylistError) {
        switch tag {
        case "#EXTINF":
            if let prev = pendingInf {
                throw PlaylistError(
                    kind: .missingURI, lineNumber: prev.line,
                    rule: "RFC 8216 §4.3.2.1: each EXTINF applies to the Media Segment URI that follows it",
                    message: "EXTINF is followed by another EXTINF, not a URI line")
            }
            let durationText: Substring
            let title: String
            if let comma = value.utf8.firstIndex(of: UInt8(ascii: ",")) {
                durationText = value[..<comma]
                let rawTitle = value[value.index(after: comma)...]
                title =
                    rawTitle.first?.isWhitespace == true || rawTitle.last?.isWhitespace == true
                    ? rawTitle.trimmingCharacters(in: .whitespaces) : String(rawTitle)
            } else {
                durationText = Substring(value)
                title = ""
                warn(lineNumber, "EXTINF without a comma after the duration (RFC 8216 §4.3.2.1 requires \"<duration>,[<title>]\")")
            }
            let trimmedDuration = Parser.trimBlanks(durationText)
            if trimmedDuration.startIndex != durationText.startIndex || trimmedDuration.endIndex != durationText.endIndex {
                noteBlanks(.extinfDuration, lineNumber, "blanks around the EXTINF duration ignored")
            }
            let d = try segmentDuration(
                tag, trimmedDuration, lineNumber,
                syntaxRule: "RFC 8216 §4.3.2.1: EXTINF duration is a non-negative decimal-floating-point or decimal-integer")
            pendingInf = (d, title, lineNumber)
        case "#EXT-X-TARGETDURATION":
            if targetDuration != nil {
                throw PlaylistError(
                    kind: .constraintViolation, lineNumber: lineNumber,
                    rule: "RFC 8216 §4.3.3.1: EXT-X-TARGETDURATION is a Media Playlist tag that MUST NOT appear more than once",
                    message: "EXT-X-TARGETDURATION appears again (first at line \(targetDurationLine))")
            }
            let d = try segmentDuration(tag, value, lineNumber, syntaxRule: "RFC 8216 §4.3.3.1: EXT-X-TARGETDURATION:<s>, a decimal-integer")
            if Numbers.integer(Substring(value)) == nil {
                warn(lineNumber, "EXT-X-TARGETDURATION \(value) is not a decimal-integer")
            }
            targetDuration = d
            targetDurationLine = lineNumber
        case "#EXT-X-MEDIA-SEQUENCE":
            if mediaSequenceSeen || !segments.isEmpty {
                throw PlaylistError(
                    kind: .constraintViolation, lineNumber: lineNumber,
                    rule: "RFC 8216 §4.3.3.2: EXT-X-MEDIA-SEQUENCE MUST appear once, before the first Media Segment",
                    message: "EXT-X-MEDIA-SEQUENCE repeated or after the first Media Segment")
            }
            mediaSequence = try boundedInteger(
                tag, Substring(value), lineNumber, max: PlaylistRanges.maxMediaSequence,
                syntaxRule: "RFC 8216 §4.3.3.2: EXT-X-MEDIA-SEQUENCE:<number>, a decimal-integer",
                range: PlaylistRanges.mediaSequenceRange)
            mediaSequenceSeen = true
        case "#EXT-X-DISCONTINUITY-SEQUENCE":
            if discontinuitySequenceSeen || !segments.isEmpty || pendingDiscontinuity {
                throw PlaylistError(
                    kind: .constraintViolation, lineNumber: lineNumber,
                    rule:
                        "RFC 8216 §4.3.3.3: EXT-X-DISCONTINUITY-SEQUENCE MUST appear once, before the first Media Segment and any EXT-X-DISCONTINUITY",
                    message: "EXT-X-DISCONTINUITY-SEQUENCE repeated or misplaced")
            }
            discontinuitySequence = try boundedInteger(
                tag, Substring(value), lineNumber, max: PlaylistRanges.maxDiscontinuitySequence,
                syntaxRule: "RFC 8216 §4.3.3.3: EXT-X-DISCONTINUITY-SEQUENCE:<number>, a decimal-integer",
                range: PlaylistRanges.discontinuitySequenceRange)
            discontinuitySequenceSeen = true
        case "#EXT-X-PLAYLIST-TYPE":
            guard let t = PlaylistType(rawValue: value) else {
                throw badValue(tag, value, lineNumber, "RFC 8216 §4.3.3.5: EXT-X-PLAYLIST-TYPE is EVENT or VOD")
            }
            playlistType = t
        case "#EXT-X-ENDLIST":
            endList = true
        case "#EXT-X-I-FRAMES-ONLY":
            iFramesOnly = true
        case "#EXT-X-BYTERANGE":
            pendingByteRange = (try byteRange(value, tag, lineNumber), lineNumber)
        case "#EXT-X-DISCONTINUITY":
            pendingDiscontinuity = true
        case "#EXT-X-GAP":
            pendingGap = true
        case "#EXT-X-BITRATE":
            let k = try boundedInteger(
                tag, Substring(value), lineNumber, max: PlaylistRanges.maxBitrateBps / 1000, unit: " kbit/s",
                syntaxRule: "draft-pantos-hls-rfc8216bis §4.4.4.8: EXT-X-BITRATE:<rate>, a decimal-integer of kilobits per second",
                range: PlaylistRanges.bitrateRange)
            currentBitrate = k * 1000
        case "#EXT-X-KEY":
            let a = try attributes(tag, value, lineNumber)
            let key = try encryptionKey(a)
            if key.method == .none {
                if a.list.count > 1 {
                    warn(lineNumber, "EXT-X-KEY METHOD=NONE with other attributes (RFC 8216 §4.3.2.4 says they MUST NOT be present)")
                }
                currentKeys = []
            } else {
                currentKeys.removeAll { $0.keyFormat == key.keyFormat }
                currentKeys.append(key)
            }
        case "#EXT-X-MAP":
            let a = try attributes(tag, value, lineNumber)
            let uri = try a.quoted("URI", required: "RFC 8216 §4.3.2.5: URI is REQUIRED in EXT-X-MAP")
            var range: ByteRange?
            if let r = try a.quoted("BYTERANGE") {
                let br = try byteRange(r, "EXT-X-MAP BYTERANGE", lineNumber)
                range = ByteRange(length: br.length, offset: br.offset ?? 0)
            }
            currentMap = MediaInitializationSection(uri: try resolve(uri, lineNumber), byteRange: range)
        case "#EXT-X-PROGRAM-DATE-TIME":
            guard let (date, hasZone) = ISO8601.parse(value) else {
                throw badValue(tag, value, lineNumber, "RFC 8216 §4.3.2.6: EXT-X-PROGRAM-DATE-TIME is an ISO/IEC 8601:2004 date-time")
            }
            if !hasZone { warn(lineNumber, "EXT-X-PROGRAM-DATE-TIME without a time zone; read as UTC") }
            pendingProgramDateTime = date
        case "#EXT-X-DATERANGE":
            try handleDateRange(try attributes(tag, value, lineNumber))
        case "#EXT-X-SERVER-CONTROL":
            let a = try attributes(tag, value, lineNumber)
            let span = PlaylistRanges.maxSpanSeconds
            serverControl = ServerControl(
                canBlockReload: try a.yesNo("CAN-BLOCK-RELOAD"),
                canSkipUntilSeconds: try a.seconds("CAN-SKIP-UNTIL", max: span, range: PlaylistRanges.spanRange),
                canSkipDateRanges: try a.yesNo("CAN-SKIP-DATERANGES"),
                holdBackSeconds: try a.seconds("HOLD-BACK", max: span, range: PlaylistRanges.spanRange),
                partHoldBackSeconds: try a.seconds("PART-HOLD-BACK", max: span, range: PlaylistRanges.spanRange))
            if serverControl?.canSkipDateRanges == true && serverControl?.canSkipUntilSeconds == nil {
                throw PlaylistError(
                    kind: .constraintViolation, lineNumber: lineNumber,
                    rule: "draft-pantos-hls-rfc8216bis §4.4.3.8: CAN-SKIP-DATERANGES requires CAN-SKIP-UNTIL",
                    message: "EXT-X-SERVER-CONTROL CAN-SKIP-DATERANGES=YES without CAN-SKIP-UNTIL")
            }
        case "#EXT-X-PART-INF":
            let a = try attributes(tag, value, lineNumber)
            partTarget = try a.seconds(
                "PART-TARGET", required: "draft-pantos-hls-rfc8216bis §4.4.3.7: PART-TARGET is REQUIRED",
                max: PlaylistRanges.maxSegmentDurationSeconds, range: PlaylistRanges.durationRange)
        case "#EXT-X-PART":
            let a = try attributes(tag, value, lineNumber)
            partCount += 1
            if firstPartLine == 0 { firstPartLine = lineNumber }
            if partCount > limits.maxPartialSegments {
                throw PlaylistLimits.exceeded(
                    "maxPartialSegments", limit: limits.maxPartialSegments, lineNumber: lineNumber,
                    what: "EXT-X-PART count \(partCount)")
            }
            let uri = try resolve(try a.quoted("URI", required: "draft-pantos-hls-rfc8216bis §4.4.4.9: URI is REQUIRED in EXT-X-PART"), lineNumber)
            let duration = try a.seconds(
                "DURATION", required: "draft-pantos-hls-rfc8216bis §4.4.4.9: DURATION is REQUIRED in EXT-X-PART",
                max: PlaylistRanges.maxSegmentDurationSeconds, range: PlaylistRanges.durationRange)
            var range: ByteRange?
            if let rv = a.dict["BYTERANGE"] {
                // The draft says quoted-string; Apple's own LL-HLS example 03 writes it unquoted.
                if rv.quotedStringValue == nil { warn(lineNumber, "EXT-X-PART BYTERANGE is not a quoted-string; read as written") }
                var br = try byteRange(rv.rawText, "EXT-X-PART BYTERANGE", lineNumber)
                if br.offset == nil {
                    if let last = lastPartRange, last.uri == uri {
                        br = try continued(br, at: last.end, "EXT-X-PART BYTERANGE", lineNumber)
                    } else {
                        warn(lineNumber, "EXT-X-PART BYTERANGE without offset does not follow a part of the same resource; offset unknown")
                    }
                }
                range = br
                if let o = br.offset { lastPartRange = (uri, o + br.length) } else { lastPartRange = nil }
            } else {
                lastPartRange = nil
            }
            pendingParts.append(
                PartialSegment(
                    uri: uri, durationSeconds: duration, independent: try a.yesNo("INDEPENDENT"),
                    byteRange: range, gap: try a.yesNo("GAP")))
        case "#EXT-X-PRELOAD-HINT":
            let a = try attributes(tag, value, lineNumber)
            guard let type = try a.enumerated("TYPE") else {
                throw a.missing("TYPE", rule: "draft-pantos-hls-rfc8216bis §4.4.5.3: TYPE is REQUIRED in EXT-X-PRELOAD-HINT")
            }
            if type != "PART" && type != "MAP" { warn(lineNumber, "EXT-X-PRELOAD-HINT TYPE=\(type) is not PART or MAP; kept") }
            let uri = try a.quoted("URI", required: "draft-pantos-hls-rfc8216bis §4.4.5.3: URI is REQUIRED in EXT-X-PRELOAD-HINT")
            let maxEnd = PlaylistRanges.maxByteRangeEnd
            let start = try a.integer("BYTERANGE-START", max: maxEnd, range: PlaylistRanges.byteRangeRange)
            let length = try a.integer("BYTERANGE-LENGTH", max: maxEnd, range: PlaylistRanges.byteRangeRange)
            if (start ?? 0) + (length ?? 0) > maxEnd { // each at most 2^53-1: no overflow
                throw Parser.aboveRange(
                    "EXT-X-PRELOAD-HINT BYTERANGE-START + BYTERANGE-LENGTH", String((start ?? 0) + (length ?? 0)),
                    lineNumber, limit: String(maxEnd), PlaylistRanges.byteRangeRange)
            }
            preloadHints.append(PreloadHint(type: type, uri: try resolve(uri, lineNumber), byteRangeStart: start, byteRangeLength: length))
        case "#EXT-X-SKIP":
            let a = try attributes(tag, value, lineNumber)
            let n = try a.integer("SKIPPED-SEGMENTS", required: "draft-pantos-hls-rfc8216bis §4.4.5.2: SKIPPED-SEGMENTS is REQUIRED")
            // The playlist the delta stands for lists the skipped segments and these: together within maxSegments.
            if n > limits.maxSegments - segments.count {
                throw PlaylistLimits.exceeded(
                    "maxSegments", limit: limits.maxSegments, lineNumber: lineNumber,
                    what: "EXT-X-SKIP SKIPPED-SEGMENTS \(n)" + (segments.isEmpty ? "" : " + \(segments.count) segments"))
            }
            var removed: [String] = []
            if let r = a.dict["RECENTLY-REMOVED-DATERANGES"] {
                if r.quotedStringValue == nil { warn(lineNumber, "RECENTLY-REMOVED-DATERANGES is not a quoted-string; read as written") }
                removed = r.rawText.split(separator: "\t").map(String.init).filter { !$0.isEmpty }
            }
            skip = SkipInfo(skippedSegments: n, recentlyRemovedDateRanges: removed)
        case "#EXT-X-RENDITION-REPORT":
            let a = try attributes(tag, value, lineNumber)
            let uri = try a.quoted("URI", required: "draft-pantos-hls-rfc8216bis §4.4.5.4: URI is REQUIRED in EXT-X-RENDITION-REPORT")
            let reportMax = PlaylistRanges.maxReportedPosition
            renditionReports.append(
                RenditionReport(
                    uri: try resolve(uri, lineNumber),
                    lastMediaSequence: try a.integer("LAST-MSN", max: reportMax, range: PlaylistRanges.reportRange),
                    lastPart: try a.integer("LAST-PART", max: reportMax, range: PlaylistRanges.reportRange)))
        default:
            unknownTags.append(UnknownTag(line: line, lineNumber: lineNumber))
        }
    }

    mutating func handleDateRange(_ a: Attributes) throws(PlaylistError) {
        if dateRanges.count >= limits.maxDateRanges {
            throw PlaylistLimits.exceeded(
                "maxDateRanges", limit: limits.maxDateRanges, lineNumber: a.lineNumber,
                what: "EXT-X-DATERANGE count \(dateRanges.count + 1)")
        }
        let id = try a.quoted("ID", required: "RFC 8216 §4.3.2.7: ID is REQUIRED in EXT-X-DATERANGE")
        func date(_ name: String) throws(PlaylistError) -> Date? {
            guard let s = try a.quoted(name) else { return nil }
            guard let (d, _) = ISO8601.parse(s) else { throw a.wrongType(name, "ISO-8601 date") }
            return d
        }
        let startDate = try date("START-DATE")
        let endDate = try date("END-DATE")
        let duration = try a.seconds("DURATION", max: PlaylistRanges.maxSpanSeconds, range: PlaylistRanges.spanRange)
        let endOnNext = try a.yesNo("END-ON-NEXT")
        let classID = try a.quoted("CLASS")
        let rule = "RFC 8216 §4.3.2.7: EXT-X-DATERANGE constraints"
        if let s = startDate, let e = endDate, e < s {
            throw PlaylistError(kind: .constraintViolation, lineNumber: a.lineNumber, rule: rule, message: "END-DATE is before START-DATE")
        }
        if let s = startDate, let e = endDate, let d = duration, abs(s.addingTimeInterval(d).timeIntervalSince(e)) > 0.001 {
            throw PlaylistError(
                kind: .constraintViolation, lineNumber: a.lineNumber, rule: rule,
                message: "END-DATE does not equal START-DATE + DURATION")
        }
        if endOnNext && (classID == nil || duration != nil || endDate != nil) {
            throw PlaylistError(
                kind: .constraintViolation, lineNumber: a.lineNumber, rule: rule,
                message: "END-ON-NEXT=YES needs CLASS and forbids DURATION and END-DATE")
        }
        dateRanges.append(
            DateRange(
                id: id, classID: classID, startDate: startDate, endDate: endDate,
                durationSeconds: duration,
                plannedDurationSeconds: try a.seconds(
                    "PLANNED-DURATION", max: PlaylistRanges.maxSpanSeconds,
                    range: PlaylistRanges.spanRange),
                endOnNext: endOnNext, attributes: a.raw))
    }
}

/// ISO 8601 date-time as HLS uses it: `YYYY-MM-DDThh:mm:ss[.fff][Z|±hh:mm|±hhmm|±hh]`.
/// Pure arithmetic: no formatter, no locale, no clock.
enum ISO8601 {
    /// Returns the date and whether a time zone was given.
    static func parse(_ s: String) -> (Date, Bool)? {
        let u = Array(s.utf8)
        var i = 0
        func digits(_ n: Int) -> Int? {
            guard i + n <= u.count else { return nil }
            var v = 0
            for k in 0..<n {
                let c = u[i + k]
                guard c >= 0x30, c <= 0x39 else { return nil }
                v = v * 10 + Int(c - 0x30)
            }
            i += n
            return v
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < u.count, u[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = digits(4), expect(0x2D), let month = digits(2), expect(0x2D), let day = digits(2) else { return nil }
        guard i < u.count, u[i] == UInt8(ascii: "T") || u[i] == UInt8(ascii: "t") || u[i] == 0x20 else { return nil }
        i += 1
        guard let hour = digits(2), expect(0x3A), let minute = digits(2), expect(0x3A), let second = digits(2) else { return nil }
        var fraction = 0.0
        if i < u.count, u[i] == UInt8(ascii: ".") || u[i] == UInt8(ascii: ",") {
            i += 1
            var scale = 0.1
            var any = false
            while i < u.count, u[i] >= 0x30, u[i] <= 0x39 {
                fraction += Double(u[i] - 0x30) * scale
                scale /= 10
                i += 1
                any = true
            }
            guard any else { return nil }
        }
        guard (1...12).contains(month), (1...31).contains(day), hour <= 24, minute <= 59, second <= 60 else { return nil }
        var offsetSeconds = 0
        var hasZone = false
        if i < u.count {
            hasZone = true
            if u[i] == UInt8(ascii: "Z") || u[i] == UInt8(ascii: "z") {
                i += 1
            } else if u[i] == UInt8(ascii: "+") || u[i] == UInt8(ascii: "-") {
                let sign = u[i] == UInt8(ascii: "-") ? -1 : 1
                i += 1
                guard let oh = digits(2) else { return nil }
                var om = 0
                if i < u.count {
                    _ = expect(0x3A)
                    guard let m = digits(2) else { return nil }
                    om = m
                }
                offsetSeconds = sign * (oh * 3600 + om * 60)
            } else {
                return nil
            }
            guard i == u.count else { return nil }
        }
        // Days from civil (Howard Hinnant's algorithm).
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        let days = era * 146097 + doe - 719468
        let seconds = Double(days * 86400 + hour * 3600 + minute * 60 + second - offsetSeconds) + fraction
        return (Date(timeIntervalSince1970: seconds), hasZone)
    }
}
