// PlayerSession: every HTTP request (retry policy, wedge re-requests, byte progress, throughput samples, HAR), and CMCD.

import Foundation
import HLSCore
import HLSMedia
import HLSNet

extension PlayerSession {
    // MARK: - Requests

    /// Fetches with retries under `policy`; logs every attempt with its progress and timings. A
    /// request the monitor cancelled, or one excluded by failover, ends `.cancelled` with what the
    /// loader does next (`LoaderCancel`). What each attempt that did not give the response leads to — a wedge
    /// re-requested, decided again or abandoned, a retry after the policy's backoff, the request given up — is
    /// `RequestAttempts`' (HLSCore, pure); this performs it.
    ///
    /// `handsCutsToLoader` (a main-track segment, which a loader core sequences): a request the
    /// monitor cut ends `.cut` with its judgement and the `request.end` of what went over the wire, unlogged,
    /// and the core's `transferCancelled` says what comes next. `continuing`: this fetch asks again for the
    /// request the loader core re-requested (`LoaderCore.Action.reRequest`, or a retry): the same fetch for the
    /// trickle rule's count, starting at `firstAttempt`.
    func fetch(
        _ url: URL, purpose: RequestPurpose, variantIndex: Int?, mediaSequence: Int?, byteRange: ByteRange?, policy: RetryPolicy,
        segment: (durationSeconds: Double, rungBitrateBps: Double?, isLiveEdge: Bool)? = nil, track: String? = nil,
        isPart: Bool = false, handsCutsToLoader: Bool = false, continuing: Bool = false, firstAttempt: Int = 1
    ) throws -> Loaded<HTTPResponse> {
        // The first attempt's request ID names the fetch: the trickle rule counts its re-requests per fetch (SessionCore).
        var fetchID: Int? = continuing ? loaderFetchID : nil
        var policy = policy
        if purpose == .mediaPlaylist || purpose == .multivariantPlaylist || purpose == .segment {
            // Live: a 404 may be a segment or playlist that has not reached this server yet; retried like a 5xx.
            // After the retries, liveLoop reloads: a segment no longer listed has expired (resync to the edge).
            policy.retryNotFound = (lock.withLock { isLive } ?? false)
        }
        var attempts = RequestAttempts(purpose: purpose, url: shown(url), policy: policy, wedge: configuration.wedge, firstAttempt: firstAttempt)
        while true {
            if isStopping { throw SessionFailure(category: .network, message: "cancelled", url: shown(url)) }
            // The request-rate bound: every attempt of every playlist, part and segment request.
            paceRequest(url, purpose: purpose, isPart: isPart, track: track)
            if isStopping { throw SessionFailure(category: .network, message: "cancelled", url: shown(url)) }
            let attempt = attempts.attemptStarts()
            let requestID = nextRequestID
            nextRequestID += 1
            if fetchID == nil { fetchID = requestID }
            if handsCutsToLoader { loaderFetchID = fetchID }
            var request = HTTPRequest(url: url)
            request.byteRange = byteRange
            // After a timeout or a broken transfer, do not trust the old connection.
            request.freshConnection = lock.withLock {
                defer { freshConnectionNext = false }
                return freshConnectionNext
            }
            if let mode = configuration.cmcd {
                let data = cmcdData(purpose: purpose, variantIndex: variantIndex, segmentDurationSeconds: segment?.durationSeconds)
                switch mode {
                case .query: request.url = data.adding(to: url)
                case .header: request.headers += data.headers
                }
            }
            request.maxBodyBytes = Self.maxBodyBytes(for: purpose)
            request.firstByteTimeoutSeconds = configuration.firstByteTimeoutSeconds
            request.stallTimeoutSeconds = configuration.requestStallTimeoutSeconds
            let rangeText = byteRange?.httpRange
            // The URL really sent (with its CMCD query in query mode), as the HAR entry has it.
            let sentURL = shown(request.url)
            var start = RequestStart(
                requestID: requestID, url: sentURL, purpose: purpose, attempt: attempt,
                variantIndex: variantIndex, mediaSequence: mediaSequence, range: rangeText)
            start.track = track
            recorder.record(.requestStart(start))
            let wallStart = Date()
            let startedAt = clock.now()
            let token = CancellationToken()
            lock.withLock {
                inFlight = InFlightRequest(
                    info: InFlightRequestInfo(
                        requestID: requestID, fetchID: fetchID ?? requestID, purpose: purpose, url: start.url, mediaSequence: mediaSequence,
                        track: track, rungBitrateBps: segment?.rungBitrateBps),
                    startedAt: startedAt, lastByteAt: startedAt, segmentDurationSeconds: segment?.durationSeconds, token: token)
            }
            if isStopping { token.cancel() }
            var lastLogged: MonotonicInstant?
            var bytesSinceLog = 0
            let interval = configuration.progressLogIntervalSeconds
            let fetched = client.fetch(request, cancellation: token) { [self] progress in
                noteBodyBytes(totalBytes: progress.totalBytes, chunkBytes: progress.chunkBytes, purpose: purpose, url: url, range: rangeText)
                lock.withLock {
                    inFlight?.bytes = progress.totalBytes
                    inFlight?.expectedBytes = progress.expectedBytes
                    inFlight?.lastByteAt = progress.at
                    if inFlight?.firstByteAt == nil { inFlight?.firstByteAt = progress.at }
                }
                bytesSinceLog += progress.chunkBytes
                if lastLogged == nil || progress.at.seconds(since: lastLogged!) >= interval
                    || (progress.expectedBytes.map { progress.totalBytes >= $0 } ?? false)
                {
                    recorder.record(
                        .requestProgress(
                            RequestProgress(
                                requestID: requestID, bytes: progress.totalBytes, chunkBytes: bytesSinceLog, expectedBytes: progress.expectedBytes)))
                    lastLogged = progress.at
                    bytesSinceLog = 0
                }
            }
            let abort = lock.withLock {
                defer { inFlight = nil }
                return inFlight?.abort
            }
            var result = fetched
            if case .failure(let e) = fetched, e.kind == .cancelled, let cancel = abort?.inFlightCancel, handsCutsToLoader, !isStopping {
                // The loader core judges the cut (re-request, decide again, abandon, fail) and logs its request.end.
                let exchange = wireExchange(of: e, request: request, startedAt: startedAt)
                let wire = failedRequestEnd(requestID: requestID, url: request.url, purpose: purpose, error: e, exchange: exchange, abort: abort)
                recorder.addHAREntry(
                    harEntry(requestID: requestID, purpose: purpose, wallStart: wallStart, exchange: exchange, failure: e, abort: abort))
                var failure: String?
                if case .trickleFailed(let message) = abort { failure = message }
                return .cut(cancel, wire: wire, attempt: attempt, failure: failure)
            }
            if case .failure(let e) = fetched, e.kind == .cancelled, abort == .wedged, segment == nil, !isStopping {
                switch attempts.wedged(requestID: requestID, bytesReceived: e.bytesReceived) {
                case .reRequestNow(let retry):
                    // A wedged playlist request: re-requested at once on a fresh connection, not an attempt of the retry policy.
                    lock.withLock { freshConnectionNext = true }
                    let exchange = wireExchange(of: e, request: request, startedAt: startedAt)
                    let wire = failedRequestEnd(requestID: requestID, url: request.url, purpose: purpose, error: e, exchange: exchange, abort: abort)
                    recorder.record(.requestEnd(CutShort.playlistWedgeReRequested.requestEnd(wire)))
                    recorder.addHAREntry(
                        harEntry(
                            requestID: requestID, purpose: purpose, wallStart: wallStart, exchange: exchange, failure: e, abort: abort))
                    recorder.record(.retryScheduled(retry))
                    continue
                case .failedAttempt(let error):
                    // Past that, a wedge is a timeout for the retry policy (backoff, bounded attempts).
                    result = .failure(error)
                }
            }
            switch result {
            case .success(let response):
                notePlaylistBody(response.body, purpose: purpose, url: url)
                let timings = TimingsRecord(response.timings)
                let transfer = max(0, response.timings.totalSeconds - response.timings.firstByteSeconds)
                let sample = ThroughputSample(
                    bytes: response.body.count, transferSeconds: transfer, firstByteSeconds: response.timings.firstByteSeconds)
                let (verdict, throughput) = lock.withLock {
                    core.transferCompleted(purpose: purpose, sample: sample, rttSeconds: response.tcpInfo?.rttSeconds)
                }
                if purpose == .segment {
                    // The start's breakdown keeps the first buffered segment's (the core ignores the rest).
                    let firstByteAt = secondsSinceStart(startedAt) + response.timings.firstByteSeconds
                    lock.withLock { core.segmentFirstByte(atSeconds: firstByteAt) }
                }
                var end = RequestEnd(
                    requestID: requestID, url: sentURL, purpose: purpose, status: response.statusCode,
                    bytes: response.body.count, ok: true, connectionReused: response.connectionReused, timings: timings,
                    tcpInfo: response.tcpInfo.map(TCPInfoRecord.init), throughputBps: throughput, sampleVerdict: verdict)
                end.httpVersion = response.exchange?.httpVersion
                recorder.record(.requestEnd(end))
                recorder.addHAREntry(
                    .make(
                        requestID: requestID, purpose: purpose, startedAt: wallStart,
                        exchange: response.exchange ?? Self.localExchange(response, url: request.url),
                        contentBytes: response.body.count, failure: nil, errorText: nil))
                if let segment {
                    classifySample(requestID: requestID, response: response, transferSeconds: transfer, segment: segment, startedAt: startedAt)
                }
                if let v = variantIndex, track == nil, purpose == .segment || purpose == .mediaPlaylist,
                    failover.map({ v >= 0 && v < $0.variants.count }) == true
                {
                    failover!.recordSuccess(variantIndex: v)
                }
                return .loaded(response)
            case .failure(let error):
                let exchange = wireExchange(of: error, request: request, startedAt: startedAt)
                var end = failedRequestEnd(requestID: requestID, url: request.url, purpose: purpose, error: error, exchange: exchange, abort: abort)
                if error.kind == .cancelled, let cancel = abort?.inFlightCancel {
                    // Cut by the monitor's judgement — a segment's cut, or a segment's or playlist's trickle cut (a
                    // wedged playlist is logged above): why it ended is the rule both shells log by (CutShort).
                    end = CutShort.monitorCancelled(cancel).requestEnd(end)
                } else if end.cancelReason == .sessionStopping {
                    // In flight when the session stopped: logged in the same words as a virtual session's.
                    end = CutShort.sessionStopped.requestEnd(end)
                }
                recorder.record(.requestEnd(end))
                recorder.addHAREntry(
                    harEntry(requestID: requestID, purpose: purpose, wallStart: wallStart, exchange: exchange, failure: error, abort: abort))
                if isStopping {
                    throw SessionFailure(category: .network, message: "cancelled", url: shown(url))
                }
                let next: RequestAttempts.Next
                if error.kind == .cancelled, let abort {
                    let cut: RequestAttempts.MonitorCut = abort.inFlightCancel.map { .judged($0, failure: abort.trickleFailure) } ?? .liveStep
                    // The buffer and ladder a wedge is judged by are read only for a wedge.
                    next = attempts.cut(
                        cut, requestID: requestID, segment: segment.map { segmentWedge($0.durationSeconds, variantIndex: variantIndex) })
                } else if error.kind == .cancelled {
                    throw SessionFailure(category: .network, message: "cancelled", url: shown(url))
                } else if let fault = RequestAttempts.playlistFault(error, purpose: purpose, url: shown(url)) {
                    throw SessionFailure(category: .playlist, message: fault, url: shown(url))
                } else {
                    capEvent(.loadFailed(estimateBps: measuredEstimate(), at: clock.now()))
                    // Excluded now, with a redundant variant to go to: decide again instead of retrying this URI.
                    next =
                        failoverAfter(error, purpose: purpose, variantIndex: variantIndex)
                        ? .giveBack(.failedOver, record: nil) : attempts.failed(error, requestID: requestID)
                }
                switch next {
                case .reRequestNow(let retry):
                    // The same request at once on a fresh connection (the link may be fine and one request lost).
                    lock.withLock { freshConnectionNext = true }
                    recorder.record(.retryScheduled(retry))
                case .retry(let retry, let delaySeconds, let fresh):
                    lock.withLock { freshConnectionNext = fresh }
                    recorder.record(.retryScheduled(retry))
                    sleepUnlessStopping(delaySeconds)
                    if isStopping { throw SessionFailure(category: .network, message: "cancelled", url: shown(url)) }
                case .giveBack(let cancel, let retry):
                    if let retry {
                        // A decision again after a wedge: on a fresh connection.
                        lock.withLock { freshConnectionNext = true }
                        recorder.record(.retryScheduled(retry))
                    }
                    return .cancelled(cancel)
                case .fail(let message, let httpStatus):
                    throw SessionFailure(category: .network, message: message, url: shown(url), httpStatus: httpStatus)
                }
            }
        }
    }

