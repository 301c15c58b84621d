import Testing
@testable import HLSCore

/// A body that trickles, judged by its projected completion against the buffer, the startup budget
/// and the patience bound. Virtual time only.
@Suite struct TrickleClassifierTests {
    let c = TrickleClassifier()

    /// A 6 s segment on a 1.27 Mbit/s rung, 10 MB expected (a VBR spike), at 1 Mbit/s: judged at 4 s into
    /// the request (wedge window 3.5 s), starting up (waited = elapsed), nothing lower by default.
    func snapshot(
        received: Int = 250_000, expected: Int? = 10_000_000, rung: Double? = 1_270_000, duration: Double = 6,
        elapsed: Double = 4, idle: Double = 0.1, average: Double? = 1_000_000, recent: Double? = nil,
        buffer: Double = 0, waited: Double? = nil, lower: Bool = false, reRequests: Int = 0
    ) -> TrickleSnapshot {
        TrickleSnapshot(
            bytesReceived: received, bytesExpected: expected, rungBitrateBps: rung, segmentDurationSeconds: duration,
            elapsedSeconds: elapsed, secondsSinceLastByte: idle, averageRateBps: average, recentRateBps: recent,
            rateWindowSeconds: 7, forwardBufferSeconds: buffer, waitedSeconds: waited ?? (buffer > 0 ? 0 : elapsed),
            lowerRungAvailable: lower, reRequestsSoFar: reRequests, wedgeWindowSeconds: 3.5)
    }

    /// `received` such that the rest of the 10 MB body takes exactly `seconds` at 1 Mbit/s (125 000 B/s).
    func received(leaving seconds: Double) -> Int { 10_000_000 - Int((seconds * 125_000).rounded()) }

    // MARK: Budgets

    @Test func budgets_formulas() {
        #expect(c.startupBudgetSeconds(segmentDurationSeconds: 6) == 18)
        #expect(c.startupBudgetSeconds(segmentDurationSeconds: 2) == 10, "floor")
        #expect(c.startupBudgetSeconds(segmentDurationSeconds: 0) == 10, "a playlist")
        #expect(c.patienceSeconds(segmentDurationSeconds: 6) == 30, "floor")
        #expect(c.patienceSeconds(segmentDurationSeconds: 10) == 50)
        #expect(c.rateWindowSeconds(wedgeWindowSeconds: 3.5) == 7)
    }

    // MARK: Within budget / over budget (abandon for a lower rung)

    @Test func startingUp_remainingJustUnderBudget_healthy_atBudget_abandonLower() {
        // Budget 18 s − waited 4 s = 14 s affordable.
        let under = c.classify(snapshot(received: received(leaving: 13.999), lower: true))
        #expect(under.verdict == .healthy)
        #expect(under.reason == .withinBudget)
        #expect(under.affordableRemainingSeconds == 14)
        let at = c.classify(snapshot(received: received(leaving: 14), lower: true))
        #expect(at.verdict == .abandonLower)
        #expect(at.reason == .overBudget)
        #expect(at.projectedRemainingSeconds == 14)
        #expect(at.projectedCompletionSeconds == 18)
        #expect(at.rateBps == 1_000_000)
        #expect(at.rateSource == "average")
    }

    @Test func playing_bufferAddsToTheBudget_andNothingIsWaited() {
        // Playing with 5 s buffered: affordable = 5 + 18 − 0 = 23 s.
        #expect(c.classify(snapshot(received: received(leaving: 22.999), buffer: 5, lower: true)).verdict == .healthy)
        let at = c.classify(snapshot(received: received(leaving: 23), buffer: 5, lower: true))
        #expect(at.verdict == .abandonLower)
        #expect(at.affordableRemainingSeconds == 23)
        #expect(at.waitedSeconds == 0)
    }

    // MARK: Nothing lower: patience, re-request, fail

    @Test func nothingLower_overBudget_justUnderPatience_waits_atPatience_reRequests() {
        // Patience 30 s − waited 4 s = 26 s.
        let waiting = c.classify(snapshot(received: received(leaving: 25.999)))
        #expect(waiting.verdict == .healthy)
        #expect(waiting.reason == .overBudgetWithinPatience)
        let at = c.classify(snapshot(received: received(leaving: 26)))
        #expect(at.verdict == .reRequest)
        #expect(at.reason == .overPatience)
        #expect(at.patientRemainingSeconds == 26)
    }

    @Test func nothingLower_reRequestsJustUnderTheLimit_reRequest_atTheLimit_fail() {
        #expect(c.maximumReRequests == 1)
        #expect(c.classify(snapshot(received: 1_000, reRequests: 0)).verdict == .reRequest)
        let failed = c.classify(snapshot(received: 1_000, reRequests: 1))
        #expect(failed.verdict == .fail)
        #expect(failed.summary.contains("projected completion"), "\(failed.summary)")
        #expect(failed.summary.contains("patience 30.0 s"), "\(failed.summary)")
    }

