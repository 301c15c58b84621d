import Foundation
import Glibc
import HLSCore
import HLSMedia
import Testing
import TestSupport
@testable import HLSOrigin

/// The sample ladder (Samples/build/short-2s: 4 × 2 s MPEG-TS segments per rung, a keyframe every 2 s); built with
/// the sample recipe into a temp folder when the tree has not been built.
enum LLSamples {
    static let ladder: Result<URL, SampleError> = Result {
        let built = Repo.root.appendingPathComponent("Samples/build/short-2s")
        if FileManager.default.fileExists(atPath: built.appendingPathComponent("master.m3u8").path) { return built }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("hlsorigin-llhls-short-2s")
        let made = try runProcess(
            URL(fileURLWithPath: "/bin/bash"),
            [
                Repo.root.appendingPathComponent("Samples/make-ladder.sh").path, out.path,
                "--duration", "8", "--segment", "2"
            ], timeoutSeconds: 600)
        guard made.status == 0 else { throw SampleError(description: "make-ladder.sh failed (needs ffmpeg)") }
        return out
    }.mapError { $0 as? SampleError ?? SampleError(description: "\($0)") }

    struct SampleError: Error, CustomStringConvertible { var description: String }
}

/// An origin in LL-HLS mode over the sample ladder, with a request log.
final class LLFixture {
    let server: OriginServer
    let port: UInt16
    let logURL: URL
    let ladder: URL

    init(window: Int = 10, stale: [StalePlaylist] = [], faults: [FaultRule] = []) throws {
        ladder = try LLSamples.ladder.get()
        logURL = FileManager.default.temporaryDirectory.appendingPathComponent("llhls-\(UUID().uuidString).jsonl")
        var c = OriginConfiguration(requestLogURL: logURL, faults: faults)
        c.live = LiveConfiguration(
            windowSegments: window, stalePlaylists: stale,
            lowLatency: LowLatencyConfiguration(partTargetSeconds: 0.5))
        server = OriginServer(root: ladder, configuration: c)
        port = try server.start()
    }

    var base: URL { URL(string: "http://127.0.0.1:\(port)/v0/prog.m3u8")! }

    func client(timeout: Double = 10) throws -> RawClient { try RawClient(port: port, timeout: timeout) }

    /// GET, parsed with HLSCore's parser.
    func playlist(_ c: RawClient, query: String = "") throws -> (MediaPlaylist, text: String, elapsed: Double) {
        var r: RawClient.Response?
        let t = try elapsed { r = try c.get("/v0/prog.m3u8" + (query.isEmpty ? "" : "?" + query)) }
        let response = try #require(r)
        try #require(response.status == 200, "status \(response.status) for ?\(query)")
        guard case let .media(p) = try PlaylistParser.parse(response.bodyString, baseURL: base) else {
            throw LLSamples.SampleError(description: "not a media playlist")
        }
        return (p, response.bodyString, t)
    }

    /// The origin's low-latency model of v0 (the schedule the answers must follow).
    var model: LowLatencyPlaylist {
        get throws { try #require(server.live?.lowLatencyPlaylist(at: ladder.appendingPathComponent("v0/prog.m3u8").path)) }
    }

    func sleep(untilServerTime t: Double) {
        let left = t - server.now()
        if left > 0 { usleep(useconds_t(left * 1e6)) }
    }

    func log() throws -> [RequestLogEntry] {
        server.stop()
        return try String(contentsOf: logURL, encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(RequestLogEntry.self, from: Data($0.utf8))
        }
    }

    /// Path and query of a URI the playlist gave (resolved against the playlist).
    static func target(_ url: URL) -> String { url.path + (url.query.map { "?" + $0 } ?? "") }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: logURL)
    }
}

@Suite(.timeLimit(.minutes(10)), .tags(.realTime))
struct LLHLSTests {
    // MARK: Part cutting (pure, on a real segment)

