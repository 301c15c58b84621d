// BOLA-E's abandonment in a real session: the same cancel the monitor already performs (the request's
// cancellation token), decided by the session core, against a real hls-origin whose trace collapses while a
// high-rung segment downloads. The virtual-time counterpart is AbrSimulationTests.bolaE_linkCollapse_….

import Foundation
import HLSOrigin
import Testing
import TestSupport

@Suite(.serialized, .tags(.realTime)) struct AbrAbandonRealTimeTests {
    @Test func bolaE_realSession_linkCollapse_cancelsAndRefetchesLower() throws {
        let ladder = try Repo.requireSamples("ladder-2s")
        var config = OriginConfiguration()
        // 20 Mbit/s while BOLA-E climbs (by buffer) to 3.7 Mbit/s, then 0.5 Mbit/s from 1.7 s after the origin
        // starts: the segment requested next on a 15 s buffer would take 13 s, so it is abandoned for a lower rung
        // (in a manual run with the collapse 1.5 s into the session: 3.7 → 1.3 Mbit/s, insufficientBuffer, 0.73 s
        // after its first byte).
        config.trace = try ThroughputTrace(
            name: "collapse",
            pieces: [.init(durationSeconds: 1.7, rateBitsPerSecond: 20e6), .init(durationSeconds: 600, rateBitsPerSecond: 0.5e6)])
        let run = try withOrigin(ladder, configuration: config) { server in
            try runHlsplay(
                [
                    server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--cold",
                    "--predictor", "off", "--abr", "bola-e"
                ], timeoutSeconds: 180)
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        try AbrSimulationTests.expectAbandonAndRefetch(run, rule: "bola-e")
        #expect(run.summary?["exitReason"] as? String == "completed")
    }
}
