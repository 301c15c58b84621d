import Testing
@testable import HLSCore

/// Where a live resync lands: forward to the start point, or nowhere — never back (LiveResyncRules).
@Suite struct LiveResyncLandingTests {
    func seg(_ msn: Int) -> LowLatencyPosition { LowLatencyPosition(msn: msn) }
    func part(_ msn: Int, _ j: Int) -> LowLatencyPosition { LowLatencyPosition(msn: msn, part: j) }

    /// Seed: hls-origin `--live --stale-playlist 3:100000`, 2 s segments, window 6. Loaded up to 6,
    /// the playlist froze, the start point of every reload stayed at 4; each long-stall resync
    /// jumped back to 4 and replayed 4, 5, 6 — until the no-progress watchdog ended it at 80 s.
    @Test func staleWindow_startPointBehindWhatWasLoaded_holds() {
        #expect(LiveResyncRules.landing(edgeStart: seg(4), lastLoaded: seg(6), playheadMediaSequence: 6, windowFirstMediaSequence: 1) == .hold)
        // Whatever the playhead (unknown after an earlier seek dropped the buffer).
        #expect(LiveResyncRules.landing(edgeStart: seg(4), lastLoaded: seg(6), playheadMediaSequence: nil, windowFirstMediaSequence: 1) == .hold)
        // A playhead behind the start point but inside the window plays on from its buffer.
        #expect(LiveResyncRules.landing(edgeStart: seg(6), lastLoaded: seg(6), playheadMediaSequence: 5, windowFirstMediaSequence: 3) == .hold)
    }

    @Test func startPointAheadOfEverythingLoaded_seeks() {
        // The window rolled on during a link collapse: 12 is past 7, the last loaded.
        #expect(
            LiveResyncRules.landing(edgeStart: seg(12), lastLoaded: seg(7), playheadMediaSequence: 7, windowFirstMediaSequence: 9)
                == .seek(to: seg(12)))
        // Just ahead: the next segment is the start point.
        #expect(
            LiveResyncRules.landing(edgeStart: seg(8), lastLoaded: seg(7), playheadMediaSequence: 7, windowFirstMediaSequence: 5) == .seek(to: seg(8))
        )
        // Nothing loaded yet (or the position was lost): the start point.
        #expect(
            LiveResyncRules.landing(edgeStart: seg(3), lastLoaded: nil, playheadMediaSequence: nil, windowFirstMediaSequence: 0) == .seek(to: seg(3)))
    }

    @Test func playheadOutOfTheWindow_loadingPastTheStartPoint_skipsTheBufferWithoutGoingBack() {
        // The playhead is in 2, the window starts at 4, loading already reached 9, the start point
        // is 6: drop the buffer, go on loading after 9 — never reload 6…9.
        #expect(
            LiveResyncRules.landing(edgeStart: seg(6), lastLoaded: seg(9), playheadMediaSequence: 2, windowFirstMediaSequence: 4) == .skipBuffered)
        // The playhead in the window's first segment is still in the window.
        #expect(LiveResyncRules.landing(edgeStart: seg(6), lastLoaded: seg(9), playheadMediaSequence: 4, windowFirstMediaSequence: 4) == .hold)
    }

    @Test func lowLatency_partsCompare_withinAndAcrossSegments() {
        // Loaded up to part 1 of 20; the start point is part 2 of 20 (INDEPENDENT): ahead.
        #expect(
            LiveResyncRules.landing(edgeStart: part(20, 2), lastLoaded: part(20, 1), playheadMediaSequence: 20, windowFirstMediaSequence: 15)
                == .seek(to: part(20, 2)))
        // Loaded part 3 of 20; the start point part 2 of 20: not ahead → hold.
        #expect(
            LiveResyncRules.landing(edgeStart: part(20, 2), lastLoaded: part(20, 3), playheadMediaSequence: 20, windowFirstMediaSequence: 15) == .hold
        )
        // A whole segment holds all its parts: part 0 of the same segment is not ahead.
        #expect(!LiveResyncRules.isAhead(part(20, 0), of: seg(20)))
        #expect(LiveResyncRules.isAhead(part(21, 0), of: seg(20)))
        #expect(LiveResyncRules.isAhead(seg(21), of: part(20, 3)))
        #expect(!LiveResyncRules.isAhead(seg(20), of: part(20, 0)), "a whole segment starts at its part 0")
        // The old position far behind the start point (a long stall): seek.
        #expect(
            LiveResyncRules.landing(edgeStart: part(40, 0), lastLoaded: part(31, 2), playheadMediaSequence: 31, windowFirstMediaSequence: 35)
                == .seek(to: part(40, 0)))
    }

    @Test func landingNames() {
        #expect(LiveResyncLanding.seek(to: seg(1)).name == "seek")
        #expect(LiveResyncLanding.skipBuffered.name == "skip-buffered")
        #expect(LiveResyncLanding.hold.name == "hold")
    }
}

