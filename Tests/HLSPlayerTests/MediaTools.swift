// External tools the media tests run: a process with a deadline, ffmpeg's own frame counts.

import Foundation

/// A finished process: exit status, stdout and stderr, wall seconds.
struct ToolRun {
    var status: Int32
    var stdout: String
    var stderr: String
    var wallSeconds: Double
}

/// Runs `executable` with `arguments`, reading both pipes, and kills it after `timeoutSeconds`
/// (a TestSetupError then says so).
func runTool(_ executable: URL, _ arguments: [String], timeoutSeconds: Double = 120,
             environment: [String: String]? = nil) throws -> ToolRun {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = FileHandle.nullDevice
    let started = Date()
    try process.run()
    final class Box: @unchecked Sendable { var data = Data() }
    let outBox = Box(), errBox = Box()
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) { outBox.data = out.fileHandleForReading.readDataToEndOfFile() }
    DispatchQueue.global().async(group: group) { errBox.data = err.fileHandleForReading.readDataToEndOfFile() }
    let deadline = started.addingTimeInterval(timeoutSeconds)
    while process.isRunning && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
    if process.isRunning {
        process.terminate()
        process.waitUntilExit()
        throw TestSetupError("\(executable.lastPathComponent) \(arguments.joined(separator: " ")) did not finish within \(timeoutSeconds) s")
    }
    process.waitUntilExit()
    group.wait()
    return ToolRun(status: process.terminationStatus, stdout: String(decoding: outBox.data, as: UTF8.self),
                   stderr: String(decoding: errBox.data, as: UTF8.self), wallSeconds: Date().timeIntervalSince(started))
}

/// ffmpeg on PATH, or a test failure that says it is needed.
func requireFFmpeg() throws -> URL {
    guard let ffmpeg = findOnPath("ffmpeg") else {
        throw TestSetupError("ffmpeg is not on PATH: these tests make their media, and take their reference frame counts, with the ffmpeg CLI (Tools/install-deps.sh installs it)")
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
func ffmpegFrameCounts(_ url: String, inputOptions: [String] = [], outputOptions: [String] = [],
                       timeoutSeconds: Double = 180) throws -> FFmpegReference {
    let ffmpeg = try requireFFmpeg()
    let run = try runTool(ffmpeg, ["-nostdin", "-hide_banner", "-loglevel", "error"] + inputOptions
                                    + ["-i", url] + outputOptions + ["-f", "framecrc", "-"],
                          timeoutSeconds: timeoutSeconds)
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
    return FFmpegReference(status: run.status, videoFrames: counts["video"] ?? 0, audioFrames: counts["audio"] ?? 0,
                           stderrTail: String(run.stderr.suffix(400)))
}
