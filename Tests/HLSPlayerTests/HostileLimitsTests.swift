// Resource limits on hostile input, played by the real binary: each case is built at test time by
// Tools/hardening/hostile/make-media.sh (one folder per case; its header lists each case and the outcome
// expected) and served by hls-origin on loopback, or played as a local path. Peak RSS is the
// process's VmHWM, read from /proc while it runs.

import Foundation
import HLSOrigin
import Testing
import TestSupport

@Suite(.serialized, .tags(.realTime)) struct HostileLimitsTests {
    /// The cases, built once into the temporary folder under a name made from the script's bytes
    /// (`scriptOutputBuiltOnce`): later runs reuse them, a changed script builds anew.
    static let media: Result<URL, any Error> = Result {
        _ = try requireFFmpeg()
        return try scriptOutputBuiltOnce(
            script: Repo.root.appendingPathComponent("Tools/hardening/hostile/make-media.sh"),
            directoryPrefix: "hlsplay-hostile", timeoutSeconds: 300)
    }

    static func root() throws -> URL {
        guard FileManager.default.isExecutableFile(atPath: Repo.hlsplay.path) else {
            throw TestSetupError("\(Repo.hlsplay.path) is missing: run `swift build` first (Tools/test.sh does)")
        }
        return try media.get()
    }

    static let mebibyte = 1 << 20

    /// Plays `path` (relative to the cases' root) from hls-origin.
    func play(_ path: String, _ arguments: [String], timeoutSeconds: Double = 120) throws -> Run {
        try withOrigin(try Self.root()) { base in
            try runHlsplay(
                [base.appendingPathComponent(path).absoluteString, "--headless", "--json"] + arguments,
                timeoutSeconds: timeoutSeconds)
        }
    }

    func peakMiB(_ run: Run) -> Double { Double(run.peakRSSBytes ?? 0) / Double(Self.mebibyte) }

    /// The session ended with a fatal media error naming the refused size and the limit, logged
    /// as `resolution.limit` with its inputs, nothing of that size decoded.
    func expectRefused(_ run: Run, source: String, mediaSequence: Int, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.status == 65, "stderr: \(run.stderr)", sourceLocation: sourceLocation)
        expectValidLog(run, sourceLocation: sourceLocation)
        let refusals = run.events("resolution.limit")
        #expect(refusals.count == 1, sourceLocation: sourceLocation)
        let refusal = refusals.first ?? [:]
        #expect(refusal["action"] as? String == "refused", sourceLocation: sourceLocation)
        #expect(refusal["source"] as? String == source, sourceLocation: sourceLocation)
        #expect(refusal["width"] as? Int == 16000 && refusal["height"] as? Int == 16000, "\(refusal)", sourceLocation: sourceLocation)
        #expect(refusal["limit"] as? String == "8192x4320" && refusal["maxPixels"] as? Int == 35_389_440, sourceLocation: sourceLocation)
        #expect(refusal["mediaSequence"] as? Int == mediaSequence, sourceLocation: sourceLocation)
        let fatal = run.events("error").filter { $0["fatal"] as? Bool == true }
        #expect(fatal.count == 1 && fatal.first?["category"] as? String == "media", "\(fatal)", sourceLocation: sourceLocation)
        let message = fatal.first?["message"] as? String ?? ""
        #expect(
            message.contains("16000x16000") && message.contains("8192x4320") && message.contains("--max-resolution"),
            "\(message)", sourceLocation: sourceLocation)
        #expect(run.stderr.contains("16000x16000"), sourceLocation: sourceLocation)
        #expect(run.summary?["exitReason"] as? String == "error", sourceLocation: sourceLocation)
    }

    // MARK: - The decoder memory bomb (a 5.8 KB segment whose SPS claims 16000x16000)

    /// Was: exit 0 after 20 s (a 14 s demux probe decoding 16000x16000 pictures), 1.36 GB peak RSS
    /// with one decoder thread, 2.6 GB with FFmpeg's choice (debug build).
    @Test(arguments: [1, 0])
    func spsBomb_refusedAsMediaError_beforeAllocating(decodeThreads: Int) throws {
        let run = try play("sps-bomb/prog.m3u8", ["--decode-threads", String(decodeThreads)], timeoutSeconds: 60)
        expectRefused(run, source: "container", mediaSequence: 0)
        #expect(run.events("decoder.open").isEmpty, "no decoder was opened for it")
        #expect(run.events("segment.buffered").isEmpty, "nothing of it reached the forward buffer")
        #expect(peakMiB(run) < 250, "peak RSS \(peakMiB(run)) MiB")
    }

    /// The container (FFmpeg's parser) reports the 64x64 display size of a cropping window
    /// over 16000x16000 coded pictures; FFmpeg's max_pixels checks the display size only.
    @Test func spsBombCropped_codedSizeRefusedBeforeTheProbeDecodes() throws {
        let run = try play("sps-bomb-cropped/prog.m3u8", [], timeoutSeconds: 60)
        expectRefused(run, source: "container", mediaSequence: 0)
        #expect(peakMiB(run) < 250, "peak RSS \(peakMiB(run)) MiB")
    }

    /// The bomb as the second segment of a variant: the demuxer reuses the first segment's codec
    /// parameters (no probe), so the decoder is the one that meets the new SPS.
    @Test(arguments: [1, 0])
    func spsBombMidstream_refusedByTheDecoder(decodeThreads: Int) throws {
        let run = try play("sps-bomb-midstream/prog.m3u8", ["--decode-threads", String(decodeThreads)], timeoutSeconds: 60)
        expectRefused(run, source: "decoder", mediaSequence: 1)
        #expect(run.events("frame.first").count == 1, "the good first segment played")
        #expect(peakMiB(run) < 250, "peak RSS \(peakMiB(run)) MiB")
    }

    /// A rung that declares a RESOLUTION above the limit is left out of the ladder up-front (never
    /// requested); the other plays.
    @Test func declaredTooLarge_rungExcluded_otherRungPlays() throws {
        let run = try withOrigin(try Self.root()) { base in
            try runHlsplay(
                [
                    base.appendingPathComponent("declared-too-large/master.m3u8").absoluteString, "--headless", "--json",
                    "--startup-cap", "off"
                ], timeoutSeconds: 60)
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let excluded = run.events("resolution.limit")
        #expect(excluded.count == 1)
        #expect(excluded.first?["action"] as? String == "variant-excluded")
        #expect(excluded.first?["source"] as? String == "playlist")
        #expect(excluded.first?["variantIndex"] as? Int == 1)
        let urls = run.events("request.start").compactMap { $0["url"] as? String }
        #expect(!urls.contains { $0.contains("/v1/") }, "the excluded rung was never requested: \(urls)")
        let ladders = run.events("abr.decision").compactMap { ($0["inputs"] as? [String: Any])?["ladder"] as? [[String: Any]] }
        #expect(!ladders.isEmpty && ladders.allSatisfy { $0.map { $0["variantIndex"] as? Int } == [0] })
        #expect(run.summary?["exitReason"] as? String == "completed")
    }

    /// `--max-resolution` sets the limit: a 64x64 stream above 32x32 is refused; `none` and a
    /// limit it fits play it.
    @Test func maxResolutionFlag_setsTheLimit() throws {
        let inside = try Self.root().appendingPathComponent("local-escape/play/prog-inside.m3u8").path
        let refused = try runHlsplay([inside, "--headless", "--json", "--max-resolution", "32x32"], timeoutSeconds: 60)
        #expect(refused.status == 65, "stderr: \(refused.stderr)")
        #expect(refused.events("resolution.limit").first?["limit"] as? String == "32x32")
        #expect((refused.logLines.first?["configuration"] as? [String: Any])?["maxResolution"] as? String == "32x32")
        for limit in ["none", "64x64"] {
            let played = try runHlsplay([inside, "--headless", "--json", "--max-resolution", limit], timeoutSeconds: 60)
            #expect(played.status == 0, "--max-resolution \(limit): \(played.stderr)")
        }
        let bad = try runHlsplay([inside, "--headless", "--max-resolution", "8k"], timeoutSeconds: 30)
        #expect(bad.status == 64 && bad.stderr.contains("--max-resolution"))
    }

    // MARK: - The forward buffer, bounded in bytes (2 s segments of ≈46 MB)

    /// Was: no byte bound; 930 MB downloaded in 20 s and 640 MB peak RSS (debug build; 876 MB
    /// with --duration 8 in the issue's run). Now loading stops at 256 MiB of packets held.
    @Test func bigSegments_defaultByteBound_holdsLoading() throws {
        let run = try play("big-segments/prog.m3u8", ["--duration", "20"], timeoutSeconds: 180)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(run.summary?["exitReason"] as? String == "durationReached")
        let bound = 256 * Self.mebibyte
        #expect((run.logLines.first?["configuration"] as? [String: Any])?["maxForwardBufferBytes"] as? Int == bound)
        let episodes = run.events("buffer.byteBound")
        let holding = episodes.filter { $0["action"] as? String == "holding" }
        #expect(!holding.isEmpty, "the byte bound held loading")
        for hold in holding {
            let level = hold["level"] as? [String: Any] ?? [:]
            let bounds = hold["bounds"] as? [String: Any] ?? [:]
            #expect(bounds["maxBytes"] as? Int == bound && (bounds["targetSeconds"] as? Double ?? 0) >= 30)
            // Held by bytes, not seconds: well under the 30 s target.
            #expect((level["bufferSeconds"] as? Double ?? 99) < 20, "\(hold)")
            #expect((level["bufferedBytes"] as? Int ?? 0) + (level["expectedSegmentBytes"] as? Int ?? 0) > bound, "\(hold)")
        }
        #expect(run.summary?["byteBoundEpisodes"] as? Int == holding.count)
        #expect((run.summary?["byteBoundSeconds"] as? Double ?? 0) > 0)
        // The packets held never exceed the bound by more than the segment that was expected to fit.
        let segmentBytes = 47 * 1_000_000
        let held = run.events("buffer.sample").compactMap { $0["bufferedBytes"] as? Int }
        #expect(!held.isEmpty)
        #expect((held.max() ?? 0) <= bound + segmentBytes, "max bufferedBytes \(held.max() ?? 0)")
        #expect(peakMiB(run) < 520, "peak RSS \(peakMiB(run)) MiB")
    }

    /// `--max-buffer-bytes` below one segment: every segment is still loaded — never more than
    /// what playback needs to start or resume — and the session plays through without a hang.
    @Test func byteBoundBelowOneSegment_stillPlays() throws {
        let run = try play("big-segments/prog.m3u8", ["--duration", "8", "--max-buffer-bytes", "16m"], timeoutSeconds: 120)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(run.summary?["exitReason"] as? String == "durationReached")
        #expect((run.logLines.first?["configuration"] as? [String: Any])?["maxForwardBufferBytes"] as? Int == 16 * Self.mebibyte)
        let holding = run.events("buffer.byteBound").filter { $0["action"] as? String == "holding" }
        #expect(!holding.isEmpty)
        // Held only at or above the start/resume threshold.
        for hold in holding {
            let level = hold["level"] as? [String: Any] ?? [:], bounds = hold["bounds"] as? [String: Any] ?? [:]
            #expect((level["bufferSeconds"] as? Double ?? 0) >= (bounds["floorSeconds"] as? Double ?? 99), "\(hold)")
        }
        #expect(peakMiB(run) < 400, "peak RSS \(peakMiB(run)) MiB")
        let none = try runHlsplay(["/nonexistent.m3u8", "--headless", "--max-buffer-bytes", "lots"], timeoutSeconds: 30)
        #expect(none.status == 64 && none.stderr.contains("--max-buffer-bytes"))
    }

    // MARK: - Local playlists name only files under their own directory

    /// Was: `file:///etc/passwd` was read and handed to the demuxer; `../outside/…` and a
    /// symlink pointing out were read and played (exit 0).
    @Test(arguments: ["absolute", "dotdot", "symlink"])
    func localPlaylist_fileOutsideItsDirectory_refused(playlist: String) throws {
        let path = try Self.root().appendingPathComponent("local-escape/play/prog-\(playlist).m3u8").path
        let started = Date()
        let run = try runHlsplay([path, "--headless", "--json"], timeoutSeconds: 60)
        #expect(run.status == 65, "stderr: \(run.stderr)")
        #expect(Date().timeIntervalSince(started) < 20)
        expectValidLog(run)
        let segmentEnds = run.events("request.end").filter { $0["purpose"] as? String == "segment" }
        #expect(segmentEnds.count == 1)
        #expect(segmentEnds.first?["ok"] as? Bool == false && segmentEnds.first?["errorKind"] as? String == "localFileRefused")
        #expect((segmentEnds.first?["bytes"] as? Int ?? -1) == 0, "nothing of the file was read")
        #expect(run.events("request.retry").isEmpty)
        let fatal = run.events("error").first { $0["fatal"] as? Bool == true }
        #expect(fatal?["category"] as? String == "playlist")
        #expect(run.stderr.contains("--allow-any-local-file") && run.stderr.contains("outside"), "\(run.stderr)")
        #expect(run.stderr.contains(playlist == "absolute" ? "file:///etc/passwd" : playlist == "dotdot" ? "outside/seg0.ts" : "link0.ts"))
    }

    /// Inside its directory a local playlist plays; `--allow-any-local-file` reads outside it.
    @Test func localPlaylist_insideOrAllowed_plays() throws {
        let root = try Self.root().appendingPathComponent("local-escape/play")
        let inside = try runHlsplay([root.appendingPathComponent("prog-inside.m3u8").path, "--headless", "--json"], timeoutSeconds: 60)
        #expect(inside.status == 0, "stderr: \(inside.stderr)")
        #expect((inside.logLines.first?["configuration"] as? [String: Any])?["allowAnyLocalFile"] as? Bool == false)
        for playlist in ["dotdot", "symlink"] {
            let run = try runHlsplay(
                [
                    root.appendingPathComponent("prog-\(playlist).m3u8").path, "--headless", "--json",
                    "--allow-any-local-file"
                ], timeoutSeconds: 60)
            #expect(run.status == 0, "\(playlist): \(run.stderr)")
            #expect(run.summary?["decodedVideoFrames"] as? Int == 25)
        }
    }

    /// Was: curl took `etc` from the path as the host and looked it up, retried (exit 69 after 4 s
    /// in a playlist, 8 s on the command line).
    @Test func emptyHostURL_onTheCommandLine_usageError() throws {
        let started = Date()
        let run = try runHlsplay(["http:///etc/passwd", "--headless", "--json"], timeoutSeconds: 30)
        #expect(run.status == 64, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("no host"))
        #expect(run.logLines.isEmpty, "refused before a session started")
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func emptyHostURL_inAPlaylist_playlistErrorAtOnce() throws {
        let started = Date()
        let run = try play("empty-host/prog.m3u8", [], timeoutSeconds: 60)
        #expect(run.status == 65, "stderr: \(run.stderr)")
        #expect(Date().timeIntervalSince(started) < 5)
        expectValidLog(run)
        #expect(run.events("request.retry").isEmpty)
        let segmentEnds = run.events("request.end").filter { $0["purpose"] as? String == "segment" }
        #expect(segmentEnds.count == 1 && segmentEnds.first?["errorKind"] as? String == "invalidURL")
        #expect(run.events("error").first { $0["fatal"] as? Bool == true }?["category"] as? String == "playlist")
        #expect(run.stderr.contains("http:///etc/passwd") && run.stderr.contains("without a host"))
    }
}

// MARK: - The media bombs as hostile-corpus cases

/// One `case.json` that make-media.sh writes beside a media bomb, in the hostile corpus's format
/// (the keys a bomb uses; an unknown key fails the case, so a typo cannot drop a check).
struct BombCase {
    var play: String
    var args: [String]
    var exit: [Int32]
    var summaryError: [String]
    var maxRSSMiB: Double
    var maxSeconds: Double

    init(contentsOf url: URL) throws {
        guard let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] else {
            throw TestSetupError("\(url.path) is not a JSON object")
        }
        let known: Set = ["about", "play", "args", "exit", "summaryError", "maxRSSMiB", "maxSeconds"]
        let unknown = Set(object.keys).subtracting(known)
        guard unknown.isEmpty else { throw TestSetupError("\(url.path): unknown keys \(unknown.sorted())") }
        guard object["about"] is String, let play = object["play"] as? String, let exit = object["exit"] as? [Int], !exit.isEmpty else {
            throw TestSetupError("\(url.path) needs about, play and exit")
        }
        self.play = play
        args = object["args"] as? [String] ?? []
        self.exit = exit.map { Int32($0) }
        summaryError = object["summaryError"] as? [String] ?? []
        maxRSSMiB = (object["maxRSSMiB"] as? NSNumber)?.doubleValue ?? 200
        maxSeconds = (object["maxSeconds"] as? NSNumber)?.doubleValue ?? 120
    }
}

