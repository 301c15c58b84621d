import Foundation
import Testing
@testable import HLSCore

/// The live loader's sequencing (`LiveLoaderCore`), turn by turn in virtual time: each outcome the real shell's
/// `liveLoop` performs — the start's decision used once, a switch's playlist first, the decision again when the
/// cap moved while it loaded, a segment where it is listed, a reload when it is not published, the end of an
/// ended playlist, a resync when the segment left the window or expired, abandonments counted and bounded.
@Suite struct LiveLoaderCoreTests {
    /// Segments `first..<first+count` of 1 s (TARGETDURATION 1).
    static func window(first: Int = 40, count: Int = 6, ended: Bool = false) throws -> MediaPlaylist {
        try LiveLoaderStepTests.window(first: first, count: count, ended: ended)
    }

    static func view(_ playlist: MediaPlaylist, sinceReload: Double = 0.25, changed: Bool = true) -> LiveLoaderCore.PlaylistView {
        LiveLoaderCore.PlaylistView(playlist: playlist, secondsSinceReload: sinceReload, reloadChanged: changed)
    }

    /// A loader past its first turn: loading variant 1 from segment `next`, no decision pending.
    static func loading(next: Int = 43, wedge: WedgeRules = WedgeRules()) throws -> LiveLoaderCore {
        var loader = LiveLoaderCore(startingAt: next, variant: 1, decidedRung: 1, wedge: wedge)
        #expect(loader.turn(peakCapBps: nil) == [.useDecision(rung: 1)])
        #expect(loader.decided(variant: 1, playlist: view(try window())) == [.fetch(variant: 1, segmentIndex: next - 40, mediaSequence: next)])
        loader.segmentLoaded(mediaSequence: next)
        return loader
    }

    @Test func firstTurn_usesTheStartsDecision_thenDecidesForEachSegment() throws {
        var loader = try Self.loading(next: 43)
        #expect(loader.nextMediaSequence == 44)
        #expect(loader.turn(peakCapBps: nil) == [.decide(mediaSequence: 44, because: .nextSegment)])
        #expect(loader.decided(variant: 1, playlist: Self.view(try Self.window())) == [.fetch(variant: 1, segmentIndex: 4, mediaSequence: 44)])
    }

