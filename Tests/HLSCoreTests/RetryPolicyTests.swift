import Testing
@testable import HLSCore

@Suite struct RetryPolicyTests {
    func error(_ kind: LoadErrorKind, status: Int? = nil, retryAfter: Double? = nil) -> LoadError {
        LoadError(kind: kind, url: "http://127.0.0.1/x", httpStatus: status, retryAfterSeconds: retryAfter, message: "test")
    }

    @Test func backoff_doublesUpToMaximum() {
        let p = RetryPolicy(maxAttempts: 10, initialBackoffSeconds: 0.5, maxBackoffSeconds: 3)
        let e = error(.connect)
        #expect(p.decide(after: e, attemptsMade: 1) == .retry(afterSeconds: 0.5))
        #expect(p.decide(after: e, attemptsMade: 2) == .retry(afterSeconds: 1))
        #expect(p.decide(after: e, attemptsMade: 3) == .retry(afterSeconds: 2))
        #expect(p.decide(after: e, attemptsMade: 4) == .retry(afterSeconds: 3))
    }

    @Test func maxAttempts_justUnderRetries_atGivesUp() {
        let p = RetryPolicy(maxAttempts: 3)
        if case .retry = p.decide(after: error(.transferTimeout), attemptsMade: 2) {} else { Issue.record("expected a retry") }
        if case .giveUp = p.decide(after: error(.transferTimeout), attemptsMade: 3) {} else { Issue.record("expected give-up") }
    }

    @Test func retryAfter_honoured_andTooLongGivesUp() {
        let p = RetryPolicy(maxRetryAfterSeconds: 30)
        #expect(p.decide(after: error(.httpStatus, status: 503, retryAfter: 30), attemptsMade: 1) == .retry(afterSeconds: 30))
        if case .giveUp = p.decide(after: error(.httpStatus, status: 503, retryAfter: 30.5), attemptsMade: 1) {
        } else {
            Issue.record("expected give-up")
        }
    }

    @Test func statuses_classified() {
        let p = RetryPolicy()
        #expect(p.isRetryable(error(.httpStatus, status: 500)))
        #expect(p.isRetryable(error(.httpStatus, status: 503)))
        #expect(p.isRetryable(error(.httpStatus, status: 429)))
        #expect(!p.isRetryable(error(.httpStatus, status: 403)))
        #expect(!p.isRetryable(error(.httpStatus, status: 404)))
        #expect(RetryPolicy(retryNotFound: true).isRetryable(error(.httpStatus, status: 404)))
        #expect(!p.isRetryable(error(.cancelled)))
        #expect(!p.isRetryable(error(.unsupportedScheme)))
        #expect(p.isRetryable(error(.truncatedBody)))
    }
}
