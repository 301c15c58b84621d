// BOLA and BOLA-E from the papers: the textbook thresholds, the switching structure, and each BOLA-E
// addition acting alone.

import HLSCore
import Testing

@Suite struct BolaTests {
    /// The 5-rung ladder of the ABR evaluation (average bitrates), bits per second.
    static let ladderBps: [Double] = [470_000, 1_060_000, 3_000_000, 5_900_000, 16_500_000]

    @Test func textbookCase_threeRungs18sBuffer_switchesAt5And10Seconds() {
        // 1000 / 2500 / 5000 kbit/s, an 18 s buffer, the bottom rung kept to 5 s: the published figure's
        // thresholds are 5 s and 10 s of buffer.
        let p = BolaParameters(bitratesBps: [1_000_000, 2_500_000, 5_000_000], minimumBufferSeconds: 5, bufferTargetSeconds: 18)
        #expect(abs(p.switchBufferSeconds(from: 0) - 5) < 1e-9)
        #expect(abs(p.switchBufferSeconds(from: 1) - 10) < 0.25, "second threshold \(p.switchBufferSeconds(from: 1))")
        #expect(abs(p.fullBufferSeconds(forRung: 2) - 18) < 1e-9)
        #expect(p.rung(bufferSeconds: 0) == 0)
        #expect(p.rung(bufferSeconds: 4.9) == 0)
        #expect(p.rung(bufferSeconds: 5.1) == 1)
        #expect(p.rung(bufferSeconds: 9.7) == 1)
        #expect(p.rung(bufferSeconds: 10.2) == 2)
        #expect(p.rung(bufferSeconds: 17.9) == 2)
    }

    @Test func choice_risesWithTheBuffer_andFlipsExactlyAtEachThreshold() {
        let p = BolaParameters(bitratesBps: Self.ladderBps, minimumBufferSeconds: 10, bufferTargetSeconds: 30)
        var previous = 0
        for tenth in 0...300 {
            let r = p.rung(bufferSeconds: Double(tenth) / 10)
            #expect(r >= previous, "not monotone at \(Double(tenth) / 10) s")
            previous = r
        }
        #expect(previous == Self.ladderBps.count - 1)
        for m in 0..<(Self.ladderBps.count - 1) {
            let q = p.switchBufferSeconds(from: m)
            #expect(p.rung(bufferSeconds: q - 1e-6) == m && p.rung(bufferSeconds: q + 1e-6) == m + 1, "threshold \(m)→\(m + 1) at \(q)")
        }
        #expect(abs(p.switchBufferSeconds(from: 0) - 10) < 1e-9 && abs(p.fullBufferSeconds(forRung: 4) - 30) < 1e-9)
    }

    @Test func oneRung_alwaysIt() {
        let p = BolaParameters(bitratesBps: [800_000], minimumBufferSeconds: 10, bufferTargetSeconds: 30)
        #expect(p.rung(bufferSeconds: 0) == 0 && p.rung(bufferSeconds: 50) == 0)
        #expect(p.fullBufferSeconds(forRung: 0) == 30)
    }

    @Test func throughputRule_highestRungUnderTheSafeFraction() {
        #expect(ThroughputRule.rung(bitratesBps: Self.ladderBps, throughputBps: 4_000_000) == 2) // 3.0 ≤ 3.6
        #expect(ThroughputRule.rung(bitratesBps: Self.ladderBps, throughputBps: 3_200_000) == 1) // 3.0 > 2.88
        #expect(ThroughputRule.rung(bitratesBps: Self.ladderBps, throughputBps: 100_000) == 0)
        #expect(ThroughputRule.rung(bitratesBps: Self.ladderBps, throughputBps: 100_000_000) == 4)
    }

    @Test func placeholder_startsWhereThroughputAllows_notAtTheBottom() {
        var bola = BolaE(bitratesBps: Self.ladderBps, segmentDurationSeconds: 2)
        let first = bola.decide(bufferSeconds: 0, throughputBps: 4_000_000)
        #expect(first.rung == 2 && first.reason == .startup)
        #expect(abs(bola.placeholderSeconds - bola.parameters.minimumBufferSeconds(forRung: 2)) < 1e-9)
        // Two seconds of real buffer: plain BOLA would take the bottom rung; with the placeholder it keeps rung 2.
        #expect(bola.parameters.rung(bufferSeconds: 2) == 0)
        let second = bola.decide(bufferSeconds: 2, throughputBps: 10_000_000)
        #expect(second.rung == 2 && second.reason == .bola)
    }

