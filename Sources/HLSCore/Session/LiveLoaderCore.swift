// The live loader's sequencing as a state machine (issue 14), beside LoaderCore (which sequences VOD): which
// step comes next for the main track of a live stream, and what a loaded, cut or gone segment leads to. A value
// type with no clock and no I/O: each event is a mutating method that takes what the shell knows (the variant's
// playlist, how long ago it was reloaded and whether that reload changed it, the cap in force), and returns the
// actions for the shell to perform, in order.
//
// The loader goes in turns; the shell starts one (`turn`) when the forward buffer takes more and the alternate
// audio and the steering manifest have had theirs. A turn is: a decision (or the one a start or a resync already
// took) → the chosen variant's playlist when the decision switched variant or its playlist is not loaded, and the
// decision again (next turn) when the cap moved while it loaded → the playlist's next step
// (`LivePlaylistRules.nextStep`): the segment where it is listed, a reload when it is not published yet, the end of
// the track past an ended playlist, or a resync to the live edge when it has left the window. A Low-Latency
// playlist goes to the shell's part loader instead (`LowLatencyRules`), which reports the segments it completes
// and the parts the monitor cuts here.
//
// After a fetch: a segment loaded moves the loader to the next one. One the monitor cut is judged as VOD's are
// (`LoaderCore.judgeCut`): re-requested at once (a first wedge with buffer in hand, the trickle rule's re-request),
// decided again (a wedge with little buffer left), or abandoned — over-selected, wedged again, abandoned by the ABR
// rule — counted against its segment, the session given up on it after `WedgeRules.maxAbandonmentsPerSegment`
// (the part loader's parts are judged the same way, `partCancelled`, and counted with their segment). One that answered 404 or 410 after its retries is an
// expiry, and a resync, when its playlist reloaded starts after it, else the failure stands.
//
// docs/architecture.md ("The session core and its two shells") shows where the live loop's steps are performed.

public struct LiveLoaderCore: Sendable {
    /// Why a turn decides; each is its own outcome, for the tests and the reader.
    public enum DecisionReason: String, Sendable, Equatable {
        /// The next segment, the buffer under the target.
        case nextSegment
        /// The cap moved while a switch's media playlist loaded: the decision is taken again.
        case capMoved
        /// The segment (or a part of it) was abandoned: decided again under the lowered cap.
        case abandoned
        /// The segment wedged with little buffer left: decided again under the recovery cap, on a fresh connection
        /// (not an abandonment).
        case reDecide
        /// The request ended without its segment and without an abandonment (its URI failed over, or it was cut
        /// for a live step): decided again.
        case cutShort
    }

    /// What the loader asks its shell to do, in order.
    public enum Action: Sendable, Equatable {
        /// Ask the session core for a decision for segment `mediaSequence` (`SessionCore.decide`, its record
        /// written), map the rung chosen to a variant of it still usable (failover), then call `decided`.
        case decide(mediaSequence: Int, because: DecisionReason)
        /// A decision a start or a resync already took: map `rung` to a variant still usable, then call `decided`.
        case useDecision(rung: Int)
        /// Load `variant`'s media playlist (a switch, or a variant whose playlist is not loaded), then call
        /// `playlistLoaded`.
        case loadPlaylist(variant: Int)
        /// The playlist is Low-Latency (parts, blocking reloads): one step of the shell's part loader on it.
        case lowLatencyStep(variant: Int)
        /// Load segment `segmentIndex` (its position in `variant`'s playlist, numbered `mediaSequence`), then call
        /// `segmentLoaded`, `transferCancelled` (the monitor cut it), `segmentCut` (it ended otherwise without its
        /// segment) or `segmentGone`.
        case fetch(variant: Int, segmentIndex: Int, mediaSequence: Int)
        /// The segment request the monitor cut, asked for again at once on a fresh connection, as `attempt` of the
        /// retry policy (a wedge's or a trickle's re-request is not an attempt); then as after `fetch`.
        case reRequest(variant: Int, segmentIndex: Int, mediaSequence: Int, attempt: Int)
        /// Write this event to the session log.
        case record(SessionEvent)
        /// The next segment is not published yet: reload `variant`'s playlist after `afterSeconds` (0: at once).
        case reload(variant: Int, afterSeconds: Double)
        /// The playlist ended (EXT-X-ENDLIST) and every segment of it is loaded: the main track has ended.
        case endOfTrack
        /// The next segment is gone from the window: log `message` (a non-fatal `live` error, about `url` when
        /// given) and resync to the live edge on `variant`'s playlist (the live resync policy decides how).
        case resync(LiveResyncTrigger, variant: Int, message: String, url: String?)
        /// The session fails with this message (a network error). The loader is done.
        case fail(String)
    }

