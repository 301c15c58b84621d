// PlayerSession: Low-Latency HLS (parts, blocking reloads) and live resync to the edge (docs/startup-cap.md §5).

import Foundation
import HLSCore
import HLSMedia
import HLSNet

extension PlayerSession {
    // MARK: - Low-Latency HLS

    /// One step on the LL-HLS path, as `PartLoaderStep.next` says: the next part (listed or preload-hinted), a whole
    /// segment when it is complete and we are at its start, the rest of a segment whose parts left the playlist
    /// skipped, a blocking reload (`_HLS_msn`/`_HLS_part`, `_HLS_skip` delta updates) when there is nothing to load
    /// yet, or a resync when the next part left the playlist.
    func lowLatencyStep(_ playlist: MediaPlaylist, variantIndex: Int) throws {
        let step = PartLoaderStep.next(loaded: lowLatencyLoaded, pendingStart: pendingLowLatencyStart, in: playlist)
        if step.startTaken { pendingLowLatencyStart = nil }
        if let start = step.freshStart { logLowLatencyStart(start, on: playlist) }
        switch step.load {
        case .part(let position, let uri):
            // A preload hint is requested like a listed part; the server holds it until it exists.
            let unit = Self.lowLatencyPart(position, uri: uri, in: playlist)
            // Nothing loaded: the next step decides again (under the lowered cap after an abandonment).
            guard try loadForPartLoader(unit, part: position.part ?? 0, variantIndex: variantIndex) else { return }
            lowLatencyLoaded = position
        case .segment(let index, let msn):
            guard try loadForPartLoader(playlist.segments[index], part: nil, variantIndex: variantIndex) else { return }
            lowLatencyLoaded = LowLatencyPosition(msn: msn)
            liveLoader.segmentLoaded(mediaSequence: msn)
        case .skipRest(let msn, let part):
            recorder.record(
                .segmentSkipped(
                    SegmentSkipped(
                        variantIndex: variantIndex, mediaSequence: msn, durationSeconds: 0,
                        reason: "LL-HLS: the rest of segment \(msn) after part \(part) left the playlist as parts; continuing at \(msn + 1)"))
            )
            lowLatencyLoaded = LowLatencyPosition(msn: msn)
            liveLoader.segmentLoaded(mediaSequence: msn)
        case .reload:
            try blockingReload(after: playlist, variantIndex: variantIndex)
        case .fellBehind(let position, let first):
            recordLiveNote(
                "LL-HLS: the next part \(position) has left the playlist (first segment \(first)); resyncing to the live edge under the recovery cap")
            lowLatencyLoaded = nil
            fellOutOfLiveWindow(.segmentRolledOff, playlist: playlist, variantIndex: variantIndex)
        }
    }

    /// A fresh LL-HLS start on `playlist` (an INDEPENDENT part PART-HOLD-BACK from the end), logged.
    func loggedLowLatencyStart(for playlist: MediaPlaylist) -> LowLatencyStart? {
        guard let start = LowLatencyRules.startPosition(for: playlist) else { return nil }
        logLowLatencyStart(start, on: playlist)
        return start
    }

    /// The `lowlatency.start` record of `start` on `playlist`.
    func logLowLatencyStart(_ start: LowLatencyStart, on playlist: MediaPlaylist) {
        recorder.record(
            .lowLatencyStart(
                LowLatencyStartRecord(
                    msn: start.position.msn, part: start.position.part, url: shown(start.uri),
                    distanceFromEndSeconds: start.distanceFromEndSeconds, partHoldBackSeconds: start.holdBackSeconds,
                    partTargetSeconds: playlist.partTargetSeconds ?? 0)))
    }

