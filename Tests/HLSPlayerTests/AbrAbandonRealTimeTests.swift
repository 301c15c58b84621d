// BOLA-E's abandonment in a real session: the same cancel the monitor already performs (the request's
// cancellation token), decided by the session core, against a real hls-origin on which the first high-rung segment
// request trickles. The virtual-time counterpart is AbrSimulationTests.bolaE_linkCollapse_….

import Foundation
import HLSOrigin
import Testing
import TestSupport

@Suite(.serialized, .tags(.realTime)) struct AbrAbandonRealTimeTests {
    @Test func bolaE_realSession_highRungSegmentTrickles_cancelsAndRefetchesLower() throws {
        let ladder = try Repo.requireSamples("ladder-2s")
        // A 20 Mbit/s link on which BOLA-E climbs (by buffer) above 1.3 Mbit/s; the first request for a 3.7 or
        // 7.2 Mbit/s segment then trickles at 0.5 Mbit/s (50 KB every 0.8 s): the rest would take far longer than
        // a segment, so BOLA-E abandons it for a lower rung. The fault is tied to that request, not to a time
        // after the origin starts, so how fast the session gets going does not decide whether a high-rung
        // segment is in flight when the link turns bad (a trace collapsing at 1.7 s did, on a loaded machine).
        var config = OriginConfiguration(rateBitsPerSecond: 20e6)
        config.faults = [FaultRule(pathPattern: "*/v[23]/seg_*.ts", requestIndex: 0, action: .trickle(bytes: 50_000, everySeconds: 0.8))]
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