    /// A cut of the LL-HLS part loader's request, judged (`partCancelled`): the records to log, in order, then what the
    /// part loader does.
    public struct PartCut: Sendable, Equatable {
        public enum Next: Sendable, Equatable {
            /// Ask for the part (or whole segment) again at once on a fresh connection, as `attempt` of the retry policy.
            case reRequest(attempt: Int)
            /// The part loader's step ends without it; the next turn decides again for its segment (`reDecide`, or
            /// `abandoned`, counted with the segment's own abandonments).
            case endStep
            /// The session fails with this message (a network error). The loader is done.
            case fail(String)
        }
        public var records: [SessionEvent]
        public var next: Next

        public init(records: [SessionEvent], next: Next) {
            self.records = records
            self.next = next
        }
    }

    /// A variant's media playlist as the shell holds it at an event.
    public struct PlaylistView: Sendable {
        public var playlist: MediaPlaylist
        /// Since the playlist was last loaded, seconds (0: just now).
        public var secondsSinceReload: Double
        /// Whether that load changed it (a newer last segment, or the end of the list).
        public var reloadChanged: Bool

        public init(playlist: MediaPlaylist, secondsSinceReload: Double, reloadChanged: Bool) {
            self.playlist = playlist
            self.secondsSinceReload = secondsSinceReload
            self.reloadChanged = reloadChanged
        }
    }

    public let wedge: WedgeRules
    /// The media sequence number of the next segment to load.
    public private(set) var nextMediaSequence: Int
    /// The variant (URI) whose segments are loading: the rung chosen, after failover.
    public private(set) var currentVariant: Int
    /// The abandonments per segment (by media sequence number), shared with the LL-HLS part loader.
    public private(set) var cancels: LoaderCore.Cancels
    /// Times each segment (by media sequence number) was abandoned.
    public var abandonments: [Int: Int] { cancels.abandonments }
    /// The failure ended the loader: no more actions.
    public private(set) var isDone = false
    /// A decision taken before the turn (the start's, a resync's), by rung: the next turn uses it.
    private var decidedRung: Int?
    /// Why the next turn decides.
    private var nextReason = DecisionReason.nextSegment
    /// The peak-bitrate cap in force when the turn's decision was asked for (nil: none), bits per second.
    private var capAtDecisionBps: Int?
    /// The variant whose playlist `.loadPlaylist` asked for, until it lands.
    private var switchingTo: Int?
    /// The segment request in flight (from `.fetch` until it loads or is given up), and the retry policy's attempt
    /// it is.
    private var inFlight: (variant: Int, segmentIndex: Int, mediaSequence: Int)?
    private var attempt = 1

    /// A loader that starts at segment `mediaSequence` of `variant`'s playlist, with the start's decision
    /// (`decidedRung`, nil: none) for its first turn.
    public init(startingAt mediaSequence: Int, variant: Int, decidedRung: Int?, wedge: WedgeRules) {
        self.nextMediaSequence = mediaSequence
        self.currentVariant = variant
        self.decidedRung = decidedRung
        self.wedge = wedge
        self.cancels = LoaderCore.Cancels(wedge: wedge)
    }

    // MARK: - Events

    /// A turn starts, `peakCapBps` in force: decide, or use the decision already taken.
    public mutating func turn(peakCapBps: Int?) -> [Action] {
        guard !isDone else { return [] }
        capAtDecisionBps = peakCapBps
        // Whatever the last turn asked for has ended (loaded, cut, or dropped with the turn); its requests are new.
        switchingTo = nil
        inFlight = nil
        cancels.newRequest()
        if let rung = decidedRung {
            decidedRung = nil
            return [.useDecision(rung: rung)]
        }
        let reason = nextReason
        nextReason = .nextSegment
        return [.decide(mediaSequence: nextMediaSequence, because: reason)]
    }

