import Foundation
@testable import HLSCore
@testable import HLSPlayer
import Testing
import TestSupport

/// A link whose rate is given piece by piece (bits per second from each start time), with a fixed first-byte delay.
struct PiecewiseLink: SimulatedLink {
    /// (start seconds, rate bits per second), sorted; the last piece lasts forever.
    var pieces: [(startSeconds: Double, bitsPerSecond: Double)]
    var delaySeconds = 0.0

    func capacityBytes(until t: Double) -> Double {
        var bytes = 0.0
        for (i, p) in pieces.enumerated() where p.startSeconds < t {
            let end = i + 1 < pieces.count ? min(t, pieces[i + 1].startSeconds) : t
            bytes += (end - p.startSeconds) * p.bitsPerSecond / 8
        }
        return bytes
    }

    func time(whenCapacityReaches bytes: Double) -> Double? {
        var reached = 0.0
        for (i, p) in pieces.enumerated() {
            let rate = p.bitsPerSecond / 8
            let end = i + 1 < pieces.count ? pieces[i + 1].startSeconds : Double.infinity
            if rate > 0, reached + (end - p.startSeconds) * rate >= bytes { return p.startSeconds + (bytes - reached) / rate }
            if end.isFinite { reached += (end - p.startSeconds) * rate }
        }
        return nil
    }

    func firstByteDelaySeconds(at t: Double) -> Double { delaySeconds }
}

/// The virtual-time session: the player's decision code against a modelled link.
@Suite struct SimulationTests {
    /// One rung of 2 s segments of `segmentBytes` each.
    static func ladder(rungsBps: [Int], segments: Int = 10, bytesPerSecondOfMedia: ((Int) -> Int)? = nil) -> SimulatedLadder {
        SimulatedLadder(
            name: "test", multivariantBytes: 300,
            variants: rungsBps.map { bps in
                let bytes = bytesPerSecondOfMedia?(bps) ?? bps / 8 * 2
                return SimulatedLadder.Variant(
                    bandwidthBps: bps, resolution: nil, playlistBytes: 500,
                    segments: Array(repeating: .init(durationSeconds: 2, bytes: bytes), count: segments))
            })
    }

    static func run(
        _ ladder: SimulatedLadder, _ link: any SimulatedLink, predictor: PredictorChoice = .off,
        configure: (inout PlayerConfiguration) -> Void = { _ in }
    ) throws -> (SessionSummary, [[String: Any]]) {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-sim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("session.jsonl")
        var configuration = PlayerConfiguration(url: URL(string: "sim://test/master.m3u8")!)
        configuration.predictor = predictor
        configuration.decode = false
        configure(&configuration)
        let session = try VirtualSession(configuration: configuration, ladder: ladder, link: link, linkDescription: "test", logPath: log.path)
        let summary = session.run()
        let lines = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        return (summary, lines)
    }

    @Test func fastLink_startsAtTheTransferTime_andPlaysToTheEndWithoutAStall() throws {
        let ladder = Self.ladder(rungsBps: [1_000_000])
        let (summary, lines) = try Self.run(ladder, PiecewiseLink(pieces: [(0, 2_000_000)]))
        // Three responses back to back on a 250 kB/s link: playlists, then a 250 kB segment.
        let bytes = Double(300 + 500 + 250_000 + 3 * SimulatedConnection.responseHeaderBytes)
        let ttff = try #require(summary.timeToFirstFrameSeconds)
        #expect(abs(ttff - bytes / 250_000) < 0.001, "TTFF \(ttff)")
        #expect(summary.stallCount == 0)
        #expect(summary.exitReason == .completed)
        #expect(abs(summary.playedSeconds - 20) < 0.3)
        #expect(summary.averageBitrateBps == 1_000_000)
        #expect(summary.segmentsBuffered == 10)
        #expect(lines.first?["simulation"] != nil, "the header says the log is simulated")
        let configuration = lines.first?["configuration"] as? [String: Any]
        #expect((configuration?["session"] as? [String: Any])?["loaderPollSeconds"] as? Double == 0.1, "the session tunables are in the header")
        #expect(((configuration?["retry"] as? [String: Any])?["playlist"] as? [String: Any])?["maxAttempts"] as? Int == 5)
        #expect(lines.last?["type"] as? String == "summary")
    }

