// The rules the real and the virtual session share: the cap combiner, the
// over-selection cap's moves and the wedge outcomes. Each rule at and around
// its thresholds.

import Foundation
import Testing
@testable import HLSCore

@Suite struct SessionRulesTests {
    static let ladder = [300_000, 620_000, 1_310_000, 3_720_000, 7_230_000]

    // MARK: - The cap combiner

    @Test func capCombiner_lowestCapWins_noneIsNil() {
        #expect(PeakBitrateCaps().effectiveBps == nil)
        #expect(PeakBitrateCaps(startupBps: 620_000).effectiveBps == 620_000)
        #expect(PeakBitrateCaps(policyBps: 1_310_000).effectiveBps == 1_310_000)
        // The policy can tighten the startup cap but never raise it.
        #expect(PeakBitrateCaps(policyBps: 1_310_000, startupBps: 620_000).effectiveBps == 620_000)
        #expect(PeakBitrateCaps(policyBps: 1_310_000, startupBps: 3_720_000).effectiveBps == 1_310_000)
        // Every cap counts, whichever is lowest.
        #expect(PeakBitrateCaps(userBps: 3_000_000, policyBps: 3_720_000, overSelectionBps: 620_000, startupBps: 1_310_000).effectiveBps == 620_000)
        #expect(PeakBitrateCaps(userBps: 500_000, policyBps: 3_720_000, overSelectionBps: 620_000, startupBps: 1_310_000).effectiveBps == 500_000)
    }

    @Test func capCombiner_admitsAtTheCap_refusesAbove() {
        let caps = PeakBitrateCaps(userBps: 1_310_000, overSelectionBps: 3_720_000)
        #expect(caps.admits(1_310_000))
        #expect(!caps.admits(1_310_001))
        #expect(PeakBitrateCaps().admits(Int.max))
    }

    @Test func capCombiner_startupCapOnTopOfSnapshot_isTheSameRule() {
        var c = StartupCapController(configuration: StartupCapConfiguration())
        _ = c.event(
            .sessionStarted(
                gate: .cold(.noEstimate), ladder: Self.ladder.enumerated().map { LadderRung(variantIndex: $0.offset, bandwidthBps: $0.element) },
                at: MonotonicInstant(seconds: 0)))
        guard let startup = c.capBps else {
            Issue.record("a cold start should set the startup cap")
            return
        }
        let snapshot = SelectionSnapshot(
            ladder: [], estimateBps: 0, estimateIsMeasured: false, bufferSeconds: 0, currentVariantIndex: nil,
            peakBitrateCapBps: 7_000_000)
        #expect(c.applying(to: snapshot).peakBitrateCapBps == PeakBitrateCaps(userBps: 7_000_000, startupBps: startup).effectiveBps)
    }

    // MARK: - Over-selection cap

    @Test func overSelectionCap_abandonsOnlyWithALowerRung() {
        #expect(OverSelectionCap.abandons(rungBps: 620_000, ladderBitratesBps: Self.ladder))
        #expect(!OverSelectionCap.abandons(rungBps: 300_000, ladderBitratesBps: Self.ladder))
        #expect(!OverSelectionCap.abandons(rungBps: 300_000, ladderBitratesBps: [300_000]))
    }

    @Test func overSelectionCap_afterAbandoning_rungAtOrBelowSuggestion_strictlyBelowAbandoned() {
        // Suggestion between rungs: the rung at or below it.
        #expect(OverSelectionCap.afterAbandoning(3_720_000, suggestedCapBps: 1_000_000, current: nil, ladderBitratesBps: Self.ladder) == 620_000)
        // Suggestion at a rung: that rung.
        #expect(OverSelectionCap.afterAbandoning(3_720_000, suggestedCapBps: 1_310_000, current: nil, ladderBitratesBps: Self.ladder) == 1_310_000)
        // Suggestion at or above the abandoned rung: still strictly below it.
        #expect(OverSelectionCap.afterAbandoning(3_720_000, suggestedCapBps: 5_000_000, current: nil, ladderBitratesBps: Self.ladder) == 1_310_000)
        // Suggestion below the bottom rung: the bottom rung.
        #expect(OverSelectionCap.afterAbandoning(620_000, suggestedCapBps: 100_000, current: nil, ladderBitratesBps: Self.ladder) == 300_000)
    }

    @Test func overSelectionCap_afterAbandoning_neverRaisesTheCapInForce() {
        #expect(OverSelectionCap.afterAbandoning(3_720_000, suggestedCapBps: 1_310_000, current: 620_000, ladderBitratesBps: Self.ladder) == 620_000)
        #expect(OverSelectionCap.afterAbandoning(3_720_000, suggestedCapBps: 620_000, current: 1_310_000, ladderBitratesBps: Self.ladder) == 620_000)
    }

