// Hostile numbers below the parser: what a parsed playlist cannot reach any more, a hand-built
// value, a media timestamp, a steering TTL or a log file still can. None of it may trap (SIGILL,
// exit 132): conversions saturate (`Int(saturating:)`, `MonotonicInstant.advanced(bySeconds:)`)
// and sums are checked (docs/hardening.md, "Hostile numbers").

import Foundation
import Testing
@testable import HLSCore

/// The arithmetic below the parser: what a parsed playlist cannot reach any more, a hand-built
/// value, a media timestamp, a steering TTL or a log file still can; none of it may trap.
@Suite struct HostileNumberArithmeticTests {
    @Test func intSaturating_clampsAndMapsNaNToZero() {
        #expect(Int(saturating: .nan) == 0)
        #expect(Int(saturating: .infinity) == .max)
        #expect(Int(saturating: -.infinity) == .min)
        #expect(Int(saturating: 9_223_372_036_854_775_808.0) == .max) // 2^63
        #expect(Int(saturating: -9_223_372_036_854_775_808.0) == .min)
        #expect(Int(saturating: 1e300) == .max)
        #expect(Int(saturating: 42.9) == 42)
        #expect(Int(saturating: -42.9) == -42)
        #expect(UInt64(saturating: -1) == 0)
        #expect(UInt64(saturating: 1.9e19) == .max)
        #expect(UInt32(saturating: 5e9) == .max)
        #expect(Int.max.saturatingAdd(1) == .max)
        #expect(Int.min.saturatingAdd(-1) == .min)
        #expect((Int.max / 2).saturatingMultiply(3) == .max)
        #expect((Int.max / 2).saturatingMultiply(-3) == .min)
    }

    /// Before: `Int64((s * 1e9).rounded())` trapped for |s| ≥ 9.22e9 s, infinity and NaN.
    @Test func monotonicInstant_advancedByHugeSeconds_saturates() {
        let t = MonotonicInstant(nanoseconds: 5_000_000_000)
        #expect(t.advanced(bySeconds: 1e11).nanoseconds == .max)
        #expect(t.advanced(bySeconds: 1e300).nanoseconds == .max)
        #expect(t.advanced(bySeconds: .infinity).nanoseconds == .max)
        #expect(t.advanced(bySeconds: -1e11).nanoseconds == 0)
        #expect(t.advanced(bySeconds: -.infinity).nanoseconds == 0)
        #expect(t.advanced(bySeconds: .nan) == t)
        #expect(t.advanced(bySeconds: 1.5).nanoseconds == 6_500_000_000)
        #expect(t.advanced(bySeconds: -6).nanoseconds == 0)
        #expect(MonotonicInstant(nanoseconds: .max - 1).advanced(bySeconds: 1).nanoseconds == .max) // was a wrap to 999 999 998
        #expect(MonotonicInstant(seconds: 1e300).nanoseconds == .max)
        #expect(MonotonicInstant(seconds: .nan).nanoseconds == 0)
        #expect(MonotonicInstant(seconds: -3).nanoseconds == 0)
    }