extension HostileLimitsTests {
    /// The folders make-media.sh gives a case.json.
    static let bombCases = ["sps-bomb", "sps-bomb-cropped", "sps-bomb-midstream", "declared-too-large", "big-segments"]

    /// The binary the bombs are played with: `HOSTILE_HLSPLAY` when set (an older build, to see them
    /// fail), else the release build when it is newer than every file in Sources/, else the debug one.
    static func bombBinary() throws -> URL {
        if let given = ProcessInfo.processInfo.environment["HOSTILE_HLSPLAY"] { return URL(fileURLWithPath: given) }
        let release = Repo.root.appendingPathComponent(".build/release/hlsplay")
        func modified(_ url: URL) -> Date? { try? url.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate }
        if let built = modified(release) {
            let sources = FileManager.default.enumerator(
                at: Repo.root.appendingPathComponent("Sources"),
                includingPropertiesForKeys: [.contentModificationDateKey])
            let newest = (sources?.allObjects as? [URL] ?? []).compactMap(modified).max() ?? .distantFuture
            if built > newest { return release }
        }
        return Repo.hlsplay
    }

    /// Each bomb as the hostile corpus plays a case — served on loopback, with `--decode-threads` 1
    /// (the default) and 0 (FFmpeg's choice, frame threads): it ends with an exit status its
    /// case.json documents, not a signal, within its time; the log is valid, the summary last, its
    /// error naming what the case says; the peak RSS is under the case's bound. (No
    /// `--no-progress-timeout`, which the corpus adds: builds from before it would refuse the flag.)
    @Test(arguments: bombCases, [1, 0])
    func mediaBombs_asCorpusCases(name: String, decodeThreads: Int) throws {
        let root = try Self.root()
        let folders = try FileManager.default.contentsOfDirectory(atPath: root.path)
            .filter { FileManager.default.fileExists(atPath: root.appendingPathComponent("\($0)/case.json").path) }
        #expect(Set(folders) == Set(Self.bombCases), "every case.json is played here")
        let bomb = try BombCase(contentsOf: root.appendingPathComponent("\(name)/case.json"))
        let binary = try Self.bombBinary()
        let started = Date()
        let run = try withOrigin(root.appendingPathComponent(name)) { base in
            try runHlsplay(
                [base.appendingPathComponent(bomb.play).absoluteString, "--headless", "--json"]
                    + bomb.args + ["--decode-threads", String(decodeThreads)],
                timeoutSeconds: bomb.maxSeconds, executable: binary)
        }
        let seconds = Date().timeIntervalSince(started)
        print(
            "\(name) --decode-threads \(decodeThreads): exit \(run.status), peak RSS \(Int(peakMiB(run))) MiB, "
                + "\(String(format: "%.2f", seconds)) s (\(binary.path))")
        #expect(run.terminationSignal == nil, "ended by signal \(run.status)")
        #expect(bomb.exit.contains(run.status), "exit \(run.status), documented \(bomb.exit); stderr: \(run.stderr.suffix(600))")
        expectValidLog(run)
        let error = run.summary?["error"] as? String ?? ""
        for part in bomb.summaryError { #expect(error.contains(part), "summary error: \(error)") }
        #expect(run.peakRSSBytes != nil)
        #expect(peakMiB(run) < bomb.maxRSSMiB, "peak RSS \(peakMiB(run)) MiB, bound \(bomb.maxRSSMiB) MiB")
    }
}