    @Test func overSelectionCap_afterEvidence_earnsRungsBack_releasesAtTheTop() {
        // No cap: nothing to earn.
        #expect(OverSelectionCap.afterEvidence(50e6, current: nil, ladderBitratesBps: Self.ladder, upSwitchSafetyFactor: 0.8) == nil)
        // 0.8 × 1.7 Mbit/s = 1.36 Mbit/s supports 1.31 Mbit/s: raised to it.
        #expect(OverSelectionCap.afterEvidence(1_700_000, current: 620_000, ladderBitratesBps: Self.ladder, upSwitchSafetyFactor: 0.8) == 1_310_000)
        // Just short of it: stays.
        #expect(OverSelectionCap.afterEvidence(1_637_000, current: 620_000, ladderBitratesBps: Self.ladder, upSwitchSafetyFactor: 0.8) == 620_000)
        // Evidence below the cap never lowers it.
        #expect(OverSelectionCap.afterEvidence(100_000, current: 620_000, ladderBitratesBps: Self.ladder, upSwitchSafetyFactor: 0.8) == 620_000)
        // The top rung supported: released.
        #expect(OverSelectionCap.afterEvidence(9_037_500, current: 620_000, ladderBitratesBps: Self.ladder, upSwitchSafetyFactor: 0.8) == nil)
    }

    @Test func recentSegmentThroughput_keepsTheNewestTransfers_andGivesTheLowest() {
        var recent = RecentSegmentThroughput(count: 3)
        #expect(recent.lowestBps == nil)
        let added = recent.add(bytes: 1000, transferSeconds: 0)
        #expect(!added, "no measurable duration: not a sample")
        recent.add(bytes: 125_000, transferSeconds: 1) // 1 Mbit/s
        recent.add(bytes: 500_000, transferSeconds: 1) // 4 Mbit/s
        recent.add(bytes: 250_000, transferSeconds: 1) // 2 Mbit/s
        #expect(recent.lowestBps == 1_000_000)
        recent.add(bytes: 375_000, transferSeconds: 1) // 3 Mbit/s: the 1 Mbit/s transfer drops out
        #expect(recent.throughputsBps == [4_000_000, 2_000_000, 3_000_000])
        #expect(recent.lowestBps == 2_000_000)
    }

    @Test func audioOnlyRungs_areFallbacksOnlyBesideVideo() {
        func variant(_ codecs: [String], resolution: Resolution? = nil) -> VariantStream {
            var v = VariantStream(uri: URL(string: "http://x/v.m3u8")!, bandwidthBps: 100_000)
            v.codecs = codecs
            v.resolution = resolution
            return v
        }
        let audio = variant(["mp4a.40.2"]), video = variant(["avc1.4d401e", "mp4a.40.2"], resolution: Resolution(width: 640, height: 360))
        #expect(AudioOnlyRungs.fallbackFlags([audio, video]) == [true, false])
        #expect(AudioOnlyRungs.fallbackFlags([audio, audio]) == [false, false], "an audio-only stream has no fallback")
        #expect(AudioOnlyRungs.fallbackFlags([variant([]), video]) == [false, false], "no CODECS: not known to be audio-only")
        let ladder = [LadderRung(variantIndex: 0, bandwidthBps: 64_000, audioOnly: true), LadderRung(variantIndex: 1, bandwidthBps: 620_000)]
        #expect(AudioOnlyRungs.videoRungs(ladder).map(\.variantIndex) == [1])
        #expect(AudioOnlyRungs.videoRungs([ladder[0]]).map(\.variantIndex) == [0])
    }

