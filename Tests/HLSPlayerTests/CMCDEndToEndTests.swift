import Foundation
import HLSOrigin
import Testing
import TestSupport

/// CMCD on the wire, read back from the origin's own request log.
@Suite(.serialized, .tags(.realTime)) struct CMCDEndToEndTests {
    @Test func cmcdQuery_everyRequestCarriesTheValuesThePlayerUsed() throws {
        let samples = try Repo.requireSamples("short-2s")
        let (run, entries) = try withLoggedOrigin(samples) { server in
            try runHlsplay([server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--cmcd", "query"])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(entries.count == run.summary?["requests"] as? Int)
        func cmcd(_ e: RequestLogEntry) -> [String: String] {
            let query = (e.query ?? "").split(separator: "&").first { $0.hasPrefix("CMCD=") }
            let payload = query.map { String($0.dropFirst(5)).removingPercentEncoding ?? "" } ?? ""
            var out: [String: String] = [:]
            for pair in payload.split(separator: ",") {
                let kv = pair.split(separator: "=", maxSplits: 1)
                out[String(kv[0])] = kv.count > 1 ? String(kv[1]) : "true"
            }
            return out
        }
        let all = entries.map(cmcd)
        #expect(all.allSatisfy { $0["sf"] == "h" && $0["sid"] != nil && $0["cid"] != nil }, "\(all)")
        #expect(Set(all.compactMap { $0["sid"] }).count == 1, "one session id")
        #expect(all.first?["ot"] == "m")
        let segments = zip(entries, all).filter { $0.0.path.hasSuffix(".ts") }.map(\.1)
        #expect(segments.count == 4)
        // The first segment is needed to start; later ones are not.
        #expect(segments.first?["su"] == "true")
        #expect(segments.dropFirst().allSatisfy { $0["su"] == nil })
        #expect(segments.allSatisfy { $0["ot"] == "av" && $0["d"] == "2000" && $0["st"] == "v" && $0["br"] != nil && $0["tb"] != nil })
        // tb is the top rung the player is allowed (no --peak-bitrate here: the ladder's top), even while the
        // cold start's probe cap holds the choice lower; dl, the deadline, is the buffer length at rate 1.
        let master = try String(contentsOf: samples.appendingPathComponent("master.m3u8"), encoding: .utf8)
        let top =
            master.split(separator: "\n").compactMap { line -> Int? in
                guard let r = line.range(of: "BANDWIDTH=") else { return nil }
                return Int(line[r.upperBound...].prefix { $0.isNumber })
            }.max() ?? 0
        #expect(segments.allSatisfy { $0["tb"] == String(Int((Double(top) / 1000).rounded())) }, "tb: \(segments.map { $0["tb"] ?? "-" })")
        #expect(run.events("cap.change").first?["capBps"] as? Int ?? Int.max < top, "the cold start was capped below the top")
        #expect(segments.allSatisfy { $0["dl"] == $0["bl"] }, "dl: \(segments.map { ($0["dl"] ?? "-", $0["bl"] ?? "-") })")
        #expect(segments.contains { $0["dl"] != nil })
        // Once measured, the throughput is reported, and the buffer length grows from 0.
        #expect(segments.dropFirst().allSatisfy { $0["mtp"] != nil })
        #expect(Int(segments.last?["bl"] ?? "") ?? 0 > 0)
        // br is the BANDWIDTH of the variant each segment came from, in kbps.
        let buffered = run.events("segment.buffered").compactMap { $0["bandwidthBps"] as? Int }
        #expect(segments.compactMap { Int($0["br"] ?? "") } == buffered.map { Int((Double($0) / 1000).rounded()) })
    }
}
