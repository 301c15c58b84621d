// The loader's sequencing (LoaderCore): each test is named after the outcome
// a shell is asked to perform — fetch, wait, decide (for the start, the next
// segment, a re-decide, an abandonment, a moved cap), re-request, retry after
// a backoff, end the stream, fail — asserted on the actions alone.

import Testing
@testable import HLSCore

@Suite struct LoaderCoreTests {
    /// Three rungs; the top one cut into 6 s segments where the others have 4 s (boundaries not shared).
    static let variants = [
        LoaderCore.Variant(bandwidthBps: 300_000, segmentDurationsSeconds: Array(repeating: 4, count: 6)),
        LoaderCore.Variant(bandwidthBps: 1_310_000, segmentDurationsSeconds: Array(repeating: 4, count: 6)),
        LoaderCore.Variant(bandwidthBps: 3_720_000, segmentDurationsSeconds: Array(repeating: 6, count: 4))
    ]

    static func loader(wedge: WedgeRules = WedgeRules(), playlistRetry: RetryPolicy = .playlist) -> LoaderCore {
        LoaderCore(variants: variants, wedge: wedge, playlistRetry: playlistRetry, pollSeconds: 0.25)
    }

    /// The shell's record of a cut-short attempt, as far as it went.
    static func wire(_ requestID: Int, _ url: String, bytes: Int, purpose: RequestPurpose = .segment) -> RequestEnd {
        RequestEnd(requestID: requestID, url: url, purpose: purpose, status: nil, bytes: bytes, ok: false)
    }

    static func inputs(buffer: Double = 0, target: Double = 30, bufferedEnd: Double = 0, cap: Int? = nil) -> LoaderCore.Inputs {
        LoaderCore.Inputs(bufferSeconds: buffer, forwardBufferTargetSeconds: target, bufferedEndSeconds: bufferedEnd, peakCapBps: cap)
    }

    static func at(_ seconds: Double) -> MonotonicInstant { MonotonicInstant(seconds: seconds) }

    /// A loader that has started on `variant` and has segment 0 of it in flight.
    static func startedOn(_ variant: Int, wedge: WedgeRules = WedgeRules()) -> LoaderCore {
        var loader = Self.loader(wedge: wedge)
        _ = loader.start()
        _ = loader.transferFinished(inputs(), at: at(0.1))
        _ = loader.decided(variant: variant, inputs: inputs(), at: at(0.1))
        _ = loader.transferFinished(inputs(), at: at(0.2))
        return loader
    }

    static func withoutRecords(_ actions: [LoaderCore.Action]) -> [LoaderCore.Action] {
        actions.filter { if case .record = $0 { false } else { true } }
    }

    static func records(_ actions: [LoaderCore.Action]) -> [SessionEvent] {
        actions.compactMap { if case .record(let e) = $0 { e } else { nil } }
    }

    // MARK: - The order of a start

