// PlayerSession: the VOD main track's loader, sequenced by LoaderCore (the virtual session's loader too).
//
// `startup()` tells the loader core of the start's steps as they complete (the multivariant playlist, the start
// decision, a failover of the start's playlist, that playlist with EXT-X-START's segment); from the first
// segment on, `vodLoop` performs the core's actions and feeds it what they gave: a segment buffered, a
// request the monitor cut (`Loaded.cut`: wedged, over-selected, abandoned by the ABR rule, trickled), a URI
// failed over, a variant's media playlist loaded, a wait over. Which request comes next, when to decide, and
// what a cut leads to are the core's; this file is I/O and the glue around it: the decision through
// `SessionCore` and the failover's choice of a redundant variant, the alternate audio rendition and the
// steering manifest between the main track's requests. A live stream goes to `liveLoop` instead.
//
// What stays in `fetch`: HTTP errors and their retries with backoff, and the wedges of keys, initialization
// sections and playlists (re-requested, then retried by the playlist retry policy).

import Foundation
import HLSCore
import HLSMedia
import HLSNet

extension PlayerSession {
    /// A loader core for this session's ladder (every variant, redundant ones included, by index).
    func makeVODLoaderCore() -> LoaderCore {
        LoaderCore(
            bandwidthsBps: variants.map(\.bandwidthBps), wedge: configuration.wedge, playlistRetry: configuration.retry.playlist,
            pollSeconds: configuration.session.loaderPollSeconds)
    }

    /// What the loader core reads at an event: the buffer, the target, the buffered end, the cap in force, and
    /// whether the forward buffer's byte bound holds loading (an episode of it is logged as it starts and ends).
    func loaderInputs() -> LoaderCore.Inputs {
        let now = clock.now()
        let gate = forwardBufferGate(at: now, logsByteBound: true)
        return lock.withLock { core.loaderInputs(at: now, byteBoundHolds: gate == .holdBytes) }
    }

    /// The start's steps, performed by `startup()`, must be the ones the loader core asks for: a difference is a
    /// defect of one of them, reported as such instead of loading something else.
    func expectLoader(_ actions: [LoaderCore.Action], _ expected: LoaderCore.Action) throws {
        guard actions == [expected] else {
            throw SessionFailure(
                category: .internalError, message: "the VOD loader asked for \(actions) where the start performs \(expected)", url: nil)
        }
    }

    /// Loads the VOD main track from its first segment to its end, as `loader` sequences it from `firstActions`
    /// (what `startup()` left it asking for), then what is left of an alternate audio rendition.
    func vodLoop(_ startLoader: LoaderCore, _ firstActions: [LoaderCore.Action]) throws {
        var loader = startLoader
        var pending = firstActions
        while !pending.isEmpty, !isStopping {
            let action = pending.removeFirst()
            // Actions come in order; an event's own actions go before what was left (each event ends its list with
            // at most one step: a request, a wait, a decision, the end or a failure).
            pending = try perform(action, on: &loader) + pending
            if let current = loader.currentVariant { currentLoadIndex = current }
        }
        try finishAlternateAudio()
    }

    private func perform(_ action: LoaderCore.Action, on loader: inout LoaderCore) throws -> [LoaderCore.Action] {
        switch action {
        case .record(let event):
            recorder.record(event)
            return []
        case .loadFailed:
            capEvent(.loadFailed(estimateBps: measuredEstimate(), at: clock.now()))
            return []
        case .internalError(let message):
            throw SessionFailure(category: .internalError, message: message, url: nil)
        case .fail(let message):
            throw SessionFailure(category: .network, message: message, url: loaderWorkURL)
        case .endOfStream:
            endTrack(.main)
            return []
        case .wait(let untilSeconds):
            sleepUnlessStopping(untilSeconds - clock.now().seconds)
            if isStopping { return [] }
            try loadAlternateAudioWhileBehind()
            return loader.wake(loaderInputs(), at: clock.now())
        case .decide(let mediaSequence, let reason):
            // A wedge decided again: the next request does not trust the old connection.
            if reason == .reDecide { lock.withLock { freshConnectionNext = true } }
            // PATHWAY-CLONES: the clones are variants the decision may pick.
            let clones = reloadSteeringIfDue()
            if !clones.isEmpty { loader.variantsAdded(bandwidthsBps: clones.map(\.bandwidthBps)) }
            let decision = decide(mediaSequence: mediaSequence)
            // The rung chosen, on a variant of it still usable (failover), for the loader to load.
            let variantIndex = chooseRedundant(forRung: decision.variantIndex)
            let waitSeconds = lock.withLock { core.decisionWaitSeconds }
            return loader.decided(variant: variantIndex, inputs: loaderInputs(), at: clock.now(), waitSeconds: waitSeconds)
        case .fetch(let work, let attempt):
            return try load(work, attempt: attempt, continuing: attempt > 1, on: &loader)
        case .reRequest(let work, let attempt):
            // A wedged or trickling request again at once, on a fresh connection: the same fetch.
            lock.withLock { freshConnectionNext = true }
            return try load(work, attempt: attempt, continuing: true, on: &loader)
        }
    }

