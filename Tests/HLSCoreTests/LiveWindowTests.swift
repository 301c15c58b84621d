import Foundation
import Testing
@testable import HLSCore

/// Short live windows and what real packagers write for short segments: the target duration the live rules
/// use, the start point, the reload cadence, the window warning and the thresholds clamped to the window.
@Suite struct LiveWindowTests {
    func t(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: 100 + s) }

    /// A live CMAF window as FFmpeg's hls muxer writes it for 0.25 s segments: EXT-X-TARGETDURATION:0
    /// (RFC 8216 §4.3.3.1 compares EXTINF rounded to the nearest integer, and 0.25 rounds to 0).
    static func shortWindow(targetDuration: Int = 0, segments: Int = 6, first: Int = 40) -> String {
        var lines = [
            "#EXTM3U", "#EXT-X-VERSION:7", "#EXT-X-TARGETDURATION:\(targetDuration)", "#EXT-X-MEDIA-SEQUENCE:\(first)",
            "#EXT-X-MAP:URI=\"init.mp4\""
        ]
        for k in first..<(first + segments) { lines += ["#EXTINF:0.250000,", "seg_\(k).m4s"] }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func targetDurationZero_rulesUseTheLongestSegment() throws {
        let p = try media(Self.shortWindow(targetDuration: 0))
        #expect(p.targetDurationSeconds == 0)
        #expect(LivePlaylistRules.targetDurationSeconds(for: p) == 0.25)
        // Written larger than the segments: as written.
        #expect(LivePlaylistRules.targetDurationSeconds(for: try media(Self.shortWindow(targetDuration: 2))) == 2)
        // Nothing positive anywhere: the fallback.
        let empty = try media("#EXTM3U\n#EXT-X-TARGETDURATION:0\n")
        #expect(LivePlaylistRules.targetDurationSeconds(for: empty) == LivePlaylistRules.fallbackTargetDurationSeconds)
    }

    @Test func targetDurationZero_startIsAValidSegmentThreeSegmentDurationsFromTheEnd() throws {
        let p = try media(Self.shortWindow(targetDuration: 0))
        let index = LivePlaylistRules.startSegmentIndex(for: p)
        #expect(index < p.segments.count, "was segments.count: one past the last segment")
        #expect(index == 3, "3 × 0.25 s from the end of six 0.25 s segments")
    }

    @Test func holdBackLongerThanTheWindow_startsAtTheFirstSegment() throws {
        // TARGETDURATION 1 over a 1.5 s window: three target durations is 3 s, more than there is.
        let p = try media(Self.shortWindow(targetDuration: 1))
        #expect(LivePlaylistRules.startSegmentIndex(for: p) == 0)
    }

    @Test func reloadDelayIsNeverZero() {
        #expect(
            LivePlaylistRules.reloadDelaySeconds(targetDurationSeconds: 0, playlistChanged: true) == LivePlaylistRules.fallbackTargetDurationSeconds)
        #expect(
            LivePlaylistRules.reloadDelaySeconds(targetDurationSeconds: 0, playlistChanged: false) == LivePlaylistRules.fallbackTargetDurationSeconds
                / 2)
        #expect(LivePlaylistRules.reloadDelaySeconds(targetDurationSeconds: 0.25, playlistChanged: false) == 0.125)
    }

    @Test func windowShorterThanThreeTargetDurations_isAWarningWithItsInputs() throws {
        let p = try media(Self.shortWindow(targetDuration: 1))
        #expect(LivePlaylistRules.windowSeconds(of: p) == 1.5)
        let warning = try #require(LivePlaylistRules.shortWindow(p))
        #expect(warning.windowSeconds == 1.5)
        #expect(warning.minimumWindowSeconds == 3)
        #expect(warning.segments == 6)
        #expect(warning.targetDurationSeconds == 1)
        #expect(warning.warning.contains("RFC 8216 §6.2.2"))
        // Twelve 0.25 s segments are exactly three target durations: not short.
        #expect(LivePlaylistRules.shortWindow(try media(Self.shortWindow(targetDuration: 1, segments: 12))) == nil)
        // With the target duration FFmpeg writes (0), the rules' 0.25 s makes 1.5 s six of them: not short.
        #expect(LivePlaylistRules.shortWindow(try media(Self.shortWindow(targetDuration: 0))) == nil)
        // An ended playlist has no live window.
        #expect(LivePlaylistRules.shortWindow(try media(Self.shortWindow(targetDuration: 1) + "#EXT-X-ENDLIST\n")) == nil)
    }

    @Test func startThresholdAboveTheWindow_isClampedToIt_andPlaybackStarts() throws {
        // The policy controller asked for a 4 s start; the window holds 1.5 s.
        var p = PlaybackTimeline(configuration: .init(startupBufferSeconds: 4, resumeBufferSeconds: 4))
        let ceiling = try #require(PlaybackThresholdCeiling.live(try media(Self.shortWindow(targetDuration: 1))))
        #expect(ceiling.basis == .liveWindow)
        #expect(ceiling.seconds == 1.5)
        p.setThresholdCeiling(ceiling)
        #expect(p.startupThresholdSeconds == 1.5)
        #expect(p.configuration.startupBufferSeconds == 4, "what was asked for is kept")
        #expect(
            p.clampedThresholds == [
                ThresholdClamp(threshold: .startup, requestedSeconds: 4, clampedSeconds: 1.5, ceiling: ceiling),
                ThresholdClamp(threshold: .resume, requestedSeconds: 4, clampedSeconds: 1.5, ceiling: ceiling)
            ])
        _ = p.markFirstFrameDecoded(at: t(0))
        // Six 0.25 s segments added one by one: the start comes with the last.
        var actions: [PlaybackAction] = []
        var end = 0.0
        for k in 0..<6 {
            end += 0.25
            actions = p.appendBuffered(upTo: end, at: t(0.1 * Double(k + 1)))
            if k < 5 { #expect(actions.isEmpty) }
        }
        #expect(actions == [.started(at: t(0.6), positionSeconds: 0, bufferSeconds: 1.5)])
        #expect(p.clampedThresholds.map(\.threshold) == [.resume], "the startup threshold no longer applies once playing")
    }

    @Test func resumeThresholdAboveTheWindow_isClampedToIt() throws {
        var p = PlaybackTimeline(configuration: .init(startupBufferSeconds: 1, resumeBufferSeconds: 4))
        p.setThresholdCeiling(PlaybackThresholdCeiling(basis: .liveWindow, seconds: 1.5))
        _ = p.appendBuffered(upTo: 1, at: t(0))
        _ = p.markFirstFrameDecoded(at: t(0))
        _ = p.advance(to: t(1.5)) // dry at t(1)
        #expect(p.phase == .stalled)
        #expect(p.appendBuffered(upTo: 2.4, at: t(2)).isEmpty)
        #expect(p.appendBuffered(upTo: 2.5, at: t(2.5)) == [.stallEnded(at: t(2.5), positionSeconds: 1, stallSeconds: 1.5, bufferSeconds: 1.5)])
    }

    @Test func thresholdsBelowTheCeiling_areNotClamped() {
        var p = PlaybackTimeline(configuration: .init(startupBufferSeconds: 2, resumeBufferSeconds: 4))
        p.setThresholdCeiling(.vod(remainingSeconds: 30))
        #expect(p.clampedThresholds.isEmpty)
        #expect(p.startupThresholdSeconds == 2)
        #expect(p.resumeThresholdSeconds == 4)
        p.setThresholdCeiling(.vod(remainingSeconds: 1))
        #expect(p.clampedThresholds.map(\.clampedSeconds) == [1, 1])
        #expect(p.clampedThresholds.first?.ceiling?.basis == .remainingVOD)
        p.setThresholdCeiling(nil)
        #expect(p.clampedThresholds.isEmpty)
    }

    // MARK: LL-HLS reload pacing

    @Test func llhlsReloads_waitHalfAPartTargetAfterTheLastStart_andAPartTargetAfterAnAnswerThatDidNotAdvance() throws {
        let p = try LowLatencyRulesTests.playlist(LowLatencyRulesTests.text()) // PART-TARGET=0.5
        #expect(LowLatencyRules.minimumReloadIntervalSeconds(for: p) == 0.25)
        // The first reload: nothing to wait for.
        #expect(LowLatencyRules.reloadWaitSeconds(for: p, secondsSinceLastRequest: nil, secondsSinceLastAnswer: nil, lastAnswerAdvanced: true) == 0)
        // A blocking server held the last one for a part: go at once.
        #expect(LowLatencyRules.reloadWaitSeconds(for: p, secondsSinceLastRequest: 0.5, secondsSinceLastAnswer: 0, lastAnswerAdvanced: true) == 0)
        // It answered at once (and advanced): the rest of half a part target.
        #expect(
            abs(
                LowLatencyRules.reloadWaitSeconds(for: p, secondsSinceLastRequest: 0.05, secondsSinceLastAnswer: 0.04, lastAnswerAdvanced: true) - 0.2
            ) < 1e-9)
        // It answered at once without the part asked for (a server that does not block): a part target after the answer.
        #expect(
            abs(
                LowLatencyRules.reloadWaitSeconds(for: p, secondsSinceLastRequest: 0.05, secondsSinceLastAnswer: 0.04, lastAnswerAdvanced: false)
                    - 0.46) < 1e-9)
    }

    @Test func llhlsReloads_withDeltaUpdatesOff_neverAskForSkip() throws {
        let p = try LowLatencyRulesTests.playlist(LowLatencyRulesTests.text()) // CAN-SKIP-UNTIL=12
        #expect(LowLatencyRules.nextReload(after: p, playlistAgeSeconds: 1)?.skip == .yes)
        let full = try #require(LowLatencyRules.nextReload(after: p, playlistAgeSeconds: 1, deltaUpdates: false))
        #expect(full.skip == nil)
        #expect(full.msn == 15)
        #expect(full.part == 2)
    }
}

