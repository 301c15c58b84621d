// The rules of `hlsplay check URL`: a parsed playlist and what was measured in its
// first segment (and its byte ranges) in, findings out. Pure: nothing here fetches,
// probes or reads a clock; HLSPlayer's StreamChecker does that and asks these rules.

import Foundation

/// How bad a finding is: an error breaks a MUST of RFC 8216 or of Apple's HLS Authoring
/// Specification (exit 65), a warning a SHOULD or something a player has to work around,
/// info is what was measured or why something was not.
public enum CheckSeverity: String, Sendable, Equatable, Codable, Comparable {
    case error, warning, info

    private var rank: Int {
        switch self {
        case .error: 2
        case .warning: 1
        case .info: 0
        }
    }
    public static func < (a: CheckSeverity, b: CheckSeverity) -> Bool { a.rank < b.rank }
}

/// One thing `check` found, with the rule it comes from (stable ids, docs/playlist-parsing.md).
public struct CheckFinding: Sendable, Equatable, Codable {
    public var severity: CheckSeverity
    /// Stable id, e.g. `target-duration`, `peak-bitrate`, `codecs-undeclared`.
    public var rule: String
    public var message: String
    /// The text the rule comes from (RFC 8216 section, Apple HLS Authoring Specification), when one does.
    public var reference: String?

    public init(_ severity: CheckSeverity, _ rule: String, _ message: String, reference: String? = nil) {
        self.severity = severity
        self.rule = rule
        self.message = message
        self.reference = reference
    }
}

/// One elementary stream found in a probed segment.
public struct ProbedStream: Sendable, Equatable, Codable {
    /// "video" or "audio".
    public var kind: String
    /// FFmpeg's codec name: h264, hevc, av1, vp9, aac, mp3, ac3, eac3, opus, flac, ...
    public var codec: String
    public var width: Int?
    public var height: Int?
    public var sampleRate: Int?
    public var channels: Int?

    public init(kind: String, codec: String, width: Int? = nil, height: Int? = nil, sampleRate: Int? = nil, channels: Int? = nil) {
        self.kind = kind
        self.codec = codec
        self.width = width
        self.height = height
        self.sampleRate = sampleRate
        self.channels = channels
    }
}

/// What was measured in a playlist's first segment.
public struct SegmentProbe: Sendable, Equatable {
    /// EXTINF of the segment, seconds.
    public var durationSeconds: Double
    /// Bytes of the segment itself (after decryption; the initialization section not counted).
    public var bytes: Int
    /// The streams the demuxer found; empty when the segment was not probed.
    public var streams: [ProbedStream]

    public init(durationSeconds: Double, bytes: Int, streams: [ProbedStream]) {
        self.durationSeconds = durationSeconds
        self.bytes = bytes
        self.streams = streams
    }

    /// bits / EXTINF; nil for a segment of no duration.
    public var bitrateBps: Double? { durationSeconds > 0 ? Double(bytes) * 8 / durationSeconds : nil }
}

/// Bit rates a Media Playlist's EXT-X-BYTERANGE lengths show without fetching a segment.
public struct ByteRangeRates: Sendable, Equatable, Codable {
    /// Segments with a byte range and a duration > 0 (the ones measured).
    public var segments: Int
    /// Segments of the playlist (a rate over all of them needs `segments == totalSegments`).
    public var totalSegments: Int
    /// Largest length × 8 / EXTINF over those segments.
    public var peakBps: Double
    /// Sum of lengths × 8 / sum of EXTINF.
    public var averageBps: Double

    /// nil when no segment has a byte range.
    public static func measure(_ playlist: MediaPlaylist) -> ByteRangeRates? {
        var count = 0
        var peak = 0.0
        var bits = 0.0
        var seconds = 0.0
        for s in playlist.segments where !s.gap && s.durationSeconds > 0 {
            guard let range = s.byteRange, range.length > 0 else { continue }
            count += 1
            let b = Double(range.length) * 8
            peak = max(peak, b / s.durationSeconds)
            bits += b
            seconds += s.durationSeconds
        }
        guard count > 0, seconds > 0 else { return nil }
        return ByteRangeRates(segments: count, totalSegments: playlist.segments.count, peakBps: peak, averageBps: bits / seconds)
    }
}

