import CFFmpeg
import Foundation

/// The picture sizes a segment's video parameter sets claim, read by FFmpeg's parsers
/// (`av_parser_parse2`), which allocate no pictures. Run before `avformat_find_stream_info`,
/// whose probe decodes the first frames: max_pixels bounds that decoder's pictures by their
/// display size only, so a cropping window (a 64x64 display over 16000x16000 coded
/// pictures) would get past it; the coded size is checked here first.
enum PictureSizeProbe {
    /// Video packets looked at per stream before giving up on finding a parameter set.
    static let maxPacketsPerStream = 64

    struct Size: Equatable {
        var width: Int
        var height: Int
        var codedWidth: Int
        var codedHeight: Int
    }

    /// The first size each video stream's parser reports, by stream index (a stream whose
    /// codec has no parser, or that shows no parameter set in its first packets, is absent).
    static func videoSizes(of bytes: Data, hint: ContainerHint) -> [Int: Size] {
        guard let input = try? MemoryInput(bytes: bytes, hint: hint), let format = input.format else { return [:] }
        final class StreamParser {
            var parser: UnsafeMutablePointer<AVCodecParserContext>?
            var context: UnsafeMutablePointer<AVCodecContext>?
            var packets = 0
            init(codec: AVCodecID) {
                parser = av_parser_init(Int32(codec.rawValue))
                parser?.pointee.flags |= PARSER_FLAG_COMPLETE_FRAMES
                context = avcodec_alloc_context3(nil)
            }
            deinit {
                if let parser { av_parser_close(parser) }
                avcodec_free_context(&context)
            }
        }
        var parsers: [Int: StreamParser] = [:]
        for index in 0..<Int(format.pointee.nb_streams) {
            guard let par = format.pointee.streams[index]?.pointee.codecpar, par.pointee.codec_type == AVMEDIA_TYPE_VIDEO else { continue }
            let parser = StreamParser(codec: par.pointee.codec_id)
            if parser.parser != nil, parser.context != nil { parsers[index] = parser }
        }
        var sizes: [Int: Size] = [:]
        guard !parsers.isEmpty, let packet = av_packet_alloc() else { return sizes }
        var owned: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&owned) }
        withExtendedLifetime(input) {
            while av_read_frame(format, packet) >= 0 {
                defer { av_packet_unref(packet) }
                let index = Int(packet.pointee.stream_index)
                if sizes[index] == nil, let stream = parsers[index], stream.packets < maxPacketsPerStream, let parser = stream.parser {
                    stream.packets += 1
                    var out: UnsafeMutablePointer<UInt8>?
                    var outSize: Int32 = 0
                    _ = av_parser_parse2(
                        parser, stream.context, &out, &outSize, packet.pointee.data, packet.pointee.size,
                        packet.pointee.pts, packet.pointee.dts, packet.pointee.pos)
                    let p = parser.pointee
                    if p.coded_width > 0 || p.width > 0 {
                        sizes[index] = Size(
                            width: Int(p.width), height: Int(p.height),
                            codedWidth: Int(max(p.coded_width, p.width)), codedHeight: Int(max(p.coded_height, p.height)))
                    }
                }
                if parsers.allSatisfy({ sizes[$0.key] != nil || $0.value.packets >= maxPacketsPerStream }) { break }
            }
        }
        return sizes
    }

    /// The first video size in `bytes` that `limit` does not admit, as the error to throw.
    /// What FFmpeg logs meanwhile is dropped: the demux that follows reads the same packets
    /// and says the same things once.
    static func refusal(of bytes: Data, hint: ContainerHint, limit: PictureLimit) -> MediaError? {
        let sizes = FFmpegLog.collecting { videoSizes(of: bytes, hint: hint) }.value
        for (_, size) in sizes.sorted(by: { $0.key < $1.key })
        where !limit.admits(width: size.width, height: size.height, codedWidth: size.codedWidth, codedHeight: size.codedHeight) {
            let larger = size.codedWidth * size.codedHeight > size.width * size.height
            return .pictureAboveLimit(
                width: larger ? size.codedWidth : size.width, height: larger ? size.codedHeight : size.height,
                limit: limit.description)
        }
        return nil
    }
}