    @Test func insufficientBuffer_capsWhatCannotDownloadInHalfTheBuffer() {
        var bola = BolaE(bitratesBps: Self.ladderBps, segmentDurationSeconds: 2)
        _ = bola.decide(bufferSeconds: 0, throughputBps: 20_000_000) // startup on the top rung, placeholder high
        // 1 s of buffer at 4 Mbit/s: a 2 s segment must fit 0.5 s of download, 1 Mbit/s: the bottom rung.
        let d = bola.decide(bufferSeconds: 1, throughputBps: 4_000_000)
        #expect(d.rung == 0 && d.reason == .insufficientBuffer)
        // 8 s at 4 Mbit/s: 8 Mbit/s affordable, so the rule allows up to 5.9 Mbit/s.
        var deep = BolaE(bitratesBps: Self.ladderBps, segmentDurationSeconds: 2)
        _ = deep.decide(bufferSeconds: 0, throughputBps: 20_000_000)
        let deepDecision = deep.decide(bufferSeconds: 8, throughputBps: 4_000_000)
        #expect(deepDecision.rung <= 3)
    }

    @Test func oscillationGuard_noUpSwitchPastThroughputAndTheLastRung() {
        var bola = BolaE(bitratesBps: Self.ladderBps, segmentDurationSeconds: 2)
        _ = bola.decide(bufferSeconds: 0, throughputBps: 1_500_000) // rung 1
        // 28 s of buffer: BOLA alone says the top rung; the throughput rule says rung 2 (4 Mbit/s × 0.9 ≥ 3.0).
        #expect(bola.parameters.rung(bufferSeconds: 28 + bola.placeholderSeconds) == 4)
        let d = bola.decide(bufferSeconds: 28, throughputBps: 4_000_000)
        #expect(d.rung == 2 && d.reason == .oscillationGuard)
    }

    @Test func idleTime_raisesThePlaceholder_aStallDropsIt_andAFullBufferWaits() {
        var bola = BolaE(bitratesBps: Self.ladderBps, segmentDurationSeconds: 2)
        _ = bola.decide(bufferSeconds: 0, throughputBps: 100_000)
        #expect(bola.placeholderSeconds == 0)
        bola.idled(seconds: 3)
        #expect(bola.placeholderSeconds == 3)
        bola.stalled()
        #expect(bola.placeholderSeconds == 0)
        // 35 s of real buffer on the top rung: 5 s above its full level (30 s), so wait 5 s.
        let d = bola.decide(bufferSeconds: 35, throughputBps: 100_000_000)
        #expect(d.rung == 4 && abs(d.waitSeconds - 5) < 1e-9, "\(d)")
        // With a placeholder, the placeholder is spent before any wait.
        bola.idled(seconds: 2)
        let e = bola.decide(bufferSeconds: 31, throughputBps: 100_000_000)
        #expect(abs(e.waitSeconds - 1) < 1e-9 && bola.placeholderSeconds == 0, "\(e)")
    }

    @Test func abandonment_lowerRungWhenMostOfATopSegmentIsToComeOnALowBuffer() {
        var bola = BolaE(bitratesBps: Self.ladderBps, segmentDurationSeconds: 2)
        _ = bola.decide(bufferSeconds: 0, throughputBps: 100_000) // bottom rung, no placeholder
        let topSegmentBits = Self.ladderBps[4] * 2
        // 3 s of buffer, 95 % of a top-rung segment to come: a whole lower segment is the better use.
        let lower = bola.abandonment(rung: 4, remainingBits: topSegmentBits * 0.95, bufferSeconds: 3)
        #expect(lower != nil && lower! < 4)
        // The last 2 % of it: finish.
        #expect(bola.abandonment(rung: 4, remainingBits: topSegmentBits * 0.02, bufferSeconds: 25) == nil)
        #expect(bola.abandonment(rung: 0, remainingBits: 1_000_000, bufferSeconds: 0) == nil)
    }

    @Test func dynamic_throughputWhileLow_bolaWhenDeep_withHysteresis() {
        var rule = DynamicRule()
        let steps: [(Double, Bool)] = [(0, false), (9.9, false), (10, true), (6, true), (4.9, false), (8, false)]
        for (buffer, expected) in steps {
            // Stays on BOLA above the lower threshold, on throughput below the upper one.
            let used = rule.useBola(bufferSeconds: buffer)
            #expect(used == expected, "at \(buffer) s")
        }
    }
}

/// BOLA-E's abandonment as the sessions use it (`BolaE.abandonment(rung:bytesLoaded:…)`): the objective's edge,
/// and each guard that lets a request run.
@Suite struct BolaAbandonmentTests {
    static let ladderBps = BolaTests.ladderBps
    /// A 2 s top-rung (16.5 Mbit/s) segment, bytes.
    static let topBytes = Int(16_500_000 * 2 / 8)
    static let durationSeconds = 2.0