public enum StreamCheck {
    /// Apple HLS Authoring Specification (bit rates): for VOD the measured peak segment bit rate
    /// MUST be within 10 % of BANDWIDTH and the average within 10 % of AVERAGE-BANDWIDTH.
    public static let vodBitrateTolerance = 0.10
    /// For live content the authoring specification allows the peak up to 125 % of BANDWIDTH.
    public static let liveBitrateTolerance = 0.25
    /// Segments named one by one for a rule that many break; the rest are counted in one finding.
    public static let maxFindingsPerRule = 5

    static let bitrateReference = "Apple HLS Authoring Specification: measured peak bit rate MUST be within 10% of BANDWIDTH (VOD; live: below 125%)"
    static let averageReference = "Apple HLS Authoring Specification: average segment bit rate MUST be within 10% of AVERAGE-BANDWIDTH (VOD)"
    static let targetReference =
        "RFC 8216 §4.3.3.1: the EXTINF duration of each Media Segment, rounded to the nearest integer, MUST be <= the target duration"
    static let codecsReference = "RFC 8216 §4.3.4.2: CODECS lists every media format present in any Media Segment of the Variant Stream"
    static let resolutionReference = "RFC 8216 §4.3.4.2: RESOLUTION is the optimal pixel resolution of the video in the Variant Stream"

    // MARK: - Multivariant Playlist

    /// Findings on the Multivariant Playlist alone: its parser warnings, no variants, variants without CODECS.
    public static func multivariantFindings(_ playlist: MultivariantPlaylist) -> [CheckFinding] {
        var findings = parserWarnings(playlist.warnings)
        if playlist.variants.isEmpty {
            findings.append(CheckFinding(.error, "no-variants", "the Multivariant Playlist lists no EXT-X-STREAM-INF variant"))
        }
        return findings
    }

    // MARK: - Media Playlist

    /// Findings on one Media Playlist: its parser warnings, no segments, EXTINF above the target duration.
    public static func mediaPlaylistFindings(_ playlist: MediaPlaylist) -> [CheckFinding] {
        var findings = parserWarnings(playlist.warnings.filter { !isTargetDurationWarning($0) })
        if playlist.segments.isEmpty {
            findings.append(CheckFinding(playlist.endList ? .error : .warning, "no-segments", "the Media Playlist lists no segment"))
        }
        let target = playlist.targetDurationSeconds
        let over = playlist.segments.filter { $0.durationSeconds.rounded() > target }
        for s in over.prefix(maxFindingsPerRule) {
            findings.append(
                CheckFinding(
                    .error, "target-duration",
                    "segment \(s.mediaSequence) EXTINF \(number(s.durationSeconds)) s rounds to \(number(s.durationSeconds.rounded())) s, above EXT-X-TARGETDURATION \(number(target)) s",
                    reference: targetReference))
        }
        if over.count > maxFindingsPerRule {
            findings.append(
                CheckFinding(
                    .error, "target-duration",
                    "\(over.count - maxFindingsPerRule) more segments round above EXT-X-TARGETDURATION \(number(target)) s",
                    reference: targetReference))
        }
        return findings
    }

    /// The parser's own EXTINF-above-target warning: `target-duration` says it as an error (it is a MUST).
    static func isTargetDurationWarning(_ w: PlaylistWarning) -> Bool {
        w.message.contains("rounds above EXT-X-TARGETDURATION")
    }

    // MARK: - A variant against what was measured