    @Test func trickle188BytesPerHalfSecond_singleRungAtStartup_reRequested() {
        // 2 s segment of 150 kB, 188 B every 0.5 s (3 kbit/s): 7 pieces in by 3.25 s.
        let a = c.classify(
            TrickleSnapshot(
                bytesReceived: 1_316, bytesExpected: 150_588, rungBitrateBps: 621_152,
                segmentDurationSeconds: 2, elapsedSeconds: 3.25, secondsSinceLastByte: 0.25,
                averageRateBps: 3_250, recentRateBps: nil, rateWindowSeconds: 6, forwardBufferSeconds: 0,
                waitedSeconds: 3.25, lowerRungAvailable: false, reRequestsSoFar: 0, wedgeWindowSeconds: 3))
        #expect(a.verdict == .reRequest)
        #expect((a.projectedCompletionSeconds ?? 0) > 300)
        #expect(a.startupBudgetSeconds == 10 && a.patienceSeconds == 30)
    }

    // MARK: When it judges

    @Test func elapsed_justUnderJudgingAge_tooEarly_atIt_judged() {
        // Judged from max(wedge window 3.5 s, half of 6 s) = 3.5 s.
        let early = c.classify(snapshot(received: 1_000, elapsed: 3.499))
        #expect(early.verdict == .healthy)
        #expect(early.reason == .tooEarlyToJudge)
        #expect(c.classify(snapshot(received: 1_000, elapsed: 3.5)).verdict == .reRequest)
        // Long segments: half a segment. 20 s segment → 10 s.
        #expect(c.classify(snapshot(received: 1_000, duration: 20, elapsed: 9.999)).reason == .tooEarlyToJudge)
    }

    @Test func idle_justUnderOneSecond_judged_atOneSecond_goingQuiet_leftToTheWedgeRule() {
        #expect(c.classify(snapshot(received: 1_000, idle: 0.999)).verdict == .reRequest)
        let quiet = c.classify(snapshot(received: 1_000, idle: 1))
        #expect(quiet.verdict == .healthy)
        #expect(quiet.reason == .goingQuiet)
    }

    @Test func complete_isHealthy() {
        let a = c.classify(snapshot(received: 10_000_000, idle: 5))
        #expect(a.verdict == .healthy)
        #expect(a.reason == .complete)
    }

    @Test func noRate_isHealthy() {
        #expect(c.classify(snapshot(received: 1_000, average: nil)).reason == .noRateMeasure)
    }

    // MARK: The projection

    @Test func recentRate_preferredOverTheAverage_soABurstThenATrickleIsSeen() {
        // 9.9 MB arrived fast, then a trickle: the average (1 Mbit/s) says 0.8 s left, the recent rate 3 kbit/s says 270 s.
        let a = c.classify(snapshot(received: 9_900_000, average: 1_000_000, recent: 3_000))
        #expect(a.rateSource == "recent")
        #expect(a.rateBps == 3_000)
        #expect(a.verdict == .reRequest)
        #expect(c.classify(snapshot(received: 9_900_000, average: 1_000_000, recent: nil)).verdict == .healthy)
    }

    @Test func expectedBytes_contentLength_elseRungBitrateTimesDuration() {
        let fromLength = c.classify(snapshot())
        #expect(fromLength.expectedSource == "content-length")
        #expect(fromLength.expectedBytes == 10_000_000)
        let fromRung = c.classify(snapshot(expected: nil))
        #expect(fromRung.expectedSource == "rung-bitrate")
        #expect(fromRung.expectedBytes == 952_500)
    }

    @Test func noSizeEstimate_waitedJustUnderPatience_healthy_atPatience_reRequest() {
        // A playlist without Content-Length: nothing to project, only the time waited.
        let under = c.classify(snapshot(expected: nil, rung: nil, duration: 0, elapsed: 29.999))
        #expect(under.verdict == .healthy)
        #expect(under.reason == .noSizeEstimate)
        let at = c.classify(snapshot(expected: nil, rung: nil, duration: 0, elapsed: 30))
        #expect(at.verdict == .reRequest)
        #expect(at.reason == .overPatience)
    }

    // MARK: Slow but healthy (seed 001): never flagged

