// The loader's sequencing as a state machine (issue 14): which request comes
// next for a demux-only VOD session, and what a finished, failed or cancelled
// request leads to. A value type with no clock and no I/O: each event is a
// mutating method that takes the time and what the shell knows of the buffer
// and the caps (`LoaderCore.Inputs`), and returns the actions for the shell
// to perform, in order (start a request, wait, ask the session core for a
// decision, write a record, end the stream, fail the session).
//
// The order it keeps: the multivariant playlist → (the shell's gate and cap
// set-up) → a decision → that variant's media playlist → segments while the
// buffer is under the forward-buffer target, waking every `pollSeconds` while
// it is full. A decision to another variant loads that variant's playlist
// first (VOD ladders may not share segment boundaries: the next segment is the
// one holding the buffered end), and decides again if the cap moved while it
// loaded. A cancelled segment is re-requested once as it was, decided again
// with little buffer left, or abandoned (counted per segment, bounded); a
// request the trickle rule cancelled is re-requested at once or fails the
// session, as the rule said (SessionCore.judgeInFlight); a
// wedged playlist is re-requested, then retried through the playlist retry
// policy, then fails the session — the outcomes of `WedgeRules` and
// `RetryPolicy`, each a named action.
//
// A shell that knows every variant's segments at the start (the virtual
// session) gives them to `init(variants:…)`; one that loads media playlists
// lazily (the real session) gives only the BANDWIDTHs (`init(bandwidthsBps:…)`)
// and feeds each playlist as it lands (`playlistLoaded`). Requests name a
// segment by its position in its playlist; decisions by its media sequence
// number (`mediaSequence(ofSegment:variant:)` maps one to the other).
//
// docs/architecture.md ("The session core and its two shells") shows which
// event moves what.

public struct LoaderCore: Sendable {
    /// One request the loader makes.
    public enum Work: Sendable, Equatable {
        /// The multivariant playlist (the session's URL).
        case multivariant
        /// A variant's media playlist; `afterStartup`: the first one, for the start decision; `capAtDecisionBps`: the
        /// peak-bitrate cap in force when the variant was chosen (a different cap when it lands: decide again).
        case mediaPlaylist(variant: Int, afterStartup: Bool, capAtDecisionBps: Int?)
        /// Segment `index` (0-based, its position in the playlist) of a variant; its media sequence number is
        /// `LoaderCore.mediaSequence(ofSegment:variant:)`.
        case segment(variant: Int, index: Int)

        public var purpose: RequestPurpose {
            switch self {
            case .multivariant: .multivariantPlaylist
            case .mediaPlaylist: .mediaPlaylist
            case .segment: .segment
            }
        }

        /// The segment this work is (nil: a playlist).
        public var segment: (variant: Int, index: Int)? {
            if case .segment(let v, let i) = self { (v, i) } else { nil }
        }
    }

    /// Why the loader asks for a decision; each is its own outcome, for the tests and the reader.
    public enum DecisionReason: String, Sendable, Equatable {
        /// The first decision, after the multivariant playlist (its media playlist is loaded next).
        case startup
        /// The next segment, the buffer under the target.
        case nextSegment
        /// A segment wedged with little buffer left goes back through the selector (not an abandonment).
        case reDecide
        /// A segment abandoned (over-selected, or wedged twice) is decided again under the lowered cap.
        case abandoned
        /// The cap moved while a switch's media playlist loaded: the decision is taken again.
        case capMoved
        /// The request's URI was excluded (failover) and its rung has a redundant variant left: decided again, the
        /// shell mapping the rung chosen to a usable variant (not an abandonment).
        case failedOver
    }

