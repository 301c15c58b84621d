import CFFmpeg
import Foundation

/// A frame that came out of a decoder. Pixels and samples are not kept (headless).
public struct DecodedFrame: Sendable {
    public var kind: TrackKind
    public var ptsSeconds: Double?
    /// Video only; 0 for audio.
    public var width: Int
    public var height: Int
    /// Audio only: samples per channel after resampling to S16 stereo 48 kHz; 0 for video.
    public var sampleCount: Int
    /// The resampler's last samples, flushed at the end (a drain): output, but no decoded frame.
    public var isResamplerFlush = false
}

/// The largest picture a video decoder may allocate. The rule is the caller's (the player
/// passes HLSCore's `ResolutionLimit`); this side knows what FFmpeg allocates.
public struct PictureLimit: Sendable, CustomStringConvertible {
    /// The longer and the shorter side allowed, pixels.
    public let longSide: Int
    public let shortSide: Int
    /// Whether a picture of these display dimensions may be decoded.
    public let admits: @Sendable (_ width: Int, _ height: Int) -> Bool

    public init(longSide: Int, shortSide: Int, admits: @escaping @Sendable (_ width: Int, _ height: Int) -> Bool) {
        self.longSide = max(longSide, shortSide)
        self.shortSide = min(longSide, shortSide)
        self.admits = admits
    }

    /// Coded sizes are display sizes rounded up to the codec's block (16 for H.264, up to 64
    /// for HEVC) and FFmpeg checks the stride-aligned width (up to 64 more) when it allocates:
    /// this much room on each side, pixels.
    public static let alignmentSlackPixels = 64

    /// FFmpeg's own bound (AVCodecContext.max_pixels): it refuses to allocate a larger
    /// picture, whatever the decoder reports; the exact rule is applied in get_format.
    public var ffmpegMaxPixels: Int {
        (longSide + Self.alignmentSlackPixels) * (shortSide + Self.alignmentSlackPixels)
    }

    /// Whether the decoder may go on with a picture of these display and coded
    /// dimensions: the display size under the rule, and the coded size (what is
    /// allocated; a cropping window can make the display size small) within the
    /// alignment slack of it.
    func admits(width: Int, height: Int, codedWidth: Int, codedHeight: Int) -> Bool {
        let slack = Self.alignmentSlackPixels
        return admits(width, height) && admits(max(1, codedWidth - slack), max(1, codedHeight - slack))
    }

    public var description: String { "\(longSide)x\(shortSide)" }
}

/// What a video decoder's get_format callback checks the picture size against, and the
/// size it refused. Reached from the callback through AVCodecContext.opaque (frame threads
/// call it from their own threads, hence the lock).
private final class PictureGate: @unchecked Sendable {
    let limit: PictureLimit
    private let lock = NSLock()
    private var refusedSize: (width: Int, height: Int)?

    init(limit: PictureLimit) { self.limit = limit }

    var refused: (width: Int, height: Int)? { lock.withLock { refusedSize } }

    func admit(width: Int, height: Int, codedWidth: Int, codedHeight: Int) -> Bool {
        if limit.admits(width: width, height: height, codedWidth: codedWidth, codedHeight: codedHeight) { return true }
        // Name the larger of the two sizes: the one that is above the limit.
        let size = codedWidth * codedHeight > width * height ? (codedWidth, codedHeight) : (width, height)
        lock.withLock { refusedSize = size }
        return false
    }
}

/// AVCodecContext.get_format for decoders with a `PictureLimit`: called when the decoder has
/// parsed a parameter set and before it allocates anything of that size. Returning
/// AV_PIX_FMT_NONE makes the decoder fail instead.
private let limitedGetFormat: @convention(c) (UnsafeMutablePointer<AVCodecContext>?, UnsafePointer<AVPixelFormat>?) -> AVPixelFormat = {
    context, formats in
    guard let context, let opaque = context.pointee.opaque else { return avcodec_default_get_format(context, formats) }
    let gate = Unmanaged<PictureGate>.fromOpaque(opaque).takeUnretainedValue()
    let c = context.pointee
    guard gate.admit(width: Int(c.width), height: Int(c.height), codedWidth: Int(c.coded_width), codedHeight: Int(c.coded_height)) else {
        return AV_PIX_FMT_NONE
    }
    return avcodec_default_get_format(context, formats)
}