    /// The turn's decision, on `variant` (the rung chosen, or a variant of it still usable); `playlist`: that
    /// variant's, when one is loaded.
    public mutating func decided(variant v: Int, playlist: PlaylistView?) -> [Action] {
        guard !isDone else { return [] }
        guard v == currentVariant, let playlist else {
            switchingTo = v
            return [.loadPlaylist(variant: v)]
        }
        return step(on: v, playlist)
    }

    /// The playlist `.loadPlaylist` asked for landed (`playlist`), `peakCapBps` in force now; nil: it did not (its URI
    /// failed over, or the request was cut for a live step) and the turn ends, the next one deciding again.
    public mutating func playlistLoaded(variant v: Int, playlist: PlaylistView?, peakCapBps: Int?) -> [Action] {
        guard !isDone, switchingTo == v else { return [] }
        switchingTo = nil
        guard let playlist else { return [] }
        currentVariant = v
        if peakCapBps != capAtDecisionBps {
            // The cap moved while the playlist loaded (a stall or a wedge meanwhile): the next turn decides again.
            nextReason = .capMoved
            return []
        }
        return step(on: v, playlist)
    }

    /// Segment `mediaSequence` is buffered (by a `.fetch`, or whole by the LL-HLS part loader): the next one follows.
    public mutating func segmentLoaded(mediaSequence: Int) {
        inFlight = nil
        nextMediaSequence = mediaSequence + 1
    }

    /// The monitor cut the segment request in flight for `reason` (`wire`: its `request.end` as far as it went,
    /// not yet logged; `attempt`: the retry policy's attempt it was, when the shell's retries of HTTP errors moved
    /// it past the one asked for; `failure`: the trickle rule's message when it gave up). `segment`'s wedge is judged
    /// with the buffer and ladder the shell gives. The same judgement as VOD's (`LoaderCore.judgeCut`): the records,
    /// then a re-request at once, the decision again (`reDecide`, or `abandoned` counted against the segment), or
    /// the session's failure.
    public mutating func transferCancelled(
        _ reason: InFlightCancel, wire: RequestEnd, attempt: Int? = nil, bufferSeconds: Double, segmentDurationSeconds: Double,
        rungBps: Int?, ladderBitratesBps: [Int], failure: String? = nil
    ) -> [Action] {
        guard let f = inFlight, !isDone else { return [] }
        if let attempt { self.attempt = attempt }
        let segment = LoaderCore.CutSegment(
            mediaSequence: f.mediaSequence,
            wedge: RequestAttempts.SegmentWedge(
                bufferSeconds: bufferSeconds, segmentDurationSeconds: segmentDurationSeconds, rungBps: rungBps,
                ladderBitratesBps: ladderBitratesBps))
        guard let (records, next) = judged(reason, wire: wire, attempt: self.attempt, failure: failure, cut: segment) else { return [] }
        let actions = records.map(Action.record)
        switch next {
        case .reRequest:
            return actions + [.reRequest(variant: f.variant, segmentIndex: f.segmentIndex, mediaSequence: f.mediaSequence, attempt: self.attempt)]
        case .endStep:
            return actions
        case .fail(let message):
            return actions + [.fail(message)]
        }
    }

    /// The LL-HLS part loader's request for a part of segment `mediaSequence` (or the whole segment) was cut by the
    /// monitor for `reason`, as `attempt` of the retry policy (`partDurationSeconds`: the part's duration, the
    /// segment's for a whole one). Judged as a segment's (`LoaderCore.judgeCut`): the records, then the request
    /// again at once, the next turn deciding again (`reDecide`, or `abandoned` counted with the segment's own
    /// abandonments), or the session's failure ("could not be loaded part by part"). Nil: nothing to judge (the
    /// loader is done, or the cut was not one the rules judge).
    public mutating func partCancelled(
        _ reason: InFlightCancel, wire: RequestEnd, attempt: Int, mediaSequence: Int, bufferSeconds: Double, partDurationSeconds: Double,
        rungBps: Int?, ladderBitratesBps: [Int], failure: String? = nil
    ) -> PartCut? {
        guard !isDone else { return nil }
        let part = LoaderCore.CutSegment(
            mediaSequence: mediaSequence,
            wedge: RequestAttempts.SegmentWedge(
                bufferSeconds: bufferSeconds, segmentDurationSeconds: partDurationSeconds, rungBps: rungBps,
                ladderBitratesBps: ladderBitratesBps),
            partByPart: true)
        return judged(reason, wire: wire, attempt: attempt, failure: failure, cut: part).map { PartCut(records: $0.0, next: $0.1) }
    }