    /// One part of `playlist` (`position`, at `uri`) as a small segment: its own tags from its segment when listed,
    /// else from the trailing parts (the segment in progress).
    static func lowLatencyPart(_ position: LowLatencyPosition, uri: URL, in playlist: MediaPlaylist) -> MediaSegment {
        let j = position.part ?? 0
        let listed = playlist.segments.first { $0.mediaSequence == position.msn }
        let parts = listed?.parts ?? (position.msn == (playlist.segments.last?.mediaSequence ?? -1) + 1 ? playlist.trailingParts : [])
        let part = j < parts.count ? parts[j] : nil
        let parent = listed ?? playlist.segments.last
        let partsBefore = parts.prefix(j).reduce(0) { $0 + $1.durationSeconds }
        let segmentDate: Date? = listed?.programDateTime ?? parent.flatMap { p in p.programDateTime.map { $0.addingTimeInterval(p.durationSeconds) } }
        return MediaSegment(
            mediaSequence: position.msn, discontinuitySequence: parent?.discontinuitySequence ?? 0, uri: uri,
            durationSeconds: part?.durationSeconds ?? playlist.partTargetSeconds ?? 1,
            byteRange: part?.byteRange, key: parent?.key, initializationSection: parent?.initializationSection,
            programDateTime: segmentDate?.addingTimeInterval(partsBefore), gap: part?.gap ?? false)
    }

    /// Loads a part (`part`: its index in its segment) or a whole segment (`part` nil) for the LL-HLS part loader,
    /// placed right after what is buffered; true when it was buffered. A request the monitor cut is judged by the
    /// loader core (`LiveLoaderCore.partCancelled`): asked for again at once, or the step ends and the next one
    /// decides again, or the session fails; a request that ended otherwise without its media (its URI failed over,
    /// cut for a live step) ends the step too.
    func loadForPartLoader(_ unit: MediaSegment, part: Int?, variantIndex: Int) throws -> Bool {
        var (continuing, attempt) = (false, 1)
        while true {
            let placeAt = lock.withLock { core.tracks.mainEndSeconds }
            let loaded = try fetchAndBuffer(
                unit, variantIndex: variantIndex, live: true, isNewest: true, part: part, placeAt: placeAt, handsCutsToLoader: true,
                continuing: continuing, firstAttempt: attempt)
            switch loaded {
            case .loaded:
                return true
            case .cut(let cancel, let wire, let cutAttempt, let failure):
                let now = clock.now()
                let judged = liveLoader.partCancelled(
                    cancel, wire: wire, attempt: cutAttempt, mediaSequence: unit.mediaSequence,
                    bufferSeconds: lock.withLock { core.timeline.bufferSeconds(at: now) }, partDurationSeconds: unit.durationSeconds,
                    rungBps: variants.first(where: { $0.index == variantIndex })?.bandwidthBps, ladderBitratesBps: variants.map(\.bandwidthBps),
                    failure: failure)
                guard let judged else { return false }
                // In order: the cut's records are logged before a failure ends the session.
                judged.records.forEach(recorder.record)
                switch judged.next {
                case .reRequest(let next):
                    // A wedged or trickling request again at once, on a fresh connection: the same fetch.
                    attempt = next
                    lock.withLock { freshConnectionNext = true }
                    continuing = true
                case .endStep:
                    return false
                case .fail(let message):
                    throw SessionFailure(category: .network, message: message, url: shown(unit.uri))
                }
            case .cancelled:
                // Its URI failed over, or it was cut for a live step: decided again, not counted.
                liveLoader.segmentCutShort()
                return false
            }
        }
    }

