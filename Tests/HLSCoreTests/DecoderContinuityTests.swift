import Testing
@testable import HLSCore

/// When a track's decoder carries over a segment boundary, and where a new one starts.
@Suite struct DecoderContinuityTests {
    let v0d0 = DecoderEpoch(variantIndex: 0, discontinuitySequence: 0)
    let v0d1 = DecoderEpoch(variantIndex: 0, discontinuitySequence: 1)
    let v1d0 = DecoderEpoch(variantIndex: 1, discontinuitySequence: 0)

    @Test func sameVariantAndDiscontinuity_compatibleFormat_carriesOver() {
        // A segment that begins mid-GOP: its probe saw no dimensions, which counts as compatible.
        #expect(DecoderContinuity.openReason(open: v0d0, last: v0d0, packet: v0d0, formatCompatible: true) == nil)
    }

    @Test func firstDecoder_isAStart() {
        #expect(DecoderContinuity.openReason(open: nil, last: nil, packet: v0d0, formatCompatible: false) == .start)
    }

    @Test func otherVariant_isASwitch_evenAfterTheOldDecoderClosed() {
        #expect(DecoderContinuity.openReason(open: v0d0, last: v0d0, packet: v1d0, formatCompatible: true) == .variantSwitch)
        // Closed when the variant's track moved to an audio-only variant; video comes back on variant 1.
        #expect(DecoderContinuity.openReason(open: nil, last: v0d0, packet: v1d0, formatCompatible: false) == .variantSwitch)
    }

    @Test func backOnTheSameVariant_afterItsDecoderClosed_isASwitch() {
        // Video closed when the variant's track went to an audio-only variant, and comes back on variant 0.
        #expect(DecoderContinuity.openReason(open: nil, last: v0d0, packet: v0d0, formatCompatible: false) == .variantSwitch)
    }

    @Test func otherDiscontinuitySequence_isADiscontinuity_evenWithTheSameFormat() {
        #expect(DecoderContinuity.openReason(open: v0d0, last: v0d0, packet: v0d1, formatCompatible: true) == .discontinuity)
    }

    @Test func incompatibleFormat_withinOneEpoch_isAFormatChange() {
        #expect(DecoderContinuity.openReason(open: v0d0, last: v0d0, packet: v0d0, formatCompatible: false) == .formatChange)
    }

    @Test func audio_startsAtAnyPacket_video_atAKeyframe() {
        #expect(DecoderContinuity.startsHere(isVideo: false, isKeyframe: false, skippedSeconds: 0))
        #expect(DecoderContinuity.startsHere(isVideo: true, isKeyframe: true, skippedSeconds: 0))
        #expect(!DecoderContinuity.startsHere(isVideo: true, isKeyframe: false, skippedSeconds: 0))
    }

    @Test func video_withoutAnyKeyframe_startsAfterTheWaitLimit() {
        let limit = DecoderContinuity.maximumKeyframeWaitSeconds
        #expect(!DecoderContinuity.startsHere(isVideo: true, isKeyframe: false, skippedSeconds: limit - 0.01))
        #expect(DecoderContinuity.startsHere(isVideo: true, isKeyframe: false, skippedSeconds: limit))
    }
}
