import CFFmpeg
import Foundation

public enum TrackKind: String, Sendable {
    case video, audio, other
}

/// Which demuxer to use for a segment. The segment's first bytes say what the
/// container is (`ContainerHint.sniff`); the playlist (EXT-X-MAP, file extension)
/// decides only when they do not, and probing is the last resort.
public enum ContainerHint: Sendable, Equatable {
    case mpegTS
    case fragmentedMP4
    /// Packed audio (HLS §3.4): raw elementary-stream frames, maybe after an ID3 tag.
    case packedAudioADTS
    case packedMP3
    case packedAC3
    case packedEAC3
    case probe

    /// Raw audio frames without a container (their timestamps come from the playlist, or an ID3 tag).
    public var isPackedAudio: Bool {
        switch self {
        case .packedAudioADTS, .packedMP3, .packedAC3, .packedEAC3: true
        default: false
        }
    }

    /// The container of a segment from its first bytes (after an ID3v2 tag, which packed
    /// audio may start with); nil when they match none HLS carries. With an initialization
    /// section (EXT-X-MAP) its bytes decide: fMP4, unless it is MPEG-TS (PAT/PMT).
    public static func sniff(segment: Data, initializationSection: Data? = nil) -> ContainerHint? {
        if let initializationSection, !initializationSection.isEmpty {
            return sniff(initializationSection) == .mpegTS ? .mpegTS : .fragmentedMP4
        }
        return sniff(segment)
    }

    /// ISO BMFF top-level box types a segment or init section starts with.
    static let isoBoxTypes: Set<String> = ["ftyp", "styp", "moov", "moof", "sidx", "emsg", "prft", "free", "skip", "mdat"]

    private static func sniff(_ data: Data) -> ContainerHint? {
        let b = [UInt8](data.prefix(64 * 1024))
        var i = 0
        // ID3v2: "ID3", version (2), flags (1), size (4 bytes of 7 bits); a footer adds 10 bytes.
        if b.count >= 10, b[0] == 0x49, b[1] == 0x44, b[2] == 0x33 {
            let size = b[6...9].reduce(0) { $0 << 7 | Int($1 & 0x7F) }
            i = 10 + size + (b[5] & 0x10 != 0 ? 10 : 0)
        }
        guard b.count - i >= 4 else { return nil }
        // MPEG-TS: sync byte every 188 bytes.
        if b[i] == 0x47, b.count - i <= 188 || b[i + 188] == 0x47 { return .mpegTS }
        if b.count - i >= 8, isoBoxTypes.contains(String(decoding: b[i + 4..<i + 8], as: UTF8.self)) { return .fragmentedMP4 }
        // ADTS: 12-bit sync, layer 00. MPEG audio: 11-bit sync, layer not 00.
        if b[i] == 0xFF, b[i + 1] & 0xF6 == 0xF0 { return .packedAudioADTS }
        if b[i] == 0xFF, b[i + 1] & 0xE0 == 0xE0, b[i + 1] & 0x06 != 0 { return .packedMP3 }
        // AC-3 / E-AC-3 sync word 0x0B77; the bit stream id tells them apart (≤ 10: AC-3, 11–16: E-AC-3).
        if b[i] == 0x0B, b[i + 1] == 0x77, b.count - i >= 6 { return b[i + 5] >> 3 <= 10 ? .packedAC3 : .packedEAC3 }
        return nil
    }
}

/// A rational time base (seconds per tick = numerator / denominator).
public struct Rational: Sendable, Hashable, CustomStringConvertible {
    public var numerator: Int32
    public var denominator: Int32
    public init(numerator: Int32, denominator: Int32) {
        self.numerator = numerator
        self.denominator = denominator
    }
    init(_ r: AVRational) { self.init(numerator: r.num, denominator: r.den) }
    var av: AVRational { AVRational(num: numerator, den: denominator) }
    public var seconds: Double { denominator == 0 ? 0 : Double(numerator) / Double(denominator) }
    public var description: String { "\(numerator)/\(denominator)" }
}

/// One track's codec parameters. Owns a copy of the stream's AVCodecParameters.
public final class CodecParameters: @unchecked Sendable, CustomStringConvertible {
    public let kind: TrackKind
    public let codecName: String
    public let width: Int
    public let height: Int
    public let sampleRate: Int
    public let channelCount: Int
    public let timeBase: Rational
    /// Index of the stream in its container.
    public let streamIndex: Int
    /// Owned; immutable after init.
    let parameters: UnsafeMutablePointer<AVCodecParameters>

