import Foundation
import Glibc
import Testing
import TestSupport
@testable import HLSOrigin

/// Symbolic links under ROOT: followed while they stay inside it, refused (403) when they lead out of it.
extension OriginTests {
    /// A folder outside the fixture's root holding a secret, and links from the root to it and to /etc.
    final class LinkedRoot {
        let fixture: Fixture
        let outside: URL

        init(configuration: OriginConfiguration = .init()) throws {
            fixture = try Fixture(configuration: configuration)
            let fm = FileManager.default
            outside = fm.temporaryDirectory.appendingPathComponent("hlsorigin-outside-\(UUID().uuidString)")
            try fm.createDirectory(at: outside, withIntermediateDirectories: true)
            try Data("outside secret".utf8).write(to: outside.appendingPathComponent("secret.txt"))
            let root = fixture.root
            try fm.createSymbolicLink(atPath: root.appendingPathComponent("etc-link").path, withDestinationPath: "/etc")
            try fm.createSymbolicLink(atPath: root.appendingPathComponent("out-link").path, withDestinationPath: outside.path)
            try fm.createSymbolicLink(
                atPath: root.appendingPathComponent("secret.txt").path,
                withDestinationPath: outside.appendingPathComponent("secret.txt").path)
            // Relative, climbing out of ROOT through the link's own folder.
            try fm.createSymbolicLink(
                atPath: root.appendingPathComponent("v/up.txt").path,
                withDestinationPath: "../../hlsorigin-secret.txt")
            // Inside ROOT: an absolute link to a folder, a relative link to a file.
            try fm.createSymbolicLink(
                atPath: root.appendingPathComponent("alias").path,
                withDestinationPath: root.appendingPathComponent("v").path)
            try fm.createSymbolicLink(atPath: root.appendingPathComponent("v/same.ts").path, withDestinationPath: "seg0.ts")
        }

        deinit { try? FileManager.default.removeItem(at: outside) }

        static let outsideTargets = ["/etc-link/passwd", "/out-link/secret.txt", "/secret.txt", "/v/up.txt"]
    }

    /// Issue "Hostile input, round two", item 9: `ROOT/etc-link/passwd` served `/etc/passwd`.
    @Test func symlinkLeadingOutOfRoot_isRefused403() throws {
        let linked = try LinkedRoot()
        let c = try linked.fixture.client()
        for target in LinkedRoot.outsideTargets {
            let r = try c.get(target)
            #expect(r.status == 403, "\(target)")
            #expect(!r.bodyString.contains("root:") && !r.bodyString.contains("secret"), "\(target)")
        }
    }

    /// The refusal is logged with its reason and where the link led; a file missing behind an outside link is a
    /// 403 too (the answer does not tell what exists outside ROOT), one missing inside is a 404.
    @Test func symlinkOutOfRoot_refusalLoggedWithTheRealPath_missingFilesAnswerAlike() throws {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("hlsorigin-log-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: log) }
        let linked = try LinkedRoot(configuration: OriginConfiguration(requestLogURL: log))
        let c = try linked.fixture.client()
        #expect(try c.get("/etc-link/passwd").status == 403)
        #expect(try c.get("/out-link/no-such-file").status == 403)
        #expect(try c.get("/v/no-such-file").status == 404)
        #expect(try c.get("/v/../v/seg0.ts").status == 403)
        linked.fixture.server.stop()
        let entries = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").map {
            try JSONDecoder().decode(RequestLogEntry.self, from: Data($0.utf8))
        }.sorted { $0.accepted < $1.accepted }
        #expect(entries.map(\.status) == [403, 403, 404, 403])
        #expect(entries.map(\.refused) == ["outsideRoot", "outsideRoot", nil, "forbiddenSegment"])
        #expect(entries.map(\.resolvedPath) == ["/etc/passwd", OriginHTTP.realPath(linked.outside.path), nil, nil])
    }

