import Foundation
import Testing
import TestSupport

/// The player pass of the conformance report (`Tools/characterize/conformance_play.py`) on a handful of
/// representative fixtures, end to end: the harness builds each origin root from the
/// fixture and the sample media, runs the real `hls-origin` and `hlsplay` binaries over
/// loopback, and classifies the outcome. These assert what docs/conformance.md reports.
@Suite("Conformance player pass", .tags(.realTime))
struct ConformancePlayTests {
    /// One fixture (path under ../shared/data/playlists) per kind the report covers.
    static let multivariant = "videojs-m3u8-parser/master.m3u8" // generated media playlists
    static let fragmentedMP4 = "hlsjs/fmp4-discontinuities-pdt.m3u8" // EXT-X-MAP, live, discontinuities
    static let byteRanges = "hlsjs/byterange-without-offset.m3u8" // EXT-X-BYTERANGE without offsets
    static let encrypted = "kuu-hls-parser/examples/8.3-Playlist-with-encrypted-Media-Segments.m3u8" // AES-128, hosts rewritten
    static let rejected = "kuu-hls-parser/strict-fail/extm3u-not-first-line.m3u8"

    @Test("representative fixtures play, or are rejected, as the report says")
    func representativeFixtures() throws {
        let results = try Self.runHarness([Self.multivariant, Self.fragmentedMP4, Self.byteRanges, Self.encrypted, Self.rejected])
        for (fixture, r) in results {
            // Whatever the outcome: a valid session log, nothing but loopback contacted,
            // every path the player asked for served.
            #expect(r["logProblem"] is NSNull, "\(fixture): \(r["logProblem"] ?? "")")
            #expect(r["remoteContacted"] as? Bool == false, "\(fixture)")
            #expect((r["notFound"] as? [String])?.isEmpty == true, "\(fixture): \(r["notFound"] ?? "")")
        }

        let master = try #require(results[Self.multivariant])
        #expect(master["outcome"] as? String == "played", "\(master["why"] ?? "")")
        #expect((master["notes"] as? [String])?.contains("4 media playlist(s) generated (not in the fixture set)") == true)
        #expect((master["videoFrames"] as? Int ?? 0) > 0)
        #expect((master["segmentsBuffered"] as? Int ?? 0) >= 2)

        let fmp4 = try #require(results[Self.fragmentedMP4])
        #expect(fmp4["outcome"] as? String == "played", "\(fmp4["why"] ?? "")")
        #expect(fmp4["live"] as? Bool == true)
        #expect((fmp4["requested"] as? [String])?.contains { $0.hasPrefix("/hlsjs/init") } == true, "the EXT-X-MAP was fetched")
        #expect((fmp4["videoFrames"] as? Int ?? 0) > 0)

        // The fixture's ranges (140060, 96256, 143068 bytes) are shorter than a 2 s sample
        // segment, so each holds a truncated one: frames decode, with a decode error at the cut.
        let ranges = try #require(results[Self.byteRanges])
        #expect(["played", "partial"].contains(ranges["outcome"] as? String), "\(ranges["why"] ?? "")")
        #expect((ranges["segmentsBuffered"] as? Int ?? 0) >= 1)
        #expect((ranges["videoFrames"] as? Int ?? 0) > 0)
        #expect((ranges["notes"] as? [String])?.contains { $0.hasPrefix("byte range shorter than the sample segment") } == true)

        let aes = try #require(results[Self.encrypted])
        #expect(aes["outcome"] as? String == "played", "\(aes["why"] ?? "")")
        #expect((aes["notes"] as? [String])?.first == "host rewritten: media.example.com, priv.example.com → 127.0.0.1")
        #expect(
            (aes["requested"] as? [String])?.contains { $0.hasPrefix("/_host/priv.example.com/key.php") } == true,
            "the AES-128 key was fetched from the rewritten host")
        #expect((aes["decodeErrors"] as? Int) == 0)

        let bad = try #require(results[Self.rejected])
        #expect(bad["outcome"] as? String == "rejected")
        #expect(bad["status"] as? Int == 65)
        #expect((bad["error"] as? String)?.contains("expected #EXTM3U") == true, "\(bad["error"] ?? "")")
    }

    /// Longest the harness may take over the handful of fixtures, seconds (far more than it needs).
    static let conformanceTimeoutSeconds = 600.0

    /// Runs the harness on `fixtures` (two at a time) and returns its result per fixture.
    static func runHarness(_ fixtures: [String]) throws -> [String: [String: Any]] {
        _ = try Repo.requireSamples("short-2s")
        let origin = Repo.hlsOrigin
        guard FileManager.default.isExecutableFile(atPath: origin.path) else {
            throw TestSetupError("\(origin.path) is missing: run `swift build` first")
        }
        guard FileManager.default.fileExists(atPath: Repo.samples("variants/fmp4/init.mp4").path) else {
            throw TestSetupError("Samples/build/variants is missing: run Samples/make-all.sh")
        }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("conformance-play-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: out) }
        let script = Repo.root.appendingPathComponent("Tools/characterize/conformance_play.py")
        let played = try runProcess(
            URL(fileURLWithPath: "/usr/bin/env"),
            ["python3", script.path, "--only", fixtures.joined(separator: ","), "--jobs", "2", "--out", out.path],
            timeoutSeconds: conformanceTimeoutSeconds)
        guard played.status == 0 else {
            throw TestSetupError("conformance_play.py exited \(played.status): \(played.stderr)")
        }
        var results: [String: [String: Any]] = [:]
        for line in try String(contentsOf: out, encoding: .utf8).split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let fixture = try #require(object["case"] as? String)
            #expect(object["outcome"] as? String != "harness-error", "\(fixture): \(object["why"] ?? "")")
            results[fixture] = object
        }
        #expect(Set(results.keys) == Set(fixtures))
        return results
    }
}