    /// A blocking playlist reload for the next part; a delta update is merged
    /// into the playlist it extends. Paced in every path
    /// (`LowLatencyRules.reloadWaitSeconds`): at least half a part target after
    /// the previous reload started, and a part target after an answer that did
    /// not advance (a server that does not block). What a delta answer leads to
    /// is `DeltaUpdates`' (HLSCore): merged, or the whole playlist asked for and
    /// delta updates off for the stream, or the segments an unmergeable answer lists.
    func blockingReload(after playlist: MediaPlaylist, variantIndex: Int) throws {
        guard let variant = variants.first(where: { $0.index == variantIndex }) else { return }
        guard waitBeforeReload(of: playlist) else { return }
        let age = lastReloadAt.map { clock.now().seconds(since: $0) } ?? 0
        guard let request = LowLatencyRules.nextReload(after: playlist, playlistAgeSeconds: age, deltaUpdates: !deltaUpdates.isOff) else {
            lastBlockingReloadStartedAt = clock.now()
            // Cut for a live step or failed over: the next step either way.
            _ = try mediaPlaylist(for: variantIndex, forceReload: true)
            return
        }
        guard var (answer, url) = try loadBlocking(request, variant: variant, variantIndex: variantIndex) else { return }
        var next = deltaUpdates.answered(answer, previous: playlist, askedForDelta: request.skip != nil)
        if case .askWhole(let note) = next {
            recordLiveNote(note, url: shown(url))
            var whole = request
            whole.skip = nil
            guard waitBeforeReload(of: playlist), let reloaded = try loadBlocking(whole, variant: variant, variantIndex: variantIndex) else { return }
            (answer, url) = reloaded
            next = deltaUpdates.answered(answer, previous: playlist, askedForDelta: false)
        }
        guard case .playlist(let media, let note) = next else { return }
        if let note { recordLiveNote(note, url: shown(url)) }
        let advanced =
            media.segments.last?.mediaSequence != playlist.segments.last?.mediaSequence
            || media.trailingParts.count != playlist.trailingParts.count
        adopt(media, variantIndex: variantIndex, url: url, changed: advanced)
    }

    /// Sleeps until the next reload of `playlist` may start (`LowLatencyRules.reloadWaitSeconds`) and marks its
    /// start; false when the session is stopping or the monitor asked for a live step meanwhile.
    func waitBeforeReload(of playlist: MediaPlaylist) -> Bool {
        let now = clock.now()
        let wait = LowLatencyRules.reloadWaitSeconds(
            for: playlist, secondsSinceLastRequest: lastBlockingReloadStartedAt.map { now.seconds(since: $0) },
            secondsSinceLastAnswer: lastReloadAt.map { now.seconds(since: $0) }, lastAnswerAdvanced: lastReloadChanged)
        if wait > 0 { sleepUnlessStopping(wait) }
        if isStopping || lock.withLock({ pendingLiveStep != nil }) { return false }
        lastBlockingReloadStartedAt = clock.now()
        return true
    }

    /// One blocking reload request, parsed; nil when it was cut for a live step or its URI failed over (the next
    /// step decides again).
    func loadBlocking(_ request: BlockingReloadRequest, variant: VariantInfo, variantIndex: Int) throws -> (MediaPlaylist, URL)? {
        guard
            case .loaded(let response) = try fetch(
                request.url(playlistURL: variant.uri), purpose: .mediaPlaylist, variantIndex: variantIndex,
                mediaSequence: request.msn, byteRange: nil, policy: configuration.retry.playlist)
        else { return nil }
        guard case .media(let media) = try parsePlaylist(response, parentVariables: multivariantVariables) else {
            throw SessionFailure(
                category: .playlist, message: "expected a media playlist at \(shown(variant.uri)), got a multivariant playlist",
                url: shown(variant.uri))
        }
        return (media, response.effectiveURL)
    }

    // MARK: - Live resync (docs/startup-cap.md §5)

