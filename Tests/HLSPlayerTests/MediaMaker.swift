import Foundation
import Testing
import TestSupport

/// Test media made with the ffmpeg CLI at test time, and ffmpeg's own decoded-frame
/// counts on the same URL as the reference a run of hlsplay is held to.
///
/// Typical use:
/// ```swift
/// let dir = try MediaDir("packed-aac")
/// try FFmpegCLI.run(FFmpegCLI.tone(seconds: 6) + ["-c:a", "aac", "-f", "hls", "prog.m3u8"], in: dir.url)
/// try withOrigin(dir.url) { base in
///     let reference = try FFmpegCLI.frameCounts(of: base.appendingPathComponent("prog.m3u8"))
///     ...
/// }
/// ```
enum FFmpegCLI {
    /// The ffmpeg (or ffprobe) executable on PATH, or a setup error that says how to get it.
    static func executable(_ tool: String = "ffmpeg") throws -> URL {
        if let url = findOnPath(tool) { return url }
        throw TestSetupError("\(tool) is not on PATH: these tests make their media with the \(tool) CLI (apt-get install ffmpeg)")
    }

    /// Runs ffmpeg with `arguments` (after `-nostdin -v error -y`) in `directory`; throws with its stderr if it fails.
    static func run(_ arguments: [String], in directory: URL) throws {
        let result = try capture("ffmpeg", ["-nostdin", "-hide_banner", "-v", "error", "-y"] + arguments, in: directory)
        guard result.status == 0 else {
            throw TestSetupError("ffmpeg \(arguments.joined(separator: " ")) failed (\(result.status)): \(result.stderr)")
        }
    }

    /// A synthetic video source (`testsrc2`), `seconds` long.
    static func testVideo(seconds: Double, size: String = "320x180", fps: Int = 30) -> [String] {
        ["-f", "lavfi", "-i", "testsrc2=size=\(size):rate=\(fps):duration=\(seconds)"]
    }

    /// A synthetic tone, `seconds` long.
    static func tone(seconds: Double, sampleRate: Int = 48_000) -> [String] {
        ["-f", "lavfi", "-i", "sine=frequency=440:sample_rate=\(sampleRate):duration=\(seconds)"]
    }

    /// Frames ffmpeg decodes from `url` (`ffmpeg [inputOptions] -i URL -f framecrc -`), by media type,
    /// and how many decode errors it reported. The reference for "plays every frame".
    static func frameCounts(of url: URL, inputOptions: [String] = []) throws -> FrameCounts {
        let result = try capture(
            "ffmpeg",
            ["-nostdin", "-hide_banner", "-v", "error"] + inputOptions
                + ["-i", url.absoluteString, "-f", "framecrc", "-"], in: nil)
        guard result.status == 0 else {
            throw TestSetupError("ffmpeg could not decode \(url.absoluteString) for the reference count (\(result.status)): \(result.stderr)")
        }
        // framecrc: "#media_type 0: video" headers, then "stream, dts, pts, duration, size, crc" per frame.
        var types: [Int: String] = [:]
        var counts = FrameCounts()
        for line in result.stdout.split(separator: "\n") {
            if line.hasPrefix("#media_type") {
                let parts = line.dropFirst("#media_type".count).split(separator: ":").map { $0.trimmingCharacters(in: .whitespaces) }
                if parts.count == 2, let index = Int(parts[0]) { types[index] = parts[1] }
            } else if !line.hasPrefix("#"), let index = line.split(separator: ",").first.flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
                switch types[index] {
                case "video": counts.video += 1
                case "audio": counts.audio += 1
                default: break
                }
            }
        }
        counts.decodeErrors = result.stderr.split(separator: "\n").filter { $0.contains("Error while decoding") }.count
        return counts
    }

    /// The packets of one stream of a local file (ffprobe), in file order.
    static func packets(of file: URL, stream: String = "v:0") throws -> [ProbedPacket] {
        let result = try capture(
            "ffprobe",
            [
                "-v", "error", "-select_streams", stream, "-show_entries",
                "packet=pts_time,pos,size,flags", "-of", "compact=p=0", file.path
            ], in: nil)
        guard result.status == 0 else { throw TestSetupError("ffprobe \(file.path) failed: \(result.stderr)") }
        return result.stdout.split(separator: "\n").compactMap { line in
            var fields: [String: String] = [:]
            for pair in line.split(separator: "|") {
                let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
                if kv.count == 2 { fields[kv[0]] = kv[1] }
            }
            guard let pts = fields["pts_time"].flatMap(Double.init), let pos = fields["pos"].flatMap(Int.init),
                let size = fields["size"].flatMap(Int.init)
            else { return nil }
            return ProbedPacket(ptsSeconds: pts, position: pos, size: size, isKeyframe: fields["flags"]?.hasPrefix("K") ?? false)
        }
    }

    /// Longest a single ffmpeg or ffprobe run may take, seconds (media of a few seconds takes far less).
    private static let toolTimeoutSeconds = 600.0

    private static func capture(_ tool: String, _ arguments: [String], in directory: URL?) throws -> ProcessResult {
        try runProcess(try executable(tool), arguments, currentDirectory: directory, timeoutSeconds: toolTimeoutSeconds)
    }
}

/// Frames decoded, by media type.
struct FrameCounts: Equatable, CustomStringConvertible {
    var video = 0
    var audio = 0
    var decodeErrors = 0
    var description: String { "\(video) video, \(audio) audio, \(decodeErrors) decode errors" }
}

/// One packet as ffprobe lists it: where it is in the file and whether it is a keyframe.
struct ProbedPacket: Equatable {
    var ptsSeconds: Double
    var position: Int
    var size: Int
    var isKeyframe: Bool
}

/// A fresh temporary folder for one test's media, removed when the value goes away.
final class MediaDir {
    let url: URL
    init(_ name: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ relative: String) -> URL { url.appendingPathComponent(relative) }

    /// Creates a subfolder and returns it.
    func folder(_ relative: String) throws -> URL {
        let sub = url.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: sub, withIntermediateDirectories: true)
        return sub
    }

    func write(_ text: String, to relative: String) throws {
        try text.write(to: url.appendingPathComponent(relative), atomically: true, encoding: .utf8)
    }
}

extension Run {
    /// A summary number (Int or Double in the JSON) as a Double.
    func number(_ key: String) -> Double? {
        (summary?[key] as? Double) ?? (summary?[key] as? Int).map(Double.init)
    }
}
