import Foundation
import Glibc
import Testing
@testable import HLSOrigin

/// One serialized suite: the pacing and fault tests measure time, so keep tests from competing for the 2 cores.
@Suite(.serialized, .timeLimit(.minutes(10)))
struct OriginTests {}

extension OriginTests {
    @Test func getReturnsBodyAndContentLength() throws {
        let f = try Fixture()
        let c = try f.client()
        let r = try c.get("/v/seg0.ts")
        #expect(r.status == 200)
        #expect(r.headers["content-length"] == "100000")
        #expect(r.headers["content-type"] == "video/mp2t")
        #expect(r.headers["accept-ranges"] == "bytes")
        #expect(r.body == Fixture.segment)
        #expect(f.server.requestCount == 1)
        #expect(f.server.baseURL.absoluteString == "http://127.0.0.1:\(f.port)/")
    }

    @Test func headHasHeadersButNoBody() throws {
        let f = try Fixture()
        let c = try f.client(timeout: 0.3)
        c.request("HEAD", "/v/seg0.ts")
        let r = try c.readResponse(head: true)
        #expect(r.status == 200)
        #expect(r.headers["content-length"] == "100000")
        // Nothing else arrives on the (kept-alive) connection.
        let rest = c.readToEnd()
        #expect(rest.bytes.isEmpty)
        #expect(rest.end == .timeout)
    }

    @Test func keepAliveServesTwoRequestsOnOneSocketAndHonoursClose() throws {
        let f = try Fixture()
        let c = try f.client()
        let a = try c.get("/v/index.m3u8")
        #expect(a.status == 200)
        #expect(a.bodyString == Fixture.playlist)
        #expect(a.headers["connection"] == "keep-alive")
        let b = try c.get("/v/seg0.ts", headers: ["Connection: close"])
        #expect(b.status == 200)
        #expect(b.body.count == 100_000)
        #expect(b.headers["connection"] == "close")
        let rest = c.readToEnd()
        #expect(rest.end == .eof)
        #expect(rest.bytes.isEmpty)
        #expect(f.server.requestCount == 2)
    }