    private func load(_ work: LoaderCore.Work, attempt: Int, continuing: Bool, on loader: inout LoaderCore) throws -> [LoaderCore.Action] {
        switch work {
        case .multivariant:
            throw SessionFailure(category: .internalError, message: "the VOD loader asked for the multivariant playlist again", url: nil)
        case .mediaPlaylist(let v, _, _):
            loaderWorkURL = variants.indices.contains(v) ? shown(variants[v].uri) : nil
            let loaded = try mediaPlaylist(for: v, forceReload: false)
            switch loaded {
            case .loaded(let playlist):
                return loader.playlistLoaded(
                    variant: v, firstMediaSequence: playlist.segments.first?.mediaSequence ?? playlist.mediaSequence,
                    segmentDurationsSeconds: playlist.segments.map(\.durationSeconds), inputs: loaderInputs(), at: clock.now())
            case .cancelled(.failedOver):
                return loader.failedOver(redundantVariant: v, inputs: loaderInputs(), at: clock.now())
            case .cancelled(let cancel):
                throw unexpected(cancel.rawValue, of: work)
            case .cut(let cancel, _, _, _):
                throw unexpected(cancel.rawValue, of: work)
            }
        case .segment(let v, let i):
            guard let playlist = mediaPlaylists[v], playlist.segments.indices.contains(i) else {
                throw SessionFailure(
                    category: .internalError, message: "the VOD loader asked for segment \(i) of variant \(v), not in its playlist", url: nil)
            }
            let segment = playlist.segments[i]
            loaderWorkURL = shown(segment.uri)
            let loaded = try fetchAndBuffer(
                segment, variantIndex: v, live: false, isNewest: false, handsCutsToLoader: true, continuing: continuing, firstAttempt: attempt)
            switch loaded {
            case .loaded:
                try loadAlternateAudioWhileBehind()
                return loader.transferFinished(loaderInputs(), at: clock.now())
            case .cut(let cancel, let wire, let attempt, let failure):
                return loader.transferCancelled(cancel, wire: wire, attempt: attempt, inputs: loaderInputs(), at: clock.now(), failure: failure)
            case .cancelled(.failedOver):
                return loader.failedOver(redundantVariant: v, inputs: loaderInputs(), at: clock.now())
            case .cancelled(let cancel):
                throw unexpected(cancel.rawValue, of: work)
            }
        }
    }

    private func unexpected(_ outcome: String, of work: LoaderCore.Work) -> SessionFailure {
        SessionFailure(category: .internalError, message: "the VOD loader's \(work) ended \(outcome), which it does not sequence", url: loaderWorkURL)
    }

    /// The forward buffer takes more (`ForwardBufferRule.gate` is `.load`).
    private func bufferTakesMore() -> Bool {
        forwardBufferGate(at: clock.now(), logsByteBound: false) == .load
    }

    /// Between the main track's requests: the alternate audio rendition's segments while it is behind the
    /// main track and the buffer takes more (the buffer level is the lower of the two tracks').
    func loadAlternateAudioWhileBehind() throws {
        guard audio != nil else { return }
        while !isStopping, bufferTakesMore(), try loadAudioIfBehind() {}
    }

    /// The main track has ended (or the loader failed): the alternate audio rendition loads to its own end.
    private func finishAlternateAudio() throws {
        while !isStopping, audio != nil, !lock.withLock({ core.tracks.audioEnded }) {
            if !bufferTakesMore() {
                sleepUnlessStopping(configuration.session.loaderPollSeconds)
                continue
            }
            if try loadAudioIfBehind() { continue }
            sleepUnlessStopping(0.05)
        }
    }
}
