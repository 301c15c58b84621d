// PlayerSession: the progress guarantee — no input makes the session hammer
// a server (the request-rate bound, RequestRateBound) or wait for a buffer
// the stream can never hold (start and resume thresholds clamped to the live
// window or the rest of a VOD; a window shorter than RFC 8216 allows is a
// warning, not a hang). The rules are in HLSCore; this file performs and logs them.

import Foundation
import HLSCore
import HLSNet

extension PlayerSession {
    // MARK: - The request-rate bound

    /// The kind a request counts as for the request-rate bound; nil: not bounded
    /// (keys, init sections and steering manifests follow the playlist, each fetched once per change).
    static func pacedKind(_ purpose: RequestPurpose, isPart: Bool) -> PacedRequestKind? {
        switch purpose {
        case .multivariantPlaylist, .mediaPlaylist: .playlist
        case .segment: isPart ? .part : .segment
        case .initSection, .key, .steeringManifest: nil
        }
    }

    /// The bound of `kind` for `track` now: from that track's playlist and the forward-buffer target.
    func requestRateLimit(_ kind: PacedRequestKind, track: String?) -> RequestRateLimit {
        let target = lock.withLock { core.forwardBufferTargetSeconds }
        let playlist: MediaPlaylist? =
            track == "audio"
            ? audio?.playlist
            : (currentLoadIndex.flatMap { mediaPlaylists[$0] } ?? mediaPlaylists.values.first)
        let inputs =
            playlist.map { RequestRateInputs(playlist: $0, forwardBufferTargetSeconds: target) }
            ?? RequestRateInputs(forwardBufferTargetSeconds: target)
        return RequestRateRules.limit(for: kind, inputs: inputs)
    }

    /// On the loader, before every attempt of a request: waits until the
    /// request-rate bound lets it start, logging an episode of holding back when
    /// it opens and when it closes. Only stopping cuts the wait short, so no
    /// path — a resync included — can go faster than the bound.
    func paceRequest(_ url: URL, purpose: RequestPurpose, isPart: Bool, track: String?) {
        guard let kind = Self.pacedKind(purpose, isPart: isPart) else { return }
        let limit = requestRateLimit(kind, track: track)
        let admission = requestBound.admit(kind, track: track, limit: limit, at: clock.now())
        if let closed = admission.closed { recorder.record(.requestPaced(closed)) }
        if var opened = admission.opened {
            opened.url = shown(url)
            opened.purpose = purpose
            recorder.record(.requestPaced(opened))
        }
        guard admission.waitSeconds > 0 else { return }
        while !isStopping {
            let left = admission.startAt.seconds(since: clock.now())
            if left <= 0 { return }
            clock.sleep(until: clock.now().advanced(bySeconds: min(left, 0.05)))
        }
    }

    /// At the end of the session: the episodes still open, closed (the loader has stopped).
    func closePacingEpisodes(at now: MonotonicInstant) {
        for episode in requestBound.finish(at: now) { recorder.record(.requestPaced(episode)) }
    }

    // MARK: - Thresholds the stream can hold

    /// Sets what the stream can hold ahead (the live window, the rest of a VOD) and logs the thresholds it lowers.
    func setThresholdCeiling(_ ceiling: PlaybackThresholdCeiling?) {
        perform(lock.withLock { core.thresholdCeilingSet(ceiling) })
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
