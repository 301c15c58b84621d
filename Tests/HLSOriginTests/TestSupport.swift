import Foundation
import Glibc
@testable import HLSOrigin

/// A tiny blocking HTTP/1.1 client over a raw socket, so tests see exactly what went on the wire.
final class RawClient {
    let fd: Int32
    private var pending: [UInt8] = []

    struct Response {
        var status: Int
        var headers: [String: String] // lowercased names
        var body: [UInt8]
        var bodyString: String { String(decoding: body, as: UTF8.self) }
    }

    enum ReadEnd: Equatable { case eof, timeout, reset, error(Int32) }

    struct ClientError: Error, CustomStringConvertible {
        var description: String
    }

    /// Connects to `host` (an IPv4 or IPv6 literal; loopback in tests) at `port`.
    init(port: UInt16, timeout: Double = 3, host: String = "127.0.0.1") throws {
        let v6 = host.contains(":")
        fd = socket(v6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClientError(description: "socket failed") }
        let r: Int32
        if v6 {
            var addr = sockaddr_in6()
            addr.sin6_family = sa_family_t(AF_INET6)
            addr.sin6_port = port.bigEndian
            inet_pton(AF_INET6, host, &addr.sin6_addr)
            r = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var addr = sockaddr_in()
            addr.sin_family = sa_family_t(AF_INET)
            addr.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &addr.sin_addr)
            r = withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard r == 0 else { close(fd); throw ClientError(description: "connect to \(host) failed errno \(errno)") }
        setTimeout(timeout)
    }

    deinit { close(fd) }

    func setTimeout(_ seconds: Double) {
        var tv = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1e6))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            off += n
        }
    }

    func request(_ method: String = "GET", _ path: String, headers: [String] = []) {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for h in headers { text += h + "\r\n" }
        send(text + "\r\n")
    }

    /// Reads more bytes into `pending`. nil on success, else how the read ended.
    private func fill() -> ReadEnd? {
        var buf = [UInt8](repeating: 0, count: 65536)
        let n = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n > 0 { pending.append(contentsOf: buf[0..<n]); return nil }
        if n == 0 { return .eof }
        switch errno {
        case EAGAIN: return .timeout
        case ECONNRESET: return .reset
        default: return .error(errno)
        }
    }

    /// Reads a status line and headers.
    func readHead() throws -> (status: Int, headers: [String: String]) {
        while true {
            if let r = pending.firstRange(of: [0x0D, 0x0A, 0x0D, 0x0A]) {
                let text = String(decoding: pending[..<r.lowerBound], as: UTF8.self)
                pending.removeFirst(r.upperBound)
                var lines = text.components(separatedBy: "\r\n")
                let statusLine = lines.removeFirst().split(separator: " ")
                guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
                    throw ClientError(description: "bad status line")
                }
                var headers: [String: String] = [:]
                for line in lines {
                    guard let c = line.firstIndex(of: ":") else { continue }
                    headers[line[..<c].lowercased()] = line[line.index(after: c)...].trimmingCharacters(in: .whitespaces)
                }
                return (status, headers)
            }
            if let end = fill() { throw ClientError(description: "connection ended before headers: \(end)") }
        }
    }

    /// Reads exactly `count` bytes or throws.
    func readBody(_ count: Int) throws -> [UInt8] {
        while pending.count < count {
            if let end = fill() { throw ClientError(description: "body ended after \(pending.count)/\(count): \(end)") }
        }
        let body = Array(pending[..<count])
        pending.removeFirst(count)
        return body
    }

    func readResponse(head: Bool = false) throws -> Response {
        let (status, headers) = try readHead()
        let length = head ? 0 : Int(headers["content-length"] ?? "0") ?? 0
        return Response(status: status, headers: headers, body: try readBody(length))
    }

    /// Reads whatever arrives until EOF, reset, error or timeout. Returns the bytes (including buffered ones) and how it ended.
    func readToEnd() -> (bytes: [UInt8], end: ReadEnd) {
        while true {
            if let end = fill() {
                let bytes = pending
                pending.removeAll()
                return (bytes, end)
            }
        }
    }

    func get(_ path: String, headers: [String] = []) throws -> Response {
        request("GET", path, headers: headers)
        return try readResponse()
    }
}

/// A temp folder with known content and a server over it.
final class Fixture {
    let root: URL
    let server: OriginServer
    let port: UInt16

    static let segment: [UInt8] = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    static let playlist = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\nseg0.ts\n#EXT-X-ENDLIST\n"

    init(configuration: OriginConfiguration = .init(), extraFiles: [String: [UInt8]] = [:]) throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hlsorigin-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("v"), withIntermediateDirectories: true)
        var files: [String: [UInt8]] = [
            "v/index.m3u8": Array(Self.playlist.utf8),
            "v/seg0.ts": Self.segment,
            "v/init.mp4": [1, 2, 3, 4],
            "v/seg1.m4s": [5, 6, 7],
            "v/audio.aac": [8, 9],
            "v/key.key": Array(repeating: 0xAB, count: 16),
            "v/notes.bin": [0]
        ]
        for (k, v) in extraFiles { files[k] = v }
        for (path, bytes) in files {
            try Data(bytes).write(to: root.appendingPathComponent(path))
        }
        // A file outside the root that traversal would reach.
        try Data("secret".utf8).write(to: root.deletingLastPathComponent().appendingPathComponent("hlsorigin-secret.txt"))
        server = OriginServer(root: root, configuration: configuration)
        port = try server.start()
    }

    func client(timeout: Double = 3) throws -> RawClient { try RawClient(port: port, timeout: timeout) }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: root)
    }
}

func elapsed(_ body: () throws -> Void) rethrows -> Double {
    let t0 = monotonicNow()
    try body()
    return monotonicNow() - t0
}