    /// Feeds the live resync policy (live streams only) and acts on what it returns.
    func liveEvent(_ event: LiveResyncEvent) {
        let actions: [LiveResyncAction] = lock.withLock {
            guard liveResync != nil else { return [] }
            return liveResync!.event(event)
        }
        for action in actions {
            switch action {
            case .resyncToLiveEdge(let r):
                recorder.record(.liveResync(LiveResyncLog(action: .resync, record: r)))
                requestLiveStep(action)
            case .restart(let r):
                recorder.record(.liveResync(LiveResyncLog(action: .restart, record: r)))
                requestLiveStep(action)
            case .resolved(let r):
                lock.withLock { resyncFromSequence = nil }
                recorder.record(.liveResync(LiveResyncLog(action: .resolved, record: r)))
            case .giveUp(let r):
                recorder.record(.liveResync(LiveResyncLog(action: .giveUp, record: r)))
                var message = String(
                    format: "live stream lost: playback did not resume after a resync and %d restarts (%.1f s)", r.attempt, r.episodeSeconds ?? 0)
                if let frame = r.firstFrameSeconds {
                    message += String(
                        format: "; the last restart's media decoded (first frame %.1f s after it) but never reached the resume threshold", frame)
                }
                let staleness = lock.withLock { playlistStaleness }
                if staleness.isStale, let unchanged = staleness.observedUnchangedSeconds, let newest = staleness.lastMediaSequence {
                    let bound = LivePlaylistStaleness.boundSeconds(targetDurationSeconds: r.targetDurationSeconds)
                    message += String(
                        format:
                            "; the live playlist did not change over %@ in %.1f s (newest segment %d), longer than the %g target durations (%.1f s) RFC 8216 §6.2.1 allows: the server stopped updating it",
                        LivePlaylistStaleness.reloads(staleness.unchangedReloads), unchanged, newest,
                        LivePlaylistStaleness.updateBoundTargetDurations, bound)
                }
                recorder.record(
                    .error(
                        ErrorRecord(fatal: true, category: SessionFailure.Category.network.rawValue, message: message, url: shown(configuration.url)))
                )
                requestStop(reason: .error, error: message, category: .network)
            }
        }
    }

    /// Hands a resync or restart to the loader, interrupting whatever request it has in flight.
    func requestLiveStep(_ step: LiveResyncAction) {
        lock.withLock {
            pendingLiveStep = step
            if let f = inFlight, f.abort == nil {
                inFlight?.abort = .liveResync
                f.token.cancel()
            }
        }
    }

    /// On the loader: the playhead left the live window. The policy decides (a
    /// new episode → resync); if an episode is already under way, jump to the
    /// edge anyway, since the position is gone either way.
    func fellOutOfLiveWindow(_ trigger: LiveResyncTrigger, playlist: MediaPlaylist, variantIndex: Int) {
        liveEvent(.fellOutOfWindow(trigger, at: clock.now()))
        if lock.withLock({ pendingLiveStep == nil }) {
            seekToLiveEdge(playlist, variantIndex: variantIndex, trigger: trigger)
        }
    }

    /// A non-fatal `error` record of category `live`: what the live loader noticed and what it does about it
    /// (a resync, a fallback), about `url` when given.
    func recordLiveNote(_ message: String, url: String? = nil) {
        recorder.record(.error(ErrorRecord(fatal: false, category: "live", message: message, url: url)))
    }

    /// The buffered segment the playhead is in at `position` seconds (nil: none buffered there).
    func playheadMediaSequence(atPositionSeconds position: Double) -> Int? {
        bufferedSegments.last(where: { $0.startSeconds <= position + 0.001 })?.mediaSequence
    }

    /// After a live reload: a playhead further behind the window's start than the window is long
    /// (`LivePlaylistRules.playheadIsBehindWindow`) resyncs to the live edge.
    func checkPlayheadInLiveWindow(_ playlist: MediaPlaylist, variantIndex: Int) {
        let now = clock.now()
        let position = lock.withLock { core.timeline.positionSeconds(at: now) }
        guard let playing = playheadMediaSequence(atPositionSeconds: position), let first = playlist.segments.first,
            LivePlaylistRules.playheadIsBehindWindow(playheadMediaSequence: playing, in: playlist)
        else { return }
        recordLiveNote(
            String(
                format:
                    "the playhead (segment %d at %.2f s) is more than the window's %d segments behind the window, which starts at segment %d; resyncing to the live edge under the recovery cap",
                playing, position, playlist.segments.count, first.mediaSequence))
        fellOutOfLiveWindow(.behindWindow, playlist: playlist, variantIndex: variantIndex)
    }

