import Foundation
import Testing
@testable import HLSCore

/// The request-rate bound (RequestRateRules, RequestRateBound) in virtual time: the limits each kind gets from a
/// playlist's durations, and that a caller asking in a loop is held to them.
@Suite struct RequestRateBoundTests {
    func t(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: 1000 + s) }

    /// kuu's Low-Latency Example 02 (the delta update): PART-TARGET=0.33334, TARGETDURATION 4, 4 s segments.
    static func kuuDeltaUpdate() throws -> MediaPlaylist {
        try media(String(decoding: try Fixtures.data("kuu-hls-parser/examples/Low-Latency_Example-02_Playlist_Delta_Update.m3u8"), as: UTF8.self))
    }

    @Test func playlistsOfAnLLHLSStreamArePacedAtHalfThePartTarget() throws {
        let inputs = RequestRateInputs(playlist: try Self.kuuDeltaUpdate(), forwardBufferTargetSeconds: 30)
        #expect(inputs.partTargetSeconds == 0.33334)
        #expect(inputs.targetDurationSeconds == 4.00008, "the longest EXTINF is above TARGETDURATION 4")
        let limit = RequestRateRules.limit(for: .playlist, inputs: inputs)
        #expect(abs(limit.minimumIntervalSeconds - 0.16667) < 1e-9)
        #expect(limit.burst == RequestRateRules.playlistBurst)
        #expect(limit.basis == "half the part target")
        // 30 s: 4 back to back, then one per 0.16667 s.
        #expect(limit.maximumRequests(inSeconds: 30) == 4 + 179)
        let parts = RequestRateRules.limit(for: .part, inputs: inputs)
        #expect(abs(parts.minimumIntervalSeconds - 0.16667) < 1e-9)
        #expect(parts.burst == Int((30 / 0.33334).rounded(.up)) + RequestRateRules.mediaBurstSlack)
        let segments = RequestRateRules.limit(for: .segment, inputs: inputs)
        #expect(abs(segments.minimumIntervalSeconds - 2.00004) < 1e-9)
        #expect(segments.basis == "half the mean segment duration")
    }

    @Test func playlistsOfAnOrdinaryLiveStreamArePacedAtHalfTheTargetDuration() {
        let inputs = RequestRateInputs(targetDurationSeconds: 6, meanSegmentDurationSeconds: 6, forwardBufferTargetSeconds: 30)
        let limit = RequestRateRules.limit(for: .playlist, inputs: inputs)
        #expect(limit.minimumIntervalSeconds == 3)
        #expect(limit.basis == "half the target duration")
        // Segments: enough to fill the forward-buffer target back to back (5 × 6 s), plus the slack.
        #expect(RequestRateRules.limit(for: .segment, inputs: inputs).burst == 5 + RequestRateRules.mediaBurstSlack)
    }

    @Test func tinyOrZeroDurationsAreHeldAtTheFloor() {
        // EXTINF:0 segments and a PART-TARGET of a millisecond: not 1000 requests a second.
        let inputs = RequestRateInputs(
            targetDurationSeconds: 0.001, partTargetSeconds: 0.001, meanSegmentDurationSeconds: 0,
            forwardBufferTargetSeconds: 30)
        for kind in PacedRequestKind.allCases {
            let limit = RequestRateRules.limit(for: kind, inputs: inputs)
            #expect(limit.minimumIntervalSeconds == RequestRateRules.minimumIntervalFloorSeconds, "\(kind)")
            #expect(limit.burst <= 150 + RequestRateRules.mediaBurstSlack, "\(kind): the burst is counted in units of at least two floors")
        }
    }

    @Test func beforeAnyPlaylistTheIntervalIsTheUnknownDurationOne() {
        let limit = RequestRateRules.limit(for: .playlist, inputs: RequestRateInputs(forwardBufferTargetSeconds: 30))
        #expect(limit.minimumIntervalSeconds == RequestRateRules.unknownDurationIntervalSeconds)
        #expect(limit.basis == "no media playlist yet")
    }

    @Test func aBurstGoesAtOnce_thenOneRequestPerInterval() {
        let limit = RequestRateLimit(
            kind: .playlist, minimumIntervalSeconds: 0.5, burst: 3, basis: "test",
            inputs: RequestRateInputs(forwardBufferTargetSeconds: 30))
        var bound = RequestRateBound()
        // A loop asking at the same instant, starting each request when it is told to.
        var starts: [Double] = []
        for _ in 0..<7 {
            let a = bound.admit(.playlist, limit: limit, at: t(0))
            starts.append(a.startAt.seconds(since: t(0)))
        }
        let expected = [0, 0, 0, 0.5, 1.0, 1.5, 2.0]
        for (got, want) in zip(starts, expected) { #expect(abs(got - want) < 1e-6, "\(starts)") }
    }

    @Test func aLoopAskingAsFastAsItCanIsHeldToTheBound() {
        // The delta-update loop: 30 s of asking back to back, each request taking 1 ms once started.
        let limit = RequestRateRules.limit(for: .playlist, inputs: RequestRateInputs(partTargetSeconds: 0.33334, forwardBufferTargetSeconds: 30))
        var bound = RequestRateBound()
        var now = t(0)
        var sent = 0
        var opened = 0
        while now.seconds(since: t(0)) < 30 {
            let a = bound.admit(.playlist, limit: limit, at: now)
            if a.opened != nil { opened += 1 }
            now = a.startAt.advanced(bySeconds: 0.001)
            if a.startAt.seconds(since: t(0)) < 30 { sent += 1 }
        }
        #expect(sent <= limit.maximumRequests(inSeconds: 30))
        #expect(sent >= limit.maximumRequests(inSeconds: 30) - 1)
        #expect(opened == 1, "one episode, logged once however many requests it holds")
        let closed = bound.finish(at: now)
        #expect(closed.count == 1)
        #expect(closed.first?.action == .released)
        #expect(closed.first?.sessionEnded == true)
        #expect((closed.first?.heldRequests ?? 0) >= sent - limit.burst - 1)
    }

    @Test func requestsAtTheirPacedCadenceAreNeverHeldBack() {
        // A correct LL-HLS client: one reload per part target (the server holds each until the part exists).
        let limit = RequestRateRules.limit(for: .playlist, inputs: RequestRateInputs(partTargetSeconds: 0.5, forwardBufferTargetSeconds: 30))
        var bound = RequestRateBound()
        for k in 0..<200 {
            let a = bound.admit(.playlist, limit: limit, at: t(Double(k) * 0.5))
            #expect(a.waitSeconds == 0)
            #expect(a.opened == nil)
        }
        #expect(bound.finish(at: t(100)).isEmpty)
    }

    @Test func anEpisodeClosesWhenAWholeBurstIsFreeAgain() {
        let limit = RequestRateLimit(
            kind: .segment, minimumIntervalSeconds: 1, burst: 2, basis: "test",
            inputs: RequestRateInputs(forwardBufferTargetSeconds: 30))
        var bound = RequestRateBound()
        _ = bound.admit(.segment, limit: limit, at: t(0))
        _ = bound.admit(.segment, limit: limit, at: t(0))
        let held = bound.admit(.segment, limit: limit, at: t(0))
        #expect(abs(held.waitSeconds - 1) < 1e-6)
        #expect(held.opened?.action == .holding)
        #expect(held.opened?.kind == .segment)
        #expect(held.opened?.waitSeconds.map { abs($0 - 1) < 1e-6 } == true)
        // Another track's schedule is its own.
        #expect(bound.admit(.segment, track: "audio", limit: limit, at: t(0)).waitSeconds == 0)
        // Just before the schedule catches up (t = 3): still under pressure, no release.
        let during = bound.admit(.segment, limit: limit, at: t(2.5))
        #expect(during.closed == nil)
        // Long after: the episode is reported closed, with its totals, when the next request comes.
        let later = bound.admit(.segment, limit: limit, at: t(10))
        #expect(later.waitSeconds == 0)
        let closed = later.closed
        #expect(closed?.action == .released)
        #expect(closed?.heldRequests == 1)
        #expect(closed?.requests == 2, "the held one and the one at 2.5 s")
        #expect(closed?.heldSeconds.map { abs($0 - 1) < 1e-6 } == true)
        #expect(
            closed?.episodeSeconds.map { abs($0 - 4) < 1e-6 } == true,
            "from the first hold (t 0) until the schedule caught up (t 4: one interval per request after the burst)")
        #expect(closed?.sessionEnded == nil)
        #expect(bound.finish(at: t(20)).isEmpty)
    }
}
