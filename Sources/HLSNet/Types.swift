// Value types of the HLSNet HTTP client: requests, responses, timings,
// byte progress, TCP_INFO snapshots, and the system monotonic clock.

import Foundation
import Glibc
import HLSCore

/// The system's monotonic clock (`clock_gettime(CLOCK_MONOTONIC)`), for the runtime.
public struct SystemMonotonicClock: MonotonicClock {
    public init() {}
    public func now() -> MonotonicInstant {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return MonotonicInstant(nanoseconds: UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec))
    }
}

/// One GET request.
public struct HTTPRequest: Sendable {
    public var url: URL
    /// Sub-range of the resource to fetch; a nil offset means from byte 0.
    public var byteRange: ByteRange?
    /// Extra request headers, sent in order.
    public var headers: [(name: String, value: String)]
    /// Largest body accepted; a longer one aborts the transfer as `.responseTooLarge`
    /// (checked against Content-Length up front and against the bytes received).
    public var maxBodyBytes: Int
    /// Time from the start of the request to the first response byte (headers
    /// included) before it fails as `.firstByteTimeout`.
    public var firstByteTimeoutSeconds: Double
    /// After the first byte, no byte for this long fails the request as `.transferTimeout`.
    public var stallTimeoutSeconds: Double
    /// Optional limit on the whole request (`.transferTimeout`, or
    /// `.firstByteTimeout` if no byte had arrived yet).
    public var totalTimeoutSeconds: Double?
    /// Open a new connection for this request instead of reusing a cached one
    /// (CURLOPT_FRESH_CONNECT): a re-request after a wedge must not inherit
    /// the stuck connection.
    public var freshConnection = false

    public init(
        url: URL, byteRange: ByteRange? = nil, headers: [(name: String, value: String)] = [],
        maxBodyBytes: Int = 256 << 20, firstByteTimeoutSeconds: Double = 10,
        stallTimeoutSeconds: Double = 10, totalTimeoutSeconds: Double? = nil
    ) {
        self.url = url
        self.byteRange = byteRange
        self.headers = headers
        self.maxBodyBytes = maxBodyBytes
        self.firstByteTimeoutSeconds = firstByteTimeoutSeconds
        self.stallTimeoutSeconds = stallTimeoutSeconds
        self.totalTimeoutSeconds = totalTimeoutSeconds
    }
}

/// curl's per-request phase times, each measured from the start of the
/// request (CURLINFO_*_TIME_T), except `redirectSeconds` which is the time
/// spent on all redirect hops before the final one. On a reused connection
/// name lookup and connect are (near) zero.
public struct RequestTimings: Sendable, Equatable, Codable {
    public var nameLookupSeconds: Double
    public var connectSeconds: Double
    /// TLS handshake done (CURLINFO_APPCONNECT_TIME_T); 0 for plain http.
    public var tlsSeconds: Double
    /// First byte of the response (CURLINFO_STARTTRANSFER_TIME_T).
    public var firstByteSeconds: Double
    public var totalSeconds: Double
    public var redirectSeconds: Double

    public init(
        nameLookupSeconds: Double = 0, connectSeconds: Double = 0, tlsSeconds: Double = 0,
        firstByteSeconds: Double = 0, totalSeconds: Double = 0, redirectSeconds: Double = 0
    ) {
        self.nameLookupSeconds = nameLookupSeconds
        self.connectSeconds = connectSeconds
        self.tlsSeconds = tlsSeconds
        self.firstByteSeconds = firstByteSeconds
        self.totalSeconds = totalSeconds
        self.redirectSeconds = redirectSeconds
    }
}

/// One chunk of body bytes as it arrived: when (injected clock), how many,
/// and the running total. A consumer tells "bytes still flowing" from
/// "nothing for N s" by the gaps between `at`s.
public struct ByteProgress: Sendable, Equatable {
    public var at: MonotonicInstant
    public var chunkBytes: Int
    /// Body bytes received from the network so far for this response.
    public var totalBytes: Int
    /// Content-Length of the response, when the server sent one.
    public var expectedBytes: Int?

