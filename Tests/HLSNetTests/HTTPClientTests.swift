import Foundation
import HLSCore
import Testing
@testable import HLSNet

private func client(_ configure: (inout HTTPClientConfiguration) -> Void = { _ in }) -> HTTPClient {
    var configuration = HTTPClientConfiguration()
    configure(&configuration)
    return HTTPClient(clock: SystemMonotonicClock(), configuration: configuration)
}

private func expectFailure(_ result: Result<HTTPResponse, LoadError>, sourceLocation: SourceLocation = #_sourceLocation) -> LoadError? {
    switch result {
    case .success(let response):
        Issue.record("expected a failure, got HTTP \(response.statusCode)", sourceLocation: sourceLocation)
        return nil
    case .failure(let error):
        return error
    }
}

private func expectSuccess(_ result: Result<HTTPResponse, LoadError>, sourceLocation: SourceLocation = #_sourceLocation) -> HTTPResponse? {
    switch result {
    case .success(let response):
        return response
    case .failure(let error):
        Issue.record("expected success, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

@Suite(.serialized, .timeLimit(.minutes(10)))
struct HTTPClientTests {
    @Test func okBodyHeadersAndTimingsOrder() throws {
        let body = testBody(100_000)
        let server = LoopbackServer { _, c in c.respond(headers: [("X-Test", "yes")], body: body) }
        defer { server.stop() }
        let http = client()
        let response = try #require(expectSuccess(http.fetch(HTTPRequest(url: server.url("/a")))))
        #expect(response.statusCode == 200)
        #expect(response.body == body)
        #expect(response.contentLength == body.count)
        #expect(response.headers["x-test"] == "yes")
        #expect(response.effectiveURL == server.url("/a"))
        #expect(response.redirectCount == 0)
        #expect(!response.connectionReused)
        let t = response.timings
        #expect(t.nameLookupSeconds <= t.connectSeconds)
        #expect(t.connectSeconds > 0)
        #expect(t.connectSeconds <= t.firstByteSeconds)
        #expect(t.firstByteSeconds <= t.totalSeconds)
        #expect(t.tlsSeconds == 0)
        #expect(response.startedAt <= response.finishedAt)
        #expect(server.receivedRequests.first?.headers["user-agent"]?.hasPrefix("hlsplay/") == true)
    }

    @Test func customHeadersAreSent() throws {
        let server = LoopbackServer { _, c in c.respond(body: Data("x".utf8)) }
        defer { server.stop() }
        var request = HTTPRequest(url: server.url("/h"))
        request.headers = [(name: "X-Session", value: "abc")]
        _ = try #require(expectSuccess(client().fetch(request)))
        #expect(server.receivedRequests.first?.headers["x-session"] == "abc")
    }

    @Test func secondRequestReusesTheConnection() throws {
        let server = LoopbackServer { _, c in c.respond(body: testBody(1000)) }
        defer { server.stop() }
        let http = client()
        let first = try #require(expectSuccess(http.fetch(HTTPRequest(url: server.url("/1")))))
        let second = try #require(expectSuccess(http.fetch(HTTPRequest(url: server.url("/2")))))
        #expect(!first.connectionReused)
        #expect(second.connectionReused)
        #expect(server.connectionCount == 1)
    }

    @Test func freshConnection_opensANewConnectionInsteadOfReusing() throws {
        let server = LoopbackServer { _, c in c.respond(body: testBody(1000)) }
        defer { server.stop() }
        let http = client()
        _ = try #require(expectSuccess(http.fetch(HTTPRequest(url: server.url("/1")))))
        var request = HTTPRequest(url: server.url("/2"))
        request.freshConnection = true
        let second = try #require(expectSuccess(http.fetch(request)))
        #expect(!second.connectionReused)
        #expect(server.connectionCount == 2)
    }

    @Test func progressEventsSumToBodyAndAreTimeOrdered() throws {
        let body = testBody(300_000)
        let server = LoopbackServer { _, c in c.respond(body: body) }
        defer { server.stop() }
        var events: [ByteProgress] = []
        let response = try #require(expectSuccess(client().fetch(HTTPRequest(url: server.url("/p"))) { events.append($0) }))
        #expect(events.map(\.chunkBytes).reduce(0, +) == response.body.count)
        #expect(events.last?.totalBytes == body.count)
        #expect(events.allSatisfy { $0.expectedBytes == body.count })
        #expect(zip(events, events.dropFirst()).allSatisfy { $0.at <= $1.at && $0.totalBytes < $1.totalBytes })
    }

    @Test func pacedChunksYieldSeveralEventsWithGaps() throws {
        let chunk = testBody(8_000)
        let server = LoopbackServer { _, c in
            c.sendHead(status: 200, contentLength: chunk.count * 4)
            for i in 0..<4 {
                if i > 0 { Thread.sleep(forTimeInterval: 0.2) }
                c.send(chunk)
            }
        }
        defer { server.stop() }
        var events: [ByteProgress] = []
        let response = try #require(expectSuccess(client().fetch(HTTPRequest(url: server.url("/paced"))) { events.append($0) }))
        #expect(response.body.count == chunk.count * 4)
        #expect(events.count >= 4)
        let gaps = zip(events, events.dropFirst()).map { $1.at.seconds(since: $0.at) }
        #expect(gaps.filter { $0 >= 0.15 }.count >= 3)
        #expect(response.timings.totalSeconds >= 0.55)
    }

    @Test func rangeRequestReturnsTheSlice() throws {
        let whole = testBody(10_000)
        let server = LoopbackServer { request, c in
            // Only "bytes=a-b" is served, as 206.
            let spec = request.headers["range"]!.dropFirst("bytes=".count).split(separator: "-")
            let start = Int(spec[0])!, end = Int(spec[1])!
            c.respond(
                status: 206, reason: "Partial Content",
                headers: [("Content-Range", "bytes \(start)-\(end)/\(whole.count)")],
                body: whole.subdata(in: start..<(end + 1)))
        }
        defer { server.stop() }
        let request = HTTPRequest(url: server.url("/r"), byteRange: ByteRange(length: 1000, offset: 2500))
        let response = try #require(expectSuccess(client().fetch(request)))
        #expect(response.statusCode == 206)
        #expect(response.body == whole.subdata(in: 2500..<3500))
        #expect(!response.rangeSlicedLocally)
        #expect(server.receivedRequests.first?.headers["range"] == "bytes=2500-3499")

        let fromZero = HTTPRequest(url: server.url("/r"), byteRange: ByteRange(length: 10, offset: nil))
        #expect(try #require(expectSuccess(client().fetch(fromZero))).body == whole.prefix(10))
    }

    @Test func rangeAnsweredWithFullBodyIsSlicedLocally() throws {
        let whole = testBody(50_000)
        let server = LoopbackServer { _, c in c.respond(body: whole) }
        defer { server.stop() }
        let request = HTTPRequest(url: server.url("/full"), byteRange: ByteRange(length: 1000, offset: 4000))
        let response = try #require(expectSuccess(client().fetch(request)))
        #expect(response.statusCode == 200)
        #expect(response.rangeSlicedLocally)
        #expect(response.body == whole.subdata(in: 4000..<5000))
    }

    @Test func notFoundIsHTTPStatus() throws {
        let server = LoopbackServer { _, c in c.respond(status: 404, reason: "Not Found", body: Data("no such thing".utf8)) }
        defer { server.stop() }
        let error = try #require(expectFailure(client().fetch(HTTPRequest(url: server.url("/missing")))))
        #expect(error.kind == .httpStatus)
        #expect(error.httpStatus == 404)
        #expect(error.retryAfterSeconds == nil)
        #expect(error.message.contains("no such thing"))
    }

    @Test func errorStatusKeepsTheConnectionForTheNextRequest() throws {
        let server = LoopbackServer { request, c in
            if request.path == "/missing" {
                c.respond(status: 404, reason: "Not Found", body: testBody(5_000))
            } else {
                c.respond(body: Data("ok".utf8))
            }
        }
        defer { server.stop() }
        let http = client()
        #expect(try #require(expectFailure(http.fetch(HTTPRequest(url: server.url("/missing"))))).httpStatus == 404)
        let next = try #require(expectSuccess(http.fetch(HTTPRequest(url: server.url("/ok")))))
        #expect(next.connectionReused)
        #expect(server.connectionCount == 1)
    }

    @Test func abortedTransferDoesNotPoisonTheNextOne() throws {
        let server = LoopbackServer { request, c in
            if request.path == "/stall" {
                c.sendHead(status: 200, contentLength: 10_000)
                c.send(testBody(100))
                c.holdUntilPeerCloses(seconds: 5)
            } else {
                c.respond(body: Data("fresh".utf8))
            }
        }
        defer { server.stop() }
        let http = client()
        var stalled = HTTPRequest(url: server.url("/stall"))
        stalled.stallTimeoutSeconds = 0.3
        #expect(try #require(expectFailure(http.fetch(stalled))).kind == .transferTimeout)
        let next = try #require(expectSuccess(http.fetch(HTTPRequest(url: server.url("/ok")))))
        #expect(next.body == Data("fresh".utf8))
        #expect(!next.connectionReused)
    }

    @Test func serviceUnavailableCarriesRetryAfter() throws {
        let server = LoopbackServer { _, c in
            c.respond(status: 503, reason: "Service Unavailable", headers: [("Retry-After", "2")], body: Data())
        }
        defer { server.stop() }
        let error = try #require(expectFailure(client().fetch(HTTPRequest(url: server.url("/busy")))))
        #expect(error.kind == .httpStatus)
        #expect(error.httpStatus == 503)
        #expect(error.retryAfterSeconds == 2)
    }

    @Test func retryAfterParsesSecondsAndHTTPDates() {
        let now = Date(timeIntervalSince1970: 1_445_412_480) // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(parseRetryAfter("120", now: now) == 120)
        #expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:30 GMT", now: now) == 30)
        #expect(parseRetryAfter("Wed, 21 Oct 2015 07:27:00 GMT", now: now) == 0)
        #expect(parseRetryAfter("soon", now: now) == nil)
    }

    @Test func closeMidBodyIsTruncated() throws {
        let server = LoopbackServer { _, c in
            c.sendHead(status: 200, contentLength: 10_000)
            c.send(testBody(4_000))
            Thread.sleep(forTimeInterval: 0.05)
            c.close()
        }
        defer { server.stop() }
        let error = try #require(expectFailure(client().fetch(HTTPRequest(url: server.url("/cut")))))
        #expect(error.kind == .truncatedBody)
        #expect(error.bytesReceived == 4_000)
    }

    @Test func silentServerIsFirstByteTimeout() throws {
        let server = LoopbackServer { _, c in c.holdUntilPeerCloses(seconds: 5) }
        defer { server.stop() }
        var request = HTTPRequest(url: server.url("/silent"))
        request.firstByteTimeoutSeconds = 1
        let clock = SystemMonotonicClock()
        let start = clock.now()
        let error = try #require(expectFailure(client().fetch(request)))
        let elapsed = clock.now().seconds(since: start)
        #expect(error.kind == .firstByteTimeout)
        #expect(elapsed >= 0.95 && elapsed < 1.5)
    }

    @Test func stallMidBodyIsTransferTimeout() throws {
        let server = LoopbackServer { _, c in
            c.sendHead(status: 200, contentLength: 10_000)
            c.send(testBody(3_000))
            c.holdUntilPeerCloses(seconds: 5)
        }
        defer { server.stop() }
        var request = HTTPRequest(url: server.url("/stall"))
        request.stallTimeoutSeconds = 0.5
        let clock = SystemMonotonicClock()
        let start = clock.now()
        var lastProgress: ByteProgress?
        let error = try #require(expectFailure(client().fetch(request) { lastProgress = $0 }))
        let elapsed = clock.now().seconds(since: start)
        #expect(error.kind == .transferTimeout)
        #expect(error.bytesReceived == 3_000)
        #expect(lastProgress?.totalBytes == 3_000)
        #expect(elapsed >= 0.45 && elapsed < 1.5)
    }

    @Test func totalTimeoutIsTransferTimeout() throws {
        let server = LoopbackServer { _, c in
            c.sendHead(status: 200, contentLength: 100_000)
            for _ in 0..<40 {
                if !c.send(testBody(1_000)) { return }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }
        defer { server.stop() }
        var request = HTTPRequest(url: server.url("/slow"))
        request.totalTimeoutSeconds = 0.5
        let error = try #require(expectFailure(client().fetch(request)))
        #expect(error.kind == .transferTimeout)
        #expect(error.bytesReceived > 0)
    }

    @Test func cancellationFromAnotherThreadEndsPromptly() throws {
        let server = LoopbackServer { _, c in
            c.sendHead(status: 200, contentLength: 10_000)
            c.send(testBody(1_000))
            c.holdUntilPeerCloses(seconds: 5)
        }
        defer { server.stop() }
        let token = CancellationToken()
        let clock = SystemMonotonicClock()
        let start = clock.now()
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.3)
            token.cancel()
        }
        let error = try #require(expectFailure(client().fetch(HTTPRequest(url: server.url("/cancel")), cancellation: token)))
        let elapsed = clock.now().seconds(since: start)
        #expect(error.kind == .cancelled)
        #expect(elapsed < 0.8)
        #expect(token.isCancelled)
    }

    @Test func alreadyCancelledNeverConnects() throws {
        let server = LoopbackServer { _, c in c.respond(body: Data()) }
        defer { server.stop() }
        let token = CancellationToken()
        token.cancel()
        let error = try #require(expectFailure(client().fetch(HTTPRequest(url: server.url("/x")), cancellation: token)))
        #expect(error.kind == .cancelled)
    }

    @Test func redirectsAreFollowedAndCounted() throws {
        let server = LoopbackServer { request, c in
            if request.path == "/final" {
                c.respond(body: Data("done".utf8))
            } else {
                c.respond(status: 302, reason: "Found", headers: [("Location", "/final")])
            }
        }
        defer { server.stop() }
        let response = try #require(expectSuccess(client().fetch(HTTPRequest(url: server.url("/start")))))
        #expect(response.body == Data("done".utf8))
        #expect(response.redirectCount == 1)
        #expect(response.effectiveURL == server.url("/final"))
    }

    @Test func tooManyRedirectsIsRedirectError() throws {
        let server = LoopbackServer { request, c in
            let n = Int(request.path.dropFirst("/loop".count)) ?? 0
            c.respond(status: 302, reason: "Found", headers: [("Location", "/loop\(n + 1)")])
        }
        defer { server.stop() }
        let error = try #require(expectFailure(client { $0.maxRedirects = 3 }.fetch(HTTPRequest(url: server.url("/loop0")))))
        #expect(error.kind == .redirect)
        #expect(server.receivedRequests.count == 4)
    }

    @Test(arguments: ["ftp://127.0.0.1/x.ts", "file:///etc/passwd"])
    func redirectToOtherSchemesIsRefused(target: String) throws {
        let server = LoopbackServer { _, c in c.respond(status: 302, reason: "Found", headers: [("Location", target)]) }
        defer { server.stop() }
        // Even a client allowed to read files refuses to be redirected to one.
        let error = try #require(expectFailure(client { $0.allowFileURLs = true }.fetch(HTTPRequest(url: server.url("/go")))))
        #expect(error.kind == .redirect)
        #expect(error.message.contains(target))
    }

    /// A local playlist's files: only real paths inside the allowed directory are read; `..`,
    /// absolute paths and symlinks pointing out are refused without being opened.
    @Test func localFilesConfinedToTheirDirectory() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("hlsnet-scope-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let inside = base.appendingPathComponent("play"), outside = base.appendingPathComponent("outside")
        try FileManager.default.createDirectory(at: inside.appendingPathComponent("v0"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        let contents = Data("segment".utf8)
        try contents.write(to: inside.appendingPathComponent("v0/seg.ts"))
        try contents.write(to: outside.appendingPathComponent("secret.ts"))
        try FileManager.default.createSymbolicLink(atPath: inside.appendingPathComponent("link.ts").path, withDestinationPath: "../outside/secret.ts")
        try FileManager.default.createSymbolicLink(atPath: inside.appendingPathComponent("inner.ts").path, withDestinationPath: "v0/seg.ts")
        let root = try #require(
            realpath(inside.path, nil).map { p in
                defer { free(p) }; return String(cString: p)
            })
        let http = client {
            $0.allowFileURLs = true; $0.localFileDirectory = root
        }

        for allowed in ["v0/seg.ts", "inner.ts"] {
            #expect(try #require(expectSuccess(http.fetch(HTTPRequest(url: inside.appendingPathComponent(allowed))))).body == contents)
        }
        for refused in [
            URL(fileURLWithPath: inside.path + "/../outside/secret.ts"), inside.appendingPathComponent("link.ts"),
            outside.appendingPathComponent("secret.ts"), URL(fileURLWithPath: "/etc/passwd")
        ] {
            let error = try #require(expectFailure(http.fetch(HTTPRequest(url: refused))))
            #expect(error.kind == .localFileRefused, "\(refused.path)")
            #expect(error.message.contains("outside") && error.message.contains(root))
            #expect(error.bytesReceived == 0)
        }
        // Without a directory, any local file is read (--allow-any-local-file).
        let any = client { $0.allowFileURLs = true }
        #expect(try #require(expectSuccess(any.fetch(HTTPRequest(url: inside.appendingPathComponent("link.ts"))))).body == contents)
    }

    /// Only regular files are read: a directory, a FIFO (whose open would block) or a device is an error at once.
    @Test func localNonRegularFilesAreNotRead() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("hlsnet-special-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        let fifo = base.appendingPathComponent("fifo.ts")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let http = client { $0.allowFileURLs = true }
        for path in [fifo.path, base.path, "/dev/zero"] {
            let error = try #require(expectFailure(http.fetch(HTTPRequest(url: URL(fileURLWithPath: path)))))
            #expect(error.kind == .file, "\(path)")
            #expect(error.message.contains("not a regular file"), "\(error.message)")
        }
    }

    /// `http:///etc/passwd`: no host, so nothing to connect to; refused at once, no name lookup.
    @Test(arguments: ["http:///etc/passwd", "https:///x.m3u8", "http://:8080/x.ts"])
    func urlWithoutHostIsInvalid(url: String) throws {
        let started = Date()
        let parsed = try #require(URL(string: url))
        let error = try #require(expectFailure(client().fetch(HTTPRequest(url: parsed))))
        #expect(error.kind == .invalidURL)
        #expect(error.message.contains("without a host"))
        #expect(Date().timeIntervalSince(started) < 1)
    }

    @Test func bodyOverLimitWithContentLengthIsTooLarge() throws {
        let server = LoopbackServer { _, c in c.respond(body: testBody(50_000)) }
        defer { server.stop() }
        var request = HTTPRequest(url: server.url("/big"))
        request.maxBodyBytes = 10_000
        var events = 0
        let error = try #require(expectFailure(client().fetch(request) { _ in events += 1 }))
        #expect(error.kind == .responseTooLarge)
        #expect(events == 0) // refused on Content-Length, before any body is taken
    }

    @Test func bodyOverLimitWithoutContentLengthIsTooLarge() throws {
        let server = LoopbackServer { _, c in
            c.sendHead(status: 200, headers: [("Connection", "close")], contentLength: nil)
            for _ in 0..<50 { if !c.send(testBody(1_000)) { break } }
            c.close()
        }
        defer { server.stop() }
        var request = HTTPRequest(url: server.url("/big"))
        request.maxBodyBytes = 10_000
        let error = try #require(expectFailure(client().fetch(request)))
        #expect(error.kind == .responseTooLarge)
        #expect(error.bytesReceived > 10_000)
    }

    @Test func tcpInfoIsSampledForLoopback() throws {
        let server = LoopbackServer { _, c in c.respond(body: testBody(200_000)) }
        defer { server.stop() }
        let http = client()
        #expect(http.currentTCPInfo() == nil)
        let response = try #require(expectSuccess(http.fetch(HTTPRequest(url: server.url("/tcp")))))
        let info = try #require(response.tcpInfo)
        #expect(info.rttSeconds > 0)
        #expect(info.congestionWindowSegments > 0)
        #expect(http.currentTCPInfo() == info)
    }

    @Test func connectionRefusedIsConnect() throws {
        // A port that was just bound and released: nothing listens there.
        let server = LoopbackServer { _, _ in }
        let url = server.url("/nobody")
        server.stop()
        let error = try #require(expectFailure(client().fetch(HTTPRequest(url: url))))
        #expect(error.kind == .connect)
    }

    @Test func unsupportedTopLevelSchemeIsRefused() throws {
        let error = try #require(expectFailure(client().fetch(HTTPRequest(url: URL(string: "ftp://127.0.0.1/a.m3u8")!))))
        #expect(error.kind == .unsupportedScheme)
    }

    @Test func fileURLsOnlyWhenAllowed() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hlsnet-\(UUID().uuidString).m3u8").path
        let contents = Data("#EXTM3U\n#EXT-X-ENDLIST\n".utf8)
        try contents.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        let refused = try #require(expectFailure(client().fetch(HTTPRequest(url: URL(fileURLWithPath: path)))))
        #expect(refused.kind == .unsupportedScheme)

        let allowed = client { $0.allowFileURLs = true }
        #expect(try #require(expectSuccess(allowed.fetch(HTTPRequest(url: URL(fileURLWithPath: path))))).body == contents)
        // A plain local path (no scheme).
        #expect(try #require(expectSuccess(allowed.fetch(HTTPRequest(url: URL(string: path)!)))).body == contents)
        let ranged = HTTPRequest(url: URL(fileURLWithPath: path), byteRange: ByteRange(length: 7, offset: 0))
        #expect(try #require(expectSuccess(allowed.fetch(ranged))).body == contents.prefix(7))

        var limited = HTTPRequest(url: URL(fileURLWithPath: path))
        limited.maxBodyBytes = 5
        #expect(try #require(expectFailure(allowed.fetch(limited))).kind == .responseTooLarge)

        let missing = try #require(expectFailure(allowed.fetch(HTTPRequest(url: URL(fileURLWithPath: path + ".nope")))))
        #expect(missing.kind == .file)
    }

    @Test func unresolvableHostIsNameResolution() throws {
        // .invalid is reserved (RFC 2606) and never resolves.
        var request = HTTPRequest(url: URL(string: "http://hlsplay-test.invalid/x")!)
        request.firstByteTimeoutSeconds = 3
        let error = try #require(expectFailure(client().fetch(request)))
        #expect(error.kind == .nameResolution)
    }

    // MARK: - What went over the wire (HTTPExchange)

    @Test func exchange_requestHeadersAsSent_statusLineAndHeadersAsReceived() throws {
        let whole = testBody(10_000)
        let server = LoopbackServer { _, c in
            c.respond(
                status: 206, reason: "Partial Content",
                headers: [("Content-Range", "bytes 2500-3499/\(whole.count)"), ("X-First", "1"), ("X-First", "2")],
                body: whole.subdata(in: 2500..<3500))
        }
        defer { server.stop() }
        var request = HTTPRequest(url: server.url("/r?token=abc&x"), byteRange: ByteRange(length: 1000, offset: 2500))
        request.headers = [(name: "X-Session", value: "abc")]
        let response = try #require(expectSuccess(client().fetch(request)))
        let exchange = try #require(response.exchange)
        let sent = Dictionary(exchange.requestHeaders.map { ($0.name.lowercased(), $0.value) }, uniquingKeysWith: { a, _ in a })
        // What libcurl really sent: its own headers and the caller's, the same the server received.
        #expect(sent["host"] == "127.0.0.1:\(server.port)")
        #expect(sent["user-agent"]?.hasPrefix("hlsplay/") == true)
        #expect(sent["range"] == "bytes=2500-3499")
        #expect(sent["x-session"] == "abc")
        #expect(exchange.method == "GET")
        #expect(exchange.url == server.url("/r?token=abc&x").absoluteString)
        #expect((exchange.requestHeaderBytes ?? 0) > 40)
        #expect(exchange.httpVersion == "HTTP/1.1")
        #expect(exchange.status == 206)
        #expect(exchange.statusText == "Partial Content")
        // In order, names as received, a repeated header twice.
        let names = exchange.responseHeaders.map(\.name)
        #expect(names == ["Content-Length", "Content-Range", "X-First", "X-First"], "\(names)")
        #expect(exchange.responseHeaders.filter { $0.name == "X-First" }.map(\.value) == ["1", "2"])
        #expect((exchange.responseHeaderBytes ?? 0) > 60)
        #expect(exchange.bodyBytesReceived == 1000)
        #expect(exchange.serverIPAddress == "127.0.0.1")
        #expect((exchange.localPort ?? 0) > 0)
        let t = exchange.timings
        #expect(t.nameLookupSeconds <= t.connectSeconds)
        #expect(t.connectSeconds <= (t.firstByteSeconds ?? -1))
        #expect((t.firstByteSeconds ?? .infinity) <= t.totalSeconds)
    }

    @Test func exchange_ofACancelledTransfer_keepsItsStatusBytesAndTheTimeItRan() throws {
        let server = LoopbackServer { _, c in
            c.sendHead(status: 200, contentLength: 100_000)
            c.send(testBody(11_250))
            c.holdUntilPeerCloses(seconds: 5)
        }
        defer { server.stop() }
        let token = CancellationToken()
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.5)
            token.cancel()
        }
        let error = try #require(expectFailure(client().fetch(HTTPRequest(url: server.url("/wedge")), cancellation: token)))
        #expect(error.kind == .cancelled)
        #expect(error.httpStatus == nil, "a cancelled 200 is no HTTP error")
        let exchange = try #require(error.exchange)
        #expect(exchange.status == 200)
        #expect(exchange.statusText == "OK")
        #expect(exchange.bodyBytesReceived == 11_250)
        #expect(exchange.responseHeaders.contains { $0.name == "Content-Length" && $0.value == "100000" })
        #expect(exchange.timings.firstByteSeconds != nil)
        // It ran until the cancellation, not 0 s.
        #expect(exchange.timings.totalSeconds >= 0.45, "\(exchange.timings)")
    }

    @Test func exchange_ofARefusedConnection_hasNoStatusAndItsTime() throws {
        // A port nothing listens on: bind one, close it, connect there.
        let server = LoopbackServer { _, c in c.respond(body: Data()) }
        let url = server.url("/x")
        server.stop()
        let error = try #require(expectFailure(client().fetch(HTTPRequest(url: url))))
        #expect(error.kind == .connect)
        let exchange = try #require(error.exchange)
        #expect(exchange.status == nil)
        #expect(exchange.responseHeaders.isEmpty)
        #expect(exchange.timings.firstByteSeconds == nil)
        #expect(exchange.timings.totalSeconds >= 0)
    }
}