    /// Performs a resync or restart decided by the policy, under the recovery cap. A step whose
    /// episode ended before the loader got to it (playback resumed meanwhile) is not performed:
    /// seeking then would drop the media that just resumed it.
    func performLiveStep(_ step: LiveResyncAction) throws {
        let phase = lock.withLock { liveResync?.phase }
        guard phase == .resyncing || phase == .restarting else { return }
        switch step {
        case .resyncToLiveEdge(let r):
            capEvent(.liveResync(estimateBps: measuredEstimate(), at: clock.now()))
            try resync(r)
        case .restart(let r):
            // Start over: multivariant playlist, fresh connection, recovery cap again.
            capEvent(.failure(.restart, estimateBps: measuredEstimate(), at: clock.now()))
            lock.withLock { freshConnectionNext = true }
            mediaPlaylists.removeAll()
            initCache = nil
            guard
                let top = try fetch(
                    configuration.url, purpose: .multivariantPlaylist, variantIndex: nil, mediaSequence: nil, byteRange: nil,
                    policy: configuration.retry.playlist
                ).value(unlessLiveStepDropped: "multivariant playlist", url: shown(configuration.url))
            else { return }
            switch try parsePlaylist(top) {
            case .multivariant(let mv):
                recorder.record(
                    .playlistLoaded(
                        PlaylistLoaded(
                            url: shown(top.effectiveURL), kind: "multivariant", variants: mv.variants.count, warnings: mv.warnings.map(\.description))
                    ))
                multivariantVariables = mv.variables
                // The ladder is kept as it was (indices, caps and estimates refer to it); only the URIs are refreshed.
                for (i, v) in mv.variants.enumerated() {
                    if let k = variants.firstIndex(where: { $0.index == i }) { variants[k].uri = v.uri }
                }
            case .media(let media):
                adopt(media, variantIndex: variants[0].index, url: top.effectiveURL, changed: true)
            }
            try resync(r)
        case .resolved, .giveUp:
            break
        }
    }

    /// A resync's or restart's decision under the recovery cap, its variant's playlist loaded again, and the seek to
    /// the live edge on it; the loader core's next turn loads that variant with that decision.
    private func resync(_ r: LiveResyncRecord) throws {
        let decision = decide(mediaSequence: nil)
        let loadIndex = chooseRedundant(forRung: decision.variantIndex)
        // Cut for a newer live step, or its URI failed over: this one is dropped (the next turn decides).
        guard let playlist = try mediaPlaylist(for: loadIndex, forceReload: true).value else { return }
        currentLoadIndex = loadIndex
        liveLoader.resyncDecided(rung: decision.variantIndex, variant: loadIndex)
        seekToLiveEdge(playlist, variantIndex: loadIndex, trigger: r.trigger, record: r)
    }

