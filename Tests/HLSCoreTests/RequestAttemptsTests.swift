import Testing

@testable import HLSCore

/// `RequestAttempts`: what each attempt of a real session's request that did not give the response leads to, one
/// test per outcome.
@Suite struct RequestAttemptsTests {
    static let url = "http://127.0.0.1:8080/v1/prog.m3u8"
    static let ladderBps = [400_000, 1_200_000, 3_000_000]

    static func attempts(
        _ purpose: RequestPurpose = .mediaPlaylist, policy: RetryPolicy = .playlist, wedge: WedgeRules = WedgeRules(), firstAttempt: Int = 1
    ) -> RequestAttempts {
        RequestAttempts(purpose: purpose, url: url, policy: policy, wedge: wedge, firstAttempt: firstAttempt)
    }

    static func segment(bufferSeconds: Double, rungBps: Int? = 3_000_000) -> RequestAttempts.SegmentWedge {
        RequestAttempts.SegmentWedge(bufferSeconds: bufferSeconds, segmentDurationSeconds: 2, rungBps: rungBps, ladderBitratesBps: ladderBps)
    }

    static func httpError(_ status: Int, retryAfterSeconds: Double? = nil) -> LoadError {
        LoadError(kind: .httpStatus, url: url, httpStatus: status, retryAfterSeconds: retryAfterSeconds, message: "HTTP \(status)")
    }

    @Test func attemptsAreNumberedFromTheFirst_orFromTheAttemptALoaderCoreReRequested() {
        var fresh = Self.attempts()
        #expect(fresh.attemptStarts() == 1)
        #expect(fresh.attemptStarts() == 2)
        var continuing = Self.attempts(firstAttempt: 3)
        #expect(continuing.attemptStarts() == 3)
    }

