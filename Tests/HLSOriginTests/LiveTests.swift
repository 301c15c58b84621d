import Foundation
import Glibc
import Testing
@testable import HLSOrigin

/// A VOD ladder of tiny fake segments (the origin never parses media): 3 segments of 0.5 s.
final class LiveFixture {
    static let segmentSeconds = 0.5
    static let vodPlaylist = """
        #EXTM3U
        #EXT-X-VERSION:3
        #EXT-X-TARGETDURATION:1
        #EXT-X-MEDIA-SEQUENCE:0
        #EXT-X-PLAYLIST-TYPE:VOD
        #EXTINF:0.5,
        s0.ts
        #EXTINF:0.5,
        s1.ts
        #EXTINF:0.5,
        s2.ts
        #EXT-X-ENDLIST

        """
    static let master = "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=100000\nv0/index.m3u8\n"

    let root: URL
    let server: OriginServer
    let port: UInt16
    let vod = VODPlaylist.parse(LiveFixture.vodPlaylist)!

    init(live: LiveConfiguration, configuration: OriginConfiguration = .init()) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hlsorigin-live-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("v0"), withIntermediateDirectories: true)
        try Data(Self.master.utf8).write(to: root.appendingPathComponent("master.m3u8"))
        try Data(Self.vodPlaylist.utf8).write(to: root.appendingPathComponent("v0/index.m3u8"))
        for i in 0..<3 { try Data(Self.segmentBytes(i)).write(to: root.appendingPathComponent("v0/s\(i).ts")) }
        var c = configuration
        c.live = live
        server = OriginServer(root: root, configuration: c)
        port = try server.start()
    }

    static func segmentBytes(_ i: Int) -> [UInt8] { [UInt8](repeating: UInt8(0x40 + i), count: 1000 + i) }

    func client() throws -> RawClient { try RawClient(port: port, timeout: 3) }

    /// Fetches the live playlist; returns it with the server-clock bracket of the request.
    func fetchPlaylist(_ c: RawClient) throws -> (text: String, before: Double, after: Double) {
        let before = server.now()
        let r = try c.get("/v0/index.m3u8")
        let after = server.now()
        #expect(r.status == 200)
        return (r.bodyString, before, after)
    }

    func sleep(untilServerTime t: Double) {
        let left = t - server.now()
        if left > 0 { usleep(useconds_t(left * 1e6)) }
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: root)
    }
}

func tagValue(_ playlist: String, _ tag: String) -> Int? {
    playlist.split(separator: "\n").first { $0.hasPrefix(tag + ":") }.flatMap { Int($0.dropFirst(tag.count + 1)) }
}

func liveURIs(_ playlist: String) -> [String] {
    playlist.split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
}

@Suite(.timeLimit(.minutes(10)), .tags(.realTime))
struct LiveTests {
    let vod = VODPlaylist.parse(LiveFixture.vodPlaylist)!
    let date = Date(timeIntervalSince1970: 1_700_000_000)

    @Test func parseKeepsHeaderAndSegmentsOnlyForVOD() throws {
        #expect(vod.segments.map(\.uri) == ["s0.ts", "s1.ts", "s2.ts"])
        #expect(vod.segments.map(\.durationSeconds) == [0.5, 0.5, 0.5])
        #expect(vod.header == ["#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:1"])
        #expect(VODPlaylist.parse(LiveFixture.master) == nil)
        #expect(VODPlaylist.parse("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\na.ts\n") == nil) // already live
    }

    @Test func slidingWindowAdvancesAndLoopsWithDiscontinuities() throws {
        let config = LiveConfiguration(windowSegments: 2)
        let p0 = vod.livePlaylist(atSeconds: 0, configuration: config, startDate: date)
        #expect(tagValue(p0, "#EXT-X-MEDIA-SEQUENCE") == 0)
        #expect(tagValue(p0, "#EXT-X-DISCONTINUITY-SEQUENCE") == 0)
        #expect(liveURIs(p0) == ["s0.ts?live=0", "s1.ts?live=1"])
        #expect(!p0.contains("ENDLIST") && !p0.contains("PLAYLIST-TYPE"))

        // 1.6 s: 3 segments done; the window is loop 1's s0 (after a discontinuity) and s1.
        let p1 = vod.livePlaylist(atSeconds: 1.6, configuration: config, startDate: date)
        #expect(tagValue(p1, "#EXT-X-MEDIA-SEQUENCE") == 3)
        #expect(tagValue(p1, "#EXT-X-DISCONTINUITY-SEQUENCE") == 0)
        #expect(liveURIs(p1) == ["s0.ts?live=3", "s1.ts?live=4"])
        let lines = p1.split(separator: "\n").map(String.init)
        let disc = try #require(lines.firstIndex(of: "#EXT-X-DISCONTINUITY"))
        #expect(disc < lines.firstIndex(of: "s0.ts?live=3")!)
        // Program date-times: the last segment ends at the live edge (start + 1.5 s at t = 1.6 s).
        let pdts = lines.filter { $0.hasPrefix("#EXT-X-PROGRAM-DATE-TIME:") }
        #expect(pdts == ["#EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:20.500Z", "#EXT-X-PROGRAM-DATE-TIME:2023-11-14T22:13:21.000Z"])

        // 2.1 s: the discontinuity's segment has left → DISCONTINUITY-SEQUENCE 1.
        let p2 = vod.livePlaylist(atSeconds: 2.1, configuration: config, startDate: date)
        #expect(tagValue(p2, "#EXT-X-MEDIA-SEQUENCE") == 4)
        #expect(tagValue(p2, "#EXT-X-DISCONTINUITY-SEQUENCE") == 1)
        #expect(!p2.contains("#EXT-X-DISCONTINUITY\n"))
        // Many loops later.
        let p3 = vod.livePlaylist(atSeconds: 100.2, configuration: config, startDate: date)
        #expect(tagValue(p3, "#EXT-X-MEDIA-SEQUENCE") == 200)
        #expect(tagValue(p3, "#EXT-X-DISCONTINUITY-SEQUENCE") == 66)
        #expect(liveURIs(p3) == ["s2.ts?live=200", "s0.ts?live=201"])
    }