    /// Moves loading to the live start point — forward only, as `LiveResyncRules.plan` works it out: HOLD-BACK
    /// from the edge, or for LL-HLS a fresh LL-HLS start (an INDEPENDENT part PART-HOLD-BACK from the end, as at
    /// startup). When the start point is not ahead of what was loaded, nothing newer exists yet, and loading goes
    /// on where it was, waiting for the playlist to advance, instead of replaying what was already played. This
    /// logs the plan (`live.resync`) and performs it.
    func seekToLiveEdge(_ playlist: MediaPlaylist, variantIndex: Int, trigger: LiveResyncTrigger, record r: LiveResyncRecord? = nil) {
        let now = clock.now()
        let (position, unchanged, td) = lock.withLock {
            (
                core.timeline.positionSeconds(at: now), playlistStaleness.observedUnchangedSeconds,
                liveResync?.targetDurationSeconds ?? LivePlaylistRules.targetDurationSeconds(for: playlist)
            )
        }
        let playhead = playheadMediaSequence(atPositionSeconds: position)
        guard
            let plan = LiveResyncRules.plan(
                for: playlist, lowLatencyLoaded: lowLatencyLoaded, nextMediaSequence: liveLoader.nextMediaSequence,
                segmentsLoaded: firstSegmentFetched, playheadMediaSequence: playhead)
        else { return }
        let (landing, edge, lastLoaded, from) = (plan.landing, plan.edge, plan.lastLoaded, plan.fromMediaSequence)
        var log = LiveResyncLog(
            action: landing == .hold ? .held : .seeked,
            record: r
                ?? LiveResyncRecord(
                    trigger: trigger, phase: .resyncing, attempt: 0, stalledSeconds: nil, deadlineSeconds: nil,
                    episodeSeconds: nil, targetDurationSeconds: td, recoveryCapApplied: true))
        log.fromMediaSequence = from
        log.variantIndex = variantIndex
        log.landing = landing.name
        log.edgeMediaSequence = edge.msn
        log.edgePart = edge.part
        log.lastLoadedMediaSequence = lastLoaded?.msn
        log.lastLoadedPart = lastLoaded?.part
        log.playheadMediaSequence = playhead
        log.playlistLastMediaSequence = playlist.segments.last?.mediaSequence
        log.playlistUnchangedSeconds = unchanged
        log.toMediaSequence = plan.toMediaSequence
        log.toPart = plan.toPart
        switch landing {
        case .hold:
            lock.withLock { resyncFromSequence = from }
            log.droppedBufferSeconds = 0
            let said = { (p: LowLatencyPosition) in p.part.map { "segment \(p.msn) part \($0)" } ?? "segment \(p.msn)" }
            recordLiveNote(
                String(
                    format:
                        "resync: the live start point (%@) is not ahead of what was loaded (up to %@)%@; nothing newer to jump to, so nothing is dropped or replayed: loading goes on after it when the playlist advances",
                    said(edge), lastLoaded.map(said) ?? "-",
                    unchanged.map { String(format: "; reloads have not seen the playlist change for %.1f s", $0) } ?? ""))
        case .seek, .skipBuffered:
            buffer.discardAll()
            let (actions, dropped) = lock.withLock {
                let dropped = core.timeline.bufferSeconds(at: now)
                let actions = core.timeline.discardBuffered(at: now)
                core.tracksPlaced(at: core.timeline.bufferedEndSeconds)
                resyncFromSequence = plan.toMediaSequence
                return (actions, dropped)
            }
            record(actions)
            bufferedSegments.removeAll()
            audio?.nextMediaSequence = nil
            liveLoader.moved(to: plan.toMediaSequence)
            log.droppedBufferSeconds = dropped
            if plan.freshLowLatencyStart {
                // A fresh LL-HLS start, as at startup: the step after this one loads it.
                lowLatencyLoaded = nil
                pendingLowLatencyStart = loggedLowLatencyStart(for: playlist)
            }
        }
        recorder.record(.liveResync(log))
    }

    /// After each load of the variant's live playlist: logs when it stops changing for longer than
    /// RFC 8216 §6.2.1 allows (`live.stale`), and when it changes again.
    func followLivePlaylistStaleness(_ media: MediaPlaylist) {
        let newest = media.segments.last?.mediaSequence ?? (media.mediaSequence - 1)
        let td = LivePlaylistRules.targetDurationSeconds(for: media)
        let now = clock.now()
        if let record = lock.withLock({
            playlistStaleness.reloaded(
                lastMediaSequence: newest, trailingParts: media.trailingParts.count,
                targetDurationSeconds: td, at: now)
        }) {
            recorder.record(.liveStale(record))
        }
    }
}
