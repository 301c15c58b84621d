import Foundation
import Testing
import TestSupport

/// Many independent sessions in one process.
@Suite(.serialized, .tags(.realTime)) struct ManySessionsTests {
    @Test func fourDemuxOnlySessions_eachWithItsOwnLog_aggregateAgrees() throws {
        let samples = try Repo.requireSamples("short-2s")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-many-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try withOrigin(samples) { base in
            try runHlsplay([
                base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
                "--sessions", "4", "--ramp", "1", "--no-decode", "--duration", "3",
                "--log", dir.appendingPathComponent("s.jsonl").path
            ])
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

    /// Demux-only sessions skip what only decoding needs (FFmpeg's stream-info probe)
    /// but must buffer the same segments with the same packets as decoding sessions,
    /// on real 1080p media, and play to the end on the media clock those packets drive.
    @Test func demuxOnlyAndFullDecode_bufferTheSameSegmentsAndPackets() throws {
        let samples = try Repo.requireSamples("short-2s")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-many-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }

        /// (media sequence, video packets, audio packets, corrupt packets) of every buffered segment, per session.
        func play(_ name: String, _ extra: [String]) throws -> [(segments: [[Int]], summary: [String: Any])] {
            let run = try withOrigin(samples) { base in
                try runHlsplay(
                    [
                        base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
                        "--sessions", "2", "--variant", "3", "--log", dir.appendingPathComponent("\(name).jsonl").path
                    ] + extra)
            }
            #expect(run.status == 0, "\(name) stderr: \(run.stderr)")
            return try (1...2).map { i in
                let lines = try String(contentsOf: dir.appendingPathComponent("\(name)-\(i).jsonl"), encoding: .utf8).split(separator: "\n")
                    .compactMap { try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
                let segments = lines.filter { $0["type"] as? String == "segment.buffered" }.map { e in
                    ["mediaSequence", "videoPackets", "audioPackets", "corruptPackets"].map { e[$0] as? Int ?? -1 }
                }
                return (segments, try #require(lines.last))
            }
        }
        let demuxOnly = try play("demux", ["--no-decode"])
        let decoded = try play("decode", [])

        let reference = try #require(decoded.first?.segments)
        #expect(reference.map { $0[0] } == [0, 1, 2, 3], "the 8 s sample is 4 segments")
        #expect(reference.allSatisfy { $0[1] == 48 && $0[2] > 80 && $0[3] == 0 }, "\(reference)")
        for session in demuxOnly + decoded {
            #expect(session.segments == reference)
            #expect(session.summary["type"] as? String == "summary")
            #expect(session.summary["exitReason"] as? String == "completed")
            #expect(session.summary["segmentsBuffered"] as? Int == 4)
            #expect(session.summary["stallCount"] as? Int == 0)
            #expect(abs((session.summary["playedSeconds"] as? Double ?? 0) - 8) < 0.5)
        }
        #expect(demuxOnly.allSatisfy { $0.summary["decodedVideoFrames"] as? Int == 0 })
        // How many of the 192 frames get decoded before the end depends on the machine's load; that it decoded is what differs.
        #expect(
            decoded.allSatisfy { ($0.summary["decodedVideoFrames"] as? Int ?? 0) > 0 }, "\(decoded.map { $0.summary["decodedVideoFrames"] ?? "-" })")
    }
}
