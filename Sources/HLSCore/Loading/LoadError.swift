// The load-error taxonomy. Loaders (HLSNet) map every failure to one of
// these kinds; whether to retry is decided separately by a RetryPolicy.

/// What went wrong with one request, in terms a retry policy can act on.
public enum LoadErrorKind: String, Sendable, Equatable, Codable, CaseIterable {
    /// The host name did not resolve.
    case nameResolution
    /// TCP (or TLS) connection could not be established.
    case connect
    /// TLS handshake or certificate verification failed.
    case tls
    /// No first byte within the first-byte timeout.
    case firstByteTimeout
    /// The whole transfer exceeded its time limit, or no byte arrived for the stall timeout.
    case transferTimeout
    /// The server answered with an HTTP status outside 2xx.
    case httpStatus
    /// The connection closed or was reset before the body was complete.
    case truncatedBody
    /// The response was larger than the limit for what it is (playlist, key, segment).
    case responseTooLarge
    /// Too many redirects, or a redirect to a scheme other than http/https.
    case redirect
    /// A URL with a scheme hlsplay does not fetch from a playlist (only http and https).
    case unsupportedScheme
    /// The request was cancelled by the player (abandoned, or the session ended).
    case cancelled
    /// A local file could not be read (missing, unreadable, not a regular file).
    case file
    /// A local file outside the directory local inputs are confined to (the top-level
    /// playlist's); refused without being opened.
    case localFileRefused
    /// A URL that names no resource to fetch: an http(s) URL without a host. Refused at
    /// once, without a name lookup or a retry.
    case invalidURL
    /// Anything else the transport reported.
    case other
}

/// A failed load: the kind, the HTTP status where there was one, the
/// server's Retry-After where it sent one, and a human message.
public struct LoadError: Error, Sendable, Equatable, CustomStringConvertible {
    public var kind: LoadErrorKind
    public var url: String
    public var httpStatus: Int?
    /// Retry-After from the response, seconds.
    public var retryAfterSeconds: Double?
    /// Bytes of body received before the failure.
    public var bytesReceived: Int
    public var message: String
    /// What went over the wire (status, headers, timings, bytes) when an HTTP request was made;
    /// nil for errors raised before one (a refused scheme, a local file).
    public var exchange: HTTPExchange?

    public init(
        kind: LoadErrorKind, url: String, httpStatus: Int? = nil, retryAfterSeconds: Double? = nil,
        bytesReceived: Int = 0, message: String
    ) {
        self.kind = kind
        self.url = url
        self.httpStatus = httpStatus
        self.retryAfterSeconds = retryAfterSeconds
        self.bytesReceived = bytesReceived
        self.message = message
    }

    public var description: String {
        if let httpStatus { return "\(kind.rawValue) (HTTP \(httpStatus)) for \(url): \(message)" }
        return "\(kind.rawValue) for \(url): \(message)"
    }
}
