import Testing
@testable import HLSCore

/// Golden numbers were computed independently from the definition: a
/// duration-weighted EWMA with half-life h has alpha = 0.5^(1/h), each sample
/// of weight w moves the average by alpha^w, and the result is divided by
/// 1 - alpha^(total weight) to remove the bias of the zero start.
@Suite struct BandwidthEstimatorTests {
    func sample(_ bps: Double, seconds: Double) -> ThroughputSample {
        ThroughputSample(bytes: Int(bps * seconds / 8), transferSeconds: seconds, firstByteSeconds: 0.01)
    }

    @Test func noSamples_usesDocumentedDefault() {
        let e = BandwidthEstimator()
        #expect(!e.hasEstimate)
        #expect(e.estimateBps == 1_000_000)
        #expect(e.fastBps == nil)
    }

    @Test func oneSample_estimateEqualsSample() {
        var e = BandwidthEstimator()
        #expect(e.add(sample(8e6, seconds: 1)) == .accepted)
        #expect(abs(e.estimateBps - 8e6) < 1)
    }

    @Test func twoSamples_goldenNumbers_estimateIsLowerOfFastAndSlow() {
        var e = BandwidthEstimator()
        e.add(sample(8e6, seconds: 1))
        e.add(sample(4e6, seconds: 1))
        #expect(abs(e.fastBps! - 5_769_973.336) < 1)
        #expect(abs(e.slowBps! - 5_923_021.693) < 1)
        #expect(e.estimateBps == e.fastBps!)
    }

    @Test func threeSamples_goldenNumbers() {
        var e = BandwidthEstimator()
        e.add(sample(8e6, seconds: 1))
        e.add(sample(4e6, seconds: 1))
        e.add(sample(2e6, seconds: 0.5))
        #expect(abs(e.fastBps! - 4_832_557.643) < 1)
        #expect(abs(e.slowBps! - 5_076_857.423) < 1)
    }

    @Test func risingThroughput_slowAverageHoldsEstimateBack() {
        var e = BandwidthEstimator()
        e.add(sample(2e6, seconds: 2))
        e.add(sample(20e6, seconds: 1))
        #expect(e.estimateBps == e.slowBps!)
        #expect(e.estimateBps < e.fastBps!)
    }

    @Test func minimumSampleBytes_justUnderIsRejected_atIsAccepted() {
        var e = BandwidthEstimator()
        let limit = e.configuration.minimumSampleBytes
        #expect(e.add(ThroughputSample(bytes: limit - 1, transferSeconds: 0.1, firstByteSeconds: 0.05)) == .rejectedTooSmall)
        #expect(!e.hasEstimate)
        #expect(e.add(ThroughputSample(bytes: limit, transferSeconds: 0.1, firstByteSeconds: 0.05)) == .accepted)
        #expect(e.hasEstimate)
    }

    @Test func minimumTransferSeconds_shorterTransfersCountAsTheMinimum() {
        var e = BandwidthEstimator()
        let minimum = e.configuration.minimumTransferSeconds
        // 1 MB in 1 ms would be 8 Gbit/s; it is counted as taking the minimum time.
        e.add(ThroughputSample(bytes: 1_000_000, transferSeconds: 0.001, firstByteSeconds: 0))
        #expect(abs(e.estimateBps - 8_000_000 / minimum) < 1)
        var f = BandwidthEstimator()
        f.add(ThroughputSample(bytes: 1_000_000, transferSeconds: minimum, firstByteSeconds: 0))
        #expect(abs(f.estimateBps - 8_000_000 / minimum) < 1)
    }

    @Test func minimumTotalWeight_justUnderKeepsDefault_atMeasures() {
        var config = BandwidthEstimator.Configuration()
        config.minimumTotalWeightSeconds = 0.5
        config.minimumTransferSeconds = 0.001
        var e = BandwidthEstimator(configuration: config)
        e.add(ThroughputSample(bytes: 100_000, transferSeconds: 0.499, firstByteSeconds: 0))
        #expect(!e.hasEstimate)
        #expect(e.estimateBps == config.defaultEstimateBps)
        e.add(ThroughputSample(bytes: 100_000, transferSeconds: 0.001, firstByteSeconds: 0))
        #expect(e.hasEstimate)
    }

    @Test func invalidSample_isRejected() {
        var e = BandwidthEstimator()
        #expect(e.add(ThroughputSample(bytes: 0, transferSeconds: 1, firstByteSeconds: 0)) == .rejectedInvalid)
        #expect(e.add(ThroughputSample(bytes: 100_000, transferSeconds: -1, firstByteSeconds: 0)) == .rejectedInvalid)
    }

    @Test func seed_warmStartsTheAverages() {
        var e = BandwidthEstimator()
        e.seed(estimateBps: 5e6, weightSeconds: 2)
        #expect(e.hasEstimate)
        #expect(abs(e.estimateBps - 5e6) < 1)
    }
}
