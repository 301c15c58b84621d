import Foundation
import HLSOrigin
import Testing
import TestSupport

/// Content as real packagers write it, made with the ffmpeg CLI at test time: audio-only streams
/// (packed audio, audio-only MPEG-TS, an audio-only variant in a ladder), segments that begin
/// mid-GOP, and I-frame-only playlists. Each session of the real binary on a real hls-origin is
/// held to ffmpeg's decoded-frame count on the same URL (within one segment's frames), to
/// `--duration`, to exit 0 and to a bounded wall time.
@Suite(.serialized, .tags(.realTime)) struct PackagerContentTests {
    /// Generous: a session of a few seconds of media ends well within this much more wall time.
    static let wallMarginSeconds = 30.0

    struct Played {
        var full: Run
        var limited: Run
        var reference: FrameCounts
    }

    /// Plays `playlist` under `root` to the end and again for `--duration`, and checks the class
    /// invariants: it starts on a frame of `startsOn` kind, decodes what ffmpeg decodes from the same URL
    /// (within `tolerance` frames: one segment's), no decode errors where ffmpeg has none, honours
    /// `--duration`, exits 0, and ends within a bounded wall time.
    @discardableResult
    func expectPlaysLikeFFmpeg(
        _ root: URL, _ playlist: String, mediaSeconds: Double, startsOn kind: String,
        tolerance: FrameCounts, referenceOptions: [String] = [], extra: [String] = [],
        durationSeconds: Double = 3, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Played {
        try withOrigin(root) { base in
            let url = base.appendingPathComponent(playlist)
            let reference = try FFmpegCLI.frameCounts(of: url, inputOptions: referenceOptions)
            var started = Date()
            let full = try runHlsplay([url.absoluteString, "--headless", "--json"] + extra, timeoutSeconds: mediaSeconds + Self.wallMarginSeconds)
            let fullWall = Date().timeIntervalSince(started)
            started = Date()
            let limited = try runHlsplay(
                [url.absoluteString, "--headless", "--json", "--duration", String(durationSeconds)] + extra,
                timeoutSeconds: durationSeconds + Self.wallMarginSeconds)
            let limitedWall = Date().timeIntervalSince(started)

            expectValidLog(full, sourceLocation: sourceLocation)
            #expect(full.status == 0, "stderr: \(full.stderr)", sourceLocation: sourceLocation)
            #expect(full.summary?["exitReason"] as? String == "completed", "\(full.summary?["error"] ?? "")", sourceLocation: sourceLocation)
            #expect(fullWall < mediaSeconds + Self.wallMarginSeconds, sourceLocation: sourceLocation)
            let first = full.events("frame.first").first
            #expect(
                first?["kind"] as? String == kind, "the session starts on its first decoded \(kind) frame: \(first ?? [:])",
                sourceLocation: sourceLocation)
            #expect(full.number("timeToFirstFrameSeconds") != nil, sourceLocation: sourceLocation)
            if reference.audio > 0 {
                #expect(full.number("timeToFirstAudioSeconds") != nil, "time to first audio reported", sourceLocation: sourceLocation)
            }
            if reference.video > 0 {
                #expect(full.number("timeToFirstVideoSeconds") != nil, "time to first video reported", sourceLocation: sourceLocation)
            }
            let video = full.summary?["decodedVideoFrames"] as? Int ?? -1
            let audio = full.summary?["decodedAudioFrames"] as? Int ?? -1
            #expect(
                abs(video - reference.video) <= tolerance.video,
                "video frames \(video), ffmpeg \(reference.video) (±\(tolerance.video))", sourceLocation: sourceLocation)
            #expect(
                abs(audio - reference.audio) <= tolerance.audio,
                "audio frames \(audio), ffmpeg \(reference.audio) (±\(tolerance.audio))", sourceLocation: sourceLocation)
            if reference.decodeErrors == 0 {
                #expect(full.summary?["decodeErrors"] as? Int == 0, "ffmpeg decodes it without an error", sourceLocation: sourceLocation)
            }
            #expect(
                abs((full.number("playedSeconds") ?? 0) - mediaSeconds) < 0.5,
                "played \(full.number("playedSeconds") ?? 0) s of \(mediaSeconds) s", sourceLocation: sourceLocation)

            expectValidLog(limited, sourceLocation: sourceLocation)
            #expect(limited.status == 0, "stderr: \(limited.stderr)", sourceLocation: sourceLocation)
            #expect(limited.summary?["exitReason"] as? String == "durationReached", sourceLocation: sourceLocation)
            let played = limited.number("playedSeconds") ?? 0
            #expect(
                played >= durationSeconds && played < durationSeconds + 1, "--duration \(durationSeconds): played \(played) s",
                sourceLocation: sourceLocation)
            #expect(limitedWall < durationSeconds + Self.wallMarginSeconds, sourceLocation: sourceLocation)
            return Played(full: full, limited: limited, reference: reference)
        }
    }

    // MARK: - Audio-only streams

    /// A packed-audio stream (raw elementary stream files, no container) cut by FFmpeg's segment muxer.
    func packedAudio(
        _ name: String, codec: String, format: String, ext: String, options: [String] = [],
        sampleRate: Int = 48_000
    ) throws -> MediaDir {
        let dir = try MediaDir(name)
        try FFmpegCLI.run(
            FFmpegCLI.tone(seconds: 5.9, sampleRate: sampleRate) + [
                "-map", "0:a", "-c:a", codec, "-b:a", "96k", "-f", "segment", "-segment_time", "2",
                "-segment_format", format
            ] + options
                + ["-segment_list", "prog.m3u8", "-segment_list_type", "m3u8", "seg_%03d.\(ext)"], in: dir.url)
        return dir
    }

    /// AAC frames of 1024 samples at 48 kHz in a 2 s segment.
    static let aacFramesPerSegment = 94

    @Test func audioOnly_packedADTS_startsOnAudio_playsEveryFrame_honoursDuration() throws {
        // 44.1 kHz, resampled to 48 kHz: the resampler's flushed tail is no decoded frame.
        let dir = try packedAudio("packed-aac", codec: "aac", format: "adts", ext: "aac", sampleRate: 44_100)
        let played = try expectPlaysLikeFFmpeg(
            dir.url, "prog.m3u8", mediaSeconds: 5.9, startsOn: "audio",
            tolerance: FrameCounts(video: 0, audio: Self.aacFramesPerSegment))
        #expect(played.full.summary?["decodedAudioFrames"] as? Int == played.reference.audio, "every frame, as ffmpeg")
        #expect(played.full.summary?["decodedVideoFrames"] as? Int == 0)
        // Demux only: the first demuxed audio packet starts an audio-only session too.
        let demuxOnly = try withOrigin(dir.url) { base in
            try runHlsplay([base.appendingPathComponent("prog.m3u8").absoluteString, "--headless", "--json", "--no-decode"], timeoutSeconds: 40)
        }
        #expect(demuxOnly.status == 0, "stderr: \(demuxOnly.stderr)")
        #expect(demuxOnly.summary?["exitReason"] as? String == "completed")
        #expect(demuxOnly.events("frame.first").first?["kind"] as? String == "audio")
    }

    @Test func audioOnly_packedMP3_startsOnAudio_playsEveryFrame() throws {
        // No Xing/Info frame and no ID3 tag per segment: packed MP3 as HLS packagers write it.
        let dir = try packedAudio(
            "packed-mp3", codec: "libmp3lame", format: "mp3", ext: "mp3",
            options: ["-segment_format_options", "write_xing=0:id3v2_version=0"], sampleRate: 44_100)
        let played = try expectPlaysLikeFFmpeg(
            dir.url, "prog.m3u8", mediaSeconds: 5.9, startsOn: "audio", tolerance: FrameCounts(video: 0, audio: 84))
        #expect(played.full.summary?["decodedAudioFrames"] as? Int == played.reference.audio, "every frame, as ffmpeg")
    }

    @Test func audioOnly_packedAC3_startsOnAudio_playsEveryFrame() throws {
        let dir = try packedAudio("packed-ac3", codec: "ac3", format: "ac3", ext: "ac3")
        try expectPlaysLikeFFmpeg(dir.url, "prog.m3u8", mediaSeconds: 5.9, startsOn: "audio", tolerance: FrameCounts(video: 0, audio: 63))
    }

    /// Packed E-AC-3: the container is found from the bytes, not the name. FFmpeg's HLS demuxer refuses
    /// `.ec3` (its reference needs `-extension_picky 0`) and the player once took `.eac3` for MPEG-TS.
    @Test func audioOnly_packedEAC3_anyExtension_startsOnAudio_playsEveryFrame() throws {
        let dir = try packedAudio("packed-eac3", codec: "eac3", format: "eac3", ext: "ec3")
        let listed = try String(contentsOf: dir.path("prog.m3u8"), encoding: .utf8)
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.url.path) where name.hasSuffix(".ec3") {
            try FileManager.default.linkItem(at: dir.path(name), to: dir.path(name.replacingOccurrences(of: ".ec3", with: ".eac3")))
        }
        try dir.write(listed.replacingOccurrences(of: ".ec3", with: ".eac3"), to: "eac3.m3u8")
        try expectPlaysLikeFFmpeg(
            dir.url, "prog.m3u8", mediaSeconds: 5.9, startsOn: "audio", tolerance: FrameCounts(video: 0, audio: 63),
            referenceOptions: ["-extension_picky", "0"])
        try expectPlaysLikeFFmpeg(dir.url, "eac3.m3u8", mediaSeconds: 5.9, startsOn: "audio", tolerance: FrameCounts(video: 0, audio: 63))
    }

    /// Audio-only MPEG-TS from FFmpeg's HLS muxer.
    func audioOnlyTS(_ name: String, codec: String) throws -> MediaDir {
        let dir = try MediaDir(name)
        try FFmpegCLI.run(
            FFmpegCLI.tone(seconds: 5.9) + [
                "-c:a", codec, "-b:a", "96k", "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod",
                "-hls_segment_filename", "seg_%03d.ts", "prog.m3u8"
            ], in: dir.url)
        return dir
    }

    @Test func audioOnly_mp3InTS_startsOnAudio_playsEveryFrame() throws {
        let dir = try audioOnlyTS("ts-mp3", codec: "libmp3lame")
        try expectPlaysLikeFFmpeg(dir.url, "prog.m3u8", mediaSeconds: 5.9, startsOn: "audio", tolerance: FrameCounts(video: 0, audio: 84))
    }

    @Test func audioOnly_aacOnlyTS_startsOnAudio_playsEveryFrame() throws {
        let dir = try audioOnlyTS("ts-aac", codec: "aac")
        try expectPlaysLikeFFmpeg(
            dir.url, "prog.m3u8", mediaSeconds: 5.9, startsOn: "audio",
            tolerance: FrameCounts(video: 0, audio: Self.aacFramesPerSegment))
    }

    // MARK: - An audio-only variant in a ladder

    /// A two-rung ladder: 320x180 H.264 + AAC, and the same AAC alone (a cellular-fallback variant:
    /// CODECS mp4a only, no RESOLUTION), both in 2 s MPEG-TS segments from the same sources.
    func mixedLadder(seconds: Double) throws -> MediaDir {
        let dir = try MediaDir("mixed-ladder")
        let video = try dir.folder("video"), audio = try dir.folder("audio")
        try FFmpegCLI.run(
            FFmpegCLI.testVideo(seconds: seconds) + FFmpegCLI.tone(seconds: seconds)
                + [
                    "-c:v", "libx264", "-preset", "veryfast", "-b:v", "500k", "-g", "60", "-keyint_min", "60", "-sc_threshold", "0",
                    "-c:a", "aac", "-b:a", "64k", "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod",
                    "-hls_segment_filename", "seg_%03d.ts", "prog.m3u8"
                ], in: video)
        try FFmpegCLI.run(
            FFmpegCLI.tone(seconds: seconds)
                + [
                    "-c:a", "aac", "-b:a", "64k", "-f", "hls", "-hls_time", "2", "-hls_playlist_type", "vod",
                    "-hls_segment_filename", "seg_%03d.ts", "prog.m3u8"
                ], in: audio)
        try dir.write(
            """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-INDEPENDENT-SEGMENTS
            #EXT-X-STREAM-INF:BANDWIDTH=80000,CODECS="mp4a.40.2"
            audio/prog.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=700000,RESOLUTION=320x180,CODECS="avc1.64000d,mp4a.40.2"
            video/prog.m3u8

            """, to: "master.m3u8")
        return dir
    }

    /// Under a peak-bitrate cap below every video rung the session starts on the audio-only variant,
    /// on its first audio frame, and plays it like any other.
    @Test func audioOnlyVariant_capBelowVideo_startsOnIt() throws {
        let dir = try mixedLadder(seconds: 6)
        let played = try expectPlaysLikeFFmpeg(
            dir.url, "audio/prog.m3u8", mediaSeconds: 6, startsOn: "audio",
            tolerance: FrameCounts(video: 0, audio: Self.aacFramesPerSegment))
        _ = played
        let run = try withOrigin(dir.url) { base in
            try runHlsplay(
                [base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--peak-bitrate", "100k"],
                timeoutSeconds: 6 + Self.wallMarginSeconds)
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(run.summary?["exitReason"] as? String == "completed")
        let first = run.events("abr.decision").first
        #expect((first?["decision"] as? [String: Any])?["variantIndex"] as? Int == 0, "the audio-only variant: \(first ?? [:])")
        #expect(run.events("frame.first").first?["kind"] as? String == "audio")
        #expect(run.summary?["decodedVideoFrames"] as? Int == 0)
        #expect(abs((run.summary?["decodedAudioFrames"] as? Int ?? 0) - played.reference.audio) <= Self.aacFramesPerSegment)
        #expect(run.number("timeToFirstVideoSeconds") == nil)
        #expect(run.number("timeToFirstAudioSeconds") != nil)
    }

    /// On a link that collapses to well below the video rung and comes back, the session falls back
    /// to the audio-only variant and returns to video: both switches are logged, audio plays throughout.
    @Test func audioOnlyVariant_linkDropsAndRecovers_switchesToItAndBack() throws {
        let seconds = 40.0
        let dir = try mixedLadder(seconds: seconds)
        var config = OriginConfiguration()
        config.trace = try ThroughputTrace(
            name: "fast-slow-fast",
            pieces: [
                .init(durationSeconds: 6, rateBitsPerSecond: 20e6),
                .init(durationSeconds: 16, rateBitsPerSecond: 150e3),
                .init(durationSeconds: 60, rateBitsPerSecond: 20e6)
            ])
        let run = try withOrigin(dir.url, configuration: config) { server in
            try runHlsplay(
                [
                    server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
                    "--forward-buffer", "8", "--cold"
                ], timeoutSeconds: seconds + 60)
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(run.summary?["exitReason"] as? String == "completed")
        #expect(run.events("frame.first").first?["kind"] as? String == "video")
        let switches = run.events("abr.switch").map { ($0["fromVariantIndex"] as? Int ?? -1, $0["toVariantIndex"] as? Int ?? -1) }
        #expect(switches.contains { $0 == (1, 0) }, "to the audio-only variant: \(switches)")
        #expect(switches.contains { $0 == (0, 1) }, "and back to video: \(switches)")
        // Over-selection on the collapsed link caps below the video rung, or the estimate falls below it.
        let reasons = Set(run.events("abr.decision").compactMap { ($0["decision"] as? [String: Any])?["reason"] as? String })
        #expect(!reasons.isDisjoint(with: ["audioOnlyFallback", "audioOnlyUnderCap"]), "\(reasons)")
        // Back on video, a new video decoder starts at a keyframe.
        let back = run.events("decoder.open").filter { $0["kind"] as? String == "video" && $0["reason"] as? String == "variant-switch" }
        #expect(back.count >= 1 && back.allSatisfy { $0["startsAtKeyframe"] as? Bool == true }, "\(back)")
        // Audio plays throughout, whichever variant carries it.
        #expect(abs((run.summary?["decodedAudioFrames"] as? Int ?? 0) - Int(seconds * 48_000 / 1024)) <= 2 * Self.aacFramesPerSegment)
        #expect(run.summary?["decodeErrors"] as? Int == 0)
    }

    // MARK: - Segments that begin mid-GOP

    /// H.264 with a 6 s GOP at 30 fps cut every 2 s by time (no EXT-X-INDEPENDENT-SEGMENTS), plus AAC.
    func midGOP(_ name: String, segmentType: String, ext: String) throws -> MediaDir {
        let dir = try MediaDir(name)
        try FFmpegCLI.run(
            FFmpegCLI.testVideo(seconds: 12) + FFmpegCLI.tone(seconds: 12)
                + [
                    "-c:v", "libx264", "-preset", "veryfast", "-g", "180", "-keyint_min", "180", "-sc_threshold", "0",
                    "-c:a", "aac", "-b:a", "64k", "-f", "hls", "-hls_time", "2", "-hls_flags", "split_by_time",
                    "-hls_segment_type", segmentType, "-hls_playlist_type", "vod",
                    "-hls_segment_filename", "seg_%03d.\(ext)", "prog.m3u8"
                ], in: dir.url)
        let playlist = try String(contentsOf: dir.path("prog.m3u8"), encoding: .utf8)
        try #require(!playlist.contains("INDEPENDENT-SEGMENTS"))
        return dir
    }

    /// Within one variant and discontinuity sequence the decoder and its parameters carry over
    /// segment boundaries: every frame decodes, and one decoder per track is opened.
    func expectDecoderCarriesOver(_ dir: MediaDir) throws {
        let played = try expectPlaysLikeFFmpeg(
            dir.url, "prog.m3u8", mediaSeconds: 12, startsOn: "video",
            tolerance: FrameCounts(video: 60, audio: Self.aacFramesPerSegment))
        #expect(played.full.summary?["decodedVideoFrames"] as? Int == played.reference.video, "every frame, as ffmpeg")
        let opened = played.full.events("decoder.open")
        #expect(opened.filter { $0["kind"] as? String == "video" }.count == 1, "one video decoder: \(opened)")
        #expect(opened.filter { $0["kind"] as? String == "audio" }.count == 1, "one audio decoder: \(opened)")
    }

    @Test func midGOP_mpegTS_everyFrameDecoded_oneDecoder() throws {
        try expectDecoderCarriesOver(try midGOP("midgop-ts", segmentType: "mpegts", ext: "ts"))
    }

    @Test func midGOP_fragmentedMP4_everyFrameDecoded_oneDecoder() throws {
        try expectDecoderCarriesOver(try midGOP("midgop-fmp4", segmentType: "fmp4", ext: "m4s"))
    }

    /// A switch to a variant whose segments begin mid-GOP opens its decoder at the next independent
    /// frame: the packets before it are skipped (and logged), none is fed to fail in the decoder.
    @Test func midGOP_variantSwitch_newDecoderStartsAtKeyframe_noDecodeErrors() throws {
        let dir = try MediaDir("midgop-ladder")
        for (rung, size) in ["320x180", "480x270"].enumerated() {
            let folder = try dir.folder("v\(rung)")
            try FFmpegCLI.run(
                FFmpegCLI.testVideo(seconds: 12, size: size) + FFmpegCLI.tone(seconds: 12)
                    + [
                        "-c:v", "libx264", "-preset", "veryfast", "-g", "180", "-keyint_min", "180", "-sc_threshold", "0",
                        "-c:a", "aac", "-b:a", "64k", "-f", "hls", "-hls_time", "2", "-hls_flags", "split_by_time",
                        "-hls_playlist_type", "vod", "-hls_segment_filename", "seg_%03d.ts", "prog.m3u8"
                    ], in: folder)
        }
        try dir.write(
            """
            #EXTM3U
            #EXT-X-VERSION:3
            #EXT-X-STREAM-INF:BANDWIDTH=400000,RESOLUTION=320x180,CODECS="avc1.64000d,mp4a.40.2"
            v0/prog.m3u8
            #EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=480x270,CODECS="avc1.640015,mp4a.40.2"
            v1/prog.m3u8

            """, to: "master.m3u8")
        // No startup cap: the first choice fits the default estimate (rung 0), the measured loopback rate then lifts it to rung 1.
        let run = try withOrigin(dir.url) { base in
            try runHlsplay(
                [base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--startup-cap", "off"],
                timeoutSeconds: 12 + Self.wallMarginSeconds)
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(run.summary?["exitReason"] as? String == "completed")
        #expect(run.summary?["decodeErrors"] as? Int == 0)
        let switches = run.events("abr.switch")
        try #require(switches.count >= 1, "the session switched variants")
        let videoDecoders = run.events("decoder.open").filter { $0["kind"] as? String == "video" }
        let atSwitch = try #require(videoDecoders.first { $0["reason"] as? String == "variant-switch" })
        #expect(atSwitch["startsAtKeyframe"] as? Bool == true)
        let switchedAt = switches[0]["atPositionSeconds"] as? Double ?? -1
        if Int(switchedAt.rounded()) % 6 != 0 {
            // The switch landed inside a GOP: the frames up to the next keyframe were skipped.
            #expect((atSwitch["skippedPackets"] as? Int ?? 0) > 0, "\(atSwitch)")
        }
        #expect((run.summary?["decodedVideoFrames"] as? Int ?? 0) >= 180, "the keyframe at 6 s and everything after it decoded")
    }

    // MARK: - I-frame-only playlists

    /// An I-frame playlist as Apple's packagers write one: EXT-X-I-FRAMES-ONLY, one BYTERANGE per
    /// keyframe of `file`, each lasting until the next keyframe; `map` is the EXT-X-MAP line, if any.
    func iFramePlaylist(_ dir: MediaDir, file: String, ranges: [(offset: Int, length: Int, seconds: Double)], map: String?) throws {
        var text = "#EXTM3U\n#EXT-X-VERSION:\(map == nil ? 4 : 5)\n#EXT-X-TARGETDURATION:1\n#EXT-X-PLAYLIST-TYPE:VOD\n#EXT-X-I-FRAMES-ONLY\n"
        if let map { text += map + "\n" }
        for r in ranges {
            text += String(format: "#EXTINF:%.6f,\n", r.seconds) + "#EXT-X-BYTERANGE:\(r.length)@\(r.offset)\n\(file)\n"
        }
        try dir.write(text + "#EXT-X-ENDLIST\n", to: "iframes.m3u8")
    }

    /// An I-frame-only playlist is played as trick-play content: each I-frame is decoded and shown for its
    /// EXTINF, the log and summary say `iFramesOnly`, and no frame is late.
    func expectIFramesPlayed(_ dir: MediaDir, iFrames: Int, mediaSeconds: Double) throws {
        let run = try withOrigin(dir.url) { base in
            try runHlsplay(
                [base.appendingPathComponent("iframes.m3u8").absoluteString, "--headless", "--json"],
                timeoutSeconds: mediaSeconds + Self.wallMarginSeconds)
        }
        expectValidLog(run)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.summary?["exitReason"] as? String == "completed", "\(run.summary?["error"] ?? "")")
        #expect(run.summary?["iFramesOnly"] as? Bool == true)
        #expect(run.events("playlist.loaded").first?["iFramesOnly"] as? Bool == true)
        #expect(run.summary?["decodedVideoFrames"] as? Int == iFrames, "one frame per I-frame segment")
        #expect(run.summary?["lateVideoFrames"] as? Int == 0)
        #expect(run.summary?["decodeErrors"] as? Int == 0)
        #expect(abs((run.number("playedSeconds") ?? 0) - mediaSeconds) < 0.5)
        let limited = try withOrigin(dir.url) { base in
            try runHlsplay(
                [base.appendingPathComponent("iframes.m3u8").absoluteString, "--headless", "--json", "--duration", "1.5"],
                timeoutSeconds: 2 + Self.wallMarginSeconds)
        }
        #expect(limited.status == 0, "stderr: \(limited.stderr)")
        #expect(limited.summary?["exitReason"] as? String == "durationReached")
    }

    /// MPEG-TS, no EXT-X-MAP: the first I-frame follows the PAT/PMT at the start of the file, which are
    /// its Media Initialization Section (RFC 8216bis §4.4.4.5).
    @Test func iFrameOnly_mpegTS_byteRanges_everyIFrameShown() throws {
        let dir = try MediaDir("iframes-ts")
        try FFmpegCLI.run(
            FFmpegCLI.testVideo(seconds: 6) + [
                "-c:v", "libx264", "-preset", "veryfast", "-g", "30", "-keyint_min", "30",
                "-sc_threshold", "0", "-f", "mpegts", "main.ts"
            ], in: dir.url)
        let packets = try FFmpegCLI.packets(of: dir.path("main.ts"))
        let size = try FileManager.default.attributesOfItem(atPath: dir.path("main.ts").path)[.size] as? Int ?? 0
        var ranges: [(offset: Int, length: Int, seconds: Double)] = []
        for (i, p) in packets.enumerated() where p.isKeyframe {
            let end = packets.dropFirst(i + 1).first?.position ?? size
            let nextKey = packets.dropFirst(i + 1).first { $0.isKeyframe }?.ptsSeconds ?? (packets.last!.ptsSeconds + 1.0 / 30)
            ranges.append((p.position, end - p.position, nextKey - p.ptsSeconds))
        }
        try #require(ranges.count == 6)
        try iFramePlaylist(dir, file: "main.ts", ranges: ranges, map: nil)
        try expectIFramesPlayed(dir, iFrames: 6, mediaSeconds: ranges.reduce(0) { $0 + $1.seconds })
    }

    /// Fragmented MP4 with one fragment per frame: each I-frame is its keyframe's moof + mdat, with EXT-X-MAP.
    /// Two I-frames only, fewer than the decoder's reorder delay (as in Shaka's I-frame sample): they must
    /// come out at the end of the stream, not stay inside the decoder.
    @Test func iFrameOnly_fragmentedMP4_twoIFrames_bothShown() throws {
        let dir = try MediaDir("iframes-fmp4")
        try FFmpegCLI.run(
            FFmpegCLI.testVideo(seconds: 2) + [
                "-c:v", "libx264", "-preset", "veryfast", "-g", "30", "-keyint_min", "30",
                "-sc_threshold", "0", "-movflags", "frag_every_frame+empty_moov+default_base_moof",
                "-f", "mp4", "main.mp4"
            ], in: dir.url)
        let bytes = try Data(contentsOf: dir.path("main.mp4"))
        // Top-level boxes: ftyp, moov, then moof + mdat per frame.
        var boxes: [(type: String, offset: Int, size: Int)] = []
        var offset = 0
        while offset + 8 <= bytes.count {
            let size = bytes[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            guard size >= 8 else { break }
            boxes.append((String(decoding: bytes[offset + 4..<offset + 8], as: UTF8.self), offset, size))
            offset += size
        }
        let initEnd = try #require(boxes.first { $0.type == "moof" }).offset
        let packets = try FFmpegCLI.packets(of: dir.path("main.mp4"))
        var ranges: [(offset: Int, length: Int, seconds: Double)] = []
        for (i, p) in packets.enumerated() where p.isKeyframe {
            // The moof before the mdat that holds this sample.
            let mdat = try #require(boxes.last { $0.type == "mdat" && $0.offset <= p.position })
            let moof = try #require(boxes.last { $0.type == "moof" && $0.offset < mdat.offset })
            let nextKey = packets.dropFirst(i + 1).first { $0.isKeyframe }?.ptsSeconds ?? (packets.last!.ptsSeconds + 1.0 / 30)
            ranges.append((moof.offset, mdat.offset + mdat.size - moof.offset, nextKey - p.ptsSeconds))
        }
        try #require(ranges.count == 2)
        try iFramePlaylist(dir, file: "main.mp4", ranges: ranges, map: "#EXT-X-MAP:URI=\"main.mp4\",BYTERANGE=\"\(initEnd)@0\"")
        try expectIFramesPlayed(dir, iFrames: 2, mediaSeconds: ranges.reduce(0) { $0 + $1.seconds })
    }

    // MARK: - Nothing playable

    /// A stream that ends without a playable frame says what happened, naming only events that are in
    /// its log, with their counts: here one video-only segment that begins mid-GOP and holds no keyframe.
    @Test func noPlayableFrame_messageNamesOnlyEventsInTheLog() throws {
        let dir = try MediaDir("no-keyframe")
        try FFmpegCLI.run(
            FFmpegCLI.testVideo(seconds: 6) + [
                "-c:v", "libx264", "-preset", "veryfast", "-g", "180", "-keyint_min", "180",
                "-sc_threshold", "0", "-f", "hls", "-hls_time", "2", "-hls_flags", "split_by_time",
                "-hls_playlist_type", "vod", "-hls_segment_filename", "seg_%03d.ts", "all.m3u8"
            ], in: dir.url)
        try dir.write("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\nseg_001.ts\n#EXT-X-ENDLIST\n", to: "prog.m3u8")
        let started = Date()
        let run = try withOrigin(dir.url) { base in
            try runHlsplay([base.appendingPathComponent("prog.m3u8").absoluteString, "--headless", "--json"], timeoutSeconds: Self.wallMarginSeconds)
        }
        #expect(Date().timeIntervalSince(started) < Self.wallMarginSeconds)
        expectValidLog(run)
        #expect(run.status == 65, "stderr: \(run.stderr)")
        let message = run.summary?["error"] as? String ?? ""
        #expect(message.contains("without a playable frame"))
        #expect(run.events("segment.buffered").count == 1)
        #expect(message.contains("1 segment demuxed (segment.buffered) gave 0 video and 0 audio frames"), "\(message)")
        #expect(message.contains("skipped waiting for an independent frame"), "\(message)")
        #expect(run.events("segment.skipped").isEmpty)
        #expect(!message.contains("segment.skipped"), "no such event in this log: \(message)")
    }
}