    /// What the loader asks its shell to do, in order.
    public enum Action: Sendable, Equatable {
        /// Start this request (attempt ≥ 1 of the retry policy).
        case fetch(Work, attempt: Int)
        /// A wedged request asked for again at once, on a fresh connection (not an attempt of the retry policy).
        case reRequest(Work, attempt: Int)
        /// Ask the session core for a decision (`SessionCore.decide`, its record written), then call `decided`.
        case decide(mediaSequence: Int?, because: DecisionReason)
        /// Write this event to the session log.
        case record(SessionEvent)
        /// A playlist load failed: tell the startup/recovery cap (`StartupCapEvent.loadFailed`).
        case loadFailed
        /// Nothing to do until this time (seconds on the events' clock); then call `wake`.
        case wait(untilSeconds: Double)
        /// Every segment is buffered: mark the end of the stream. The loader is done.
        case endOfStream
        /// The session fails with this message. The loader is done.
        case fail(String)
        /// The shell fed the loader something it cannot sequence (a decision on a variant it was not told of): a
        /// defect, not the network's; the session ends as an internal error with this message. The loader is done.
        case internalError(String)
    }

    /// What the shell knows when an event happens.
    public struct Inputs: Sendable, Equatable {
        /// Forward buffer ahead of the play position, seconds.
        public var bufferSeconds: Double
        /// Keep loading while the buffer is under this, seconds.
        public var forwardBufferTargetSeconds: Double
        /// End of the buffered media on the media timeline, seconds.
        public var bufferedEndSeconds: Double
        /// The peak-bitrate cap in force (`PeakBitrateCaps.effectiveBps`; nil: none), bits per second.
        public var peakCapBps: Int?
        /// The forward buffer's byte bound holds loading (`ForwardBufferRule.gate` is `.holdBytes`): the loader
        /// waits as it does at the seconds target. A shell without a byte bound leaves it false.
        public var byteBoundHolds: Bool

        public init(
            bufferSeconds: Double, forwardBufferTargetSeconds: Double, bufferedEndSeconds: Double, peakCapBps: Int?,
            byteBoundHolds: Bool = false
        ) {
            self.bufferSeconds = bufferSeconds
            self.forwardBufferTargetSeconds = forwardBufferTargetSeconds
            self.bufferedEndSeconds = bufferedEndSeconds
            self.peakCapBps = peakCapBps
            self.byteBoundHolds = byteBoundHolds
        }
    }

    /// A rung as the loader sees it: its BANDWIDTH, its segments' durations and the media sequence number of its
    /// first segment (EXT-X-MEDIA-SEQUENCE).
    public struct Variant: Sendable, Equatable {
        public var bandwidthBps: Int
        /// nil: not known until its media playlist has loaded (`playlistLoaded`), for a shell that loads them lazily.
        public var segmentDurationsSeconds: [Double]?
        public var firstMediaSequence: Int
        public init(bandwidthBps: Int, segmentDurationsSeconds: [Double]?, firstMediaSequence: Int = 0) {
            self.bandwidthBps = bandwidthBps
            self.segmentDurationsSeconds = segmentDurationsSeconds
            self.firstMediaSequence = firstMediaSequence
        }

        /// Segments known of it (none before its playlist has loaded).
        var segmentCount: Int { segmentDurationsSeconds?.count ?? 0 }
    }

    /// A buffered end within this of a segment's end counts as that segment buffered, seconds
    /// (rounding in the playlists' durations).
    static let boundaryToleranceSeconds = 0.001

    /// The ladder; a variant's segments become known when its playlist loads (`playlistLoaded`) unless given here.
    public private(set) var variants: [Variant]
    public let wedge: WedgeRules
    public let playlistRetry: RetryPolicy
    /// While the buffer is at the target the loader looks again after this long, seconds.
    public let pollSeconds: Double

