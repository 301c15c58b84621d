// The trickle rule as the session core's decision (SessionCore.judgeInFlight with the request, then
// inFlightJudged): each test is named after what a shell is asked to do — abandon for a lower rung and
// cap, re-request at its rung on a fresh connection, fail the request, wait (logged once) — on the
// ticks a monitor would feed, with the rule's per-fetch state held in the core.

import Testing
@testable import HLSCore

@Suite struct SessionCoreTrickleTests {
    /// The ladder of `SessionCoreTests`: 300 k, 620 k, 1.31 M, 3.72 M, 7.23 Mbit/s; segments of 6 s.
    static let segmentSeconds = 6.0

    static func request(
        _ requestID: Int, fetch fetchID: Int? = nil, rungBps: Double?, purpose: RequestPurpose = .segment
    )
        -> InFlightRequestInfo
    {
        InFlightRequestInfo(
            requestID: requestID, fetchID: fetchID ?? requestID, purpose: purpose, url: "http://o/v/seg_7.ts", mediaSequence: 7,
            track: nil, rungBitrateBps: rungBps)
    }

    /// The request `t` seconds after it started (at `startedAt` on the monitor's clock), its bytes by `bytes(t)`,
    /// the first byte at once: what a monitor tick's snapshot says.
    static func snapshot(at t: Double, bytes: (Double) -> Int, rungBps: Double, buffer: Double = 0) -> InFlightSnapshot {
        let received = bytes(t)
        return InFlightSnapshot(
            bytesReceived: received, bytesExpected: Int(rungBps * segmentSeconds / 8), secondsSinceLastByte: 0.01, elapsedSeconds: t,
            rttSeconds: 0.001, segmentDurationSeconds: segmentSeconds, rungBitrateBps: rungBps,
            measuredThroughputBps: received > 0 ? Double(received) * 8 / t : nil, forwardBufferSeconds: buffer)
    }

    /// Feeds monitor ticks every 0.25 s from `from` to `until` (request time; the clock is `startedAt` + t) and
    /// returns the first judgement that cancels or logs the trickle rule, with its snapshot and instant.
    static func tick(
        _ core: inout SessionCore, request: InFlightRequestInfo, startedAt: Double = 10, from: Double = 0.25, until: Double = 60,
        rungBps: Double, bytes: (Double) -> Int
    ) -> (judgement: InFlightJudgement, snapshot: InFlightSnapshot, at: MonotonicInstant)? {
        var t = from
        while t <= until {
            let snapshot = Self.snapshot(at: t, bytes: bytes, rungBps: rungBps)
            let now = SessionCoreTests.at(startedAt + t)
            let judgement = core.judgeInFlight(snapshot, request: request, at: now)
            if judgement.cancel != nil || judgement.trickle != nil { return (judgement, snapshot, now) }
            t += 0.25
        }
        return nil
    }

    /// 1.31 Mbit/s rung: the first 2 s at 3 Mbit/s, then 40 kbit/s. The average stays under twice the rung's
    /// bitrate for long (the over-selection rule lets it run); the recent rate says the rest takes 40 s.
    static func fastThenTrickling(_ t: Double) -> Int { t <= 2 ? Int(375_000 * t) : 750_000 + Int(5_000 * (t - 2)) }

    /// 40 kbit/s from the start.
    static func trickling(_ t: Double) -> Int { Int(5_000 * t) }

