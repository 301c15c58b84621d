// PlayerSession: the live main track's loader, sequenced by LiveLoaderCore.
//
// `liveLoop` goes in turns. At the top of each, what is the shell's: a resync or restart the monitor asked for
// (`pendingLiveStep`), the forward buffer's gate, the alternate audio rendition while it is behind, the end of the
// stream, the steering manifest. Then the loader core's turn: it asks for a decision (`SessionCore` through
// `decide`), the chosen variant's playlist when the decision switched, and the playlist's next step — a segment,
// a reload, the end of the track, a resync, or the LL-HLS part loader's step (`lowLatencyStep`) — and the shell
// performs each and feeds back what it gave. A request cut short ends the turn (`Loaded.cancelled`); the next
// one decides again, or performs the live step the monitor asked for (`LoaderCancel.liveStepDropped`).
//
// A segment (or an LL-HLS part) the monitor cut comes back as `Loaded.cut` and the core judges it, as VOD's loader
// core does (re-request, decide again, abandon, fail). What stays in `fetch`: HTTP errors and their retries with
// backoff, and the wedges of playlists, keys and init sections.

import Foundation
import HLSCore
import HLSMedia
import HLSNet

extension PlayerSession {
    /// A live loader core starting at segment `mediaSequence` of `variant`, its first turn using the start's
    /// decision (`decidedRung`).
    func makeLiveLoaderCore(startingAt mediaSequence: Int, variant: Int, decidedRung: Int?) -> LiveLoaderCore {
        LiveLoaderCore(startingAt: mediaSequence, variant: variant, decidedRung: decidedRung, wedge: configuration.wedge)
    }

    /// Variant `v`'s media playlist as the live loader core reads it (nil: none loaded).
    func livePlaylistView(_ v: Int) -> LiveLoaderCore.PlaylistView? {
        mediaPlaylists[v].map {
            LiveLoaderCore.PlaylistView(
                playlist: $0, secondsSinceReload: lastReloadAt.map { clock.now().seconds(since: $0) } ?? 0, reloadChanged: lastReloadChanged)
        }
    }

    /// The live loader: turn after turn until the stream ends (ENDLIST and every segment loaded, the alternate
    /// audio too) or the session stops. A VOD never comes here: `LoaderCore` sequences it (`vodLoop`).
    func liveLoop() throws {
        while !isStopping {
            if let step = lock.withLock({ () -> LiveResyncAction? in
                defer { pendingLiveStep = nil }; return pendingLiveStep
            }) {
                try performLiveStep(step)
                continue
            }
            if forwardBufferGate(at: clock.now(), logsByteBound: true) != .load {
                sleepUnlessStopping(configuration.session.loaderPollSeconds)
                continue
            }
            if audio != nil, try loadAudioIfBehind() { continue }
            if lock.withLock({ core.tracks.mainEnded }) {
                // Only the audio rendition may still be loading: wait for it (it runs above).
                if lock.withLock({ core.tracks.audioEnded || audio == nil }) { return }
                sleepUnlessStopping(0.05)
                continue
            }
            reloadSteeringIfDue()
            var pending = liveLoader.turn(peakCapBps: effectivePeakCapBps())
            while !pending.isEmpty, !isStopping {
                let action = pending.removeFirst()
                pending = try performLive(action) + pending
                currentLoadIndex = liveLoader.currentVariant
            }
            if lock.withLock({ core.timeline.endOfStream }) { return }
        }
    }