    /// The request in flight, or waiting out the retry policy's backoff.
    public private(set) var work: Work?
    /// The next segment to load, of `currentVariant`.
    public private(set) var nextSegmentIndex = 0
    /// The variant whose segments are loading (nil: none yet).
    public private(set) var currentVariant: Int?
    public private(set) var loadedPlaylists: Set<Int> = []
    /// The stream is buffered to its end, or the session failed: no more actions.
    public private(set) var isDone = false
    /// The wedges of the request in flight and the abandonments per segment, with what they lead to.
    public private(set) var cancels: Cancels
    /// Wedges of the request in flight re-requested so far (a segment's first wedge; a playlist's up to the bound).
    public var wedgeReRequests: Int { cancels.wedgeReRequests }
    /// Attempts of the retry policy made for the request in flight or waiting (re-requests are not attempts).
    public private(set) var attempts = 1
    /// Times each segment (by media sequence number) was abandoned.
    public var abandonments: [Int: Int] { cancels.abandonments }
    /// `work` waits for its retry: sent when the loader wakes.
    private var retryPending = false
    /// The start decision's variant, used for the first segment once its playlist has loaded.
    private var pendingVariant: Int?
    /// The decision asked for and not yet answered, and the cap in force when it was asked.
    private var awaitedDecision: (reason: DecisionReason, capBps: Int?)?
    /// A decision whose rule asked to wait before its request: loaded when the loader wakes.
    private var heldDecision: (variant: Int, capBps: Int?)?
    /// Why the next decision is taken (a decision the full buffer deferred keeps its reason).
    private var nextReason = DecisionReason.nextSegment
    /// A switch's playlist is loading: the buffered end when it was asked for, where the new variant continues.
    private var switchAtBufferedEndSeconds = 0.0

    public init(variants: [Variant], wedge: WedgeRules, playlistRetry: RetryPolicy, pollSeconds: Double) {
        self.variants = variants
        self.wedge = wedge
        self.playlistRetry = playlistRetry
        self.pollSeconds = pollSeconds
        self.cancels = Cancels(wedge: wedge)
    }

    /// A loader for a shell that loads media playlists lazily: only the rungs' BANDWIDTHs are known at the start;
    /// each variant's segments become known when its playlist loads (`playlistLoaded`).
    public init(bandwidthsBps: [Int], wedge: WedgeRules, playlistRetry: RetryPolicy, pollSeconds: Double) {
        self.init(
            variants: bandwidthsBps.map { Variant(bandwidthBps: $0, segmentDurationsSeconds: nil) }, wedge: wedge,
            playlistRetry: playlistRetry, pollSeconds: pollSeconds)
    }

    // MARK: - Media sequence numbers

    /// The media sequence number of segment `index` of `v` (its first segment's number plus its position).
    public func mediaSequence(ofSegment index: Int, variant v: Int) -> Int { variants[v].firstMediaSequence + index }

    /// The position in `v`'s playlist of the segment numbered `mediaSequence` (nil: not in it, or not loaded).
    public func segmentIndex(ofMediaSequence mediaSequence: Int, variant v: Int) -> Int? {
        let index = mediaSequence - variants[v].firstMediaSequence
        return (0..<variants[v].segmentCount).contains(index) ? index : nil
    }

    /// The media sequence number of the next segment to load (nil: no variant loading yet).
    public var nextMediaSequence: Int? { currentVariant.map { mediaSequence(ofSegment: nextSegmentIndex, variant: $0) } }

    // MARK: - Events

    /// The session starts: the multivariant playlist first.
    public mutating func start() -> [Action] { [fetch(.multivariant)] }

    /// The media playlist in flight (`work` is `.mediaPlaylist(variant: v, …)`) landed and was parsed: `v`'s segments
    /// and first media sequence number are known from now on; then as `transferFinished`. `startSegmentIndex`: for
    /// the start's playlist, the segment playback starts in (EXT-X-START; nil: the first).
    public mutating func playlistLoaded(
        variant v: Int, firstMediaSequence: Int, segmentDurationsSeconds: [Double], startSegmentIndex: Int? = nil, inputs: Inputs,
        at now: MonotonicInstant
    ) -> [Action] {
        guard case .mediaPlaylist(v, let afterStartup, _) = work, !isDone else { return [] }
        variants[v].segmentDurationsSeconds = segmentDurationsSeconds
        variants[v].firstMediaSequence = firstMediaSequence
        if afterStartup, let startSegmentIndex { nextSegmentIndex = startSegmentIndex }
        return transferFinished(inputs, at: now)
    }