    @Test func tricklingSegment_landingTooLate_withALowerRung_isAbandonedForALowerRung_andCapped() throws {
        var core = SessionCoreTests.started(mode: .off)
        let rung = 1_310_000.0
        let found = try #require(Self.tick(&core, request: Self.request(5, rungBps: rung), rungBps: rung, bytes: Self.fastThenTrickling))
        #expect(found.judgement.cancel == .overSelected, "the trickle rule's abandon-lower cancels as an over-selection")
        #expect(found.judgement.assessment.verdict == .healthy, "the byte-progress rules let it run: the average is not 2× under the rung")
        let record = try #require(found.judgement.trickle)
        #expect(record.assessment.verdict == .abandonLower && record.assessment.reason == .overBudget)
        #expect(record.assessment.rateSource == "recent" && record.snapshot.lowerRungAvailable)
        #expect(record.requestID == 5 && record.purpose == "segment" && record.url == "http://o/v/seg_7.ts")
        let actions = core.inFlightJudged(requestID: 5, snapshot: found.snapshot, judgement: found.judgement, at: found.at)
        // Logged with its inputs first, then the over-selection's note; capped below the rung at what is arriving.
        #expect(SessionCoreTests.records(actions).first == .trickle(record))
        #expect(SessionCoreTests.records(actions).contains { if case .capNote(let n) = $0 { n.kind == .overSelection } else { false } })
        let cap = try #require(core.overSelectionCapBps)
        #expect(cap < 1_310_000, "the abandoned rung is out of reach")
        #expect(!actions.contains(.reconnectNext))
    }

    @Test func tricklingSegment_onTheLowestRung_isReRequestedAtItsRung_onAFreshConnection() throws {
        var core = SessionCoreTests.started(mode: .off)
        let rung = 300_000.0
        let found = try #require(Self.tick(&core, request: Self.request(5, rungBps: rung), rungBps: rung, bytes: Self.trickling))
        #expect(found.judgement.cancel == .trickleReRequest)
        let record = try #require(found.judgement.trickle)
        #expect(record.assessment.verdict == .reRequest && record.assessment.reason == .overPatience)
        #expect(!record.snapshot.lowerRungAvailable && record.snapshot.reRequestsSoFar == 0)
        let actions = core.inFlightJudged(requestID: 5, snapshot: found.snapshot, judgement: found.judgement, at: found.at)
        #expect(actions == [.record(.trickle(record)), .reconnectNext])
        #expect(core.trickleFetch?.reRequests == 1, "counted in the core, for the fetch")
        #expect(core.overSelectionCapBps == nil, "no cap: there is nothing lower")
    }

    /// The loader was busy with the trickling transfer until the cut: the ABR rule's idle time (BOLA-E's
    /// placeholder) counts from the cut, as after any other request cut short, not from the last segment landed.
    @Test func trickleCut_endsTheRulesBusyTime_idleCountsFromTheCut() throws {
        var core = SessionCoreTests.started(mode: .off)
        SessionCoreAbrTests.land(&core, bytes: 200_000, seconds: 1, endedAt: 5)
        let rung = 300_000.0
        let found = try #require(Self.tick(&core, request: Self.request(5, rungBps: rung), rungBps: rung, bytes: Self.trickling))
        #expect(found.judgement.cancel == .trickleReRequest)
        #expect(core.abrRule.idleSeconds(at: found.at) > 5, "before the cut: idle since the landing at 5 s")
        _ = core.inFlightJudged(requestID: 5, snapshot: found.snapshot, judgement: found.judgement, at: found.at)
        #expect(core.abrRule.idleSeconds(at: found.at) == 0)
        #expect(abs(core.abrRule.idleSeconds(at: found.at.advanced(bySeconds: 1)) - 1) < 1e-9)
    }

