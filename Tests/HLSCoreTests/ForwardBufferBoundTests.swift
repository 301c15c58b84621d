// ForwardBufferRule and ByteBoundEpisodes: the forward buffer bounded in seconds and in bytes
// (`--max-buffer-bytes`), never below the start/resume threshold; the episodes logged and summed.

import Foundation
import Testing
@testable import HLSCore

@Suite struct ForwardBufferBoundTests {
    let mebibyte = 1 << 20
    func bounds(max: Int? = 256 << 20, floor: Double = 4) -> ForwardBufferBounds {
        ForwardBufferBounds(targetSeconds: 30, maxBytes: max, floorSeconds: floor)
    }
    func level(_ seconds: Double, _ bytes: Int, next: Int = 46_000_000) -> ForwardBufferLevel {
        ForwardBufferLevel(bufferSeconds: seconds, bufferedBytes: bytes, expectedSegmentBytes: next)
    }

    @Test func secondsTarget_holdsAtTheTarget() {
        #expect(ForwardBufferRule.gate(level(29.99, 0, next: 0), bounds()) == .load)
        #expect(ForwardBufferRule.gate(level(30, 0, next: 0), bounds()) == .holdSeconds)
    }

    @Test func byteBound_holdsWhenTheNextSegmentWouldNotFit() {
        let bound = 256 << 20
        #expect(ForwardBufferRule.gate(level(10, bound - 46_000_000), bounds()) == .load) // fits exactly
        #expect(ForwardBufferRule.gate(level(10, bound - 46_000_000 + 1), bounds()) == .holdBytes) // one byte over
        #expect(ForwardBufferRule.gate(level(10, bound * 2, next: 0), bounds(max: nil)) == .load) // no byte bound
    }

    @Test func byteBound_neverHoldsBelowTheFloor_norAnEmptyBuffer() {
        // Below the start/resume threshold: load, whatever the bytes (else a stall waits for ever).
        #expect(ForwardBufferRule.gate(level(3.99, 500 * mebibyte), bounds()) == .load)
        #expect(ForwardBufferRule.gate(level(4, 500 * mebibyte), bounds()) == .holdBytes)
        // An empty buffer loads even a segment larger than the bound, even with no floor.
        #expect(ForwardBufferRule.gate(level(0, 0, next: 300 * mebibyte), bounds(floor: 0)) == .load)
        #expect(ForwardBufferRule.gate(level(0, 1, next: 300 * mebibyte), bounds(floor: 0)) == .holdBytes)
    }

    @Test func episodes_oneRecordWhenHoldingStarts_oneWhenItEnds() {
        var episodes = ByteBoundEpisodes()
        let t0 = MonotonicInstant(seconds: 100)
        let held = level(10, 250 * mebibyte)
        #expect(episodes.observe(.load, level: level(5, 0), bounds: bounds(), at: t0) == nil)
        let opened = episodes.observe(.holdBytes, level: held, bounds: bounds(), at: t0)
        #expect(opened?.action == .holding && opened?.level == held && opened?.bounds == bounds())
        #expect(episodes.isHolding)
        #expect(episodes.observe(.holdBytes, level: held, bounds: bounds(), at: t0.advanced(bySeconds: 0.1)) == nil)
        let released = episodes.observe(.load, level: level(9, 200 * mebibyte), bounds: bounds(), at: t0.advanced(bySeconds: 1.5))
        #expect(released?.action == .released && released?.releasedBy == .bytes)
        #expect(abs((released?.heldSeconds ?? 0) - 1.5) < 1e-9)
        #expect(!episodes.isHolding)
        #expect(episodes.finish(at: t0.advanced(bySeconds: 9)) == nil)
    }

    @Test func episodes_sayWhatEndedThem() {
        let t0 = MonotonicInstant(seconds: 100)
        var bySeconds = ByteBoundEpisodes()
        _ = bySeconds.observe(.holdBytes, level: level(10, 250 * mebibyte), bounds: bounds(), at: t0)
        #expect(bySeconds.observe(.holdSeconds, level: level(30, 250 * mebibyte), bounds: bounds(), at: t0)?.releasedBy == .secondsTarget)
        var byFloor = ByteBoundEpisodes()
        _ = byFloor.observe(.holdBytes, level: level(10, 250 * mebibyte), bounds: bounds(), at: t0)
        #expect(byFloor.observe(.load, level: level(3, 250 * mebibyte), bounds: bounds(), at: t0)?.releasedBy == .floor)
        var atEnd = ByteBoundEpisodes()
        let held = level(10, 250 * mebibyte)
        _ = atEnd.observe(.holdBytes, level: held, bounds: bounds(), at: t0)
        let closed = atEnd.finish(at: t0.advanced(bySeconds: 2))
        #expect(closed?.releasedBy == .sessionEnded && closed?.level == held && closed?.heldSeconds == 2)
    }

    @Test func summary_countsEpisodesAndHeldSeconds() {
        var builder = SummaryBuilder()
        let held = level(10, 250 * mebibyte)
        for seconds in [1.5, 2.0] {
            builder.record(.byteBound(ByteBoundRecord(action: .holding, level: held, bounds: bounds())))
            builder.record(.byteBound(ByteBoundRecord(action: .released, level: held, bounds: bounds(), releasedBy: .bytes, heldSeconds: seconds)))
        }
        let summary = builder.summary(
            url: "u", isLive: false, exitReason: .completed, error: nil, startPositionSeconds: 0,
            finalPositionSeconds: 10, sessionSeconds: 10, finalEstimateBps: nil)
        #expect(summary.byteBoundEpisodes == 2 && summary.byteBoundSeconds == 3.5)
        let none = SummaryBuilder().summary(
            url: "u", isLive: false, exitReason: .completed, error: nil, startPositionSeconds: 0,
            finalPositionSeconds: 10, sessionSeconds: 10, finalEstimateBps: nil)
        #expect(none.byteBoundEpisodes == nil && none.byteBoundSeconds == nil)
    }
}