    /// Variants joined the ladder after the start (content steering's PATHWAY-CLONES), numbered after the ones the
    /// loader has, by BANDWIDTH: a decision may pick one from now on, and its playlist loads then, like any other's.
    public mutating func variantsAdded(bandwidthsBps: [Int]) {
        variants += bandwidthsBps.map { Variant(bandwidthBps: $0, segmentDurationsSeconds: nil) }
    }

    /// `work` finished with its body; the shell has logged it and buffered a segment's media.
    public mutating func transferFinished(_ inputs: Inputs, at now: MonotonicInstant) -> [Action] {
        guard let work, !isDone else { return [] }
        cancels.newRequest()
        attempts = 1
        switch work {
        case .multivariant:
            awaitedDecision = (.startup, inputs.peakCapBps)
            return [.decide(mediaSequence: nil, because: .startup)]
        case .mediaPlaylist(let v, let afterStartup, let capAtDecisionBps):
            loadedPlaylists.insert(v)
            currentVariant = v
            if afterStartup { return nextSegment(inputs, at: now) }
            // VOD ladders may not share segment boundaries: the next segment is the one holding the buffered end.
            nextSegmentIndex = segmentIndex(of: v, holding: switchAtBufferedEndSeconds)
            if inputs.peakCapBps != capAtDecisionBps {
                // The cap moved while the playlist loaded: decide again.
                pendingVariant = nil
                nextReason = .capMoved
                return nextSegment(inputs, at: now)
            }
            guard nextSegmentIndex < variants[v].segmentCount else { return endOfStream() }
            return [fetch(.segment(variant: v, index: nextSegmentIndex))]
        case .segment(_, let i):
            nextSegmentIndex = i + 1
            return nextSegment(inputs, at: now)
        }
    }

    /// The shell cancelled `work` for `reason`. `wire`: the shell's `request.end` of the attempt as far as it went
    /// (request, URL, body bytes in, and what else it measured); the loader logs it with why it ended (`CutShort`).
    /// `failure`: for `trickleFailed`, why (`InFlightJudgement.failure`), the session's error. `attempt`: the retry
    /// policy's attempt the cut request was, when the shell's own retries (of HTTP errors, which stay in the
    /// real shell's I/O) moved it past the one the loader asked for; a re-request is that attempt again.
    public mutating func transferCancelled(
        _ reason: InFlightCancel, wire: RequestEnd, attempt: Int? = nil, inputs: Inputs, at now: MonotonicInstant, failure: String? = nil
    ) -> [Action] {
        guard let work, !isDone else { return [] }
        if let attempt { attempts = attempt }
        let segment = work.segment.map { (v, i) in
            CutSegment(
                mediaSequence: mediaSequence(ofSegment: i, variant: v),
                wedge: RequestAttempts.SegmentWedge(
                    bufferSeconds: inputs.bufferSeconds, segmentDurationSeconds: variants[v].segmentDurationsSeconds?[i] ?? 0,
                    rungBps: variants[v].bandwidthBps, ladderBitratesBps: variants.map(\.bandwidthBps)))
        }
        guard
            let (records, next) = Self.judgeCut(
                reason, purpose: work.purpose, wire: wire, attempts: attempts, failure: failure, segment: segment, cancels: &cancels)
        else {
            return playlistWedged(wire: wire, at: now)
        }
        let actions = records.map(Action.record)
        switch next {
        case .reRequest:
            return actions + [.reRequest(work, attempt: attempts)]
        case .fail(let message):
            return actions + fail(message)
        case .reDecide:
            nextReason = .reDecide
        case .abandoned:
            nextReason = .abandoned
        }
        cancels.newRequest()
        pendingVariant = nil
        return actions + nextSegment(inputs, at: now)
    }

