import Testing
@testable import HLSCore

/// The outer bound on a session: neither new bytes nor the media clock moving through new media
/// for the timeout ends it. Virtual time only: each test feeds the monitor's observations.
@Suite struct NoProgressWatchdogTests {
    func at(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: 1_000 + s) }

    /// A watchdog started at 0 with a 60 s timeout.
    func watchdog(_ timeout: Double? = 60) -> NoProgressWatchdog { NoProgressWatchdog(timeoutSeconds: timeout, startedAt: at(0)) }

    func isTimedOut(_ v: NoProgressVerdict) -> Bool {
        if case .timedOut = v { return true }
        return false
    }

    @Test func nothingMoves_justUnderTheTimeout_quiet_atTheTimeout_timedOut() throws {
        var w = watchdog()
        #expect(w.observe(positionSeconds: 0, bufferedEndSeconds: 0, downloadedBytes: 0, at: at(0.25)) == .quiet(secondsWithoutProgress: 0.25))
        #expect(!isTimedOut(w.observe(positionSeconds: 0, bufferedEndSeconds: 0, downloadedBytes: 0, at: at(59.999))))
        let verdict = w.observe(positionSeconds: 0, bufferedEndSeconds: 0, downloadedBytes: 0, at: at(60))
        guard case .timedOut(let record) = verdict else { Issue.record("expected a timeout, got \(verdict)"); return }
        #expect(record.timeoutSeconds == 60)
        #expect(record.secondsWithoutProgress == 60)
        #expect(record.downloadedBytes == 0)
    }

    @Test func off_nilOrZeroOrInfinite_neverTimesOut() {
        for timeout in [nil, 0, -1, Double.infinity] as [Double?] {
            var w = watchdog(timeout)
            #expect(w.timeoutSeconds == nil)
            #expect(!isTimedOut(w.observe(positionSeconds: 0, bufferedEndSeconds: 0, downloadedBytes: 0, at: at(100_000))))
        }
    }

    @Test func firstObservation_isTheBaseline_notProgress() {
        // EXT-X-START or a live start: the clock starts at 42 s; that alone is not progress.
        var w = watchdog(10)
        #expect(w.observe(positionSeconds: 42, bufferedEndSeconds: 42, downloadedBytes: 0, at: at(1)) == .quiet(secondsWithoutProgress: 1))
        #expect(isTimedOut(w.observe(positionSeconds: 42, bufferedEndSeconds: 42, downloadedBytes: 0, at: at(10))))
    }

    @Test func stalled_bytesFlowing_isProgress() {
        // A slow download while stalled: the clock is frozen, bytes keep coming.
        var w = watchdog(10)
        _ = w.observe(positionSeconds: 6, bufferedEndSeconds: 6, downloadedBytes: 1_000, at: at(0.25))
        for k in 1...200 {
            let t = 0.25 + Double(k) * 0.25
            #expect(w.observe(positionSeconds: 6, bufferedEndSeconds: 6, downloadedBytes: 1_000 + k * 10, at: at(t)) == .progressing)
        }
    }

    @Test func stalled_noBytes_timesOutAtTheTimeout_fromTheLastByte() {
        var w = watchdog(5)
        _ = w.observe(positionSeconds: 0, bufferedEndSeconds: 0, downloadedBytes: 500, at: at(2))
        #expect(!isTimedOut(w.observe(positionSeconds: 0, bufferedEndSeconds: 0, downloadedBytes: 500, at: at(6.999))))
        #expect(isTimedOut(w.observe(positionSeconds: 0, bufferedEndSeconds: 0, downloadedBytes: 500, at: at(7))))
    }

    @Test func live_playingItsBufferWhileWaitingForTheNextSegment_isProgress() {
        // 3 segments of 6 s buffered from new bytes, then nothing new for 15 s while the clock plays them.
        var w = watchdog(10)
        _ = w.observe(positionSeconds: 0, bufferedEndSeconds: 0, downloadedBytes: 0, at: at(0))
        #expect(w.observe(positionSeconds: 0, bufferedEndSeconds: 18, downloadedBytes: 3_000_000, at: at(0.5)) == .progressing)
        var t = 0.75
        while t <= 15.5 {
            #expect(w.observe(positionSeconds: t - 0.5, bufferedEndSeconds: 18, downloadedBytes: 3_000_000, at: at(t)) == .progressing)
            t += 0.25
        }
    }

    @Test func staleLivePlaylist_bufferEmpty_reloadsUnchanged_timesOut() {
        // Played to the end of what arrived (12 s); the reloads bring nothing new.
        var w = watchdog(5)
        _ = w.observe(positionSeconds: 0, bufferedEndSeconds: 12, downloadedBytes: 2_000_000, at: at(0.5))
        _ = w.observe(positionSeconds: 12, bufferedEndSeconds: 12, downloadedBytes: 2_000_000, at: at(12.5))
        #expect(!isTimedOut(w.observe(positionSeconds: 12, bufferedEndSeconds: 12, downloadedBytes: 2_000_000, at: at(17.499))))
        let verdict = w.observe(positionSeconds: 12, bufferedEndSeconds: 12, downloadedBytes: 2_000_000, at: at(17.5))
        guard case .timedOut(let r) = verdict else { Issue.record("expected a timeout, got \(verdict)"); return }
        #expect(r.positionSeconds == 12 && r.newMediaEndSeconds == 12 && r.countedPositionSeconds == 12)
    }

    @Test func replayingMediaDownloadedAgain_movesTheClock_butIsNotProgress() {
        // A resync into a stale live window: the same segments are downloaded again (no new bytes),
        // buffered after the playhead and played — the clock runs, the content does not.
        var w = watchdog(5)
        _ = w.observe(positionSeconds: 0, bufferedEndSeconds: 12, downloadedBytes: 2_000_000, at: at(0.5))
        _ = w.observe(positionSeconds: 12, bufferedEndSeconds: 12, downloadedBytes: 2_000_000, at: at(12.5))
        var t = 13.0
        var fired: Double?
        while t <= 30, fired == nil {
            let position = 12 + (t - 13) // playing the replayed media
            if isTimedOut(w.observe(positionSeconds: position, bufferedEndSeconds: 12 + 6 + (t - 13), downloadedBytes: 2_000_000, at: at(t))) {
                fired = t
            }
            t += 0.25
        }
        #expect(fired == 17.5, "five seconds after the last new media played")
    }

    @Test func newBytes_extendTheCountedMedia_whenTheBufferNextGrows() {
        var w = watchdog(5)
        _ = w.observe(positionSeconds: 0, bufferedEndSeconds: 0, downloadedBytes: 0, at: at(0))
        // Bytes arrive at 1 s; the segment is demuxed and buffered one tick later.
        #expect(w.observe(positionSeconds: 0, bufferedEndSeconds: 0, downloadedBytes: 500_000, at: at(1)) == .progressing)
        #expect(w.newBytesNotYetBuffered)
        _ = w.observe(positionSeconds: 0, bufferedEndSeconds: 6, downloadedBytes: 500_000, at: at(1.25))
        #expect(w.newMediaEndSeconds == 6)
        #expect(!w.newBytesNotYetBuffered)
        // Playing those 6 s is progress all the way, then the counted clock stops at 6.
        #expect(w.observe(positionSeconds: 5.9, bufferedEndSeconds: 12, downloadedBytes: 500_000, at: at(7)) == .progressing)
        #expect(w.observe(positionSeconds: 6, bufferedEndSeconds: 12, downloadedBytes: 500_000, at: at(7.25)) == .progressing)
        #expect(
            w.observe(positionSeconds: 6.5, bufferedEndSeconds: 12, downloadedBytes: 500_000, at: at(7.5)) == .quiet(secondsWithoutProgress: 0.25))
        #expect(w.countedPositionSeconds == 6)
    }
}