    @Test func realSegmentIsCutIntoFourHalfSecondPartsAtFrameStarts() throws {
        let ladder = try LLSamples.ladder.get()
        let bytes = try [UInt8](Data(contentsOf: ladder.appendingPathComponent("v1/seg_00001.ts")))
        let plan = try #require(SegmentPartPlan.plan(segment: bytes, durationSeconds: 2, partTargetSeconds: 0.5))
        #expect(plan.parts.count == 4)
        #expect(plan.parts.map(\.independent) == [true, false, false, false])
        for p in plan.parts { #expect(abs(p.durationSeconds - 0.5) < 0.001) }
        #expect(plan.parts.first?.fileRange.lowerBound == 0 && plan.parts.last?.fileRange.upperBound == bytes.count)
        for (a, b) in zip(plan.parts, plan.parts.dropFirst()) {
            #expect(a.fileRange.upperBound == b.fileRange.lowerBound)
            #expect(b.fileRange.lowerBound % 188 == 0)
        }
        // Later parts carry PAT + PMT (two packets) ahead of their file bytes.
        #expect(plan.segmentBytes(segment: bytes).count == bytes.count + 2 * 188 * 3)
        #expect(Array(plan.segmentBytes(segment: bytes).prefix(plan.parts[0].fileRange.count)) == Array(bytes[plan.parts[0].fileRange]))
        // A 0.3 s target: parts never longer than it (frames are 1/24 s), the last part takes the rest.
        let fine = try #require(SegmentPartPlan.plan(segment: bytes, durationSeconds: 2, partTargetSeconds: 0.3))
        #expect(fine.parts.allSatisfy { $0.durationSeconds <= 0.3 + SegmentPartPlan.boundaryToleranceSeconds })
        #expect(abs(fine.parts.reduce(0) { $0 + $1.durationSeconds } - 2) < 1e-9)
        // Not MPEG-TS.
        #expect(SegmentPartPlan.plan(segment: [UInt8](repeating: 0x40, count: 188 * 10), durationSeconds: 2, partTargetSeconds: 0.5) == nil)
        #expect(SegmentPartPlan.plan(segment: Array(bytes.dropLast(5)), durationSeconds: 2, partTargetSeconds: 0.5) == nil)
    }

    @Test func deliveryDirectivesParse() throws {
        #expect(try DeliveryDirectives.parse(target: "/v/p.m3u8") == DeliveryDirectives(msn: nil, part: nil, skip: false))
        #expect(
            try DeliveryDirectives.parse(target: "/v/p.m3u8?_HLS_msn=7&_HLS_part=2&_HLS_skip=v2&x=1")
                == DeliveryDirectives(msn: 7, part: 2, skip: true))
        for bad in ["?_HLS_part=1", "?_HLS_msn=-1", "?_HLS_msn=abc", "?_HLS_msn=1&_HLS_part=x", "?_HLS_skip=NO", "?_HLS_foo=1"] {
            #expect(throws: DeliveryDirectives.Invalid.self) { try DeliveryDirectives.parse(target: "/v/p.m3u8" + bad) }
        }
    }

    // MARK: Over loopback

