import Foundation
import HLSOrigin
import Testing
import TestSupport

/// The session's LL-HLS part loader against hls-origin's LL-HLS mode over loopback (short-2s, 0.5 s parts, a window of
/// 10 segments, so the server offers delta updates), through the real binary.
// Time limits in this suite and the origin/network suites guard against a hang, not a slow run: a test counts
// from its start, and on two cores it can wait minutes for a thread while the rest of the suite plays.
@Suite(.timeLimit(.minutes(10)), .tags(.realTime))
struct LowLatencyLoaderTests {
    @Test func followsTheLiveEdgePartByPart_withBlockingReloadsAndMergedDeltaUpdates() throws {
        let root = try Repo.requireSamples("short-2s")
        var config = OriginConfiguration()
        config.live = LiveConfiguration(windowSegments: 10, lowLatency: LowLatencyConfiguration(partTargetSeconds: 0.5))
        let run = try withOrigin(root, configuration: config) { server in
            try runHlsplay([
                server.baseURL.appendingPathComponent("v0/prog.m3u8").absoluteString, "--headless", "--json", "--cold", "--no-redact",
                "--duration", "6"
            ])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let start = try #require(run.events("lowlatency.start").first)
        #expect(start["partHoldBackSeconds"] as? Double == 1.5)
        #expect((start["distanceFromEndSeconds"] as? Double ?? 0) >= 1.5)

        // Contiguous: each buffered unit is the successor of the one before (a part, or a whole segment at a boundary).
        let units = run.events("segment.buffered").filter { $0["track"] == nil }.compactMap { e -> (msn: Int, part: Int?)? in
            (e["mediaSequence"] as? Int).map { ($0, e["part"] as? Int) }
        }
        #expect(units.filter { $0.part != nil }.count >= 6, "\(units)")
        for (a, b) in zip(units, units.dropFirst()) {
            let ok: Bool
            switch (a.part, b.part) {
            case (nil, _): ok = b.msn == a.msn + 1 && (b.part ?? 0) == 0
            case let (j?, k?): ok = (b.msn == a.msn && k == j + 1) || (b.msn == a.msn + 1 && k == 0)
            case (_?, nil): ok = b.msn == a.msn + 1
            }
            #expect(ok, "\(a) then \(b)")
        }

        // At the edge it waits on the server: blocking reloads that ask for delta updates, every one merged back
        // into the full window (no note of a delta that did not merge, no reload asked for whole).
        let reloads = run.events("request.start").filter {
            $0["purpose"] as? String == "media-playlist" && ($0["url"] as? String)?.contains("_HLS_msn=") == true
        }
        #expect(reloads.count >= 3, "\(reloads.count) blocking reloads")
        #expect(reloads.allSatisfy { ($0["url"] as? String)?.contains("_HLS_skip=YES") == true })
        #expect(!run.events("error").contains { ($0["message"] as? String)?.contains("delta update") == true })
        let loaded = run.events("playlist.loaded").filter { ($0["url"] as? String)?.contains("_HLS_msn=") == true }
        #expect(!loaded.isEmpty)
        #expect(loaded.allSatisfy { $0["segments"] as? Int == 10 }, "\(loaded.map { $0["segments"] ?? "-" })")
        #expect(run.summary?["stallCount"] as? Int == 0)
    }
}
