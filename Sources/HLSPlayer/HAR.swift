// HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/) for the requests
// of a session, so they open in browser developer tools. Each entry is what
// went over the wire (`HTTPExchange`): the URL really requested (with its
// CMCD query), the headers libcurl sent and received, the status line, the
// phase times and the bytes that arrived — for a request that failed or that
// hlsplay cut short too (`_aborted`, `_error`), with the times it really ran.
// Entries keep the text whole; `HARBuilder.write` redacts through
// `OutgoingText` on the way out, like every other output.

import Foundation
import HLSCore

struct HAREntry: Encodable, Sendable {
    struct Field: Encodable, Sendable { var name: String; var value: String }
    struct Request: Encodable, Sendable {
        var method: String
        var url: String
        var httpVersion: String
        var cookies: [Field] = []
        var headers: [Field]
        var queryString: [Field]
        var headersSize: Int
        var bodySize = 0
    }
    struct Content: Encodable, Sendable { var size: Int; var mimeType: String }
    struct Response: Encodable, Sendable {
        var status: Int
        var statusText: String
        var httpVersion: String
        var cookies: [Field] = []
        var headers: [Field]
        var content: Content
        var redirectURL: String
        var headersSize: Int
        var bodySize: Int
        /// Why the request failed or was cut short (a description naming the URL); absent when it succeeded.
        var _error: String?
        /// The `LoadErrorKind` of the failure; absent when it succeeded.
        var _errorKind: String?
        /// True when the transfer did not run to the end of its response (cancelled, timed out,
        /// the connection broke, no response at all); an error status with its whole body is not aborted.
        var _aborted: Bool
    }
    /// Milliseconds; -1 where a phase did not apply (`send`, `wait`, `receive` are never negative in
    /// HAR 1.2: 0 there). `ssl` is also counted in `connect` (HAR 1.2).
    struct Timings: Encodable, Sendable {
        var blocked: Double = -1
        var dns: Double
        var connect: Double
        var ssl: Double
        var send: Double = 0
        var wait: Double
        var receive: Double

        /// The entry's `time`: the sum of every phase that applied (`ssl` is inside `connect`).
        var totalMilliseconds: Double {
            HAREntry.milliseconds([blocked, dns, connect, send, wait, receive].filter { $0 > 0 }.reduce(0, +) / 1000)
        }
    }
    var startedDateTime: String
    var time: Double
    var request: Request
    var response: Response
    var cache: [String: String] = [:]
    var timings: Timings
    var serverIPAddress: String?
    /// The connection's local port: entries with the same value went over one connection.
    var connection: String?
    var _purpose: String
    var _requestID: Int
    /// Redirects libcurl followed before the response shown (the entry is the final hop's).
    var _redirectCount: Int?

    /// Seconds → HAR milliseconds, to the microsecond.
    static func milliseconds(_ seconds: Double) -> Double { (seconds * 1e6).rounded() / 1e3 }

    /// The HAR phases from the exchange's phase ends (each measured from the request start): the
    /// ends are made monotonic, so the phases never go negative and add up to the total. A
    /// request that failed before its first byte spends its time in the phase that failed.
    static func timings(_ t: HTTPExchange.Timings, failedKind: LoadErrorKind?) -> Timings {
        let lookupEnd = milliseconds(max(0, t.nameLookupSeconds))
        let tcpEnd = max(lookupEnd, milliseconds(t.connectSeconds))
        let connectEnd = max(tcpEnd, milliseconds(t.tlsSeconds))
        let end = max(connectEnd, milliseconds(t.totalSeconds))
        let round = { (ms: Double) in (ms * 1e3).rounded() / 1e3 }
        let ssl = t.tlsSeconds > 0 ? round(connectEnd - tcpEnd) : -1
        guard let firstByteSeconds = t.firstByteSeconds else {
            switch failedKind {
            case .nameResolution?:
                return Timings(dns: end, connect: -1, ssl: -1, wait: 0, receive: 0)
            case .connect?, .tls?:
                return Timings(dns: lookupEnd, connect: round(end - lookupEnd), ssl: -1, wait: 0, receive: 0)
            default:
                // Connected (or reused) and waited for an answer that never came.
                return Timings(dns: lookupEnd, connect: round(connectEnd - lookupEnd), ssl: ssl, wait: round(end - connectEnd), receive: 0)
            }
        }
        let firstByte = min(end, max(connectEnd, milliseconds(firstByteSeconds)))
        return Timings(
            dns: lookupEnd, connect: round(connectEnd - lookupEnd), ssl: ssl,
            wait: round(firstByte - connectEnd), receive: round(end - firstByte))
    }

