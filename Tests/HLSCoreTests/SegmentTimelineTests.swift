import Foundation
import Testing
@testable import HLSCore

@Suite struct SegmentTimelineTests {
    let base = URL(string: "http://127.0.0.1/live/")!

    func window(first msn: Int, count: Int, duration: Double = 2, endList: Bool = false) -> MediaPlaylist {
        let segments = (0..<count).map { i in
            MediaSegment(mediaSequence: msn + i, uri: base.appendingPathComponent("s\(msn + i).ts"), durationSeconds: duration)
        }
        return MediaPlaylist(baseURL: base, targetDurationSeconds: duration, mediaSequence: msn, endList: endList, segments: segments)
    }

    @Test func firstLoad_startsAtZero_contiguous() {
        var t = SegmentTimeline()
        #expect(t.update(with: window(first: 100, count: 5)) == .initial)
        #expect(t.startSeconds(ofMediaSequence: 100) == 0)
        #expect(t.startSeconds(ofMediaSequence: 104) == 8)
        #expect(t.endSeconds == 10)
    }

    @Test func rotatedWindow_keepsKnownStarts_addsNew() {
        var t = SegmentTimeline()
        _ = t.update(with: window(first: 100, count: 5))
        #expect(t.update(with: window(first: 102, count: 5)) == .inSync(newSegments: 2))
        #expect(t.startSeconds(ofMediaSequence: 102) == 4)
        #expect(t.startSeconds(ofMediaSequence: 106) == 12)
    }

    @Test func windowDirectlyFollowing_isInSync() {
        var t = SegmentTimeline()
        _ = t.update(with: window(first: 100, count: 5))
        #expect(t.update(with: window(first: 105, count: 3)) == .inSync(newSegments: 3))
        #expect(t.startSeconds(ofMediaSequence: 105) == 10)
    }

    @Test func windowJumpedPast_isLostSync_reanchoredAtEnd() {
        var t = SegmentTimeline()
        _ = t.update(with: window(first: 100, count: 5))
        #expect(t.update(with: window(first: 106, count: 3)) == .lostSync(firstMediaSequence: 106, lastKnownMediaSequence: 104))
        #expect(t.startSeconds(ofMediaSequence: 106) == 10)
    }

    @Test func liveStart_holdBackOfThreeTargetDurations() {
        // 10 segments of 2 s: the live edge is at 20 s; 3 × 2 s back is 14 s → segment index 7.
        #expect(LivePlaylistRules.startSegmentIndex(for: window(first: 0, count: 10)) == 7)
        var p = window(first: 0, count: 10)
        p.serverControl = ServerControl(holdBackSeconds: 5)
        // 5 s back from 20 s is 15 s, inside segment index 7 (14–16 s).
        #expect(LivePlaylistRules.startSegmentIndex(for: p) == 7)
        #expect(LivePlaylistRules.startSegmentIndex(for: window(first: 0, count: 2)) == 0)
    }

    /// `#EXT-X-TARGETDURATION:0` (ffmpeg writes it for 0.25 s segments: the RFC's rounding of 0.25):
    /// the rules take the longest segment as the target duration, so the start is 3 × 0.25 s from the
    /// end, an index inside the playlist; `HOLD-BACK=0`: no hold-back, the last segment.
    @Test func liveStart_zeroHoldBack_startsAtTheLastSegment() {
        var quarter = window(first: 6, count: 4, duration: 0.25)
        quarter.targetDurationSeconds = 0
        // The live edge is at 1 s; 0.75 s back is 0.25 s, the start of segment index 1.
        #expect(LivePlaylistRules.startSegmentIndex(for: quarter) == 1)
        var p = window(first: 0, count: 10)
        p.serverControl = ServerControl(holdBackSeconds: 0)
        #expect(LivePlaylistRules.startSegmentIndex(for: p) == 9)
    }

    @Test func reloadCadence_targetDurationAfterChange_halfAfterNoChange() {
        #expect(LivePlaylistRules.reloadDelaySeconds(targetDurationSeconds: 6, playlistChanged: true) == 6)
        #expect(LivePlaylistRules.reloadDelaySeconds(targetDurationSeconds: 6, playlistChanged: false) == 3)
    }