/// RFC 8216 §6.2.1's update bound on a live playlist, as reloads see it (LivePlaylistStaleness).
@Suite struct LivePlaylistStalenessTests {
    func t(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: s) }

    @Test func bound_isOneAndAHalfTargetDurations() {
        #expect(LivePlaylistStaleness.boundSeconds(targetDurationSeconds: 2) == 3)
        #expect(LivePlaylistStaleness.boundSeconds(targetDurationSeconds: 6) == 9)
    }

    /// A playlist that changes every target duration, reloaded at the RFC 8216 §6.3.4 cadence
    /// (target duration after a change, half of it after an unchanged answer), is never stale.
    @Test func rfcCadence_changingEveryTargetDuration_neverStale() {
        var s = LivePlaylistStaleness()
        var last = 10
        #expect(s.reloaded(lastMediaSequence: last, trailingParts: 0, targetDurationSeconds: 2, at: t(0)) == nil)
        var now = 0.0
        for _ in 0..<30 {
            // One unchanged answer (the server a little late), then the change.
            now += 2
            #expect(s.reloaded(lastMediaSequence: last, trailingParts: 0, targetDurationSeconds: 2, at: t(now)) == nil)
            now += 1
            last += 1
            #expect(s.reloaded(lastMediaSequence: last, trailingParts: 0, targetDurationSeconds: 2, at: t(now)) == nil)
            #expect(!s.isStale)
        }
    }

    @Test func unchangedJustAtTheBound_notStale_pastIt_staleOnce_thenAdvanced() throws {
        var s = LivePlaylistStaleness()
        _ = s.reloaded(lastMediaSequence: 6, trailingParts: 0, targetDurationSeconds: 2, at: t(10))
        #expect(s.reloaded(lastMediaSequence: 6, trailingParts: 0, targetDurationSeconds: 2, at: t(12)) == nil)
        #expect(s.reloaded(lastMediaSequence: 6, trailingParts: 0, targetDurationSeconds: 2, at: t(13)) == nil, "at the bound: allowed")
        let staleAnswer = s.reloaded(lastMediaSequence: 6, trailingParts: 0, targetDurationSeconds: 2, at: t(13.001))
        let stale = try #require(staleAnswer)
        #expect(stale.state == .stale)
        #expect(stale.unchangedSeconds == 3.001)
        #expect(stale.boundSeconds == 3)
        #expect(stale.unchangedReloads == 3)
        #expect(stale.lastMediaSequence == 6)
        #expect(stale.message.contains("RFC 8216 §6.2.1"))
        #expect(s.isStale)
        // Reported once per run of unchanged reloads.
        #expect(s.reloaded(lastMediaSequence: 6, trailingParts: 0, targetDurationSeconds: 2, at: t(14)) == nil)
        // Only what reloads saw: no reload since 14 s.
        #expect(s.observedUnchangedSeconds == 4)
        let advancedAnswer = s.reloaded(lastMediaSequence: 9, trailingParts: 0, targetDurationSeconds: 2, at: t(21))
        let advanced = try #require(advancedAnswer)
        #expect(advanced.state == .advanced)
        #expect(advanced.unchangedSeconds == 11)
        #expect(advanced.newLastMediaSequence == 9)
        #expect(!s.isStale)
        #expect(s.observedUnchangedSeconds == 0)
    }

    @Test func lowLatency_aNewPartIsAChange() {
        var s = LivePlaylistStaleness()
        _ = s.reloaded(lastMediaSequence: 20, trailingParts: 1, targetDurationSeconds: 2, at: t(0))
        #expect(s.reloaded(lastMediaSequence: 20, trailingParts: 2, targetDurationSeconds: 2, at: t(2.5)) == nil)
        #expect(s.reloaded(lastMediaSequence: 20, trailingParts: 2, targetDurationSeconds: 2, at: t(5.4)) == nil)
        #expect(s.reloaded(lastMediaSequence: 20, trailingParts: 2, targetDurationSeconds: 2, at: t(5.6))?.state == .stale)
    }

    @Test func aNumberingThatRestarts_isAChange_notStale() {
        var s = LivePlaylistStaleness()
        _ = s.reloaded(lastMediaSequence: 500, trailingParts: 0, targetDurationSeconds: 2, at: t(0))
        #expect(s.reloaded(lastMediaSequence: 3, trailingParts: 0, targetDurationSeconds: 2, at: t(2)) == nil)
        #expect(s.reloaded(lastMediaSequence: 4, trailingParts: 0, targetDurationSeconds: 2, at: t(4)) == nil)
        #expect(!s.isStale)
    }

}