    @Test func pipelinedRequestsAreAnsweredInOrder() throws {
        let f = try Fixture()
        let c = try f.client()
        c.send("GET /v/init.mp4 HTTP/1.1\r\nHost: x\r\n\r\nGET /v/seg1.m4s HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try c.readResponse().body == [1, 2, 3, 4])
        #expect(try c.readResponse().body == [5, 6, 7])
    }

    @Test func rangeForms() throws {
        let f = try Fixture()
        let c = try f.client()
        let seg = Fixture.segment

        let ab = try c.get("/v/seg0.ts", headers: ["Range: bytes=10-19"])
        #expect(ab.status == 206)
        #expect(ab.headers["content-range"] == "bytes 10-19/100000")
        #expect(ab.headers["content-length"] == "10")
        #expect(ab.body == Array(seg[10...19]))

        let from = try c.get("/v/seg0.ts", headers: ["Range: bytes=99990-"])
        #expect(from.status == 206)
        #expect(from.headers["content-range"] == "bytes 99990-99999/100000")
        #expect(from.body == Array(seg[99990...]))

        let suffix = try c.get("/v/seg0.ts", headers: ["Range: bytes=-5"])
        #expect(suffix.status == 206)
        #expect(suffix.headers["content-range"] == "bytes 99995-99999/100000")
        #expect(suffix.body == Array(seg[99995...]))

        let clamped = try c.get("/v/seg0.ts", headers: ["Range: bytes=99998-200000"])
        #expect(clamped.status == 206)
        #expect(clamped.headers["content-range"] == "bytes 99998-99999/100000")

        let bad = try c.get("/v/seg0.ts", headers: ["Range: bytes=100000-"])
        #expect(bad.status == 416)
        #expect(bad.headers["content-range"] == "bytes */100000")

        // Connection still usable after a 416.
        #expect(try c.get("/v/seg1.m4s").body == [5, 6, 7])
    }

    @Test func rangeResolutionUnit() {
        #expect(OriginHTTP.resolveRange(nil, size: 10) == .whole)
        #expect(OriginHTTP.resolveRange("bytes=0-0", size: 10) == .partial(first: 0, last: 0))
        #expect(OriginHTTP.resolveRange("bytes=-20", size: 10) == .partial(first: 0, last: 9))
        #expect(OriginHTTP.resolveRange("bytes=-0", size: 10) == .unsatisfiable)
        #expect(OriginHTTP.resolveRange("bytes=5-2", size: 10) == .whole)
        #expect(OriginHTTP.resolveRange("bytes=0-1,3-4", size: 10) == .whole)
        #expect(OriginHTTP.resolveRange("items=0-1", size: 10) == .whole)
        #expect(OriginHTTP.resolveRange("bytes=0-", size: 0) == .unsatisfiable)
    }

    @Test func missingFileIs404AndDirectoryIs404() throws {
        let f = try Fixture()
        let c = try f.client()
        #expect(try c.get("/v/nope.ts").status == 404)
        #expect(try c.get("/v").status == 404)
        #expect(try c.get("/v/seg0.ts").status == 200)
    }

    @Test func pathTraversalIsRefused() throws {
        let f = try Fixture()
        for target in [
            "/../hlsorigin-secret.txt", "/v/../../hlsorigin-secret.txt", "/%2e%2e/hlsorigin-secret.txt",
            "/v/%2E%2E/%2e%2e/hlsorigin-secret.txt"
        ] {
            let c = try f.client()
            let r = try c.get(target)
            #expect(r.status == 403 || r.status == 404, "\(target)")
            #expect(!r.bodyString.contains("secret"))
        }
    }

    @Test func otherMethodsAre405AndGarbageIs400() throws {
        let f = try Fixture()
        let c = try f.client()
        c.request("POST", "/v/seg0.ts", headers: ["Content-Length: 3"])
        c.send("abc")
        let r = try c.readResponse()
        #expect(r.status == 405)
        #expect(r.headers["allow"] == "GET, HEAD, OPTIONS")
        #expect(try c.get("/v/seg1.m4s").status == 200)

        let g = try f.client()
        g.send("THIS IS NOT HTTP\r\n\r\n")
        #expect(try g.readResponse().status == 400)
        #expect(g.readToEnd().end == .eof)
    }

    @Test func contentTypes() throws {
        let f = try Fixture()
        let c = try f.client()
        let expected = [
            "/v/index.m3u8": "application/vnd.apple.mpegurl",
            "/v/seg0.ts": "video/mp2t",
            "/v/seg1.m4s": "video/mp4",
            "/v/init.mp4": "video/mp4",
            "/v/audio.aac": "audio/aac",
            "/v/key.key": "application/octet-stream",
            "/v/notes.bin": "application/octet-stream"
        ]
        for (path, type) in expected {
            c.request("HEAD", path)
            #expect(try c.readResponse(head: true).headers["content-type"] == type, "\(path)")
        }
        // Query strings are ignored for file lookup.
        #expect(try c.get("/v/seg1.m4s?token=1").body == [5, 6, 7])
    }

    @Test func fiftyConcurrentConnectionsAllServed() throws {
        let f = try Fixture()
        let clients = try (0..<50).map { _ in try f.client(timeout: 5) }
        // All 50 are open at once before any request is sent.
        for (i, c) in clients.enumerated() { c.request("GET", i % 2 == 0 ? "/v/seg0.ts" : "/v/index.m3u8") }
        for (i, c) in clients.enumerated() {
            let r = try c.readResponse()
            #expect(r.status == 200)
            #expect(r.body.count == (i % 2 == 0 ? 100_000 : Fixture.playlist.utf8.count))
        }
        #expect(f.server.requestCount == 50)
    }

    @Test func stopClosesIdleConnectionsAndIsIdempotent() throws {
        let f = try Fixture()
        let c = try f.client()
        _ = try c.get("/v/seg1.m4s")
        let t = elapsed { f.server.stop() }
        #expect(t < 1.0)
        #expect(c.readToEnd().end == .eof)
        f.server.stop()
        #expect((try? RawClient(port: f.port)) == nil)
    }
}
