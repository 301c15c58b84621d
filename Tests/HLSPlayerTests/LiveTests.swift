import Foundation
import Testing
import TestSupport

/// A live stream made on the fly: a writer thread publishes a sliding window
/// over the short sample ladder's segments (looping, with EXT-X-DISCONTINUITY
/// at each loop), advancing one segment per target duration on the wall clock,
/// and a real origin serves the folder.
final class LiveWindowWriter: @unchecked Sendable {
    let root: URL
    let segmentSeconds = 2.0
    let windowSegments = 3
    let filesPerVariant: Int
    private let start = Date()
    private var stopped = false
    private let lock = NSLock()
    private var thread: Thread?

    init(samples: URL) throws {
        let fm = FileManager.default
        root = fm.temporaryDirectory.appendingPathComponent("hlsplay-live-\(UUID().uuidString)")
        try fm.createDirectory(at: root, withIntermediateDirectories: true)
        try fm.copyItem(at: samples.appendingPathComponent("master.m3u8"), to: root.appendingPathComponent("master.m3u8"))
        var count = 0
        for v in 0..<4 {
            let dir = root.appendingPathComponent("v\(v)")
            try fm.createDirectory(at: dir, withIntermediateDirectories: true)
            let files = try fm.contentsOfDirectory(atPath: samples.appendingPathComponent("v\(v)").path).filter { $0.hasSuffix(".ts") }.sorted()
            for f in files {
                try fm.createSymbolicLink(at: dir.appendingPathComponent(f), withDestinationURL: samples.appendingPathComponent("v\(v)/\(f)"))
            }
            count = files.count
        }
        filesPerVariant = count
        try publish()
    }

    /// The newest media sequence number published now.
    var newestMediaSequence: Int { windowSegments - 1 + Int(Date().timeIntervalSince(start) / segmentSeconds) }

    func publish() throws {
        let newest = newestMediaSequence
        let first = max(0, newest - windowSegments + 1)
        // Discontinuities precede every segment that starts a new loop; those before the window count in DISCONTINUITY-SEQUENCE.
        let discontinuitiesBefore = first / filesPerVariant
        for v in 0..<4 {
            var text =
                "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(first)\n#EXT-X-DISCONTINUITY-SEQUENCE:\(discontinuitiesBefore)\n"
            for msn in first...newest {
                if msn > 0 && msn % filesPerVariant == 0 && msn != first { text += "#EXT-X-DISCONTINUITY\n" }
                text += "#EXTINF:2.000000,\nseg_\(String(format: "%05d", msn % filesPerVariant)).ts\n"
            }
            let url = root.appendingPathComponent("v\(v)/prog.m3u8")
            try text.write(to: url, atomically: true, encoding: .utf8)
        }
    }

    func startUpdating() {
        let t = Thread { [self] in
            while !lock.withLock({ stopped }) {
                try? publish()
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        thread = t
        t.start()
    }

    func stop() {
        lock.withLock { stopped = true }
        try? FileManager.default.removeItem(at: root)
    }
}

@Suite(.serialized, .tags(.realTime)) struct LiveTests {
    @Test func live_startsAtHoldBack_reloadsAndFollowsWindow_acrossDiscontinuities() throws {
        let samples = try Repo.requireSamples("short-2s")
        let writer = try LiveWindowWriter(samples: samples)
        writer.startUpdating()
        defer { writer.stop() }
        let run = try withOrigin(writer.root) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--duration", "10"])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        let summary = try #require(run.summary)
        #expect(summary["isLive"] as? Bool == true)
        #expect(summary["exitReason"] as? String == "durationReached")
        #expect((summary["playedSeconds"] as? Double ?? 0) >= 10)
        #expect(summary["stallCount"] as? Int == 0)

        // The first segment played is HOLD-BACK (3 target durations = the whole 3-segment window) from the live edge.
        let buffered = run.events("segment.buffered")
        #expect(buffered.first?["mediaSequence"] as? Int == 0)
        // It followed the window: segments published after the start were played, past the loop point (8 s of content).
        let sequences = buffered.compactMap { $0["mediaSequence"] as? Int }
        #expect(sequences == Array(sequences.first!...sequences.last!), "no segment skipped or repeated: \(sequences)")
        #expect(sequences.last! >= 6)
        // Reloads: several media playlist loads that changed, at the RFC cadence (not faster than half a target duration).
        let reloads = run.events("playlist.loaded").filter { $0["kind"] as? String == "media" }
        #expect(reloads.count >= 3)
        let times = reloads.compactMap { $0["t"] as? Double }
        for (a, b) in zip(times, times.dropFirst())
        where (reloads.first { $0["t"] as? Double == b }?["variantIndex"] as? Int)
            == (reloads.first { $0["t"] as? Double == a }?["variantIndex"] as? Int)
        {
            #expect(b - a >= 0.9, "reloads \(a) → \(b) closer than half a target duration")
        }
        // Every frame decoded across the discontinuity (10 s at 24 fps, allowing the final partial second).
        #expect((summary["decodedVideoFrames"] as? Int ?? 0) >= 230)
    }
}
