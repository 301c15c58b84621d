// `hlsplay check URL`: fetches a stream the way playback does (hlsplay's libcurl client with the
// same request options; FFmpeg only demuxes bytes fetched here) and asks HLSCore's StreamCheck
// rules about each playlist and each variant's first segment.

import Foundation
import HLSCore
import HLSMedia
import HLSNet

/// What `check` found for one URL.
public struct StreamCheckReport: Encodable, Sendable {
    public var url: String
    /// "multivariant" or "media"; nil when the playlist could not be fetched or parsed.
    public var kind: String?
    /// The top-level playlist was fetched and parsed.
    public var accepted: Bool
    public var errors = 0
    public var warnings = 0
    /// Some fetch failed (the playlist, a variant, a segment, a key, an init section): exit 69.
    public var fetchFailed = false
    /// Findings on the top-level playlist itself.
    public var findings: [CheckFinding] = []
    /// Each Media Playlist checked: the variants', then the renditions'.
    public var playlists: [CheckedPlaylist] = []

    mutating func count() {
        let all = findings + playlists.flatMap(\.findings)
        errors = all.filter { $0.severity == .error }.count
        warnings = all.filter { $0.severity == .warning }.count
    }
}

/// One Media Playlist and its first segment.
public struct CheckedPlaylist: Encodable, Sendable {
    /// "variant", "audio", "video", "subtitles" (an EXT-X-MEDIA rendition) or "media" (the URL given).
    public var role: String
    public var variantIndex: Int?
    public var groupID: String?
    public var name: String?
    public var url: String
    public var declared: DeclaredAttributes?
    public var targetDurationSeconds: Double?
    public var segments: Int?
    public var endList: Bool?
    public var longestSegmentSeconds: Double?
    public var byteRanges: ByteRangeRates?
    public var firstSegment: FirstSegmentReport?
    public var findings: [CheckFinding] = []
}

/// What EXT-X-STREAM-INF declares.
public struct DeclaredAttributes: Encodable, Sendable {
    public var bandwidthBps: Int
    public var averageBandwidthBps: Int?
    public var codecs: [String]
    public var resolution: String?
    public var audioGroup: String?
}

/// The first segment: fetched, decrypted when the player can, demuxed.
public struct FirstSegmentReport: Encodable, Sendable {
    public var url: String
    public var mediaSequence: Int
    public var durationSeconds: Double
    public var bytes: Int?
    public var initSectionBytes: Int?
    /// bits / EXTINF.
    public var bitrateBps: Double?
    /// "AES-128" (decrypted), "SAMPLE-AES", ...; nil when clear.
    public var encryption: String?
    public var probed: Bool
    public var notProbedReason: String?
    public var streams: [ProbedStream] = []
}

public final class StreamChecker {
    private let configuration: PlayerConfiguration
    private let client: HTTPClient
    private let pictureLimit: PictureLimit?
    private var keyCache: [URL: [UInt8]] = [:]

    public init(configuration: PlayerConfiguration) {
        self.configuration = configuration
        client = HTTPClient(clock: SystemMonotonicClock(), configuration: PlayerSession.httpConfiguration(configuration))
        pictureLimit = configuration.maxResolution.map { limit in
            PictureLimit(longSide: limit.width, shortSide: limit.height) { limit.admits(width: $0, height: $1) }
        }

        // FFmpeg writes to stderr by default; what it says while demuxing a segment is collected
        // (SegmentDemuxer) and reported as a finding; anything else, below warning level, is dropped.
        FFmpegLog.install(minimumLevel: 24 /* AV_LOG_WARNING */) { _, _ in }
    }

    struct FetchFailure: Error {
        var message: String
    }

    /// One GET, no retry: `check` says what the origin answers now.
    func fetch(_ url: URL, byteRange: ByteRange? = nil, maxBodyBytes: Int) -> Result<Data, FetchFailure> {
        let request = HTTPRequest(
            url: url, byteRange: byteRange, maxBodyBytes: maxBodyBytes, firstByteTimeoutSeconds: configuration.firstByteTimeoutSeconds,
            stallTimeoutSeconds: configuration.requestStallTimeoutSeconds)
        switch client.fetch(request) {
        case .success(let response): return .success(response.body)
        case .failure(let error):
            let status = error.httpStatus.map { "HTTP \($0)" } ?? error.kind.rawValue
            return .failure(FetchFailure(message: "\(status): \(error.message)"))
        }
    }