    init(stream: UnsafeMutablePointer<AVStream>) throws(MediaError) {
        guard let copy = avcodec_parameters_alloc() else {
            throw MediaError.ffmpeg("avcodec_parameters_alloc", hls_averror(ENOMEM))
        }
        parameters = copy
        let source = stream.pointee.codecpar!
        let code = avcodec_parameters_copy(copy, source)
        let p = copy.pointee
        switch p.codec_type {
        case AVMEDIA_TYPE_VIDEO: kind = .video
        case AVMEDIA_TYPE_AUDIO: kind = .audio
        default: kind = .other
        }
        codecName = String(cString: avcodec_get_name(p.codec_id))
        width = Int(p.width)
        height = Int(p.height)
        sampleRate = Int(p.sample_rate)
        channelCount = Int(p.ch_layout.nb_channels)
        timeBase = Rational(stream.pointee.time_base)
        streamIndex = Int(stream.pointee.index)
        try check(code, "avcodec_parameters_copy")
    }

    deinit {
        var p: UnsafeMutablePointer<AVCodecParameters>? = parameters
        avcodec_parameters_free(&p)
    }

    /// Whether a decoder opened with `other` can take packets described by
    /// these parameters: same codec, dimensions and audio layout, and — when
    /// the extradata is a configuration record (avcC/hvcC from an fMP4 init
    /// section, first byte 1), which the decoder cannot get in band — the same
    /// record. Annex-B extradata (MPEG-TS: starts with a 0 byte) may differ
    /// between segments of one stream; the parameter sets also travel in band
    /// there. A new EXT-X-MAP with another record needs a new decoder even
    /// without EXT-X-DISCONTINUITY.
    ///
    /// A value one side does not know (0: the probe of a segment that starts
    /// mid-GOP sees no decodable frame, so no dimensions) is no difference: the
    /// decoder reads it from the bitstream.
    public func sameFormat(as other: CodecParameters) -> Bool {
        if self === other { return true }
        let a = parameters.pointee, b = other.parameters.pointee
        func same(_ x: Int32, _ y: Int32) -> Bool { x == y || x == 0 || y == 0 }
        guard a.codec_id == b.codec_id, same(a.width, b.width), same(a.height, b.height), same(a.sample_rate, b.sample_rate),
            same(a.ch_layout.nb_channels, b.ch_layout.nb_channels)
        else { return false }
        func record(_ p: AVCodecParameters) -> UnsafeMutablePointer<UInt8>? {
            guard p.extradata_size > 0, let x = p.extradata, x.pointee != 0 else { return nil }
            return x
        }
        switch (record(a), record(b)) {
        case (nil, nil): return true
        case let (x?, y?): return a.extradata_size == b.extradata_size && memcmp(x, y, Int(a.extradata_size)) == 0
        default: return false
        }
    }

    public var description: String {
        switch kind {
        case .video: return "video \(codecName) \(width)x\(height) tb \(timeBase)"
        case .audio: return "audio \(codecName) \(sampleRate) Hz \(channelCount) ch tb \(timeBase)"
        case .other: return "other \(codecName) tb \(timeBase)"
        }
    }
}

/// One demuxed packet. Owns its AVPacket.
public final class DemuxedPacket: @unchecked Sendable {
    public let kind: TrackKind
    public let ptsSeconds: Double?
    public let dtsSeconds: Double?
    public let durationSeconds: Double?
    public let isKeyframe: Bool
    /// The demuxer flagged the packet as damaged (AV_PKT_FLAG_CORRUPT).
    public let isCorrupt: Bool
    public let size: Int
    public let parameters: CodecParameters
    /// Owned; immutable after init.
    let packet: UnsafeMutablePointer<AVPacket>

    /// Takes ownership of `packet`.
    init(packet: UnsafeMutablePointer<AVPacket>, parameters: CodecParameters) {
        self.packet = packet
        self.parameters = parameters
        kind = parameters.kind
        let tb = parameters.timeBase.seconds
        let p = packet.pointee
        let none = hls_nopts_value()
        ptsSeconds = p.pts == none ? nil : Double(p.pts) * tb
        dtsSeconds = p.dts == none ? nil : Double(p.dts) * tb
        durationSeconds = p.duration > 0 ? Double(p.duration) * tb : nil
        isKeyframe = p.flags & hls_pkt_flag_key() != 0
        isCorrupt = p.flags & hls_pkt_flag_corrupt() != 0
        size = Int(p.size)
    }