    @Test func eventModeGrowsFromTheStart() {
        let config = LiveConfiguration(windowSegments: 2, event: true)
        let p = vod.livePlaylist(atSeconds: 1.6, configuration: config, startDate: date)
        #expect(p.contains("#EXT-X-PLAYLIST-TYPE:EVENT"))
        #expect(tagValue(p, "#EXT-X-MEDIA-SEQUENCE") == 0)
        #expect(liveURIs(p).count == 5)
        #expect(p.components(separatedBy: "#EXT-X-DISCONTINUITY\n").count == 2)
    }

    @Test func staleWindowsFreezeTheLiveClock() {
        let config = LiveConfiguration(stalePlaylists: [StalePlaylist(atSeconds: 2, durationSeconds: 3)])
        #expect(config.liveClock(atSeconds: 1.9) == 1.9)
        #expect(config.liveClock(atSeconds: 2.0) == 2)
        #expect(config.liveClock(atSeconds: 4.99) == 2)
        #expect(config.liveClock(atSeconds: 5.0) == 5)
    }

    /// Real time, through the server: the sequence numbers follow the wall clock, segments leave and then 404.
    @Test func windowAdvancesInRealTimeAndOldSegmentsAnswer404() throws {
        let f = try LiveFixture(live: LiveConfiguration(windowSegments: 2))
        let c = try f.client()
        // Master served unchanged; plain files still served.
        #expect(try c.get("/master.m3u8").bodyString == LiveFixture.master)
        #expect(try c.get("/v0/s1.ts").body == LiveFixture.segmentBytes(1))

        var sawDiscontinuitySequence = 0
        var lastSequence = -1
        // ≥ 2.6 s of polling, longer (up to 8 s) if a slow machine has not yet shown sequence 5 (due at 2.5 s).
        while f.server.now() < 2.6 || (lastSequence < 5 && f.server.now() < 8) {
            let (text, before, after) = try f.fetchPlaylist(c)
            let seq = try #require(tagValue(text, "#EXT-X-MEDIA-SEQUENCE"))
            let dsn = try #require(tagValue(text, "#EXT-X-DISCONTINUITY-SEQUENCE"))
            #expect(
                seq >= f.vod.advancedSegments(atSeconds: before) && seq <= f.vod.advancedSegments(atSeconds: after),
                "sequence \(seq) fetched between \(before) and \(after) s")
            #expect(seq >= lastSequence)
            #expect(dsn == f.vod.discontinuitySequence(firstSequence: seq))
            #expect(liveURIs(text).first == "s\(seq % 3).ts?live=\(seq)")
            lastSequence = seq
            sawDiscontinuitySequence = max(sawDiscontinuitySequence, dsn)
            usleep(150_000)
        }
        #expect(lastSequence >= 5)
        #expect(sawDiscontinuitySequence >= 1)

