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