    @Test func start_multivariantThenStartupDecisionThenItsPlaylistThenTheFirstSegment_withoutASecondDecision() {
        var loader = Self.loader()
        #expect(loader.start() == [.fetch(.multivariant, attempt: 1)])
        #expect(loader.transferFinished(Self.inputs(), at: Self.at(0.1)) == [.decide(mediaSequence: nil, because: .startup)])
        #expect(
            loader.decided(variant: 1, inputs: Self.inputs(), at: Self.at(0.1))
                == [.fetch(.mediaPlaylist(variant: 1, afterStartup: true, capAtDecisionBps: nil), attempt: 1)])
        // The start decision stands for the first segment: no second decision.
        #expect(loader.transferFinished(Self.inputs(), at: Self.at(0.2)) == [.fetch(.segment(variant: 1, index: 0), attempt: 1)])
        #expect(loader.currentVariant == 1)
        #expect(loader.transferFinished(Self.inputs(buffer: 4, bufferedEnd: 4), at: Self.at(1)) == [.decide(mediaSequence: 1, because: .nextSegment)])
        #expect(
            loader.decided(variant: 1, inputs: Self.inputs(buffer: 4, bufferedEnd: 4), at: Self.at(1)) == [
                .fetch(.segment(variant: 1, index: 1), attempt: 1)
            ])
    }

    @Test func decisionOnAVariantTheLoaderWasNotToldOf_endsAsAnInternalError() {
        var loader = Self.startedOn(0)
        #expect(loader.transferFinished(Self.inputs(), at: Self.at(2)) == [.decide(mediaSequence: 1, because: .nextSegment)])
        // A clone the shell added to the ladder without `variantsAdded`: a defect, not a network failure.
        let actions = loader.decided(variant: Self.variants.count, inputs: Self.inputs(), at: Self.at(2))
        #expect(
            actions == [.internalError("decided on variant \(Self.variants.count), which the loader does not have (\(Self.variants.count) variants)")]
        )
        #expect(loader.isDone)
        // Told of it, the same decision loads its playlist.
        var told = Self.startedOn(0)
        told.variantsAdded(bandwidthsBps: [9_000_000])
        _ = told.transferFinished(Self.inputs(), at: Self.at(2))
        #expect(
            told.decided(variant: Self.variants.count, inputs: Self.inputs(), at: Self.at(2))
                == [.fetch(.mediaPlaylist(variant: Self.variants.count, afterStartup: false, capAtDecisionBps: nil), attempt: 1)])
    }

    @Test func bufferAtTheTarget_waitsThePollInterval_andDecidesWhenWokenUnderIt() {
        var loader = Self.startedOn(0)
        #expect(loader.transferFinished(Self.inputs(buffer: 30, bufferedEnd: 4), at: Self.at(2)) == [.wait(untilSeconds: 2.25)])
        #expect(loader.wake(Self.inputs(buffer: 30, bufferedEnd: 4), at: Self.at(2.25)) == [.wait(untilSeconds: 2.5)])
        #expect(loader.wake(Self.inputs(buffer: 29.9, bufferedEnd: 4), at: Self.at(2.5)) == [.decide(mediaSequence: 1, because: .nextSegment)])
        #expect(loader.wake(Self.inputs(buffer: 29.8, bufferedEnd: 4), at: Self.at(2.6)) == [], "the decision asked for is still awaited")
        #expect(
            loader.decided(variant: 0, inputs: Self.inputs(buffer: 29.8, bufferedEnd: 4), at: Self.at(2.6)) == [
                .fetch(.segment(variant: 0, index: 1), attempt: 1)
            ])
    }

    @Test func byteBoundHolds_underTheSecondsTarget_waitsThePollInterval_andDecidesWhenItLets() {
        var loader = Self.startedOn(0)
        var held = Self.inputs(buffer: 10, bufferedEnd: 4)
        held.byteBoundHolds = true
        #expect(loader.transferFinished(held, at: Self.at(2)) == [.wait(untilSeconds: 2.25)])
        #expect(loader.wake(held, at: Self.at(2.25)) == [.wait(untilSeconds: 2.5)])
        #expect(loader.wake(Self.inputs(buffer: 9.5, bufferedEnd: 4), at: Self.at(2.5)) == [.decide(mediaSequence: 1, because: .nextSegment)])
    }

    @Test func ruleAsksToWait_loaderWaits_thenLoadsTheVariantChosen_withoutASecondDecision() {
        // BOLA's full buffer (--abr bola, bola-e): the decision stands, its request waits.
        var loader = Self.startedOn(0)
        #expect(
            loader.transferFinished(Self.inputs(buffer: 20, bufferedEnd: 4), at: Self.at(1)) == [.decide(mediaSequence: 1, because: .nextSegment)])
        #expect(
            loader.decided(variant: 1, inputs: Self.inputs(buffer: 20, bufferedEnd: 4), at: Self.at(1), waitSeconds: 2) == [.wait(untilSeconds: 3)])
        #expect(
            loader.wake(Self.inputs(buffer: 18, bufferedEnd: 4), at: Self.at(3)) == [
                .fetch(.mediaPlaylist(variant: 1, afterStartup: false, capAtDecisionBps: nil), attempt: 1)
            ])
    }

    @Test func lastSegmentLanded_endsTheStream_andTheLoaderIsDone() {
        var loader = Self.startedOn(2)
        for i in 1..<4 {
            _ = loader.transferFinished(Self.inputs(), at: Self.at(Double(i)))
            #expect(loader.decided(variant: 2, inputs: Self.inputs(), at: Self.at(Double(i))) == [.fetch(.segment(variant: 2, index: i), attempt: 1)])
        }
        #expect(loader.transferFinished(Self.inputs(bufferedEnd: 24), at: Self.at(5)) == [.endOfStream])
        #expect(loader.isDone)
        #expect(loader.wake(Self.inputs(), at: Self.at(6)) == [], "a done loader asks for nothing more")
    }

    // MARK: - Switches

    @Test func switch_loadsTheNewPlaylist_andContinuesAtTheSegmentHoldingTheBufferedEnd() {
        var loader = Self.startedOn(0)
        // Segments 0 and 1 of the 4 s rung buffered (8 s): the 6 s rung continues with its segment 1 (6–12 s).
        _ = loader.transferFinished(Self.inputs(buffer: 4, bufferedEnd: 4), at: Self.at(1))
        _ = loader.decided(variant: 0, inputs: Self.inputs(buffer: 4, bufferedEnd: 4), at: Self.at(1))
        // The cap in force when the decision is asked for is the one the switch is checked against.
        _ = loader.transferFinished(Self.inputs(buffer: 8, bufferedEnd: 8, cap: 5_000_000), at: Self.at(2))
        #expect(
            loader.decided(variant: 2, inputs: Self.inputs(buffer: 8, bufferedEnd: 8, cap: 5_000_000), at: Self.at(2))
                == [.fetch(.mediaPlaylist(variant: 2, afterStartup: false, capAtDecisionBps: 5_000_000), attempt: 1)])
        #expect(
            loader.transferFinished(Self.inputs(buffer: 8, bufferedEnd: 8, cap: 5_000_000), at: Self.at(2.1))
                == [.fetch(.segment(variant: 2, index: 1), attempt: 1)])
        #expect(loader.currentVariant == 2)
        #expect(loader.loadedPlaylists == [0, 2])
    }

    @Test func capMoved_whileTheSwitchPlaylistLoaded_decidesAgain() {
        var loader = Self.startedOn(0)
        _ = loader.transferFinished(Self.inputs(buffer: 4, bufferedEnd: 4, cap: 5_000_000), at: Self.at(1))
        #expect(
            loader.decided(variant: 2, inputs: Self.inputs(buffer: 4, bufferedEnd: 4, cap: 5_000_000), at: Self.at(1)) == [
                .fetch(.mediaPlaylist(variant: 2, afterStartup: false, capAtDecisionBps: 5_000_000), attempt: 1)
            ])
        // The recovery cap came down to 620 kbit/s while the playlist loaded.
        #expect(
            loader.transferFinished(Self.inputs(buffer: 3.5, bufferedEnd: 4, cap: 620_000), at: Self.at(1.5))
                == [.decide(mediaSequence: 0, because: .capMoved)], "the 6 s rung's segment 0 holds 4 s")
        // Back to the loaded rung 0: its playlist is not loaded again.
        #expect(
            loader.decided(variant: 0, inputs: Self.inputs(buffer: 3.5, bufferedEnd: 4, cap: 620_000), at: Self.at(1.5))
                == [.fetch(.segment(variant: 0, index: 1), attempt: 1)])
    }

    // MARK: - Wedges, abandonments

    @Test func wedgedSegment_withBufferInHand_isReRequestedAsItWas_thenAbandonedWhenWedgedAgain() {
        var loader = Self.startedOn(1)
        let first = loader.transferCancelled(
            .wedged, wire: Self.wire(4, "v1/s0", bytes: 100), inputs: Self.inputs(buffer: 20, bufferedEnd: 20), at: Self.at(5))
        #expect(Self.withoutRecords(first) == [.reRequest(.segment(variant: 1, index: 0), attempt: 1)])
        #expect(
            Self.records(first) == [
                .requestEnd(
                    {
                        var end = RequestEnd(
                            requestID: 4, url: "v1/s0", purpose: .segment, status: nil, bytes: 100, ok: false, errorKind: .cancelled,
                            errorMessage: "wedged (byte-progress monitor)")
                        end.cancelReason = .wedged // as a real session's request.end says it
                        return end
                    }()),
                .retryScheduled(RetryScheduled(requestID: 4, url: "v1/s0", attemptsMade: 0, delaySeconds: 0, errorKind: .transferTimeout))
            ])
        #expect(loader.wedgeReRequests == 1)
        let second = loader.transferCancelled(
            .wedged, wire: Self.wire(5, "v1/s0", bytes: 0), inputs: Self.inputs(buffer: 17, bufferedEnd: 20), at: Self.at(8))
        #expect(Self.withoutRecords(second) == [.decide(mediaSequence: 0, because: .abandoned)])
        #expect(loader.abandonments == [0: 1])
        #expect(loader.wedgeReRequests == 0)
    }

    @Test func wedgedSegment_withLittleBuffer_reDecides_withoutCountingAnAbandonment() {
        var loader = Self.startedOn(1)
        let actions = loader.transferCancelled(.wedged, wire: Self.wire(4, "v1/s0", bytes: 0), inputs: Self.inputs(buffer: 7.9), at: Self.at(5))
        #expect(Self.withoutRecords(actions) == [.decide(mediaSequence: 0, because: .reDecide)])
        #expect(Self.records(actions).count == 2, "request.end and retry.scheduled")
        // Deciding again spends the attempt (as the real session counts it); a re-request does not.
        #expect(
            Self.records(actions).last
                == .retryScheduled(RetryScheduled(requestID: 4, url: "v1/s0", attemptsMade: 1, delaySeconds: 0, errorKind: .transferTimeout)))
        #expect(loader.abandonments.isEmpty)
    }

    @Test func wedgedBottomRung_withLittleBuffer_isReRequested_thereIsNoLowerRung() {
        var loader = Self.startedOn(0)
        let actions = loader.transferCancelled(.wedged, wire: Self.wire(4, "v0/s0", bytes: 0), inputs: Self.inputs(buffer: 1), at: Self.at(5))
        #expect(Self.withoutRecords(actions) == [.reRequest(.segment(variant: 0, index: 0), attempt: 1)])
    }

    /// The real shell retries HTTP errors itself: a segment wedged on the retry policy's third attempt is
    /// re-requested as attempt 3 (2 made), not as the first attempt the loader asked for.
    @Test func wedgedSegment_onALaterAttemptOfTheShell_isReRequestedAsThatAttempt() {
        var loader = Self.startedOn(0)
        let actions = loader.transferCancelled(
            .wedged, wire: Self.wire(6, "v0/s0", bytes: 100), attempt: 3, inputs: Self.inputs(buffer: 20, bufferedEnd: 20), at: Self.at(5))
        #expect(Self.withoutRecords(actions) == [.reRequest(.segment(variant: 0, index: 0), attempt: 3)])
        #expect(
            Self.records(actions).last
                == .retryScheduled(RetryScheduled(requestID: 6, url: "v0/s0", attemptsMade: 2, delaySeconds: 0, errorKind: .transferTimeout)))
        #expect(loader.attempts == 3)
    }

    @Test func overSelectedSegment_isAbandoned_andDecidedAgain() {
        var loader = Self.startedOn(2)
        let actions = loader.transferCancelled(.overSelected, wire: Self.wire(4, "v2/s0", bytes: 900), inputs: Self.inputs(buffer: 1), at: Self.at(3))
        #expect(Self.withoutRecords(actions) == [.decide(mediaSequence: 0, because: .abandoned)])
        guard case .requestEnd(let end) = Self.records(actions).first else {
            Issue.record("no request.end")
            return
        }
        #expect(end.errorMessage == "abandoned: over-selected")
        #expect(loader.abandonments == [0: 1])
        #expect(
            loader.decided(variant: 1, inputs: Self.inputs(buffer: 1), at: Self.at(3)) == [
                .fetch(.mediaPlaylist(variant: 1, afterStartup: false, capAtDecisionBps: nil), attempt: 1)
            ])
    }

    @Test func abandonedWithTheBufferAtTheTarget_waits_andTheDecisionKeepsItsReason() {
        var loader = Self.startedOn(2)
        // The policy lowered the target below the buffer while the segment loaded.
        let actions = loader.transferCancelled(
            .overSelected, wire: Self.wire(4, "v2/s0", bytes: 900), inputs: Self.inputs(buffer: 10, target: 10), at: Self.at(3))
        #expect(Self.withoutRecords(actions) == [.wait(untilSeconds: 3.25)])
        #expect(loader.wake(Self.inputs(buffer: 9), at: Self.at(3.25)) == [.decide(mediaSequence: 0, because: .abandoned)])
        // Answered, the reason is spent: the segment after is an ordinary next-segment decision.
        _ = loader.decided(variant: 1, inputs: Self.inputs(buffer: 9), at: Self.at(3.25))
        _ = loader.transferFinished(Self.inputs(buffer: 9), at: Self.at(3.25))
        #expect(
            loader.transferFinished(Self.inputs(buffer: 11, bufferedEnd: 4), at: Self.at(4)) == [.decide(mediaSequence: 1, because: .nextSegment)])
    }

    @Test func segmentAbandonedTooOften_failsTheSession_namingTheSegment() {
        var loader = Self.startedOn(2, wedge: WedgeRules(maxAbandonmentsPerSegment: 2))
        let first = loader.transferCancelled(.overSelected, wire: Self.wire(4, "u", bytes: 0), inputs: Self.inputs(), at: Self.at(3))
        #expect(Self.withoutRecords(first) == [.decide(mediaSequence: 0, because: .abandoned)])
        _ = loader.decided(variant: 2, inputs: Self.inputs(), at: Self.at(3))
        let second = loader.transferCancelled(.overSelected, wire: Self.wire(5, "u", bytes: 0), inputs: Self.inputs(), at: Self.at(6))
        #expect(
            Self.withoutRecords(second) == [.fail("segment 0 could not be loaded: wedged or abandoned 2 times on every rung tried")])
        #expect(loader.isDone)
    }

    // MARK: - Playlists

    @Test func wedgedPlaylist_isReRequestedUpToTheBound_thenRetriedAfterABackoff_thenFailsTheSession() {
        var loader = Self.loader(wedge: WedgeRules(maxPlaylistReRequests: 1), playlistRetry: RetryPolicy(maxAttempts: 2, initialBackoffSeconds: 0.5))
        _ = loader.start()
        let url = "http://127.0.0.1/master.m3u8"
        let first = loader.transferCancelled(
            .wedged, wire: Self.wire(1, url, bytes: 0, purpose: .multivariantPlaylist), inputs: Self.inputs(), at: Self.at(3))
        #expect(Self.withoutRecords(first) == [.reRequest(.multivariant, attempt: 1)])
        #expect(
            Self.records(first).last
                == .retryScheduled(RetryScheduled(requestID: 1, url: url, attemptsMade: 0, delaySeconds: 0, errorKind: .transferTimeout)))
        // Past the re-requests: a failed attempt, the cap told, a retry after the backoff.
        let second = loader.transferCancelled(
            .wedged, wire: Self.wire(2, url, bytes: 0, purpose: .multivariantPlaylist), inputs: Self.inputs(), at: Self.at(6))
        #expect(Self.withoutRecords(second) == [.loadFailed, .wait(untilSeconds: 6.5)])
        #expect(
            Self.records(second).last
                == .retryScheduled(RetryScheduled(requestID: 2, url: url, attemptsMade: 1, delaySeconds: 0.5, errorKind: .firstByteTimeout)))
        #expect(loader.wake(Self.inputs(), at: Self.at(6.5)) == [.fetch(.multivariant, attempt: 2)])
        let third = loader.transferCancelled(
            .wedged, wire: Self.wire(3, url, bytes: 0, purpose: .multivariantPlaylist), inputs: Self.inputs(), at: Self.at(9.5))
        #expect(
            Self.withoutRecords(third) == [
                .loadFailed,
                .fail(
                    "multivariant-playlist \(url) failed: firstByteTimeout: no byte for the wedge window (byte-progress monitor), 3 times — 2 of 2 attempts failed"
                )
            ])
        #expect(loader.isDone)
    }

    @Test func playlistLoaded_resetsTheWedgeAndAttemptCounts() {
        var loader = Self.loader(wedge: WedgeRules(maxPlaylistReRequests: 0))
        _ = loader.start()
        _ = loader.transferCancelled(.wedged, wire: Self.wire(1, "u", bytes: 0), inputs: Self.inputs(), at: Self.at(3))
        _ = loader.wake(Self.inputs(), at: Self.at(3.5))
        #expect(loader.attempts == 2)
        _ = loader.transferFinished(Self.inputs(), at: Self.at(4))
        #expect(loader.attempts == 1)
        #expect(loader.wedgeReRequests == 0)
    }

    // MARK: - Failover

    /// The three rungs, and variant 3: a redundant variant of rung 1 (same BANDWIDTH, another URI).
    static func redundantLoader() -> LoaderCore {
        LoaderCore(variants: variants + [variants[1]], wedge: WedgeRules(), playlistRetry: .playlist, pollSeconds: 0.25)
    }

    @Test func failedOverStartPlaylist_loadsTheRedundantVariantsPlaylist_withoutASecondDecision() {
        var loader = Self.redundantLoader()
        _ = loader.start()
        _ = loader.transferFinished(Self.inputs(), at: Self.at(0.1))
        _ = loader.decided(variant: 1, inputs: Self.inputs(), at: Self.at(0.1))
        #expect(
            loader.failedOver(redundantVariant: 3, inputs: Self.inputs(), at: Self.at(0.5))
                == [.fetch(.mediaPlaylist(variant: 3, afterStartup: true, capAtDecisionBps: nil), attempt: 1)])
        #expect(loader.transferFinished(Self.inputs(), at: Self.at(0.6)) == [.fetch(.segment(variant: 3, index: 0), attempt: 1)])
    }

    @Test func failedOverSegment_decidesAgainForTheSameSegment_notCountedAsAnAbandonment() {
        var loader = Self.redundantLoader()
        _ = loader.start()
        _ = loader.transferFinished(Self.inputs(), at: Self.at(0.1))
        _ = loader.decided(variant: 1, inputs: Self.inputs(), at: Self.at(0.1))
        _ = loader.transferFinished(Self.inputs(), at: Self.at(0.2))
        _ = loader.transferFinished(Self.inputs(buffer: 4, bufferedEnd: 4), at: Self.at(1))
        _ = loader.decided(variant: 1, inputs: Self.inputs(buffer: 4, bufferedEnd: 4), at: Self.at(1))
        #expect(
            loader.failedOver(redundantVariant: 3, inputs: Self.inputs(buffer: 3, bufferedEnd: 4), at: Self.at(2))
                == [.decide(mediaSequence: 1, because: .failedOver)])
        #expect(loader.abandonments.isEmpty)
        // The shell maps the rung chosen (1) to its usable variant (3): that variant's playlist, then the same segment.
        #expect(
            loader.decided(variant: 3, inputs: Self.inputs(buffer: 3, bufferedEnd: 4), at: Self.at(2))
                == [.fetch(.mediaPlaylist(variant: 3, afterStartup: false, capAtDecisionBps: nil), attempt: 1)])
        #expect(
            loader.transferFinished(Self.inputs(buffer: 2.9, bufferedEnd: 4), at: Self.at(2.1))
                == [.fetch(.segment(variant: 3, index: 1), attempt: 1)])
    }

    @Test func failedOverSwitchPlaylist_decidesAgainForTheSegmentItWasAt() {
        var loader = Self.redundantLoader()
        _ = loader.start()
        _ = loader.transferFinished(Self.inputs(), at: Self.at(0.1))
        _ = loader.decided(variant: 0, inputs: Self.inputs(), at: Self.at(0.1))
        _ = loader.transferFinished(Self.inputs(), at: Self.at(0.2))
        _ = loader.transferFinished(Self.inputs(buffer: 4, bufferedEnd: 4), at: Self.at(1))
        _ = loader.decided(variant: 1, inputs: Self.inputs(buffer: 4, bufferedEnd: 4), at: Self.at(1))
        #expect(
            loader.failedOver(redundantVariant: 3, inputs: Self.inputs(buffer: 3.5, bufferedEnd: 4), at: Self.at(1.5))
                == [.decide(mediaSequence: 1, because: .failedOver)])
        #expect(loader.currentVariant == 0, "still loading the rung it was on")
    }

    // MARK: - Playlists loaded lazily (the real session)

    /// A lazy loader: only BANDWIDTHs known; the playlists tell the segments when they land.
    static func lazyLoader() -> LoaderCore {
        LoaderCore(bandwidthsBps: variants.map(\.bandwidthBps), wedge: WedgeRules(), playlistRetry: .playlist, pollSeconds: 0.25)
    }

    /// A lazy loader past its start: the multivariant playlist landed and the start decision picked `variant`, whose
    /// playlist is now in flight.
    static func lazyLoaderAwaitingPlaylist(of variant: Int) -> LoaderCore {
        var loader = lazyLoader()
        _ = loader.start()
        _ = loader.transferFinished(inputs(), at: at(0.1))
        _ = loader.decided(variant: variant, inputs: inputs(), at: at(0.1))
        return loader
    }

    @Test func lazyPlaylists_startPlaylistLands_firstSegmentIsTheStartSegment_andDecisionsNameMediaSequenceNumbers() {
        var loader = Self.lazyLoaderAwaitingPlaylist(of: 1)
        #expect(loader.nextMediaSequence == nil, "no variant loading before its playlist lands")
        // EXT-X-MEDIA-SEQUENCE 100; EXT-X-START in the third segment.
        #expect(
            loader.playlistLoaded(
                variant: 1, firstMediaSequence: 100, segmentDurationsSeconds: Array(repeating: 4, count: 6), startSegmentIndex: 2,
                inputs: Self.inputs(), at: Self.at(0.2)) == [.fetch(.segment(variant: 1, index: 2), attempt: 1)])
        #expect(loader.nextMediaSequence == 102)
        #expect(
            loader.transferFinished(Self.inputs(buffer: 4, bufferedEnd: 12), at: Self.at(1)) == [.decide(mediaSequence: 103, because: .nextSegment)])
    }

    @Test func lazyPlaylists_switchToAVariantNotLoaded_continuesAtItsSegmentHoldingTheBufferedEndWhenItLands() {
        var loader = Self.lazyLoaderAwaitingPlaylist(of: 0)
        _ = loader.playlistLoaded(
            variant: 0, firstMediaSequence: 0, segmentDurationsSeconds: Array(repeating: 4, count: 6), inputs: Self.inputs(), at: Self.at(0.2))
        _ = loader.transferFinished(Self.inputs(buffer: 4, bufferedEnd: 4), at: Self.at(1))
        _ = loader.decided(variant: 0, inputs: Self.inputs(buffer: 4, bufferedEnd: 4), at: Self.at(1))
        _ = loader.transferFinished(Self.inputs(buffer: 8, bufferedEnd: 8), at: Self.at(2))
        #expect(
            loader.decided(variant: 2, inputs: Self.inputs(buffer: 8, bufferedEnd: 8), at: Self.at(2))
                == [.fetch(.mediaPlaylist(variant: 2, afterStartup: false, capAtDecisionBps: nil), attempt: 1)])
        // Its 6 s segments numbered from 7: the one holding 8 s is its second, number 8.
        #expect(
            loader.playlistLoaded(
                variant: 2, firstMediaSequence: 7, segmentDurationsSeconds: Array(repeating: 6, count: 4),
                inputs: Self.inputs(buffer: 8, bufferedEnd: 8), at: Self.at(2.1)) == [.fetch(.segment(variant: 2, index: 1), attempt: 1)])
        #expect(loader.nextMediaSequence == 8)
        #expect(loader.segmentIndex(ofMediaSequence: 8, variant: 2) == 1)
    }

    @Test func lazyPlaylists_aPlaylistNotInFlight_isIgnored() {
        var loader = Self.lazyLoaderAwaitingPlaylist(of: 1)
        #expect(
            loader.playlistLoaded(
                variant: 2, firstMediaSequence: 0, segmentDurationsSeconds: [6], inputs: Self.inputs(), at: Self.at(0.2)) == [])
        #expect(loader.variants[2].segmentDurationsSeconds == nil)
    }

    @Test func mediaSequenceMapping_offsetByTheFirstNumber_nilOutsideThePlaylistOrBeforeItLoads() {
        var loader = Self.lazyLoaderAwaitingPlaylist(of: 0)
        #expect(loader.segmentIndex(ofMediaSequence: 0, variant: 0) == nil, "its playlist still in flight")
        _ = loader.playlistLoaded(variant: 0, firstMediaSequence: 40, segmentDurationsSeconds: [4, 4, 4], inputs: Self.inputs(), at: Self.at(0.2))
        #expect(loader.mediaSequence(ofSegment: 2, variant: 0) == 42)
        #expect(loader.segmentIndex(ofMediaSequence: 42, variant: 0) == 2)
        #expect(loader.segmentIndex(ofMediaSequence: 39, variant: 0) == nil)
        #expect(loader.segmentIndex(ofMediaSequence: 43, variant: 0) == nil)
    }

    /// Content steering's PATHWAY-CLONES mid-stream: the clone (variant 3, a copy of rung 1) is a variant a decision
    /// can pick, its playlist loaded then and continued at the segment holding the buffered end.
    @Test func variantsAdded_aCloneIsLoadableByTheNextDecision() {
        var loader = Self.lazyLoaderAwaitingPlaylist(of: 1)
        _ = loader.playlistLoaded(
            variant: 1, firstMediaSequence: 0, segmentDurationsSeconds: Array(repeating: 4, count: 6), inputs: Self.inputs(), at: Self.at(0.2))
        #expect(
            loader.transferFinished(Self.inputs(buffer: 4, bufferedEnd: 4), at: Self.at(1)) == [.decide(mediaSequence: 1, because: .nextSegment)])
        loader.variantsAdded(bandwidthsBps: [Self.variants[1].bandwidthBps])
        #expect(loader.variants.count == 4)
        #expect(loader.variants[3].bandwidthBps == Self.variants[1].bandwidthBps && loader.variants[3].segmentDurationsSeconds == nil)
        #expect(
            loader.decided(variant: 3, inputs: Self.inputs(buffer: 4, bufferedEnd: 4), at: Self.at(1))
                == [.fetch(.mediaPlaylist(variant: 3, afterStartup: false, capAtDecisionBps: nil), attempt: 1)])
        #expect(
            loader.playlistLoaded(
                variant: 3, firstMediaSequence: 0, segmentDurationsSeconds: Array(repeating: 4, count: 6),
                inputs: Self.inputs(buffer: 4, bufferedEnd: 4), at: Self.at(1.1)) == [.fetch(.segment(variant: 3, index: 1), attempt: 1)])
    }

    @Test func lazyPlaylists_lastSegmentOfTheStartPlaylist_endsTheStream() {
        var loader = Self.lazyLoaderAwaitingPlaylist(of: 1)
        _ = loader.playlistLoaded(
            variant: 1, firstMediaSequence: 5, segmentDurationsSeconds: [4, 4], startSegmentIndex: 1, inputs: Self.inputs(), at: Self.at(0.2))
        #expect(loader.transferFinished(Self.inputs(buffer: 8, bufferedEnd: 8), at: Self.at(1)) == [.endOfStream])
    }
}

