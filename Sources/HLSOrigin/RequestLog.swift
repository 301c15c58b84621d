import Foundation

/// One line of the request log (JSON Lines). Times are seconds since server start (monotonic).
public struct RequestLogEntry: Codable, Sendable, Equatable {
    /// Request line read.
    public var accepted: Double
    public var firstByteSent: Double?
    public var lastByteSent: Double?
    public var method: String
    public var path: String
    /// Raw query string of the request target (without `?`), if any — e.g. `live=42` for a live segment.
    public var query: String?
    /// Raw `Range` header value, if any.
    public var range: String?
    /// Status sent; 0 if no response was sent (black hole, reset).
    public var status: Int
    /// Bytes written on the socket for this response (headers + body).
    public var bytesSent: Int
    /// Body bytes written.
    public var bodyBytesSent: Int
    public var connectionID: Int
    public var requestIndex: Int
    public var fault: String?
    /// Shaping in force, e.g. `"rate=2000000bps rtt=0.05s"`, or `"none"`.
    public var shaping: String
    /// Link rate in force when the request was accepted (nil = unshaped link).
    public var rateBitsPerSecond: Double?
    /// Trace replayed on the link, and the position within its loop at acceptance.
    public var trace: String?
    public var tracePositionSeconds: Double?
    /// true if a link collapse was in force at acceptance (absent otherwise).
    public var linkCollapsed: Bool?
    /// First-byte delay applied (configured RTT or trace latency), absent if none.
    public var rttSeconds: Double?
    /// Low-latency mode: how long a playlist (blocking reload) or part (preload hint) request was held before
    /// the answer, seconds; absent for other requests.
    public var blockedSeconds: Double?
    /// Why a 403 was sent: `outsideRoot` (the path leads, through a symbolic link, outside ROOT) or
    /// `forbiddenSegment` (a `..` or `\` segment in the path); absent otherwise.
    public var refused: String? = nil
    /// With `refused: outsideRoot`: the real path the request led to.
    public var resolvedPath: String? = nil
    /// The client's IP address (`127.0.0.1`, `::1`; with `--bind 0.0.0.0`, which machine asked).
    public var clientAddress: String? = nil
    /// The request's header fields, names lowercased, repeated fields joined (`OriginHTTP.loggedHeaders`): the
    /// ground truth of what a client sent (CMCD headers, `Range`, `User-Agent`). `Cookie` keeps its names only,
    /// `Authorization` its scheme only. Absent for a head that could not be parsed.
    public var headers: [String: String]? = nil
}

/// A line of the request log about a connection rather than a request: one the origin closed because it took too
/// long to send a request head, one closed to make room for a new connection, or a new connection refused because
/// every connection counting against a limit was busy. Told from request lines by `type` (request lines have none).
public struct ConnectionLogEntry: Codable, Sendable, Equatable {
    public enum Event: String, Codable, Sendable {
        /// No whole request head within `headerTimeoutSeconds`: the connection was closed.
        case headerTimeout
        /// A waiting connection closed to make room for a new one (`limit`, `evictedFor`).
        case evicted
        /// A new connection closed at once: every connection counting against `limit` was busy.
        case refused
    }

    /// Always `connection`.
    public var type: String = "connection"
    public var event: Event
    /// When it happened (seconds since server start).
    public var at: Double
    public var connectionID: Int
    /// The client's IP address.
    public var clientAddress: String
    /// When the connection was accepted.
    public var accepted: Double
    /// headerTimeout, evicted: when the origin began waiting for the head it did not get (the acceptance for a
    /// first request, the end of the previous response for a kept-alive connection).
    public var waitingSince: Double?
    /// headerTimeout, evicted: bytes of that head received.
    public var headBytes: Int?
    /// headerTimeout, evicted: request heads received on the connection before.
    public var requestsReceived: Int?
    /// headerTimeout: the bound in force, seconds.
    public var headerTimeoutSeconds: Double?
    /// headerTimeout: the status sent before closing (408 when part of a head had come), absent if none.
    public var sentStatus: Int?
    /// evicted, refused: the limit reached (`maxConnections` or `maxConnectionsPerAddress`) and its value.
    public var limit: ConnectionAdmission.Limit?
    public var limitValue: Int?
    /// evicted: the new connection it made room for.
    public var evictedFor: Int?

    public init(event: Event, at: Double, connectionID: Int, clientAddress: String, accepted: Double) {
        self.event = event
        self.at = at
        self.connectionID = connectionID
        self.clientAddress = clientAddress
        self.accepted = accepted
    }
}

/// Thread-safe JSON Lines writer; every entry is written (and flushed to the kernel) immediately.
final class RequestLogWriter: @unchecked Sendable {
    private let handle: FileHandle
    private let lock = NSLock()
    private let encoder: JSONEncoder

    init(url: URL) throws {
        _ = FileManager.default.createFile(atPath: url.path, contents: nil)
        handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: 0)
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    }

    func write(_ entry: some Encodable) {
        lock.lock()
        defer { lock.unlock() }
        guard var data = try? encoder.encode(entry) else { return }
        data.append(0x0A)
        try? handle.write(contentsOf: data)
    }

    func close() {
        lock.lock()
        defer { lock.unlock() }
        try? handle.close()
    }
}