/// The live loader's next step (`LivePlaylistRules.nextStep`) and a gone segment's expiry (`hasExpired`): what
/// `PlayerSession.liveLoop` performs for the segment it wants next.
@Suite struct LiveLoaderStepTests {
    /// A 6 s live window, segments 40…45 of 1 s (TARGETDURATION 1).
    static func window(first: Int = 40, count: Int = 6, ended: Bool = false) throws -> MediaPlaylist {
        var lines = ["#EXTM3U", "#EXT-X-VERSION:3", "#EXT-X-TARGETDURATION:1", "#EXT-X-MEDIA-SEQUENCE:\(first)"]
        for k in first..<(first + count) { lines += ["#EXTINF:1.0,", "seg_\(k).ts"] }
        if ended { lines.append("#EXT-X-ENDLIST") }
        return try media(lines.joined(separator: "\n") + "\n")
    }

    @Test func listedSegment_isLoaded_atItsIndex() throws {
        let p = try Self.window()
        #expect(LivePlaylistRules.nextStep(for: 43, in: p, secondsSinceLastReload: 0.2, lastReloadChanged: true) == .load(segmentIndex: 3))
        #expect(LivePlaylistRules.nextStep(for: 40, in: p, secondsSinceLastReload: 0.2, lastReloadChanged: true) == .load(segmentIndex: 0))
    }

