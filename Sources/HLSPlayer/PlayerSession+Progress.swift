// PlayerSession: the progress guarantee — no input makes the session wait for
// a buffer the stream can never hold (start and resume thresholds clamped to
// the live window or the rest of a VOD; a window shorter than RFC 8216 allows
// is a warning, not a hang). The rules are in HLSCore; this file performs and logs them.

import Foundation
import HLSCore

extension PlayerSession {
    // MARK: - Thresholds the stream can hold

    /// Sets what the stream can hold ahead (the live window, the rest of a VOD) and logs the thresholds it lowers.
    func setThresholdCeiling(_ ceiling: PlaybackThresholdCeiling?) {
        lock.withLock { timeline.setThresholdCeiling(ceiling) }
        logThresholdClamps()
    }

    /// Logs each start or resume threshold the ceiling lowers: when it starts
    /// being lowered, and again when the threshold asked for changes (a policy's
    /// knob) — not at every reload of a window that stays short.
    func logThresholdClamps() {
        let fresh: [ThresholdClamp] = lock.withLock {
            let clamps = timeline.clampedThresholds
            var fresh: [ThresholdClamp] = []
            for threshold in [ThresholdClamp.Threshold.startup, .resume] {
                guard let clamp = clamps.first(where: { $0.threshold == threshold }) else {
                    loggedThresholdClamps[threshold] = nil
                    continue
                }
                if loggedThresholdClamps[threshold] != clamp.requestedSeconds {
                    loggedThresholdClamps[threshold] = clamp.requestedSeconds
                    fresh.append(clamp)
                }
            }
            return fresh
        }
        for clamp in fresh { recorder.record(.thresholdClamp(clamp)) }
    }

    /// After each load of the variant's live playlist: the ceiling follows the
    /// window, and a window shorter than three target durations that has slid
    /// (segments were removed, so it is not a stream that has just begun) is
    /// logged once as a warning.
    func followLiveWindow(_ media: MediaPlaylist) {
        guard !media.endList else { return }
        if !shortLiveWindowWarned, let record = LivePlaylistRules.shortWindow(media) {
            let first = media.segments.first?.mediaSequence ?? media.mediaSequence
            let slid = first > 0 || (liveWindowFirstMediaSequence.map { first > $0 } ?? false)
            if slid {
                shortLiveWindowWarned = true
                recorder.record(.liveWindow(record))
            }
        }
        liveWindowFirstMediaSequence = media.segments.first?.mediaSequence ?? liveWindowFirstMediaSequence
        if let ceiling = PlaybackThresholdCeiling.live(media) { setThresholdCeiling(ceiling) }
    }
}
