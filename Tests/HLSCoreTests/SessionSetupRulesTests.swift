// The two decisions a session takes between the predictor and the media
// clock: how a policy's knobs meet the user's thresholds, and the feature
// vector the predictor gets at a monitor tick.

import Foundation
import Testing
@testable import HLSCore

@Suite struct SessionSetupRulesTests {
    let knobs = PolicyKnobs(preferredForwardBufferDurationSeconds: 30, peakBitrateCapBps: nil, resumeBufferSeconds: 6)

    func timeline(startup: Double = 2, resume: Double = 2) -> PlaybackTimeline {
        PlaybackTimeline(configuration: PlaybackConfiguration(startupBufferSeconds: startup, resumeBufferSeconds: resume))
    }

    @Test func policyKnobsApply_setsResumeAndGatesTheStart() {
        var t = timeline()
        knobs.apply(to: &t, resumeSetByUser: false, startupSetByUser: false, configuredStartupSeconds: 2, gatesStart: true)
        #expect(t.configuration.resumeBufferSeconds == 6)
        // A start is a resume from nothing: the policy's resume threshold, never below the configured start.
        #expect(t.configuration.startupBufferSeconds == 6)
        var low = timeline(startup: 8)
        knobs.apply(to: &low, resumeSetByUser: false, startupSetByUser: false, configuredStartupSeconds: 8, gatesStart: true)
        #expect(low.configuration.startupBufferSeconds == 8)
    }

    @Test func policyKnobsApply_theUsersThresholdsAndTheStreamsWin() {
        var t = timeline(startup: 3, resume: 4)
        knobs.apply(to: &t, resumeSetByUser: true, startupSetByUser: true, configuredStartupSeconds: 3, gatesStart: true)
        #expect(t.configuration.resumeBufferSeconds == 4)
        #expect(t.configuration.startupBufferSeconds == 3)
        var ll = timeline(startup: 1)
        knobs.apply(to: &ll, resumeSetByUser: false, startupSetByUser: false, configuredStartupSeconds: 1, gatesStart: false)
        #expect(ll.configuration.resumeBufferSeconds == 6)
        #expect(ll.configuration.startupBufferSeconds == 1, "the stream's start threshold (PART-HOLD-BACK) is left alone")
    }

    @Test func stallFeaturesAtTick_rungsInFlightAndReadings() {
        var estimator = BandwidthEstimator()
        estimator.seed(estimateBps: 4_000_000, weightSeconds: 1)
        let features = StallFeatures.atTick(
            bufferSeconds: 7, estimator: estimator, ladderBitratesBps: [3_720_000, 620_000, 1_310_000], currentRungBps: 620_000,
            inFlight: InFlightSnapshot(
                bytesReceived: 1000, bytesExpected: nil, secondsSinceLastByte: 0.2, elapsedSeconds: 1.5, rttSeconds: 0.01,
                segmentDurationSeconds: 2, rungBitrateBps: 620_000, measuredThroughputBps: nil, forwardBufferSeconds: 7),
            firstByteSeconds: 0.05, rttSeconds: 0.01, cpuPressureAvg10Percent: 12, decodeLagRatio: nil, thermalMaxCelsius: 55)
        #expect(features.bufferSeconds == 7)
        #expect(features.currentRungBitrateBps == 620_000)
        #expect(features.nextHigherRungBitrateBps == 1_310_000, "the next rung up, whatever the ladder's order")
        #expect(features.inFlightBytesReceived == 1000)
        #expect(features.inFlightBytesExpected == nil)
        #expect(features.inFlightElapsedSeconds == 1.5)
        #expect(features.inFlightSecondsSinceLastByte == 0.2)
        #expect(features.bandwidthFastBps == estimator.fastBps && features.bandwidthSlowBps == estimator.slowBps)
        #expect(features.firstByteSeconds == 0.05 && features.rttSeconds == 0.01)
        #expect(features.cpuPressureAvg10Percent == 12 && features.decodeLagRatio == nil && features.thermalMaxCelsius == 55)
    }

    @Test func stallFeaturesAtTick_idleAtTheTopAndBeforeTheFirstDecision() {
        let top = StallFeatures.atTick(
            bufferSeconds: 20, estimator: BandwidthEstimator(), ladderBitratesBps: [620_000, 1_310_000],
            currentRungBps: 1_310_000, inFlight: nil, firstByteSeconds: nil, rttSeconds: nil,
            cpuPressureAvg10Percent: nil, decodeLagRatio: nil, thermalMaxCelsius: nil)
        #expect(top.nextHigherRungBitrateBps == nil)
        #expect(top.inFlightBytesReceived == nil && top.inFlightElapsedSeconds == nil)
        let first = StallFeatures.atTick(
            bufferSeconds: 0, estimator: BandwidthEstimator(), ladderBitratesBps: [620_000, 1_310_000],
            currentRungBps: nil, inFlight: nil, firstByteSeconds: nil, rttSeconds: nil,
            cpuPressureAvg10Percent: nil, decodeLagRatio: nil, thermalMaxCelsius: nil)
        #expect(first.currentRungBitrateBps == 0)
        #expect(first.nextHigherRungBitrateBps == 620_000)
    }
}