    /// Findings on a variant's declared attributes against its Media Playlist's byte ranges and its
    /// first segment's probe. `alternateKinds`: the media kinds ("audio", "video") that the variant's
    /// EXT-X-MEDIA groups carry in renditions of their own (with a URI), so a codec of that kind
    /// listed in CODECS need not be in the variant's own segments.
    /// `renditionStreams`: the streams probed in those renditions' first segments; their codecs
    /// belong in the variant's CODECS too.
    public static func variantFindings(
        _ variant: VariantStream, playlist: MediaPlaylist?, probe: SegmentProbe?, alternateKinds: Set<String> = [],
        renditionStreams: [ProbedStream] = []
    ) -> [CheckFinding] {
        var findings: [CheckFinding] = []
        let live = playlist.map { !$0.endList && $0.playlistType != .vod } ?? false
        let tolerance = live ? liveBitrateTolerance : vodBitrateTolerance
        let declared = Double(variant.bandwidthBps)
        let ceiling = declared * (1 + tolerance)
        if variant.codecs.isEmpty {
            findings.append(
                CheckFinding(
                    .warning, "codecs-missing", "EXT-X-STREAM-INF has no CODECS attribute",
                    reference: "RFC 8216 §4.3.4.2: every EXT-X-STREAM-INF tag SHOULD include a CODECS attribute"))
        }

        // Bit rate of the first segment.
        if let probe, let measured = probe.bitrateBps, declared > 0 {
            if measured > ceiling {
                findings.append(
                    CheckFinding(
                        .error, "peak-bitrate",
                        "first segment measured \(bps(measured)) (\(probe.bytes) bytes in \(number(probe.durationSeconds)) s), above BANDWIDTH \(bps(declared)) by \(percent(measured / declared - 1)) (tolerance \(percent(tolerance)))",
                        reference: bitrateReference))
            } else {
                findings.append(
                    CheckFinding(.info, "measured-bitrate", "first segment measured \(bps(measured)), BANDWIDTH \(bps(declared))"))
            }
        }
        // Bit rates of the byte ranges: every segment's size without fetching it.
        if let playlist, let rates = ByteRangeRates.measure(playlist), declared > 0 {
            if rates.peakBps > ceiling {
                findings.append(
                    CheckFinding(
                        .error, "peak-bitrate",
                        "EXT-X-BYTERANGE sizes give a peak of \(bps(rates.peakBps)) over \(rates.segments) segments, above BANDWIDTH \(bps(declared)) by \(percent(rates.peakBps / declared - 1)) (tolerance \(percent(tolerance)))",
                        reference: bitrateReference))
            } else if !live, rates.segments == rates.totalSegments, rates.peakBps < declared * (1 - tolerance) {
                findings.append(
                    CheckFinding(
                        .warning, "peak-bitrate-overstated",
                        "EXT-X-BYTERANGE sizes give a peak of \(bps(rates.peakBps)) over all \(rates.segments) segments, below BANDWIDTH \(bps(declared)) by \(percent(1 - rates.peakBps / declared)) (tolerance \(percent(tolerance))): players pick a lower rung than the link allows",
                        reference: bitrateReference))
            }
            if let average = variant.averageBandwidthBps, average > 0, !live, rates.segments == rates.totalSegments {
                let a = Double(average)
                if abs(rates.averageBps / a - 1) > vodBitrateTolerance {
                    findings.append(
                        CheckFinding(
                            rates.averageBps > a ? .error : .warning, "average-bitrate",
                            "EXT-X-BYTERANGE sizes give an average of \(bps(rates.averageBps)), AVERAGE-BANDWIDTH is \(bps(a)) (\(rates.averageBps > a ? "+" : "−")\(percent(abs(rates.averageBps / a - 1))), tolerance \(percent(vodBitrateTolerance)))",
                            reference: averageReference))
                }
            }
        }

        // Codecs: what the segments hold against what CODECS says.
        let own = probe?.streams ?? []
        if !variant.codecs.isEmpty, !own.isEmpty || !renditionStreams.isEmpty {
            let declaredFamilies = variant.codecs.map { (entry: $0, family: codecFamily($0)) }
            let found =
                own.map { (stream: $0, place: "the first segment") } + renditionStreams.map { (stream: $0, place: "its \($0.kind) rendition") }
            var reported: Set<String> = []
            for (stream, place) in found where stream.kind == "video" || stream.kind == "audio" {
                let family = ffmpegCodecFamily(stream.codec)
                if !declaredFamilies.contains(where: { $0.family == family }), reported.insert(family).inserted {
                    findings.append(
                        CheckFinding(
                            .error, "codecs-undeclared",
                            "\(place) holds \(stream.kind) \(stream.codec), which CODECS=\"\(variant.codecs.joined(separator: ","))\" does not list",
                            reference: codecsReference))
                }
            }
            for d in declaredFamilies {
                guard let family = d.family, let kind = familyKind(family) else { continue }
                if found.contains(where: { ffmpegCodecFamily($0.stream.codec) == family }) { continue }
                if alternateKinds.contains(kind) && !renditionStreams.contains(where: { $0.kind == kind }) {
                    findings.append(
                        CheckFinding(
                            .info, "codecs-in-rendition",
                            "CODECS lists \(d.entry) (\(kind)), not in the variant's own segments: expected in its EXT-X-MEDIA \(kind) renditions (not probed)"
                        ))
                } else if !own.isEmpty {
                    findings.append(
                        CheckFinding(
                            .error, "codecs-not-found",
                            "CODECS lists \(d.entry) (\(kind)), but no probed segment of the variant holds a \(family) stream",
                            reference: codecsReference))
                }
            }
        }
        guard let probe, !probe.streams.isEmpty else { return findings }
        // Resolution.
        if let video = probe.streams.first(where: { $0.kind == "video" }), let w = video.width, let h = video.height, w > 0, h > 0 {
            if let r = variant.resolution {
                if r.width != w || r.height != h {
                    findings.append(
                        CheckFinding(
                            .error, "resolution-mismatch", "RESOLUTION=\(r.width)x\(r.height), but the first segment's video is \(w)x\(h)",
                            reference: resolutionReference))
                }
            } else {
                findings.append(
                    CheckFinding(
                        .warning, "resolution-missing", "the variant has video (\(w)x\(h)) but no RESOLUTION attribute",
                        reference: "RFC 8216 §4.3.4.2: RESOLUTION SHOULD be present if any Media Playlist in the Variant Stream contains video"))
            }
        }
        return findings
    }

