import Foundation
import Testing
@testable import HLSMedia

/// When the decode loop must reopen a decoder: CodecParameters.sameFormat on real segments.
@Suite(.serialized) struct CodecParametersTests {
    @Test func sameFormat_sameStreamAcrossSegments_yes_otherRungOrCodec_no() throws {
        let fixtures = try Fixtures.get()
        let a = try SegmentDemuxer.demux(segment: fixtures.segment(rung: 1, index: 0))
        let b = try SegmentDemuxer.demux(segment: fixtures.segment(rung: 1, index: 1))
        let other = try SegmentDemuxer.demux(segment: fixtures.segment(rung: 0, index: 1))
        let va = try #require(a.track(.video)), vb = try #require(b.track(.video)), vo = try #require(other.track(.video))
        // MPEG-TS: Annex-B extradata may differ per segment; the parameter sets travel in band.
        #expect(va.sameFormat(as: vb))
        #expect(!va.sameFormat(as: vo), "640x360 and 416x234 need separate decoders")
        let audio = try #require(a.track(.audio))
        #expect(!va.sameFormat(as: audio))
        #expect(audio.sameFormat(as: try #require(b.track(.audio))))
    }

    @Test func sameFormat_fmp4_sameInitSection_yes() throws {
        let fixtures = try Fixtures.get()
        let initData = try Data(contentsOf: fixtures.fmp4Init)
        let one = try SegmentDemuxer.demux(segment: Data(contentsOf: fixtures.fmp4Segment), initializationSection: initData, hint: .fragmentedMP4)
        let two = try SegmentDemuxer.demux(segment: Data(contentsOf: fixtures.fmp4Segment), initializationSection: initData, hint: .fragmentedMP4)
        #expect(try #require(one.track(.video)).sameFormat(as: try #require(two.track(.video))))
    }
}