    /// The request in flight failed and its URI was excluded (failover), its rung having a redundant variant left
    /// (`redundantVariant`, the one the shell goes to for that rung). The start's playlist moves to that variant
    /// without a second decision; any other request goes back to a decision (`failedOver`), not counted against
    /// the segment. The shell has logged the request and its exclusion.
    public mutating func failedOver(redundantVariant: Int, inputs: Inputs, at now: MonotonicInstant) -> [Action] {
        guard let work, !isDone else { return [] }
        cancels.newRequest()
        attempts = 1
        retryPending = false
        switch work {
        case .multivariant:
            return []
        case .mediaPlaylist(_, afterStartup: true, _):
            pendingVariant = redundantVariant
            return [fetch(.mediaPlaylist(variant: redundantVariant, afterStartup: true, capAtDecisionBps: nil))]
        case .mediaPlaylist, .segment:
            pendingVariant = nil
            nextReason = .failedOver
            return nextSegment(inputs, at: now)
        }
    }

    /// The wait asked for (`wait`) is over: a retry waiting is sent, else the loader looks at the buffer again.
    public mutating func wake(_ inputs: Inputs, at now: MonotonicInstant) -> [Action] {
        // A decision asked for and not yet answered: the answer (`decided`) moves the loader, not a wake.
        guard !isDone, awaitedDecision == nil else { return [] }
        if retryPending, let work {
            retryPending = false
            return [fetch(work, attempt: attempts)]
        }
        if let held = heldDecision {
            heldDecision = nil
            return load(variant: held.variant, capAtDecisionBps: held.capBps, inputs: inputs)
        }
        return nextSegment(inputs, at: now)
    }

    /// The session core chose `variant` for the decision asked for (`decide`). `waitSeconds`: the rule asked
    /// to wait that long before the request (BOLA's full buffer, `SessionCore.decisionWaitSeconds`): the
    /// loader waits, then loads the variant chosen.
    public mutating func decided(variant v: Int, inputs: Inputs, at now: MonotonicInstant, waitSeconds: Double = 0) -> [Action] {
        guard let awaited = awaitedDecision, !isDone else { return [] }
        awaitedDecision = nil
        guard variants.indices.contains(v) else {
            // A variant that joined the ladder without the loader being told (`variantsAdded`).
            isDone = true
            return [.internalError("decided on variant \(v), which the loader does not have (\(variants.count) variants)")]
        }
        if awaited.reason == .startup {
            pendingVariant = v
            return [fetch(.mediaPlaylist(variant: v, afterStartup: true, capAtDecisionBps: nil))]
        }
        if waitSeconds > 0 {
            heldDecision = (v, awaited.capBps)
            return [.wait(untilSeconds: now.seconds + waitSeconds)]
        }
        return load(variant: v, capAtDecisionBps: awaited.capBps, inputs: inputs)
    }

    // MARK: - Steps

    private mutating func fetch(_ work: Work, attempt: Int = 1) -> Action {
        self.work = work
        return .fetch(work, attempt: attempt)
    }

    private mutating func endOfStream() -> [Action] {
        isDone = true
        work = nil
        return [.endOfStream]
    }

    private mutating func fail(_ message: String) -> [Action] {
        isDone = true
        return [.fail(message)]
    }