    deinit {
        var p: UnsafeMutablePointer<AVPacket>? = packet
        av_packet_free(&p)
    }
}

public struct DemuxResult: Sendable {
    /// Every packet of the segment, in demux order.
    public var packets: [DemuxedPacket]
    /// Audio and video tracks (and data tracks, kind `.other`), by stream index.
    public var tracks: [CodecParameters]
    /// Packets the demuxer flagged as damaged (they are still in `packets`).
    public var corruptPacketCount: Int
    /// What went wrong without making the segment unusable.
    public var warnings: [String]
    /// What FFmpeg logged while demuxing (and probing) the segment, deduplicated with counts.
    /// E.g. a segment that begins mid-GOP makes the H.264 parser, which starts afresh with
    /// every segment, report slices whose parameter sets came in an earlier segment.
    public var ffmpegMessages: [FFmpegMessage] = []
    /// Whether the first video packet is an independent (key) frame; nil without video.
    public var startsWithKeyframe: Bool? { packets.first { $0.kind == .video }.map(\.isKeyframe) }

    /// Packets of one kind, in demux order.
    public func packets(of kind: TrackKind) -> [DemuxedPacket] { packets.filter { $0.kind == kind } }
    /// The first track of a kind.
    public func track(_ kind: TrackKind) -> CodecParameters? { tracks.first { $0.kind == kind } }
}

/// Where the codec parameters of a demux come from.
public enum CodecParameterSource: Sendable {
    /// Found in this segment: from the container header, and when the header does not
    /// carry them (MPEG-TS never carries video dimensions or the AAC sample rate) by
    /// FFmpeg decoding the first packets (`avformat_find_stream_info`), which costs more
    /// than demuxing the whole segment.
    case probe
    /// Taken from an earlier segment of the same rendition (its `DemuxResult.tracks`):
    /// each stream whose codec matches one of these adopts its parameters, so FFmpeg
    /// derives packet durations and the timestamps it interpolates exactly as after a
    /// probe, without decoding anything. A stream that matches none is probed as usual;
    /// so is the whole segment when its audio timestamps show that the adopted sample
    /// rate was not the segment's (e.g. a new period after a discontinuity).
    case reusing([CodecParameters])
}

public enum SegmentDemuxer {
    /// Reads all packets of one media segment held in memory.
    ///
    /// - `initializationSection` (EXT-X-MAP) is prepended to the segment bytes.
    /// - `codecParameters`: `.reusing` an earlier segment's tracks skips the probe
    ///   (see `CodecParameterSource`); packets and timestamps are the same.
    /// - A segment whose tail is damaged returns the good packets and a warning.
    /// - `pictureLimit`: the largest picture the probe may decode (FFmpeg decodes the first
    ///   frames of a stream whose container does not say its dimensions, e.g. MPEG-TS): the
    ///   parameter sets are read first with FFmpeg's parsers, and a picture size above it
    ///   throws `pictureAboveLimit` before anything is decoded; the probe's decoders get
    ///   max_pixels too. Dimensions the container states are the caller's to check. nil:
    ///   FFmpeg's own limits.
    /// - Throws when nothing playable comes out: empty input, an unopenable container,
    ///   no audio/video stream, or no packet at all.
    public static func demux(
        segment: Data, initializationSection: Data? = nil,
        hint: ContainerHint = .mpegTS,
        codecParameters: CodecParameterSource = .probe,
        pictureLimit: PictureLimit? = nil
    ) throws(MediaError) -> DemuxResult {
        var (result, messages) = try FFmpegLog.collecting { () throws(MediaError) -> DemuxResult in
            try demuxOnce(
                segment: segment, initializationSection: initializationSection, hint: hint, codecParameters: codecParameters,
                pictureLimit: pictureLimit)
        }
        result.ffmpegMessages = messages
        return result
    }