    @Test func overSelectionCap_afterRecentThroughput_liftsAnAudioOnlyCapToTheLowestVideoRung() {
        let video = [620_000, 1_310_000]
        // Capped below every video rung (the audio-only fallback): lifted once 0.8 × recent ≥ 620 kbit/s.
        #expect(
            OverSelectionCap.afterRecentThroughput(775_000, current: 128_000, videoLadderBitratesBps: video, upSwitchSafetyFactor: 0.8) == 620_000)
        #expect(
            OverSelectionCap.afterRecentThroughput(774_000, current: 128_000, videoLadderBitratesBps: video, upSwitchSafetyFactor: 0.8) == 128_000)
        // Only that far, and only from below the video rungs.
        #expect(OverSelectionCap.afterRecentThroughput(50e6, current: 128_000, videoLadderBitratesBps: video, upSwitchSafetyFactor: 0.8) == 620_000)
        #expect(OverSelectionCap.afterRecentThroughput(50e6, current: 620_000, videoLadderBitratesBps: video, upSwitchSafetyFactor: 0.8) == 620_000)
        // No cap, no evidence, no video: unchanged.
        #expect(OverSelectionCap.afterRecentThroughput(50e6, current: nil, videoLadderBitratesBps: video, upSwitchSafetyFactor: 0.8) == nil)
        #expect(OverSelectionCap.afterRecentThroughput(nil, current: 128_000, videoLadderBitratesBps: video, upSwitchSafetyFactor: 0.8) == 128_000)
        #expect(OverSelectionCap.afterRecentThroughput(50e6, current: 128_000, videoLadderBitratesBps: [], upSwitchSafetyFactor: 0.8) == 128_000)
    }

    // MARK: - Wedges

    let rules = WedgeRules()

    @Test func wedgeReDecide_belowTwoSegmentsWithALowerRung() {
        // 6 s segments: re-decided below 12 s of buffer, on a rung with one below it.
        #expect(
            rules.afterSegmentWedge(
                earlierWedges: 0, bufferSeconds: 11.9, segmentDurationSeconds: 6, rungBps: 1_310_000, ladderBitratesBps: Self.ladder) == .reDecide)
        #expect(
            rules.afterSegmentWedge(
                earlierWedges: 0, bufferSeconds: 12, segmentDurationSeconds: 6, rungBps: 1_310_000, ladderBitratesBps: Self.ladder) == .reRequest)
        // The bottom rung has nothing lower: the same request again.
        #expect(
            rules.afterSegmentWedge(earlierWedges: 0, bufferSeconds: 0, segmentDurationSeconds: 6, rungBps: 300_000, ladderBitratesBps: Self.ladder)
                == .reRequest)
        // An unknown rung is never re-decided.
        #expect(
            rules.afterSegmentWedge(earlierWedges: 0, bufferSeconds: 0, segmentDurationSeconds: 6, rungBps: nil, ladderBitratesBps: Self.ladder)
                == .reRequest)
    }

    @Test func wedgeReDecide_secondWedgeOfARequestAbandons() {
        #expect(
            rules.afterSegmentWedge(
                earlierWedges: 1, bufferSeconds: 30, segmentDurationSeconds: 6, rungBps: 1_310_000, ladderBitratesBps: Self.ladder) == .abandon)
        #expect(
            rules.afterSegmentWedge(earlierWedges: 1, bufferSeconds: 0, segmentDurationSeconds: 6, rungBps: 300_000, ladderBitratesBps: Self.ladder)
                == .abandon)
    }

    @Test func wedgeReDecide_thresholdIsConfigurable() {
        let once = WedgeRules(reDecideBelowBufferSegments: 1)
        #expect(once.reDecides(bufferSeconds: 5.9, segmentDurationSeconds: 6, rungBps: 1_310_000, ladderBitratesBps: Self.ladder))
        #expect(!once.reDecides(bufferSeconds: 6, segmentDurationSeconds: 6, rungBps: 1_310_000, ladderBitratesBps: Self.ladder))
    }

    @Test func playlistWedge_reRequestedUpToTheLimit_thenAFailedAttemptOfTheRetryPolicy() {
        for wedges in 1...6 {
            #expect(rules.afterPlaylistWedge(wedges: wedges, url: "v1/prog.m3u8", bytesReceived: 0) == .reRequest)
        }
        guard case .failedAttempt(let error) = rules.afterPlaylistWedge(wedges: 7, url: "v1/prog.m3u8", bytesReceived: 12) else {
            Issue.record("the 7th wedge should be a failed attempt")
            return
        }
        #expect(error.kind == .firstByteTimeout)
        #expect(error.url == "v1/prog.m3u8")
        #expect(error.bytesReceived == 12)
        #expect(error.message.contains("7 times"))
        // A timeout the playlist policy retries with backoff, then gives up: never a session end at once.
        #expect(RetryPolicy.playlist.decide(after: error, attemptsMade: 1) == .retry(afterSeconds: 0.5))
        #expect(RetryPolicy.playlist.decide(after: error, attemptsMade: 4) == .retry(afterSeconds: 4))
        #expect(RetryPolicy.playlist.decide(after: error, attemptsMade: 5) == .giveUp(reason: "5 of 5 attempts failed"))
    }

    @Test func abandonment_givesUpAtTheLimit() {
        #expect(!rules.givesUp(afterAbandonments: 4))
        #expect(rules.givesUp(afterAbandonments: 5))
        #expect(WedgeRules(maxAbandonmentsPerSegment: 1).givesUp(afterAbandonments: 1))
        // One wording for every loader: VOD and live segments, and an LL-HLS segment loaded as parts.
        #expect(rules.givingUpMessage(segment: 17) == "segment 17 could not be loaded: wedged or abandoned 5 times on every rung tried")
        #expect(
            rules.givingUpMessage(segment: 17, partByPart: true)
                == "segment 17 could not be loaded part by part: wedged or abandoned 5 times on every rung tried")
    }
}
