import Testing
@testable import HLSCore

/// Wedged vs over-selected vs slow-but-healthy, from byte progress. Virtual time only.
@Suite struct ByteProgressClassifierTests {
    let c = ByteProgressClassifier()

    /// A 4 Mbps rung, 6 s segment (3 MB), RTT 100 ms → N = 10×0.1 + 0.5×6 = 4 s.
    func snapshot(
        received: Int = 1_000_000, idle: Double = 0.05, elapsed: Double = 4, throughput: Double? = 1_000_000,
        buffer: Double = 0, rung: Double = 4_000_000, expected: Int? = 3_000_000
    ) -> InFlightSnapshot {
        InFlightSnapshot(
            bytesReceived: received, bytesExpected: expected, secondsSinceLastByte: idle, elapsedSeconds: elapsed,
            rttSeconds: 0.1, segmentDurationSeconds: 6, rungBitrateBps: rung,
            measuredThroughputBps: throughput, forwardBufferSeconds: buffer)
    }

    // MARK: The wedge window formula

    @Test func wedgeWindow_formula_RTTAndSegmentDuration() {
        #expect(c.wedgeWindowSeconds(rttSeconds: 0.1, segmentDurationSeconds: 6) == 4)
        #expect(c.wedgeWindowSeconds(rttSeconds: 0.4, segmentDurationSeconds: 6) == 7)
    }

    @Test func wedgeWindow_clampedToMinimumAndMaximum() {
        #expect(c.wedgeWindowSeconds(rttSeconds: 0.01, segmentDurationSeconds: 2) == 3)
        #expect(c.wedgeWindowSeconds(rttSeconds: 0.5, segmentDurationSeconds: 12) == 10)
    }

    @Test func wedgeWindow_unknownRTT_usesDefault() {
        // 10 × 0.1 (default) + 0.5 × 10 = 6
        #expect(c.wedgeWindowSeconds(rttSeconds: nil, segmentDurationSeconds: 10) == 6)
    }

    // MARK: Wedged

    @Test func idle_justUnderWindow_healthy_atWindow_wedged() {
        #expect(c.classify(snapshot(idle: 3.999, throughput: 4_000_000)).verdict == .healthy)
        let a = c.classify(snapshot(idle: 4, throughput: 4_000_000))
        #expect(a.verdict == .wedged)
        #expect(a.wedgeWindowSeconds == 4)
        #expect(a.idleSeconds == 4)
    }

    @Test func noFirstByte_forTheWindow_wedged() {
        let a = c.classify(snapshot(received: 0, idle: 4, elapsed: 4, throughput: nil))
        #expect(a.verdict == .wedged)
    }

    @Test func complete_isHealthy_evenIfIdle() {
        let a = c.classify(snapshot(received: 3_000_000, idle: 20))
        #expect(a.verdict == .healthy)
        #expect(a.healthyReason == .complete)
    }

    // MARK: Over-selected

    @Test func ratio_justUnderTwo_healthy_atTwo_overSelected() {
        let under = c.classify(snapshot(throughput: 2_000_001))
        #expect(under.verdict == .healthy)
        #expect(under.healthyReason == .ratioBelowThreshold)
        let at = c.classify(snapshot(throughput: 2_000_000))
        #expect(at.verdict == .overSelected)
        #expect(at.overSelectionRatio == 2)
        #expect(at.suggestedCapBps == 1_400_000)
    }

    @Test func idle_justUnderOneSecond_flowing_atOneSecond_goingQuiet_notDownshifted() {
        // A heavy rung whose bytes stopped: on its way to a wedge, which wants a new request, not a lower rung.
        #expect(c.classify(snapshot(idle: 0.999)).verdict == .overSelected)
        let quiet = c.classify(snapshot(idle: 1))
        #expect(quiet.verdict == .healthy)
        #expect(quiet.healthyReason == .goingQuiet)
        #expect(quiet.remedy == .none)
    }

    @Test func elapsed_justUnderHalfSegment_tooEarly_atHalf_judged() {
        let early = c.classify(snapshot(elapsed: 2.999))
        #expect(early.verdict == .healthy)
        #expect(early.healthyReason == .tooEarlyToJudge)
        #expect(c.classify(snapshot(elapsed: 3)).verdict == .overSelected)
    }

    @Test func projectedCompletion_justBeforeBufferRunsOut_healthy_atIt_overSelected() {
        // 2 MB left at 1 Mbps = 16 s.
        let before = c.classify(snapshot(buffer: 16.001))
        #expect(before.verdict == .healthy)
        #expect(before.healthyReason == .finishesBeforeBufferRunsOut)
        #expect(before.projectedRemainingSeconds == 16)
        let at = c.classify(snapshot(buffer: 16))
        #expect(at.verdict == .overSelected)
    }