    /// A BOLA-E past its startup decision (the abandonment's BOLA criterion applies, not the startup one).
    static func steady() -> BolaE {
        var bola = BolaE(bitratesBps: ladderBps, segmentDurationSeconds: durationSeconds)
        _ = bola.decide(bufferSeconds: 0, throughputBps: 100_000_000)
        _ = bola.decide(bufferSeconds: 20, throughputBps: 100_000_000)
        return bola
    }

    /// The top rung's request `loaded` bytes in at `rateBps` since its first byte (0.05 s after the request).
    static func judge(_ bola: BolaE, loaded: Int, rateBps: Double, bufferSeconds: Double) -> BolaAbandonment {
        bola.abandonment(
            rung: 4, bytesLoaded: loaded, bytesTotal: topBytes, sinceFirstByteSeconds: Double(loaded) * 8 / rateBps,
            firstByteSeconds: 0.05, bufferSeconds: bufferSeconds, segmentDurationSeconds: durationSeconds)!
    }

    @Test func firesExactlyAtTheObjectivesEdge_notBefore() throws {
        // 10 s of buffer (+ the 10 s placeholder: under the 30 s target), enough that the rest always arrives
        // within half of it at 8 Mbit/s: only BOLA's objective decides. Continuing is worth (V(v_4 + γp) − Q) / R for the R bytes
        // still to come after the 0.2 s first-byte wait of a new request; a whole lower segment i (smaller than R)
        // (V(v_i + γp) − Q) / S_i. Abandon exactly when some i beats it.
        let bola = Self.steady()
        let p = bola.parameters
        let rate = 8_000_000.0
        let buffer = 10.0
        let q = buffer + bola.placeholderSeconds - 0.2
        func expectedToAbandon(loaded: Int) -> Bool {
            let r = Double(Self.topBytes - loaded) - 0.2 * 0.9 * rate / 8
            // Less than a bottom-rung segment to come: never worth a new request (the first guard).
            guard r > Double(Self.topBytes) * Self.ladderBps[0] / Self.ladderBps[4] else { return false }
            let continuing = p.objective(rung: 4, bufferSeconds: q, sizeBits: r * 8)
            return (0..<4).contains { i in
                let size = Double(Self.topBytes) * Self.ladderBps[i] / Self.ladderBps[4]
                return (i == 0 || size < r) && p.objective(rung: i, bufferSeconds: q, sizeBits: size * 8) > continuing
            }
        }
        // The edge: the most bytes loaded at which the paper's comparison still abandons.
        let minimumLoaded = Int(0.5 * rate / 8) + 1 // past the grace period
        let edge = try #require((minimumLoaded..<Self.topBytes).last { expectedToAbandon(loaded: $0) }, "an edge inside the segment")
        #expect(edge > minimumLoaded + 1000, "the edge is not at the grace period's end")
        let at = Self.judge(bola, loaded: edge, rateBps: rate, bufferSeconds: buffer)
        #expect(at.abandons && at.reason == .bola, "\(at)")
        #expect((at.chosenRung ?? 4) < 4)
        let past = Self.judge(bola, loaded: edge + 1, rateBps: rate, bufferSeconds: buffer)
        #expect(!past.abandons && past.reason == .bolaPrefersContinuing, "one byte further on, the rest is worth finishing: \(past)")
        // And on either side, it agrees with the comparison.
        for loaded in stride(from: minimumLoaded, to: Self.topBytes - 1, by: 50_000) {
            #expect(Self.judge(bola, loaded: loaded, rateBps: rate, bufferSeconds: buffer).abandons == expectedToAbandon(loaded: loaded), "\(loaded)")
        }
    }

    @Test func notWhileTheBufferIsAboveTheTarget() {
        let bola = Self.steady()
        // 1 Mbit/s on a 16.5 Mbit/s segment, a fifth in: abandoned on a 12 s buffer, not on a 30.5 s one.
        let low = Self.judge(bola, loaded: Self.topBytes / 5, rateBps: 1_000_000, bufferSeconds: 12)
        #expect(low.abandons, "\(low)")
        let ample = Self.judge(bola, loaded: Self.topBytes / 5, rateBps: 1_000_000, bufferSeconds: 30.5)
        #expect(!ample.abandons && ample.reason == .bufferAmple, "\(ample)")
    }