/// Decodes one track. Sole owner of its AVCodecContext, AVFrame, (audio) resampler and
/// (video with a limit) picture gate. Not thread-safe: use from one thread at a time.
public final class TrackDecoder: @unchecked Sendable {
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private let resampler: AudioResampler?
    private let kind: TrackKind
    private let timeBase: Double
    private let lowDelay: Bool
    /// The context's opaque points at it; it outlives the context (freed first in deinit).
    private let pictureGate: PictureGate?
    public let codecName: String

    /// - Parameters:
    ///   - threadCount: decoder threads; 0 lets FFmpeg choose.
    ///   - lowDelay: output each frame as soon as it is decoded, for content without reordering
    ///     such as I-frame-only playlists; otherwise a decoder holds back as many frames as the
    ///     stream says it may reorder (H.264 keeps its SPS reorder depth even under
    ///     AV_CODEC_FLAG_LOW_DELAY, so a packet that leaves its frame inside is followed by a
    ///     drain and a flush, which keeps the parameter sets).
    ///   - pictureLimit: video: the largest picture the decoder may allocate; larger pictures —
    ///     in the codec parameters, or parsed later from the bitstream — make it throw
    ///     `pictureAboveLimit` before anything of that size is allocated. nil: FFmpeg's own limits only.
    public init(
        parameters: CodecParameters, threadCount: Int = 0, lowDelay: Bool = false,
        pictureLimit: PictureLimit? = nil
    ) throws(MediaError) {
        kind = parameters.kind
        timeBase = parameters.timeBase.seconds
        codecName = parameters.codecName
        resampler = parameters.kind == .audio ? AudioResampler() : nil
        self.lowDelay = lowDelay
        pictureGate = parameters.kind == .video ? pictureLimit.map(PictureGate.init(limit:)) : nil
        guard parameters.kind != .other else { throw .unsupportedCodec(parameters.codecName) }
        if let pictureLimit, parameters.kind == .video, !pictureLimit.admits(parameters.width, parameters.height) {
            throw .pictureAboveLimit(width: parameters.width, height: parameters.height, limit: pictureLimit.description)
        }
        guard let codec = avcodec_find_decoder(parameters.parameters.pointee.codec_id) else {
            throw .unsupportedCodec(parameters.codecName)
        }
        guard let context = avcodec_alloc_context3(codec) else {
            throw .ffmpeg("avcodec_alloc_context3", hls_averror(ENOMEM))
        }
        self.context = context
        try check(avcodec_parameters_to_context(context, parameters.parameters), "avcodec_parameters_to_context")
        context.pointee.pkt_timebase = parameters.timeBase.av
        context.pointee.thread_count = Int32(clamping: threadCount)
        if lowDelay {
            context.pointee.flags |= Int32(AV_CODEC_FLAG_LOW_DELAY)
            // Frame threads would hold frames back again; slices do not.
            context.pointee.thread_type = Int32(FF_THREAD_SLICE)
        }
        if let pictureGate {
            context.pointee.max_pixels = Int64(pictureGate.limit.ffmpegMaxPixels)
            context.pointee.opaque = Unmanaged.passUnretained(pictureGate).toOpaque()
            context.pointee.get_format = limitedGetFormat
        }
        try check(avcodec_open2(context, codec, nil), "avcodec_open2")
        guard let frame = av_frame_alloc() else { throw .ffmpeg("av_frame_alloc", hls_averror(ENOMEM)) }
        self.frame = frame
    }

    /// A picture size the decoder refused (see `pictureLimit`), as the error to throw.
    private func refusal() -> MediaError? {
        guard let pictureGate, let size = pictureGate.refused else { return nil }
        return .pictureAboveLimit(width: size.width, height: size.height, limit: pictureGate.limit.description)
    }

    deinit {
        av_frame_free(&frame)
        avcodec_free_context(&context)
    }

