import Foundation
import HLSCore
import HLSNet
import HLSOrigin
import Testing
import TestSupport
@testable import HLSPlayer

/// `LowLatencyLoader` against hls-origin's LL-HLS mode over loopback (short-2s, 0.5 s parts, window 10).
// Time limits in this suite and the origin/network suites guard against a hang, not a slow run: a test counts
// from its start, and on two cores it can wait minutes for a thread while the rest of the suite plays.
@Suite(.timeLimit(.minutes(10)), .tags(.realTime))
struct LowLatencyLoaderTests {
    @Test func followsTheLiveEdgePartByPartWithBlockingReloadsAndDeltas() throws {
        let root = try Repo.requireSamples("short-2s")
        var config = OriginConfiguration()
        config.live = LiveConfiguration(windowSegments: 10, lowLatency: LowLatencyConfiguration(partTargetSeconds: 0.5))
        let server = OriginServer(root: root, configuration: config)
        try server.start()
        defer { server.stop() }
        let clock = SystemWaitingClock()
        let loader = LowLatencyLoader(
            client: HTTPClient(clock: clock), playlistURL: server.baseURL.appendingPathComponent("v0/prog.m3u8"),
            clock: clock)
        let first = try loader.loadPlaylist().get()
        #expect(first.request == nil)
        let start = try #require(loader.start())
        #expect(start.distanceFromEndSeconds >= start.holdBackSeconds)
        #expect(start.holdBackSeconds == 1.5)

        var loaded: [LowLatencyPosition] = []
        var viaHint = 0
        var reloads: [LowLatencyLoader.ReloadOutcome] = []
        let began = clock.now()
        while clock.now().seconds(since: began) < 4 {
            switch try loader.loadNext().get() {
            case let .media(position, _, response, hinted):
                #expect(response.statusCode == 200)
                #expect(response.body.first == 0x47, "MPEG-TS")
                loaded.append(position)
                if hinted { viaHint += 1 }
            case .waitForReload:
                reloads.append(try loader.reload().get())
            case let .fellBehind(next, firstAvailable):
                Issue.record("fell behind at \(next), first available \(firstAvailable)")
                return
            }
        }
        #expect(loaded.first == start.position || loaded.first == LowLatencyPosition(msn: start.position.msn))
        // Contiguous: each load is the successor of the previous one (a part, or a whole segment at a boundary).
        for (a, b) in zip(loaded, loaded.dropFirst()) {
            let ok: Bool
            switch (a.part, b.part) {
            case (nil, _): ok = b.msn == a.msn + 1 && (b.part ?? 0) == 0
            case let (j?, k?): ok = (b.msn == a.msn && k == j + 1) || (b.msn == a.msn + 1 && k == 0)
            case (_?, nil): ok = b.msn == a.msn + 1
            }
            #expect(ok, "\(a) then \(b)")
        }
        // At the edge the loader waits on the server: hinted parts and blocking reloads with merged deltas.
        #expect(viaHint >= 3)
        #expect(reloads.count >= 3)
        #expect(reloads.allSatisfy { $0.request?.skip == .yes && $0.mergedDelta && $0.deltaMergeFailure == nil })
        #expect(reloads.allSatisfy { $0.playlist.segments.count == 10 && $0.playlist.skip == nil })
    }
}
