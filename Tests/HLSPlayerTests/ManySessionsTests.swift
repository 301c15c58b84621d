import Foundation
import Testing

/// Many independent sessions in one process.
@Suite(.serialized) struct ManySessionsTests {
    @Test func fourDemuxOnlySessions_eachWithItsOwnLog_aggregateAgrees() throws {
        let samples = try Repo.requireSamples("short-2s")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-many-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try withOrigin(samples) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
                            "--sessions", "4", "--ramp", "1", "--no-decode", "--duration", "3",
                            "--log", dir.appendingPathComponent("s.jsonl").path])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let aggregate = try #require(try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any])
        #expect(aggregate["type"] as? String == "aggregate")
        #expect(aggregate["sessions"] as? Int == 4)
        #expect(aggregate["exitReasons"] as? [String: Int] == ["durationReached": 4])
        var requests = 0
        var sessionIDs = Set<String>()
        for i in 1...4 {
            let lines = try String(contentsOf: dir.appendingPathComponent("s-\(i).jsonl"), encoding: .utf8).split(separator: "\n")
                .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(lines.first?["type"] as? String == "header")
            let summary = try #require(lines.last)
            #expect(summary["type"] as? String == "summary")
            #expect(summary["decodedVideoFrames"] as? Int == 0, "demux only")
            #expect((summary["playedSeconds"] as? Double ?? 0) >= 3)
            requests += summary["requests"] as? Int ?? 0
            sessionIDs.insert(lines.first?["startedAt"] as? String ?? "")
        }
        #expect(aggregate["requests"] as? Int == requests)
        // Staggered over the 1 s ramp: the sessions did not all start at the same instant.
        #expect(sessionIDs.count > 1)
    }
}