    /// Sends one packet and returns every frame the decoder has ready.
    /// "Send more input" and "drained" are normal outcomes (no frames), not errors;
    /// after `drain()`, call `flush()` before decoding again.
    public func decode(_ packet: DemuxedPacket) throws(MediaError) -> [DecodedFrame] {
        guard let context else { return [] }
        var frames: [DecodedFrame] = []
        while true {
            let code = avcodec_send_packet(context, packet.packet)
            switch FFmpegStatus(code) {
            case .ok:
                try receiveAll(into: &frames)
                if lowDelay, frames.isEmpty {
                    // No reordering to wait for: take the frame out now, then continue afresh.
                    switch FFmpegStatus(avcodec_send_packet(context, nil)) {
                    case .ok, .endOfStream, .again: break
                    case .failed(let failure): throw .ffmpeg("avcodec_send_packet", failure)
                    }
                    try receiveAll(into: &frames)
                    avcodec_flush_buffers(context)
                }
                return frames
            case .again:
                // Output must be taken before more input fits.
                let before = frames.count
                try receiveAll(into: &frames)
                if frames.count == before { return frames }
            case .endOfStream:
                return frames
            case .failed(let failure):
                throw refusal() ?? .ffmpeg("avcodec_send_packet", failure)
            }
        }
    }

    /// Signals end of stream and returns the frames still inside the decoder
    /// (and the resampler's tail).
    public func drain() throws(MediaError) -> [DecodedFrame] {
        guard let context else { return [] }
        var frames: [DecodedFrame] = []
        let code = avcodec_send_packet(context, nil)
        switch FFmpegStatus(code) {
        case .ok, .endOfStream, .again: break
        case .failed(let failure): throw refusal() ?? .ffmpeg("avcodec_send_packet", failure)
        }
        try receiveAll(into: &frames)
        if let resampler {
            let tail = try resampler.flush()
            if tail > 0 { frames.append(DecodedFrame(kind: .audio, ptsSeconds: nil, width: 0, height: 0, sampleCount: tail, isResamplerFlush: true)) }
        }
        return frames
    }

    /// Drops everything buffered (decoder and resampler), e.g. before a seek or after `drain()`.
    public func flush() {
        if let context { avcodec_flush_buffers(context) }
        resampler?.reset()
    }

    private func receiveAll(into frames: inout [DecodedFrame]) throws(MediaError) {
        guard let context, let frame else { return }
        while true {
            let code = avcodec_receive_frame(context, frame)
            switch FFmpegStatus(code) {
            case .ok:
                defer { av_frame_unref(frame) }
                let ts = frame.pointee.best_effort_timestamp
                let pts = ts == hls_nopts_value() ? nil : Double(ts) * timeBase
                switch kind {
                case .video:
                    frames.append(
                        DecodedFrame(
                            kind: .video, ptsSeconds: pts, width: Int(frame.pointee.width),
                            height: Int(frame.pointee.height), sampleCount: 0))
                case .audio:
                    let samples = try resampler?.convert(frame) ?? 0
                    frames.append(DecodedFrame(kind: .audio, ptsSeconds: pts, width: 0, height: 0, sampleCount: samples))
                case .other:
                    break
                }
            case .again, .endOfStream:
                // A refused picture size may also end in "no frame" rather than an error.
                if let refused = refusal() { throw refused }
                return
            case .failed(let failure):
                throw refusal() ?? .ffmpeg("avcodec_receive_frame", failure)
            }
        }
    }
}

/// Converts decoded audio to interleaved S16 stereo 48 kHz with libswresample.
/// Sole owner of the SwrContext, the input layout copy and the output buffer.
/// The converted samples are then dropped (headless), but the conversion is real.
final class AudioResampler {
    static let outputRate: Int32 = 48_000
    static let outputChannels: Int32 = 2
    static let bytesPerFrame = 4 // S16 x 2 channels

    private var swr: OpaquePointer?
    private var inputLayout = AVChannelLayout()
    private var inputFormat: Int32 = -1
    private var inputRate: Int32 = 0
    private var output: UnsafeMutableRawPointer?
    private var outputCapacity = 0 // in sample frames
    /// Total samples per channel produced since creation.
    private(set) var totalSamples = 0

