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
}

@Suite struct SummaryBuilderTests {
    @Test func summary_foldsEvents() {
        var b = SummaryBuilder()
        b.record(.requestEnd(RequestEnd(requestID: 1, url: "u", purpose: .segment, status: 200, bytes: 1000, ok: true)))
        b.record(.requestEnd(RequestEnd(requestID: 2, url: "u", purpose: .segment, status: 503, bytes: 10, ok: false)))
        b.record(.retryScheduled(RetryScheduled(requestID: 2, url: "u", attemptsMade: 1, delaySeconds: 0.5, errorKind: .httpStatus)))
        b.record(.segmentBuffered(SegmentBuffered(variantIndex: 0, bandwidthBps: 1_000_000, mediaSequence: 0, startSeconds: 0, durationSeconds: 2, bytes: 1, videoPackets: 1, audioPackets: 1, corruptPackets: 0, demuxSeconds: 0, bufferedEndSeconds: 2, bufferSeconds: 2)))
        b.record(.segmentBuffered(SegmentBuffered(variantIndex: 1, bandwidthBps: 3_000_000, mediaSequence: 1, startSeconds: 2, durationSeconds: 2, bytes: 1, videoPackets: 1, audioPackets: 1, corruptPackets: 0, demuxSeconds: 0, bufferedEndSeconds: 4, bufferSeconds: 2)))
        b.record(.stallStart(PlaybackChange(atSeconds: 1, positionSeconds: 1)))
        b.record(.stallEnd(PlaybackChange(atSeconds: 2, positionSeconds: 1, stallSeconds: 0.75)))
        b.record(.variantSwitch(VariantSwitch(fromVariantIndex: 0, toVariantIndex: 1, fromBandwidthBps: 1, toBandwidthBps: 3, atPositionSeconds: 2)))
        let s = b.summary(url: "u", isLive: false, exitReason: .completed, error: nil, startPositionSeconds: 0,
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
                b.record(.firstFrame(FirstFrame(timeToFirstFrameSeconds: ttff, variantIndex: 0, width: nil, height: nil, ptsSeconds: nil, breakdown: StartupBreakdown())))
            }
            for _ in 0..<stalls { b.record(.stallStart(PlaybackChange(atSeconds: 0, positionSeconds: 0))) }
            return b.summary(url: "u", isLive: false, exitReason: reason, error: nil, startPositionSeconds: 0,
                             finalPositionSeconds: 4, sessionSeconds: 5, finalEstimateBps: nil)
        }
        let a = AggregateSummary.make(from: [s(0.5, stalls: 0, reason: .completed), s(1.5, stalls: 2, reason: .completed), s(nil, stalls: 0, reason: .error)], wallSeconds: 10)
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
