// External tools the media tests run: ffmpeg's own frame counts.

import Foundation
import TestSupport

/// ffmpeg on PATH, or a test failure that says it is needed.
func requireFFmpeg() throws -> URL {
    guard let ffmpeg = findOnPath("ffmpeg") else {
        throw TestSetupError(
            "ffmpeg is not on PATH: these tests make their media, and take their reference frame counts, with the ffmpeg CLI (Tools/install-deps.sh installs it)"
        )
    }
    return ffmpeg
}

/// What `ffmpeg -i URL -f framecrc -` decodes from a URL: frames per stream kind, and its exit status.
/// ffmpeg's HLS demuxer reads every variant and rendition of a multivariant playlist, so the
/// counts are per program as hlsplay plays it only for single-variant streams; callers pass a
/// media playlist, or say why the counts differ.
struct FFmpegReference {
    var status: Int32
    var videoFrames: Int
    var audioFrames: Int
    var stderrTail: String
}

/// `inputOptions` go before `-i` (e.g. `-extension_picky 0`), `outputOptions` after it (e.g. `-t 6`).
func ffmpegFrameCounts(
    _ url: String, inputOptions: [String] = [], outputOptions: [String] = [],
    timeoutSeconds: Double = 180
) throws -> FFmpegReference {
    let ffmpeg = try requireFFmpeg()
    let run = try runProcess(
        ffmpeg,
        ["-nostdin", "-hide_banner", "-loglevel", "error"] + inputOptions
            + ["-i", url] + outputOptions + ["-f", "framecrc", "-"],
        standardInput: .nullDevice, timeoutSeconds: timeoutSeconds)
    // framecrc lines: `stream_index, dts, pts, duration, size, crc`; the header names each stream's media type.
    var kinds: [Int: String] = [:]
    var counts: [String: Int] = [:]
    for line in run.stdout.split(separator: "\n") {
        if line.hasPrefix("#media_type ") {
            // `#media_type 0: video`
            let parts = line.dropFirst("#media_type ".count).split(separator: ":")
            if parts.count == 2, let i = Int(parts[0]) { kinds[i] = parts[1].trimmingCharacters(in: .whitespaces) }
        } else if !line.hasPrefix("#"), let comma = line.firstIndex(of: ","), let i = Int(line[..<comma].trimmingCharacters(in: .whitespaces)) {
            counts[kinds[i] ?? "other", default: 0] += 1
        }
    }
    return FFmpegReference(
        status: run.status, videoFrames: counts["video"] ?? 0, audioFrames: counts["audio"] ?? 0,
        stderrTail: String(run.stderr.suffix(400)))
}