    /// What went over the wire for a failed or cut-short attempt until it ended; for one that never
    /// reached the network (a refused scheme, a local file) the URL, the bytes and the time it ran.
    func wireExchange(of error: LoadError, request: HTTPRequest, startedAt: MonotonicInstant) -> HTTPExchange {
        error.exchange
            ?? HTTPExchange(
                url: request.url.absoluteString, status: error.httpStatus, bodyBytesReceived: error.bytesReceived,
                timings: .init(
                    nameLookupSeconds: 0, connectSeconds: 0, tlsSeconds: 0, firstByteSeconds: nil,
                    totalSeconds: max(0, clock.now().seconds(since: startedAt))))
    }

    /// Why the session cancelled a request: the monitor's abort, or the session ending.
    func cancelReason(_ abort: InFlightRequest.Abort?) -> RequestCancelReason {
        switch abort {
        case .wedged?: return .wedged
        case .overSelected?: return .overSelected
        case .abrAbandoned?: return .abrAbandoned
        case .liveResync?: return .liveResync
        case .trickleReRequest?: return .trickleReRequest
        case .trickleFailed?: return .trickleFailed
        case nil: return isStopping ? .sessionStopping : .other
        }
    }

    /// The `request.end` of a failed or cut-short attempt, agreeing with its HAR entry: the status
    /// line received (a 200 cut mid-body is 200), the body bytes that arrived, the phase times up to
    /// where it ended (first byte absent when none came; total = the time it ran), whether it was
    /// aborted, and for a cancelled one why.
    func failedRequestEnd(
        requestID: Int, url: URL, purpose: RequestPurpose, error: LoadError, exchange: HTTPExchange, abort: InFlightRequest.Abort?
    ) -> RequestEnd {
        var end = RequestEnd(
            requestID: requestID, url: shown(url), purpose: purpose, status: exchange.status ?? error.httpStatus,
            bytes: error.bytesReceived, ok: false, timings: TimingsRecord(exchange.timings), errorKind: error.kind,
            errorMessage: error.message)
        if error.kind != .httpStatus { end.aborted = true }
        if error.kind == .cancelled { end.cancelReason = cancelReason(abort) }
        end.httpVersion = exchange.httpVersion
        return end
    }