    /// The loader's top: wait while the buffer is full (in seconds or bytes), end the stream, or decide and fetch
    /// the next segment.
    private mutating func nextSegment(_ inputs: Inputs, at now: MonotonicInstant) -> [Action] {
        if inputs.bufferSeconds >= inputs.forwardBufferTargetSeconds || inputs.byteBoundHolds {
            return [.wait(untilSeconds: now.seconds + pollSeconds)]
        }
        guard let current = currentVariant, nextSegmentIndex < variants[current].segmentCount else {
            return endOfStream()
        }
        if let v = pendingVariant {
            pendingVariant = nil
            return load(variant: v, capAtDecisionBps: inputs.peakCapBps, inputs: inputs)
        }
        awaitedDecision = (nextReason, inputs.peakCapBps)
        let reason = nextReason
        nextReason = .nextSegment
        return [.decide(mediaSequence: mediaSequence(ofSegment: nextSegmentIndex, variant: current), because: reason)]
    }

    /// Continues with `v`: its playlist first if it is not loaded, else its next segment.
    private mutating func load(variant v: Int, capAtDecisionBps: Int?, inputs: Inputs) -> [Action] {
        if v != (currentVariant ?? 0) || !loadedPlaylists.contains(v) {
            if !loadedPlaylists.contains(v) {
                // Its segments may not be known before its playlist lands: the index is found then.
                switchAtBufferedEndSeconds = inputs.bufferedEndSeconds
                return [fetch(.mediaPlaylist(variant: v, afterStartup: false, capAtDecisionBps: capAtDecisionBps))]
            }
            nextSegmentIndex = segmentIndex(of: v, holding: inputs.bufferedEndSeconds)
            currentVariant = v
        }
        guard nextSegmentIndex < variants[v].segmentCount else { return endOfStream() }
        cancels.newRequest()
        attempts = 1
        return [fetch(.segment(variant: v, index: nextSegmentIndex))]
    }

    /// VOD ladders may not share segment boundaries: the segment of `v` that holds `seconds` (its count past the end).
    func segmentIndex(of v: Int, holding seconds: Double) -> Int {
        var start = 0.0
        for (i, duration) in (variants[v].segmentDurationsSeconds ?? []).enumerated() {
            if start + duration > seconds + Self.boundaryToleranceSeconds { return i }
            start += duration
        }
        return variants[v].segmentCount
    }

    /// A wedged playlist request: asked for again at once up to `wedge.maxPlaylistReRequests` times, then each
    /// wedge is a failed attempt of the playlist retry policy — backoff, then the session fails. Judged as the real
    /// shell judges its playlists (`RequestAttempts`), with this loader's count of the request's wedges and attempts.
    private mutating func playlistWedged(wire: RequestEnd, at now: MonotonicInstant) -> [Action] {
        guard let work else { return [] }
        var request = RequestAttempts(
            purpose: work.purpose, url: wire.url, policy: playlistRetry, cancels: cancels, attemptsMade: attempts)
        defer { cancels = request.cancels }
        switch request.wedged(requestID: wire.requestID, bytesReceived: wire.bytes) {
        case .reRequestNow(let retry):
            return [
                .record(.requestEnd(CutShort.playlistWedgeReRequested.requestEnd(wire))), .record(.retryScheduled(retry)),
                .reRequest(work, attempt: attempts)
            ]
        case .failedAttempt(let error):
            let actions: [Action] = [.record(.requestEnd(CutShort.playlistWedgeFailed(error).requestEnd(wire))), .loadFailed]
            switch request.failed(error, requestID: wire.requestID) {
            case .retry(let retry, let delaySeconds, _):
                attempts += 1
                retryPending = true
                return actions + [.record(.retryScheduled(retry)), .wait(untilSeconds: now.seconds + delaySeconds)]
            case .fail(let message, _):
                return actions + fail(message)
            case .reRequestNow, .giveBack:
                isDone = true
                return actions + [.internalError("the retry policy neither retried nor gave up on \(work.purpose.rawValue) \(wire.url)")]
            }
        }
    }
}

// MARK: - A cut request's outcome, for both loader cores