    @Test func projectedRemaining_justUnderRefetchTime_finish_atIt_abandon() {
        // Refetch at 0.7 × throughput takes 0.7 × 6 s = 4.2 s. At 1 Mbps, 525 000 bytes left = 4.2 s.
        let finish = c.classify(snapshot(received: 3_000_000 - 524_999))
        #expect(finish.verdict == .healthy)
        #expect(finish.healthyReason == .finishingBeatsRefetch)
        let abandon = c.classify(snapshot(received: 3_000_000 - 525_000))
        #expect(abandon.verdict == .overSelected)
        #expect(abandon.remedy == .abandonAndCap(suggestedCapBps: 700_000))
    }

    @Test func remedies() {
        #expect(c.classify(snapshot(idle: 4)).remedy == .reRequestOnFreshConnection)
        #expect(c.classify(snapshot(throughput: 4_000_000)).remedy == ByteProgressRemedy.none)
    }

    @Test func unknownLength_usesRungBitrateTimesDuration() {
        // 4 Mbps × 6 s = 3 MB expected, same as the explicit case.
        #expect(c.classify(snapshot(buffer: 16, expected: nil)).verdict == .overSelected)
        #expect(c.classify(snapshot(buffer: 16.001, expected: nil)).verdict == .healthy)
    }

    @Test func noThroughputMeasure_healthy() {
        let a = c.classify(snapshot(throughput: nil))
        #expect(a.verdict == .healthy)
        #expect(a.healthyReason == .noThroughputMeasure)
    }

    /// The seed's example: a 4K rung (33.8 Mbps) over a 2 Mbps link ≈ 17× over-selected.
    @Test func cold4KOverSelect_on2Mbps_overSelected_capSuggestedBelowLink() {
        // 3 s in at 2 Mbps: 750 KB of a 25.35 MB segment.
        let s = InFlightSnapshot(
            bytesReceived: 750_000, bytesExpected: nil, secondsSinceLastByte: 0.02, elapsedSeconds: 3.1,
            rttSeconds: 0.04, segmentDurationSeconds: 6, rungBitrateBps: 33_808_000,
            measuredThroughputBps: 2_000_000, forwardBufferSeconds: 0)
        let a = c.classify(s)
        #expect(a.verdict == .overSelected)
        #expect(abs(a.overSelectionRatio! - 16.904) < 0.001)
        #expect(a.suggestedCapBps == 1_400_000)
    }

    /// The seed's must-not-fire case, in virtual time: a 2 Mbps link, 6 s
    /// segments, a ~1.5 Mbps rung segment (1.1 MB) that takes 4.5–7 s, at
    /// startup (empty buffer), with a loss-recovery pause of up to 2 s. The
    /// monitor checks every 250 ms; no check may say wedged or over-selected.
    @Test(arguments: [4.5, 5.0, 6.0, 7.0])
    func slowHealthyStart_2Mbps_6sSegments_neverFlagged(transferSeconds: Double) {
        let segmentBytes = 1_125_000 // 1.5 Mbps × 6 s ÷ 8
        let firstByte = 0.15
        let pauseStart = 2.0, pauseLength = transferSeconds >= 6 ? 2.0 : 0.0
        let bodySeconds = transferSeconds - firstByte - pauseLength
        let rate = Double(segmentBytes) / bodySeconds // bytes/s while flowing
        var t = 0.25
        while t <= transferSeconds + 0.001 {
            // Body time elapsed, excluding the first-byte wait and the pause.
            let sinceFirstByte = max(0, t - firstByte)
            let flowing = sinceFirstByte < pauseStart ? sinceFirstByte : max(pauseStart, sinceFirstByte - pauseLength)
            let received = min(segmentBytes, Int(rate * flowing))
            let inPause = sinceFirstByte >= pauseStart && sinceFirstByte < pauseStart + pauseLength
            let idle = t < firstByte ? t : (inPause ? sinceFirstByte - pauseStart : 0.01)
            let throughput = sinceFirstByte > 0 && received > 0 ? Double(received) * 8 / sinceFirstByte : nil
            let s = InFlightSnapshot(
                bytesReceived: received, bytesExpected: segmentBytes, secondsSinceLastByte: idle,
                elapsedSeconds: t, rttSeconds: 0.05, segmentDurationSeconds: 6, rungBitrateBps: 1_500_000,
                measuredThroughputBps: throughput, forwardBufferSeconds: 0)
            let a = c.classify(s)
            #expect(a.verdict == .healthy, "t=\(t) transfer=\(transferSeconds) → \(a)")
            t += 0.25
        }
    }

    @Test func record_encodes() {
        let s = snapshot(idle: 4)
        let line = SessionLogEncoder().line(ByteProgressRecord(requestID: 3, snapshot: s, assessment: c.classify(s)))
        #expect(line.contains("\"verdict\":\"wedged\""))
        #expect(line.contains("\"wedgeWindowSeconds\":4"))
    }
}
