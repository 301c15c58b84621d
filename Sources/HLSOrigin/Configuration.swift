import Foundation

/// Configuration of an `OriginServer`.
public struct OriginConfiguration: Sendable {
    /// IP address literal to bind, IPv4 or IPv6 (`BindAddress`). Loopback only by default.
    public var bindAddress: String
    /// If set, one JSON object per request is appended to this file (JSON Lines).
    public var requestLogURL: URL?
    /// Fault rules, evaluated in order for every request; the first rule that fires wins.
    public var faults: [FaultRule]
    /// Optional constant-rate pacing for the whole link (all connections share one token bucket), in bits per second.
    public var rateBitsPerSecond: Double?
    /// Delay before the first byte of every response (a crude RTT model), in seconds.
    public var rttSeconds: Double
    /// Open connections at most. A new connection over the limit closes the waiting connection (no whole request
    /// yet, or kept alive between requests) that has waited longest; if every connection is busy with a response,
    /// the new one is closed at once (`ConnectionAdmission`).
    public var maxConnections: Int
    /// Open connections from one client IP address at most, by the same rule; nil = no limit but `maxConnections`. On loopback
    /// every client is 127.0.0.1, so anything lower caps all clients together (hundreds of hlsplay sessions hold
    /// about two connections each).
    public var maxConnectionsPerAddress: Int? = nil
    /// Longest a client may take to send a request head (and the body it declares), in seconds — a total, however
    /// the bytes trickle in. Counted from the connection's acceptance for its first request, and from the first
    /// byte of the head for later ones. On expiry the connection is closed (after a 408 if part of a head came).
    public var headerTimeoutSeconds: Double = OriginConfiguration.defaultHeaderTimeoutSeconds
    /// Longest a kept-alive connection may sit idle between requests before the origin closes it, in seconds.
    public var keepAliveIdleSeconds: Double = OriginConfiguration.defaultKeepAliveIdleSeconds
    /// Serve files whose real path (every symbolic link resolved) is outside the root's real path. Off, they get a
    /// 403; links that stay inside the root are followed either way.
    public var followSymlinks: Bool = false
    /// A throughput trace replayed (looped) on the shared link from server start. Takes precedence over
    /// `rateBitsPerSecond`.
    public var trace: ThroughputTrace?
    /// Windows (server time) during which the shared link delivers nothing. Apply on top of the trace or rate;
    /// on an otherwise unshaped link they act on a link of `unshapedLinkBitsPerSecond`.
    public var linkCollapses: [LinkCollapse]
    /// When `rttSeconds` is 0 and the trace carries a latency (Sabre `latency_ms`), delay each first byte by it.
    public var useTraceLatency: Bool
    /// Serve VOD media playlists as live streams (nil = serve files as they are).
    public var live: LiveConfiguration?

    /// Rate of the emulated link when only collapses are configured (fast enough not to matter on loopback).
    public static let unshapedLinkBitsPerSecond = 10e9
    /// Default `headerTimeoutSeconds`: a real client sends its head within milliseconds of connecting; 10 s leaves
    /// room for a client starved of CPU on a loaded machine and still frees a dripping connection's slot soon.
    public static let defaultHeaderTimeoutSeconds = 10.0
    /// Default `keepAliveIdleSeconds` (the per-read receive timeout of earlier versions, which idle connections met).
    public static let defaultKeepAliveIdleSeconds = 60.0

    /// The admission rule these limits describe.
    public var admission: ConnectionAdmission {
        ConnectionAdmission(maxConnections: maxConnections, maxConnectionsPerAddress: maxConnectionsPerAddress)
    }

    public init(
        bindAddress: String = "127.0.0.1",
        requestLogURL: URL? = nil,
        faults: [FaultRule] = [],
        rateBitsPerSecond: Double? = nil,
        rttSeconds: Double = 0,
        maxConnections: Int = 512,
        trace: ThroughputTrace? = nil,
        linkCollapses: [LinkCollapse] = [],
        useTraceLatency: Bool = true,
        live: LiveConfiguration? = nil
    ) {
        self.trace = trace
        self.linkCollapses = linkCollapses
        self.useTraceLatency = useTraceLatency
        self.live = live
        self.bindAddress = bindAddress
        self.requestLogURL = requestLogURL
        self.faults = faults
        self.rateBitsPerSecond = rateBitsPerSecond
        self.rttSeconds = rttSeconds
        self.maxConnections = maxConnections
    }

    /// The shaper these settings describe: a `TraceShaper` (a trace, or a constant rate as a one-piece trace, with
    /// the collapses), nil for an unshaped link. (`TokenBucketShaper` lost ~5% of a constant rate to per-chunk
    /// wake-up latency; the trace shaper's idle slack does not.)
    public func makeShaper() -> (any LinkShaper)? {
        guard trace != nil || rateBitsPerSecond != nil || !linkCollapses.isEmpty else { return nil }
        let base = trace ?? .constant(bitsPerSecond: rateBitsPerSecond ?? Self.unshapedLinkBitsPerSecond)
        return TraceShaper(trace: base, collapses: linkCollapses)
    }
}

/// A fault to inject into responses for requests that match.
///
/// `pathPattern` is matched against the decoded request path (without the query string).
/// If it contains `*`, `?` or `[` it is a shell glob (`fnmatch`, where `*` also matches `/`);
/// otherwise it matches when it is a substring of the path.
public struct FaultRule: Sendable, Codable, Equatable {
    public var pathPattern: String
    /// Fire only on the nth (0-based) request that matches `pathPattern` (and `afterSeconds`),
    /// counted across all connections since server start. `nil` = every matching request.
    public var requestIndex: Int?
    /// Only consider requests arriving at least this long after server start.
    public var afterSeconds: Double?
    public var action: FaultAction