    // MARK: - Codec names

    /// The codec family a CODECS entry (RFC 6381) names, in FFmpeg's naming; nil for entries that are
    /// not audio or video (subtitles: stpp, wvtt) or unknown.
    public static func codecFamily(_ entry: String) -> String? {
        let e = entry.trimmingCharacters(in: .whitespaces)
        let fourCC = e.split(separator: ".", maxSplits: 1).first.map(String.init) ?? e
        switch fourCC.lowercased() {
        case "avc1", "avc3": return "h264"
        case "hvc1", "hev1", "dvh1", "dvhe": return "hevc"
        case "av01", "dav1": return "av1"
        case "vp09", "vp9": return "vp9"
        case "vp08", "vp8": return "vp8"
        case "ac-3", "ac3": return "ac3"
        case "ec-3", "ec3": return "eac3"
        case "opus": return "opus"
        case "flac": return "flac"
        case "alac": return "alac"
        case "mp4a":
            // mp4a.40.x: MPEG-4 audio (AAC, except 40.34 = MP3); mp4a.69 / mp4a.6B: MPEG-1/2 audio (MP3).
            let rest = e.lowercased().dropFirst(5)
            if rest.hasPrefix("40.34") || rest == "69" || rest == "6b" { return "mp3" }
            if rest.hasPrefix("a5") { return "ac3" }
            if rest.hasPrefix("a6") { return "eac3" }
            return "aac"
        default: return nil
        }
    }

    /// FFmpeg codec names folded to one family (mp3float → mp3, aac_latm → aac).
    public static func ffmpegCodecFamily(_ name: String) -> String {
        switch name {
        case "mp3", "mp3float", "mp2", "mp2float", "mp1": "mp3"
        case "aac", "aac_latm", "aac_fixed": "aac"
        default: name
        }
    }

    static func familyKind(_ family: String) -> String? {
        switch family {
        case "h264", "hevc", "av1", "vp9", "vp8": "video"
        case "aac", "mp3", "ac3", "eac3", "opus", "flac", "alac": "audio"
        default: nil
        }
    }

    // MARK: - Text

    /// The parser's warnings as findings: each distinct message named on its first
    /// `maxFindingsPerRule` lines, its further lines counted in one more finding.
    static func parserWarnings(_ warnings: [PlaylistWarning]) -> [CheckFinding] {
        var findings: [CheckFinding] = []
        var lines: [String: [Int]] = [:]
        var order: [PlaylistWarning] = []
        for w in warnings {
            let key = w.message + "\u{0}" + (w.rule ?? "")
            if lines[key] == nil { order.append(w) }
            lines[key, default: []].append(w.lineNumber)
            if lines[key]!.count <= maxFindingsPerRule {
                findings.append(CheckFinding(.warning, "parser-warning", "line \(w.lineNumber): \(w.message)", reference: w.rule))
            }
        }
        for w in order {
            let all = lines[w.message + "\u{0}" + (w.rule ?? "")] ?? []
            guard all.count > maxFindingsPerRule else { continue }
            let rest = all.dropFirst(maxFindingsPerRule)
            findings.append(
                CheckFinding(
                    .warning, "parser-warning",
                    "\(rest.count) more lines (\(rest.first!)–\(rest.last!)): \(w.message)", reference: w.rule))
        }
        return findings
    }

    static func number(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(format: "%.3f", v)
    }

    static func bps(_ v: Double) -> String {
        v >= 1e6 ? String(format: "%.2f Mbit/s", v / 1e6) : String(format: "%.0f kbit/s", v / 1e3)
    }

    static func percent(_ v: Double) -> String { String(format: "%.0f%%", v * 100) }

    /// The worst severity among findings; nil for none.
    public static func worst(_ findings: [CheckFinding]) -> CheckSeverity? { findings.map(\.severity).max() }
}
