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

    func write(_ entry: RequestLogEntry) {
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
