import Foundation
import HLSCore
import HLSOrigin
import Testing
import TestSupport

/// Pacing and short live windows end to end: the real hlsplay against a real hls-origin on loopback, fed the inputs
/// that used to make it run forever or hammer the origin.
/// - A live CMAF stream with 0.25 s segments and a 1.5 s window (FFmpeg's output served live by hls-origin):
///   it never started (the start threshold was more than the window holds, and every wait ended in a
///   behind-the-window resync), or, with EXT-X-TARGETDURATION:0 as FFmpeg writes it, crashed at the start.
/// - kuu's LL-HLS delta-update example served as a static file: a delta that never merges was followed by a
///   full reload at once, about a thousand playlist requests a second.
@Suite(.serialized, .tags(.realTime)) struct PacingAndLiveWindowTests {
    /// Seconds of 0.25 s segments made for the short-window stream (it loops in hls-origin's live mode).
    static let shortSegmentContentSeconds = 6
    /// hls-origin's live window for it: six 0.25 s segments, 1.5 s.
    static let shortWindowSegments = 6

    /// A VOD CMAF rendition of 0.25 s segments made with FFmpeg (a keyframe every 6 frames at 24 fps), with the
    /// media playlist as FFmpeg writes it (EXT-X-TARGETDURATION:0), or with the target duration rewritten.
    static func makeShortSegments(in dir: URL, targetDuration: Int? = nil) throws {
        guard let ffmpeg = findOnPath("ffmpeg") else {
            throw TestSetupError("ffmpeg is not on PATH: the short-segment stream is made with it at test time")
        }
        let made = try runProcess(
            ffmpeg,
            [
                "-hide_banner", "-loglevel", "error", "-y",
                "-f", "lavfi", "-i", "testsrc2=size=320x180:rate=24", "-f", "lavfi", "-i", "sine=frequency=440:sample_rate=48000",
                "-t", "\(shortSegmentContentSeconds)", "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p",
                "-g", "6", "-keyint_min", "6", "-sc_threshold", "0", "-b:v", "300k", "-c:a", "aac", "-b:a", "64k",
                "-f", "hls", "-hls_time", "0.25", "-hls_playlist_type", "vod", "-hls_segment_type", "fmp4",
                "-hls_flags", "independent_segments", "-hls_fmp4_init_filename", "init.mp4",
                "-hls_segment_filename", "seg_%05d.m4s", "index.m3u8"
            ], currentDirectory: dir)
        guard made.status == 0 else {
            throw TestSetupError("ffmpeg failed (\(made.status)): \(made.stderr)")
        }
        let playlist = dir.appendingPathComponent("index.m3u8")
        var text = try String(contentsOf: playlist, encoding: .utf8)
        try #require(text.contains("#EXT-X-TARGETDURATION:0\n"), "FFmpeg writes TARGETDURATION 0 for 0.25 s segments: \(text.prefix(200))")
        if let targetDuration {
            text = text.replacingOccurrences(of: "#EXT-X-TARGETDURATION:0\n", with: "#EXT-X-TARGETDURATION:\(targetDuration)\n")
            try text.write(to: playlist, atomically: true, encoding: .utf8)
        }
    }

    /// Plays the short-window stream for `--duration 5` and checks what every variant of it must show.
    func playShortWindow(targetDuration: Int?) throws -> Run {
        _ = try Repo.requireSamples("short-2s") // only for the hlsplay-binary check
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-short-window-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.makeShortSegments(in: dir, targetDuration: targetDuration)
        var config = OriginConfiguration()
        config.live = LiveConfiguration(windowSegments: Self.shortWindowSegments)
        let run = try withOrigin(dir, configuration: config) { server in
            // Generous: 5 s of playback takes about 6 s; before the fix it never ended.
            try runHlsplay(
                [
                    server.baseURL.appendingPathComponent("index.m3u8").absoluteString, "--headless", "--json", "--no-status",
                    "--duration", "5"
                ], timeoutSeconds: 60)
        }
        #expect(run.status == 0, "stderr: \(run.stderr.suffix(600))")
        expectValidLog(run)
        let summary = try #require(run.summary)
        #expect(summary["isLive"] as? Bool == true)
        #expect(summary["exitReason"] as? String == "durationReached")
        #expect((summary["playedSeconds"] as? Double ?? 0) >= 5)
        #expect(run.events("playback.started").count == 1)
        // Playing at the window's start from its own buffer is not "behind the window": no resync.
        #expect(
            !run.events("live.resync").contains { $0["trigger"] as? String == "behind-window" },
            "\(run.events("live.resync").map { "\($0["action"] ?? "") \($0["trigger"] ?? "")" })")
        // The start threshold was lowered to the window, and said so with what it came from.
        let clamps = run.events("playback.threshold")
        let startup = try #require(clamps.first { $0["threshold"] as? String == "startup" }, "\(clamps)")
        let ceiling = try #require(startup["ceiling"] as? [String: Any])
        #expect(ceiling["basis"] as? String == "live-window")
        #expect(abs((ceiling["seconds"] as? Double ?? 0) - 1.5) < 1e-6)
        #expect(ceiling["segments"] as? Int == Self.shortWindowSegments)
        #expect(abs((startup["clampedSeconds"] as? Double ?? 0) - 1.5) < 1e-6)
        #expect((startup["requestedSeconds"] as? Double ?? 0) > 1.5)
        // The start came with the window's worth buffered, not the threshold asked for.
        let started = try #require(run.events("playback.started").first)
        #expect((started["bufferSeconds"] as? Double ?? 0) >= 1.5 - 1e-6)
        return run
    }

    /// TARGETDURATION 1 over a 1.5 s window (shorter than three target durations): the reported hang. It now
    /// starts with the thresholds clamped to the window, warns about the window once, and plays to --duration.
    @Test func shortLiveWindow_startsClampedToTheWindow_warnsOnce_andEndsWithDuration() throws {
        let run = try playShortWindow(targetDuration: 1)
        let warnings = run.events("live.window")
        #expect(warnings.count == 1, "logged once, not at every reload")
        let warning = try #require(warnings.first)
        #expect(abs((warning["windowSeconds"] as? Double ?? 0) - 1.5) < 1e-6)
        #expect(warning["minimumWindowSeconds"] as? Double == 3)
        #expect(warning["targetDurationSeconds"] as? Double == 1)
        #expect((warning["warning"] as? String)?.contains("RFC 8216 §6.2.2") == true)
        #expect(
            run.summary?["liveResyncs"] as? Int == 0,
            "\(run.events("live.resync").map { "\($0["action"] ?? "") \($0["trigger"] ?? "") \($0["reason"] ?? "")" })")
    }

    /// The same stream with EXT-X-TARGETDURATION:0, as FFmpeg writes it: the live rules use the 0.25 s segments
    /// (the start point was one past the last segment: a crash), reload every 0.25 s rather than at once, and
    /// 1.5 s is six such target durations, so there is no window warning.
    @Test func ffmpegTargetDurationZero_startsAndReloadsAtTheSegmentDuration() throws {
        let run = try playShortWindow(targetDuration: nil)
        #expect(run.events("live.window").isEmpty)
        let loads = run.events("playlist.loaded").filter { $0["kind"] as? String == "media" }
        let seconds = run.summary?["sessionSeconds"] as? Double ?? 0
        // About one reload per 0.25 s segment; the request-rate bound allows one per 0.125 s after a burst of 4.
        let bound = RequestRateRules.limit(for: .playlist, inputs: RequestRateInputs(targetDurationSeconds: 0.25, forwardBufferTargetSeconds: 30))
        #expect(loads.count <= bound.maximumRequests(inSeconds: seconds), "\(loads.count) media playlist loads in \(seconds) s")
        #expect(loads.count >= 5, "it follows the live edge")
    }

    // MARK: The LL-HLS delta update, served statically

    static let deltaUpdateFixture = "kuu-hls-parser/examples/Low-Latency_Example-02_Playlist_Delta_Update.m3u8"
    /// The fixture's PART-TARGET, seconds.
    static let deltaUpdatePartTargetSeconds = 0.33334
    /// How long the player runs against it before SIGINT, seconds.
    static let deltaUpdateRunSeconds = 10.0

    /// The fixture verbatim, and at every media URI it names a self-initialising fMP4 sample (init + fragment),
    /// as the conformance harness serves it.
    static func deltaUpdateRoot(in dir: URL) throws -> URL {
        let fixtures = Repo.sharedData.appendingPathComponent("playlists")
        let source = fixtures.appendingPathComponent(deltaUpdateFixture)
        guard let text = try? String(contentsOf: source, encoding: .utf8) else {
            throw TestSetupError("fixture \(source.path) is missing (../shared/data/playlists)")
        }
        let fmp4 = Repo.samples("variants/fmp4")
        guard FileManager.default.fileExists(atPath: fmp4.appendingPathComponent("init.mp4").path) else {
            throw TestSetupError("Samples/build/variants is missing: run Samples/make-all.sh")
        }
        let initSection = try Data(contentsOf: fmp4.appendingPathComponent("init.mp4"))
        let fragments = try (0..<4).map { try Data(contentsOf: fmp4.appendingPathComponent(String(format: "seg_%05d.m4s", $0))) }
        try text.write(to: dir.appendingPathComponent("delta.m3u8"), atomically: true, encoding: .utf8)
        var uris: [String] = []
        for line in text.split(separator: "\n").map(String.init) {
            if line.hasPrefix("#EXT-X-PART:") || line.hasPrefix("#EXT-X-PRELOAD-HINT:"),
                let range = line.range(of: #"URI="[^"]+""#, options: .regularExpression)
            {
                uris.append(String(line[range].dropFirst(5).dropLast()))
            } else if !line.hasPrefix("#"), !line.isEmpty {
                uris.append(line)
            }
        }
        try #require(uris.count > 30, "segments, parts and the preload hint")
        for (i, uri) in uris.enumerated() {
            try (initSection + fragments[i % fragments.count]).write(to: dir.appendingPathComponent(uri))
        }
        return dir.appendingPathComponent("delta.m3u8")
    }

    /// Served statically the delta update never merges and the server never blocks. Playlist requests must stay
    /// within the bound computed from the part target (4 back to back, then one per half part target); they were
    /// about a thousand a second. The player still follows the playlist (about one reload per part target), and
    /// says once why it stopped asking for deltas.
    @Test func llhlsDeltaUpdateServedStatically_makesABoundedNumberOfPlaylistRequests() throws {
        _ = try Repo.requireSamples("short-2s") // only for the hlsplay-binary check
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-delta-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let root = dir.appendingPathComponent("root")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let playlist = try Self.deltaUpdateRoot(in: root)
        let requestLog = dir.appendingPathComponent("requests.jsonl")
        let run = try withOrigin(root, configuration: OriginConfiguration(requestLogURL: requestLog)) { server in
            try runHlsplay(
                [
                    server.baseURL.appendingPathComponent(playlist.lastPathComponent).absoluteString, "--headless", "--json",
                    "--no-status", "--duration", "60"
                ], interruptAfterSeconds: Self.deltaUpdateRunSeconds, timeoutSeconds: 60)
        }
        expectValidLog(run)
        #expect(run.status == 130, "interrupted: the static playlist never advances")
        let origin = try readRequestLog(requestLog)
        let playlists = origin.filter { $0.path.hasSuffix(".m3u8") }
        let first = try #require(origin.first?.accepted)
        let last = try #require(playlists.last?.accepted)
        let seconds = last - first
        let bound = RequestRateRules.limit(
            for: .playlist,
            inputs: RequestRateInputs(
                partTargetSeconds: Self.deltaUpdatePartTargetSeconds,
                forwardBufferTargetSeconds: 30))
        #expect(abs(bound.minimumIntervalSeconds - Self.deltaUpdatePartTargetSeconds / 2) < 1e-9)
        let allowed = bound.maximumRequests(inSeconds: seconds)
        print(
            "LL-HLS delta update served statically: \(playlists.count) playlist requests in \(String(format: "%.1f", seconds)) s (bound \(allowed))")
        #expect(playlists.count <= allowed, "\(playlists.count) playlist requests in \(seconds) s; the bound from PART-TARGET allows \(allowed)")
        // Paced at about one per part target, not stopped: it keeps following the playlist.
        #expect(playlists.count >= 10, "\(playlists.count) playlist requests in \(seconds) s")
        // The session log counts the same requests (give or take the one in flight at SIGINT).
        let logged = run.events("request.start").filter { $0["purpose"] as? String == "media-playlist" }.count
        #expect(abs(playlists.count - logged) <= 1, "origin \(playlists.count), session log \(logged)")
        // Why, once: the delta did not merge, deltas were turned off, and the whole playlist the server
        // answers with is itself a delta — not one line per request.
        let messages = run.events("error").compactMap { $0["message"] as? String }
        #expect(messages.filter { $0.contains("delta update could not be merged") }.count == 1, "\(messages)")
        #expect(messages.filter { $0.contains("answered a request for the whole playlist with a delta update") }.count == 1, "\(messages)")
        // After the first, no request asks for a delta update.
        let skips = playlists.filter { ($0.query ?? "").contains("_HLS_skip") }
        #expect(skips.count <= 1, "\(skips.map { $0.query ?? "" })")
    }
}
