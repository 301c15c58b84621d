import Foundation
@testable import HLSCore
import Testing

@Suite struct TransferCoalescerTests {
    static let minimum = NetworkLimitClassifier().minimumBytes

    static func small(_ bytes: Int = 40_000, transfer: Double = 0.4, firstByte: Double = 0.05) -> TransferObservation {
        TransferObservation(
            bytes: bytes, transferSeconds: transfer, firstByteSeconds: firstByte, rttSeconds: 0.001,
            readPauseSeconds: 0, isLiveEdgeSegment: false, mediaBitrateBps: 150_000, tcpAppLimited: nil)
    }

    static func at(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: s) }

    @Test func backToBackSmallTransfers_becomeOneObservation_thatIsEvidence() {
        var c = TransferCoalescer()
        let classifier = NetworkLimitClassifier()
        let first = c.observation(for: Self.small(), startedAt: Self.at(0), endedAt: Self.at(0.45), minimumBytes: Self.minimum)
        #expect(first.transfers == 1)
        #expect(classifier.classify(first.observation).evidenceBps == nil, "40 kB alone is too few bytes")
        // The next starts 10 ms after: one run of 80 kB over 0.8 s of transfer and 0.1 s of first bytes.
        let second = c.observation(for: Self.small(), startedAt: Self.at(0.46), endedAt: Self.at(0.91), minimumBytes: Self.minimum)
        #expect(second.transfers == 2)
        #expect(second.startedAt == Self.at(0))
        #expect(second.observation.bytes == 80_000)
        #expect(abs(second.observation.transferSeconds - 0.8) < 1e-9)
        #expect(abs(second.observation.firstByteSeconds - 0.1) < 1e-9)
        let verdict = classifier.classify(second.observation)
        #expect(verdict.isNetworkLimited)
        #expect(abs((verdict.evidenceBps ?? 0) - 800_000) < 1)
        // A run that reached the minimum starts over.
        #expect(c.run == nil)
    }

    @Test func aGapLongerThanTheLimit_startsANewRun() {
        var c = TransferCoalescer()
        _ = c.observation(for: Self.small(), startedAt: Self.at(0), endedAt: Self.at(0.45), minimumBytes: Self.minimum)
        let later = c.observation(
            for: Self.small(), startedAt: Self.at(0.45 + c.maximumGapSeconds + 0.01), endedAt: Self.at(2),
            minimumBytes: Self.minimum)
        #expect(later.transfers == 1)
        #expect(later.observation.bytes == 40_000)
        // At the limit exactly it still continues.
        var d = TransferCoalescer()
        _ = d.observation(for: Self.small(), startedAt: Self.at(0), endedAt: Self.at(0.45), minimumBytes: Self.minimum)
        #expect(
            d.observation(for: Self.small(), startedAt: Self.at(0.45 + d.maximumGapSeconds), endedAt: Self.at(2), minimumBytes: Self.minimum)
                .transfers == 2)
    }

    @Test func largeOrLiveEdgeTransfers_passThrough_andEndTheRun() {
        var c = TransferCoalescer()
        _ = c.observation(for: Self.small(), startedAt: Self.at(0), endedAt: Self.at(0.45), minimumBytes: Self.minimum)
        let big = c.observation(for: Self.small(200_000, transfer: 1), startedAt: Self.at(0.5), endedAt: Self.at(1.6), minimumBytes: Self.minimum)
        #expect(big.transfers == 1)
        #expect(big.observation.bytes == 200_000)
        #expect(c.run == nil)
        var live = Self.small()
        live.isLiveEdgeSegment = true
        _ = c.observation(for: Self.small(), startedAt: Self.at(2), endedAt: Self.at(2.4), minimumBytes: Self.minimum)
        let edge = c.observation(for: live, startedAt: Self.at(2.41), endedAt: Self.at(2.8), minimumBytes: Self.minimum)
        #expect(edge.transfers == 1, "a producer-paced live-edge segment is never merged")
        #expect(c.run == nil)
    }

    @Test func threeSmallOnes_takeThreeToReachTheMinimum() {
        var c = TransferCoalescer()
        var t = 0.0
        var last: (observation: TransferObservation, transfers: Int, startedAt: MonotonicInstant)?
        for _ in 0..<3 {
            last = c.observation(
                for: Self.small(25_000, transfer: 0.25), startedAt: Self.at(t), endedAt: Self.at(t + 0.3), minimumBytes: Self.minimum)
            t += 0.31
        }
        #expect(last?.transfers == 3)
        #expect(last?.observation.bytes == 75_000)
        #expect(NetworkLimitClassifier().classify(last!.observation).isNetworkLimited)
    }
}
