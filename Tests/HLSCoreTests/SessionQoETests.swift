import Testing
@testable import HLSCore

/// The summary's QoE figures and playback start, on hand-computed examples.
@Suite struct SessionQoETests {
    /// A 4 s chunk of rung `v` at `start`, declaring `mbps` and weighing `bytes`.
    func chunk(_ v: Int, _ mbps: Double, at start: Double, bytes: Int, seconds: Double = 4) -> QoEChunk {
        QoEChunk(variantIndex: v, bandwidthBps: Int(mbps * 1_000_000), startSeconds: start, durationSeconds: seconds, bytes: bytes)
    }

    /// 1, 3, then 2 Mbit/s, 4 s each, all played; one 1.5 s stall; the ladder tops at 3 Mbit/s.
    var threeChunks: [QoEChunk] {
        [
            chunk(0, 1, at: 0, bytes: 400_000), // measured 0.8 Mbit/s
            chunk(2, 3, at: 4, bytes: 1_600_000), // 3.2 Mbit/s
            chunk(1, 2, at: 8, bytes: 1_100_000)
        ] // 2.2 Mbit/s
    }

    @Test func threeWholeChunks_everyFigureAsComputedByHand() throws {
        let q = SessionQoE.compute(
            chunks: threeChunks, startPositionSeconds: 0, finalPositionSeconds: 12,
            stallCount: 1, stallSeconds: 1.5, ladderTopBps: 3_000_000)
        #expect(q.playedChunks == 3)
        // (1 + 3 + 2) × 4 s ÷ 12 s.
        #expect(q.averageDeclaredBitrateBps == 2_000_000)
        // (400 000 + 1 600 000 + 1 100 000) bytes × 8 ÷ 12 s = 2 066 666.7 bit/s.
        #expect(abs(try #require(q.averageMeasuredBitrateBps) - 24_800_000.0 / 12) < 1e-6)
        // 1.5 ÷ (12 + 1.5) = 1/9.
        #expect(abs(try #require(q.rebufferRatio) - 1.0 / 9) < 1e-12)
        // One stall in 12 s played: 5 per minute.
        #expect(abs(try #require(q.stallsPerMinute) - 5) < 1e-12)
        // 1 → 3 (2 Mbit/s), 3 → 2 (1 Mbit/s).
        #expect(q.playedSwitches == 2)
        #expect(q.meanSwitchMagnitudeBps == 1_500_000)
        #expect(
            q.rungs == [
                RungPlayTime(variantIndex: 0, bandwidthBps: 1_000_000, playedSeconds: 4),
                RungPlayTime(variantIndex: 1, bandwidthBps: 2_000_000, playedSeconds: 4),
                RungPlayTime(variantIndex: 2, bandwidthBps: 3_000_000, playedSeconds: 4)
            ])
        // μ = 3; Σ bitrate 6 − 3 × 1.5 − (2 + 1) = −1.5, −0.5 per chunk.
        #expect(q.linearQoERebufferWeight == 3)
        #expect(q.linearQoEBitrateSum == 6)
        #expect(q.linearQoERebufferPenalty == 4.5)
        #expect(q.linearQoESwitchPenalty == 3)
        #expect(abs(try #require(q.linearQoE) - -1.5) < 1e-12)
        #expect(abs(try #require(q.linearQoEPerChunk) - -0.5) < 1e-12)
    }

    @Test func partlyPlayed_weighsTheAveragesByTimePlayed_andPrefetchedChunksAreNoSwitch() throws {
        // Played 2…10 s (a start offset, then --duration mid-chunk); a 4th chunk at v0 was buffered
        // ahead and never played: it is neither a played chunk nor a switch the viewer saw.
        let chunks = threeChunks + [chunk(0, 1, at: 12, bytes: 400_000)]
        let q = SessionQoE.compute(
            chunks: chunks, startPositionSeconds: 2, finalPositionSeconds: 10,
            stallCount: 0, stallSeconds: 0, ladderTopBps: 3_000_000)
        #expect(q.playedChunks == 3)
        // (1 × 2 + 3 × 4 + 2 × 2) ÷ 8 = 2.25 Mbit/s; measured (0.8 × 2 + 3.2 × 4 + 2.2 × 2) ÷ 8 = 2.35.
        #expect(q.averageDeclaredBitrateBps == 2_250_000)
        #expect(abs(try #require(q.averageMeasuredBitrateBps) - 2_350_000) < 1e-6)
        #expect(q.rebufferRatio == 0 && q.stallsPerMinute == 0)
        #expect(q.playedSwitches == 2)
        #expect(q.rungs.map(\.playedSeconds) == [2, 2, 4])
        // Chunks count whole in the linear QoE: 6 − 0 − 3.
        #expect(q.linearQoE == 3 && q.linearQoEPerChunk == 1)
    }

    @Test func bufferDiscarded_theDroppedMediaIsNotPlayed() throws {
        // 0–12 s buffered, then a live resync at position 5 drops what is ahead: new chunks (v0) start at 5.
        // The first v2 chunk played 4–5 only; the v1 chunk at 8–12 was dropped whole.
        let chunks = threeChunks + [chunk(0, 1, at: 5, bytes: 400_000), chunk(0, 1, at: 9, bytes: 400_000)]
        let q = SessionQoE.compute(
            chunks: chunks, startPositionSeconds: 0, finalPositionSeconds: 13,
            stallCount: 0, stallSeconds: 0, ladderTopBps: 3_000_000)
        #expect(q.playedChunks == 4)
        #expect(
            q.rungs == [
                RungPlayTime(variantIndex: 0, bandwidthBps: 1_000_000, playedSeconds: 12),
                RungPlayTime(variantIndex: 2, bandwidthBps: 3_000_000, playedSeconds: 1)
            ])
        // (1 × 12 + 3 × 1) ÷ 13 s.
        #expect(abs(try #require(q.averageDeclaredBitrateBps) - 15_000_000.0 / 13) < 1e-6)
        // v0 → v2 → v0 → v0: two switches of 2 Mbit/s; 1 + 3 + 1 + 1 − 0 − 4 = 2.
        #expect(q.playedSwitches == 2 && q.meanSwitchMagnitudeBps == 2_000_000)
        #expect(q.linearQoE == 2)
    }

    @Test func noLadderSeen_muIsTheHighestChunkPlayed() {
        let q = SessionQoE.compute(
            chunks: threeChunks, startPositionSeconds: 0, finalPositionSeconds: 12,
            stallCount: 1, stallSeconds: 1, ladderTopBps: nil)
        #expect(q.linearQoERebufferWeight == 3)
        // 6 − 3 × 1 − 3.
        #expect(q.linearQoE == 0)
    }

    @Test func nothingPlayed_figuresWithoutADenominatorAreAbsent() {
        let q = SessionQoE.compute(
            chunks: [], startPositionSeconds: 0, finalPositionSeconds: 0,
            stallCount: 0, stallSeconds: 0, ladderTopBps: 3_000_000)
        #expect(q.playedChunks == 0 && q.playedSwitches == 0 && q.rungs.isEmpty)
        #expect(q.averageDeclaredBitrateBps == nil && q.averageMeasuredBitrateBps == nil)
        #expect(q.rebufferRatio == nil && q.stallsPerMinute == nil && q.meanSwitchMagnitudeBps == nil)
        #expect(q.linearQoE == nil && q.linearQoEPerChunk == nil)
        // Stalled without playing anything: all of it was rebuffering.
        let stalledOnly = SessionQoE.compute(
            chunks: [], startPositionSeconds: 0, finalPositionSeconds: 0,
            stallCount: 1, stallSeconds: 3, ladderTopBps: nil)
        #expect(stalledOnly.rebufferRatio == 1 && stalledOnly.stallsPerMinute == nil)
    }

    @Test func noDeclaredBitrate_noLinearQoE_butTheMeasuredBitrateStays() {
        // Chunks declaring no bitrate (0) and no ladder: μ would be 0 and the score meaningless.
        let q = SessionQoE.compute(
            chunks: [chunk(0, 0, at: 0, bytes: 500_000)], startPositionSeconds: 0,
            finalPositionSeconds: 4, stallCount: 0, stallSeconds: 0, ladderTopBps: nil)
        #expect(q.linearQoERebufferWeight == 0 && q.linearQoE == nil)
        #expect(q.averageDeclaredBitrateBps == 0 && q.averageMeasuredBitrateBps == 1_000_000)
    }

    // MARK: - The summary

    func summary(_ events: [SessionEvent], played: Double, session: Double) -> SessionSummary {
        var builder = SummaryBuilder()
        for e in events { builder.record(e) }
        return builder.summary(
            url: "u", isLive: false, exitReason: .completed, error: nil, startPositionSeconds: 0,
            finalPositionSeconds: played, sessionSeconds: session, finalEstimateBps: nil)
    }

    func buffered(_ c: QoEChunk) -> SessionEvent {
        .segmentBuffered(
            SegmentBuffered(
                variantIndex: c.variantIndex, bandwidthBps: c.bandwidthBps, mediaSequence: Int(c.startSeconds / 4),
                startSeconds: c.startSeconds, durationSeconds: c.durationSeconds, bytes: c.bytes, videoPackets: 1,
                audioPackets: 1, corruptPackets: 0, demuxSeconds: 0.01, bufferedEndSeconds: c.startSeconds + 4, bufferSeconds: 4))
    }

    func decision(ladderBps: [Int]) -> SessionEvent {
        .variantDecision(
            VariantDecisionRecord(
                inputs: SelectionSnapshot(
                    ladder: ladderBps.enumerated().map { LadderRung(variantIndex: $0.offset, bandwidthBps: $0.element) },
                    estimateBps: 1e6, estimateIsMeasured: false, bufferSeconds: 0, currentVariantIndex: nil),
                decision: SelectionDecision(variantIndex: 0, reason: .initial, sustainableVariantIndex: 0),
                estimatorFastBps: nil, estimatorSlowBps: nil, mediaSequence: 0))
    }

    @Test func summary_playbackStart_startWait_end_andQoEFromTheSameEvents() throws {
        let first = FirstFrame(timeToFirstFrameSeconds: 1.25, variantIndex: 0, width: 640, height: 360, ptsSeconds: 0, breakdown: StartupBreakdown())
        var events: [SessionEvent] = [decision(ladderBps: [1_000_000, 2_000_000, 3_000_000, 4_000_000]), .firstFrame(first)]
        events += threeChunks.map(buffered)
        events += [
            .playbackStarted(.started(atSeconds: 4.5, positionSeconds: 0, bufferSeconds: 8, firstFrameAtSeconds: 1.25, isFirstStart: true)),
            .stallStart(PlaybackChange(atSeconds: 8.5, positionSeconds: 4)),
            .stallEnd(PlaybackChange(atSeconds: 10, positionSeconds: 4, stallSeconds: 1.5)),
            // A second start (e.g. after a live resync) changes nothing: playback started once.
            .playbackStarted(.started(atSeconds: 11, positionSeconds: 5, bufferSeconds: 4, firstFrameAtSeconds: 1.25, isFirstStart: false)),
            .playbackEnded(PlaybackChange(atSeconds: 18, positionSeconds: 12))
        ]
        let s = summary(events, played: 12, session: 18.2)
        #expect(s.timeToPlaybackStartSeconds == 4.5)
        #expect(s.startupWaitSeconds == 3.25)
        #expect(s.playbackEndedAtSeconds == 18)
        #expect(s.startup.playbackStartAtSeconds == 4.5 && s.startup.startupWaitSeconds == 3.25)
        // Wall time = start + played + stalled + the tail after the end: 4.5 + 12 + 1.5 + 0.2.
        #expect(abs(s.sessionSeconds - (4.5 + s.playedSeconds + s.stallSeconds + (18.2 - 18))) < 1e-9)
        // μ is the ladder's top (4 Mbit/s), not the highest rung played (3).
        let q = try #require(s.qoe)
        #expect(q.linearQoERebufferWeight == 4)
        #expect(
            q
                == SessionQoE.compute(
                    chunks: threeChunks, startPositionSeconds: 0, finalPositionSeconds: 12,
                    stallCount: 1, stallSeconds: 1.5, ladderTopBps: 4_000_000))
    }

    @Test func summary_neverStarted_playbackFieldsAbsent() throws {
        let s = summary([decision(ladderBps: [1_000_000]), buffered(threeChunks[0])], played: 0, session: 5)
        #expect(s.timeToPlaybackStartSeconds == nil && s.startupWaitSeconds == nil && s.playbackEndedAtSeconds == nil)
        #expect(s.startup.playbackStartAtSeconds == nil)
        let q = try #require(s.qoe)
        #expect(q.playedChunks == 0 && q.linearQoE == nil)
    }

    @Test func firstPlaybackStarted_carriesTheStartWait_laterOnesDoNot() {
        let first = PlaybackChange.started(atSeconds: 4, positionSeconds: 0, bufferSeconds: 2, firstFrameAtSeconds: 1.5, isFirstStart: true)
        #expect(first.timeToFirstFrameSeconds == 1.5 && first.startupWaitSeconds == 2.5)
        let later = PlaybackChange.started(atSeconds: 9, positionSeconds: 3, bufferSeconds: 2, firstFrameAtSeconds: 1.5, isFirstStart: false)
        #expect(later.timeToFirstFrameSeconds == nil && later.startupWaitSeconds == nil)
        let noFrame = PlaybackChange.started(atSeconds: 4, positionSeconds: 0, bufferSeconds: 2, firstFrameAtSeconds: nil, isFirstStart: true)
        #expect(noFrame.startupWaitSeconds == nil)
    }

    @Test func aggregate_playbackStartPercentiles_andRebufferRatio() {
        func session(start: Double?, wait: Double?, played: Double, stall: Double) -> SessionSummary {
            var s = summary([], played: played, session: 30)
            s.timeToPlaybackStartSeconds = start
            s.startupWaitSeconds = wait
            s.stallSeconds = stall
            return s
        }
        let a = AggregateSummary.make(
            from: [
                session(start: 2, wait: 1, played: 10, stall: 2),
                session(start: 6, wait: 3, played: 8, stall: 0),
                session(start: nil, wait: nil, played: 0, stall: 0)
            ], wallSeconds: 30)
        #expect(a.timeToPlaybackStartP50Seconds == 2 && a.timeToPlaybackStartMaxSeconds == 6)
        #expect(a.sessionsWithoutPlaybackStart == 1)
        #expect(a.startupWaitP90Seconds == 3)
        // 2 s stalled over 18 s played + 2 s stalled.
        #expect(a.rebufferRatio == 0.1)
    }
}
