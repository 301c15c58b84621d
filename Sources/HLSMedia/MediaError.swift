import CFFmpeg

/// Why a demux or decode did not produce media.
public enum MediaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// An FFmpeg call returned a negative code; `message` comes from `av_strerror`.
    case ffmpeg(function: String, code: Int32, message: String)
    /// The input opened, but holds no audio or video stream with packets.
    case noPlayableStreams
    /// No decoder for this codec in the linked FFmpeg.
    case unsupportedCodec(String)
    /// Zero bytes were handed in.
    case emptyInput
    /// The stream's pictures are larger than the decoder may allocate (`PictureLimit`);
    /// refused before they were allocated. `limit` says the limit in force.
    case pictureAboveLimit(width: Int, height: Int, limit: String)

    public var description: String {
        switch self {
        case let .ffmpeg(function, code, message): return "\(function) failed: \(message) (\(code))"
        case .noPlayableStreams: return "no playable audio or video stream"
        case let .unsupportedCodec(name): return "unsupported codec \(name)"
        case .emptyInput: return "empty input"
        case let .pictureAboveLimit(width, height, limit): return "pictures of \(width)x\(height) are above the limit of \(limit)"
        }
    }

    /// The error value for FFmpeg return code `code` from `function`.
    static func ffmpeg(_ function: String, _ code: Int32) -> MediaError {
        .ffmpeg(function: function, code: code, message: ffmpegErrorString(code))
    }
}

/// `av_strerror` as a Swift string.
func ffmpegErrorString(_ code: Int32) -> String {
    var buffer = [CChar](repeating: 0, count: 128)
    return buffer.withUnsafeMutableBufferPointer { buf in
        _ = hls_av_err2str(code, buf.baseAddress, buf.count)
        return String(cString: buf.baseAddress!)
    }
}

/// The outcome of an FFmpeg call that may legitimately say "not now" or "no more".
enum FFmpegStatus {
    case ok
    case again
    case endOfStream
    case failed(Int32)

    init(_ code: Int32) {
        if code >= 0 {
            self = .ok
        } else if code == hls_averror_eagain() {
            self = .again
        } else if code == hls_averror_eof() {
            self = .endOfStream
        } else {
            self = .failed(code)
        }
    }
}

/// Throws `MediaError.ffmpeg` for a negative return code; returns it otherwise.
@discardableResult
func check(_ code: Int32, _ function: String) throws(MediaError) -> Int32 {
    if code < 0 { throw MediaError.ffmpeg(function, code) }
    return code
}