    private static func demuxOnce(
        segment: Data, initializationSection: Data?, hint: ContainerHint,
        codecParameters: CodecParameterSource, pictureLimit: PictureLimit?
    ) throws(MediaError) -> DemuxResult {
        guard !segment.isEmpty else { throw .emptyInput }
        var bytes = segment
        if let initializationSection, !initializationSection.isEmpty {
            bytes = initializationSection + segment
        }
        let input = try MemoryInput(bytes: bytes, hint: hint)
        guard let format = input.format else { throw .noPlayableStreams }
        var warnings: [String] = []
        if hint == .mpegTS, segment.count % 188 != 0 {
            warnings.append("segment size \(segment.count) is not a multiple of 188 (truncated TS?)")
        }

        var adoptedAudioStreams: Set<Int> = []
        if case .reusing(let known) = codecParameters { adoptedAudioStreams = try adopt(known, into: format) }
        // Codec parameters (dimensions, sample rate) are only known after a look at the
        // streams' first packets; only pay for that when neither the header nor an
        // earlier segment said.
        if needsStreamInfo(format) {
            if let pictureLimit, let refused = PictureSizeProbe.refusal(of: bytes, hint: hint, limit: pictureLimit) { throw refused }
            let code = findStreamInfo(format, maxPixels: pictureLimit?.ffmpegMaxPixels)
            if code < 0 {
                warnings.append("avformat_find_stream_info: \(ffmpegErrorString(code))")
            }
        }

        var byIndex: [Int: CodecParameters] = [:]
        var tracks: [CodecParameters] = []
        func parameters(for index: Int) throws(MediaError) -> CodecParameters? {
            if let known = byIndex[index] { return known }
            guard index >= 0, index < Int(format.pointee.nb_streams),
                let stream = format.pointee.streams[index],
                stream.pointee.codecpar.pointee.codec_id != AV_CODEC_ID_NONE
            else { return nil }
            let params = try CodecParameters(stream: stream)
            byIndex[index] = params
            tracks.append(params)
            return params
        }
        for index in 0..<Int(format.pointee.nb_streams) { _ = try parameters(for: index) }
        guard tracks.contains(where: { $0.kind != .other }) else { throw .noPlayableStreams }

        var packets: [DemuxedPacket] = []
        var corrupt = 0
        var retries = 0
        while true {
            guard let packet = av_packet_alloc() else { throw .ffmpeg("av_packet_alloc", hls_averror(ENOMEM)) }
            let code = av_read_frame(format, packet)
            switch FFmpegStatus(code) {
            case .ok:
                let index = Int(packet.pointee.stream_index)
                let params: CodecParameters?
                do { params = try parameters(for: index) } catch {
                    var p: UnsafeMutablePointer<AVPacket>? = packet
                    av_packet_free(&p)
                    throw error
                }
                retries = 0
                guard let params else { // a stream without a known codec: skip its packets
                    var p: UnsafeMutablePointer<AVPacket>? = packet
                    av_packet_free(&p)
                    continue
                }
                let demuxed = DemuxedPacket(packet: packet, parameters: params)
                if demuxed.isCorrupt { corrupt += 1 }
                packets.append(demuxed)
                continue
            case .again:
                // Memory input never blocks; bounded anyway so a demuxer bug cannot spin.
                var p: UnsafeMutablePointer<AVPacket>? = packet
                av_packet_free(&p)
                retries += 1
                if retries < 64 { continue }
                warnings.append("av_read_frame kept returning EAGAIN; stopped after \(packets.count) packets")
            case .endOfStream:
                var p: UnsafeMutablePointer<AVPacket>? = packet
                av_packet_free(&p)
            case .failed(let failure):
                var p: UnsafeMutablePointer<AVPacket>? = packet
                av_packet_free(&p)
                if !packets.contains(where: { $0.kind != .other }) { throw .ffmpeg("av_read_frame", failure) }
                warnings.append("av_read_frame after \(packets.count) packets: \(ffmpegErrorString(failure))")
            }
            break
        }
        guard packets.contains(where: { $0.kind != .other }) else { throw .noPlayableStreams }
        if corrupt > 0 { warnings.append("\(corrupt) packet(s) flagged corrupt by the demuxer") }
        // An adopted audio sample rate drives the timestamps FFmpeg interpolates for the frames
        // of a PES after its first; a wrong one (a new period after a discontinuity) shows as
        // uneven steps. Then the segment is demuxed again with a probe.
        for index in adoptedAudioStreams where !audioStepsAreEven(packets.filter { $0.parameters.streamIndex == index }) {
            return try demuxOnce(
                segment: segment, initializationSection: initializationSection, hint: hint, codecParameters: .probe,
                pictureLimit: pictureLimit)
        }
        // Tracks seen in the stream table but without valid dimensions are still listed;
        // the decoder learns the real values from the bitstream.
        return DemuxResult(
            packets: packets, tracks: tracks.sorted { $0.streamIndex < $1.streamIndex },
            corruptPacketCount: corrupt, warnings: warnings)
    }