    /// Checks the playlist at `url` and everything it names.
    public func check(_ url: URL) -> StreamCheckReport {
        var report = StreamCheckReport(url: url.absoluteString, accepted: false)
        check(url, into: &report)
        report.count()
        return report
    }

    private func check(_ url: URL, into report: inout StreamCheckReport) {
        let data: Data
        switch fetch(url, maxBodyBytes: PlayerSession.maxBodyBytes(for: .multivariantPlaylist)) {
        case .success(let d): data = d
        case .failure(let f):
            report.fetchFailed = true
            report.findings.append(CheckFinding(.error, "fetch-failed", "the playlist could not be fetched: \(f.message)"))
            return
        }
        let playlist: Playlist
        do {
            playlist = try PlaylistParser.parse(data: data, baseURL: url)
        } catch {
            report.findings.append(
                CheckFinding(.error, "playlist-rejected", "line \(error.lineNumber): \(error.message)", reference: error.rule))
            return
        }
        report.accepted = true
        switch playlist {
        case .media(let media):
            report.kind = "media"
            var entry = CheckedPlaylist(role: "media", url: url.absoluteString)
            describe(media, into: &entry)
            _ = probeFirstSegment(of: media, into: &entry, report: &report)
            report.playlists.append(entry)
        case .multivariant(let multivariant):
            report.kind = "multivariant"
            report.findings = StreamCheck.multivariantFindings(multivariant)
            checkMultivariant(multivariant, report: &report)
        }
    }

    private func checkMultivariant(_ multivariant: MultivariantPlaylist, report: inout StreamCheckReport) {
        // Renditions first (each URI once), so the variants can be held to their renditions' codecs.
        var renditionStreams: [String: [ProbedStream]] = [:] // by "TYPE/GROUP-ID"
        var renditionEntries: [CheckedPlaylist] = []
        var seen: Set<URL> = []
        for rendition in multivariant.renditions {
            guard let uri = rendition.uri, seen.insert(uri).inserted else { continue }
            let role = rendition.type.rawValue.lowercased()
            var entry = CheckedPlaylist(role: role, groupID: rendition.groupID, name: rendition.name, url: uri.absoluteString)
            if let media = fetchMedia(uri, variables: multivariant.variables, into: &entry, report: &report) {
                describe(media, into: &entry)
                if rendition.type == .audio || rendition.type == .video {
                    if let probe = probeFirstSegment(of: media, into: &entry, report: &report) {
                        renditionStreams["\(rendition.type.rawValue)/\(rendition.groupID)", default: []] += probe.streams
                    }
                }
            }
            renditionEntries.append(entry)
        }
        for (index, variant) in multivariant.variants.enumerated() {
            var entry = CheckedPlaylist(
                role: "variant", variantIndex: index, url: variant.uri.absoluteString,
                declared: DeclaredAttributes(
                    bandwidthBps: variant.bandwidthBps, averageBandwidthBps: variant.averageBandwidthBps, codecs: variant.codecs,
                    resolution: variant.resolution.map { "\($0.width)x\($0.height)" }, audioGroup: variant.audioGroup))
            let media = fetchMedia(variant.uri, variables: multivariant.variables, into: &entry, report: &report)
            var probe: SegmentProbe?
            if let media {
                describe(media, into: &entry)
                probe = probeFirstSegment(of: media, into: &entry, report: &report)
            }
            var alternateKinds: Set<String> = []
            var streams: [ProbedStream] = []
            for (type, group) in [(RenditionType.audio, variant.audioGroup), (.video, variant.videoGroup)] {
                guard let group else { continue }
                if multivariant.renditions.contains(where: { $0.type == type && $0.groupID == group && $0.uri != nil }) {
                    alternateKinds.insert(type.rawValue.lowercased())
                }
                streams += renditionStreams["\(type.rawValue)/\(group)"] ?? []
            }
            // With a failed fetch there is nothing measured to hold the declarations to; still checked: CODECS present.
            entry.findings += StreamCheck.variantFindings(
                variant, playlist: media, probe: probe, alternateKinds: alternateKinds, renditionStreams: streams)
            report.playlists.append(entry)
        }
        report.playlists += renditionEntries
    }