    /// The HAR entry of a failed or cut-short attempt: what went over the wire until it ended
    /// (status, headers, bytes, the times it really ran) and why it ended — the session's reason
    /// for cancelling it (`cancelled: wedged`, `cancelled: over-selected`, ...) before the error.
    func harEntry(
        requestID: Int, purpose: RequestPurpose, wallStart: Date, exchange: HTTPExchange, failure error: LoadError,
        abort: InFlightRequest.Abort?
    ) -> HAREntry {
        var text = error.description
        if error.kind == .cancelled {
            let cause: String
            switch abort {
            case .wedged?: cause = "wedged (no byte for the wedge window)"
            case .overSelected?: cause = "over-selected (the rest would arrive too late; decided again lower)"
            case .abrAbandoned?: cause = "abandoned by the ABR rule (see abr.abandon; re-requested at its rung)"
            case .liveResync?: cause = "live resync"
            case .trickleReRequest?: cause = "trickle (re-requested on a fresh connection)"
            case .trickleFailed(let message)?: cause = "trickle: \(message)"
            case nil: cause = isStopping ? "session stopping" : "by the session"
            }
            text = "cancelled: \(cause) — \(text)"
        }
        return .make(
            requestID: requestID, purpose: purpose, startedAt: wallStart, exchange: exchange,
            contentBytes: error.bytesReceived, failure: error.kind, errorText: text)
    }

