// `hlsplay check URL` through the real binary against a real hls-origin on loopback: the sample
// ladder passes clean, a playlist that lies is caught on each lie, third-party streams are
// probed, and a variant that is not there is a finding (exit 69), not a crash.

import Foundation
import HLSOrigin
import Testing
import TestSupport

@Suite(.serialized) struct CheckURLTests {
    struct Checked {
        var status: Int32
        var stdout: String
        var stderr: String
        var report: [String: Any]
        var playlists: [[String: Any]] { report["playlists"] as? [[String: Any]] ?? [] }
        func rules(_ playlist: Int, _ severity: String? = nil) -> [String] {
            let findings = playlists.indices.contains(playlist) ? playlists[playlist]["findings"] as? [[String: Any]] ?? [] : []
            return findings.filter { severity == nil || $0["severity"] as? String == severity }.compactMap { $0["rule"] as? String }
        }
        var allFindings: [[String: Any]] {
            (report["findings"] as? [[String: Any]] ?? []) + playlists.flatMap { $0["findings"] as? [[String: Any]] ?? [] }
        }
    }

    func check(_ url: URL, _ extra: [String] = []) throws -> Checked {
        let result = try runProcess(Repo.hlsplay, ["check", "--json"] + extra + [url.absoluteString], timeoutSeconds: 120)
        let line = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        let report = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        return Checked(status: result.status, stdout: result.stdout, stderr: result.stderr, report: report)
    }

    func tempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-check-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func sampleLadder_passesClean_everyVariantProbed() throws {
        let ladder = try Repo.requireSamples("ladder-2s")
        try withOrigin(ladder) { base in
            let c = try check(base.appendingPathComponent("master.m3u8"))
            #expect(c.status == 0, "stdout: \(c.stdout) stderr: \(c.stderr)")
            #expect(c.report["kind"] as? String == "multivariant")
            #expect(c.report["errors"] as? Int == 0)
            #expect(c.report["warnings"] as? Int == 0)
            #expect(c.playlists.count == 4)
            for p in c.playlists {
                let first = p["firstSegment"] as? [String: Any] ?? [:]
                #expect(first["probed"] as? Bool == true)
                let codecs = (first["streams"] as? [[String: Any]] ?? []).compactMap { $0["codec"] as? String }
                #expect(codecs.sorted() == ["aac", "h264"])
                #expect((first["bitrateBps"] as? Double ?? 0) > 0)
                #expect(p["targetDurationSeconds"] as? Double == 2)
            }
            // The human form: one block per variant, the streams found, "OK".
            let human = try runProcess(Repo.hlsplay, ["check", base.appendingPathComponent("master.m3u8").absoluteString])
            #expect(human.status == 0)
            #expect(human.stdout.contains("OK multivariant playlist, 0 errors, 0 warnings"))
            #expect(human.stdout.contains("variant 3: "))
            #expect(human.stdout.contains("video h264 1920x1080"))
        }
    }

    @Test func lyingPlaylist_eachLieIsAFinding_exit65() throws {
        let ladder = try Repo.requireSamples("ladder-2s")
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        for v in ["v0", "v1", "v2"] {
            try FileManager.default.createSymbolicLink(at: dir.appendingPathComponent(v), withDestinationURL: ladder.appendingPathComponent(v))
        }
        // v2's segments under a playlist whose first EXTINF is 3.5 s against a 2 s target.
        let long = dir.appendingPathComponent("long")
        try FileManager.default.createDirectory(at: long, withIntermediateDirectories: true)
        try """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-TARGETDURATION:2
        #EXT-X-PLAYLIST-TYPE:VOD
        #EXTINF:3.5,
        ../v2/seg_00000.ts
        #EXTINF:2.0,
        ../v2/seg_00001.ts
        #EXT-X-ENDLIST

        """.write(to: long.appendingPathComponent("prog.m3u8"), atomically: true, encoding: .utf8)
        try """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-STREAM-INF:BANDWIDTH=60000,RESOLUTION=416x234,CODECS="avc1.64000d,mp4a.40.2"
        v0/prog.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=1307728,RESOLUTION=640x360,CODECS="hvc1.1.6.L93.B0,mp4a.40.2"
        v1/prog.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=3716384,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2"
        long/prog.m3u8

        """.write(to: dir.appendingPathComponent("master.m3u8"), atomically: true, encoding: .utf8)
        try withOrigin(dir) { base in
            let c = try check(base.appendingPathComponent("master.m3u8"))
            #expect(c.status == 65, "stdout: \(c.stdout) stderr: \(c.stderr)")
            #expect(c.playlists.count == 3)
            // BANDWIDTH far below the real rate.
            #expect(c.rules(0, "error") == ["peak-bitrate"])
            // CODECS naming the wrong video codec: what was found is not listed, what is listed was not found.
            #expect(c.rules(1, "error").sorted() == ["codecs-not-found", "codecs-undeclared"])
            // EXTINF above the target duration.
            #expect(c.rules(2, "error") == ["target-duration"])
            #expect(c.report["errors"] as? Int == 4)
            let peak = c.allFindings.first { $0["rule"] as? String == "peak-bitrate" }
            let reference: String = peak?["reference"] as? String ?? ""
            #expect(reference.contains("Apple HLS Authoring Specification"))
            let human = try runProcess(Repo.hlsplay, ["check", base.appendingPathComponent("master.m3u8").absoluteString])
            #expect(human.status == 65)
            for rule in ["peak-bitrate", "codecs-undeclared", "codecs-not-found", "target-duration"] {
                #expect(human.stdout.contains("error [\(rule)]"), "\(rule) missing from: \(human.stdout)")
            }
        }
    }