extension LoaderCore {
    /// A main-track segment a cut request was for, and what its wedge is judged by (`WedgeRules`).
    public struct CutSegment: Sendable, Equatable {
        /// Its media sequence number: abandonments are counted by it.
        public var mediaSequence: Int
        /// The forward buffer when it was cut, its duration, its rung's and the ladder's BANDWIDTH.
        public var wedge: RequestAttempts.SegmentWedge
        /// An LL-HLS part (or a whole segment the part loader asked for): giving up says the segment could not be
        /// loaded part by part. `wedge.segmentDurationSeconds` is then the part's.
        public var partByPart: Bool

        public init(mediaSequence: Int, wedge: RequestAttempts.SegmentWedge, partByPart: Bool = false) {
            self.mediaSequence = mediaSequence
            self.wedge = wedge
            self.partByPart = partByPart
        }
    }

    /// What a cut request leads to, after its records (`judgeCut`).
    public enum CutNext: Sendable, Equatable {
        /// The same request again at once, on a fresh connection, as the attempt it was (not an attempt of the
        /// retry policy).
        case reRequest
        /// A wedge with little buffer left: decided again under the recovery cap (not an abandonment).
        case reDecide
        /// Over-selected, abandoned by the ABR rule, or wedged again: counted against the segment, decided again.
        case abandoned
        /// The session fails with this message.
        case fail(String)
    }

    /// The monitor cut a request for `reason` (`wire`: its `request.end` as far as it went; `attempts`: the retry
    /// policy's attempt it was; `failure`: the trickle rule's message when it gave up): the records to write and
    /// what comes next, the same in both loader cores (`LoaderCore` for VOD, `LiveLoaderCore` for live). The
    /// trickle rule's cut, of any request: re-requested at once, or the session fails with the rule's message. A
    /// main-track segment's (`segment`) other cuts: `WedgeRules`' outcome for a wedge (re-request, decide again,
    /// abandon), an abandonment for the rest; an abandonment counted in `cancels`, the last one the rules allow
    /// failing the session. nil: a playlist's wedge, which the caller judges (`Cancels.playlistWedged`).
    public static func judgeCut(
        _ reason: InFlightCancel, purpose: RequestPurpose, wire: RequestEnd, attempts: Int, failure: String?, segment: CutSegment?,
        cancels: inout Cancels
    ) -> (records: [SessionEvent], next: CutNext)? {
        let cut = SessionEvent.requestEnd(CutShort.monitorCancelled(reason).requestEnd(wire))
        let (requestID, url) = (wire.requestID, wire.url)
        switch cancels.judge(reason, segment: segment?.wedge) {
        case .reRequest:
            // The trickle rule's re-request, or the first wedge with buffer in hand: the same request again on a
            // fresh connection (not an attempt).
            return ([cut, .retryScheduled(CutShort.immediateRetry(requestID: requestID, url: url, attemptsMade: attempts - 1))], .reRequest)
        case .trickleFailed:
            return ([cut], .fail(failure ?? "\(purpose.rawValue) \(url) trickled: still too slow after its re-requests"))
        case .reDecide:
            // Little buffer left: decide again under the recovery cap (not an abandonment).
            return ([cut, .retryScheduled(CutShort.immediateRetry(requestID: requestID, url: url, attemptsMade: attempts))], .reDecide)
        case .abandon:
            // Over-selected, abandoned by the ABR rule, or wedged again: an abandonment, bounded per segment.
            guard let segment else { return nil }
            if cancels.abandoned(segment: segment.mediaSequence) {
                return ([cut], .fail(cancels.wedge.givingUpMessage(segment: segment.mediaSequence, partByPart: segment.partByPart)))
            }
            return ([cut], .abandoned)
        case .notASegment:
            return nil
        }
    }
}

// MARK: - Cancelled requests