    @Test func wedgedPlaylist_reRequestedAtOnceUpToTheBound_notAnAttempt_thenAFailedAttempt() {
        var a = Self.attempts(wedge: WedgeRules(maxPlaylistReRequests: 2))
        for id in 1...2 {
            #expect(a.attemptStarts() == 1, "a re-request is the same attempt")
            #expect(
                a.wedged(requestID: id, bytesReceived: 0)
                    == .reRequestNow(RetryScheduled(requestID: id, url: Self.url, attemptsMade: 0, delaySeconds: 0, errorKind: .transferTimeout)))
        }
        #expect(a.attemptStarts() == 1)
        guard case .failedAttempt(let error) = a.wedged(requestID: 3, bytesReceived: 17) else {
            Issue.record("the third wedge past a bound of 2 is a failed attempt")
            return
        }
        #expect(error.kind == .firstByteTimeout)
        #expect(error.bytesReceived == 17)
        // As a failed attempt, the retry policy's: backoff, on a fresh connection (a timeout).
        #expect(
            a.failed(error, requestID: 3)
                == .retry(
                    RetryScheduled(requestID: 3, url: Self.url, attemptsMade: 1, delaySeconds: 0.5, errorKind: .firstByteTimeout),
                    afterSeconds: 0.5, freshConnection: true))
    }

    @Test func trickleReRequest_goesAgainAtOnce_notCountedAsAnAttempt() {
        var a = Self.attempts(.segment, policy: .segment)
        _ = a.attemptStarts()
        _ = a.attemptStarts()
        #expect(
            a.cut(.judged(.trickleReRequest, failure: nil), requestID: 9, segment: Self.segment(bufferSeconds: 10))
                == .reRequestNow(CutShort.immediateRetry(requestID: 9, url: Self.url, attemptsMade: 1)))
        #expect(a.attemptStarts() == 2, "the re-request is the attempt it was")
    }

    @Test func trickleFailed_failsTheRequest_withTheRulesMessage() {
        var a = Self.attempts(.segment, policy: .segment)
        _ = a.attemptStarts()
        #expect(
            a.cut(.judged(.trickleFailed, failure: "too slow"), requestID: 1, segment: nil) == .fail(message: "too slow", httpStatus: nil))
        #expect(
            a.cut(.judged(.trickleFailed, failure: nil), requestID: 1, segment: nil)
                == .fail(message: "segment \(Self.url) trickled: still too slow after its re-requests", httpStatus: nil))
    }

    @Test func overSelectionAndTheABRRulesAbandonment_giveTheRequestBack() {
        var a = Self.attempts(.segment, policy: .segment)
        _ = a.attemptStarts()
        #expect(
            a.cut(.judged(.overSelected, failure: nil), requestID: 1, segment: Self.segment(bufferSeconds: 1))
                == .giveBack(.overSelected, record: nil))
        #expect(
            a.cut(.judged(.abrAbandoned, failure: nil), requestID: 1, segment: Self.segment(bufferSeconds: 1))
                == .giveBack(.abrAbandoned, record: nil))
        #expect(a.cut(.liveStep, requestID: 1, segment: nil) == .giveBack(.liveStepDropped, record: nil))
    }

    @Test func theSegmentsBufferAndLadder_areReadOnlyForAWedge() {
        var a = Self.attempts(.segment, policy: .segment)
        _ = a.attemptStarts()
        var reads = 0
        func read() -> RequestAttempts.SegmentWedge? {
            reads += 1
            return Self.segment(bufferSeconds: 10)
        }
        _ = a.cut(.judged(.overSelected, failure: nil), requestID: 1, segment: read())
        _ = a.cut(.judged(.trickleReRequest, failure: nil), requestID: 1, segment: read())
        _ = a.cut(.liveStep, requestID: 1, segment: read())
        #expect(reads == 0)
        _ = a.cut(.judged(.wedged, failure: nil), requestID: 1, segment: read())
        #expect(reads == 1)
    }

    @Test func wedgedSegmentWithBufferInHand_reRequestedOnce_thenAbandoned() {
        var a = Self.attempts(.segment, policy: .segment)
        _ = a.attemptStarts()
        #expect(
            a.cut(.judged(.wedged, failure: nil), requestID: 4, segment: Self.segment(bufferSeconds: 10))
                == .reRequestNow(CutShort.immediateRetry(requestID: 4, url: Self.url, attemptsMade: 0)))
        _ = a.attemptStarts()
        #expect(a.cut(.judged(.wedged, failure: nil), requestID: 5, segment: Self.segment(bufferSeconds: 10)) == .giveBack(.wedgedAgain, record: nil))
    }

    @Test func wedgedSegmentWithLittleBuffer_decidedAgain_theAttemptStanding() {
        var a = Self.attempts(.segment, policy: .segment)
        _ = a.attemptStarts()
        #expect(
            a.cut(.judged(.wedged, failure: nil), requestID: 4, segment: Self.segment(bufferSeconds: 1))
                == .giveBack(.reDecide, record: CutShort.immediateRetry(requestID: 4, url: Self.url, attemptsMade: 1)))
        // Nothing lower to go to: re-requested instead; and a rung the ladder does not know never re-decides.
        var lowest = Self.attempts(.segment, policy: .segment)
        _ = lowest.attemptStarts()
        #expect(
            lowest.cut(.judged(.wedged, failure: nil), requestID: 6, segment: Self.segment(bufferSeconds: 1, rungBps: 400_000))
                == .reRequestNow(CutShort.immediateRetry(requestID: 6, url: Self.url, attemptsMade: 0)))
        var audio = Self.attempts(.segment, policy: .segment)
        _ = audio.attemptStarts()
        #expect(
            audio.cut(.judged(.wedged, failure: nil), requestID: 7, segment: Self.segment(bufferSeconds: 1, rungBps: nil))
                == .reRequestNow(CutShort.immediateRetry(requestID: 7, url: Self.url, attemptsMade: 0)))
    }

    @Test func httpError_retriedWithTheBackoff_onTheSameConnection_thenGivenUpSayingWhy() {
        var a = Self.attempts(.segment, policy: RetryPolicy(maxAttempts: 3, initialBackoffSeconds: 0.5, maxBackoffSeconds: 8))
        var delays: [Double] = []
        for id in 1...2 {
            _ = a.attemptStarts()
            guard case .retry(let record, let delay, let fresh) = a.failed(Self.httpError(503), requestID: id) else {
                Issue.record("attempt \(id) of 3 is retried")
                return
            }
            #expect(!fresh, "an HTTP status says the connection works")
            #expect(record == RetryScheduled(requestID: id, url: Self.url, attemptsMade: id, delaySeconds: delay, errorKind: .httpStatus))
            delays.append(delay)
        }
        #expect(delays == [0.5, 1])
        _ = a.attemptStarts()
        #expect(
            a.failed(Self.httpError(503), requestID: 3)
                == .fail(message: "segment \(Self.url) failed: httpStatus (HTTP 503): HTTP 503 — 3 of 3 attempts failed", httpStatus: 503))
    }

    @Test func notFound_givenUpAtOnce_unlessThePolicyRetriesIt() {
        var vod = Self.attempts(.segment, policy: .segment)
        _ = vod.attemptStarts()
        #expect(
            vod.failed(Self.httpError(404), requestID: 1)
                == .fail(message: "segment \(Self.url) failed: httpStatus (HTTP 404): HTTP 404 — httpStatus 404 is not retryable", httpStatus: 404))
        var live = Self.attempts(.segment, policy: RetryPolicy(retryNotFound: true))
        _ = live.attemptStarts()
        guard case .retry = live.failed(Self.httpError(404), requestID: 1) else {
            Issue.record("a live 404 is retried")
            return
        }
    }

    @Test func timeoutsAndBrokenTransfers_retriedOnAFreshConnection() {
        for kind in [LoadErrorKind.connect, .firstByteTimeout, .transferTimeout, .truncatedBody] {
            var a = Self.attempts()
            _ = a.attemptStarts()
            guard case .retry(_, _, let fresh) = a.failed(LoadError(kind: kind, url: Self.url, message: "x"), requestID: 1) else {
                Issue.record("\(kind) is retried")
                continue
            }
            #expect(fresh, "\(kind)")
        }
        var a = Self.attempts()
        _ = a.attemptStarts()
        guard case .retry(_, _, let fresh) = a.failed(LoadError(kind: .nameResolution, url: Self.url, message: "x"), requestID: 1) else {
            Issue.record("a name resolution failure is retried")
            return
        }
        #expect(!fresh)
    }

    @Test func aURIThePlaylistShouldNeverHaveNamed_isAPlaylistFault_otherErrorsAreNot() {
        #expect(
            RequestAttempts.playlistFault(
                LoadError(kind: .unsupportedScheme, url: "ftp://x/a.ts", message: "scheme ftp is not fetched"), purpose: .segment,
                url: "ftp://x/a.ts") == "the playlist names segment ftp://x/a.ts: scheme ftp is not fetched; not fetched")
        #expect(
            RequestAttempts.playlistFault(
                LoadError(kind: .invalidURL, url: "http:///a", message: "no host"), purpose: .multivariantPlaylist, url: "http:///a")
                == "the URL no host; not fetched")
        #expect(RequestAttempts.playlistFault(Self.httpError(500), purpose: .segment, url: Self.url) == nil)
    }
}
