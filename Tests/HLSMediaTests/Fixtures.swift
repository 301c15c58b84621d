import Foundation
import Testing
import TestSupport
@testable import HLSMedia

/// Real segments from the sample recipe (Samples/make-ladder.sh, 8 s, 2 s segments).
/// Uses Samples/build/short-2s when built; otherwise runs the recipe with the real
/// ffmpeg CLI into a cache directory under the temp dir. No ffmpeg means a clear failure.
struct Fixtures: Sendable {
    let ladder: URL
    /// The fMP4 rendition of v0's first segment: init section + one media segment.
    let fmp4Init: URL
    let fmp4Segment: URL
    /// v0's first segment remuxed as a plain (non-fragmented) MP4.
    let plainMP4: URL
    /// v0's first segment's audio as packed ADTS (an HLS packed-audio segment).
    let packedAudio: URL

    static let shared: Result<Fixtures, FixtureError> = Result { try make() }
        .mapError { $0 as? FixtureError ?? .failed("\($0)") }

    /// Also routes FFmpeg's log into `LogCollector` so hostile-input runs stay quiet.
    static func get() throws -> Fixtures {
        _ = quietLog
        return try shared.get()
    }

    private static let quietLog: Void = LogCollector.shared.install()

    enum FixtureError: Error, CustomStringConvertible {
        case ffmpegMissing
        case failed(String)
        var description: String {
            switch self {
            case .ffmpegMissing: return "ffmpeg CLI not found in PATH: HLSMedia tests need it to build sample segments"
            case .failed(let why): return "could not build sample segments: \(why)"
            }
        }
    }

    func segment(rung: Int, index: Int) throws -> Data {
        try Data(contentsOf: ladder.appendingPathComponent(String(format: "v%d/seg_%05d.ts", rung, index)))
    }

    private static func make() throws -> Fixtures {
        let cache = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-media-fixtures")
        try FileManager.default.createDirectory(at: cache, withIntermediateDirectories: true)
        let built = Repo.root.appendingPathComponent("Samples/build/short-2s")
        let ladder: URL
        if FileManager.default.fileExists(atPath: built.appendingPathComponent("master.m3u8").path) {
            ladder = built
        } else {
            guard findOnPath("ffmpeg") != nil else { throw FixtureError.ffmpegMissing }
            ladder = cache.appendingPathComponent("short-2s")
            try run(
                "/bin/bash",
                [
                    Repo.root.appendingPathComponent("Samples/make-ladder.sh").path,
                    ladder.path, "--duration", "8", "--segment", "2"
                ])
        }
        let fmp4 = cache.appendingPathComponent("fmp4")
        let fmp4Init = fmp4.appendingPathComponent("init.mp4")
        let fmp4Segment = fmp4.appendingPathComponent("seg_00000.m4s")
        let plainMP4 = cache.appendingPathComponent("plain.mp4")
        let packedAudio = cache.appendingPathComponent("packed.aac")
        let source = ladder.appendingPathComponent("v0/seg_00000.ts").path
        let fm = FileManager.default
        if !fm.fileExists(atPath: fmp4Segment.path) || !fm.fileExists(atPath: plainMP4.path)
            || !fm.fileExists(atPath: packedAudio.path)
        {
            guard findOnPath("ffmpeg") != nil else { throw FixtureError.ffmpegMissing }
            try fm.createDirectory(at: fmp4, withIntermediateDirectories: true)
            try run(
                "ffmpeg",
                [
                    "-nostdin", "-v", "error", "-y", "-i", source, "-c", "copy", "-bsf:a", "aac_adtstoasc", "-f", "hls",
                    "-hls_segment_type", "fmp4", "-hls_time", "2", "-hls_playlist_type", "vod",
                    "-hls_fmp4_init_filename", "init.mp4",
                    "-hls_segment_filename", fmp4.appendingPathComponent("seg_%05d.m4s").path,
                    fmp4.appendingPathComponent("prog.m3u8").path
                ])
            try run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source, "-c", "copy", "-bsf:a", "aac_adtstoasc", "-f", "mp4", plainMP4.path])
            try run("ffmpeg", ["-nostdin", "-v", "error", "-y", "-i", source, "-vn", "-c:a", "copy", "-f", "adts", packedAudio.path])
        }
        return Fixtures(ladder: ladder, fmp4Init: fmp4Init, fmp4Segment: fmp4Segment, plainMP4: plainMP4, packedAudio: packedAudio)
    }

    /// Longest one media-making command may take, seconds (the ladder takes well under a minute).
    private static let toolTimeoutSeconds = 600.0

    private static func run(_ tool: String, _ arguments: [String]) throws {
        let executable: URL
        if tool.hasPrefix("/") {
            executable = URL(fileURLWithPath: tool)
        } else {
            guard let url = findOnPath(tool) else { throw FixtureError.ffmpegMissing }
            executable = url
        }
        let result = try runProcess(executable, arguments, timeoutSeconds: toolTimeoutSeconds)
        guard result.status == 0 else {
            throw FixtureError.failed("\(tool) \(arguments.joined(separator: " ")) exited \(result.status)")
        }
    }
}

/// Deterministic PRNG for mutations (SplitMix64).
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Collects FFmpeg log lines (the sink is process-wide).
final class LogCollector: @unchecked Sendable {
    static let shared = LogCollector()
    private let lock = NSLock()
    private var lines: [(level: Int32, text: String)] = []

    func install() {
        FFmpegLog.install(minimumLevel: 24 /* AV_LOG_WARNING */) { level, text in
            LogCollector.shared.append(level, text)
        }
    }
    func append(_ level: Int32, _ text: String) {
        lock.lock(); defer { lock.unlock() }
        if lines.count >= 10_000 { lines.removeFirst(5_000) }
        lines.append((level, text))
    }
    func take() -> [(level: Int32, text: String)] {
        lock.lock(); defer { lines.removeAll(); lock.unlock() }
        return lines
    }
}

/// Resident set size of this process, from /proc/self/statm.
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Decodes every audio/video packet of a demux result with fresh decoders. Decode
/// errors (expected on damaged input) are counted, not thrown.
@discardableResult
func decodeAll(_ result: DemuxResult, threadCount: Int = 1) throws -> (video: [DecodedFrame], audio: [DecodedFrame], errors: Int) {
    var video: [DecodedFrame] = []
    var audio: [DecodedFrame] = []
    var errors = 0
    for kind in [TrackKind.video, .audio] {
        guard let track = result.track(kind) else { continue }
        let decoder = try TrackDecoder(parameters: track, threadCount: threadCount)
        var frames: [DecodedFrame] = []
        for packet in result.packets where packet.parameters === track {
            do { frames += try decoder.decode(packet) } catch { errors += 1 }
        }
        do { frames += try decoder.drain() } catch { errors += 1 }
        if kind == .video { video = frames } else { audio = frames }
    }
    return (video, audio, errors)
}