        // The newest segment is served (its VOD file); then it leaves the window and answers 404.
        let (text, _, _) = try f.fetchPlaylist(c)
        let newest = try #require(liveURIs(text).last)
        let k = try #require(Int(newest.split(separator: "=").last!))
        let r = try c.get("/v0/\(newest)")
        #expect(r.status == 200)
        #expect(r.body == LiveFixture.segmentBytes(k % 3))
        // Not produced yet (k + 2 needs two more advances, ≥ 0.5 s away; k + 1 could appear any moment).
        #expect(try c.get("/v0/s\((k + 2) % 3).ts?live=\(k + 2)").status == 404)
        #expect(try c.get("/v0/s\((k + 1) % 3).ts?live=\(k)").status == 404) // wrong file for that sequence
        // It leaves the window at start(k + 1) but stays available, as RFC 8216 §6.2.2 requires, for its own
        // duration plus that of the playlist that listed it last (segments k+1 … k+2 here), then answers 404.
        f.sleep(untilServerTime: f.vod.startSeconds(ofSequence: k + 1) + 0.05)
        let (later, _, _) = try f.fetchPlaylist(c)
        #expect(!liveURIs(later).contains(newest), "left the window")
        #expect(try c.get("/v0/\(newest)").status == 200, "served for the RFC's period after leaving the window")
        f.sleep(untilServerTime: f.vod.startSeconds(ofSequence: k + 3) + 0.5 + 0.05)
        #expect(try c.get("/v0/\(newest)").status == 404)
    }

    /// `--expire-at-once` (a server breaking §6.2.2, for tests of a player's expiry handling): 404 as soon as the
    /// segment has left the window.
    @Test func expireAtOnce_answers404AsSoonAsASegmentLeavesTheWindow() throws {
        let f = try LiveFixture(live: LiveConfiguration(windowSegments: 2, keepsExpiredSegments: false))
        let c = try f.client()
        let (text, _, _) = try f.fetchPlaylist(c)
        let first = try #require(liveURIs(text).first)
        let k = try #require(Int(first.split(separator: "=").last!))
        f.sleep(untilServerTime: f.vod.startSeconds(ofSequence: k + 1) + 0.05)
        #expect(try c.get("/v0/\(first)").status == 404)
    }

    /// The availability rule itself, in content time: in the window; then the RFC's period; never before it is made.
    @Test func expiredSegmentAvailability_followsRFC8216Section6_2_2() {
        let vod = VODPlaylist.parse(LiveFixture.vodPlaylist)! // three 0.5 s segments, looping
        let keep = LiveConfiguration(windowSegments: 2)
        let strict = LiveConfiguration(windowSegments: 2, keepsExpiredSegments: false)
        // Segment 4 is in the window [3, 4] at 1.6 s, [4, 5] at 2.1 s; it leaves at 2.5 s (start of 5).
        #expect(vod.segmentAvailable(4, atSeconds: 2.1, configuration: strict))
        #expect(!vod.segmentAvailable(4, atSeconds: 2.6, configuration: strict))
        // Kept for 0.5 s (its duration) + 1.0 s (the two-segment playlist after it): until 4.0 s.
        #expect(vod.segmentAvailable(4, atSeconds: 2.6, configuration: keep))
        #expect(vod.segmentAvailable(4, atSeconds: 3.95, configuration: keep))
        #expect(!vod.segmentAvailable(4, atSeconds: 4.05, configuration: keep))
        // Not yet produced: beyond the window's end is never available.
        #expect(!vod.segmentAvailable(7, atSeconds: 2.1, configuration: keep))
        #expect(!vod.segmentAvailable(-1, atSeconds: 2.1, configuration: keep))
    }

    @Test func eventPlaylistGrowsInRealTime() throws {
        let f = try LiveFixture(live: LiveConfiguration(windowSegments: 2, event: true))
        let c = try f.client()
        let (a, _, _) = try f.fetchPlaylist(c)
        f.sleep(untilServerTime: 1.1)
        let (b, before, _) = try f.fetchPlaylist(c)
        #expect(tagValue(a, "#EXT-X-MEDIA-SEQUENCE") == 0 && tagValue(b, "#EXT-X-MEDIA-SEQUENCE") == 0)
        #expect(liveURIs(b).count >= f.vod.advancedSegments(atSeconds: before) + 2)
        #expect(liveURIs(b).count > liveURIs(a).count)
        #expect(try c.get("/v0/s0.ts?live=0").status == 200) // EVENT keeps every segment
    }

    /// The stale-playlist fault: from 0.6 s for 1.5 s the window stays where it was at 0.6 s, then jumps to now.
    @Test func stalePlaylistStopsAdvancingForItsDuration() throws {
        let logURL = FileManager.default.temporaryDirectory.appendingPathComponent("stale-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: logURL) }
        let f = try LiveFixture(
            live: LiveConfiguration(
                windowSegments: 2,
                stalePlaylists: [StalePlaylist(atSeconds: 0.6, durationSeconds: 1.5)]),
            configuration: OriginConfiguration(requestLogURL: logURL))
        let c = try f.client()
        f.sleep(untilServerTime: 0.7)
        let (a, _, _) = try f.fetchPlaylist(c)
        f.sleep(untilServerTime: 1.4)
        let (b, _, afterB) = try f.fetchPlaylist(c)
        #expect(afterB < 2.1, "machine too slow for this check")
        #expect(tagValue(a, "#EXT-X-MEDIA-SEQUENCE") == 1)
        #expect(b == a) // frozen: byte-identical
        f.sleep(untilServerTime: 2.25)
        let (d, before, _) = try f.fetchPlaylist(c)
        #expect(try #require(tagValue(d, "#EXT-X-MEDIA-SEQUENCE")) >= f.vod.advancedSegments(atSeconds: before))
        #expect(tagValue(d, "#EXT-X-MEDIA-SEQUENCE")! >= 4)
        f.server.stop()
        let faults = try String(contentsOf: logURL, encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(RequestLogEntry.self, from: Data($0.utf8)).fault
        }
        #expect(faults == ["stalePlaylist(frozenAt=0.6s)", "stalePlaylist(frozenAt=0.6s)", nil])
    }
}