    @Test func reRequestLimitReached_theRequestFails_withTheRuleInputsInTheMessage() throws {
        var core = SessionCoreTests.started(mode: .off)
        let rung = 300_000.0
        _ = try #require(Self.tick(&core, request: Self.request(5, rungBps: rung), rungBps: rung, bytes: Self.trickling))
        // The re-request: a new request of the same fetch, trickling as before.
        let again = try #require(
            Self.tick(&core, request: Self.request(6, fetch: 5, rungBps: rung), startedAt: 20, rungBps: rung, bytes: Self.trickling))
        #expect(again.judgement.cancel == .trickleFailed)
        let record = try #require(again.judgement.trickle)
        #expect(record.assessment.verdict == .fail && record.snapshot.reRequestsSoFar == 1 && record.requestID == 6)
        let failure = try #require(again.judgement.failure)
        #expect(failure.hasPrefix("segment 7 http://o/v/seg_7.ts trickled: projected completion"))
        #expect(failure.hasSuffix("still too slow after 1 fresh-connection re-request and nothing lower to go to"))
        let actions = core.inFlightJudged(requestID: 6, snapshot: again.snapshot, judgement: again.judgement, at: again.at)
        #expect(actions == [.record(.trickle(record))], "logged; the failure is the shell's to carry out")
    }

    @Test func newFetch_startsItsReRequestCountAgain() throws {
        var core = SessionCoreTests.started(mode: .off)
        let rung = 300_000.0
        _ = try #require(Self.tick(&core, request: Self.request(5, rungBps: rung), rungBps: rung, bytes: Self.trickling))
        let next = try #require(Self.tick(&core, request: Self.request(6, rungBps: rung), startedAt: 20, rungBps: rung, bytes: Self.trickling))
        #expect(next.judgement.cancel == .trickleReRequest, "another fetch: re-requested, not failed")
        #expect(next.judgement.trickle?.snapshot.reRequestsSoFar == 0)
    }

    @Test func overBudgetWithNothingLower_withinPatience_waits_loggedOncePerRequest() throws {
        var core = SessionCoreTests.started(mode: .off)
        let rung = 300_000.0
        // 80 kbit/s: over the startup budget, within the patience bound.
        let steady = { (t: Double) in Int(10_000 * t) }
        let first = try #require(Self.tick(&core, request: Self.request(5, rungBps: rung), rungBps: rung, bytes: steady))
        #expect(first.judgement.cancel == nil)
        let record = try #require(first.judgement.trickle)
        #expect(record.assessment.verdict == .healthy && record.assessment.reason == .overBudgetWithinPatience)
        #expect(core.inFlightJudged(requestID: 5, snapshot: first.snapshot, judgement: first.judgement, at: first.at) == [.record(.trickle(record))])
        // The next ticks of the same request wait silently (until the patience bound is crossed).
        let next = Self.snapshot(at: 3.5, bytes: steady, rungBps: rung)
        let judgement = core.judgeInFlight(next, request: Self.request(5, rungBps: rung), at: SessionCoreTests.at(13.5))
        #expect(judgement.cancel == nil && judgement.trickle == nil)
        #expect(core.inFlightJudged(requestID: 5, snapshot: next, judgement: judgement, at: SessionCoreTests.at(13.5)).isEmpty)
    }

    @Test func abandonLower_standsAsideForBolaEsOwnAbandonment_butNotForTheThroughputRule() {
        // The same trickling 1.31 Mbit/s segment, tick by tick, under two reference rules.
        func firstCancel(_ rule: AbrRuleName) -> InFlightJudgement? {
            var core = SessionCoreAbrTests.measured(rule)
            // A decision first: BOLA-E's state (and its abandonment) comes with its first decision.
            _ = core.decide(ladder: SessionCoreTests.rungs, at: SessionCoreTests.at(4), mediaSequence: 0, segmentDurationSeconds: 6)
            #expect(core.referenceRuleOwnsAbandonment == (rule == .bolaE))
            var t = 0.25
            while t <= 9 {
                let snapshot = Self.snapshot(at: t, bytes: Self.fastThenTrickling, rungBps: 1_310_000)
                let judgement = core.judgeInFlight(snapshot, request: Self.request(5, rungBps: 1_310_000), at: SessionCoreTests.at(10 + t))
                if judgement.cancel != nil { return judgement }
                t += 0.25
            }
            return nil
        }
        let throughput = firstCancel(.throughput)
        #expect(throughput?.cancel == .overSelected && throughput?.trickle?.assessment.verdict == .abandonLower, "\(String(describing: throughput))")
        let bolaE = firstCancel(.bolaE)
        #expect(bolaE?.cancel != .overSelected, "BOLA-E's own abandonment alone judges it: \(String(describing: bolaE))")
        #expect(bolaE?.trickle == nil)
    }

    @Test func wedgedRequest_isTheByteProgressRulesBusiness_theTrickleRuleDoesNotJudgeIt() {
        var core = SessionCoreTests.started(mode: .off)
        var silent = Self.snapshot(at: 8, bytes: Self.trickling, rungBps: 300_000)
        silent.secondsSinceLastByte = 5
        let judgement = core.judgeInFlight(silent, request: Self.request(5, rungBps: 300_000), at: SessionCoreTests.at(18))
        #expect(judgement.cancel == .wedged)
        #expect(judgement.trickle == nil)
        #expect(core.trickleFetch == nil)
    }

    @Test func initSectionsAndKeys_areNotJudgedByTheTrickleRule() {
        var core = SessionCoreTests.started(mode: .off)
        for purpose in [RequestPurpose.initSection, .key] {
            let snapshot = Self.snapshot(at: 20, bytes: Self.trickling, rungBps: 300_000)
            let judgement = core.judgeInFlight(snapshot, request: Self.request(5, rungBps: 300_000, purpose: purpose), at: SessionCoreTests.at(30))
            #expect(judgement.cancel == nil && judgement.trickle == nil, "\(purpose)")
        }
    }
}