    private func fetchMedia(
        _ uri: URL, variables: [String: String], into entry: inout CheckedPlaylist, report: inout StreamCheckReport
    ) -> MediaPlaylist? {
        switch fetch(uri, maxBodyBytes: PlayerSession.maxBodyBytes(for: .mediaPlaylist)) {
        case .failure(let f):
            report.fetchFailed = true
            entry.findings.append(CheckFinding(.error, "fetch-failed", "the Media Playlist could not be fetched: \(f.message)"))
            return nil
        case .success(let data):
            do {
                switch try PlaylistParser.parse(data: data, baseURL: uri, parentVariables: variables) {
                case .media(let media): return media
                case .multivariant:
                    entry.findings.append(
                        CheckFinding(
                            .error, "playlist-rejected", "a Multivariant Playlist where a Media Playlist belongs",
                            reference: "RFC 8216 §4.3.4.2: the URI of EXT-X-STREAM-INF / EXT-X-MEDIA names a Media Playlist"))
                    return nil
                }
            } catch {
                entry.findings.append(CheckFinding(.error, "playlist-rejected", "line \(error.lineNumber): \(error.message)", reference: error.rule))
                return nil
            }
        }
    }

    private func describe(_ media: MediaPlaylist, into entry: inout CheckedPlaylist) {
        entry.targetDurationSeconds = media.targetDurationSeconds
        entry.segments = media.segments.count
        entry.endList = media.endList
        entry.longestSegmentSeconds = media.segments.map(\.durationSeconds).max()
        entry.byteRanges = ByteRangeRates.measure(media)
        entry.findings += StreamCheck.mediaPlaylistFindings(media)
    }

    /// A WebVTT file starts with "WEBVTT", maybe after a UTF-8 byte order mark.
    static func isWebVTT(_ data: Data) -> Bool {
        let head = [UInt8](data.prefix(9))
        let text = head.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(head.dropFirst(3)) : head
        return text.starts(with: Array("WEBVTT".utf8))
    }