    @Test func playlistCarriesTheLowLatencyTags() throws {
        let f = try LLFixture()
        let c = try f.client()
        let (p, text, _) = try f.playlist(c)
        #expect(p.version == 9)
        #expect(p.warnings.isEmpty, "\(p.warnings)")
        let control = try #require(p.serverControl)
        #expect(control.canBlockReload)
        #expect(control.partHoldBackSeconds == 1.5)
        #expect(control.canSkipUntilSeconds == 12)
        #expect(p.partTargetSeconds == 0.5)
        #expect(p.segments.count == 10)
        #expect(p.segments.allSatisfy { $0.programDateTime != nil })
        // Parts listed for the last three target durations (6 s = 3 segments) and the segment in progress.
        #expect(p.segments.map { $0.parts.count } == [0, 0, 0, 0, 0, 0, 0, 4, 4, 4])
        for s in p.segments.suffix(3) {
            #expect(s.parts.map(\.independent) == [true, false, false, false])
            #expect(abs(s.parts.reduce(0) { $0 + $1.durationSeconds } - s.durationSeconds) < 1e-6)
        }
        let hint = try #require(p.preloadHints.first)
        #expect(hint.type == "PART" && p.preloadHints.count == 1)
        let last = try #require(p.segments.last?.mediaSequence)
        #expect(hint.uri.query == "live=\(last + 1)&part=\(p.trailingParts.count)")
        #expect(p.renditionReports.map { $0.uri.path } == ["/v1/prog.m3u8", "/v2/prog.m3u8", "/v3/prog.m3u8"])
        for r in p.renditionReports {
            let reported = LowLatencyPosition(msn: try #require(r.lastMediaSequence), part: r.lastPart)
            let own =
                p.trailingParts.isEmpty
                ? LowLatencyPosition(msn: last, part: 3)
                : LowLatencyPosition(msn: last + 1, part: p.trailingParts.count - 1)
            #expect(reported == own, "aligned rungs report the same last part")
        }
        #expect(text.contains("#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5,CAN-SKIP-UNTIL=12\n"))
    }

    /// A blocking reload for the part after next: held until that part exists (per the origin's schedule), then
    /// answered with a playlist listing it, promptly.
    @Test func blockingReloadHoldsUntilThePartExists() throws {
        let f = try LLFixture()
        let c = try f.client()
        let model = try f.model
        for _ in 0..<3 {
            let (p, _, _) = try f.playlist(c)
            let next = try #require(LowLatencyRules.nextReload(after: p, playlistAgeSeconds: 0))
            #expect(next.skip == .yes)
            // One part further than the next one: at least a part duration away.
            let parts = model.plan(ofSequence: next.msn).parts.count
            let target = next.part! + 1 < parts ? (next.msn, next.part! + 1) : (next.msn + 1, 0)
            let availableAt = model.clockWhenAvailable(msn: target.0, part: target.1)
            let before = f.server.now()
            let (q, _, waited) = try f.playlist(c, query: "_HLS_msn=\(target.0)&_HLS_part=\(target.1)")
            let after = f.server.now()
            #expect(after >= availableAt, "answered at \(after) s, part due at \(availableAt) s")
            #expect(waited <= availableAt - before + 0.3, "held \(waited) s for a part due in \(availableAt - before) s")
            #expect(waited >= 0.3)
            // The answer lists the part.
            let listed =
                q.trailingParts.count > target.1 && (q.segments.last?.mediaSequence ?? -1) + 1 == target.0
                || q.segments.contains { $0.mediaSequence == target.0 }
            #expect(listed, "part \(target.0).\(target.1) not in the answer")
        }
        let log = try f.log().filter { $0.query?.hasPrefix("_HLS_msn") == true }
        #expect(log.count == 3)
        for e in log {
            let blocked = try #require(e.blockedSeconds)
            #expect(blocked >= 0.3 && blocked <= 1.3, "blocked \(blocked) s")
        }
    }

    @Test func badDirectivesAnswer400AtOnce() throws {
        let f = try LLFixture()
        let c = try f.client()
        let model = try f.model
        // Just after a segment completes: segment m is in production with no part done for ~0.5 s, so
        // "ahead" below is known exactly. Last complete segment: m - 1.
        let e0 = model.edge(clock: f.server.now())
        f.sleep(untilServerTime: model.clockWhenAvailable(msn: e0.segment, part: nil) + 0.01)
        let m = model.edge(clock: f.server.now()).segment
        #expect(model.advancePartLimit == 6) // 3 / PART-TARGET
        for query in ["_HLS_part=1", "_HLS_msn=\(m + 2)", "_HLS_msn=\(m + 1)&_HLS_part=3", "_HLS_skip=NO", "_HLS_msn=x"] {
            var status = 0
            let t = try elapsed { status = try c.get("/v0/prog.m3u8?" + query).status }
            #expect(status == 400, "?\(query)")
            #expect(t < 0.25, "?\(query) took \(t) s")
        }
        #expect(f.server.now() < model.clockWhenAvailable(msn: m, part: 0), "machine too slow for this check")
        // The limits themselves are accepted (held, not rejected): msn = last + 2; part m+1.2 is 6 parts ahead.
        for query in ["_HLS_msn=\(m + 1)", "_HLS_msn=\(m + 1)&_HLS_part=2"] {
            let held = try f.client(timeout: 0.3)
            held.request("GET", "/v0/prog.m3u8?" + query)
            #expect(throws: RawClient.ClientError.self, "?\(query) answered at once") { try held.readResponse() }
        }
    }

    /// A playlist frozen by a stale-playlist fault cannot satisfy a blocking reload: 503 after three target
    /// durations (6 s).
    @Test func blockingReloadGivesUp503AfterThreeTargetDurations() throws {
        let f = try LLFixture(stale: [StalePlaylist(atSeconds: 0, durationSeconds: 60)])
        let c = try f.client()
        let (p, _, _) = try f.playlist(c)
        let next = try #require(LowLatencyRules.nextReload(after: p, playlistAgeSeconds: 0))
        var status = 0
        let t = try elapsed { status = try c.get("/v0/prog.m3u8?_HLS_msn=\(next.msn)&_HLS_part=\(next.part!)").status }
        #expect(status == 503)
        #expect(t >= 6 - 0.05 && t < 7.5, "gave up after \(t) s")
        let entry = try #require(f.log().last)
        #expect(entry.status == 503)
        #expect(entry.blockedSeconds.map { $0 >= 5.95 } == true)
        #expect(entry.fault == "stalePlaylist(frozenAt=0.0s)")
    }

    /// The preload-hinted part is requested before it exists: held, then its bytes; a part beyond it is 404.
    @Test func hintedPartBlocksUntilAvailable() throws {
        let f = try LLFixture()
        let c = try f.client()
        let model = try f.model
        let (p, _, _) = try f.playlist(c)
        let hint = try #require(p.preloadHints.first?.uri)
        let k = try #require(LiveServer.sequence(inTarget: LLFixture.target(hint)))
        let j = try #require(LiveServer.part(inTarget: LLFixture.target(hint)))
        let availableAt = model.clockWhenAvailable(msn: k, part: j)
        let before = f.server.now()
        var r: RawClient.Response?
        let t = try elapsed { r = try c.get(LLFixture.target(hint)) }
        let response = try #require(r)
        #expect(response.status == 200)
        #expect(f.server.now() >= availableAt)
        #expect(t <= max(0, availableAt - before) + 0.3)
        let file = try [UInt8](Data(contentsOf: f.ladder.appendingPathComponent("v0/seg_\(String(format: "%05d", k % 4)).ts")))
        #expect(response.body == model.plan(ofSequence: k).bytes(ofPart: j, segment: file))
        // Two parts past the hint: not announced, not there.
        let beyond = j + 2 < 4 ? "live=\(k)&part=\(j + 2)" : "live=\(k + 1)&part=\(j + 2 - 4)"
        #expect(try c.get(hint.path + "?" + beyond).status == 404)
        #expect(try c.get(hint.path + "?live=\(k)&part=9").status == 404)
    }

    /// A delta update skips the segments that end 12 s (CAN-SKIP-UNTIL) or more before the playlist end; HLSCore
    /// parses it and merges it into the previous full playlist, giving the full playlist.
    @Test func deltaUpdateSkipsOldSegmentsAndMergesBack() throws {
        let f = try LLFixture(window: 10)
        let c = try f.client()
        let (full, _, _) = try f.playlist(c)
        let (delta, text, _) = try f.playlist(c, query: "_HLS_skip=YES")
        let skip = try #require(delta.skip)
        // Window 10 × 2 s = 20 s: segments ending 8 s or less into it are skipped.
        #expect(skip.skippedSegments == 4)
        #expect(delta.segments.count == 6)
        #expect(text.contains("#EXT-X-SKIP:SKIPPED-SEGMENTS=4\n"))
        #expect(delta.warnings.isEmpty, "\(delta.warnings)")
        let merged = try LowLatencyRules.merge(delta: delta, into: full)
        #expect(merged.segments.count == 10)
        let fresh = try f.playlist(c).0
        for s in merged.segments {
            if let same = fresh.segments.first(where: { $0.mediaSequence == s.mediaSequence }) {
                #expect(
                    same.uri == s.uri && same.discontinuitySequence == s.discontinuitySequence
                        && same.durationSeconds == s.durationSeconds, "segment \(s.mediaSequence)")
            }
        }
        #expect(zip(merged.segments, merged.segments.dropFirst()).allSatisfy { $0.mediaSequence + 1 == $1.mediaSequence })
        // A window no longer than the Skip Boundary has nothing to skip.
        let small = try LLFixture(window: 6)
        let (d6, _, _) = try small.playlist(try small.client(), query: "_HLS_skip=v2")
        #expect(d6.skip == nil && d6.segments.count == 6)
    }

