import CFFmpeg
import Foundation

/// Bytes the player already fetched, read by FFmpeg through callbacks.
/// The AVIOContext's `opaque` points at this object; `MemoryInput` keeps it alive.
final class MemoryReader {
    let bytes: Data
    private(set) var position = 0

    init(_ bytes: Data) { self.bytes = bytes }

    func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int32 {
        let remaining = bytes.count - position
        guard remaining > 0 else { return hls_averror_eof() }
        let count = min(remaining, capacity)
        bytes.withUnsafeBytes { raw in
            buffer.update(from: raw.baseAddress!.advanced(by: position).assumingMemoryBound(to: UInt8.self), count: count)
        }
        position += count
        return Int32(count)
    }

    func seek(offset: Int64, whence: Int32) -> Int64 {
        if whence & hls_avseek_size() != 0 { return Int64(bytes.count) }
        let base: Int64
        switch whence & ~hls_avseek_force() {
        case SEEK_SET: base = 0
        case SEEK_CUR: base = Int64(position)
        case SEEK_END: base = Int64(bytes.count)
        default: return Int64(hls_averror(EINVAL))
        }
        // The offset comes from the demuxer reading the segment (a box size, an index): any Int64.
        let (target, overflow) = base.addingReportingOverflow(offset)
        guard !overflow, target >= 0, target <= Int64(bytes.count) else { return Int64(hls_averror(EINVAL)) }
        position = Int(target)
        return target
    }
}

/// An opened demuxer over in-memory bytes. Sole owner of the AVFormatContext, the
/// AVIOContext, the AVIO buffer (which FFmpeg may reallocate: the current one is freed)
/// and the reader the AVIO callbacks point at.
///
/// FFmpeg never opens a URL here: I/O goes through the custom AVIOContext, and
/// `io_open` (used by demuxers that want to open nested resources) is replaced by a
/// callback that refuses.
final class MemoryInput {
    private(set) var format: UnsafeMutablePointer<AVFormatContext>?
    private var io: UnsafeMutablePointer<AVIOContext>?
    private let reader: MemoryReader

    static let ioBufferSize: Int32 = 32 * 1024

    /// Demuxers allowed when probing: the containers HLS can carry.
    static let probeWhitelist = "mpegts,mov,mp4,m4a,3gp,3g2,mj2,aac,mp3,ac3,eac3,webvtt"

    init(bytes: Data, hint: ContainerHint) throws(MediaError) {
        reader = MemoryReader(bytes)

        guard let buffer = av_malloc(Int(Self.ioBufferSize))?.assumingMemoryBound(to: UInt8.self) else {
            throw MediaError.ffmpeg("av_malloc", hls_averror(ENOMEM))
        }
        let opaque = Unmanaged.passUnretained(reader).toOpaque()
        io = avio_alloc_context(
            buffer, Self.ioBufferSize, 0, opaque,
            { opaque, buf, size in
                guard let opaque, let buf, size > 0 else { return hls_averror(EINVAL) }
                return Unmanaged<MemoryReader>.fromOpaque(opaque).takeUnretainedValue().read(into: buf, capacity: Int(size))
            },
            nil,
            { opaque, offset, whence in
                guard let opaque else { return Int64(hls_averror(EINVAL)) }
                return Unmanaged<MemoryReader>.fromOpaque(opaque).takeUnretainedValue().seek(offset: offset, whence: whence)
            })
        guard let io else {
            var orphan: UnsafeMutableRawPointer? = UnsafeMutableRawPointer(buffer)
            av_freep(&orphan)
            throw MediaError.ffmpeg("avio_alloc_context", hls_averror(ENOMEM))
        }

        guard let context = avformat_alloc_context() else {
            throw MediaError.ffmpeg("avformat_alloc_context", hls_averror(ENOMEM))
        }
        context.pointee.pb = io
        context.pointee.flags |= AVFMT_FLAG_CUSTOM_IO
        // Per-segment demux must be cheap: the bytes are all here, so probe little.
        context.pointee.probesize = Int64(min(max(bytes.count, 2048), 512 * 1024))
        context.pointee.max_analyze_duration = 500_000 // µs
        context.pointee.io_open = { _, _, _, _, _ in hls_averror(EPERM) }

        let inputFormat: UnsafePointer<AVInputFormat>?
        switch hint {
        case .mpegTS: inputFormat = av_find_input_format("mpegts")
        case .fragmentedMP4: inputFormat = av_find_input_format("mov")
        case .packedAudioADTS: inputFormat = av_find_input_format("aac")
        case .packedMP3: inputFormat = av_find_input_format("mp3")
        case .packedAC3: inputFormat = av_find_input_format("ac3")
        case .packedEAC3: inputFormat = av_find_input_format("eac3")
        case .probe: inputFormat = nil
        }

        var options: OpaquePointer? = nil
        defer { av_dict_free(&options) }
        if hint == .probe { av_dict_set(&options, "format_whitelist", Self.probeWhitelist, 0) }
        av_dict_set(&options, "protocol_whitelist", "none", 0)

        var opened: UnsafeMutablePointer<AVFormatContext>? = context
        let code = avformat_open_input(&opened, nil, inputFormat, &options)
        // On failure FFmpeg frees the context (not our custom pb) and nils `opened`.
        format = opened
        try check(code, "avformat_open_input")
    }

    deinit {
        avformat_close_input(&format)
        if io != nil {
            av_freep(&io!.pointee.buffer)
            avio_context_free(&io)
        }
    }
}
