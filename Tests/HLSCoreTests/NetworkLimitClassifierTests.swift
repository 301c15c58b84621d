import Testing
@testable import HLSCore

/// Which samples count as network-limited; a pair just under and at every threshold.
@Suite struct NetworkLimitClassifierTests {
    let c = NetworkLimitClassifier()

    /// A clean 1 MB transfer over 2 s at 4 Mbps with a 50 ms RTT: counts.
    func clean() -> TransferObservation {
        TransferObservation(bytes: 1_000_000, transferSeconds: 2, firstByteSeconds: 0.1, rttSeconds: 0.05)
    }

    @Test func clean_isNetworkLimited() {
        let v = c.classify(clean())
        #expect(v.isNetworkLimited)
        #expect(v.reasons.isEmpty)
        #expect(v.throughputBps == 4_000_000)
    }

    @Test func invalid_zeroBytesOrDuration() {
        var o = clean(); o.bytes = 0
        #expect(c.classify(o).reasons == [.invalid])
        o = clean(); o.transferSeconds = 0
        #expect(c.classify(o).reasons == [.invalid])
    }

    @Test func bytes_justUnderMinimum_tooFew_atMinimum_counts() {
        var o = clean(); o.bytes = 64 * 1024 - 1; o.transferSeconds = 0.5
        #expect(c.classify(o).reasons == [.tooFewBytes])
        o.bytes = 64 * 1024
        #expect(c.classify(o).isNetworkLimited)
    }

    @Test func roundTrips_justUnderFourRTTs_tooFew_atFour_counts() {
        var o = clean(); o.rttSeconds = 0.1; o.transferSeconds = 0.399; o.firstByteSeconds = 0.1
        #expect(c.classify(o).reasons == [.tooFewRoundTrips])
        o.transferSeconds = 0.4
        #expect(c.classify(o).isNetworkLimited)
    }

    @Test func roundTrips_unknownRTT_notJudged() {
        var o = clean(); o.rttSeconds = nil; o.transferSeconds = 0.01; o.firstByteSeconds = 0.005
        #expect(c.classify(o).isNetworkLimited)
    }

    @Test func firstByteShare_justUnderHalf_counts_atHalf_dominated() {
        var o = clean(); o.transferSeconds = 1.0; o.firstByteSeconds = 0.999
        #expect(c.classify(o).isNetworkLimited)
        o.firstByteSeconds = 1.0
        #expect(c.classify(o).reasons == [.firstByteDominated])
    }

    @Test func slowStartDominated_largeTransfer_stillBoundsTheLinkFromBelow() {
        // 200 KB delivered within two round trips: not a rate measure, but the link carried it.
        var o = clean(); o.bytes = 200_000; o.rttSeconds = 0.01; o.transferSeconds = 0.02; o.firstByteSeconds = 0.01
        let v = c.classify(o)
        #expect(v.reasons == [.tooFewRoundTrips])
        #expect(abs((v.lowerBoundBps ?? 0) - 200_000 * 8 / 0.03) < 1)
        // A network-limited sample's evidence is its transfer throughput, with no lower bound needed.
        #expect(c.classify(clean()).lowerBoundBps == nil)
        #expect(c.classify(clean()).evidenceBps == c.classify(clean()).throughputBps)
    }

    @Test func firstByteDominated_largeTransfer_givesWholeRequestLowerBound() {
        // A fast link behind a slow server: 1 MB in 10 ms after 40 ms of waiting.
        var o = clean(); o.bytes = 1_000_000; o.transferSeconds = 0.01; o.firstByteSeconds = 0.04; o.rttSeconds = 0.001
        let v = c.classify(o)
        #expect(v.reasons == [.firstByteDominated])
        #expect(!v.isNetworkLimited)
        #expect(v.throughputBps == 800_000_000)
        // Over the whole 50 ms request: 160 Mbit/s, which the link certainly carries.
        #expect(abs((v.lowerBoundBps ?? 0) - 160_000_000) < 1)
        #expect(v.evidenceBps == v.lowerBoundBps)
    }

    @Test func smallFirstByteDominatedTransfer_notCounted_forSeveralReasons() {
        // A 20 KB playlist-sized transfer: 300 ms to first byte, 20 ms of body.
        let o = TransferObservation(bytes: 20_000, transferSeconds: 0.02, firstByteSeconds: 0.3, rttSeconds: 0.05)
        #expect(c.classify(o).reasons == [.tooFewBytes, .tooFewRoundTrips, .firstByteDominated])
        // Too small to bound the link from below either.
        #expect(c.classify(o).evidenceBps == nil)
    }

    @Test func readPause_justUnderTenPercent_counts_atTenPercent_paused() {
        var o = clean(); o.readPauseSeconds = 0.199
        #expect(c.classify(o).isNetworkLimited)
        o.readPauseSeconds = 0.2
        #expect(c.classify(o).reasons == [.readingPaused])
    }

    @Test func liveEdge_justUnderOnePointFiveMediaRate_producerPaced_atIt_counts() {
        // 4 Mbps throughput; media 2.667 Mbps → ratio 1.4999 < 1.5 (paced); media 2.6667 → exactly 1.5 (counts).
        var o = clean(); o.isLiveEdgeSegment = true; o.mediaBitrateBps = 4_000_000 / 1.4999
        #expect(c.classify(o).reasons == [.liveEdgeProducerPaced])
        o.mediaBitrateBps = 4_000_000 / 1.5
        #expect(c.classify(o).isNetworkLimited)
    }

    @Test func liveEdge_notNewestSegment_notJudged() {
        var o = clean(); o.isLiveEdgeSegment = false; o.mediaBitrateBps = 4_000_000
        #expect(c.classify(o).isNetworkLimited)
    }

    @Test func tcpAppLimited_flag() {
        var o = clean(); o.tcpAppLimited = true
        #expect(c.classify(o).reasons == [.tcpAppLimited])
        o.tcpAppLimited = false
        #expect(c.classify(o).isNetworkLimited)
        o.tcpAppLimited = nil
        #expect(c.classify(o).isNetworkLimited)
    }

    @Test func overSelectionRatio_rungOverThroughput() {
        var o = clean(); o.mediaBitrateBps = 33_808_000
        #expect(abs(o.overSelectionRatio! - 8.452) < 1e-9)
        o.mediaBitrateBps = nil
        #expect(o.overSelectionRatio == nil)
    }

    @Test func verdictRecord_encodesReasons() {
        var o = clean(); o.tcpAppLimited = true
        let line = SessionLogEncoder().line(SampleVerdictRecord(requestID: 7, observation: o, verdict: c.classify(o)))
        #expect(line.contains("\"reasons\":[\"tcp-app-limited\"]"))
    }
}