    /// Each part of a complete segment demuxes on its own (HLSMedia's SegmentDemuxer, FFmpeg), part 0 starts
    /// with a keyframe, and the parts concatenate to the segment.
    @Test func partsDemuxAndConcatenateToTheSegment() throws {
        let f = try LLFixture()
        let c = try f.client()
        let (p, _, _) = try f.playlist(c)
        let segment = try #require(p.segments.last)
        #expect(segment.parts.count == 4)
        var joined: [UInt8] = []
        var videoPackets = 0
        for (j, part) in segment.parts.enumerated() {
            let r = try c.get(LLFixture.target(part.uri))
            #expect(r.status == 200)
            joined += r.body
            let demuxed = try SegmentDemuxer.demux(segment: Data(r.body))
            let video = demuxed.packets(of: .video)
            #expect(!video.isEmpty && !demuxed.packets(of: .audio).isEmpty, "part \(j)")
            #expect(demuxed.corruptPacketCount == 0)
            #expect(video.first?.isKeyframe == part.independent, "part \(j) starts with a keyframe iff INDEPENDENT")
            // 24 fps: 12 frames per 0.5 s part.
            #expect(video.count == 12, "part \(j): \(video.count) video packets")
            videoPackets += video.count
        }
        let whole = try c.get(LLFixture.target(segment.uri))
        #expect(whole.status == 200)
        #expect(whole.body == joined)
        let demuxed = try SegmentDemuxer.demux(segment: Data(whole.body))
        #expect(demuxed.packets(of: .video).count == videoPackets)
        // The low-latency segment is the VOD file with PAT + PMT before each later part.
        let file = try Data(contentsOf: f.ladder.appendingPathComponent("v0").appendingPathComponent(segment.uri.lastPathComponent))
        #expect(whole.body.count == file.count + 3 * 2 * 188)
    }

    /// Faults still apply in low-latency mode: a scripted 503 on the first playlist request wins over blocking.
    @Test func faultsApplyBeforeBlocking() throws {
        let f = try LLFixture(faults: [
            FaultRule(
                pathPattern: "/v0/prog.m3u8", requestIndex: 0,
                action: .status(code: 503, retryAfterSeconds: 1))
        ])
        let c = try f.client()
        var status = 0
        let t = try elapsed { status = try c.get("/v0/prog.m3u8?_HLS_msn=99&_HLS_part=0").status }
        #expect(status == 503 && t < 0.25)
        #expect(try c.get("/v0/prog.m3u8").status == 200)
        let log = try f.log()
        #expect(log.first?.fault == "status(503,retryAfter=1)")
    }
}
