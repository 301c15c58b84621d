import Testing
@testable import HLSCore

/// The media clock in virtual time.
@Suite struct PlaybackTimelineTests {
    func t(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: 100 + s) }

    @Test func start_needsFirstFrameAndStartupBuffer() {
        var p = PlaybackTimeline(configuration: .init(startupBufferSeconds: 2, resumeBufferSeconds: 4))
        #expect(p.appendBuffered(upTo: 1.999, at: t(0)).isEmpty)
        #expect(p.markFirstFrameDecoded(at: t(0.1)).isEmpty) // first frame, but 1.999 s < 2 s
        let actions = p.appendBuffered(upTo: 2.0, at: t(0.2)) // at the threshold
        #expect(actions == [.started(at: t(0.2), positionSeconds: 0, bufferSeconds: 2.0)])
        #expect(p.phase == .playing)
    }

    @Test func clock_advancesAtWallRate_whilePlaying() {
        var p = PlaybackTimeline()
        _ = p.appendBuffered(upTo: 10, at: t(0))
        _ = p.markFirstFrameDecoded(at: t(1))
        #expect(abs(p.positionSeconds(at: t(4)) - 3) < 1e-9)
        #expect(abs(p.bufferSeconds(at: t(4)) - 7) < 1e-9)
    }

    @Test func stall_startsExactlyWhenBufferRunsDry_evenWithLateTick() {
        var p = PlaybackTimeline()
        _ = p.appendBuffered(upTo: 4, at: t(0))
        _ = p.markFirstFrameDecoded(at: t(0))
        // The tick comes 0.7 s after the buffer ran dry at t(4).
        let actions = p.advance(to: t(4.7))
        #expect(actions == [.stallStarted(at: t(4), positionSeconds: 4)])
        #expect(p.phase == .stalled)
        #expect(p.positionSeconds(at: t(10)) == 4) // frozen
        #expect(p.bufferSeconds(at: t(10)) == 0)
    }

    @Test func resume_justUnderThresholdWaits_atThresholdResumes_withStallDuration() {
        var p = PlaybackTimeline(configuration: .init(startupBufferSeconds: 2, resumeBufferSeconds: 4))
        _ = p.appendBuffered(upTo: 2, at: t(0))
        _ = p.markFirstFrameDecoded(at: t(0))
        _ = p.advance(to: t(2.5)) // dry at t(2)
        #expect(p.appendBuffered(upTo: 5.999, at: t(3)).isEmpty)
        let actions = p.appendBuffered(upTo: 6, at: t(3.5))
        #expect(actions == [.stallEnded(at: t(3.5), positionSeconds: 2, stallSeconds: 1.5, bufferSeconds: 4)])
        #expect(p.stallCount == 1)
        #expect(abs(p.totalStallSeconds - 1.5) < 1e-9)
        #expect(abs(p.positionSeconds(at: t(4.5)) - 3) < 1e-9)
    }

    @Test func appendArrivingAfterDryInstant_stillCountsTheStall() {
        var p = PlaybackTimeline()
        _ = p.appendBuffered(upTo: 2, at: t(0))
        _ = p.markFirstFrameDecoded(at: t(0))
        // No tick in between: the next segment arrives 0.5 s after the buffer ran dry.
        let actions = p.appendBuffered(upTo: 10, at: t(2.5))
        #expect(actions.first == .stallStarted(at: t(2), positionSeconds: 2))
        #expect(actions.count == 2)
        #expect(p.phase == .playing)
        #expect(abs(p.totalStallSeconds - 0.5) < 1e-9)
    }

    @Test func endOfStream_endsWithoutStall() {
        var p = PlaybackTimeline()
        _ = p.appendBuffered(upTo: 3, at: t(0))
        _ = p.markEndOfStream(at: t(0))
        _ = p.markFirstFrameDecoded(at: t(0))
        let actions = p.advance(to: t(5))
        #expect(actions == [.ended(at: t(3), positionSeconds: 3)])
        #expect(p.stallCount == 0)
    }

    @Test func endOfStream_shortContentStartsBelowStartupThreshold() {
        var p = PlaybackTimeline(configuration: .init(startupBufferSeconds: 2, resumeBufferSeconds: 4))
        _ = p.appendBuffered(upTo: 1, at: t(0))
        _ = p.markFirstFrameDecoded(at: t(0))
        let actions = p.markEndOfStream(at: t(0.5))
        #expect(actions == [.started(at: t(0.5), positionSeconds: 0, bufferSeconds: 1)])
    }

    @Test func finish_closesOpenStall() {
        var p = PlaybackTimeline()
        _ = p.appendBuffered(upTo: 2, at: t(0))
        _ = p.markFirstFrameDecoded(at: t(0))
        _ = p.advance(to: t(3))
        let actions = p.finish(at: t(5))
        #expect(actions == [.stallEnded(at: t(5), positionSeconds: 2, stallSeconds: 3, bufferSeconds: 0)])
        #expect(p.phase == .ended)
    }

    @Test func startPosition_liveStartsMidTimeline() {
        var p = PlaybackTimeline()
        p.setStartPosition(14)
        _ = p.appendBuffered(upTo: 18, at: t(0))
        _ = p.markFirstFrameDecoded(at: t(0))
        #expect(abs(p.positionSeconds(at: t(1)) - 15) < 1e-9)
        #expect(abs(p.playedSeconds(at: t(1)) - 1) < 1e-9)
    }

    /// A seek (live resync): playing with 6 s ahead, the buffer is dropped at
    /// the playhead, a stall starts at that instant, and new media appended
    /// from the playhead resumes at the resume threshold.
    @Test func discardBuffered_whilePlaying_stallsAtOnce_resumesFromPlayhead() {
        var p = PlaybackTimeline(configuration: .init(startupBufferSeconds: 2, resumeBufferSeconds: 4))
        _ = p.appendBuffered(upTo: 10, at: t(0))
        _ = p.markFirstFrameDecoded(at: t(0))
        let actions = p.discardBuffered(at: t(4))
        #expect(actions == [.stallStarted(at: t(4), positionSeconds: 4)])
        #expect(p.bufferedEndSeconds == 4)
        #expect(p.positionSeconds(at: t(6)) == 4)
        #expect(p.appendBuffered(upTo: 7.999, at: t(5)).isEmpty)
        #expect(p.appendBuffered(upTo: 8, at: t(5.5)) == [.stallEnded(at: t(5.5), positionSeconds: 4, stallSeconds: 1.5, bufferSeconds: 4)])
    }

    /// While stalled or starting up there is nothing ahead to drop: no action, position kept.
    @Test func discardBuffered_whileStalled_keepsPositionAndStall() {
        var p = PlaybackTimeline()
        _ = p.appendBuffered(upTo: 4, at: t(0))
        _ = p.markFirstFrameDecoded(at: t(0))
        _ = p.advance(to: t(5))
        #expect(p.phase == .stalled)
        #expect(p.discardBuffered(at: t(6)).isEmpty)
        #expect(p.phase == .stalled)
        #expect(p.positionSeconds(at: t(6)) == 4)
        #expect(p.stallCount == 1)
    }
}