    @Test func switchToAnotherVariant_loadsItsPlaylistFirst_thenTheSameSegmentOnIt() throws {
        var loader = try Self.loading()
        _ = loader.turn(peakCapBps: 3_000_000)
        // Variant 2's playlist is cached from earlier: a switch still reloads it (a live playlist moves on).
        #expect(loader.decided(variant: 2, playlist: Self.view(try Self.window())) == [.loadPlaylist(variant: 2)])
        #expect(loader.currentVariant == 1, "not switched before its playlist lands")
        let landed = Self.view(try Self.window(first: 41), sinceReload: 0)
        #expect(
            loader.playlistLoaded(variant: 2, playlist: landed, peakCapBps: 3_000_000) == [.fetch(variant: 2, segmentIndex: 3, mediaSequence: 44)])
        #expect(loader.currentVariant == 2)
    }

    @Test func sameVariantWithoutAPlaylist_loadsIt() throws {
        var loader = try Self.loading()
        _ = loader.turn(peakCapBps: nil)
        #expect(loader.decided(variant: 1, playlist: nil) == [.loadPlaylist(variant: 1)])
    }

    @Test func capMovedWhileASwitchsPlaylistLoaded_decidesAgain() throws {
        var loader = try Self.loading()
        _ = loader.turn(peakCapBps: 3_000_000)
        _ = loader.decided(variant: 2, playlist: nil)
        // A stall meanwhile put the cap into recovery: nothing is fetched on the old decision.
        #expect(loader.playlistLoaded(variant: 2, playlist: Self.view(try Self.window()), peakCapBps: 800_000) == [])
        #expect(loader.currentVariant == 2, "its playlist is loaded: the variant is the loader's")
        #expect(loader.turn(peakCapBps: 800_000) == [.decide(mediaSequence: 44, because: .capMoved)])
        // Decided once again: the next turn's reason is the plain one.
        _ = loader.decided(variant: 0, playlist: nil)
        _ = loader.playlistLoaded(variant: 0, playlist: Self.view(try Self.window()), peakCapBps: 800_000)
        #expect(loader.turn(peakCapBps: 800_000) == [.decide(mediaSequence: 44, because: .nextSegment)])
    }

    @Test func switchsPlaylistNotLoaded_turnEnds_onTheVariantItWasOn() throws {
        var loader = try Self.loading()
        _ = loader.turn(peakCapBps: nil)
        _ = loader.decided(variant: 2, playlist: nil)
        // Its URI failed over, or the request was cut for a live step.
        #expect(loader.playlistLoaded(variant: 2, playlist: nil, peakCapBps: nil) == [])
        #expect(loader.currentVariant == 1)
        #expect(loader.turn(peakCapBps: nil) == [.decide(mediaSequence: 44, because: .nextSegment)])
        // A late answer for a playlist the turn no longer waits for moves nothing.
        #expect(loader.playlistLoaded(variant: 2, playlist: Self.view(try Self.window()), peakCapBps: nil) == [])
        #expect(loader.currentVariant == 1)
    }

    @Test func nextNotPublished_reloadsWhenDue() throws {
        var loader = try Self.loading(next: 45)
        _ = loader.turn(peakCapBps: nil)
        #expect(
            loader.decided(variant: 1, playlist: Self.view(try Self.window(), sinceReload: 0.25, changed: true)) == [
                .reload(variant: 1, afterSeconds: 0.75)
            ])
        _ = loader.turn(peakCapBps: nil)
        #expect(
            loader.decided(variant: 1, playlist: Self.view(try Self.window(), sinceReload: 0.25, changed: false)) == [
                .reload(variant: 1, afterSeconds: 0.25)
            ])
    }

    @Test func pastTheEndOfAnEndedPlaylist_endsTheTrack() throws {
        var loader = try Self.loading(next: 45)
        _ = loader.turn(peakCapBps: nil)
        #expect(loader.decided(variant: 1, playlist: Self.view(try Self.window(ended: true))) == [.endOfTrack])
    }

    @Test func segmentLeftTheWindow_resyncs_sayingWhereTheWindowStarts() throws {
        var loader = try Self.loading(next: 41)
        _ = loader.turn(peakCapBps: nil)
        let actions = loader.decided(variant: 1, playlist: Self.view(try Self.window(first: 50)))
        #expect(
            actions == [
                .resync(
                    .segmentRolledOff, variant: 1,
                    message: "fell behind the live window (next 42, window starts at 50); resyncing to the live edge under the recovery cap",
                    url: nil)
            ])
    }

    @Test func goneSegment_expiredWhenTheReloadedWindowStartsAfterIt_elseTheFailureStands() throws {
        var loader = try Self.loading(next: 43)
        let expired = loader.segmentGone(
            mediaSequence: 44, variant: 1, httpStatus: 410, url: "http://127.0.0.1/v1/seg_44.ts", reloaded: try Self.window(first: 47))
        #expect(
            expired == [
                .resync(
                    .expiredSegment, variant: 1,
                    message: "segment 44 expired (HTTP 410); the window now starts at 47; resyncing to the live edge under the recovery cap",
                    url: "http://127.0.0.1/v1/seg_44.ts")
            ])
        #expect(loader.segmentGone(mediaSequence: 44, variant: 1, httpStatus: 404, url: nil, reloaded: try Self.window(first: 40)) == nil)
        #expect(loader.segmentGone(mediaSequence: 44, variant: 1, httpStatus: 404, url: nil, reloaded: try Self.window(count: 0)) == nil)
    }

    @Test func abandonment_decidesAgainForTheSameSegment_andTheLastOneTheRulesAllowFails() throws {
        var loader = try Self.loading(next: 43, wedge: WedgeRules(maxAbandonmentsPerSegment: 3))
        for id in 0..<2 {
            _ = loader.turn(peakCapBps: nil)
            _ = loader.decided(variant: 1, playlist: Self.view(try Self.window()))
            let cut = loader.transferCancelled(
                .overSelected, wire: Self.wire(id), bufferSeconds: 3, segmentDurationSeconds: 1, rungBps: 3_000_000,
                ladderBitratesBps: Self.ladderBps)
            #expect(cut == [.record(.requestEnd(CutShort.monitorCancelled(.overSelected).requestEnd(Self.wire(id))))])
            #expect(loader.turn(peakCapBps: nil) == [.decide(mediaSequence: 44, because: .abandoned)])
        }
        #expect(loader.abandonments == [44: 2])
        _ = loader.decided(variant: 1, playlist: Self.view(try Self.window()))
        let last = loader.transferCancelled(
            .overSelected, wire: Self.wire(3), bufferSeconds: 3, segmentDurationSeconds: 1, rungBps: 3_000_000, ladderBitratesBps: Self.ladderBps)
        #expect(last.last == .fail("segment 44 could not be loaded: wedged or abandoned 3 times on every rung tried"))
        #expect(loader.isDone)
        #expect(loader.turn(peakCapBps: nil) == [], "done: no more actions")
    }

    @Test func cutShortWithoutTheMonitor_decidesAgain_notCounted() throws {
        var loader = try Self.loading(next: 43, wedge: WedgeRules(maxAbandonmentsPerSegment: 1))
        _ = loader.turn(peakCapBps: nil)
        _ = loader.decided(variant: 1, playlist: Self.view(try Self.window()))
        loader.segmentCutShort()
        #expect(loader.abandonments.isEmpty)
        #expect(loader.turn(peakCapBps: nil) == [.decide(mediaSequence: 44, because: .cutShort)])
        // Nothing is in flight after it: a late cut finds nothing to judge.
        #expect(
            loader.transferCancelled(
                .wedged, wire: Self.wire(4), bufferSeconds: 3, segmentDurationSeconds: 1, rungBps: 3_000_000, ladderBitratesBps: Self.ladderBps)
                == [])
    }

    @Test func partAbandonments_countAgainstTheirSegment_withTheSegments() throws {
        var loader = try Self.loading(next: 43, wedge: WedgeRules(maxAbandonmentsPerSegment: 2))
        _ = loader.turn(peakCapBps: nil)
        _ = loader.decided(variant: 1, playlist: Self.view(try Self.window()))
        _ = loader.transferCancelled(
            .overSelected, wire: Self.wire(5), bufferSeconds: 3, segmentDurationSeconds: 1, rungBps: 3_000_000, ladderBitratesBps: Self.ladderBps)
        _ = loader.turn(peakCapBps: nil)
        let cut = loader.partCancelled(
            .overSelected, wire: Self.wire(6), attempt: 1, mediaSequence: 44, bufferSeconds: 3, partDurationSeconds: 0.5, rungBps: 3_000_000,
            ladderBitratesBps: Self.ladderBps)
        #expect(cut?.next == .fail("segment 44 could not be loaded part by part: wedged or abandoned 2 times on every rung tried"))
        #expect(cut?.records == [.requestEnd(CutShort.monitorCancelled(.overSelected).requestEnd(Self.wire(6)))])
        #expect(loader.isDone)
    }

    @Test func lowLatencyPlaylist_goesToThePartLoader() throws {
        var loader = try Self.loading()
        let ll = try PlaylistParser.parse(
            data: Data(LowLatencyRulesTests.text().utf8), baseURL: LowLatencyRulesTests.base)
        guard case .media(let p) = ll else {
            Issue.record("not a media playlist")
            return
        }
        _ = loader.turn(peakCapBps: nil)
        #expect(loader.decided(variant: 1, playlist: Self.view(p)) == [.lowLatencyStep(variant: 1)])
        // Whole segments the part loader completes move the loader on.
        loader.segmentLoaded(mediaSequence: 15)
        #expect(loader.nextMediaSequence == 16)
    }

    @Test func resyncDecision_isTheNextTurns_onTheVariantItLoaded_fromWhereTheResyncMovedLoading() throws {
        var loader = try Self.loading(next: 43)
        loader.resyncDecided(rung: 0, variant: 3)
        loader.moved(to: 48)
        #expect(loader.currentVariant == 3)
        #expect(loader.turn(peakCapBps: nil) == [.useDecision(rung: 0)])
        #expect(
            loader.decided(variant: 3, playlist: Self.view(try Self.window(first: 45))) == [.fetch(variant: 3, segmentIndex: 3, mediaSequence: 48)])
        // Used once.
        loader.segmentLoaded(mediaSequence: 48)
        #expect(loader.turn(peakCapBps: nil) == [.decide(mediaSequence: 49, because: .nextSegment)])
    }
    // MARK: - Cuts of the segment in flight (the same judgement as VOD's, LoaderCore.judgeCut)

    /// A loader with segment 44 of variant 1 (a 3 Mbit/s rung of 1 s segments) in flight.
    static func fetching44(wedge: WedgeRules = WedgeRules()) throws -> LiveLoaderCore {
        var loader = try loading(next: 43, wedge: wedge)
        _ = loader.turn(peakCapBps: nil)
        #expect(loader.decided(variant: 1, playlist: view(try window())) == [.fetch(variant: 1, segmentIndex: 4, mediaSequence: 44)])
        return loader
    }

    static let ladderBps = [800_000, 3_000_000, 6_000_000]
    static func wire(_ requestID: Int, bytes: Int = 100) -> RequestEnd {
        RequestEnd(requestID: requestID, url: "v1/seg_44.ts", purpose: .segment, status: nil, bytes: bytes, ok: false)
    }

    @Test func wedgedSegment_withBufferInHand_isReRequestedAsTheAttemptItWas_thenDecidedAgainIfItWedgesAgain() throws {
        var loader = try Self.fetching44()
        let first = loader.transferCancelled(
            .wedged, wire: Self.wire(7), attempt: 2, bufferSeconds: 12, segmentDurationSeconds: 1, rungBps: 3_000_000,
            ladderBitratesBps: Self.ladderBps)
        #expect(
            first == [
                .record(.requestEnd(CutShort.monitorCancelled(.wedged).requestEnd(Self.wire(7)))),
                .record(.retryScheduled(CutShort.immediateRetry(requestID: 7, url: "v1/seg_44.ts", attemptsMade: 1))),
                .reRequest(variant: 1, segmentIndex: 4, mediaSequence: 44, attempt: 2)
            ])
        // Wedged again: an abandonment, counted, and the next turn decides again for the same segment.
        let second = loader.transferCancelled(
            .wedged, wire: Self.wire(8), bufferSeconds: 9, segmentDurationSeconds: 1, rungBps: 3_000_000, ladderBitratesBps: Self.ladderBps)
        #expect(second == [.record(.requestEnd(CutShort.monitorCancelled(.wedged).requestEnd(Self.wire(8))))])
        #expect(loader.abandonments == [44: 1])
        #expect(loader.turn(peakCapBps: nil) == [.decide(mediaSequence: 44, because: .abandoned)])
    }

    @Test func wedgedSegment_withLittleBufferLeft_reDecides_notCounted() throws {
        var loader = try Self.fetching44()
        let actions = loader.transferCancelled(
            .wedged, wire: Self.wire(7), bufferSeconds: 1, segmentDurationSeconds: 1, rungBps: 3_000_000, ladderBitratesBps: Self.ladderBps)
        #expect(actions.last == .record(.retryScheduled(CutShort.immediateRetry(requestID: 7, url: "v1/seg_44.ts", attemptsMade: 1))))
        #expect(loader.abandonments.isEmpty)
        #expect(loader.turn(peakCapBps: nil) == [.decide(mediaSequence: 44, because: .reDecide)])
    }

    @Test func overSelected_isAnAbandonment_theLastOneFails() throws {
        var loader = try Self.fetching44(wedge: WedgeRules(maxAbandonmentsPerSegment: 1))
        let actions = loader.transferCancelled(
            .overSelected, wire: Self.wire(7, bytes: 900), bufferSeconds: 12, segmentDurationSeconds: 1, rungBps: 3_000_000,
            ladderBitratesBps: Self.ladderBps)
        #expect(
            actions == [
                .record(.requestEnd(CutShort.monitorCancelled(.overSelected).requestEnd(Self.wire(7, bytes: 900)))),
                .fail("segment 44 could not be loaded: wedged or abandoned 1 times on every rung tried")
            ])
        #expect(loader.isDone)
    }

    @Test func trickleCut_reRequestedAtOnce_orFailsWithTheRulesMessage() throws {
        var loader = try Self.fetching44()
        let again = loader.transferCancelled(
            .trickleReRequest, wire: Self.wire(7), bufferSeconds: 1, segmentDurationSeconds: 1, rungBps: 800_000,
            ladderBitratesBps: Self.ladderBps)
        #expect(again.last == .reRequest(variant: 1, segmentIndex: 4, mediaSequence: 44, attempt: 1))
        let failed = loader.transferCancelled(
            .trickleFailed, wire: Self.wire(8), bufferSeconds: 1, segmentDurationSeconds: 1, rungBps: 800_000,
            ladderBitratesBps: Self.ladderBps, failure: "segment 44 arrives too late")
        #expect(failed.last == .fail("segment 44 arrives too late"))
        #expect(loader.abandonments.isEmpty, "the trickle rule's cut is not an abandonment")
    }

    @Test func cutWithNothingInFlight_movesNothing() throws {
        var loader = try Self.loading()
        let actions = loader.transferCancelled(
            .wedged, wire: Self.wire(7), bufferSeconds: 1, segmentDurationSeconds: 1, rungBps: 800_000, ladderBitratesBps: Self.ladderBps)
        #expect(actions == [])
    }
    // MARK: - Cuts of the LL-HLS part loader's requests

    @Test func wedgedPart_reRequestedOnce_thenAbandonedPartByPart_countedWithItsSegment() throws {
        var loader = try Self.loading(next: 43, wedge: WedgeRules(maxAbandonmentsPerSegment: 2))
        _ = loader.turn(peakCapBps: nil)
        let first = loader.partCancelled(
            .wedged, wire: Self.wire(7), attempt: 1, mediaSequence: 44, bufferSeconds: 3, partDurationSeconds: 0.5, rungBps: 3_000_000,
            ladderBitratesBps: Self.ladderBps)
        #expect(first?.next == .reRequest(attempt: 1))
        let again = loader.partCancelled(
            .wedged, wire: Self.wire(8), attempt: 1, mediaSequence: 44, bufferSeconds: 3, partDurationSeconds: 0.5, rungBps: 3_000_000,
            ladderBitratesBps: Self.ladderBps)
        #expect(
            again == LiveLoaderCore.PartCut(records: [.requestEnd(CutShort.monitorCancelled(.wedged).requestEnd(Self.wire(8)))], next: .endStep),
            "wedged again: abandoned")
        #expect(loader.turn(peakCapBps: nil) == [.decide(mediaSequence: 44, because: .abandoned)])
        // The segment's own abandonment counts with its parts': the second of the two allowed.
        #expect(loader.decided(variant: 1, playlist: Self.view(try Self.window())) == [.fetch(variant: 1, segmentIndex: 4, mediaSequence: 44)])
        let last = loader.transferCancelled(
            .overSelected, wire: Self.wire(9), bufferSeconds: 3, segmentDurationSeconds: 1, rungBps: 3_000_000, ladderBitratesBps: Self.ladderBps)
        #expect(last.last == .fail("segment 44 could not be loaded: wedged or abandoned 2 times on every rung tried"))
    }

    @Test func partAbandonedAtTheLimit_failsPartByPart() throws {
        var loader = try Self.loading(next: 43, wedge: WedgeRules(maxAbandonmentsPerSegment: 1))
        _ = loader.turn(peakCapBps: nil)
        let cut = loader.partCancelled(
            .abrAbandoned, wire: Self.wire(10), attempt: 1, mediaSequence: 44, bufferSeconds: 3, partDurationSeconds: 0.5, rungBps: 3_000_000,
            ladderBitratesBps: Self.ladderBps)
        #expect(cut?.next == .fail("segment 44 could not be loaded part by part: wedged or abandoned 1 times on every rung tried"))
    }

    @Test func partWedgedWithLittleBuffer_reDecides_andEachTurnsRequestsAreNew() throws {
        var loader = try Self.loading(next: 43)
        _ = loader.turn(peakCapBps: nil)
        let cut = loader.partCancelled(
            .wedged, wire: Self.wire(7), attempt: 1, mediaSequence: 44, bufferSeconds: 0.5, partDurationSeconds: 0.5, rungBps: 3_000_000,
            ladderBitratesBps: Self.ladderBps)
        #expect(cut?.records.last == .retryScheduled(CutShort.immediateRetry(requestID: 7, url: "v1/seg_44.ts", attemptsMade: 1)))
        #expect(cut?.next == .endStep)
        #expect(loader.turn(peakCapBps: nil) == [.decide(mediaSequence: 44, because: .reDecide)])
        // A first wedge in a new turn is a first wedge again, re-requested, not abandoned.
        _ = loader.partCancelled(
            .wedged, wire: Self.wire(8), attempt: 1, mediaSequence: 44, bufferSeconds: 3, partDurationSeconds: 0.5, rungBps: 3_000_000,
            ladderBitratesBps: Self.ladderBps)
        _ = loader.turn(peakCapBps: nil)
        let next = loader.partCancelled(
            .wedged, wire: Self.wire(9), attempt: 1, mediaSequence: 45, bufferSeconds: 3, partDurationSeconds: 0.5, rungBps: 3_000_000,
            ladderBitratesBps: Self.ladderBps)
        #expect(next?.next == .reRequest(attempt: 1))
        #expect(loader.abandonments.isEmpty)
    }
}