    deinit {
        swr_free(&swr)
        av_channel_layout_uninit(&inputLayout)
        output?.deallocate()
    }

    func reset() {
        swr_free(&swr)
    }

    /// Converts one frame; returns the samples per channel written.
    func convert(_ frame: UnsafeMutablePointer<AVFrame>) throws(MediaError) -> Int {
        try configure(for: frame)
        let inputSamples = frame.pointee.nb_samples
        let capacity = Int(swr_get_out_samples(swr, inputSamples)) + 32
        let input = UnsafeMutableRawPointer(frame.pointee.extended_data)?
            .assumingMemoryBound(to: UnsafePointer<UInt8>?.self)
        return try run(input: input, inputSamples: inputSamples, capacity: capacity)
    }

    /// Pulls out what the resampler still buffers.
    func flush() throws(MediaError) -> Int {
        // A context whose swr_init failed must not be used: FFmpeg asserts (and aborts the process).
        guard let swr, swr_is_initialized(swr) != 0 else { return 0 }
        let capacity = Int(swr_get_out_samples(swr, 0)) + 32
        return try run(input: nil, inputSamples: 0, capacity: capacity)
    }

    private func run(
        input: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, inputSamples: Int32,
        capacity: Int
    ) throws(MediaError) -> Int {
        if capacity > outputCapacity {
            output?.deallocate()
            output = UnsafeMutableRawPointer.allocate(byteCount: capacity * Self.bytesPerFrame, alignment: 16)
            outputCapacity = capacity
        }
        var planes: [UnsafeMutablePointer<UInt8>?] = [output?.assumingMemoryBound(to: UInt8.self)]
        let written = planes.withUnsafeMutableBufferPointer { out in
            swr_convert(swr, out.baseAddress, Int32(outputCapacity), input, inputSamples)
        }
        try check(written, "swr_convert")
        totalSamples += Int(written)
        return Int(written)
    }

    private func configure(for frame: UnsafeMutablePointer<AVFrame>) throws(MediaError) {
        // A damaged frame can claim no sample rate; a resampler set up for it would abort in FFmpeg.
        guard frame.pointee.sample_rate > 0, frame.pointee.nb_samples >= 0 else {
            throw .ffmpeg(function: "swr_init", code: hls_averror_invaliddata(), message: "audio frame with sample rate \(frame.pointee.sample_rate)")
        }
        var layout = AVChannelLayout()
        defer { av_channel_layout_uninit(&layout) }
        if frame.pointee.ch_layout.order != AV_CHANNEL_ORDER_UNSPEC, frame.pointee.ch_layout.nb_channels > 0 {
            try check(av_channel_layout_copy(&layout, &frame.pointee.ch_layout), "av_channel_layout_copy")
        } else {
            av_channel_layout_default(&layout, max(frame.pointee.ch_layout.nb_channels, 1))
        }
        if swr != nil, inputFormat == frame.pointee.format, inputRate == frame.pointee.sample_rate,
            av_channel_layout_compare(&layout, &inputLayout) == 0
        {
            return
        }
        swr_free(&swr)
        av_channel_layout_uninit(&inputLayout)
        try check(av_channel_layout_copy(&inputLayout, &layout), "av_channel_layout_copy")
        inputFormat = frame.pointee.format
        inputRate = frame.pointee.sample_rate

        var outLayout = AVChannelLayout()
        av_channel_layout_default(&outLayout, Self.outputChannels)
        defer { av_channel_layout_uninit(&outLayout) }
        do {
            try check(
                swr_alloc_set_opts2(
                    &swr, &outLayout, AV_SAMPLE_FMT_S16, Self.outputRate,
                    &inputLayout, AVSampleFormat(frame.pointee.format), inputRate, 0, nil),
                "swr_alloc_set_opts2")
            try check(swr_init(swr), "swr_init")
        } catch {
            // Forget the half-made context and the input it was for, so nothing uses it
            // and the next frame sets up afresh.
            swr_free(&swr)
            inputFormat = -1
            inputRate = 0
            throw error
        }
    }
}
