import Foundation
import Testing
@testable import HLSCore

/// Hand-written LL-HLS playlists in the shape hls-origin's `--ll-hls` writes (2 s segments, 0.5 s parts, only
/// the first part of a segment INDEPENDENT), driven through the pure rules.
@Suite struct LowLatencyRulesTests {
    static let base = URL(string: "http://127.0.0.1:8080/v0/prog.m3u8")!

    /// Segments `first..<first+complete` (2 s); the last `partsListed` of them list 4 parts; then `trailing`
    /// parts of the next segment and a PART preload hint for the one after.
    static func text(
        first: Int = 10, complete: Int = 5, partsListed: Int = 2, trailing: Int = 2,
        control: String = "CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5,CAN-SKIP-UNTIL=12",
        partInf: Bool = true, discontinuityAt: Int? = nil, discontinuitySequence: Int = 0,
        skipped: Int = 0, independentAt: Set<String> = [], endList: Bool = false
    ) -> String {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:9", "#EXT-X-TARGETDURATION:2"]
        if !control.isEmpty { lines.append("#EXT-X-SERVER-CONTROL:\(control)") }
        if partInf { lines.append("#EXT-X-PART-INF:PART-TARGET=0.5") }
        lines.append("#EXT-X-MEDIA-SEQUENCE:\(first)")
        lines.append("#EXT-X-DISCONTINUITY-SEQUENCE:\(discontinuitySequence)")
        if skipped > 0 { lines.append("#EXT-X-SKIP:SKIPPED-SEGMENTS=\(skipped)") }
        func part(_ k: Int, _ j: Int) -> String {
            "#EXT-X-PART:DURATION=0.5,URI=\"s\(k).\(j).ts\"" + (j == 0 || independentAt.contains("\(k).\(j)") ? ",INDEPENDENT=YES" : "")
        }
        let firstListed = first + skipped
        for k in firstListed..<(first + complete) {
            if k == discontinuityAt { lines.append("#EXT-X-DISCONTINUITY") }
            if k >= first + complete - partsListed { lines += (0..<4).map { part(k, $0) } }
            lines += ["#EXTINF:2.0,", "s\(k).ts"]
        }
        let producing = first + complete
        lines += (0..<trailing).map { part(producing, $0) }
        if endList {
            lines.append("#EXT-X-ENDLIST")
        } else {
            lines.append("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"s\(producing).\(trailing).ts\"")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    static func playlist(_ text: String) throws -> MediaPlaylist {
        guard case let .media(p) = try PlaylistParser.parse(text, baseURL: base) else {
            throw PlaylistError(kind: .syntax, lineNumber: 0, rule: "test", message: "not a media playlist")
        }
        return p
    }

    static func uri(_ name: String) -> URL { URL(string: name, relativeTo: base)!.absoluteURL }

    // MARK: Blocking reload

    @Test func reloadAsksForThePartAfterTheTrailingParts() throws {
        let p = try Self.playlist(Self.text(trailing: 2))
        let r = try #require(LowLatencyRules.nextReload(after: p, playlistAgeSeconds: 0.2))
        #expect(r == BlockingReloadRequest(msn: 15, part: 2, skip: .yes))
        #expect(r.url(playlistURL: Self.base).absoluteString == "http://127.0.0.1:8080/v0/prog.m3u8?_HLS_msn=15&_HLS_part=2&_HLS_skip=YES")
    }

    @Test func reloadWithoutTrailingPartsAsksForPartZeroOfTheNextSegment() throws {
        let p = try Self.playlist(Self.text(trailing: 0))
        #expect(LowLatencyRules.nextReload(after: p, playlistAgeSeconds: 0)?.msn == 15)
        #expect(LowLatencyRules.nextReload(after: p, playlistAgeSeconds: 0)?.part == 0)
    }

    @Test func reloadWithoutPartInfBlocksOnTheNextSegmentOnly() throws {
        let p = try Self.playlist(Self.text(partsListed: 0, trailing: 0, control: "CAN-BLOCK-RELOAD=YES", partInf: false))
        #expect(LowLatencyRules.nextReload(after: p, playlistAgeSeconds: 0) == BlockingReloadRequest(msn: 15))
    }

    @Test func noBlockingReloadWithoutCanBlockReloadOrAfterEndList() throws {
        #expect(LowLatencyRules.nextReload(after: try Self.playlist(Self.text(control: "PART-HOLD-BACK=1.5")), playlistAgeSeconds: 0) == nil)
        #expect(LowLatencyRules.nextReload(after: try Self.playlist(Self.text(control: "")), playlistAgeSeconds: 0) == nil)
        #expect(LowLatencyRules.nextReload(after: try Self.playlist(Self.text(endList: true)), playlistAgeSeconds: 0) == nil)
    }

    /// §6.3.7: a delta update only with a playlist younger than half the Skip Boundary (12 s → 6 s).
    @Test func skipOnlyWhileThePlaylistIsYoungerThanHalfTheSkipBoundary() throws {
        let p = try Self.playlist(Self.text())
        #expect(LowLatencyRules.nextReload(after: p, playlistAgeSeconds: 5.999)?.skip == .yes)
        #expect(LowLatencyRules.nextReload(after: p, playlistAgeSeconds: 6.0)?.skip == nil)
        let noSkip = try Self.playlist(Self.text(control: "CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=1.5"))
        #expect(LowLatencyRules.nextReload(after: noSkip, playlistAgeSeconds: 0)?.skip == nil)
        let v2 = try Self.playlist(Self.text(control: "CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL=12,CAN-SKIP-DATERANGES=YES"))
        #expect(LowLatencyRules.nextReload(after: v2, playlistAgeSeconds: 0)?.skip == .v2)
    }

    @Test func reloadURLKeepsOtherParametersAndReplacesOldDirectives() {
        let url = URL(string: "http://h/v0/prog.m3u8?token=a&_HLS_msn=3&_HLS_part=1&_HLS_skip=YES")!
        let r = BlockingReloadRequest(msn: 8, part: nil, skip: nil)
        #expect(r.url(playlistURL: url).absoluteString == "http://h/v0/prog.m3u8?token=a&_HLS_msn=8")
    }

    /// The next reload after a merged-in delta counts the skipped segments.
    @Test func reloadAfterADeltaCountsSkippedSegments() throws {
        let delta = try Self.playlist(Self.text(first: 12, complete: 10, skipped: 4))
        #expect(delta.segments.first?.mediaSequence == 16)
        #expect(LowLatencyRules.nextReload(after: delta, playlistAgeSeconds: 0)?.msn == 22)
        let onlySkipped = try Self.playlist(Self.text(first: 12, complete: 4, partsListed: 0, trailing: 1, skipped: 4))
        #expect(onlySkipped.segments.isEmpty)
        #expect(LowLatencyRules.nextReload(after: onlySkipped, playlistAgeSeconds: 0) == BlockingReloadRequest(msn: 16, part: 1, skip: .yes))
    }

    // MARK: Delta updates

    @Test func deltaMergeRestoresSkippedSegmentsBySequence() throws {
        // Previous: 10…19, a discontinuity before 15 (DSN 3 → 4). Two segments later: 12…21, 12…16 skipped.
        let previous = try Self.playlist(Self.text(first: 10, complete: 10, discontinuityAt: 15, discontinuitySequence: 3))
        let delta = try Self.playlist(Self.text(first: 12, complete: 10, discontinuitySequence: 3, skipped: 5))
        #expect(delta.segments.map(\.mediaSequence) == Array(17...21))
        let merged = try LowLatencyRules.merge(delta: delta, into: previous)
        #expect(merged.skip == nil)
        #expect(merged.segments.map(\.mediaSequence) == Array(12...21))
        #expect(merged.segments.map(\.uri.lastPathComponent) == (12...21).map { "s\($0).ts" })
        #expect(merged.segments.map(\.discontinuitySequence) == [3, 3, 3, 4, 4, 4, 4, 4, 4, 4])
        #expect(merged.trailingParts == delta.trailingParts)
        #expect(merged.preloadHints == delta.preloadHints)
        // The merged playlist drives the next reload like a full one.
        #expect(LowLatencyRules.nextReload(after: merged, playlistAgeSeconds: 0)?.msn == 22)
    }

    @Test func deltaUpdates_aDeltaThatMerges_isTheFullPlaylist_andDeltasStayOn() throws {
        var updates = DeltaUpdates()
        let previous = try Self.playlist(Self.text(first: 10, complete: 10))
        let delta = try Self.playlist(Self.text(first: 12, complete: 10, skipped: 5))
        #expect(
            updates.answered(delta, previous: previous, askedForDelta: true)
                == .playlist(try LowLatencyRules.merge(delta: delta, into: previous), note: nil))
        // A whole playlist is adopted as it is.
        #expect(updates.answered(previous, previous: previous, askedForDelta: false) == .playlist(previous, note: nil))
        #expect(!updates.isOff)
    }

    @Test func deltaUpdates_aDeltaThatDoesNotMerge_asksForTheWholePlaylist_andTurnsDeltasOff() throws {
        var updates = DeltaUpdates()
        let previous = try Self.playlist(Self.text(first: 10, complete: 10))
        let older = try Self.playlist(Self.text(first: 8, complete: 12, skipped: 4))
        guard case .askWhole(let note) = updates.answered(older, previous: previous, askedForDelta: true) else {
            Issue.record("an unmergeable delta asks for the whole playlist")
            return
        }
        #expect(note.contains("could not be merged") && note.contains("segment 8 is not in the previous playlist"), "\(note)")
        #expect(updates.isOff)
        #expect(LowLatencyRules.nextReload(after: previous, playlistAgeSeconds: 0, deltaUpdates: !updates.isOff)?.skip == nil)
        // The whole playlist it then gets is adopted.
        let whole = try Self.playlist(Self.text(first: 12, complete: 10))
        #expect(updates.answered(whole, previous: previous, askedForDelta: false) == .playlist(whole, note: nil))
    }

    @Test func deltaUpdates_aServerAnsweringTheWholeRequestWithAnUnmergeableDelta_isPlayedAsListed_notedOnce() throws {
        var updates = DeltaUpdates()
        let previous = try Self.playlist(Self.text(first: 10, complete: 10))
        let older = try Self.playlist(Self.text(first: 8, complete: 12, skipped: 4))
        guard case .playlist(let first, let note) = updates.answered(older, previous: previous, askedForDelta: false) else {
            Issue.record("asked without _HLS_skip, the answer is played as listed")
            return
        }
        #expect(first == older)
        #expect(note?.contains("playing the segments it lists") == true)
        #expect(updates.answered(older, previous: previous, askedForDelta: false) == .playlist(older, note: nil), "noted once")
        #expect(!updates.isOff, "not asked for: nothing to turn off")
    }

    @Test func deltaMergeFailsWhenASkippedSegmentIsNotInThePreviousPlaylist() throws {
        let previous = try Self.playlist(Self.text(first: 10, complete: 10))
        // Skipped 8…11: 8 is older than the previous playlist.
        let older = try Self.playlist(Self.text(first: 8, complete: 12, skipped: 4))
        #expect(throws: DeltaUpdateError.skippedSegmentMissing(msn: 8, skippedFirst: 8, skippedCount: 4)) {
            try LowLatencyRules.merge(delta: older, into: previous)
        }
        // Boundary: skipping exactly up to the previous playlist's last segment works; one more does not.
        let upToLast = try Self.playlist(Self.text(first: 10, complete: 11, skipped: 10))
        #expect(try LowLatencyRules.merge(delta: upToLast, into: previous).segments.map(\.mediaSequence) == Array(10...20))
        let pastLast = try Self.playlist(Self.text(first: 10, complete: 12, skipped: 11))
        #expect(throws: DeltaUpdateError.skippedSegmentMissing(msn: 20, skippedFirst: 10, skippedCount: 11)) {
            try LowLatencyRules.merge(delta: pastLast, into: previous)
        }
    }

    @Test func deltaMergeChecksTheDiscontinuitySequence() throws {
        let previous = try Self.playlist(Self.text(first: 10, complete: 10, discontinuitySequence: 3))
        let delta = try Self.playlist(Self.text(first: 12, complete: 10, discontinuitySequence: 4, skipped: 5))
        #expect(throws: DeltaUpdateError.discontinuitySequenceMismatch(delta: 4, previous: 3)) {
            try LowLatencyRules.merge(delta: delta, into: previous)
        }
    }

    @Test func playlistWithoutSkipOrWithZeroSkippedIsItsOwnMerge() throws {
        let previous = try Self.playlist(Self.text(first: 10, complete: 10))
        let full = try Self.playlist(Self.text(first: 11, complete: 10))
        #expect(try LowLatencyRules.merge(delta: full, into: previous) == full)
        var zero = full
        zero.skip = SkipInfo(skippedSegments: 0)
        #expect(try LowLatencyRules.merge(delta: zero, into: previous).segments == full.segments)
    }

    @Test func deltaMergeKeepsDateRangesUnlessRemovedOrRelisted() throws {
        var previous = try Self.playlist(Self.text(first: 10, complete: 10))
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        previous.dateRanges = ["ad1", "ad2", "ad3"].map { DateRange(id: $0, startDate: date) }
        var delta = try Self.playlist(Self.text(first: 12, complete: 10, skipped: 5))
        delta.skip?.recentlyRemovedDateRanges = ["ad2"]
        delta.dateRanges = [DateRange(id: "ad3", classID: "new", startDate: date)]
        let merged = try LowLatencyRules.merge(delta: delta, into: previous)
        #expect(merged.dateRanges.map(\.id) == ["ad1", "ad3"])
        #expect(merged.dateRanges.last?.classID == "new")
    }

    // MARK: Start position

    /// Timeline from s10: 5 segments (10 s), then 0.5 s parts; PART-HOLD-BACK 1.5 s.
    @Test func startIsTheLatestIndependentPartAtLeastPartHoldBackFromTheEnd() throws {
        // End 11 s; latest start 9.5 s; independent parts start segments → s14 part 0 at 8 s.
        let two = try #require(LowLatencyRules.startPosition(for: try Self.playlist(Self.text(trailing: 2))))
        #expect(two.position == LowLatencyPosition(msn: 14, part: 0))
        #expect(two.uri == Self.uri("s14.0.ts"))
        #expect(two.distanceFromEndSeconds == 3.0)
        #expect(two.holdBackSeconds == 1.5)
        // End 11.5 s; latest start 10 s = s15 part 0 exactly: the boundary is inclusive.
        let three = try #require(LowLatencyRules.startPosition(for: try Self.playlist(Self.text(trailing: 3))))
        #expect(three.position == LowLatencyPosition(msn: 15, part: 0))
        #expect(three.distanceFromEndSeconds == 1.5)
    }

    @Test func startUsesAnIndependentPartInsideASegment() throws {
        // s14 part 2 is INDEPENDENT too (a keyframe mid-segment): end 11 s, latest 9.5 s → s14.2 at 9 s.
        let p = try Self.playlist(Self.text(trailing: 2, independentAt: ["14.2"]))
        #expect(LowLatencyRules.startPosition(for: p)?.position == LowLatencyPosition(msn: 14, part: 2))
        // Part 3 (9.5 s) would be exactly at the hold-back too, but is not independent.
        let q = try Self.playlist(Self.text(trailing: 2, independentAt: ["14.3"]))
        #expect(LowLatencyRules.startPosition(for: q)?.position == LowLatencyPosition(msn: 14, part: 3))
    }

    @Test func startDefaultsToThreePartTargetsAndFallsBackToTheFirstIndependentUnit() throws {
        // No PART-HOLD-BACK: 3 × 0.5 s, the same answer as above.
        let p = try Self.playlist(Self.text(trailing: 2, control: "CAN-BLOCK-RELOAD=YES"))
        let s = try #require(LowLatencyRules.startPosition(for: p))
        #expect(s.holdBackSeconds == 1.5)
        #expect(s.position == LowLatencyPosition(msn: 14, part: 0))
        // Whole segments (parts not listed) count as independent starts.
        let early = try Self.playlist(Self.text(partsListed: 0, trailing: 0, control: "CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=5"))
        #expect(LowLatencyRules.startPosition(for: early)?.position == LowLatencyPosition(msn: 12))
        // Shorter than the hold-back: the first independent unit.
        let short = try Self.playlist(Self.text(complete: 1, partsListed: 1, trailing: 1, control: "CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=9"))
        #expect(LowLatencyRules.startPosition(for: short)?.position == LowLatencyPosition(msn: 10, part: 0))
        // Not low latency.
        let plain = try Self.playlist(Self.text(partsListed: 0, trailing: 0, partInf: false))
        #expect(LowLatencyRules.startPosition(for: plain) == nil)
    }

    // MARK: Next load

    @Test func nextLoadWalksPartsThenHintsThenWaits() throws {
        let p = try Self.playlist(Self.text(trailing: 2)) // s15 parts 0, 1 listed; hint s15.2
        #expect(
            LowLatencyRules.nextLoad(after: LowLatencyPosition(msn: 15, part: 0), in: p)
                == .part(LowLatencyPosition(msn: 15, part: 1), uri: Self.uri("s15.1.ts")))
        #expect(
            LowLatencyRules.nextLoad(after: LowLatencyPosition(msn: 15, part: 1), in: p)
                == .preloadHint(LowLatencyPosition(msn: 15, part: 2), uri: Self.uri("s15.2.ts")))
        // The hinted part is already loaded: nothing until the next reload.
        #expect(LowLatencyRules.nextLoad(after: LowLatencyPosition(msn: 15, part: 2), in: p) == .waitForReload)
    }

    @Test func nextLoadCrossesSegmentBoundaries() throws {
        let p = try Self.playlist(Self.text(trailing: 2))
        // Last part of s13 → s14 is complete: load it whole.
        #expect(LowLatencyRules.nextLoad(after: LowLatencyPosition(msn: 13, part: 3), in: p) == .segment(msn: 14, uri: Self.uri("s14.ts")))
        #expect(LowLatencyRules.nextLoad(after: LowLatencyPosition(msn: 12), in: p) == .segment(msn: 13, uri: Self.uri("s13.ts")))
        // Last part of s14 → s15 is in progress: its part 0.
        #expect(
            LowLatencyRules.nextLoad(after: LowLatencyPosition(msn: 14, part: 3), in: p)
                == .part(LowLatencyPosition(msn: 15, part: 0), uri: Self.uri("s15.0.ts")))
        // s14 loaded whole, s15 has no part yet: the hint is s15.0.
        let none = try Self.playlist(Self.text(trailing: 0))
        #expect(
            LowLatencyRules.nextLoad(after: LowLatencyPosition(msn: 14), in: none)
                == .preloadHint(LowLatencyPosition(msn: 15, part: 0), uri: Self.uri("s15.0.ts")))
        // Part 2 of s11, whose parts are no longer listed: the rest comes as the whole segment.
        #expect(LowLatencyRules.nextLoad(after: LowLatencyPosition(msn: 11, part: 2), in: p) == .segment(msn: 11, uri: Self.uri("s11.ts")))
    }

    @Test func nextLoadReportsFallingBehindTheWindow() throws {
        let p = try Self.playlist(Self.text(first: 10))
        #expect(
            LowLatencyRules.nextLoad(after: LowLatencyPosition(msn: 8), in: p)
                == .fellBehind(next: LowLatencyPosition(msn: 9, part: 0), firstAvailable: 10))
        #expect(LowLatencyRules.nextLoad(after: LowLatencyPosition(msn: 9), in: p) == .segment(msn: 10, uri: Self.uri("s10.ts")))
    }

    // MARK: The part loader's step

    @Test func partLoaderStep_nothingLoaded_startsFreshPartHoldBackFromTheEnd_forTheShellToLog() throws {
        let p = try Self.playlist(Self.text(trailing: 2))
        let start = try #require(LowLatencyRules.startPosition(for: p))
        let step = PartLoaderStep.next(loaded: nil, pendingStart: nil, in: p)
        #expect(step.freshStart == start)
        #expect(step.startTaken)
        if let part = start.position.part {
            #expect(step.load == .part(start.position, uri: start.uri), "part \(part)")
        } else {
            #expect(step.load == .segment(index: start.position.msn - 10, msn: start.position.msn))
        }
    }

    @Test func partLoaderStep_aResyncsStart_usedWhenThisPlaylistListsIt_elseAFreshOne() throws {
        let p = try Self.playlist(Self.text(trailing: 2))
        let pending = LowLatencyStart(
            position: LowLatencyPosition(msn: 14, part: 0), uri: Self.uri("s14.0.ts"), distanceFromEndSeconds: 3, holdBackSeconds: 1.5)
        let used = PartLoaderStep.next(loaded: nil, pendingStart: pending, in: p)
        #expect(used == PartLoaderStep(load: .part(pending.position, uri: pending.uri), freshStart: nil, startTaken: true))
        // Chosen on another variant's playlist (a switch right after the resync): a fresh start on this one, logged.
        var elsewhere = pending
        elsewhere.uri = URL(string: "http://127.0.0.1:8080/v1/s14.0.ts")!
        let fresh = PartLoaderStep.next(loaded: nil, pendingStart: elsewhere, in: p)
        #expect(fresh.freshStart == LowLatencyRules.startPosition(for: p))
        #expect(fresh.startTaken)
        // A whole-segment start the playlist lists is loaded at its index.
        let whole = LowLatencyStart(position: LowLatencyPosition(msn: 12), uri: Self.uri("s12.ts"), distanceFromEndSeconds: 7, holdBackSeconds: 1.5)
        #expect(PartLoaderStep.next(loaded: nil, pendingStart: whole, in: p).load == .segment(index: 2, msn: 12))
    }

    @Test func partLoaderStep_afterALoad_thePartOrHintNext_thenAReload_theStartLeftAlone() throws {
        let p = try Self.playlist(Self.text(trailing: 2))
        let pending = LowLatencyStart(
            position: LowLatencyPosition(msn: 14, part: 0), uri: Self.uri("s14.0.ts"), distanceFromEndSeconds: 3, holdBackSeconds: 1.5)
        let next = PartLoaderStep.next(loaded: LowLatencyPosition(msn: 15, part: 0), pendingStart: pending, in: p)
        #expect(next == PartLoaderStep(load: .part(LowLatencyPosition(msn: 15, part: 1), uri: Self.uri("s15.1.ts"))))
        #expect(
            PartLoaderStep.next(loaded: LowLatencyPosition(msn: 15, part: 1), pendingStart: nil, in: p).load
                == .part(LowLatencyPosition(msn: 15, part: 2), uri: Self.uri("s15.2.ts")), "the hinted part")
        #expect(PartLoaderStep.next(loaded: LowLatencyPosition(msn: 15, part: 2), pendingStart: nil, in: p).load == .reload)
        #expect(PartLoaderStep.next(loaded: LowLatencyPosition(msn: 13, part: 3), pendingStart: nil, in: p).load == .segment(index: 4, msn: 14))
    }

    @Test func partLoaderStep_partsThatLeftThePlaylist_skipTheRestOfTheirSegment_andFallingBehindResyncs() throws {
        let p = try Self.playlist(Self.text(trailing: 2))
        #expect(PartLoaderStep.next(loaded: LowLatencyPosition(msn: 11, part: 2), pendingStart: nil, in: p).load == .skipRest(msn: 11, afterPart: 2))
        #expect(
            PartLoaderStep.next(loaded: LowLatencyPosition(msn: 8), pendingStart: nil, in: p).load
                == .fellBehind(next: LowLatencyPosition(msn: 9, part: 0), firstAvailable: 10))
    }
}