    /// avformat_find_stream_info with each stream's probe decoder on one thread (as FFmpeg does
    /// when given no options) and, when `maxPixels` is set, refusing larger pictures.
    private static func findStreamInfo(_ format: UnsafeMutablePointer<AVFormatContext>, maxPixels: Int?) -> Int32 {
        var options = [OpaquePointer?](repeating: nil, count: Int(format.pointee.nb_streams))
        defer { for i in options.indices { av_dict_free(&options[i]) } }
        for i in options.indices {
            av_dict_set(&options[i], "threads", "1", 0)
            if let maxPixels { av_dict_set(&options[i], "max_pixels", String(maxPixels), 0) }
        }
        if options.isEmpty { return avformat_find_stream_info(format, nil) }
        return options.withUnsafeMutableBufferPointer { avformat_find_stream_info(format, $0.baseAddress) }
    }

    /// Gives every stream that lacks its decoder parameters those of the known track
    /// with the same codec (the same stream index first). Before the first packet is
    /// read, so FFmpeg's demux context picks them up (durations, interpolated timestamps).
    /// Returns the indexes of the audio streams that adopted parameters.
    static func adopt(_ known: [CodecParameters], into format: UnsafeMutablePointer<AVFormatContext>) throws(MediaError) -> Set<Int> {
        var adoptedAudio: Set<Int> = []
        for index in 0..<Int(format.pointee.nb_streams) {
            guard let par = format.pointee.streams[index]?.pointee.codecpar, lacksParameters(par.pointee) else { continue }
            let codec = par.pointee.codec_id
            let sameCodec = known.filter { $0.parameters.pointee.codec_id == codec && $0.parameters.pointee.codec_type == par.pointee.codec_type }
            guard let match = sameCodec.first(where: { $0.streamIndex == index }) ?? sameCodec.first else { continue }
            // Without a frame size the audio timestamps cannot be checked afterwards: probe instead.
            if par.pointee.codec_type == AVMEDIA_TYPE_AUDIO && match.parameters.pointee.frame_size <= 0 { continue }
            try check(avcodec_parameters_copy(par, match.parameters), "avcodec_parameters_copy")
            if par.pointee.codec_type == AVMEDIA_TYPE_AUDIO { adoptedAudio.insert(index) }
        }
        return adoptedAudio
    }

    /// How far an audio timestamp step may be from one frame's duration, seconds (two 90 kHz ticks).
    static let audioStepToleranceSeconds = 2.0 / 90_000

    /// True when every audio packet starts one frame (frame size / sample rate of its
    /// parameters) after the one before it.
    static func audioStepsAreEven(_ audio: [DemuxedPacket]) -> Bool {
        guard let first = audio.first else { return true }
        let par = first.parameters.parameters.pointee
        guard par.sample_rate > 0, par.frame_size > 0 else { return false }
        let step = Double(par.frame_size) / Double(par.sample_rate)
        var previous: Double?
        for packet in audio {
            guard let pts = packet.ptsSeconds else { return false }
            if let previous, abs(pts - previous - step) > audioStepToleranceSeconds { return false }
            previous = pts
        }
        return true
    }

    private static func lacksParameters(_ par: AVCodecParameters) -> Bool {
        switch par.codec_type {
        case AVMEDIA_TYPE_VIDEO: return par.width == 0 || par.height == 0
        case AVMEDIA_TYPE_AUDIO: return par.sample_rate == 0 || par.ch_layout.nb_channels == 0
        default: return false
        }
    }

    /// True when the container header left a track's decoder parameters unknown.
    private static func needsStreamInfo(_ format: UnsafeMutablePointer<AVFormatContext>) -> Bool {
        for index in 0..<Int(format.pointee.nb_streams) {
            guard let par = format.pointee.streams[index]?.pointee.codecpar?.pointee else { continue }
            if lacksParameters(par) { return true }
        }
        return format.pointee.nb_streams == 0
    }
}
