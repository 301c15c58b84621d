import Testing

@testable import HLSCore

/// `AlternateAudioRules.nextStep`: an alternate audio rendition's next step beside the variant, VOD and live.
@Suite struct AlternateAudioRulesTests {
    typealias Buffered = AlternateAudioRules.BufferedSegment

    static func vod() throws -> (MediaPlaylist, SegmentTimeline) {
        let playlist = try LiveLoaderStepTests.window(first: 0, count: 4, ended: true)
        var timeline = SegmentTimeline()
        _ = timeline.update(with: playlist)
        return (playlist, timeline)
    }

    static func step(
        _ playlist: MediaPlaylist?, timeline: SegmentTimeline = SegmentTimeline(), next: Int? = nil, mainEnd: Double, audioEnd: Double,
        mainEnded: Bool = false, variant: [Buffered] = [], sinceReload: Double? = 0.1
    ) -> (step: AlternateAudioRules.Step, nextMediaSequence: Int?) {
        AlternateAudioRules.nextStep(
            playlist: playlist, timeline: timeline, nextMediaSequence: next, mainEndSeconds: mainEnd, audioEndSeconds: audioEnd,
            mainEnded: mainEnded, variantSegments: variant, secondsSinceReload: sinceReload)
    }

    @Test func notBehindTheVariant_waits_evenWithoutAPlaylist() {
        #expect(Self.step(nil, mainEnd: 4, audioEnd: 4).step == .wait)
        #expect(Self.step(nil, mainEnd: 4, audioEnd: 3.9995).step == .wait, "within the millisecond tolerance")
        #expect(Self.step(nil, mainEnd: 4, audioEnd: 3).step == .loadPlaylist)
    }

    @Test func vod_nextSegmentByTimeOnItsOwnTimeline_thenTheEnd() throws {
        let (playlist, timeline) = try Self.vod()
        #expect(Self.step(playlist, timeline: timeline, mainEnd: 3, audioEnd: 0).step == .load(index: 0, startSeconds: 0))
        // An audio end inside a segment: that segment is the next (its boundaries need not be the variant's).
        #expect(Self.step(playlist, timeline: timeline, mainEnd: 3, audioEnd: 1.5).step == .load(index: 1, startSeconds: 1))
        // The variant ended: the audio loads on to its own end, then ends.
        #expect(Self.step(playlist, timeline: timeline, mainEnd: 3, audioEnd: 3, mainEnded: true).step == .load(index: 3, startSeconds: 3))
        #expect(Self.step(playlist, timeline: timeline, mainEnd: 3, audioEnd: 4, mainEnded: true).step == .endTrack)
    }

    @Test func live_alignsOnTheVariantsSegmentWhereTheAudioEnds_andFollowsItsNumber() throws {
        let playlist = try LiveLoaderStepTests.window(first: 40, count: 6)
        let variant = [Buffered(mediaSequence: 42, startSeconds: 10), Buffered(mediaSequence: 43, startSeconds: 11)]
        let first = Self.step(playlist, mainEnd: 12, audioEnd: 10.02, variant: variant)
        #expect(first.step == .load(index: 2, startSeconds: 10))
        #expect(first.nextMediaSequence == 42)
        // Already aligned: the number it follows, placed where the variant's segment starts.
        #expect(Self.step(playlist, next: 43, mainEnd: 12, audioEnd: 11, variant: variant).step == .load(index: 3, startSeconds: 11))
        // Nothing of the variant at or after the audio's end: wait, still unaligned.
        let none = Self.step(playlist, mainEnd: 12, audioEnd: 11.5, variant: variant)
        #expect(none.step == .wait)
        #expect(none.nextMediaSequence == nil)
    }

    @Test func live_waitsForTheVariantsSegment_orAlignsAgainWhenTheVariantWentPastIt() throws {
        let playlist = try LiveLoaderStepTests.window(first: 40, count: 6)
        let variant = [Buffered(mediaSequence: 42, startSeconds: 10), Buffered(mediaSequence: 44, startSeconds: 12)]
        let ahead = Self.step(playlist, next: 45, mainEnd: 13, audioEnd: 12, variant: variant)
        #expect(ahead.step == .wait)
        #expect(ahead.nextMediaSequence == 45, "not buffered yet: keeps following it")
        let skipped = Self.step(playlist, next: 43, mainEnd: 13, audioEnd: 11, variant: variant)
        #expect(skipped.step == .wait)
        #expect(skipped.nextMediaSequence == nil, "the variant skipped 43: align again")
    }

    @Test func live_segmentLeftTheRenditionsWindow_isSkipped_theNextFollows() throws {
        let playlist = try LiveLoaderStepTests.window(first: 44, count: 6)
        let variant = [Buffered(mediaSequence: 42, startSeconds: 10)]
        let expired = Self.step(playlist, next: 42, mainEnd: 11, audioEnd: 10, variant: variant)
        #expect(expired.step == .skipExpired(mediaSequence: 42))
        #expect(expired.nextMediaSequence == 43)
    }

    @Test func live_segmentNotListedYet_reloadsWhenDue_halfATargetDurationAfterTheLast() throws {
        let playlist = try LiveLoaderStepTests.window(first: 40, count: 6)
        let variant = [Buffered(mediaSequence: 46, startSeconds: 14)]
        #expect(Self.step(playlist, next: 46, mainEnd: 15, audioEnd: 14, variant: variant, sinceReload: 0.4).step == .wait)
        #expect(Self.step(playlist, next: 46, mainEnd: 15, audioEnd: 14, variant: variant, sinceReload: 0.5).step == .loadPlaylist)
        #expect(Self.step(playlist, next: 46, mainEnd: 15, audioEnd: 14, variant: variant, sinceReload: nil).step == .loadPlaylist)
    }
}
