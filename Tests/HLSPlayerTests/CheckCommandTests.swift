import Foundation
import Testing
import TestSupport

/// `hlsplay check` through the real binary on the shared fixtures.
@Suite struct CheckCommandTests {
    func check(_ args: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        _ = try Repo.requireSamples("short-2s")
        let result = try runProcess(Repo.hlsplay, ["check"] + args)
        return (result.status, result.stdout, result.stderr)
    }

    var fixtures: URL { Repo.sharedData.appendingPathComponent("playlists") }

    @Test func acceptedAndRejected_withLineAndRule_exit65WhenAnyRejected() throws {
        let good = fixtures.appendingPathComponent("kuu-hls-parser/examples/8.1-Simple-Media-Playlist.m3u8").path
        let bad = fixtures.appendingPathComponent("kuu-hls-parser/strict-fail/extm3u-not-first-line.m3u8").path
        let ok = try check([good])
        #expect(ok.status == 0)
        #expect(ok.stdout.contains("OK media playlist, 3 segments, ENDLIST"))
        let mixed = try check(["--json", good, bad])
        #expect(mixed.status == 65)
        let lines = mixed.stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(lines.count == 2)
        #expect(lines[0]["accepted"] as? Bool == true)
        #expect(lines[1]["accepted"] as? Bool == false)
        #expect((lines[1]["rule"] as? String ?? "").contains("RFC 8216"))
        #expect((lines[1]["errorLine"] as? Int ?? 0) >= 1)
    }

    @Test func usageErrors_exit64_unreadable_exit66() throws {
        let none = try check([])
        #expect(none.status == 64)
        // A short pointer to the help, not the usage squeezed onto one line with its newlines escaped.
        #expect(none.stderr.contains("Try 'hlsplay check --help'."), "\(none.stderr)")
        #expect(!none.stderr.contains("\\n"), "\(none.stderr)")
        #expect(try check(["--bogus", "x"]).stderr.contains("'--bogus'"))
        #expect(try check(["/nonexistent.m3u8"]).status == 66)
    }
}