    /// A local file's read as an exchange (no HTTP: no version, no headers sent).
    static func localExchange(_ response: HTTPResponse, url: URL) -> HTTPExchange {
        HTTPExchange(
            url: url.absoluteString, status: response.statusCode,
            responseHeaders: response.headers.sorted { $0.key < $1.key }.map { HTTPExchange.Field(name: $0.key, value: $0.value) },
            bodyBytesReceived: response.bytesReceived,
            timings: .init(
                nameLookupSeconds: 0, connectSeconds: 0, tlsSeconds: 0,
                firstByteSeconds: response.timings.firstByteSeconds, totalSeconds: response.timings.totalSeconds))
    }

    /// What a wedged segment request is judged by (`RequestAttempts.SegmentWedge`): the buffer now, the wedged
    /// rung (none for a request that is not a main-track segment: re-requested, then abandoned) and the ladder.
    func segmentWedge(_ durationSeconds: Double, variantIndex: Int?) -> RequestAttempts.SegmentWedge {
        let now = clock.now()
        let ahead = lock.withLock { core.timeline.bufferSeconds(at: now) }
        let rung = variantIndex.flatMap { i in variants.first(where: { $0.index == i })?.bandwidthBps }
        return RequestAttempts.SegmentWedge(
            bufferSeconds: ahead, segmentDurationSeconds: durationSeconds, rungBps: rung, ladderBitratesBps: variants.map(\.bandwidthBps))
    }
}

