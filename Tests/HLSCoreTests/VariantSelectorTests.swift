import Testing
@testable import HLSCore

/// The reference ladder: 0.4, 1, 3 and 6 Mbit/s, listed out of order on purpose.
let referenceLadder = [
    LadderRung(variantIndex: 2, bandwidthBps: 3_000_000, width: 1280, height: 720),
    LadderRung(variantIndex: 0, bandwidthBps: 400_000, width: 416, height: 234),
    LadderRung(variantIndex: 3, bandwidthBps: 6_000_000, width: 1920, height: 1080),
    LadderRung(variantIndex: 1, bandwidthBps: 1_000_000, width: 640, height: 360)
]

@Suite struct VariantSelectorTests {
    let selector = VariantSelector()

    func snapshot(estimate: Double, buffer: Double = 10, current: Int? = nil, cap: Int? = nil, pinned: Int? = nil) -> SelectionSnapshot {
        SelectionSnapshot(
            ladder: referenceLadder, estimateBps: estimate, estimateIsMeasured: true, bufferSeconds: buffer,
            currentVariantIndex: current, peakBitrateCapBps: cap, pinnedVariantIndex: pinned)
    }

    @Test func initial_picksHighestRungWithinUpFactor() {
        // 3 Mbit/s needs 3 / 0.7 = 4.2857 Mbit/s.
        #expect(selector.select(snapshot(estimate: 4_285_715)).variantIndex == 2)
        #expect(selector.select(snapshot(estimate: 4_285_700)).variantIndex == 1)
        #expect(selector.select(snapshot(estimate: 4_285_715)).reason == .initial)
    }

    @Test func initial_belowLowestRung_picksLowest() {
        #expect(selector.select(snapshot(estimate: 100_000)).variantIndex == 0)
    }

    @Test func defaultEstimate_startsOnLowestRung() {
        let d = selector.select(snapshot(estimate: BandwidthEstimator().estimateBps))
        #expect(d.variantIndex == 0)
    }

    @Test func upSwitch_bufferJustUnderThreshold_holds_atThreshold_switches() {
        let min = selector.minimumBufferForUpSwitchSeconds
        let under = selector.select(snapshot(estimate: 20e6, buffer: min - 0.001, current: 1))
        #expect(under.variantIndex == 1)
        #expect(under.reason == .holdLowBuffer)
        #expect(under.sustainableVariantIndex == 3)
        let at = selector.select(snapshot(estimate: 20e6, buffer: min, current: 1))
        #expect(at.variantIndex == 3)
        #expect(at.reason == .upSwitch)
    }

    @Test func keep_hysteresisBetweenUpAndKeepFactors() {
        // On 3 Mbit/s: kept while 3e6 <= 0.9 * estimate, i.e. estimate >= 3.3333 Mbit/s.
        let keep = selector.select(snapshot(estimate: 3_333_334, current: 2))
        #expect(keep.variantIndex == 2)
        #expect(keep.reason == .hold)
        let drop = selector.select(snapshot(estimate: 3_333_332, current: 2))
        #expect(drop.reason == .downSwitch)
        #expect(drop.variantIndex == 1)
        // The same estimate would not have been enough to switch up to 3 Mbit/s.
        #expect(selector.select(snapshot(estimate: 3_333_334, current: 1)).variantIndex == 1)
    }

    @Test func downSwitch_landsOnSustainableRung_notOneStep() {
        let d = selector.select(snapshot(estimate: 800_000, current: 3))
        #expect(d.variantIndex == 0)
        #expect(d.reason == .downSwitch)
    }

    @Test func peakBitrateCap_justUnderRungExcludesIt_atRungAllowsIt() {
        let under = selector.select(snapshot(estimate: 100e6, cap: 2_999_999))
        #expect(under.variantIndex == 1)
        let at = selector.select(snapshot(estimate: 100e6, cap: 3_000_000))
        #expect(at.variantIndex == 2)
    }

    @Test func peakBitrateCap_currentAboveCap_isCapped() {
        let d = selector.select(snapshot(estimate: 100e6, current: 3, cap: 1_000_000))
        #expect(d.variantIndex == 1)
        #expect(d.reason == .capped)
    }

    @Test func peakBitrateCap_belowWholeLadder_usesLowest() {
        let d = selector.select(snapshot(estimate: 100e6, cap: 100_000))
        #expect(d.variantIndex == 0)
        #expect(d.reason == .capBelowLadder)
    }

    @Test func pinned_overridesEstimate() {
        let d = selector.select(snapshot(estimate: 100_000, current: 0, pinned: 3))
        #expect(d.variantIndex == 3)
        #expect(d.reason == .pinned)
    }
}