    /// An entry for one request attempt. `exchange` is what went over the wire; `contentBytes` the
    /// body handed to the player (a range cut out of a whole 200 is smaller than what arrived);
    /// `failure` the error when the request did not succeed, `errorText` its description.
    static func make(
        requestID: Int, purpose: RequestPurpose, startedAt: Date, exchange: HTTPExchange, contentBytes: Int,
        failure: LoadErrorKind?, errorText: String?
    ) -> HAREntry {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let timings = timings(exchange.timings, failedKind: failure)
        let status = exchange.status ?? 0
        let version = exchange.httpVersion ?? ""
        let aborted = failure.map { $0 != .httpStatus } ?? false
        return HAREntry(
            startedDateTime: formatter.string(from: startedAt), time: timings.totalMilliseconds,
            request: Request(
                method: exchange.method, url: exchange.url, httpVersion: version,
                headers: exchange.requestHeaders.map { Field(name: $0.name, value: $0.value) },
                queryString: queryString(of: exchange.url), headersSize: exchange.requestHeaderBytes ?? -1),
            response: Response(
                status: status, statusText: exchange.statusText, httpVersion: version,
                headers: exchange.responseHeaders.map { Field(name: $0.name, value: $0.value) },
                content: Content(size: contentBytes, mimeType: exchange.responseHeader("content-type") ?? "x-unknown"),
                redirectURL: (300..<400).contains(status) ? exchange.responseHeader("location") ?? "" : "",
                headersSize: exchange.responseHeaderBytes ?? -1, bodySize: exchange.bodyBytesReceived,
                _error: errorText, _errorKind: failure?.rawValue, _aborted: aborted),
            timings: timings, serverIPAddress: exchange.serverIPAddress, connection: exchange.localPort.map(String.init),
            _purpose: purpose.rawValue, _requestID: requestID, _redirectCount: exchange.redirectCount > 0 ? exchange.redirectCount : nil)
    }

    /// The query of `url` as name/value pairs, in order, percent-decoded (HAR `queryString`).
    static func queryString(of url: String) -> [Field] {
        guard let items = URLComponents(string: url)?.queryItems else { return [] }
        return items.map { Field(name: $0.name, value: $0.value ?? "") }
    }

    /// The entry as it may leave the process: credential headers and query values replaced
    /// (`OutgoingText`); URLs in every other string are redacted when the document is written.
    func redacted(_ outgoing: OutgoingText) -> HAREntry {
        var copy = self
        copy.request.headers = request.headers.map { Field(name: $0.name, value: outgoing.headerValue(name: $0.name, value: $0.value)) }
        copy.request.queryString = request.queryString.map { Field(name: $0.name, value: outgoing.queryValue($0.value)) }
        copy.response.headers = response.headers.map { Field(name: $0.name, value: outgoing.headerValue(name: $0.name, value: $0.value)) }
        return copy
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
        struct Creator: Encodable {
            var name = "hlsplay"
            var version = hlsplayVersion
        }
        struct Log: Encodable {
            var version = "1.2"
            var creator = Creator()
            var pages: [String] = []
            var entries: [HAREntry]
        }
        var log: Log
    }

    /// Writes the document through `outgoing`; false if the write failed (`path.failure` says why).
    func write(_ outgoing: OutgoingText) -> Bool {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(Document(log: .init(entries: entries.map { $0.redacted(outgoing) }))) else { return true }
        return path.writeLine(outgoing.json(String(decoding: data, as: UTF8.self)))
    }
}