// MARK: - CMCD (CTA-5004)

extension PlayerSession {
    /// The values hlsplay really uses, for the request about to go out.
    func cmcdData(purpose: RequestPurpose, variantIndex: Int?, segmentDurationSeconds: Double?) -> CMCDData {
        let now = clock.now()
        var d = CMCDData()
        d.sessionID = cmcdSessionID
        d.contentID = Self.contentID(configuration.url)
        switch purpose {
        case .multivariantPlaylist, .mediaPlaylist, .steeringManifest: d.objectType = .manifest
        case .segment: d.objectType = .muxed
        case .initSection: d.objectType = .initSegment
        case .key: d.objectType = .key
        }
        if let segmentDurationSeconds { d.objectDurationMs = Int((segmentDurationSeconds * 1000).rounded()) }
        lock.withLock {
            if let i = variantIndex, let v = variants.first(where: { $0.index == i }), v.bandwidthBps > 0, purpose != .mediaPlaylist {
                d.encodedBitrateKbps = CMCDData.kbps(v.bandwidthBps)
            }
            // The top the player is allowed: the ladder (sizing: --max-resolution) under the user's own cap.
            let allowed = PeakBitrateCaps(userBps: configuration.preferredPeakBitRateBps)
            let rungs = ladder().map(\.bandwidthBps)
            if let top = rungs.filter(allowed.admits).max() ?? rungs.min(), top > 0 { d.topBitrateKbps = CMCDData.kbps(top) }
            if core.timeline.phase != .startingUp || core.timeline.bufferedEndSeconds > core.timeline.startPositionSeconds {
                let buffered = core.timeline.bufferSeconds(at: now)
                d.bufferLengthMs = CMCDData.bufferLengthMs(seconds: buffered)
                // At playback rate 1 a media segment of the playing track is needed when the buffer runs out.
                if purpose == .segment { d.deadlineMs = CMCDData.bufferLengthMs(seconds: buffered) }
            }
            if core.estimator.hasEstimate { d.measuredThroughputKbps = CMCDData.throughputKbps(bps: core.estimator.estimateBps) }
            if let live = isLive { d.streamType = live ? "l" : "v" }
            // `su`: this segment is needed before playback can start or resume.
            let ahead = core.timeline.bufferedEndSeconds - core.timeline.positionSeconds(at: now)
            switch core.timeline.phase {
            case .startingUp: d.startup = purpose == .segment && ahead < core.timeline.startupThresholdSeconds
            case .stalled: d.startup = purpose == .segment && ahead < core.timeline.resumeThresholdSeconds
            case .playing, .ended: d.startup = false
            }
            d.bufferStarvation = starvedSinceLastRequest
            starvedSinceLastRequest = false
        }
        return d
    }

