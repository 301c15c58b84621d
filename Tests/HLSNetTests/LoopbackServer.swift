// A tiny scripted HTTP/1.1 server on 127.0.0.1 (ephemeral port) for the
// HLSNet tests: POSIX sockets, one thread per connection, keep-alive, and a
// handler per request that decides what goes on the wire and when.

import Foundation
import Glibc

struct TestRequest: Sendable {
    var method: String
    var path: String
    /// Lower-cased names.
    var headers: [String: String]
}

final class TestConnection: @unchecked Sendable {
    let fd: Int32
    private(set) var closed = false

    init(fd: Int32) { self.fd = fd }

    @discardableResult
    func send(_ data: Data) -> Bool {
        guard !closed else { return false }
        return data.withUnsafeBytes { raw -> Bool in
            var sent = 0
            while sent < raw.count {
                let n = Glibc.send(fd, raw.baseAddress! + sent, raw.count - sent, Int32(MSG_NOSIGNAL))
                if n <= 0 { return false }
                sent += n
            }
            return true
        }
    }

    @discardableResult
    func send(_ text: String) -> Bool { send(Data(text.utf8)) }

    func sendHead(status: Int, reason: String = "OK", headers: [(String, String)] = [], contentLength: Int?) {
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        if let contentLength { head += "Content-Length: \(contentLength)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        send(head)
    }

    func respond(status: Int = 200, reason: String = "OK", headers: [(String, String)] = [], body: Data = Data()) {
        sendHead(status: status, reason: reason, headers: headers, contentLength: body.count)
        send(body)
    }

    /// Waits (without answering) until the peer closes or `seconds` pass.
    func holdUntilPeerCloses(seconds: Double) {
        let deadline = Date().addingTimeInterval(seconds)
        var scratch = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let r = poll(&pfd, 1, 50)
            if r > 0 {
                let n = recv(fd, &scratch, scratch.count, 0)
                if n <= 0 { return }
            }
        }
    }

    func close() {
        guard !closed else { return }
        closed = true
        shutdown(fd, Int32(SHUT_RDWR))
    }
}

final class LoopbackServer: @unchecked Sendable {
    typealias Handler = @Sendable (TestRequest, TestConnection) -> Void

    let port: UInt16
    private let listenFD: Int32
    private let handler: Handler
    private let lock = NSLock()
    private var accepted = 0
    private var requests: [TestRequest] = []
    private var stopped = false

    var connectionCount: Int { lock.withLock { accepted } }
    var receivedRequests: [TestRequest] { lock.withLock { requests } }

    func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    init(handler: @escaping Handler) {
        self.handler = handler
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        precondition(fd >= 0, "socket")
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        precondition(bound == 0, "bind")
        precondition(listen(fd, 16) == 0, "listen")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        listenFD = fd
        port = UInt16(bigEndian: addr.sin_port)
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    func stop() {
        let wasStopped = lock.withLock { () -> Bool in
            defer { stopped = true }
            return stopped
        }
        // Only shut down: the accept thread closes the descriptor when it
        // leaves. Closing it here would let a new server reuse the number
        // while this server's accept loop is about to call accept() again,
        // serving that server's connections with this server's handler.
        if !wasStopped { shutdown(listenFD, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        defer { Glibc.close(listenFD) }
        while true {
            let client = accept(listenFD, nil, nil)
            if client < 0 {
                if errno == EINTR { continue }
                return
            }
            if lock.withLock({ stopped }) {
                Glibc.close(client)
                return
            }
            lock.withLock { accepted += 1 }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }

    private func serve(_ fd: Int32) {
        let connection = TestConnection(fd: fd)
        var buffer = Data()
        defer {
            connection.close()
            Glibc.close(fd)
        }
        while !connection.closed {
            guard let request = readRequest(fd: fd, buffer: &buffer) else { return }
            lock.withLock { requests.append(request) }
            handler(request, connection)
        }
    }

    /// Reads one request head (no bodies: GET only), or nil when the peer closed / 10 s passed.
    private func readRequest(fd: Int32, buffer: inout Data) -> TestRequest? {
        let terminator = Data("\r\n\r\n".utf8)
        var scratch = [UInt8](repeating: 0, count: 4096)
        let deadline = Date().addingTimeInterval(10)
        while buffer.range(of: terminator) == nil {
            if Date() > deadline { return nil }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&pfd, 1, 100) <= 0 { continue }
            let n = recv(fd, &scratch, scratch.count, 0)
            if n <= 0 { return nil }
            buffer.append(contentsOf: scratch[0..<n])
        }
        let end = buffer.range(of: terminator)!
        let head = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
        buffer.removeSubrange(buffer.startIndex..<end.upperBound)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ")
        guard requestLine.count >= 2 else { return nil }
        var headers: [String: String] = [:]
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return TestRequest(method: String(requestLine[0]), path: String(requestLine[1]), headers: headers)
    }
}

/// Deterministic body bytes.
func testBody(_ count: Int) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }) }
