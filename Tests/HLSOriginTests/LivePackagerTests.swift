import Foundation
import Glibc
import Testing
import TestSupport
@testable import HLSOrigin

/// hls-origin serving a folder that FFmpeg's own HLS muxer is writing live (Samples/live-packager.sh).
@Suite(.timeLimit(.minutes(10)), .tags(.realTime))
struct LivePackagerTests {
    static func poll<T>(seconds: Double, _ body: () throws -> T?) rethrows -> T? {
        let deadline = monotonicNow() + seconds
        while monotonicNow() < deadline {
            if let v = try body() { return v }
            usleep(100_000)
        }
        return nil
    }

    @Test func servesTheGrowingPlaylistOfFFmpegsLiveMuxer() throws {
        try #require(
            findOnPath("ffmpeg") != nil, "ffmpeg is not on PATH: this test runs Samples/live-packager.sh, which needs it (apt-get install ffmpeg)")
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("hlsorigin-packager-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let script = Repo.root.appendingPathComponent("Samples/live-packager.sh")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [script.path, out.path, "20"]
        var env = ProcessInfo.processInfo.environment
        env["SEGMENT_SECONDS"] = "1"
        env["LIST_SIZE"] = "3"
        process.environment = env
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        defer {
            if process.isRunning { process.interrupt(); process.waitUntilExit() }
        }

        let server = OriginServer(root: out)
        let port = try server.start()
        defer { server.stop() }
        let c = try RawClient(port: port, timeout: 5)

        func mediaPlaylist() throws -> (sequence: Int, segments: [String])? {
            let r = try c.get("/v0/index.m3u8")
            guard r.status == 200, let seq = tagValue(r.bodyString, "#EXT-X-MEDIA-SEQUENCE") else { return nil }
            return (seq, liveURIs(r.bodyString))
        }
        let first = try Self.poll(seconds: 20) { try mediaPlaylist().flatMap { $0.segments.count >= 2 ? $0 : nil } }
        let a = try #require(
            first,
            "the packager wrote no playlist with 2 segments in 20 s: \(String(decoding: errors.fileHandleForReading.availableData, as: UTF8.self))")

        let master = try c.get("/master.m3u8")
        #expect(master.status == 200)
        #expect(master.headers["content-type"] == "application/vnd.apple.mpegurl")
        #expect(master.bodyString.components(separatedBy: "#EXT-X-STREAM-INF").count == 4)

        // It grows: the window slides (list size 3, old segments deleted) while we watch.
        let later = try Self.poll(seconds: 10) { () throws -> (sequence: Int, segments: [String])? in
            guard let p = try mediaPlaylist(), p.sequence >= a.sequence + 2, p.segments.last != a.segments.last else { return nil }
            return p
        }
        let b = try #require(later, "playlist did not advance: still \(a)")
        #expect(b.segments.count <= 3)
        #expect(!b.segments.contains(a.segments[0]))

        let newest = try #require(b.segments.last)
        let seg = try c.get("/v0/\(newest)")
        #expect(seg.status == 200)
        #expect(seg.body.count > 1000 && seg.body.count % 188 == 0 && seg.body.first == 0x47) // MPEG-TS
        // delete_segments: a segment that left the window is gone from the folder, so it is a 404.
        let gone = try Self.poll(seconds: 8) { try c.get("/v0/\(a.segments[0])").status == 404 ? true : nil }
        #expect(gone == true)
    }
}