    /// A cut judged (`LoaderCore.judgeCut`): its records, then a re-request, the session's failure, or the turn's end
    /// with the reason the next one decides again for (the segment's, or the part's, the loader still wants).
    private mutating func judged(
        _ reason: InFlightCancel, wire: RequestEnd, attempt: Int, failure: String?, cut: LoaderCore.CutSegment
    ) -> ([SessionEvent], PartCut.Next)? {
        guard
            let (records, next) = LoaderCore.judgeCut(
                reason, purpose: .segment, wire: wire, attempts: attempt, failure: failure, segment: cut, cancels: &cancels)
        else { return nil }
        switch next {
        case .reRequest:
            return (records, .reRequest(attempt: attempt))
        case .fail(let message):
            isDone = true
            inFlight = nil
            return (records, .fail(message))
        case .reDecide:
            nextReason = .reDecide
        case .abandoned:
            nextReason = .abandoned
        }
        // The turn ends; the next one decides again for the same segment.
        inFlight = nil
        cancels.newRequest()
        return (records, .endStep)
    }

    /// The request for the next segment (or a part of it) ended without its media and without the monitor's cut: its
    /// URI failed over, or it was cut for a live step. Not an abandonment: the next turn decides again for the same
    /// segment (`cutShort`).
    public mutating func segmentCutShort() {
        guard !isDone else { return }
        inFlight = nil
        nextReason = .cutShort
    }

    /// Segment `mediaSequence` of `variant` answered `httpStatus` (404 or 410) after its retries (`url`, as logged),
    /// and its playlist was loaded again (`reloaded`): a resync when the window now starts after it (it expired);
    /// nil when it is still listed, or the window is empty — a broken stream, and the failure stands.
    public mutating func segmentGone(
        mediaSequence: Int, variant v: Int, httpStatus: Int, url: String?, reloaded: MediaPlaylist
    ) -> [Action]? {
        inFlight = nil
        guard !isDone, LivePlaylistRules.hasExpired(mediaSequence, in: reloaded), let first = reloaded.segments.first else { return nil }
        return [
            .resync(
                .expiredSegment, variant: v,
                message:
                    "segment \(mediaSequence) expired (HTTP \(httpStatus)); the window now starts at \(first.mediaSequence); resyncing to the live edge under the recovery cap",
                url: url)
        ]
    }

    /// A resync or restart (the live resync policy's, performed by the shell) decided on `rung` and loaded
    /// `variant`'s playlist: the next turn loads that variant with that decision.
    public mutating func resyncDecided(rung: Int, variant v: Int) {
        currentVariant = v
        decidedRung = rung
    }

    /// The shell moved loading to segment `mediaSequence` (a resync's landing, or the start of an LL-HLS resync).
    public mutating func moved(to mediaSequence: Int) {
        nextMediaSequence = mediaSequence
    }

    // MARK: - Steps

    /// The playlist's next step for the next segment.
    private mutating func step(on v: Int, _ view: PlaylistView) -> [Action] {
        if LowLatencyRules.loadsPartByPart(view.playlist) { return [.lowLatencyStep(variant: v)] }
        let step = LivePlaylistRules.nextStep(
            for: nextMediaSequence, in: view.playlist, secondsSinceLastReload: view.secondsSinceReload,
            lastReloadChanged: view.reloadChanged)
        switch step {
        case .load(let index):
            inFlight = (v, index, nextMediaSequence)
            attempt = 1
            return [.fetch(variant: v, segmentIndex: index, mediaSequence: nextMediaSequence)]
        case .endOfTrack:
            return [.endOfTrack]
        case .fellBehind(let windowStart):
            return [
                .resync(
                    .segmentRolledOff, variant: v,
                    message:
                        "fell behind the live window (next \(nextMediaSequence), window starts at \(windowStart)); resyncing to the live edge under the recovery cap",
                    url: nil)
            ]
        case .reload(let afterSeconds):
            return [.reload(variant: v, afterSeconds: afterSeconds)]
        }
    }
}
