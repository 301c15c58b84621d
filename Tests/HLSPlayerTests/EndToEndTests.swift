import Foundation
import HLSOrigin
import Testing
import TestSupport

/// hlsplay, the real binary, playing the real sample ladder over real HTTP on loopback.
/// Serialized: each run plays in real time, and they should not compete for the two cores.
@Suite(.serialized, .tags(.realTime)) struct EndToEndTests {
    @Test func playsSampleLadderToTheEnd_summaryAgreesWithLog() throws {
        let samples = try Repo.requireSamples("short-2s")
        let run = try withOrigin(samples) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json"])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let summary = try #require(run.summary)

        // --json: exactly one JSON object on stdout, equal to the summary line.
        let stdoutLines = run.stdout.split(separator: "\n")
        #expect(stdoutLines.count == 1)
        let printed = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == run.rawLogLines.last, "stdout is the log's summary line")
        for key in [
            "timeToFirstFrameSeconds", "stallCount", "stallSeconds", "playedSeconds", "averageBitrateBps",
            "variantSwitches", "requests", "bytes", "exitReason", "startup"
        ] {
            #expect(printed[key] != nil, "summary key \(key)")
        }

        // Played to the end with no stall.
        #expect(summary["exitReason"] as? String == "completed")
        #expect(summary["stallCount"] as? Int == 0)
        let played = try #require(summary["playedSeconds"] as? Double)
        #expect(abs(played - 8) < 0.05, "played \(played) s of 8 s")

        // First frame: reported once, a real decoded frame, and the summary's TTFF.
        let first = run.events("frame.first")
        #expect(first.count == 1)
        let ttff = try #require(first.first?["timeToFirstFrameSeconds"] as? Double)
        #expect(ttff > 0 && ttff < 5)
        #expect(summary["timeToFirstFrameSeconds"] as? Double == ttff)
        #expect((first.first?["width"] as? Int ?? 0) > 0)
        let startup = try #require(summary["startup"] as? [String: Any])
        for key in [
            "multivariantPlaylistSeconds", "mediaPlaylistSeconds", "firstSegmentFirstByteSeconds",
            "firstSegmentLastByteSeconds", "demuxSeconds", "firstFrameDecodeSeconds"
        ] {
            #expect(startup[key] as? Double != nil, "startup breakdown \(key)")
        }

        // Every segment request has timings in order and a 200.
        let ends = run.events("request.end")
        let segmentEnds = ends.filter { $0["purpose"] as? String == "segment" }
        #expect(segmentEnds.count >= 4)
        for end in segmentEnds {
            #expect(end["status"] as? Int == 200)
            let t = try #require(end["timings"] as? [String: Double])
            let order = [t["nameLookupSeconds"]!, t["connectSeconds"]!, t["firstByteSeconds"]!, t["totalSeconds"]!]
            #expect(order == order.sorted(), "timings in order: \(t)")
        }
        // Requests and bytes agree with the events.
        #expect(summary["requests"] as? Int == ends.count)
        #expect(summary["bytes"] as? Int == ends.reduce(0) { $0 + ($1["bytes"] as? Int ?? 0) })
        #expect(run.events("request.start").count == ends.count)

        // The buffer never goes negative.
        let samplesLogged = run.events("buffer.sample")
        #expect(!samplesLogged.isEmpty)
        #expect(samplesLogged.allSatisfy { ($0["bufferSeconds"] as? Double ?? -1) >= 0 })

        // Stalls in the summary agree with the stall events.
        #expect(run.events("stall.start").count == summary["stallCount"] as? Int)
        let stallSum = run.events("stall.end").reduce(0.0) { $0 + ($1["stallSeconds"] as? Double ?? 0) }
        #expect(abs(stallSum - (summary["stallSeconds"] as? Double ?? -1)) < 1e-6)
        #expect(run.events("abr.switch").count == summary["variantSwitches"] as? Int)

        // Every video frame was decoded (8 s at 24 fps).
        #expect(summary["decodedVideoFrames"] as? Int == 192)

        // HAR 1.2 with one entry per request.
        let har = try #require(run.har?["log"] as? [String: Any])
        #expect(har["version"] as? String == "1.2")
        #expect((har["entries"] as? [Any])?.count == ends.count)
    }

    @Test func durationLimit_stopsAfterThatMuchPlayback() throws {
        let samples = try Repo.requireSamples("short-2s")
        let run = try withOrigin(samples) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--duration", "3", "--json"])
        }
        #expect(run.status == 0)
        expectValidLog(run)
        #expect(run.summary?["exitReason"] as? String == "durationReached")
        let played = run.summary?["playedSeconds"] as? Double ?? 0
        #expect(played >= 3 && played < 3.6, "played \(played)")
    }

    @Test func sigint_endsCleanlyWithSummary() throws {
        let samples = try Repo.requireSamples("short-2s")
        let run = try withOrigin(samples) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless"], interruptAfterSeconds: 2.5)
        }
        #expect(run.status == 130)
        expectValidLog(run)
        #expect(run.summary?["exitReason"] as? String == "interrupted")
        #expect(run.stdout.contains("time to first frame"))
    }

    @Test func pinnedVariant_playsOnlyThatVariant() throws {
        let samples = try Repo.requireSamples("short-2s")
        let run = try withOrigin(samples) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--variant", "3", "--duration", "2", "--json"])
        }
        #expect(run.status == 0)
        let buffered = run.events("segment.buffered")
        #expect(!buffered.isEmpty)
        #expect(buffered.allSatisfy { $0["variantIndex"] as? Int == 3 })
        #expect(run.events("frame.first").first?["height"] as? Int == 1080)
    }

    @Test func mediaPlaylistURL_playsWithoutMultivariant() throws {
        let samples = try Repo.requireSamples("short-2s")
        let run = try withOrigin(samples) { base in
            try runHlsplay([base.appendingPathComponent("v1/prog.m3u8").absoluteString, "--headless", "--json", "--duration", "2"])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.events("frame.first").first?["height"] as? Int == 360)
    }
}