/// A resync worked out on the reloaded playlist (LiveResyncRules.plan): where it lands and where loading goes on.
@Suite struct LiveResyncPlanTests {
    func seg(_ msn: Int) -> LowLatencyPosition { LowLatencyPosition(msn: msn) }
    func part(_ msn: Int, _ j: Int) -> LowLatencyPosition { LowLatencyPosition(msn: msn, part: j) }

    /// A live playlist of 2 s segments `first..<first+count` (HOLD-BACK three target durations: the start point is
    /// the third segment from the end).
    static func live(first: Int = 10, count: Int = 10) throws -> MediaPlaylist {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:2", "#EXT-X-MEDIA-SEQUENCE:\(first)"]
        for k in first..<(first + count) { lines += ["#EXTINF:2.0,", "s\(k).ts"] }
        return try LowLatencyRulesTests.playlist(lines.joined(separator: "\n") + "\n")
    }

    @Test func plan_windowRolledOnPastWhatWasLoaded_seeksToTheStartPoint() throws {
        let plan = try #require(
            LiveResyncRules.plan(
                for: try Self.live(), lowLatencyLoaded: nil, nextMediaSequence: 13, segmentsLoaded: true, playheadMediaSequence: 12))
        #expect(plan.landing == .seek(to: seg(17)))
        #expect(plan.edge == seg(17))
        #expect(plan.lastLoaded == seg(12))
        #expect((plan.fromMediaSequence, plan.toMediaSequence, plan.toPart, plan.freshLowLatencyStart) == (13, 17, nil, false))
    }

    @Test func plan_everythingUpToTheEdgeLoaded_holdsWhereLoadingWas() throws {
        let plan = try #require(
            LiveResyncRules.plan(
                for: try Self.live(), lowLatencyLoaded: nil, nextMediaSequence: 20, segmentsLoaded: true, playheadMediaSequence: 18))
        #expect(plan.landing == .hold)
        #expect((plan.fromMediaSequence, plan.toMediaSequence) == (20, 20))
        // The playhead's segment left the window: the buffer goes, loading stays where it was.
        let skip = try #require(
            LiveResyncRules.plan(
                for: try Self.live(), lowLatencyLoaded: nil, nextMediaSequence: 20, segmentsLoaded: true, playheadMediaSequence: 8))
        #expect(skip.landing == .skipBuffered)
        #expect((skip.fromMediaSequence, skip.toMediaSequence) == (20, 20))
    }

    @Test func plan_nothingLoadedYet_seeksToTheStartPoint_andAnEmptyPlaylistHasNoPlan() throws {
        let plan = try #require(
            LiveResyncRules.plan(
                for: try Self.live(), lowLatencyLoaded: nil, nextMediaSequence: 0, segmentsLoaded: false, playheadMediaSequence: nil))
        #expect(plan.lastLoaded == nil)
        #expect(plan.landing == .seek(to: seg(17)))
        #expect(
            LiveResyncRules.plan(
                for: try Self.live(count: 0), lowLatencyLoaded: nil, nextMediaSequence: 3, segmentsLoaded: true, playheadMediaSequence: nil)
                == nil)
    }

    @Test func plan_lowLatency_seeksToAFreshPartStart_orHoldsAtThePartLoaded() throws {
        let p = try LowLatencyRulesTests.playlist(LowLatencyRulesTests.text())
        let start = try #require(LowLatencyRules.startPosition(for: p)).position
        // Nothing loaded part by part: a fresh LL-HLS start at the start point's part.
        let fresh = try #require(
            LiveResyncRules.plan(for: p, lowLatencyLoaded: nil, nextMediaSequence: 11, segmentsLoaded: true, playheadMediaSequence: nil))
        #expect(fresh.edge == start)
        #expect(fresh.landing == .seek(to: start))
        #expect((fresh.fromMediaSequence, fresh.toMediaSequence, fresh.toPart, fresh.freshLowLatencyStart) == (11, start.msn, start.part, true))
        // Loaded to the producing segment's second part: nothing newer; loading goes on in that segment.
        let held = try #require(
            LiveResyncRules.plan(for: p, lowLatencyLoaded: part(15, 1), nextMediaSequence: 11, segmentsLoaded: true, playheadMediaSequence: nil))
        #expect(held.landing == .hold)
        #expect(held.lastLoaded == part(15, 1))
        #expect((held.fromMediaSequence, held.toMediaSequence, held.freshLowLatencyStart) == (15, 15, false))
        // A whole segment loaded: loading goes on in the next one.
        let whole = try #require(
            LiveResyncRules.plan(for: p, lowLatencyLoaded: seg(14), nextMediaSequence: 11, segmentsLoaded: true, playheadMediaSequence: nil))
        #expect(whole.fromMediaSequence == 15)
    }
}