/// What the loader does with a request the trickle rule cancelled (both shells' outcome, LoaderCore).
@Suite struct LoaderCoreTrickleTests {
    @Test func tricklingSegment_reRequest_isTheSameRequestAgainAtOnce_notAnAttempt() {
        var loader = LoaderCoreTests.startedOn(0)
        let actions = loader.transferCancelled(
            .trickleReRequest, wire: LoaderCoreTests.wire(4, "v0/s0", bytes: 20_000), inputs: LoaderCoreTests.inputs(buffer: 1),
            at: LoaderCoreTests.at(9))
        #expect(LoaderCoreTests.withoutRecords(actions) == [.reRequest(.segment(variant: 0, index: 0), attempt: 1)])
        var end = RequestEnd(
            requestID: 4, url: "v0/s0", purpose: .segment, status: nil, bytes: 20_000, ok: false, errorKind: .cancelled,
            errorMessage: "trickling: re-requested on a fresh connection (request.trickle)")
        end.cancelReason = .trickleReRequest
        #expect(
            LoaderCoreTests.records(actions) == [
                .requestEnd(end),
                .retryScheduled(RetryScheduled(requestID: 4, url: "v0/s0", attemptsMade: 0, delaySeconds: 0, errorKind: .transferTimeout))
            ])
        #expect(loader.abandonments.isEmpty && loader.wedgeReRequests == 0, "neither an abandonment nor a wedge")
    }

    @Test func tricklingPlaylist_reRequest_isTheSamePlaylistAgain_notAWedge() {
        var loader = LoaderCoreTests.loader()
        _ = loader.start()
        let actions = loader.transferCancelled(
            .trickleReRequest, wire: LoaderCoreTests.wire(1, "master", bytes: 300, purpose: .multivariantPlaylist),
            inputs: LoaderCoreTests.inputs(), at: LoaderCoreTests.at(40))
        #expect(LoaderCoreTests.withoutRecords(actions) == [.reRequest(.multivariant, attempt: 1)])
        #expect(loader.wedgeReRequests == 0)
    }

    @Test func tricklingSegment_failed_failsTheSession_withTheRulesMessage() {
        var loader = LoaderCoreTests.startedOn(0)
        let actions = loader.transferCancelled(
            .trickleFailed, wire: LoaderCoreTests.wire(5, "v0/s0", bytes: 20_000), inputs: LoaderCoreTests.inputs(buffer: 1),
            at: LoaderCoreTests.at(9), failure: "segment 0 v0/s0 trickled: …")
        #expect(LoaderCoreTests.withoutRecords(actions) == [.fail("segment 0 v0/s0 trickled: …")])
        guard case .requestEnd(let end)? = LoaderCoreTests.records(actions).first else {
            Issue.record("no request.end: \(actions)")
            return
        }
        #expect(end.cancelReason == .trickleFailed && end.errorKind == .cancelled)
        #expect(loader.isDone)
    }
}