    @Test func nextNotPublished_reloadsATargetDurationAfterAChangedReload_halfAfterAnUnchangedOne() throws {
        let p = try Self.window()
        #expect(LivePlaylistRules.nextStep(for: 46, in: p, secondsSinceLastReload: 0.25, lastReloadChanged: true) == .reload(afterSeconds: 0.75))
        #expect(LivePlaylistRules.nextStep(for: 46, in: p, secondsSinceLastReload: 0.25, lastReloadChanged: false) == .reload(afterSeconds: 0.25))
        // Already due: at once, never a negative wait.
        #expect(LivePlaylistRules.nextStep(for: 46, in: p, secondsSinceLastReload: 3, lastReloadChanged: true) == .reload(afterSeconds: 0))
    }

    @Test func belowTheWindow_fellBehind_namingWhereTheWindowStarts() throws {
        let p = try Self.window(first: 40)
        #expect(LivePlaylistRules.nextStep(for: 37, in: p, secondsSinceLastReload: 0, lastReloadChanged: true) == .fellBehind(windowStartsAt: 40))
    }

    @Test func pastTheLastOfAnEndedPlaylist_endsTheTrack_evenBelowItsWindow() throws {
        let p = try Self.window(ended: true)
        #expect(LivePlaylistRules.nextStep(for: 46, in: p, secondsSinceLastReload: 0, lastReloadChanged: true) == .endOfTrack)
        // An ended playlist is not reloaded, and a number it does not list is not a resync either.
        #expect(LivePlaylistRules.nextStep(for: 12, in: p, secondsSinceLastReload: 0, lastReloadChanged: true) == .endOfTrack)
    }

    @Test func emptyWindow_reloads() throws {
        let p = try Self.window(count: 0)
        #expect(LivePlaylistRules.nextStep(for: 40, in: p, secondsSinceLastReload: 0, lastReloadChanged: false) == .reload(afterSeconds: 0.5))
    }

    @Test func playhead_behindTheWindowByMoreThanItsLength_only() throws {
        let p = try Self.window(first: 40, count: 6)
        // Inside, or just left it (a player at HOLD-BACK on a short window plays from its own buffer): not behind.
        #expect(!LivePlaylistRules.playheadIsBehindWindow(playheadMediaSequence: 42, in: p))
        #expect(!LivePlaylistRules.playheadIsBehindWindow(playheadMediaSequence: 34, in: p), "6 behind a 6-segment window")
        #expect(LivePlaylistRules.playheadIsBehindWindow(playheadMediaSequence: 33, in: p), "7 behind a 6-segment window")
        #expect(!LivePlaylistRules.playheadIsBehindWindow(playheadMediaSequence: 0, in: try Self.window(count: 0)), "an empty window")
    }

    @Test func goneSegment_expiredOnlyWhenTheReloadedWindowStartsAfterIt() throws {
        #expect(LivePlaylistRules.hasExpired(41, in: try Self.window(first: 42)))
        #expect(!LivePlaylistRules.hasExpired(42, in: try Self.window(first: 42)), "still listed: a broken stream")
        #expect(!LivePlaylistRules.hasExpired(41, in: try Self.window(first: 42, count: 0)), "an empty window says nothing")
    }
}
