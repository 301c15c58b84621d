import Testing
@testable import HLSCore

/// An audio-only variant (64 kbit/s, index 4) beside the reference ladder: a fallback, never a first choice.
@Suite struct AudioOnlyFallbackTests {
    let selector = VariantSelector()
    static let audioOnly = LadderRung(variantIndex: 4, bandwidthBps: 64_000, audioOnly: true)
    let ladder = referenceLadder + [Self.audioOnly]

    func snapshot(
        estimate: Double, measured: Bool = true, buffer: Double = 10, current: Int? = nil, cap: Int? = nil,
        pinned: Int? = nil, recent: Double? = nil
    ) -> SelectionSnapshot {
        SelectionSnapshot(
            ladder: ladder, estimateBps: estimate, estimateIsMeasured: measured, bufferSeconds: buffer,
            currentVariantIndex: current, peakBitrateCapBps: cap, pinnedVariantIndex: pinned,
            recentSegmentThroughputBps: recent)
    }

    @Test func startsOnVideo_withTheDefaultEstimate() {
        let d = selector.select(snapshot(estimate: BandwidthEstimator().estimateBps, measured: false))
        #expect(d.variantIndex == 0)
        #expect(d.reason == .initial)
    }

    @Test func capBelowEveryVideoRung_choosesAudioOnly_capBelowEverything_theLowestVideoRung() {
        let under = selector.select(snapshot(estimate: 20e6, cap: 100_000))
        #expect(under.variantIndex == 4)
        #expect(under.reason == .audioOnlyUnderCap)
        let onVideo = selector.select(snapshot(estimate: 20e6, current: 2, cap: 100_000))
        #expect(onVideo.variantIndex == 4, "from video too")
        let below = selector.select(snapshot(estimate: 20e6, cap: 50_000))
        #expect(below.variantIndex == 0)
        #expect(below.reason == .capBelowLadder)
    }

    @Test func linkCannotKeepTheLowestVideoRung_fallsBackToAudioOnly() {
        // 400 kbit/s needs 400 / 0.9 = 444.4 kbit/s to be kept.
        let keep = selector.select(snapshot(estimate: 444_500, current: 0))
        #expect(keep.variantIndex == 0)
        let drop = selector.select(snapshot(estimate: 444_400, current: 0))
        #expect(drop.variantIndex == 4)
        #expect(drop.reason == .audioOnlyFallback)
        // An unmeasured (default) estimate is no evidence against video.
        #expect(selector.select(snapshot(estimate: 100_000, measured: false, current: 0)).variantIndex == 0)
    }

    @Test func recentTransfersFast_keepVideo_thoughTheEstimateLags() {
        let d = selector.select(snapshot(estimate: 300_000, current: 0, recent: 5e6))
        #expect(d.variantIndex == 0)
    }

    @Test func onAudioOnly_returnsToVideo_asAnUpSwitch() {
        // The lowest video rung needs 400 / 0.7 = 571.4 kbit/s of evidence and a deep buffer.
        let stay = selector.select(snapshot(estimate: 571_000, current: 4))
        #expect(stay.variantIndex == 4)
        #expect(stay.reason == .audioOnlyFallback)
        let shallow = selector.select(snapshot(estimate: 20e6, buffer: selector.minimumBufferForUpSwitchSeconds - 0.1, current: 4))
        #expect(shallow.variantIndex == 4)
        let back = selector.select(snapshot(estimate: 20e6, current: 4))
        #expect(back.variantIndex == 3, "the sustainable video rung")
        #expect(back.reason == .upSwitch)
        // The time-weighted estimate lags behind tiny audio segments; the recent transfers say the link is back.
        let recent = selector.select(snapshot(estimate: 300_000, current: 4, recent: 2e6))
        #expect(recent.variantIndex == 0, "the lowest video rung: higher ones wait for the estimate")
        #expect(recent.reason == .upSwitch)
        // Still capped below video: stays, and says why.
        let capped = selector.select(snapshot(estimate: 20e6, current: 4, cap: 100_000))
        #expect(capped.variantIndex == 4)
        #expect(capped.reason == .audioOnlyUnderCap)
    }

    @Test func pinnedAudioOnly_isPlayed() {
        let d = selector.select(snapshot(estimate: 20e6, pinned: 4))
        #expect(d.variantIndex == 4)
        #expect(d.reason == .pinned)
    }

    @Test func audioOnlyLadder_usualRules() {
        let rungs = [
            LadderRung(variantIndex: 0, bandwidthBps: 64_000, audioOnly: true),
            LadderRung(variantIndex: 1, bandwidthBps: 128_000, audioOnly: true)
        ]
        let d = selector.select(
            SelectionSnapshot(
                ladder: rungs, estimateBps: 1e6, estimateIsMeasured: true, bufferSeconds: 0,
                currentVariantIndex: nil))
        #expect(d.variantIndex == 1)
        #expect(d.reason == .initial)
    }

    @Test func sessionDecision_liftsAnOverSelectionCapBelowVideo_onRecentEvidence() {
        // (OverSelectionCap.afterRecentThroughput holds the cap rule; here the selector side: lifted to the lowest video rung, it goes back.)
        let d = selector.select(snapshot(estimate: 300_000, current: 4, cap: 400_000, recent: 2e6))
        #expect(d.variantIndex == 0)
        #expect(d.reason == .upSwitch)
    }
}
