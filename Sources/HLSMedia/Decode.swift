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

/// Decodes one track. Sole owner of its AVCodecContext, AVFrame and (audio) resampler.
/// Not thread-safe: use from one thread at a time.
public final class TrackDecoder: @unchecked Sendable {
    private var context: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private let resampler: AudioResampler?
    private let kind: TrackKind
    private let timeBase: Double
    private let lowDelay: Bool
    public let codecName: String

    /// - Parameters:
    ///   - threadCount: decoder threads; 0 lets FFmpeg choose.
    ///   - lowDelay: output each frame as soon as it is decoded, for content without reordering
    ///     such as I-frame-only playlists; otherwise a decoder holds back as many frames as the
    ///     stream says it may reorder (H.264 keeps its SPS reorder depth even under
    ///     AV_CODEC_FLAG_LOW_DELAY, so a packet that leaves its frame inside is followed by a
    ///     drain and a flush, which keeps the parameter sets).
    public init(parameters: CodecParameters, threadCount: Int = 0, lowDelay: Bool = false) throws(MediaError) {
        kind = parameters.kind
        timeBase = parameters.timeBase.seconds
        codecName = parameters.codecName
        resampler = parameters.kind == .audio ? AudioResampler() : nil
        self.lowDelay = lowDelay
        guard parameters.kind != .other else { throw .unsupportedCodec(parameters.codecName) }
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
        try check(avcodec_open2(context, codec, nil), "avcodec_open2")
        guard let frame = av_frame_alloc() else { throw .ffmpeg("av_frame_alloc", hls_averror(ENOMEM)) }
        self.frame = frame
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
                throw .ffmpeg("avcodec_send_packet", failure)
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
        case .failed(let failure): throw .ffmpeg("avcodec_send_packet", failure)
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
                    frames.append(DecodedFrame(kind: .video, ptsSeconds: pts, width: Int(frame.pointee.width),
                                               height: Int(frame.pointee.height), sampleCount: 0))
                case .audio:
                    let samples = try resampler?.convert(frame) ?? 0
                    frames.append(DecodedFrame(kind: .audio, ptsSeconds: pts, width: 0, height: 0, sampleCount: samples))
                case .other:
                    break
                }
            case .again, .endOfStream:
                return
            case .failed(let failure):
                throw .ffmpeg("avcodec_receive_frame", failure)
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
    static let bytesPerFrame = 4  // S16 x 2 channels

    private var swr: OpaquePointer?
    private var inputLayout = AVChannelLayout()
    private var inputFormat: Int32 = -1
    private var inputRate: Int32 = 0
    private var output: UnsafeMutableRawPointer?
    private var outputCapacity = 0  // in sample frames
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

    private func run(input: UnsafeMutablePointer<UnsafePointer<UInt8>?>?, inputSamples: Int32,
                     capacity: Int) throws(MediaError) -> Int {
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
           av_channel_layout_compare(&layout, &inputLayout) == 0 {
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
            try check(swr_alloc_set_opts2(&swr, &outLayout, AV_SAMPLE_FMT_S16, Self.outputRate,
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