    @Test func vodStart_honoursStartOffset() {
        let p = window(first: 0, count: 10, endList: true)
        #expect(LivePlaylistRules.vodStartSegmentIndex(for: p, start: nil) == 0)
        #expect(LivePlaylistRules.vodStartSegmentIndex(for: p, start: StartPoint(timeOffsetSeconds: 5, precise: false)) == 2)
        #expect(LivePlaylistRules.vodStartSegmentIndex(for: p, start: StartPoint(timeOffsetSeconds: -3, precise: false)) == 8)
        #expect(LivePlaylistRules.vodStartSegmentIndex(for: p, start: StartPoint(timeOffsetSeconds: 99, precise: false)) == 9)
    }

    /// PRECISE=YES starts at the offset itself; otherwise at the start of its segment (2 s segments).
    @Test func vodStartSeconds_preciseAtOffset_otherwiseSegmentStart() {
        let p = window(first: 0, count: 10, endList: true)
        #expect(LivePlaylistRules.vodStartSeconds(for: p, start: nil) == 0)
        #expect(LivePlaylistRules.vodStartSeconds(for: p, start: StartPoint(timeOffsetSeconds: 5, precise: false)) == 4)
        #expect(LivePlaylistRules.vodStartSeconds(for: p, start: StartPoint(timeOffsetSeconds: 5, precise: true)) == 5)
        #expect(LivePlaylistRules.vodStartSeconds(for: p, start: StartPoint(timeOffsetSeconds: -3, precise: true)) == 17)
        #expect(LivePlaylistRules.vodStartSeconds(for: p, start: StartPoint(timeOffsetSeconds: 4, precise: true)) == 4)
        // At or past the end: the last segment's start.
        #expect(LivePlaylistRules.vodStartSeconds(for: p, start: StartPoint(timeOffsetSeconds: 20, precise: true)) == 18)
        #expect(LivePlaylistRules.vodStartSeconds(for: p, start: StartPoint(timeOffsetSeconds: 99, precise: true)) == 18)
    }
    // MARK: how much the timeline keeps (a VOD keeps everything; only live history is bounded)

    /// A VOD of 4,098 segments (two more than the history the timeline once kept): segment 0 stays
    /// on the timeline, so playback can start there.
    @Test func vodLongerThanLiveHistory_keepsFirstSegments() {
        var t = SegmentTimeline()
        _ = t.update(with: window(first: 0, count: 4098, endList: true))
        #expect(t.startSeconds(ofMediaSequence: 0) == 0)
        #expect(t.startSeconds(ofMediaSequence: 1) == 2)
        #expect(t.startSeconds(ofMediaSequence: 4097) == 8194)
    }

    /// 100,000 segments (PlaylistLimits.maxSegments): every one is placed, the last at its prefix sum.
    @Test func vodAtPlaylistSegmentLimit_keepsEverySegment() {
        var t = SegmentTimeline()
        let p = window(first: 7, count: PlaylistLimits.default.maxSegments, duration: 1, endList: true)
        #expect(t.update(with: p) == .initial)
        #expect(t.startSeconds(ofMediaSequence: 7) == 0)
        #expect(t.startSeconds(ofMediaSequence: 50_007) == 50_000)
        #expect(t.startSeconds(ofMediaSequence: 100_006) == 99_999)
        #expect(t.endSeconds == 100_000)
    }

    /// A live EVENT playlist grows without removing segments: whatever the latest reload lists
    /// stays known, however long it has grown.
    @Test func growingEventPlaylist_keepsEveryListedSegment() {
        var t = SegmentTimeline()
        t.retainedHistorySegmentCount = 16
        _ = t.update(with: window(first: 0, count: 10))
        #expect(t.update(with: window(first: 0, count: 5000)) == .inSync(newSegments: 4990))
        #expect(t.startSeconds(ofMediaSequence: 0) == 0)
        #expect(t.startSeconds(ofMediaSequence: 4999) == 9998)
    }

    /// A sliding live window: what the window lists plus `retainedHistorySegmentCount` segments
    /// before it are kept; older history is forgotten, so a long live session's memory is bounded.
    @Test func slidingLiveWindow_historyStaysBounded() {
        var t = SegmentTimeline()
        t.retainedHistorySegmentCount = 16
        for first in stride(from: 0, through: 20_000, by: 3) {
            _ = t.update(with: window(first: first, count: 10))
        }
        // The last window is 19_998...20_007; 16 segments of history before it.
        #expect(t.knownSegmentCount == 10 + 16)
        #expect(t.startSeconds(ofMediaSequence: 19_998 - 16) == 2 * Double(19_998 - 16))
        #expect(t.startSeconds(ofMediaSequence: 19_998 - 17) == nil)
        #expect(t.startSeconds(ofMediaSequence: 20_007) == 40_014)
        #expect(t.startSeconds(ofMediaSequence: 0) == nil)
    }