    public init(pathPattern: String, requestIndex: Int? = nil, afterSeconds: Double? = nil, action: FaultAction) {
        self.pathPattern = pathPattern
        self.requestIndex = requestIndex
        self.afterSeconds = afterSeconds
        self.action = action
    }

    /// Whether `path` matches `pathPattern`.
    public func matches(path: String) -> Bool {
        if pathPattern.contains(where: { $0 == "*" || $0 == "?" || $0 == "[" }) {
            return fnmatch(pathPattern, path, 0) == 0
        }
        return pathPattern.isEmpty || path.contains(pathPattern)
    }
}

/// What to do to a response. Byte counts refer to **body** bytes; the status line and headers are always sent whole
/// (except for `.blackHole` and `.resetConnection`, which send nothing).
public enum FaultAction: Sendable, Codable, Equatable {
    /// Answer with this status (and an optional `Retry-After` header) instead of the file.
    case status(code: Int, retryAfterSeconds: Int?)
    /// Accept and read the request, never answer (the connection stays open until the client closes it or the server stops).
    case blackHole
    /// Send headers and exactly `bytes` body bytes, then go silent for `seconds` (nil = forever), then send the rest.
    case stallAfterBytes(bytes: Int, seconds: Double?)
    /// Read the request, then close with SO_LINGER 0 so the client sees a TCP RST.
    case resetConnection
    /// Send headers with the full Content-Length, then only `bytes` body bytes, then close.
    case truncateAfterBytes(bytes: Int)
    /// Wait this long (in addition to the configured RTT) before the first byte of the response.
    case slowFirstByte(seconds: Double)
    /// Send headers with the full Content-Length, then the body `bytes` at a time, one piece every `everySeconds`
    /// (a body that trickles: bytes keep coming, so no stall timeout ever fires, but the response takes ages).
    case trickle(bytes: Int, everySeconds: Double)

    /// Short human/log description, e.g. `status(503,retryAfter=2)`.
    public var logDescription: String {
        switch self {
        case let .status(code, retry):
            return retry.map { "status(\(code),retryAfter=\($0))" } ?? "status(\(code))"
        case .blackHole: return "blackHole"
        case let .stallAfterBytes(bytes, seconds):
            return "stallAfterBytes(\(bytes),\(seconds.map { "\($0)s" } ?? "forever"))"
        case .resetConnection: return "resetConnection"
        case let .truncateAfterBytes(bytes): return "truncateAfterBytes(\(bytes))"
        case let .slowFirstByte(seconds): return "slowFirstByte(\(seconds)s)"
        case let .trickle(bytes, every): return "trickle(\(bytes)B/\(every)s)"
        }
    }

    private enum CodingKeys: String, CodingKey {
        case type, code, retryAfterSeconds, bytes, seconds
        case everySeconds
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let type = try c.decode(String.self, forKey: .type)
        switch type {
        case "status":
            self = .status(
                code: try c.decode(Int.self, forKey: .code),
                retryAfterSeconds: try c.decodeIfPresent(Int.self, forKey: .retryAfterSeconds))
        case "blackHole": self = .blackHole
        case "stallAfterBytes":
            self = .stallAfterBytes(
                bytes: try c.decode(Int.self, forKey: .bytes),
                seconds: try c.decodeIfPresent(Double.self, forKey: .seconds))
        case "resetConnection": self = .resetConnection
        case "truncateAfterBytes": self = .truncateAfterBytes(bytes: try c.decode(Int.self, forKey: .bytes))
        case "slowFirstByte": self = .slowFirstByte(seconds: try c.decode(Double.self, forKey: .seconds))
        case "trickle":
            let bytes = try c.decode(Int.self, forKey: .bytes)
            let every = try c.decode(Double.self, forKey: .everySeconds)
            guard bytes > 0, every > 0, every.isFinite else {
                throw DecodingError.dataCorruptedError(forKey: .bytes, in: c, debugDescription: "trickle needs bytes > 0 and everySeconds > 0")
            }
            self = .trickle(bytes: bytes, everySeconds: every)
        default:
            throw DecodingError.dataCorruptedError(forKey: .type, in: c, debugDescription: "unknown fault type \"\(type)\"")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case let .status(code, retry):
            try c.encode("status", forKey: .type)
            try c.encode(code, forKey: .code)
            try c.encodeIfPresent(retry, forKey: .retryAfterSeconds)
        case .blackHole: try c.encode("blackHole", forKey: .type)
        case let .stallAfterBytes(bytes, seconds):
            try c.encode("stallAfterBytes", forKey: .type)
            try c.encode(bytes, forKey: .bytes)
            try c.encodeIfPresent(seconds, forKey: .seconds)
        case .resetConnection: try c.encode("resetConnection", forKey: .type)
        case let .truncateAfterBytes(bytes):
            try c.encode("truncateAfterBytes", forKey: .type)
            try c.encode(bytes, forKey: .bytes)
        case let .slowFirstByte(seconds):
            try c.encode("slowFirstByte", forKey: .type)
            try c.encode(seconds, forKey: .seconds)
        case let .trickle(bytes, every):
            try c.encode("trickle", forKey: .type)
            try c.encode(bytes, forKey: .bytes)
            try c.encode(every, forKey: .everySeconds)
        }
    }
}
