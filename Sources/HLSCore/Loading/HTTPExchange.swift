// What went over the wire for one HTTP request, as libcurl reported it: the
// URL really requested, the request headers really sent, the status line and
// headers really received, the phase times and the body bytes that arrived —
// for a completed request and for one that failed or was cut short alike
// (a cancelled 200 still ran for its seconds and received its bytes). The
// HAR is written from it. Nothing here is redacted: what leaves the process
// goes through `OutgoingText` and `URLRedaction` where it is written.

import Foundation

public struct HTTPExchange: Sendable, Equatable {
    /// One header line: the name as it was sent, the value without surrounding blanks.
    public struct Field: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// The phases of the request, each in seconds from its start.
    public struct Timings: Sendable, Equatable {
        /// Name lookup done (0 on a reused connection or for an IP literal).
        public var nameLookupSeconds: Double
        /// TCP connect done (no earlier than the name lookup).
        public var connectSeconds: Double
        /// TLS handshake done; 0 without TLS.
        public var tlsSeconds: Double
        /// First response byte (status line); nil when none arrived.
        public var firstByteSeconds: Double?
        /// The end of the transfer, whether it completed or was cut short.
        public var totalSeconds: Double

        public init(nameLookupSeconds: Double, connectSeconds: Double, tlsSeconds: Double, firstByteSeconds: Double?, totalSeconds: Double) {
            self.nameLookupSeconds = nameLookupSeconds
            self.connectSeconds = connectSeconds
            self.tlsSeconds = tlsSeconds
            self.firstByteSeconds = firstByteSeconds
            self.totalSeconds = totalSeconds
        }
    }

    /// The URL given to libcurl (with a CMCD query when hlsplay added one).
    public var url: String
    /// The request line's method.
    public var method: String
    /// "HTTP/1.0", "HTTP/1.1", "HTTP/2", "HTTP/3" (CURLINFO_HTTP_VERSION); nil when no response came.
    public var httpVersion: String?
    /// The request headers of the last request sent (after redirects: the final hop's), in order,
    /// as libcurl reported them (CURLINFO_HEADER_OUT), Host and User-Agent included.
    public var requestHeaders: [Field]
    /// Bytes of the request line and headers sent (the last hop), blank line included; nil when unknown.
    public var requestHeaderBytes: Int?
    /// The final response's status code, whatever it was (a cancelled 200 is 200); nil when no status line arrived.
    public var status: Int?
    /// The final response's reason phrase ("OK"); empty when it had none (HTTP/2 has none).
    public var statusText: String
    /// The final response's headers, in order, names as received.
    public var responseHeaders: [Field]
    /// Bytes of the final response's status line and headers, blank line included; nil when none arrived.
    public var responseHeaderBytes: Int?
    /// Body bytes that came over the network for the final response.
    public var bodyBytesReceived: Int
    /// Redirects libcurl followed before the final response.
    public var redirectCount: Int
    /// The server's IP address (CURLINFO_PRIMARY_IP); nil when no connection was made.
    public var serverIPAddress: String?
    /// The local port of the connection (CURLINFO_LOCAL_PORT): tells connections apart.
    public var localPort: Int?
    public var timings: Timings

    public init(
        url: String, method: String = "GET", httpVersion: String? = nil, requestHeaders: [Field] = [], requestHeaderBytes: Int? = nil,
        status: Int? = nil, statusText: String = "", responseHeaders: [Field] = [], responseHeaderBytes: Int? = nil,
        bodyBytesReceived: Int = 0, redirectCount: Int = 0, serverIPAddress: String? = nil, localPort: Int? = nil,
        timings: Timings
    ) {
        self.url = url
        self.method = method
        self.httpVersion = httpVersion
        self.requestHeaders = requestHeaders
        self.requestHeaderBytes = requestHeaderBytes
        self.status = status
        self.statusText = statusText
        self.responseHeaders = responseHeaders
        self.responseHeaderBytes = responseHeaderBytes
        self.bodyBytesReceived = bodyBytesReceived
        self.redirectCount = redirectCount
        self.serverIPAddress = serverIPAddress
        self.localPort = localPort
        self.timings = timings
    }

    /// The value of the first response header named `name` (any case).
    public func responseHeader(_ name: String) -> String? {
        responseHeaders.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// A status line's parts: `HTTP/1.1 206 Partial Content` → ("HTTP/1.1", 206, "Partial Content");
    /// `HTTP/2 200` → ("HTTP/2", 200, ""). Nil for a line that is not a status line.
    public static func parseStatusLine(_ line: String) -> (version: String, status: Int, reason: String)? {
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.hasPrefix("HTTP/") else { return nil }
        let parts = trimmed.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, let status = Int(parts[1]) else { return nil }
        return (String(parts[0]), status, parts.count > 2 ? String(parts[2]).trimmingCharacters(in: .whitespaces) : "")
    }

    /// A header block as libcurl reports it sent (`GET /x HTTP/1.1\r\nHost: h\r\n…\r\n\r\n`): the
    /// request line's method and the header fields in order. Lines without a colon are skipped.
    public static func parseRequestHeaderBlock(_ block: String) -> (method: String?, fields: [Field]) {
        var lines = block.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\r\n" || $0 == "\n" || $0 == "\r" })
        guard let first = lines.first else { return (nil, []) }
        var method: String?
        if !first.contains(":") || first.hasPrefix("GET ") || first.hasPrefix("HEAD ") {
            method = first.split(separator: " ").first.map(String.init)
            lines.removeFirst()
        }
        return (method, lines.compactMap(parseField))
    }

    /// One `Name: value` line; nil without a colon or with an empty name.
    public static func parseField<S: StringProtocol>(_ line: S) -> Field? {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        let name = line[..<colon].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty else { return nil }
        return Field(name: name, value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
