// Shared helpers for the playlist tests: locating the third-party fixtures
// (never silently skipped) and small parse helpers.

import Foundation
import Testing
import TestSupport
@testable import HLSCore

enum Fixtures {
    /// `<repo>/../shared/data/playlists`.
    static let directory = Repo.sharedData.appendingPathComponent("playlists", isDirectory: true)

    /// Fails the test (not skips) when the fixture folder is missing.
    static func requireDirectory() throws -> URL {
        var isDir: ObjCBool = false
        let exists = FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDir)
        try #require(
            exists && isDir.boolValue,
            "playlist fixtures not found at \(directory.path): expected <repo>/../shared/data/playlists (see shared/data/playlists/README.md)")
        return directory
    }

    static func data(_ relative: String) throws -> Data {
        let dir = try requireDirectory()
        return try Data(contentsOf: dir.appendingPathComponent(relative))
    }

    static func json(_ relative: String) throws -> [String: Any] {
        let obj = try JSONSerialization.jsonObject(with: try data(relative))
        return try #require(obj as? [String: Any], "\(relative) is not a JSON object")
    }

    /// Every `.m3u8` under the fixture folder, relative paths, sorted.
    static func allPlaylists() throws -> [String] {
        let dir = try requireDirectory()
        let en = try #require(FileManager.default.enumerator(atPath: dir.path))
        var out: [String] = []
        while let p = en.nextObject() as? String { if p.hasSuffix(".m3u8") { out.append(p) } }
        return out.sorted()
    }
}

let testBase = URL(string: "http://example.com/path/playlist.m3u8")!

func parseText(
    _ text: String, base: URL = testBase, parent: [String: String] = [:],
    limits: PlaylistLimits = .default
) throws -> Playlist {
    try PlaylistParser.parse(text, baseURL: base, parentVariables: parent, limits: limits)
}

func media(
    _ text: String, base: URL = testBase, parent: [String: String] = [:],
    limits: PlaylistLimits = .default
) throws -> MediaPlaylist {
    guard case .media(let m) = try parseText(text, base: base, parent: parent, limits: limits) else {
        throw TestFailure("expected a Media Playlist")
    }
    return m
}

func multivariant(
    _ text: String, base: URL = testBase, parent: [String: String] = [:],
    limits: PlaylistLimits = .default
) throws -> MultivariantPlaylist {
    guard case .multivariant(let m) = try parseText(text, base: base, parent: parent, limits: limits) else {
        throw TestFailure("expected a Multivariant Playlist")
    }
    return m
}

/// The PlaylistError thrown by `body`, or nil when it succeeds.
func playlistError(_ body: () throws(PlaylistError) -> some Any) -> PlaylistError? {
    do { _ = try body(); return nil } catch { return error }
}

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}