    @Test func followSymlinks_servesWhatLinksLeadTo() throws {
        var configuration = OriginConfiguration()
        configuration.followSymlinks = true
        let linked = try LinkedRoot(configuration: configuration)
        let c = try linked.fixture.client()
        #expect(try c.get("/out-link/secret.txt").bodyString == "outside secret")
        #expect(try c.get("/secret.txt").bodyString == "outside secret")
        #expect(try c.get("/v/up.txt").bodyString == "secret")
        #expect(try c.get("/alias/seg0.ts").body == Fixture.segment)
        // `..` in the request itself stays forbidden.
        #expect(try c.get("/v/../secret.txt").status == 403)
    }

    @Test func executableFollowSymlinksFlag() throws {
        let linked = try LinkedRoot()
        let root = linked.fixture.root.path
        let (refusing, refusingPort) = try launchOrigin([root])
        defer { if refusing.isRunning { refusing.terminate(); refusing.waitUntilExit() } }
        let (following, followingPort) = try launchOrigin([root, "--follow-symlinks"])
        defer { if following.isRunning { following.terminate(); following.waitUntilExit() } }
        #expect(try RawClient(port: refusingPort).get("/out-link/secret.txt").status == 403)
        #expect(try RawClient(port: refusingPort).get("/alias/seg1.m4s").body == [5, 6, 7])
        #expect(try RawClient(port: followingPort).get("/out-link/secret.txt").bodyString == "outside secret")
        #expect(try runOriginToExit(["--help"]).stdout.contains("--follow-symlinks"))
    }

    @Test func confineUnit() throws {
        let linked = try LinkedRoot()
        let root = linked.fixture.root.path
        let rootReal = try #require(OriginHTTP.realPath(root))
        #expect(OriginHTTP.confine(root + "/v/seg0.ts", rootRealPath: rootReal) == .inside)
        #expect(OriginHTTP.confine(root + "/alias/seg0.ts", rootRealPath: rootReal) == .inside)
        #expect(OriginHTTP.confine(root, rootRealPath: rootReal) == .inside)
        #expect(OriginHTTP.confine(root + "/v/nothing/deeper", rootRealPath: rootReal) == .missing)
        #expect(OriginHTTP.confine(root + "/etc-link/passwd", rootRealPath: rootReal) == .outside(realPath: "/etc/passwd"))
        #expect(OriginHTTP.confine(root + "/etc-link/nothing/deeper", rootRealPath: rootReal) == .outside(realPath: "/etc"))
        // A sibling whose name starts with the root's is not inside it.
        let sibling = rootReal + "-sibling"
        try FileManager.default.createDirectory(atPath: sibling, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: sibling) }
        #expect(OriginHTTP.confine(sibling, rootRealPath: rootReal) == .outside(realPath: sibling))
        #expect(OriginHTTP.confine("/etc/passwd", rootRealPath: "/") == .inside)
    }

    @Test func symlinkInsideRoot_isServed() throws {
        let linked = try LinkedRoot()
        let c = try linked.fixture.client()
        #expect(try c.get("/alias/seg0.ts").body == Fixture.segment)
        #expect(try c.get("/v/same.ts").body == Fixture.segment)
        #expect(try c.get("/alias/same.ts").body == Fixture.segment)
    }

    /// ROOT itself given through a symbolic link (as `Samples/build` is in a worktree): served as before.
    @Test func rootGivenThroughASymlink_isServed() throws {
        let f = try Fixture()
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("hlsorigin-rootlink-\(UUID().uuidString)")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: f.root.path)
        defer { try? FileManager.default.removeItem(at: link) }
        let server = OriginServer(root: link)
        let port = try server.start()
        defer { server.stop() }
        let c = try RawClient(port: port)
        #expect(try c.get("/v/seg0.ts").body == Fixture.segment)
        #expect(try c.get("/v/index.m3u8").bodyString == Fixture.playlist)
    }
}
