import Testing

@testable import HLSCore

/// `DecodeWatch`: the decode lag the predictor reads, a decode hang reported once per episode, and a stream that
/// ended without a frame.
@Suite struct DecodeWatchTests {
    func t(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: s) }

    @Test func lagSinceLastReading_isWhatWasDecodedSinceTheReadingBefore() {
        var w = DecodeWatch()
        w.decoded(busySeconds: 0.02, mediaSeconds: 0.04, at: t(1))
        w.decoded(busySeconds: 0.01, mediaSeconds: 0, at: t(1.1))
        let first = w.lagSinceLastReading()
        #expect(abs(first.busySeconds - 0.03) < 1e-12 && abs(first.mediaSeconds - 0.04) < 1e-12)
        // Nothing decoded since: nothing to read (the ratio is then undefined, not 0).
        let none = w.lagSinceLastReading()
        #expect(none.busySeconds == 0 && none.mediaSeconds == 0)
        #expect(DecodeLag.ratio(decodeSeconds: none.busySeconds, mediaSeconds: none.mediaSeconds) == nil)
        w.decoded(busySeconds: 0.08, mediaSeconds: 0.04, at: t(2))
        let slow = w.lagSinceLastReading()
        #expect(DecodeLag.ratio(decodeSeconds: slow.busySeconds, mediaSeconds: slow.mediaSeconds) == 2)
    }

    @Test func hang_withAPacketDue_reportedOncePerEpisode_untilDecodeMovesAgain() {
        var w = DecodeWatch()
        // Before the first packet nothing can hang.
        let r1 = w.hang(at: t(10), positionSeconds: 5, nextDueSeconds: 4, thresholdSeconds: 2)
        #expect(r1 == nil)
        w.decoded(busySeconds: 0.01, mediaSeconds: 0.04, at: t(10))
        // Idle under the threshold, or nothing due yet, or nothing buffered: no hang.
        let r2 = w.hang(at: t(11.5), positionSeconds: 5, nextDueSeconds: 4, thresholdSeconds: 2)
        #expect(r2 == nil)
        let r3 = w.hang(at: t(13), positionSeconds: 5, nextDueSeconds: 6, thresholdSeconds: 2)
        #expect(r3 == nil)
        let r4 = w.hang(at: t(13), positionSeconds: 5, nextDueSeconds: nil, thresholdSeconds: 2)
        #expect(r4 == nil)
        let r5 = w.hang(at: t(13), positionSeconds: 5, nextDueSeconds: 5, thresholdSeconds: 2)
        #expect(r5 == 3)
        #expect(w.hangReported)
        // The same episode is not reported again.
        let r6 = w.hang(at: t(20), positionSeconds: 5, nextDueSeconds: 5, thresholdSeconds: 2)
        #expect(r6 == nil)
        // Decode moved: a new episode can be.
        w.decoded(busySeconds: 0.01, mediaSeconds: 0.04, at: t(21))
        #expect(!w.hangReported)
        let r7 = w.hang(at: t(23.5), positionSeconds: 6, nextDueSeconds: 6, thresholdSeconds: 2)
        #expect(r7 == 2.5)
    }

    @Test func endedWithoutFrame_afterItsSecondsWithoutABreak() {
        var w = DecodeWatch()
        let r8 = w.endedWithoutFrame(true, at: t(1), afterSeconds: 1)
        #expect(!r8)
        let r9 = w.endedWithoutFrame(true, at: t(1.5), afterSeconds: 1)
        #expect(!r9)
        let r10 = w.endedWithoutFrame(true, at: t(2), afterSeconds: 1)
        #expect(r10)
        // The episode ends when it no longer holds, and starts over.
        let r11 = w.endedWithoutFrame(false, at: t(2.1), afterSeconds: 1)
        #expect(!r11)
        let r12 = w.endedWithoutFrame(true, at: t(2.5), afterSeconds: 1)
        #expect(!r12)
        let r13 = w.endedWithoutFrame(true, at: t(3.5), afterSeconds: 1)
        #expect(r13)
    }
}