    /// Replays one transfer tick by tick (0.25 s, as the monitor) with the rate window the runtime
    /// keeps, and returns every verdict that was not healthy.
    func replay(
        bytesAt: (Double) -> Int, total: Int, seconds: Double, duration: Double, rung: Double,
        wedgeWindow: Double, lower: Bool, firstByteAt: Double = 0.05
    ) -> [(Double, TrickleAssessment)] {
        var window = ByteRateWindow()
        var fired: [(Double, TrickleAssessment)] = []
        let rateWindow = c.rateWindowSeconds(wedgeWindowSeconds: wedgeWindow)
        var lastBytes = 0
        var lastByteAt = 0.0
        var t = 0.25
        while t <= seconds {
            let bytes = min(total, bytesAt(t))
            if bytes > lastBytes { lastByteAt = t; lastBytes = bytes }
            let now = MonotonicInstant(seconds: 100 + t)
            window.add(bytes: bytes, at: now, keepSeconds: rateWindow)
            let sinceFirst = t - firstByteAt
            let s = TrickleSnapshot(
                bytesReceived: bytes, bytesExpected: total, rungBitrateBps: rung, segmentDurationSeconds: duration,
                elapsedSeconds: t, secondsSinceLastByte: t - lastByteAt,
                averageRateBps: bytes > 0 && sinceFirst > 0 ? Double(bytes) * 8 / sinceFirst : nil,
                recentRateBps: window.rateBps(windowSeconds: rateWindow), rateWindowSeconds: rateWindow,
                forwardBufferSeconds: 0, waitedSeconds: t, lowerRungAvailable: lower, reRequestsSoFar: 0,
                wedgeWindowSeconds: wedgeWindow)
            let a = c.classify(s)
            if a.verdict != .healthy || a.reason == .overBudgetWithinPatience { fired.append((t, a)) }
            t += 0.25
        }
        return fired
    }

    @Test(arguments: [true, false])
    func slowButHealthyStart_2Mbit_6sSegments_withA2sLossPause_neverFlagged(lowerRungAvailable: Bool) {
        // The seed's case: a 1.5 Mbit/s rung's 6 s segment (1.125 MB) over a 2 Mbit/s link (250 kB/s), with
        // the slowest legitimate fetch: a 2 s loss pause after 300 kB → 6.5 s. Empty buffer, starting up.
        let total = 1_125_000
        let bytes: (Double) -> Int = { t in
            let flowing = t < 1.2 ? t : (t < 3.2 ? 1.2 : t - 2)
            return Int(flowing * 250_000)
        }
        let fired = replay(bytesAt: bytes, total: total, seconds: 7.5, duration: 6, rung: 1_500_000, wedgeWindow: 3.5, lower: lowerRungAvailable)
        #expect(fired.isEmpty, "\(fired.map { "\($0.0) s: \($0.1.verdict) \($0.1.reason)" })")
    }

    @Test func slowButHealthyStart_7point2Seconds_atHalfTheLinkRate_neverFlagged() {
        // The seed's upper bound, 7.2 s for a 6 s segment: the link at 1.25 Mbit/s for the whole 1.125 MB.
        let fired = replay(
            bytesAt: { Int($0 * 156_250) }, total: 1_125_000, seconds: 7.5, duration: 6, rung: 1_500_000,
            wedgeWindow: 3.5, lower: true)
        #expect(fired.isEmpty, "\(fired.map { "\($0.0) s: \($0.1.verdict) \($0.1.reason)" })")
    }

    @Test func trickle188BytesPerHalfSecond_judgedAsSoonAsTheWedgeWindowHasPassed() throws {
        // The same replay on a trickle: the first tick at the wedge window (3 s) re-requests it.
        let fired = replay(
            bytesAt: { t in 188 * (Int(t / 0.5) + 1) }, total: 150_588, seconds: 10, duration: 2, rung: 621_152,
            wedgeWindow: 3, lower: false)
        let first = try #require(fired.first)
        #expect(first.0 == 3)
        #expect(first.1.verdict == .reRequest)
    }
}

@Suite struct ByteRateWindowTests {
    func at(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: 10 + s) }

    @Test func youngerThanTheWindow_noRate() {
        var w = ByteRateWindow()
        w.add(bytes: 0, at: at(0), keepSeconds: 4)
        w.add(bytes: 1_000, at: at(3.999), keepSeconds: 4)
        #expect(w.rateBps(windowSeconds: 4) == nil)
        w.add(bytes: 2_000, at: at(4), keepSeconds: 4)
        #expect(w.rateBps(windowSeconds: 4) == 4_000)
    }

    @Test func rate_overTheLastWindow_notSinceTheStart() {
        var w = ByteRateWindow()
        // 1 MB in the first second, then 188 B every 0.5 s.
        w.add(bytes: 0, at: at(0), keepSeconds: 2)
        w.add(bytes: 1_000_000, at: at(1), keepSeconds: 2)
        var bytes = 1_000_000
        for k in 1...10 {
            bytes += 188
            w.add(bytes: bytes, at: at(1 + Double(k) * 0.5), keepSeconds: 2)
        }
        // Over the last 2 s (4 pieces): 752 B × 8 / 2 s.
        #expect(w.rateBps(windowSeconds: 2) == 3_008)
    }
}