    @Test func missingVariant_isAFetchFinding_theOthersStillChecked_exit69() throws {
        let ladder = try Repo.requireSamples("ladder-2s")
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try FileManager.default.createSymbolicLink(at: dir.appendingPathComponent("v0"), withDestinationURL: ladder.appendingPathComponent("v0"))
        try """
        #EXTM3U
        #EXT-X-STREAM-INF:BANDWIDTH=621152,RESOLUTION=416x234,CODECS="avc1.64000d,mp4a.40.2"
        v0/prog.m3u8
        #EXT-X-STREAM-INF:BANDWIDTH=1307728,RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2"
        gone/prog.m3u8

        """.write(to: dir.appendingPathComponent("master.m3u8"), atomically: true, encoding: .utf8)
        try withOrigin(dir) { base in
            let c = try check(base.appendingPathComponent("master.m3u8"))
            #expect(c.status == 69, "stdout: \(c.stdout) stderr: \(c.stderr)")
            #expect(c.report["fetchFailed"] as? Bool == true)
            #expect(c.rules(0, "error").isEmpty)
            #expect((c.playlists.first?["firstSegment"] as? [String: Any])?["probed"] as? Bool == true)
            #expect(c.rules(1, "error") == ["fetch-failed"])
            let message = c.allFindings.first { $0["rule"] as? String == "fetch-failed" }?["message"] as? String ?? ""
            #expect(message.contains("HTTP 404"), "\(message)")
            // The whole playlist missing: one finding, exit 69, no crash.
            let gone = try check(base.appendingPathComponent("nothing.m3u8"))
            #expect(gone.status == 69)
            #expect(gone.report["accepted"] as? Bool == false)
            #expect((gone.report["findings"] as? [[String: Any]])?.first?["rule"] as? String == "fetch-failed")
        }
    }