/// `LoaderCore.Cancels`: the wedge and abandonment counts both shells keep (the real session's loop and
/// `LoaderCore`), so a wedge is re-requested, decided again or abandoned, and a segment given up on, alike.
@Suite struct LoaderCancelsTests {
    static let ladder = [300_000, 1_310_000, 3_720_000]

    @Test func segmentWedged_withBufferInHand_reRequestedOnce_thenAbandoned() {
        var cancels = LoaderCore.Cancels(wedge: WedgeRules())
        cancels.newRequest()
        let first = cancels.segmentWedged(.init(bufferSeconds: 20, segmentDurationSeconds: 4, rungBps: 3_720_000, ladderBitratesBps: Self.ladder))
        #expect(first == .reRequest)
        #expect(cancels.wedgeReRequests == 1)
        let second = cancels.segmentWedged(.init(bufferSeconds: 20, segmentDurationSeconds: 4, rungBps: 3_720_000, ladderBitratesBps: Self.ladder))
        #expect(second == .abandon)
        #expect(cancels.wedgeReRequests == 0)
        // The wedge outcome alone counts nothing: the loop counts the abandonment it performs.
        #expect(cancels.abandonments.isEmpty)
    }

    @Test func segmentWedged_withLittleBuffer_reDecided_notCountedAgainstTheSegment() {
        var cancels = LoaderCore.Cancels(wedge: WedgeRules())
        let outcome = cancels.segmentWedged(.init(bufferSeconds: 2, segmentDurationSeconds: 4, rungBps: 1_310_000, ladderBitratesBps: Self.ladder))
        #expect(outcome == .reDecide)
        #expect(cancels.wedgeReRequests == 0)
        #expect(cancels.abandonments.isEmpty)
    }