    /// The crash of `hlsplay URL` on EXTINF:100000000000.0: the segment bound's tolerance
    /// ((burst − 1) × an interval of 5e10 s) moved the schedule back beyond Int64 nanoseconds.
    @Test func requestRateBound_admitUnderAHugeInterval_doesNotTrap() {
        let now = MonotonicInstant(nanoseconds: 1_000_000_000)
        // The crash: no trap any more (the schedule saturates at the clock's end).
        var hostile = RequestRateBound()
        let huge = RequestRateRules.limit(for: .segment, inputs: RequestRateInputs(meanSegmentDurationSeconds: 1e11, forwardBufferTargetSeconds: 30))
        #expect(huge.minimumIntervalSeconds == 5e10)
        for _ in 0...huge.burst + 2 { _ = hostile.admit(.segment, limit: huge, at: now) }
        // What a parsed playlist can reach (EXTINF at its 10^6 s bound) still paces: the burst, then a wait of an interval.
        var bound = RequestRateBound()
        let longest = RequestRateRules.limit(
            for: .segment, inputs: RequestRateInputs(meanSegmentDurationSeconds: 1e6, forwardBufferTargetSeconds: 30))
        for _ in 0..<longest.burst { #expect(bound.admit(.segment, limit: longest, at: now).waitSeconds == 0) }
        let held = bound.admit(.segment, limit: longest, at: now)
        #expect(abs(held.waitSeconds - 500_000) < 1e-6)
        #expect(huge.maximumRequests(inSeconds: 1e300) == .max)
        let floor = RequestRateRules.limit(for: .segment, inputs: RequestRateInputs(forwardBufferTargetSeconds: 30))
        #expect(floor.maximumRequests(inSeconds: .infinity) == .max)
    }

    /// A steering manifest's TTL is any finite JSON number: 1e300 s scheduled the next load through
    /// the monotonic conversion (exit 132 while playing).
    @Test func steeringTTL1e300_schedulesAtTheEndOfTime() throws {
        let playlist = try multivariant(
            "#EXTM3U\n#EXT-X-CONTENT-STEERING:SERVER-URI=\"s.json\",PATHWAY-ID=\"A\"\n#EXT-X-STREAM-INF:BANDWIDTH=1,PATHWAY-ID=\"A\"\nv.m3u8\n")
        let now = MonotonicInstant(nanoseconds: 1_000)
        var client = try #require(ContentSteeringClient(playlist: playlist, at: now))
        let manifest = try SteeringManifest.parse(
            Data(#"{"VERSION":1,"TTL":1e300,"PATHWAY-PRIORITY":["A"]}"#.utf8),
            manifestURL: URL(string: "http://example.com/s.json")!)
        _ = client.manifestLoaded(manifest, playlist: playlist, excludedPathways: [:], at: now)
        #expect(client.nextReload?.nanoseconds == .max)
        #expect(!client.isReloadDue(at: MonotonicInstant(nanoseconds: .max - 1)))
        #expect(client.requestURL(throughputBps: 1e300).absoluteString.contains("_HLS_throughput=9223372036854775807"))
    }

    /// A delta whose skip reaches past Int.max (only a hand-built value can: the parser bounds both).
    @Test func deltaMerge_skipPastIntMax_throwsMissingSegment() {
        let previous = MediaPlaylist(
            baseURL: testBase, targetDurationSeconds: 2, mediaSequence: .max - 1,
            segments: [MediaSegment(mediaSequence: .max - 1, uri: testBase, durationSeconds: 2)])
        let delta = MediaPlaylist(
            baseURL: testBase, targetDurationSeconds: 2, mediaSequence: .max - 1,
            skip: SkipInfo(skippedSegments: .max))
        #expect(throws: DeltaUpdateError.self) { try LowLatencyRules.merge(delta: delta, into: previous) }
        let error = DeltaUpdateError.skippedSegmentMissing(msn: .max, skippedFirst: .max - 1, skippedCount: .max)
        #expect(error.description.contains("9223372036854775807"))
    }

    @Test func byteRange_httpRangeOfAHandBuiltRange_saturates() {
        #expect(ByteRange(length: 100, offset: 10).httpRange == "10-109")
        #expect(ByteRange(length: 100, offset: nil).httpRange == "0-99")
        #expect(ByteRange(length: 0, offset: 10).httpRange == "10-10")
        #expect(ByteRange(length: Int.max, offset: 10).httpRange == "10-9223372036854775807")
        #expect(ByteRange(length: Int.max, offset: 10).endByte == .max)
    }

    @Test func cmcdAndTrickle_hugeInputs_saturate() {
        #expect(CMCDData.bufferLengthMs(seconds: 1e300) == .max)
        #expect(CMCDData.bufferLengthMs(seconds: .nan) == 0)
        #expect(CMCDData.throughputKbps(bps: .infinity) == .max)
        // 2^53 bit/s × 10^6 s / 8 does not fit Int.
        let s = TrickleSnapshot(
            bytesReceived: 1, bytesExpected: nil, rungBitrateBps: 9_007_199_254_740_991,
            segmentDurationSeconds: 1e6, elapsedSeconds: 4,
            secondsSinceLastByte: 0.1, averageRateBps: 1_000_000, recentRateBps: nil, rateWindowSeconds: 7,
            forwardBufferSeconds: 0, waitedSeconds: 4, lowerRungAvailable: false, reRequestsSoFar: 0,
            wedgeWindowSeconds: 3.5)
        #expect(TrickleClassifier().classify(s).expectedBytes == .max)
    }
}