    /// Not a playlist (an HTML error page served with 200), and a variant that is one: each rejected with line and rule.
    @Test func notAPlaylist_rejectedWithLineAndRule_exit65() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try "<html><body>Service unavailable</body></html>\n".write(to: dir.appendingPathComponent("page.m3u8"), atomically: true, encoding: .utf8)
        try "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=100000\npage.m3u8\n".write(
            to: dir.appendingPathComponent("master.m3u8"), atomically: true, encoding: .utf8)
        try withOrigin(dir) { base in
            let page = try check(base.appendingPathComponent("page.m3u8"))
            #expect(page.status == 65)
            #expect(page.report["accepted"] as? Bool == false)
            let finding = (page.report["findings"] as? [[String: Any]])?.first ?? [:]
            #expect(finding["rule"] as? String == "playlist-rejected")
            #expect((finding["message"] as? String)?.hasPrefix("line 1: ") == true, "\(finding)")
            #expect((finding["reference"] as? String)?.contains("RFC 8216") == true, "\(finding)")
            let master = try check(base.appendingPathComponent("master.m3u8"))
            #expect(master.status == 65)
            #expect(master.rules(0, "error").contains("playlist-rejected"))
        }
    }

    /// Shaka Player's test assets (Apache-2.0, ../shared/data/thirdparty/README.md).
    @Test func thirdParty_multivideoWithRenditions_probedClean() throws {
        let dir = try ThirdPartyStreamTests.folder().appendingPathComponent("shaka-multivideo")
        try withOrigin(dir) { base in
            let c = try check(base.appendingPathComponent("master.m3u8"))
            #expect(c.status == 0, "stdout: \(c.stdout) stderr: \(c.stderr)")
            // 2 variants + 3 audio renditions + 4 video renditions with a URI.
            #expect(c.playlists.count == 9)
            let roles = c.playlists.compactMap { $0["role"] as? String }
            #expect(roles.filter { $0 == "audio" }.count == 3)
            for p in c.playlists {
                #expect((p["firstSegment"] as? [String: Any])?["probed"] as? Bool == true, "\(p)")
            }
        }
    }

    /// An LCEVC stream: RESOLUTION declares the enhanced 1920x1080 picture, the H.264 base layer
    /// (all a non-LCEVC decoder sees, and what ffprobe reports) is 960x540: a true finding.
    /// Third-party streams a packager made right: clean, each with the codecs it holds.
    @Test(arguments: [
        ("shaka-ts-h265", "hevc.m3u8", ["hevc"]), ("shaka-packed-ec3", "prog_index.m3u8", ["eac3"]),
        ("shaka-wowza-packed-mp3", "playlist.m3u8", ["mp3"]), ("shaka-apple-packed-aac", "manifest.m3u8", ["aac"]),
        ("shaka-fmp4-muxed", "hls.m3u8", ["aac", "h264"])
    ])
    func thirdParty_clean(stream: String, entry: String, codecs: [String]) throws {
        let dir = try ThirdPartyStreamTests.folder().appendingPathComponent(stream)
        try withOrigin(dir) { base in
            let c = try check(base.appendingPathComponent(entry))
            #expect(c.status == 0, "stdout: \(c.stdout) stderr: \(c.stderr)")
            #expect(c.report["errors"] as? Int == 0)
            let found = c.playlists.flatMap { ($0["firstSegment"] as? [String: Any])?["streams"] as? [[String: Any]] ?? [] }
            #expect(Set(found.compactMap { $0["codec"] as? String }) == Set(codecs))
            #expect(c.stderr.isEmpty, "FFmpeg's own log stays off stderr: \(c.stderr)")
        }
    }

    /// Real packager output that breaks RFC 8216 §4.3.3.1: EXTINF 9.138 and 8.789 under TARGETDURATION 8.
    @Test func thirdParty_tsOpus_extinfAboveTargetDuration() throws {
        let dir = try ThirdPartyStreamTests.folder().appendingPathComponent("shaka-ts-opus")
        try withOrigin(dir) { base in
            let c = try check(base.appendingPathComponent("playlist.m3u8"))
            #expect(c.status == 65)
            #expect(c.rules(0, "error") == ["target-duration", "target-duration"])
            let codecs = ((c.playlists.first?["firstSegment"] as? [String: Any])?["streams"] as? [[String: Any]] ?? []).compactMap {
                $0["codec"] as? String
            }
            #expect(codecs.sorted() == ["h264", "opus"])
        }
    }

    /// A subtitle Media Playlist given as the URL: said to be WebVTT, not a failed demux.
    @Test func thirdParty_webVTTPlaylist_notProbedAsSubtitles() throws {
        let dir = try ThirdPartyStreamTests.folder().appendingPathComponent("shaka-text-offset")
        try withOrigin(dir) { base in
            let c = try check(base.appendingPathComponent("playlist-vtt.m3u8"))
            #expect(c.rules(0, "error").isEmpty)
            #expect((c.playlists.first?["firstSegment"] as? [String: Any])?["notProbedReason"] as? String == "subtitles (WebVTT)")
        }
    }

    @Test func thirdParty_fmp4ByteRange_initSectionAndRangeFetched_lcevcBaseLayerBelowResolution() throws {
        let dir = try ThirdPartyStreamTests.folder().appendingPathComponent("shaka-packager-fmp4-byterange")
        try withOrigin(dir) { base in
            let c = try check(base.appendingPathComponent("master.m3u8"))
            #expect(c.status == 65, "stdout: \(c.stdout) stderr: \(c.stderr)")
            #expect(c.rules(0, "error") == ["resolution-mismatch"])
            #expect(c.rules(0, "warning").isEmpty)
            let p = try #require(c.playlists.first)
            let first = p["firstSegment"] as? [String: Any] ?? [:]
            #expect(first["initSectionBytes"] as? Int == 865)
            #expect(first["bytes"] as? Int == 3_319_698)
            let streams = first["streams"] as? [[String: Any]] ?? []
            #expect(streams.first?["codec"] as? String == "h264")
            #expect(streams.first?["width"] as? Int == 960)
            #expect(streams.first?["height"] as? Int == 540)
            let ranges = p["byteRanges"] as? [String: Any] ?? [:]
            #expect(ranges["segments"] as? Int == 1)
        }
    }

    /// AES-128 is decrypted and probed as playback does; SAMPLE-AES is said to be not probed, not an error.
    @Test func encryptedSegments_aes128Probed_sampleAESNotProbedClearly() throws {
        _ = try Repo.requireSamples("ladder-2s")
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try Data((0..<16).map { UInt8($0 * 7 + 3) }).write(to: dir.appendingPathComponent("k.key"))
        try "k.key\n\(dir.appendingPathComponent("k.key").path)\n".write(
            to: dir.appendingPathComponent("keyinfo"), atomically: true, encoding: .utf8)
        try FFmpegCLI.run(
            FFmpegCLI.testVideo(seconds: 4) + [
                "-c:v", "libx264", "-g", "30", "-hls_time", "2", "-hls_playlist_type", "vod", "-hls_key_info_file", "keyinfo",
                "-hls_segment_filename", "e%d.ts", "enc.m3u8"
            ], in: dir)
        let text = try String(contentsOf: dir.appendingPathComponent("enc.m3u8"), encoding: .utf8)
        #expect(text.contains("METHOD=AES-128"))
        try text.replacingOccurrences(of: "METHOD=AES-128", with: "METHOD=SAMPLE-AES").write(
            to: dir.appendingPathComponent("sample.m3u8"), atomically: true, encoding: .utf8)
        try withOrigin(dir) { base in
            let aes = try check(base.appendingPathComponent("enc.m3u8"))
            #expect(aes.status == 0, "stdout: \(aes.stdout) stderr: \(aes.stderr)")
            #expect(aes.report["kind"] as? String == "media")
            let first = aes.playlists.first?["firstSegment"] as? [String: Any] ?? [:]
            #expect(first["encryption"] as? String == "AES-128")
            #expect(first["probed"] as? Bool == true)
            #expect((first["streams"] as? [[String: Any]])?.first?["codec"] as? String == "h264")
            let sample = try check(base.appendingPathComponent("sample.m3u8"))
            #expect(sample.status == 0)
            let notProbed = sample.playlists.first?["firstSegment"] as? [String: Any] ?? [:]
            #expect(notProbed["probed"] as? Bool == false)
            let reason: String = notProbed["notProbedReason"] as? String ?? ""
            #expect(reason.hasPrefix("encrypted: METHOD=SAMPLE-AES"), "\(reason)")
            #expect(sample.rules(0, "info") == ["not-probed"])
        }
    }

    /// The request options of playback reach every request `check` makes, and no secret reaches its output.
    @Test func requestOptions_reachEveryRequest_secretsNotPrinted() throws {
        let ladder = try Repo.requireSamples("ladder-2s")
        let originLog = FileManager.default.temporaryDirectory.appendingPathComponent("origin-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: originLog) }
        var config = OriginConfiguration()
        config.requestLogURL = originLog
        let (c, human) = try withOrigin(ladder, configuration: config) { server in
            let url = server.baseURL.appendingPathComponent("master.m3u8")
            let options = [
                "--header", "X-Api-Key: APIKEY-SECRET-5150", "--cookie", "session=COOKIE-SECRET-7781", "--user-agent", "QA-Check/1.0",
                "--referer", "https://player.example/watch"
            ]
            let human = try runProcess(Repo.hlsplay, ["check"] + options + [url.absoluteString + "?token=TOKEN-SECRET-42"])
            return (try check(url, options), human)
        }
        #expect(c.status == 0, "stdout: \(c.stdout) stderr: \(c.stderr)")
        let requests = try String(contentsOf: originLog, encoding: .utf8).split(separator: "\n").compactMap {
            (try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["headers"] as? [String: String]
        }
        // Per run: the multivariant playlist, 4 media playlists, 4 first segments.
        #expect(requests.count == 18)
        for headers in requests {
            #expect(headers["x-api-key"] == "APIKEY-SECRET-5150")
            #expect(headers["cookie"] == "session")
            #expect(headers["user-agent"] == "QA-Check/1.0")
            #expect(headers["referer"] == "https://player.example/watch")
        }
        for output in [c.stdout, c.stderr, human.stdout, human.stderr] {
            for secret in ["APIKEY-SECRET-5150", "COOKIE-SECRET-7781", "TOKEN-SECRET-42"] { #expect(!output.contains(secret)) }
        }
        #expect(human.stdout.contains("token=REDACTED"), "\(human.stdout)")
    }

    @Test func badURL_isAUsageError() throws {
        _ = try Repo.requireSamples("ladder-2s")
        let noHost = try runProcess(Repo.hlsplay, ["check", "http:///master.m3u8"])
        #expect(noHost.status == 64)
        #expect(noHost.stderr.contains("no host"))
        let ftp = try runProcess(Repo.hlsplay, ["check", "ftp://example.com/x.m3u8"])
        #expect(ftp.status == 64)
        #expect(ftp.stderr.contains("not an http, https or file URL"))
        let header = try runProcess(Repo.hlsplay, ["check", "--header", "no colon", "http://127.0.0.1:1/x.m3u8"])
        #expect(header.status == 64)
        #expect(header.stderr.contains("--header"))
    }
}
