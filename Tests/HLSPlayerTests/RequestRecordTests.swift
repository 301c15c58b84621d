import Foundation
import HLSOrigin
import Testing
import TestSupport

/// Every request hlsplay sends is in the HAR and in the session log (`request.start`/`request.end`), with
/// the URL really sent, and the records of a request cut short say what it had received when it ended:
/// the status line, the bytes, the first byte and the time it ran, and why it ended.
@Suite(.serialized, .tags(.realTime)) struct RequestRecordTests {
    static func entries(_ run: Run) -> [[String: Any]] { HARTests.entries(run) }

    static func entry(_ run: Run, requestID: Int) -> [String: Any]? {
        entries(run).first { $0["_requestID"] as? Int == requestID }
    }

    /// The origin's request lines (connection records, which have a `type`, left out) as `path?query`.
    static func originTargets(_ log: URL) throws -> [String] {
        try String(contentsOf: log, encoding: .utf8).split(separator: "\n").compactMap { line in
            guard let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], o["type"] == nil else { return nil }
            let path = o["path"] as? String ?? ""
            return (o["query"] as? String).map { "\(path)?\($0)" } ?? path
        }
    }

    /// `path?query` of a URL as sent.
    static func target(_ url: String) -> String {
        guard let c = URLComponents(string: url) else { return url }
        return c.percentEncodedQuery.map { "\(c.path)?\($0)" } ?? c.path
    }

    /// Each `request.start` and `request.end` pair and the HAR entry of the same request agree.
    /// The URLs the HAR's entries sent, after checking they are the requests the origin saw: as many, with the same
    /// targets (path and query).
    @discardableResult
    static func expectHARMatchesOrigin(
        _ entries: [[String: Any]], _ origin: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) -> [String] {
        let sent = entries.compactMap { ($0["request"] as? [String: Any])?["url"] as? String }
        #expect(entries.count == origin.count, "HAR \(entries.count) entries, origin \(origin.count) requests", sourceLocation: sourceLocation)
        #expect(sent.map(target).sorted() == origin.sorted(), "the HAR's targets are the ones the origin saw", sourceLocation: sourceLocation)
        return sent
    }

    static func expectRecordsAgree(_ run: Run, sourceLocation: SourceLocation = #_sourceLocation) {
        let starts = run.events("request.start")
        let ends = run.events("request.end")
        let entries = Self.entries(run)
        #expect(harProblems(run.har) == [], sourceLocation: sourceLocation)
        #expect(starts.count == ends.count, "every request.start has its request.end", sourceLocation: sourceLocation)
        #expect(entries.count == ends.count, "one HAR entry per request", sourceLocation: sourceLocation)
        for start in starts {
            let id = start["requestID"] as? Int ?? -1
            guard let end = ends.first(where: { $0["requestID"] as? Int == id }), let entry = Self.entry(run, requestID: id) else {
                Issue.record("request \(id) has no request.end or no HAR entry", sourceLocation: sourceLocation)
                continue
            }
            let sent = ((entry["request"] as? [String: Any])?["url"] as? String) ?? ""
            #expect(start["url"] as? String == sent, "request.start names the URL sent", sourceLocation: sourceLocation)
            #expect(end["url"] as? String == sent, "request.end names the URL sent", sourceLocation: sourceLocation)
            let response = entry["response"] as? [String: Any] ?? [:]
            let status = response["status"] as? Int ?? 0
            #expect((end["status"] as? Int ?? 0) == status, "request \(id): status \(end) vs HAR \(status)", sourceLocation: sourceLocation)
            #expect(end["bytes"] as? Int == response["bodySize"] as? Int, "request \(id): bytes", sourceLocation: sourceLocation)
            #expect(
                (end["aborted"] as? Bool ?? false) == (response["_aborted"] as? Bool ?? false), "request \(id): aborted",
                sourceLocation: sourceLocation)
        }
    }

    /// hls-origin serving ladder-2s as LL-HLS (0.5 s parts): blocking reloads (`_HLS_msn`/`_HLS_part`,
    /// `_HLS_skip`), parts and preload hints, with CMCD in the query. The HAR has one valid entry per request
    /// the origin logged, each with the target the origin saw, and the session log names the same URLs.
    @Test func lowLatency_everyRequestTheOriginSaw_isInTheHARAndTheLog() throws {
        let samples = try Repo.requireSamples("ladder-2s")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-llhar-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let requestLog = dir.appendingPathComponent("requests.jsonl")
        var config = OriginConfiguration(requestLogURL: requestLog)
        config.live = LiveConfiguration(windowSegments: 10, lowLatency: LowLatencyConfiguration(partTargetSeconds: 0.5))
        let run = try withOrigin(samples, configuration: config) { server in
            Thread.sleep(forTimeInterval: 3) // a few segments into the stream
            return try runHlsplay([
                server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--no-status", "--cold",
                "--no-redact", "--cmcd", "query", "--duration", "6"
            ])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        Self.expectRecordsAgree(run)
        let entries = Self.entries(run)
        let origin = try Self.originTargets(requestLog)
        let sent = Self.expectHARMatchesOrigin(entries, origin)
        #expect(sent.filter { $0.contains("_HLS_msn=") && $0.contains("_HLS_part=") }.count >= 4, "blocking reloads: \(sent)")
        #expect(run.events("segment.buffered").filter { $0["part"] != nil }.count >= 4, "parts loaded")
        #expect(sent.allSatisfy { $0.contains("CMCD=") }, "every URL with its CMCD query")
    }

    /// 20 KB of a 200's body, then silence: the wedge rule cancels it. Its request.end says what the
    /// HAR says: status 200, the bytes that came, the first byte and the time it ran, aborted as wedged.
    @Test func wedgedTwoHundred_requestEndCarriesStatusBytesAndTimes() throws {
        let samples = try Repo.requireSamples("short-2s")
        let faults = [
            FaultRule(pathPattern: "*/seg_00001.ts", requestIndex: 0, afterSeconds: nil, action: .stallAfterBytes(bytes: 20_000, seconds: nil))
        ]
        let run = try withOrigin(samples, faults: faults) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--no-status", "--cold"])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        Self.expectRecordsAgree(run)
        let end = try #require(run.events("request.end").first { $0["cancelReason"] as? String == "wedged" }, "a request.end cancelled as wedged")
        #expect(end["status"] as? Int == 200)
        #expect((end["bytes"] as? Int ?? 0) >= 20_000)
        #expect(end["aborted"] as? Bool == true)
        #expect(end["errorKind"] as? String == "cancelled")
        // Why it ended is the rule a simulated session logs by too (CutShort), not the transport's words.
        #expect(end["errorMessage"] as? String == "wedged (byte-progress monitor)")
        let timings = try #require(end["timings"] as? [String: Any])
        let firstByte = try #require(timings["firstByteSeconds"] as? Double)
        let total = try #require(timings["totalSeconds"] as? Double)
        #expect(firstByte > 0 && firstByte < total)
        #expect(total >= 3, "it ran for the wedge window at least: \(total) s")
        // The HAR entry of the same request: the same time, to the millisecond.
        let entry = try #require(Self.entry(run, requestID: end["requestID"] as? Int ?? -1))
        #expect(abs((entry["time"] as? Double ?? 0) - total * 1000) < 1.5, "HAR time \(entry["time"] ?? "-") ms, request.end \(total) s")
    }

    /// A 200 whose connection closes after 20 KB of its body (a failure, not a cancel): its request.end
    /// has the status and what came, aborted, as the HAR entry; the retry then loads the whole segment.
    @Test func truncatedTwoHundred_requestEndCarriesStatusBytesAndTimes() throws {
        let samples = try Repo.requireSamples("short-2s")
        let faults = [FaultRule(pathPattern: "*/seg_00001.ts", requestIndex: 0, afterSeconds: nil, action: .truncateAfterBytes(bytes: 20_000))]
        let run = try withOrigin(samples, faults: faults) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--no-status", "--cold"])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        Self.expectRecordsAgree(run)
        let end = try #require(run.events("request.end").first { $0["ok"] as? Bool == false }, "the truncated attempt's request.end")
        #expect(end["status"] as? Int == 200)
        #expect(end["bytes"] as? Int == 20_000)
        #expect(end["aborted"] as? Bool == true)
        #expect(end["cancelReason"] == nil)
        let timings = try #require(end["timings"] as? [String: Any])
        let firstByte = try #require(timings["firstByteSeconds"] as? Double)
        #expect(firstByte > 0 && firstByte <= (timings["totalSeconds"] as? Double ?? 0))
    }

    /// The session ends (`--duration`) while a 200's body is stalled mid-way: the cancelled request's
    /// request.end has its status, bytes and times, with the session's end as the cause.
    @Test func sessionStopMidTransfer_requestEndCarriesStatusBytesAndTimes() throws {
        let samples = try Repo.requireSamples("short-2s")
        // Segment 0 fills the start buffer; segment 2 stalls after 20 KB, every time it is asked for (a wedge
        // re-request too, on a machine slow enough for the wedge window to pass first), longer than the session lasts.
        let faults = [
            FaultRule(pathPattern: "*/seg_00002.ts", requestIndex: nil, afterSeconds: nil, action: .stallAfterBytes(bytes: 20_000, seconds: nil))
        ]
        let run = try withOrigin(samples, faults: faults) { base in
            try runHlsplay([
                base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--no-status", "--cold", "--variant", "0",
                "--duration", "1"
            ])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        Self.expectRecordsAgree(run)
        let end = try #require(
            run.events("request.end").first { $0["cancelReason"] as? String == "session-stopping" }, "a request.end cut by the session's end")
        #expect(end["errorMessage"] as? String == "cancelled: the session stopped")
        #expect(end["status"] as? Int == 200)
        #expect((end["bytes"] as? Int ?? 0) >= 20_000)
        #expect(end["aborted"] as? Bool == true)
        let timings = try #require(end["timings"] as? [String: Any])
        #expect(timings["firstByteSeconds"] as? Double != nil)
        #expect((timings["totalSeconds"] as? Double ?? 0) > 0)
        let entry = try #require(Self.entry(run, requestID: end["requestID"] as? Int ?? -1))
        let response = try #require(entry["response"] as? [String: Any])
        #expect(response["status"] as? Int == 200)
        #expect((response["_error"] as? String ?? "").hasPrefix("cancelled: session stopping"), "\(response)")
    }

    /// Plays `path` under `root` through hls-origin with a request log; the run and the origin's targets.
    static func playLogged(_ root: URL, _ path: String, faults: [FaultRule] = [], _ args: [String] = []) throws -> (Run, [String]) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-reqlog-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let requestLog = dir.appendingPathComponent("requests.jsonl")
        var config = OriginConfiguration(requestLogURL: requestLog)
        config.faults = faults
        let run = try withOrigin(root, configuration: config) { server in
            try runHlsplay(
                [URL(string: path, relativeTo: server.baseURL)!.absoluteString, "--headless", "--json", "--no-status", "--cold", "--no-redact"]
                    + args)
        }
        return (run, try originTargets(requestLog))
    }

    /// alt-audio (video-only variants, English and French renditions) with every segment AES-128
    /// encrypted — the video under one key, the audio under another — and the first request of an audio
    /// segment answering 503: multivariant and media playlists of both tracks, keys, segments of both
    /// tracks and a retry, each in the HAR and the log, as many as the origin saw.
    @Test func alternateAudioWithKeys_everyRequestTheOriginSaw_isInTheHARAndTheLog() throws {
        let source = try Repo.requireSamples("short-2s").deletingLastPathComponent().appendingPathComponent("variants/alt-audio")
        guard FileManager.default.fileExists(atPath: source.appendingPathComponent("master.m3u8").path) else {
            throw TestSetupError("\(source.path) is missing: run Samples/make-all.sh (Tools/test.sh does)")
        }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-altkeys-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("keys"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: source.appendingPathComponent("master.m3u8"), to: root.appendingPathComponent("master.m3u8"))
        guard let openssl = findOnPath("openssl") else { throw TestSetupError("openssl is not on PATH: it encrypts this test's segments") }
        let iv = "000102030405060708090a0b0c0d0e0f"
        let keys = ["video": "00112233445566778899aabbccddeeff", "audio": "ffeeddccbbaa99887766554433221100"]
        for (name, hex) in keys {
            let bytes = stride(from: 0, to: hex.count, by: 2).map { i -> UInt8 in
                UInt8(hex[hex.index(hex.startIndex, offsetBy: i)..<hex.index(hex.startIndex, offsetBy: i + 2)], radix: 16)!
            }
            try Data(bytes).write(to: root.appendingPathComponent("keys/\(name).key"))
        }
        for track in ["v0", "v1", "en", "fr"] {
            let key = track.hasPrefix("v") ? "video" : "audio"
            let folder = root.appendingPathComponent(track)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let playlist = try String(contentsOf: source.appendingPathComponent("\(track)/prog.m3u8"), encoding: .utf8)
            var lines: [String] = []
            for line in playlist.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
                lines.append(line)
                if line.hasPrefix("#EXT-X-MEDIA-SEQUENCE") { lines.append("#EXT-X-KEY:METHOD=AES-128,URI=\"../keys/\(key).key\",IV=0x\(iv)") }
                if line.hasSuffix(".ts") {
                    // AES-128-CBC with PKCS7 padding (RFC 8216 §5.2), by the openssl CLI.
                    let result = try runProcess(
                        openssl,
                        [
                            "enc", "-aes-128-cbc", "-K", keys[key]!, "-iv", iv, "-in", source.appendingPathComponent("\(track)/\(line)").path,
                            "-out", folder.appendingPathComponent(line).path
                        ])
                    guard result.status == 0 else { throw TestSetupError("openssl enc failed: \(result.stderr)") }
                }
            }
            try lines.joined(separator: "\n").write(to: folder.appendingPathComponent("prog.m3u8"), atomically: true, encoding: .utf8)
        }
        let fault = FaultRule(pathPattern: "/en/seg_00001.ts", requestIndex: 0, afterSeconds: nil, action: .status(code: 503, retryAfterSeconds: nil))
        let (run, origin) = try Self.playLogged(root, "master.m3u8", faults: [fault])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        Self.expectRecordsAgree(run)
        let entries = Self.entries(run)
        let sent = Self.expectHARMatchesOrigin(entries, origin)
        let purposes = Set(entries.compactMap { $0["_purpose"] as? String })
        #expect(purposes == ["multivariant-playlist", "media-playlist", "key", "segment"], "\(purposes)")
        #expect(sent.filter { $0.hasSuffix("/keys/audio.key") }.count == 1 && sent.filter { $0.hasSuffix("/keys/video.key") }.count == 1)
        #expect(sent.filter { $0.hasSuffix("/en/seg_00001.ts") }.count == 2, "the 503 and its retry")
        #expect(run.summary?["audioSegmentsBuffered"] as? Int == 4)
        #expect(run.summary?["decodeErrors"] as? Int == 0)
    }

    /// Redundant variants (a/ answers 503 for every segment: failover to b/), content steering (the
    /// steering manifest, then pathway b) and fMP4 alternate audio (init sections of both tracks): every
    /// request the origin saw is in the HAR and the log.
    @Test(arguments: [
        ("redundant/master.m3u8", "segment"), ("redundant/steering.m3u8", "steering-manifest"), ("alt-audio-fmp4/master.m3u8", "init-section")
    ])
    func failoverSteeringAndInitSections_everyRequestTheOriginSaw_isInTheHARAndTheLog(path: String, purpose: String) throws {
        let variants = try Repo.requireSamples("short-2s").deletingLastPathComponent().appendingPathComponent("variants")
        guard FileManager.default.fileExists(atPath: variants.appendingPathComponent(path).path) else {
            throw TestSetupError("\(variants.path) is missing \(path): run Samples/make-all.sh (Tools/test.sh does)")
        }
        let fault = FaultRule(
            pathPattern: "/redundant/a/*/seg_*", requestIndex: nil, afterSeconds: nil, action: .status(code: 503, retryAfterSeconds: nil))
        let (run, origin) = try Self.playLogged(variants, path, faults: path == "redundant/master.m3u8" ? [fault] : [])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        Self.expectRecordsAgree(run)
        let entries = Self.entries(run)
        let sent = Self.expectHARMatchesOrigin(entries, origin)
        let purposes = Set(entries.compactMap { $0["_purpose"] as? String })
        #expect(purposes.contains(purpose), "\(purposes)")
        if path == "redundant/master.m3u8" {
            #expect(entries.contains { ($0["response"] as? [String: Any])?["status"] as? Int == 503 } && sent.contains { $0.contains("/b/") })
        }
    }
}