/// Bad input through the real binary: a clear message, the right exit status,
/// and a session log that is still valid JSON Lines ending in a summary.
@Suite(.serialized) struct BadInputTests {
    func tempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-bad-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func malformedPlaylist_exits65_namesTheProblem() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        try "#EXTM3U\n#EXT-X-STREAM-INF:RESOLUTION=640x360\nv1.m3u8\n".write(
            to: dir.appendingPathComponent("bad.m3u8"), atomically: true, encoding: .utf8)
        let run = try withOrigin(dir) { base in
            try runHlsplay([base.appendingPathComponent("bad.m3u8").absoluteString, "--headless"])
        }
        #expect(run.status == 65)
        #expect(run.stderr.contains("malformed playlist"))
        #expect(run.stderr.contains("BANDWIDTH"))
        expectValidLog(run)
        #expect(run.summary?["exitReason"] as? String == "error")
        #expect(run.events("error").first?["fatal"] as? Bool == true)
    }

    @Test func segment404_exits69_withTheStatusInTheMessage() throws {
        let samples = try Repo.requireSamples("short-2s")
        let faults = [
            FaultRule(pathPattern: "*/seg_00002.ts", requestIndex: nil, afterSeconds: nil, action: .status(code: 404, retryAfterSeconds: nil))
        ]
        let run = try withOrigin(samples, faults: faults) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json"])
        }
        #expect(run.status == 69)
        #expect(run.stderr.contains("404"))
        #expect(run.stderr.split(separator: "\n").count == 1, "one-line reason: \(run.stderr)")
        expectValidLog(run)
        #expect(run.summary?["exitReason"] as? String == "error")
        #expect((run.summary?["failedRequests"] as? Int ?? 0) >= 1)
        // --json still prints the summary, and only it, on stdout.
        #expect((try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8))) != nil)
    }

    @Test func serverClosesMidBody_retriesThenGivesUp() throws {
        let samples = try Repo.requireSamples("short-2s")
        let faults = [FaultRule(pathPattern: "*/seg_00001.ts", requestIndex: nil, afterSeconds: nil, action: .truncateAfterBytes(bytes: 10_000))]
        let run = try withOrigin(samples, faults: faults) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless"])
        }
        #expect(run.status == 69)
        #expect(run.stderr.contains("truncatedBody"))
        expectValidLog(run)
        #expect(run.events("request.retry").count == 3)
        let failed = run.events("request.end").filter { $0["ok"] as? Bool == false }
        #expect(failed.count == 4)
        #expect(failed.allSatisfy { ($0["bytes"] as? Int ?? 0) >= 10_000 })
    }

    @Test func serverClosesMidBodyOnce_recoversTransparently() throws {
        let samples = try Repo.requireSamples("short-2s")
        let faults = [FaultRule(pathPattern: "*/seg_00001.ts", requestIndex: 0, afterSeconds: nil, action: .truncateAfterBytes(bytes: 10_000))]
        let run = try withOrigin(samples, faults: faults) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json"])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(run.events("request.retry").count == 1)
        #expect(run.summary?["exitReason"] as? String == "completed")
        // The re-request after the broken transfer went out on a new connection.
        let retried = try #require(run.events("request.retry").first?["requestID"] as? Int)
        let next = run.events("request.end").first { ($0["requestID"] as? Int ?? 0) > retried }
        #expect(next?["connectionReused"] as? Bool == false)
        #expect(next?["ok"] as? Bool == true)
    }

    @Test func blackHoledSegment_monitorKeepsTicking_requestReissuedOnFreshConnection() throws {
        let samples = try Repo.requireSamples("short-2s")
        let faults = [FaultRule(pathPattern: "*/seg_00001.ts", requestIndex: 0, afterSeconds: nil, action: .blackHole)]
        let run = try withOrigin(samples, faults: faults) { base in
            try runHlsplay([
                base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
                "--first-byte-timeout", "2", "--forward-buffer", "2"
            ])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        // While the loader was blocked on the silent request, the wall-clock monitor kept sampling
        // and saw the in-flight request idle for most of the timeout.
        let idle = run.events("buffer.sample").compactMap { $0["inFlightIdleSeconds"] as? Double }
        #expect((idle.max() ?? 0) >= 1.5)
        let failed = run.events("request.end").filter { $0["ok"] as? Bool == false }
        #expect(failed.count == 1)
        #expect(failed.first?["errorKind"] as? String == "firstByteTimeout")
        let retried = try #require(run.events("request.retry").first?["requestID"] as? Int)
        let next = run.events("request.end").first { ($0["requestID"] as? Int ?? 0) > retried }
        #expect(next?["connectionReused"] as? Bool == false)
        #expect(run.summary?["exitReason"] as? String == "completed")
    }

    /// A segment whose first attempt gets a 500 and whose second wedges (100 bytes, then silence): the retry
    /// policy's second attempt, then the wedge's re-request of it — which is not an attempt, so it is logged as
    /// attempt 2 again, with 1 attempt made (the loader core counts from the attempt the cut request was, not
    /// from its own count, which saw only the first).
    @Test func segmentWedgedOnItsSecondAttempt_reRequestKeepsTheAttemptNumber() throws {
        let samples = try Repo.requireSamples("ladder-2s")
        let segment = "*/v0/seg_00006.ts"
        let faults = [
            FaultRule(pathPattern: segment, requestIndex: 0, action: .status(code: 500, retryAfterSeconds: nil)),
            FaultRule(pathPattern: segment, requestIndex: 1, action: .stallAfterBytes(bytes: 100, seconds: nil))
        ]
        let run = try withOrigin(samples, faults: faults) { base in
            // The lowest rung pinned: a wedge there has no rung below to decide again for, so it is re-requested.
            try runHlsplay([
                base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--variant", "0", "--duration", "16"
            ])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let starts = run.events("request.start").filter { ($0["url"] as? String ?? "").hasSuffix("/v0/seg_00006.ts") }
        #expect(starts.compactMap { $0["attempt"] as? Int } == [1, 2, 2], "\(starts)")
        let retries = run.events("request.retry").filter { ($0["url"] as? String ?? "").hasSuffix("/v0/seg_00006.ts") }
        #expect(retries.compactMap { $0["errorKind"] as? String } == ["httpStatus", "transferTimeout"], "\(retries)")
        #expect(retries.compactMap { $0["attemptsMade"] as? Int } == [1, 1], "\(retries)")
        #expect(run.events("segment.buffered").contains { $0["mediaSequence"] as? Int == 6 })
    }

    @Test func decodeHang_monitorKeepsTicking_andReportsItWithinBoundedTime() throws {
        let samples = try Repo.requireSamples("short-2s")
        let hangSeconds = 4.0
        let run = try withOrigin(samples) { base in
            try runHlsplay(
                [base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json"],
                environment: ["HLSPLAY_INJECT_DECODE_HANG_SECONDS": "\(hangSeconds)"])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let firstFrameAt = try #require(run.events("frame.first").first?["t"] as? Double)
        // The wall-clock monitor kept sampling through the hang (period 0.25 s).
        let during = run.events("buffer.sample").compactMap { $0["t"] as? Double }.filter {
            $0 > firstFrameAt + 0.5 && $0 < firstFrameAt + hangSeconds - 0.5
        }
        #expect(during.count >= 8, "monitor samples during the hang: \(during.count)")
        // The hang was reported once, within the threshold (2 s) plus a monitor period or two.
        let hangs = run.events("error").filter { $0["category"] as? String == "decode-hang" }
        #expect(hangs.count == 1)
        let reportedAt = try #require(hangs.first?["t"] as? Double)
        #expect(reportedAt - firstFrameAt >= 2 && reportedAt - firstFrameAt < 3.5, "reported \(reportedAt - firstFrameAt) s after the hang began")
        // The clock went on meanwhile, so the frames due during the hang were late.
        #expect((run.summary?["lateVideoFrames"] as? Int ?? 0) > 0)
    }

    @Test func unknownFlag_exits64_namingTheWord() throws {
        _ = try Repo.requireSamples("short-2s")
        let run = try runHlsplay(["--headless", "--frobnicate"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("'--frobnicate'"))
        #expect(run.logLines.isEmpty, "nothing starts on a usage error")
    }

    @Test func badFlagValue_exits64_namingTheValue() throws {
        _ = try Repo.requireSamples("short-2s")
        let run = try runHlsplay(["--headless", "--duration", "soon"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("'soon'"))
    }

    @Test func unwritableLogPath_isAnErrorAtStart() throws {
        _ = try Repo.requireSamples("short-2s")
        let process = Process()
        process.executableURL = Repo.hlsplay
        process.arguments = ["http://127.0.0.1:9/x.m3u8", "--headless", "--log", "/nonexistent-dir/x.jsonl"]
        let err = Pipe()
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 73)
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(message.contains("/nonexistent-dir/x.jsonl"))
    }

    @Test func help_matchesGoldenFile() throws {
        _ = try Repo.requireSamples("short-2s")
        let process = Process()
        process.executableURL = Repo.hlsplay
        process.arguments = ["--help"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let golden = try String(contentsOf: Repo.root.appendingPathComponent("Tests/HLSPlayerTests/Fixtures/help.txt"), encoding: .utf8)
        #expect(String(decoding: data, as: UTF8.self) == golden)
    }
}