    /// Fetches (key, init section, segment), decrypts and demuxes the first segment that is not a gap.
    private func probeFirstSegment(
        of media: MediaPlaylist, into entry: inout CheckedPlaylist, report: inout StreamCheckReport
    ) -> SegmentProbe? {
        guard let segment = media.segments.first(where: { !$0.gap }) else { return nil }
        var first = FirstSegmentReport(
            url: segment.uri.absoluteString, mediaSequence: segment.mediaSequence, durationSeconds: segment.durationSeconds, probed: false)
        defer { entry.firstSegment = first }
        if entry.role == "subtitles" {
            first.notProbedReason = "subtitles"
            return nil
        }
        func failed(_ what: String, _ message: String) -> SegmentProbe? {
            report.fetchFailed = true
            first.notProbedReason = "\(what) could not be fetched"
            entry.findings.append(CheckFinding(.error, "fetch-failed", "\(what) could not be fetched: \(message)"))
            return nil
        }
        // The key, as the player handles it: AES-128 is decrypted; sample encryption and DRM are not.
        var aes: (key: [UInt8], iv: [UInt8])?
        if let key = segment.key, key.method != .none {
            switch key.method {
            case .aes128:
                first.encryption = "AES-128"
                guard let keyURI = key.uri else {
                    first.notProbedReason = "encrypted: AES-128 key without a URI"
                    entry.findings.append(CheckFinding(.error, "not-probed", "EXT-X-KEY METHOD=AES-128 has no URI: the segments cannot be decrypted"))
                    return nil
                }
                let bytes: [UInt8]
                if let cached = keyCache[keyURI] {
                    bytes = cached
                } else {
                    switch fetch(keyURI, maxBodyBytes: PlayerSession.maxBodyBytes(for: .key)) {
                    case .failure(let f): return failed("the AES-128 key", f.message)
                    case .success(let data):
                        guard data.count == 16 else {
                            first.notProbedReason = "encrypted: the key is \(data.count) bytes, not 16"
                            entry.findings.append(
                                CheckFinding(
                                    .error, "key-invalid", "the AES-128 key is \(data.count) bytes, not 16",
                                    reference: "RFC 8216 §5.2: an AES-128 key file is a 16-octet key"))
                            return nil
                        }
                        bytes = [UInt8](data)
                        keyCache[keyURI] = bytes
                    }
                }
                aes = (bytes, key.iv ?? SegmentDecryptor.iv(forMediaSequence: segment.mediaSequence))
            default:
                let name: String
                switch key.method {
                case .sampleAES: name = "SAMPLE-AES"
                case .sampleAESCTR: name = "SAMPLE-AES-CTR"
                case .other(let raw): name = raw
                default: name = "?"
                }
                first.encryption = name
                first.notProbedReason = "encrypted: METHOD=\(name) (KEYFORMAT \(key.keyFormat)); hlsplay decrypts AES-128 only"
                entry.findings.append(
                    CheckFinding(.info, "not-probed", "first segment not probed: encrypted with METHOD=\(name), which hlsplay does not decrypt"))
                return nil
            }
        }
        var initData: Data?
        if let map = segment.initializationSection {
            switch fetch(map.uri, byteRange: map.byteRange, maxBodyBytes: PlayerSession.maxBodyBytes(for: .initSection)) {
            case .failure(let f): return failed("the initialization section (EXT-X-MAP)", f.message)
            case .success(var data):
                if let aes, segment.key?.iv != nil {
                    // Under an AES-128 key the init section uses the key's explicit IV (RFC 8216 §4.3.2.5).
                    guard let clear = try? SegmentDecryptor.decryptAES128(data, key: aes.key, iv: aes.iv) else {
                        first.notProbedReason = "the initialization section could not be decrypted"
                        entry.findings.append(CheckFinding(.error, "probe-failed", "the initialization section could not be decrypted with its key"))
                        return nil
                    }
                    data = clear
                }
                initData = data
                first.initSectionBytes = data.count
            }
        }
        var body: Data
        switch fetch(segment.uri, byteRange: segment.byteRange, maxBodyBytes: PlayerSession.maxBodyBytes(for: .segment)) {
        case .failure(let f): return failed("the first segment", f.message)
        case .success(let data): body = data
        }
        // The declared rate is held to what was sent: bytes before decryption strip the padding.
        first.bytes = body.count
        let measured = SegmentProbe(durationSeconds: segment.durationSeconds, bytes: body.count, streams: [])
        first.bitrateBps = measured.bitrateBps
        if let aes {
            do {
                body = try SegmentDecryptor.decryptAES128(body, key: aes.key, iv: aes.iv)
            } catch {
                first.notProbedReason = "could not be decrypted: \(error)"
                entry.findings.append(CheckFinding(.error, "probe-failed", "the first segment could not be decrypted: \(error)"))
                return measured
            }
        }
        // A subtitle playlist given as the URL: WebVTT text has no audio or video to demux.
        if Self.isWebVTT(body) {
            first.notProbedReason = "subtitles (WebVTT)"
            entry.findings.append(CheckFinding(.info, "not-probed", "first segment not probed: WebVTT subtitles"))
            return nil
        }
        do {
            let hint = PlayerSession.containerHint(for: segment, body: body, initializationSection: initData)
            let result = try SegmentDemuxer.demux(segment: body, initializationSection: initData, hint: hint, pictureLimit: pictureLimit)
            first.probed = true
            first.streams = result.tracks.compactMap { track -> ProbedStream? in
                switch track.kind {
                case .video: ProbedStream(kind: "video", codec: track.codecName, width: track.width, height: track.height)
                case .audio: ProbedStream(kind: "audio", codec: track.codecName, sampleRate: track.sampleRate, channels: track.channelCount)
                case .other: nil
                }
            }
            for message in result.ffmpegMessages {
                entry.findings.append(CheckFinding(.info, "demuxer-message", "FFmpeg, demuxing the first segment: \(message)"))
            }
            for warning in result.warnings {
                entry.findings.append(CheckFinding(.warning, "demuxer-warning", "the first segment: \(warning)"))
            }
            return SegmentProbe(durationSeconds: segment.durationSeconds, bytes: measured.bytes, streams: first.streams)
        } catch {
            first.notProbedReason = "demux failed: \(error)"
            entry.findings.append(CheckFinding(.error, "probe-failed", "the first segment could not be demuxed: \(error)"))
            return measured
        }
    }
}