    @Test func notInTheGracePeriod_norWhenTheSegmentArrivesWithinItsDuration() {
        let bola = Self.steady()
        // 1 Mbit/s: 0.4 s after the first byte is too early to judge; 0.6 s is not.
        let early = Self.judge(bola, loaded: 50_000, rateBps: 1_000_000, bufferSeconds: 12)
        #expect(!early.abandons && early.reason == .gracePeriod, "\(early)")
        #expect(Self.judge(bola, loaded: 75_000, rateBps: 1_000_000, bufferSeconds: 12).abandons)
        // 20 Mbit/s: 0.2 + 33 Mbit / 18 Mbit/s ≈ 2.03 s > 2 s, judged; 25 Mbit/s: ≈ 1.67 s, let run.
        let fast = Self.judge(bola, loaded: 2_000_000, rateBps: 25_000_000, bufferSeconds: 3)
        #expect(!fast.abandons && fast.reason == .arrivesWithinSegmentDuration, "\(fast)")
        let slower = Self.judge(bola, loaded: 2_000_000, rateBps: 20_000_000, bufferSeconds: 3)
        #expect(slower.reason != .arrivesWithinSegmentDuration && slower.reason != .gracePeriod, "\(slower)")
    }

    @Test func notWhenLessThanABottomSegmentIsLeft_norOnTheBottomRung() {
        let bola = Self.steady()
        let bottomBytes = Double(Self.topBytes) * Self.ladderBps[0] / Self.ladderBps[4]
        let end = Self.judge(bola, loaded: Self.topBytes - Int(bottomBytes) + 10, rateBps: 500_000, bufferSeconds: 3)
        #expect(!end.abandons && end.reason == .remainderBelowBottomSegment, "\(end)")
        #expect(
            bola.abandonment(
                rung: 0, bytesLoaded: 1000, bytesTotal: 100_000, sinceFirstByteSeconds: 5, firstByteSeconds: 0.1, bufferSeconds: 1,
                segmentDurationSeconds: 2) == nil)
        #expect(
            bola.abandonment(
                rung: 4, bytesLoaded: 0, bytesTotal: 100_000, sinceFirstByteSeconds: 5, firstByteSeconds: 0.1, bufferSeconds: 1,
                segmentDurationSeconds: 2) == nil, "no byte yet: no rate to judge by")
    }

    @Test func insufficientBuffer_goesDownWhereBolaWouldFinish() {
        // A deep placeholder makes BOLA's objective prefer finishing, but 3 s of real buffer cannot wait for the
        // rest at 4 Mbit/s: the insufficient-buffer rule takes a rung whose whole segment arrives in time.
        var bola = BolaE(bitratesBps: Self.ladderBps, segmentDurationSeconds: Self.durationSeconds)
        _ = bola.decide(bufferSeconds: 0, throughputBps: 100_000_000) // startup at the top: a large placeholder
        bola.idled(seconds: 20)
        _ = bola.decide(bufferSeconds: 3, throughputBps: 100_000_000)
        let a = Self.judge(bola, loaded: Self.topBytes / 4, rateBps: 4_000_000, bufferSeconds: 3)
        #expect(a.abandons, "\(a)")
        let chosen = a.chosenRung ?? 4
        #expect(Double(Self.topBytes) * Self.ladderBps[chosen] / Self.ladderBps[4] <= a.safeBytes || chosen == 0)
    }

    @Test func firstSegment_abandonsToWhatTheMeasuredRateSustains() {
        var bola = BolaE(bitratesBps: Self.ladderBps, segmentDurationSeconds: Self.durationSeconds)
        _ = bola.decide(bufferSeconds: 0, throughputBps: 100_000_000) // startup: the top rung
        let a = Self.judge(bola, loaded: Self.topBytes / 10, rateBps: 4_000_000, bufferSeconds: 0)
        #expect(a.abandons && a.reason == .startupThroughput || a.reason == .insufficientBuffer, "\(a)")
        #expect((a.chosenRung ?? 4) <= 2, "0.9 × 4 Mbit/s sustains 3 Mbit/s at most")
    }

    @Test func abandoned_deflatesThePlaceholder_andTheReRequestTakesTheChosenRung() throws {
        var bola = BolaE(bitratesBps: Self.ladderBps, segmentDurationSeconds: Self.durationSeconds)
        _ = bola.decide(bufferSeconds: 0, throughputBps: 100_000_000)
        bola.idled(seconds: 20)
        _ = bola.decide(bufferSeconds: 12, throughputBps: 100_000_000)
        let a = Self.judge(bola, loaded: Self.topBytes / 5, rateBps: 1_000_000, bufferSeconds: 12)
        let chosen = try #require(a.chosenRung)
        bola.abandoned(a)
        #expect(bola.lastRung == chosen)
        #expect(12 + bola.placeholderSeconds <= max(12, bola.parameters.minimumBufferSeconds(forRung: max(chosen, 1))) + 1e-9)
        let again = bola.decideAfterAbandonment(a, bufferSeconds: 12)
        #expect(again.rung == chosen && again.reason == .abandoned && again.waitSeconds == 0)
    }
}