    @Test func segmentWedged_lowestRungOrNoRung_reRequestedEvenWithLittleBuffer() {
        var cancels = LoaderCore.Cancels(wedge: WedgeRules())
        #expect(
            cancels.segmentWedged(.init(bufferSeconds: 0, segmentDurationSeconds: 4, rungBps: 300_000, ladderBitratesBps: Self.ladder)) == .reRequest)
        cancels.newRequest()
        #expect(cancels.segmentWedged(.init(bufferSeconds: 0, segmentDurationSeconds: 4, rungBps: nil, ladderBitratesBps: Self.ladder)) == .reRequest)
        #expect(cancels.wedgeReRequests == 1)
    }

    @Test func abandoned_countedPerSegment_givesUpAtTheBound() {
        var cancels = LoaderCore.Cancels(wedge: WedgeRules(maxAbandonmentsPerSegment: 3))
        #expect(cancels.abandoned(segment: 7) == false)
        #expect(cancels.abandoned(segment: 7) == false)
        #expect(cancels.abandoned(segment: 8) == false)
        #expect(cancels.abandoned(segment: 7) == true)
        #expect(cancels.abandonments == [7: 3, 8: 1])
    }

    @Test func abandoned_afterAReRequest_theNextRequestStartsWithoutWedges() {
        var cancels = LoaderCore.Cancels(wedge: WedgeRules())
        _ = cancels.segmentWedged(.init(bufferSeconds: 20, segmentDurationSeconds: 4, rungBps: 3_720_000, ladderBitratesBps: Self.ladder))
        // Over-selected after its re-request: abandoned; the same segment decided again gets a re-request again.
        #expect(cancels.abandoned(segment: 0) == false)
        #expect(cancels.wedgeReRequests == 0)
        #expect(
            cancels.segmentWedged(.init(bufferSeconds: 20, segmentDurationSeconds: 4, rungBps: 1_310_000, ladderBitratesBps: Self.ladder))
                == .reRequest)
    }

    @Test func playlistWedged_reRequestedUpToTheBound_thenAFailedAttempt_newRequestStartsOver() {
        var cancels = LoaderCore.Cancels(wedge: WedgeRules(maxPlaylistReRequests: 2))
        #expect(cancels.playlistWedged(url: "u", bytesReceived: 0) == .reRequest)
        #expect(cancels.playlistWedged(url: "u", bytesReceived: 0) == .reRequest)
        guard case .failedAttempt(let error) = cancels.playlistWedged(url: "u", bytesReceived: 12) else {
            Issue.record("a third wedge should be a failed attempt")
            return
        }
        #expect(error.kind == .firstByteTimeout)
        #expect(error.bytesReceived == 12)
        cancels.newRequest()
        #expect(cancels.playlistWedged(url: "u", bytesReceived: 0) == .reRequest)
    }
}