    private func performLive(_ action: LiveLoaderCore.Action) throws -> [LiveLoaderCore.Action] {
        switch action {
        case .decide(let mediaSequence, let reason):
            // A wedge decided again: the next request does not trust the old connection.
            if reason == .reDecide { lock.withLock { freshConnectionNext = true } }
            let decision = decide(mediaSequence: mediaSequence)
            let v = chooseRedundant(forRung: decision.variantIndex)
            return liveLoader.decided(variant: v, playlist: livePlaylistView(v))
        case .useDecision(let rung):
            let v = chooseRedundant(forRung: rung)
            return liveLoader.decided(variant: v, playlist: livePlaylistView(v))
        case .loadPlaylist(let v):
            // Cut for a live step, or its URI failed over: the turn ends (nil).
            let loaded = try mediaPlaylist(for: v, forceReload: true).value
            return liveLoader.playlistLoaded(variant: v, playlist: loaded == nil ? nil : livePlaylistView(v), peakCapBps: effectivePeakCapBps())
        case .lowLatencyStep(let v):
            guard let playlist = mediaPlaylists[v] else { return [] }
            try lowLatencyStep(playlist, variantIndex: v)
            return []
        case .fetch(let v, let index, let mediaSequence):
            return try loadLiveSegment(variant: v, index: index, mediaSequence: mediaSequence, attempt: 1, continuing: false)
        case .reRequest(let v, let index, let mediaSequence, let attempt):
            // A wedged or trickling request again at once, on a fresh connection: the same fetch.
            lock.withLock { freshConnectionNext = true }
            return try loadLiveSegment(variant: v, index: index, mediaSequence: mediaSequence, attempt: attempt, continuing: true)
        case .record(let event):
            recorder.record(event)
            return []
        case .reload(let v, let afterSeconds):
            if afterSeconds > 0 { sleepUnlessStopping(afterSeconds) }
            if isStopping || lock.withLock({ pendingLiveStep != nil }) { return [] }
            guard let reloaded = try mediaPlaylist(for: v, forceReload: true).value else { return [] }
            checkPlayheadInLiveWindow(reloaded, variantIndex: v)
            return []
        case .endOfTrack:
            endTrack(.main)
            return []
        case .resync(let trigger, let v, let message, let url):
            recordLiveNote(message, url: url)
            guard let playlist = mediaPlaylists[v] else { return [] }
            fellOutOfLiveWindow(trigger, playlist: playlist, variantIndex: v)
            return []
        case .fail(let message):
            throw SessionFailure(category: .network, message: message, url: loaderWorkURL)
        }
    }

    /// Segment `index` of variant `v`'s playlist (numbered `mediaSequence`), as `attempt` of the retry policy
    /// (`continuing`: a re-request of the fetch before), and what it gave, to the loader core: buffered, cut by the
    /// monitor (`Loaded.cut`, judged by the core), ended otherwise without its segment, or gone (404/410 after its
    /// retries: the playlist reloaded to tell an expiry from a broken stream).
    private func loadLiveSegment(variant v: Int, index: Int, mediaSequence: Int, attempt: Int, continuing: Bool) throws -> [LiveLoaderCore.Action] {
        guard let playlist = mediaPlaylists[v], playlist.segments.indices.contains(index) else {
            throw SessionFailure(
                category: .internalError, message: "the live loader asked for segment \(index) of variant \(v), not in its playlist", url: nil)
        }
        let segment = playlist.segments[index]
        loaderWorkURL = shown(segment.uri)
        let loaded: Loaded<Void>
        do {
            loaded = try fetchAndBuffer(
                segment, variantIndex: v, live: true, isNewest: segment.mediaSequence == playlist.segments.last?.mediaSequence,
                handsCutsToLoader: true, continuing: continuing, firstAttempt: attempt)
        } catch let failure as SessionFailure where failure.httpStatus == 404 || failure.httpStatus == 410 {
            // A live segment that is gone: expired (left the window) or missing while still listed.
            guard let reloaded = try mediaPlaylist(for: v, forceReload: true).value else { return [] }
            guard
                let expired = liveLoader.segmentGone(
                    mediaSequence: mediaSequence, variant: v, httpStatus: failure.httpStatus!, url: failure.url, reloaded: reloaded)
            else {
                // Still listed after every retry: not an expiry but a broken stream.
                throw failure
            }
            return expired
        }
        switch loaded {
        case .loaded:
            liveLoader.segmentLoaded(mediaSequence: mediaSequence)
            return []
        case .cut(let cancel, let wire, let attempt, let failure):
            let now = clock.now()
            return liveLoader.transferCancelled(
                cancel, wire: wire, attempt: attempt, bufferSeconds: lock.withLock { core.timeline.bufferSeconds(at: now) },
                segmentDurationSeconds: segment.durationSeconds, rungBps: variants.first(where: { $0.index == v })?.bandwidthBps,
                ladderBitratesBps: variants.map(\.bandwidthBps), failure: failure)
        case .cancelled:
            // Its URI failed over, or it was cut for a live step: decided again, not counted.
            liveLoader.segmentCutShort()
            return []
        }
    }
}