    // MARK: lookups on the per-segment path (constant or logarithmic time)

    @Test func segmentByNumber_constantTimeOnParsedNumbering() {
        let p = window(first: 1_000, count: 100_000, duration: 1, endList: true)
        #expect(p.segmentIndex(ofMediaSequence: 1_000) == 0)
        #expect(p.segmentIndex(ofMediaSequence: 100_999) == 99_999)
        #expect(p.segment(withMediaSequence: 51_000)?.uri.lastPathComponent == "s51000.ts")
        #expect(p.segmentIndex(ofMediaSequence: 999) == nil)
        #expect(p.segmentIndex(ofMediaSequence: 101_000) == nil)
        #expect(window(first: 0, count: 0).segmentIndex(ofMediaSequence: 0) == nil)
    }

    /// A hand-built playlist whose numbers are not consecutive is still searched correctly.
    @Test func segmentByNumber_nonConsecutiveNumbers_found() {
        var p = window(first: 10, count: 3)
        p.segments[2].mediaSequence = 20
        #expect(p.segmentIndex(ofMediaSequence: 20) == 2)
        #expect(p.segmentIndex(ofMediaSequence: 12) == nil)
    }

    /// Continuing a VOD by time: the first segment that ends after the buffered end (1 ms tolerance).
    @Test func firstSegmentEndingAfter_binarySearch() {
        var t = SegmentTimeline()
        let p = window(first: 5, count: 10, endList: true) // 0–2, 2–4, ..., 18–20
        _ = t.update(with: p)
        #expect(t.firstSegmentIndex(in: p, endingAfter: 0, toleranceSeconds: 0.001) == 0)
        #expect(t.firstSegmentIndex(in: p, endingAfter: 3, toleranceSeconds: 0.001) == 1)
        #expect(t.firstSegmentIndex(in: p, endingAfter: 4, toleranceSeconds: 0.001) == 2)
        #expect(t.firstSegmentIndex(in: p, endingAfter: 3.9995, toleranceSeconds: 0.001) == 2)
        #expect(t.firstSegmentIndex(in: p, endingAfter: 19.9995, toleranceSeconds: 0.001) == nil)
        #expect(t.firstSegmentIndex(in: p, endingAfter: 100, toleranceSeconds: 0.001) == nil)
        #expect(t.firstSegmentIndex(in: window(first: 0, count: 0), endingAfter: 0, toleranceSeconds: 0.001) == nil)
    }

    /// EXT-X-START near the end of a 100,000-segment VOD: the segment, its start, the offset into it.
    @Test func vodStartPosition_nearTheEndOfALongVOD() {
        let p = window(first: 0, count: 100_000, duration: 1, endList: true)
        let imprecise = LivePlaylistRules.vodStartPosition(for: p, start: StartPoint(timeOffsetSeconds: -30.5, precise: false))
        #expect(imprecise.segmentIndex == 99_969)
        #expect(imprecise.segmentStartSeconds == 99_969)
        #expect(imprecise.offsetIntoSegmentSeconds == 0)
        let precise = LivePlaylistRules.vodStartPosition(for: p, start: StartPoint(timeOffsetSeconds: -30.5, precise: true))
        #expect(precise.segmentIndex == 99_969)
        #expect(precise.offsetIntoSegmentSeconds == 0.5)
    }

    /// The default history is the same bound for every live stream, whatever its segment duration.
    @Test func slidingLiveWindow_defaultHistoryBound() {
        var t = SegmentTimeline()
        for first in stride(from: 0, through: 10_000, by: 5) {
            _ = t.update(with: window(first: first, count: 6))
        }
        #expect(t.knownSegmentCount == 6 + SegmentTimeline.defaultRetainedHistorySegmentCount)
    }
}