extension LoaderCore {
    /// The cancels of a loader's requests and what they lead to (`WedgeRules`): the wedges of the request in
    /// flight re-requested so far, and the abandonments counted per segment. Both shells keep theirs here —
    /// `LoaderCore` for the virtual session, `PlayerSession`'s loop for the real one — so a wedge is re-requested,
    /// decided again or abandoned, and a segment given up on, by the same count.
    public struct Cancels: Sendable, Equatable {
        public let wedge: WedgeRules
        /// Wedges of the request in flight re-requested so far (a segment's first wedge; a playlist's up to the bound).
        public private(set) var wedgeReRequests = 0
        /// Times each segment (by its key: the media sequence number) was abandoned.
        public private(set) var abandonments: [Int: Int] = [:]

        public init(wedge: WedgeRules) { self.wedge = wedge }

        /// A new request starts (not a re-request of a wedged one): no wedge of it yet.
        public mutating func newRequest() { wedgeReRequests = 0 }

        /// A segment request found wedged (`segment`: the forward buffer now, the wedged rung's BANDWIDTH — nil:
        /// not a main-track segment, re-requested, then abandoned). A re-request is counted; any other outcome ends
        /// the request.
        public mutating func segmentWedged(_ segment: RequestAttempts.SegmentWedge) -> WedgeRules.SegmentOutcome {
            let outcome = wedge.afterSegmentWedge(
                earlierWedges: wedgeReRequests, bufferSeconds: segment.bufferSeconds, segmentDurationSeconds: segment.segmentDurationSeconds,
                rungBps: segment.rungBps, ladderBitratesBps: segment.ladderBitratesBps)
            if outcome == .reRequest { wedgeReRequests += 1 } else { wedgeReRequests = 0 }
            return outcome
        }

        /// How a cut request goes on (`judge`), before the caller's records and counts.
        public enum CutOutcome: Sendable, Equatable {
            /// The same request again at once: the trickle rule's re-request, or a segment's first wedge with buffer.
            case reRequest
            /// The trickle rule gave up on the request.
            case trickleFailed
            /// A segment wedged with little buffer left: decided again under the recovery cap, not abandoned.
            case reDecide
            /// Over-selected, abandoned by the ABR rule, or a segment wedged again: abandoned, decided again.
            case abandon(LoaderCancel)
            /// A wedge of a request that is not a segment (a playlist, key or initialization section): judged by the
            /// playlist rules (`playlistWedged`), not here.
            case notASegment
        }

        /// The one judgement of a cut, for every request and both shells: the monitor's `reason`, and for a wedged
        /// segment what `WedgeRules` judge it by (`segment`; nil: not a segment). A segment's wedge is counted.
        public mutating func judge(_ reason: InFlightCancel, segment: RequestAttempts.SegmentWedge?) -> CutOutcome {
            switch reason {
            case .trickleReRequest: return .reRequest
            case .trickleFailed: return .trickleFailed
            case .overSelected: return .abandon(.overSelected)
            case .abrAbandoned: return .abandon(.abrAbandoned)
            case .wedged:
                guard let segment else { return .notASegment }
                switch segmentWedged(segment) {
                case .reRequest: return .reRequest
                case .reDecide: return .reDecide
                case .abandon: return .abandon(.wedgedAgain)
                }
            }
        }

        /// A playlist (or key, or initialization section) request found wedged, `bytesReceived` bytes of `url` in:
        /// re-requested up to `wedge.maxPlaylistReRequests` times, then a failed attempt of the retry policy.
        public mutating func playlistWedged(url: String, bytesReceived: Int) -> WedgeRules.PlaylistOutcome {
            wedgeReRequests += 1
            return wedge.afterPlaylistWedge(wedges: wedgeReRequests, url: url, bytesReceived: bytesReceived)
        }

        /// Segment `key` was abandoned (over-selected, or wedged again): counted. True: that was its last
        /// abandonment (`WedgeRules.maxAbandonmentsPerSegment`) and the session gives up on it.
        public mutating func abandoned(segment key: Int) -> Bool {
            wedgeReRequests = 0
            abandonments[key, default: 0] += 1
            return wedge.givesUp(afterAbandonments: abandonments[key, default: 0])
        }
    }
}