    /// A stable content id: FNV-1a of the URL without its query, in hex.
    static func contentID(_ url: URL) -> String {
        var c = URLComponents(url: url, resolvingAgainstBaseURL: false)
        c?.query = nil
        var hash: UInt64 = 0xcbf29ce484222325
        for byte in (c?.string ?? url.absoluteString).utf8 /* hashed, not logged */ {
            hash ^= UInt64(byte)
            hash = hash &* 0x100000001b3
        }
        return String(hash, radix: 16)
    }
}

extension SegmentSkipped {
    func withTrack(_ track: String) -> SegmentSkipped {
        var copy = self
        copy.track = track
        return copy
    }
}

extension TimingsRecord {
    /// curl reports 0 for phases a reused connection skipped; here each phase
    /// ends no earlier than the one before it, so the record reads as a timeline.
    init(_ t: RequestTimings) {
        let connect = max(t.connectSeconds, t.nameLookupSeconds)
        self.init(
            nameLookupSeconds: t.nameLookupSeconds, connectSeconds: connect, tlsSeconds: t.tlsSeconds > 0 ? max(t.tlsSeconds, connect) : 0,
            firstByteSeconds: t.firstByteSeconds, totalSeconds: t.totalSeconds)
    }

    /// The phases of an attempt that failed or was cut short, as far as it got, made monotonic the
    /// same way; no first byte when none arrived, and the total is when it ended.
    init(_ t: HTTPExchange.Timings) {
        let lookup = max(0, t.nameLookupSeconds)
        let connect = max(t.connectSeconds, lookup)
        let tls = t.tlsSeconds > 0 ? max(t.tlsSeconds, connect) : 0
        let total = max(t.totalSeconds, connect, tls)
        self.init(
            nameLookupSeconds: lookup, connectSeconds: connect, tlsSeconds: tls,
            firstByteSeconds: t.firstByteSeconds.map { min(total, max($0, tls, connect)) }, totalSeconds: total)
    }
}

extension TCPInfoRecord {
    init(_ t: TCPInfoSnapshot) {
        self.init(
            rttSeconds: t.rttSeconds, rttVarianceSeconds: t.rttVarianceSeconds, totalRetransmits: t.totalRetransmits,
            congestionWindowSegments: t.congestionWindowSegments, deliveryRateBps: t.deliveryRateBitsPerSecond,
            deliveryRateAppLimited: t.deliveryRateAppLimited)
    }
}