@Suite struct SummaryBuilderTests {
    @Test func summary_foldsEvents() {
        var b = SummaryBuilder()
        b.record(.requestEnd(RequestEnd(requestID: 1, url: "u", purpose: .segment, status: 200, bytes: 1000, ok: true)))
        b.record(.requestEnd(RequestEnd(requestID: 2, url: "u", purpose: .segment, status: 503, bytes: 10, ok: false)))
        b.record(.retryScheduled(RetryScheduled(requestID: 2, url: "u", attemptsMade: 1, delaySeconds: 0.5, errorKind: .httpStatus)))
        b.record(
            .segmentBuffered(
                SegmentBuffered(
                    variantIndex: 0, bandwidthBps: 1_000_000, mediaSequence: 0, startSeconds: 0, durationSeconds: 2, bytes: 1, videoPackets: 1,
                    audioPackets: 1, corruptPackets: 0, demuxSeconds: 0, bufferedEndSeconds: 2, bufferSeconds: 2)))
        b.record(
            .segmentBuffered(
                SegmentBuffered(
                    variantIndex: 1, bandwidthBps: 3_000_000, mediaSequence: 1, startSeconds: 2, durationSeconds: 2, bytes: 1, videoPackets: 1,
                    audioPackets: 1, corruptPackets: 0, demuxSeconds: 0, bufferedEndSeconds: 4, bufferSeconds: 2)))
        b.record(.stallStart(PlaybackChange(atSeconds: 1, positionSeconds: 1)))
        b.record(.stallEnd(PlaybackChange(atSeconds: 2, positionSeconds: 1, stallSeconds: 0.75)))
        b.record(.variantSwitch(VariantSwitch(fromVariantIndex: 0, toVariantIndex: 1, fromBandwidthBps: 1, toBandwidthBps: 3, atPositionSeconds: 2)))
        let s = b.summary(
            url: "u", isLive: false, exitReason: .completed, error: nil, startPositionSeconds: 0,
            finalPositionSeconds: 3, sessionSeconds: 5, finalEstimateBps: nil)
        #expect(s.requests == 2)
        #expect(s.failedRequests == 1)
        #expect(s.retries == 1)
        #expect(s.bytes == 1010)
        #expect(s.stallCount == 1)
        #expect(s.stallSeconds == 0.75)
        #expect(s.variantSwitches == 1)
        #expect(s.playedSeconds == 3)
        // 2 s at 1 Mbit/s and 1 s at 3 Mbit/s played.
        #expect(abs(s.averageBitrateBps - 5_000_000.0 / 3) < 1e-6)
        #expect(s.lastBitrateBps == 3_000_000)
    }

    @Test func timedEvent_encodesFlatWithTypeAndTime() {
        let line = SessionLogEncoder().line(TimedEvent(seconds: 1.5, event: .stallStart(PlaybackChange(atSeconds: 1.25, positionSeconds: 3))))
        #expect(line == #"{"atSeconds":1.25,"positionSeconds":3,"t":1.5,"type":"stall.start"}"#)
    }
}

@Suite struct AggregateSummaryTests {
    @Test func percentile_nearestRank() {
        let v = (1...10).map(Double.init)
        #expect(AggregateSummary.percentile(v, 50) == 5)
        #expect(AggregateSummary.percentile(v, 90) == 9)
        #expect(AggregateSummary.percentile(v, 91) == 10)
        #expect(AggregateSummary.percentile(v, 100) == 10)
        #expect(AggregateSummary.percentile([], 50) == nil)
        #expect(AggregateSummary.percentile([3], 99) == 3)
    }

    @Test func make_sumsAndCounts() {
        func s(_ ttff: Double?, stalls: Int, reason: ExitReason) -> SessionSummary {
            var b = SummaryBuilder()
            b.record(.requestEnd(RequestEnd(requestID: 1, url: "u", purpose: .segment, status: 200, bytes: 1000, ok: true)))
            if let ttff {
                b.record(
                    .firstFrame(
                        FirstFrame(
                            timeToFirstFrameSeconds: ttff, variantIndex: 0, width: nil, height: nil, ptsSeconds: nil, breakdown: StartupBreakdown())))
            }
            for _ in 0..<stalls { b.record(.stallStart(PlaybackChange(atSeconds: 0, positionSeconds: 0))) }
            return b.summary(
                url: "u", isLive: false, exitReason: reason, error: nil, startPositionSeconds: 0,
                finalPositionSeconds: 4, sessionSeconds: 5, finalEstimateBps: nil)
        }
        let a = AggregateSummary.make(
            from: [s(0.5, stalls: 0, reason: .completed), s(1.5, stalls: 2, reason: .completed), s(nil, stalls: 0, reason: .error)], wallSeconds: 10)
        #expect(a.sessions == 3)
        #expect(a.exitReasons == ["completed": 2, "error": 1])
        #expect(a.timeToFirstFrameP50Seconds == 0.5)
        #expect(a.timeToFirstFrameMaxSeconds == 1.5)
        #expect(a.sessionsWithoutFirstFrame == 1)
        #expect(a.sessionsWithStalls == 1)
        #expect(a.stallCount == 2)
        #expect(a.requests == 3)
        #expect(a.requestsPerSecond == 0.3)
        #expect(a.throughputBps == 3000 * 8 / 10)
    }
}