    public init(at: MonotonicInstant, chunkBytes: Int, totalBytes: Int, expectedBytes: Int?) {
        self.at = at
        self.chunkBytes = chunkBytes
        self.totalBytes = totalBytes
        self.expectedBytes = expectedBytes
    }
}

/// The kernel's TCP_INFO for the request's connection.
public struct TCPInfoSnapshot: Sendable, Equatable, Codable {
    /// Smoothed round-trip time (tcpi_rtt).
    public var rttSeconds: Double
    public var rttVarianceSeconds: Double
    public var totalRetransmits: Int
    /// Sender congestion window (tcpi_snd_cwnd), in segments.
    public var congestionWindowSegments: Int
    /// tcpi_delivery_rate in **bytes** per second (as the kernel reports
    /// it); nil when the kernel does not report it. See `deliveryRateBitsPerSecond`.
    public var deliveryRateBytesPerSecond: Double?
    /// Whether the delivery-rate sample was application-limited (not network-limited).
    public var deliveryRateAppLimited: Bool?

    public init(
        rttSeconds: Double, rttVarianceSeconds: Double, totalRetransmits: Int,
        congestionWindowSegments: Int, deliveryRateBytesPerSecond: Double?, deliveryRateAppLimited: Bool?
    ) {
        self.rttSeconds = rttSeconds
        self.rttVarianceSeconds = rttVarianceSeconds
        self.totalRetransmits = totalRetransmits
        self.congestionWindowSegments = congestionWindowSegments
        self.deliveryRateBytesPerSecond = deliveryRateBytesPerSecond
        self.deliveryRateAppLimited = deliveryRateAppLimited
    }

    /// The delivery rate in bits per second.
    public var deliveryRateBitsPerSecond: Double? { deliveryRateBytesPerSecond.map { $0 * 8 } }
}

/// A completed response (status < 400; ≥ 400 is returned as a LoadError).
public struct HTTPResponse: Sendable {
    public var statusCode: Int
    /// Headers of the final response, names lower-cased; repeated headers joined with ", ".
    public var headers: [String: String]
    public var body: Data
    public var effectiveURL: URL
    public var redirectCount: Int
    /// True when no new connection was opened for this request (CURLINFO_NUM_CONNECTS == 0).
    public var connectionReused: Bool
    public var timings: RequestTimings
    /// TCP_INFO sampled at the end of the transfer; nil for files or when unavailable.
    public var tcpInfo: TCPInfoSnapshot?
    public var startedAt: MonotonicInstant
    public var finishedAt: MonotonicInstant
    /// Content-Length of the final response, when sent.
    public var contentLength: Int?
    /// True when a byte-range request got a 200 with the whole resource and
    /// the client cut the range out itself (and closed the connection early).
    public var rangeSlicedLocally: Bool
    /// Body bytes that came over the network (differs from `body.count` when sliced locally).
    public var bytesReceived: Int
    /// What went over the wire (request headers sent, status line, headers in order); nil for a local file.
    public var exchange: HTTPExchange?

    public init(
        statusCode: Int, headers: [String: String], body: Data, effectiveURL: URL, redirectCount: Int,
        connectionReused: Bool, timings: RequestTimings, tcpInfo: TCPInfoSnapshot?,
        startedAt: MonotonicInstant, finishedAt: MonotonicInstant, contentLength: Int?,
        rangeSlicedLocally: Bool = false, bytesReceived: Int? = nil, exchange: HTTPExchange? = nil
    ) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.effectiveURL = effectiveURL
        self.redirectCount = redirectCount
        self.connectionReused = connectionReused
        self.timings = timings
        self.tcpInfo = tcpInfo
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.contentLength = contentLength
        self.rangeSlicedLocally = rangeSlicedLocally
        self.bytesReceived = bytesReceived ?? body.count
        self.exchange = exchange
    }
}