    @Test func slowLink_stalls_andTheSessionTimeAddsUp() throws {
        // 0.5 Mbit/s under a 1 Mbit/s rung: each 2 s segment takes 4 s to arrive.
        let (summary, lines) = try Self.run(Self.ladder(rungsBps: [1_000_000]), PiecewiseLink(pieces: [(0, 500_000)]))
        #expect(summary.stallCount >= 2)
        let ttff = try #require(summary.timeToFirstFrameSeconds)
        // Once playing, wall time is media played plus time stalled (the monitor's 0.25 s tick rounds the end).
        #expect(abs(summary.sessionSeconds - (ttff + summary.playedSeconds + summary.stallSeconds)) < 0.3)
        // All 10 segments (2.5 MB) arrive at the link rate, so the last lands at about 40 s.
        let lastBuffered = try #require(lines.last { $0["type"] as? String == "segment.buffered" }?["t"] as? Double)
        #expect(abs(lastBuffered - 40) < 0.1, "last segment at \(lastBuffered) s")
        let stalls = lines.filter { $0["type"] as? String == "stall.start" }.count
        #expect(stalls == summary.stallCount)
    }

    /// Wall time = playback start + media played + stalled + the time after the end was played, within a
    /// monitor tick, with the wait for the start buffer after the first frame in the start.
    static func expectSessionTimeAddsUp(_ summary: SessionSummary, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let start = try #require(summary.timeToPlaybackStartSeconds, sourceLocation: sourceLocation)
        let tail = summary.playbackEndedAtSeconds.map { summary.sessionSeconds - $0 } ?? 0
        let accounted = start + summary.playedSeconds + summary.stallSeconds + tail
        #expect(
            abs(summary.sessionSeconds - accounted) <= 0.25 + 1e-6,
            "session \(summary.sessionSeconds) s vs start \(start) + played \(summary.playedSeconds) + stalled \(summary.stallSeconds) + tail \(tail)",
            sourceLocation: sourceLocation)
    }

    @Test func startBufferWait_isReported_andTheSessionTimeAddsUp() throws {
        // 2 Mbit/s for a 1 Mbit/s rung: each 2 s segment takes 1 s. The first frame comes with the first
        // segment; a 6 s start buffer needs two more, so playback starts about 2 s after the first frame.
        let (summary, lines) = try Self.run(Self.ladder(rungsBps: [1_000_000]), PiecewiseLink(pieces: [(0, 2_000_000)])) {
            $0.playback.startupBufferSeconds = 6
        }
        let ttff = try #require(summary.timeToFirstFrameSeconds)
        let start = try #require(summary.timeToPlaybackStartSeconds)
        let wait = try #require(summary.startupWaitSeconds)
        #expect(abs(wait - 2) < 0.05, "start wait \(wait) s")
        #expect(abs(start - (ttff + wait)) < 1e-9)
        #expect(summary.startup.playbackStartAtSeconds == start && summary.startup.startupWaitSeconds == wait)
        let started = try #require(lines.first { $0["type"] as? String == "playback.started" })
        #expect(started["atSeconds"] as? Double == start)
        #expect(started["startupWaitSeconds"] as? Double == wait && started["timeToFirstFrameSeconds"] as? Double == ttff)
        #expect(summary.exitReason == .completed && summary.playbackEndedAtSeconds != nil)
        try Self.expectSessionTimeAddsUp(summary)
        // The old headline alone misses the wait: first frame + played + stalled falls short by it.
        #expect(summary.sessionSeconds - (ttff + summary.playedSeconds + summary.stallSeconds) > 1.5)
        // QoE from the same pure code as the real player's: 10 chunks of one 1 Mbit/s rung, no stall.
        let q = try #require(summary.qoe)
        #expect(q.playedChunks == 10 && q.playedSwitches == 0 && q.rebufferRatio == 0)
        #expect(q.averageDeclaredBitrateBps == 1_000_000)
        #expect(q.rungs == [RungPlayTime(variantIndex: 0, bandwidthBps: 1_000_000, playedSeconds: summary.playedSeconds)])
        #expect(q.linearQoE == 10 && q.linearQoEPerChunk == 1)
    }

    @Test func slowLink_withStalls_theSessionTimeAddsUp_andQoEPaysForTheRebuffering() throws {
        let (summary, _) = try Self.run(Self.ladder(rungsBps: [1_000_000]), PiecewiseLink(pieces: [(0, 500_000)]))
        #expect(summary.stallCount >= 2)
        try Self.expectSessionTimeAddsUp(summary)
        let q = try #require(summary.qoe)
        let ratio = try #require(q.rebufferRatio)
        #expect(abs(ratio - summary.stallSeconds / (summary.playedSeconds + summary.stallSeconds)) < 1e-9)
        // μ = 1 (the only rung, Mbit/s): 10 chunks of 1 Mbit/s, less 1 per second stalled.
        #expect(abs(try #require(q.linearQoE) - (10 - summary.stallSeconds)) < 1e-9)
    }

    @Test func neverStarted_playbackStartAbsent_nothingPlayed() throws {
        // The link dies after the playlists and part of the first segment: no frame, no start; with one
        // attempt per segment the session ends in an error, having played nothing.
        let (summary, lines) = try Self.run(Self.ladder(rungsBps: [1_000_000]), PiecewiseLink(pieces: [(0, 2_000_000), (0.5, 0)])) {
            $0.retry.segment.maxAttempts = 1
        }
        #expect(summary.exitReason == .error && summary.timeToFirstFrameSeconds == nil)
        #expect(summary.timeToPlaybackStartSeconds == nil && summary.startupWaitSeconds == nil)
        #expect(summary.playbackEndedAtSeconds == nil)
        #expect(summary.playedSeconds == 0 && summary.stallSeconds == 0)
        #expect(!lines.contains { $0["type"] as? String == "playback.started" })
        #expect(summary.qoe?.playedChunks == 0 && summary.qoe?.linearQoE == nil)
    }

    @Test func selector_climbsTheLadder_onAFastLink_andTheCapStartsAtTheBottom() throws {
        let (summary, lines) = try Self.run(
            Self.ladder(rungsBps: [500_000, 1_000_000, 3_000_000], segments: 30),
            PiecewiseLink(pieces: [(0, 20_000_000)], delaySeconds: 0.02))
        let decisions = lines.filter { $0["type"] as? String == "abr.decision" }.compactMap {
            ($0["decision"] as? [String: Any])?["variantIndex"] as? Int
        }
        #expect(decisions.first == 0, "a cold start probes the lowest rung")
        #expect(decisions.last == 2, "and climbs to the top on a 20 Mbit/s link")
        #expect(summary.stallCount == 0)
        #expect(summary.capChanges > 0)
    }

    @Test func smallBottomRungSegments_stillEarnTheCapUp() throws {
        // A 150 kbit/s bottom rung has 37.5 kB segments, each under the classifier's 64 KiB minimum:
        // back to back they are judged together, so a 5 Mbit/s link still ramps up the ladder.
        let (summary, lines) = try Self.run(
            Self.ladder(rungsBps: [150_000, 600_000, 1_500_000], segments: 20),
            PiecewiseLink(pieces: [(0, 5_000_000)], delaySeconds: 0.02))
        let verdicts = lines.filter { $0["type"] as? String == "sample.verdict" }
        #expect(verdicts.contains { $0["coalescedTransfers"] as? Int == 2 })
        let decisions = lines.filter { $0["type"] as? String == "abr.decision" }.compactMap {
            ($0["decision"] as? [String: Any])?["variantIndex"] as? Int
        }
        #expect(decisions.last == 2, "the top rung, not the probe rung forever: \(decisions)")
        #expect(summary.averageBitrateBps > 1_000_000)
    }

    @Test func outage_isDetectedAsAWedge_andTheSessionRecovers() throws {
        // 4 Mbit/s, nothing at all from 6 s to 16 s, then 4 Mbit/s again.
        let link = PiecewiseLink(pieces: [(0, 4_000_000), (6, 0), (16, 4_000_000)], delaySeconds: 0.01)
        let (summary, lines) = try Self.run(Self.ladder(rungsBps: [500_000, 1_000_000], segments: 30), link) { c in
            c.preferredForwardBufferDurationSeconds = 4
        }
        let progress = lines.filter { $0["type"] as? String == "request.byteProgress" }
        #expect(!progress.isEmpty, "the byte-progress monitor caught the dead transfer")
        #expect(summary.wedgesDetected > 0)
        #expect(summary.stallCount >= 1)
        #expect(summary.exitReason == .completed, "and the session played to the end: \(summary.error ?? "")")
    }

    /// A ladder folder whose multivariant playlist lists an audio-only rung (CODECS audio only, no
    /// RESOLUTION) beside video rungs, as a packager writes it; segments are byte ranges of one file
    /// (`SimulatedLadder.load` takes a range's length), 2 s each.
    static func writeLadderWithAudioOnlyRung(in dir: URL, segments: Int) throws {
        let rungs: [(name: String, bps: Int, attributes: String)] = [
            ("audio", 128_000, "CODECS=\"mp4a.40.2\""),
            ("v1", 620_000, "RESOLUTION=640x360,CODECS=\"avc1.4d401e,mp4a.40.2\""),
            ("v2", 1_500_000, "RESOLUTION=1280x720,CODECS=\"avc1.4d401f,mp4a.40.2\"")
        ]
        var top = "#EXTM3U\n"
        for rung in rungs {
            top += "#EXT-X-STREAM-INF:BANDWIDTH=\(rung.bps),\(rung.attributes)\n\(rung.name)/prog.m3u8\n"
            let folder = dir.appendingPathComponent(rung.name)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            var media = "#EXTM3U\n#EXT-X-VERSION:4\n#EXT-X-TARGETDURATION:2\n#EXT-X-PLAYLIST-TYPE:VOD\n"
            let bytes = rung.bps / 8 * 2
            for i in 0..<segments { media += "#EXTINF:2.0,\n#EXT-X-BYTERANGE:\(bytes)@\(i * bytes)\nmedia.ts\n" }
            media += "#EXT-X-ENDLIST\n"
            try media.write(to: folder.appendingPathComponent("prog.m3u8"), atomically: true, encoding: .utf8)
        }
        try top.write(to: dir.appendingPathComponent("master.m3u8"), atomically: true, encoding: .utf8)
    }

    @Test func audioOnlyFallback_isSimulated_andRecentThroughputBringsTheSessionBackToVideo() throws {
        // PlayerSession keeps an audio-only rung beside video rungs as a fallback, gives the selector
        // the lowest of the last segment throughputs, and lifts a cap below every video rung when they
        // support the lowest video rung (OverSelectionCap.afterRecentThroughput): the virtual session
        // must do the same. 4 Mbit/s, then 250 kbit/s (not even the 620 kbit/s rung) from 20 s to 70 s,
        // then 4 Mbit/s again.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-sim-audio-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        try Self.writeLadderWithAudioOnlyRung(in: dir, segments: 90)
        let ladder = try SimulatedLadder.load(folder: dir)
        let link = PiecewiseLink(pieces: [(0, 4_000_000), (20, 250_000), (70, 4_000_000)], delaySeconds: 0.02)
        let (summary, lines) = try Self.run(ladder, link)
        let decisions = lines.filter { $0["type"] as? String == "abr.decision" }
        let reasons = decisions.compactMap { ($0["decision"] as? [String: Any])?["reason"] as? String }
        #expect(reasons.contains { $0.hasPrefix("audioOnly") }, "the audio-only rung is a fallback: \(reasons)")
        // Every decision after the first segment's transfer is given the recent-throughput evidence.
        let later = decisions.dropFirst()
        #expect(!later.isEmpty)
        #expect(
            later.allSatisfy { ($0["inputs"] as? [String: Any])?["recentSegmentThroughputBps"] is Double },
            "decisions without recentSegmentThroughputBps")
        // Audio-only while the link is down, video again after it recovers, and played to the end.
        let buffered = lines.filter { $0["type"] as? String == "segment.buffered" }.compactMap { $0["variantIndex"] as? Int }
        let lastAudio = try #require(buffered.lastIndex(of: 0), "audio-only segments buffered: \(buffered)")
        #expect(lastAudio < buffered.count - 1 && buffered[(lastAudio + 1)...].allSatisfy { $0 > 0 }, "back to video: \(buffered)")
        #expect(summary.exitReason == .completed, "\(summary.error ?? "")")
    }

    /// The multivariant playlist's requests and the retries scheduled for them, from the log.
    static func playlistRequests(_ lines: [[String: Any]]) -> (starts: Int, retries: [[String: Any]]) {
        let starts = lines.filter { $0["type"] as? String == "request.start" && $0["purpose"] as? String == "multivariant-playlist" }
        let ids = Set(starts.compactMap { $0["requestID"] as? Int })
        let retries = lines.filter { $0["type"] as? String == "request.retry" && ($0["requestID"] as? Int).map(ids.contains) == true }
        return (starts.count, retries)
    }

    @Test func playlistWedgedPastItsReRequests_goesToTheRetryPolicy_andGivesUpAsTheRealSessionDoes() throws {
        // A dead link: every playlist request wedges. PlayerSession re-requests it 6 times at once,
        // then each wedge is a failed attempt of the playlist retry policy (0.5, 1, 2, 4 s backoff,
        // 5 attempts), then the session fails; the virtual session must end the same way.
        let link = PiecewiseLink(pieces: [(0, 0)], delaySeconds: 0.01)
        let (summary, lines) = try Self.run(Self.ladder(rungsBps: [500_000, 1_000_000]), link)
        let (starts, retries) = Self.playlistRequests(lines)
        let rules = WedgeRules()
        #expect(
            starts == rules.maxPlaylistReRequests + PlayerConfiguration(url: URL(string: "sim://test/master.m3u8")!).retry.playlist.maxAttempts,
            "6 re-requests, then 5 attempts")
        let delays = retries.compactMap { $0["delaySeconds"] as? Double }
        #expect(delays == Array(repeating: 0, count: rules.maxPlaylistReRequests) + [0.5, 1, 2, 4], "\(delays)")
        #expect(retries.last?["errorKind"] as? String == "firstByteTimeout")
        #expect(summary.exitReason == .error)
        #expect(summary.error?.contains("5 of 5 attempts failed") == true, "\(summary.error ?? "")")
    }

    @Test func playlistWedgedPastItsReRequests_recoversWhenTheLinkComesBackDuringTheBackoff() throws {
        // Dead for 28 s: the 7th wedge (≈ 22 s) is not the end but a retry after backoff, and a
        // retry after the link is back loads the playlist; the session plays to the end.
        let link = PiecewiseLink(pieces: [(0, 0), (28, 4_000_000)], delaySeconds: 0.01)
        let (summary, lines) = try Self.run(Self.ladder(rungsBps: [500_000, 1_000_000]), link)
        let (starts, retries) = Self.playlistRequests(lines)
        #expect(starts > WedgeRules().maxPlaylistReRequests + 1, "retried past the re-requests: \(starts) requests")
        #expect(retries.contains { ($0["delaySeconds"] as? Double ?? 0) > 0 }, "with backoff")
        #expect(summary.exitReason == .completed, "\(summary.error ?? "")")
    }

    @Test func controllerOn_logsRiskWithFeatures_andPolicyChanges() throws {
        let modelPath = Repo.root.appendingPathComponent(ModelLocator.modelFile).path
        // Good, then a long dip under the bottom rung.
        let link = PiecewiseLink(pieces: [(0, 3_000_000), (20, 300_000), (50, 3_000_000)], delaySeconds: 0.02)
        let (summary, lines) = try Self.run(Self.ladder(rungsBps: [400_000, 1_200_000, 2_500_000], segments: 40), link, predictor: .model) { c in
            c.modelPath = modelPath
        }
        let risks = lines.filter { $0["type"] as? String == "risk.sample" }
        #expect(risks.count > 100, "a risk sample per monitor tick while playing")
        #expect(risks.allSatisfy { ($0["features"] as? [String: Any])?["bufferSeconds"] != nil })
        #expect(risks.contains { ($0["risk"] as? Double ?? 0) >= 0.75 }, "the dip raises the risk")
        #expect(!lines.filter { $0["type"] as? String == "policy.change" }.isEmpty)
        #expect(summary.predictor?.hasPrefix("model:stall-logistic") == true, "\(summary.predictor ?? "nil")")
    }

    @Test func sameInputs_sameLog() throws {
        let link = PiecewiseLink(pieces: [(0, 1_500_000), (10, 400_000), (25, 2_000_000)], delaySeconds: 0.05)
        let ladder = Self.ladder(rungsBps: [300_000, 800_000, 1_600_000], segments: 20)
        let (_, a) = try Self.run(ladder, link, predictor: .heuristic)
        let (_, b) = try Self.run(ladder, link, predictor: .heuristic)
        func body(_ lines: [[String: Any]]) -> [String] {
            lines.dropFirst().map { String(decoding: try! JSONSerialization.data(withJSONObject: $0, options: .sortedKeys), as: UTF8.self) }
        }
        #expect(body(a) == body(b), "virtual time: a session is a function of its inputs")
    }

    @Test func connection_sharesTheLinkFirstComeFirstServed_andLosesIdleCapacity() {
        var c = SimulatedConnection(link: PiecewiseLink(pieces: [(0, 8_000)])) // 1000 B/s
        let a = c.start(at: 0, bodyBytes: 840) // 1000 B with the header: done at 1 s
        #expect(abs(a.completesAt - 1) < 1e-9)
        let b = c.start(at: 5, bodyBytes: 840) // the idle 4 s are not banked
        #expect(abs(b.completesAt - 6) < 0.01)
        #expect(
            b.bytesReceived(at: 5.5, link: c.link) == 498 || b.bytesReceived(at: 5.5, link: c.link) == 500
                || b.bytesReceived(at: 5.5, link: c.link) == 502)
        c.cancel(b, at: 5.5)
        let d = c.start(at: 5.5, bodyBytes: 840) // the cancelled rest no longer occupies the link
        #expect(abs(d.completesAt - 6.5) < 0.01)
    }

    @Test func policyFile_overridesSomeFields_andRejectsUnknownOrInvalidOnes() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-policy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let good = dir.appendingPathComponent("good.json")
        try Data(#"{"preloadEnterRisk": 0.35, "downshiftResumeBufferSeconds": 6}"#.utf8).write(to: good)
        let loaded = try PolicyController.Configuration.load(jsonFile: good.path)
        var expected = PolicyController.Configuration()
        expected.preloadEnterRisk = 0.35
        expected.downshiftResumeBufferSeconds = 6
        #expect(loaded == expected)

        let typo = dir.appendingPathComponent("typo.json")
        try Data(#"{"preloadEnterRsik": 0.3}"#.utf8).write(to: typo)
        #expect(throws: PolicyFileError.self) { try PolicyController.Configuration.load(jsonFile: typo.path) }
        do { _ = try PolicyController.Configuration.load(jsonFile: typo.path) } catch { #expect(error.description.contains("preloadEnterRsik")) }

        let inverted = dir.appendingPathComponent("inverted.json")
        try Data(#"{"preloadExitRisk": 0.5, "preloadEnterRisk": 0.4}"#.utf8).write(to: inverted)
        #expect(throws: PolicyFileError.self) { try PolicyController.Configuration.load(jsonFile: inverted.path) }
        #expect(throws: PolicyFileError.self) { try PolicyController.Configuration.load(jsonFile: dir.appendingPathComponent("missing.json").path) }
    }

    // MARK: - The command

    /// `hlsplay simulate ARGS` with its session log read back (simulate takes no --har).
    func simulate(_ args: [String]) throws -> Run {
        try runHlsplay(["simulate"] + args, har: false)
    }

    static let sabreTrace = Repo.sharedData.appendingPathComponent("traces/sabre/3G_hsdpa_norway/report.2010-09-28_1407CEST.json")

    @Test func simulateCommand_playsTheSampleLadderOnARealTrace() throws {
        let ladder = try Repo.requireSamples("ladder-2s")
        guard FileManager.default.fileExists(atPath: Self.sabreTrace.path) else {
            throw TestSetupError("shared trace \(Self.sabreTrace.path) is missing")
        }
        let run = try simulate([
            ladder.path, "--trace", Self.sabreTrace.path, "--duration", "20", "--json",
            "--predictor", "model", "--model", Repo.root.appendingPathComponent(ModelLocator.modelFile).path
        ])
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let header = try #require(run.logLines.first)
        #expect((header["simulation"] as? [String: Any])?["virtualTime"] as? Bool == true)
        #expect((run.summary?["playedSeconds"] as? Double ?? 0) >= 20)
        #expect(!run.events("risk.sample").isEmpty)
        #expect(!run.events("segment.buffered").isEmpty)
        #expect(run.stdout.contains("\"stallCount\""))
    }

    /// `--cap-release-buffer` sets when the startup cap's ramp ends on a healthy buffer, and `off` keeps the ramp
    /// until each rung is earned (what builds before the release did; `vsim.py compare` runs a real session's twin
    /// with its header's value): on this trace the ramp earns 1.3 Mbit/s and no more in 30 s.
    @Test func capReleaseBuffer_endsTheRampAtThatBuffer_orNeverWhenOff() throws {
        let ladder = try Repo.requireSamples("ladder-2s")
        func capReasons(_ run: Run) -> [String] { run.events("cap.change").compactMap { $0["reason"] as? String } }
        func releaseSetting(_ run: Run) -> Any? {
            ((run.logLines.first?["configuration"] as? [String: Any])?["startupCap"] as? [String: Any])?["rampReleaseBufferSeconds"]
        }
        let early = try simulate([ladder.path, "--trace", Self.sabreTrace.path, "--duration", "30", "--cap-release-buffer", "6s"])
        #expect(early.status == 0, "stderr: \(early.stderr)")
        expectValidLog(early)
        #expect(capReasons(early).last == "released-on-healthy-buffer")
        #expect(releaseSetting(early) as? Double == 6)
        let released = try #require(early.events("cap.change").last)
        #expect(released["phase"] as? String == "uncapped" && released["capBps"] == nil)
        let off = try simulate([ladder.path, "--trace", Self.sabreTrace.path, "--duration", "30", "--cap-release-buffer", "off"])
        #expect(off.status == 0, "stderr: \(off.stderr)")
        #expect(!capReasons(off).contains("released-on-healthy-buffer"))
        #expect(capReasons(off).last == "earned-step")
        #expect(releaseSetting(off) == nil, "off: the header has no release buffer")
        let zero = try simulate([ladder.path, "--trace", Self.sabreTrace.path, "--cap-release-buffer", "0"])
        #expect(zero.status == 64)
        #expect(zero.stderr.contains("--cap-release-buffer"))
    }

    /// hlsplay-mpc plans with a 10 s buffer reserve unless `--mpc-reserve` says otherwise: the header carries the value
    /// (0 when off), every decision of the rule its reserve and shortfall, and `off` leaves both out of the decisions.
    @Test func mpcReserve_defaultTenSeconds_loggedOnEveryDecision_offRemovesIt() throws {
        let ladder = try Repo.requireSamples("ladder-2s")
        func setting(_ run: Run) -> Any? { (run.logLines.first?["configuration"] as? [String: Any])?["mpcReserveSeconds"] }
        func reserves(_ run: Run) -> [Double?] {
            run.events("abr.decision").map { (($0["abr"] as? [String: Any])?["reserveSeconds"] as? Double) }
        }
        let plain = try simulate([ladder.path, "--trace", Self.sabreTrace.path, "--duration", "20"])
        #expect(plain.status == 0, "stderr: \(plain.stderr)")
        expectValidLog(plain)
        #expect(setting(plain) as? Double == RiskAwareMPC.defaultReserveSeconds)
        #expect(!reserves(plain).isEmpty && reserves(plain).allSatisfy { $0 == RiskAwareMPC.defaultReserveSeconds })
        let shortfalls = plain.events("abr.decision").compactMap { ($0["abr"] as? [String: Any])?["reserveShortfallSeconds"] as? Double }
        #expect(shortfalls.count == reserves(plain).count && shortfalls.allSatisfy { $0 >= 0 })
        let off = try simulate([ladder.path, "--trace", Self.sabreTrace.path, "--duration", "20", "--mpc-reserve", "off"])
        #expect(off.status == 0, "stderr: \(off.stderr)")
        #expect(setting(off) as? Double == 0)
        #expect(!reserves(off).isEmpty && reserves(off).allSatisfy { $0 == nil })
        let bad = try simulate([ladder.path, "--trace", Self.sabreTrace.path, "--mpc-reserve", "deep"])
        #expect(bad.status == 64 && bad.stderr.contains("--mpc-reserve"))
    }

    @Test func simulateCommand_badInput_clearErrors() throws {
        let ladder = try Repo.requireSamples("ladder-2s")
        let noTrace = try simulate([ladder.path])
        #expect(noTrace.status == 64)
        #expect(noTrace.stderr.contains("--trace"))
        let refused = try simulate([ladder.path, "--trace", Self.sabreTrace.path, "--then", "x"])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("does not apply"))
        let missing = try simulate(["/nonexistent/ladder", "--trace", Self.sabreTrace.path])
        #expect(missing.status == 66)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-simcmd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let garbage = dir.appendingPathComponent("trace.json")
        try Data("not a trace".utf8).write(to: garbage)
        let badTrace = try simulate([ladder.path, "--trace", garbage.path])
        #expect(badTrace.status == 65)
        let policy = dir.appendingPathComponent("policy.json")
        try Data(#"{"cooldown": 3}"#.utf8).write(to: policy)
        let badPolicy = try simulate([ladder.path, "--trace", Self.sabreTrace.path, "--policy", policy.path])
        #expect(badPolicy.status == 64)
        #expect(badPolicy.stderr.contains("cooldown"))
    }
}
