// Retry and give-up, kept apart from the loader: the loader reports a
// LoadError, this policy says whether and when to try again.

/// What to do after a failed attempt.
public enum RetryDecision: Sendable, Equatable {
    case retry(afterSeconds: Double)
    case giveUp(reason: String)
}

public struct RetryPolicy: Sendable, Equatable, Codable {
    /// Attempts in all, the first included.
    public var maxAttempts: Int
    /// Wait before the second attempt, seconds; doubles each time.
    public var initialBackoffSeconds: Double
    /// Longest wait between attempts, seconds.
    public var maxBackoffSeconds: Double
    /// Honour a Retry-After from the server (up to `maxRetryAfterSeconds`).
    public var honourRetryAfter: Bool
    /// Retry-After values above this are treated as a give-up, seconds.
    public var maxRetryAfterSeconds: Double
    /// Whether a 404/410 is worth retrying (true for live playlists, whose
    /// segments may not be published yet; false for VOD segments).
    public var retryNotFound: Bool

    public init(
        maxAttempts: Int = 4, initialBackoffSeconds: Double = 0.5, maxBackoffSeconds: Double = 8,
        honourRetryAfter: Bool = true, maxRetryAfterSeconds: Double = 30, retryNotFound: Bool = false
    ) {
        self.maxAttempts = maxAttempts
        self.initialBackoffSeconds = initialBackoffSeconds
        self.maxBackoffSeconds = maxBackoffSeconds
        self.honourRetryAfter = honourRetryAfter
        self.maxRetryAfterSeconds = maxRetryAfterSeconds
        self.retryNotFound = retryNotFound
    }

    /// The policy for media segments.
    public static let segment = RetryPolicy()
    /// The policy for playlists (a playlist is needed to go on at all).
    public static let playlist = RetryPolicy(maxAttempts: 5, initialBackoffSeconds: 0.5, maxBackoffSeconds: 8)

    /// Decides after `attemptsMade` attempts (≥ 1) have failed, the last with `error`.
    public func decide(after error: LoadError, attemptsMade: Int) -> RetryDecision {
        if !isRetryable(error) {
            return .giveUp(reason: "\(error.kind.rawValue)\(error.httpStatus.map { " \($0)" } ?? "") is not retryable")
        }
        if attemptsMade >= maxAttempts {
            return .giveUp(reason: "\(attemptsMade) of \(maxAttempts) attempts failed")
        }
        if honourRetryAfter, let retryAfter = error.retryAfterSeconds {
            if retryAfter > maxRetryAfterSeconds {
                return .giveUp(reason: "Retry-After \(retryAfter) s exceeds \(maxRetryAfterSeconds) s")
            }
            return .retry(afterSeconds: max(0, retryAfter))
        }
        let exponent = Double(max(0, attemptsMade - 1))
        var backoff = initialBackoffSeconds
        for _ in 0..<Int(exponent) { backoff *= 2 }
        return .retry(afterSeconds: min(maxBackoffSeconds, backoff))
    }

    public func isRetryable(_ error: LoadError) -> Bool {
        switch error.kind {
        case .connect, .firstByteTimeout, .transferTimeout, .truncatedBody, .nameResolution, .other:
            return true
        case .httpStatus:
            guard let status = error.httpStatus else { return false }
            if status == 404 || status == 410 { return retryNotFound }
            return status >= 500 || status == 408 || status == 429
        case .tls, .responseTooLarge, .redirect, .unsupportedScheme, .cancelled, .file, .localFileRefused, .invalidURL:
            return false
        }
    }
}
