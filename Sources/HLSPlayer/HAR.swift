// HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/) for the requests
// of a session, so they open in browser developer tools.

import Foundation
import HLSCore

struct HAREntry: Encodable, Sendable {
    struct Request: Encodable, Sendable {
        var method = "GET"
        var url: String
        var httpVersion = "HTTP/1.1"
        var cookies: [String] = []
        var headers: [Header]
        var queryString: [Header] = []
        var headersSize = -1
        var bodySize = 0
    }
    struct Header: Encodable, Sendable { var name: String; var value: String }
    struct Content: Encodable, Sendable { var size: Int; var mimeType: String }
    struct Response: Encodable, Sendable {
        var status: Int
        var statusText: String
        var httpVersion = "HTTP/1.1"
        var cookies: [String] = []
        var headers: [Header]
        var content: Content
        var redirectURL = ""
        var headersSize = -1
        var bodySize: Int
        var _error: String?
    }
    struct Timings: Encodable, Sendable {
        var blocked: Double = -1
        var dns: Double
        var connect: Double
        var ssl: Double
        var send: Double = 0
        var wait: Double
        var receive: Double
    }
    var startedDateTime: String
    var time: Double
    var request: Request
    var response: Response
    var cache: [String: String] = [:]
    var timings: Timings
    var serverIPAddress: String?
    var connection: String?
    var _purpose: String
    var _requestID: Int

    /// Builds an entry from what the loader measured. Times in HAR are milliseconds.
    static func make(requestID: Int, purpose: RequestPurpose, url: String, startedAt: Date, requestHeaders: [(String, String)],
                     status: Int?, responseHeaders: [String: String], bytes: Int, timings: TimingsRecord?, error: String?) -> HAREntry {
        let ms = { (s: Double) in (s * 1e6).rounded() / 1e3 }
        let t = timings
        let dns = t.map { ms($0.nameLookupSeconds) } ?? -1
        let connect = t.map { ms(max(0, $0.connectSeconds - $0.nameLookupSeconds)) } ?? -1
        let ssl = t.map { $0.tlsSeconds > 0 ? ms(max(0, $0.tlsSeconds - $0.connectSeconds)) : -1 } ?? -1
        let waitStart = t.map { max($0.connectSeconds, $0.tlsSeconds) } ?? 0
        let wait = t.map { ms(max(0, $0.firstByteSeconds - waitStart)) } ?? 0
        let receive = t.map { ms(max(0, $0.totalSeconds - $0.firstByteSeconds)) } ?? 0
        let total = t.map { ms($0.totalSeconds) } ?? 0
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return HAREntry(
            startedDateTime: formatter.string(from: startedAt), time: total,
            request: Request(url: url, headers: requestHeaders.map { Header(name: $0.0, value: $0.1) }),
            response: Response(status: status ?? 0, statusText: "", headers: responseHeaders.sorted { $0.key < $1.key }.map { Header(name: $0.key, value: $0.value) },
                               content: Content(size: bytes, mimeType: responseHeaders["content-type"] ?? "x-unknown"),
                               bodySize: bytes, _error: error),
            timings: Timings(dns: dns, connect: connect, ssl: ssl, wait: wait, receive: receive),
            _purpose: purpose.rawValue, _requestID: requestID)
    }
}

struct HARBuilder: Sendable {
    let path: LineFile
    let sessionWallStart: Date
    var entries: [HAREntry] = []

    init(path: LineFile, sessionWallStart: Date) {
        self.path = path
        self.sessionWallStart = sessionWallStart
    }

    struct Document: Encodable {
        struct Log: Encodable {
            var version = "1.2"
            var creator = ["name": "hlsplay", "version": hlsplayVersion]
            var pages: [String] = []
            var entries: [HAREntry]
        }
        var log: Log
    }

    /// Writes the document through `outgoing`; false if the write failed (`path.failure` says why).
    func write(_ outgoing: OutgoingText) -> Bool {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(Document(log: .init(entries: entries))) else { return true }
        return path.writeLine(outgoing.json(String(decoding: data, as: UTF8.self)))
    }
}