/// Cancels an in-flight fetch from any thread; the fetch ends as `.cancelled`
/// within about one poll interval.
public final class CancellationToken: @unchecked Sendable {
    private let lock = NSLock()
    private var cancelled = false
    private var handlers: [@Sendable () -> Void] = []
    public init() {}
    public func cancel() {
        let run: [@Sendable () -> Void] = lock.withLock {
            guard !cancelled else { return [] }
            cancelled = true
            defer { handlers = [] }
            return handlers
        }
        for handler in run { handler() }
    }
    public var isCancelled: Bool { lock.withLock { cancelled } }
    /// Runs `handler` when the token is cancelled (at once, on this thread, if it already is): for a loader that
    /// waits on a condition rather than polling `isCancelled`, to wake it.
    public func onCancel(_ handler: @escaping @Sendable () -> Void) {
        let now: Bool = lock.withLock {
            if cancelled { return true }
            handlers.append(handler)
            return false
        }
        if now { handler() }
    }
}

/// Client-wide settings.
public struct HTTPClientConfiguration: Sendable {
    /// Version string used in the default User-Agent.
    public static let hlsplayVersion = ProjectVersion.string

    /// Redirects followed per request before failing as `.redirect`.
    public var maxRedirects: Int
    /// Verify the TLS peer certificate and host name.
    public var verifyTLS: Bool
    public var userAgent: String
    /// Limit on TCP connect + TLS handshake per connection attempt (`.connect`).
    public var connectTimeoutSeconds: Double
    /// Allow file:// URLs and plain local paths (the player sets this when the
    /// top-level URL is a local file). Redirects never go to files.
    public var allowFileURLs: Bool
    /// With `allowFileURLs`: only files whose real path (symlinks resolved) lies inside
    /// this directory, itself a real path, are read; others fail as `localFileRefused`
    /// without being opened. nil: any local file. Only regular files are ever read.
    public var localFileDirectory: String?
    /// How often the transfer loop wakes, at most, to check cancellation and
    /// timeouts while the connection is idle. Bounds cancellation latency.
    public var pollIntervalSeconds: Double
    /// Minimum spacing of TCP_INFO samples taken during a transfer.
    public var tcpInfoSampleIntervalSeconds: Double
    /// Headers the user asked for (`--header`, `--cookie`, `--referer`), sent before the request's own
    /// with every request whose host they apply to. A redirect to another host gets them too, except
    /// Authorization and Cookie, which libcurl sends to the original host only.
    public var userHeaders: [UserHeader] = []
    /// `--proxy`: the proxy every request goes through (libcurl's syntax, e.g. http://host:3128,
    /// socks5h://host:1080). nil: libcurl's own choice (the http_proxy, https_proxy, no_proxy variables).
    public var proxy: String?
    /// `--cacert`: a PEM file of the certificate authorities that verify a TLS peer, in place of the
    /// system's bundle (CURLOPT_CAINFO, as curl's `--cacert`). nil: libcurl's default bundle.
    public var caCertificateFile: String?

    public init(
        maxRedirects: Int = 5, verifyTLS: Bool = true,
        userAgent: String = "hlsplay/\(HTTPClientConfiguration.hlsplayVersion)",
        connectTimeoutSeconds: Double = 10, allowFileURLs: Bool = false, localFileDirectory: String? = nil,
        pollIntervalSeconds: Double = 0.05, tcpInfoSampleIntervalSeconds: Double = 0.1
    ) {
        self.maxRedirects = maxRedirects
        self.verifyTLS = verifyTLS
        self.userAgent = userAgent
        self.connectTimeoutSeconds = connectTimeoutSeconds
        self.allowFileURLs = allowFileURLs
        self.localFileDirectory = localFileDirectory
        self.pollIntervalSeconds = pollIntervalSeconds
        self.tcpInfoSampleIntervalSeconds = tcpInfoSampleIntervalSeconds
    }
}
