// One request of the real session, attempt by attempt (issue 14: what stays in the shell is I/O). The shell's
// `fetch` sends each attempt, logs what went over the wire and performs what this says comes next; the choices
// are made here, with no clock and no I/O: a wedged playlist, key or initialization section asked for again at
// once up to `WedgeRules.maxPlaylistReRequests`, then a failed attempt; a cut the monitor made carried out (asked
// for again at once, given back to the loader to decide again, or failed); an HTTP or transport error retried
// after the retry policy's backoff, or the request given up with a message that says why.
//
// The loader cores carry out their own main-track segments' cuts (`LoaderCore.judgeCut`, counting abandonments per
// segment); this carries out the cuts of requests no loader core sequences: playlists, keys, initialization sections,
// the steering manifest and the alternate audio's segments — and every request's HTTP errors. Both judge a cut by
// the one rule, `LoaderCore.Cancels.judge`; the virtual shell's loader core judges its wedged playlists here too.

/// Why the loader goes back to a decision instead of using what it asked for: an outcome of a request,
/// returned, not thrown.
public enum LoaderCancel: String, Sendable, Equatable {
    /// Abandoned by the monitor as over-selected: counted against the segment, decided again under the new cap.
    case overSelected = "over-selected"
    /// Wedged again after its re-request: abandoned like an over-selection, decided again under the recovery cap.
    case wedgedAgain = "wedged again"
    /// Abandoned by the reference rule (BOLA-E): counted against the segment, decided again at the rule's rung.
    case abrAbandoned = "abandoned by the ABR rule"
    /// Wedged with little buffer left: decided again under the recovery cap (the probe rung) rather than wait
    /// for the same rung's bytes; not counted against the segment (WedgeRules.reDecideBelowBufferSegments).
    case reDecide = "re-decide"
    /// The URI was excluded and its rung has a redundant variant still usable: decided again.
    case failedOver = "failed over"
    /// Live: the monitor asked for a resync or restart and cut the request for it; the fetch loop drops the
    /// step under way and performs the new one at its top (`pendingLiveStep`).
    case liveStepDropped = "live step dropped"
}

public struct RequestAttempts: Sendable, Equatable {
    /// What the shell does after an attempt that did not give the response.
    public enum Next: Sendable, Equatable {
        /// The same request again at once on a fresh connection, not an attempt of the retry policy; `record` is
        /// its `retry.scheduled`.
        case reRequestNow(RetryScheduled)
        /// A failed attempt: the request again after `afterSeconds` (logged as `record`), on a fresh connection
        /// when `freshConnection` (after a timeout or a broken transfer the old connection is not trusted).
        case retry(RetryScheduled, afterSeconds: Double, freshConnection: Bool)
        /// The request ends without its response and the loader decides again (`record`: a `retry.scheduled`
        /// to log first, for a decision again after a wedge), or performs the live step it was cut for.
        case giveBack(LoaderCancel, record: RetryScheduled?)
        /// The request failed, and the session with it: a network error with this message (and HTTP status).
        case fail(message: String, httpStatus: Int?)
    }

    /// How the monitor cut an attempt (the session core's `InFlightCancel`, or a live step's resync).
    public enum MonitorCut: Sendable, Equatable {
        case judged(InFlightCancel, failure: String?)
        /// Cut for the live resync or restart the monitor asked for.
        case liveStep
    }

    public let purpose: RequestPurpose
    /// The request's URL as the log shows it (without a CMCD query).
    public let url: String
    public let policy: RetryPolicy
    /// Attempts of the retry policy made so far, the one in flight included.
    public private(set) var attemptsMade: Int
    /// This request's wedges re-requested so far (`WedgeRules`).
    public private(set) var cancels: LoaderCore.Cancels

    /// A request that starts at attempt `firstAttempt` of `policy` (a loader core's re-request or retry goes on
    /// from the attempt it was).
    public init(purpose: RequestPurpose, url: String, policy: RetryPolicy, wedge: WedgeRules, firstAttempt: Int = 1) {
        self.purpose = purpose
        self.url = url
        self.policy = policy
        self.attemptsMade = firstAttempt - 1
        self.cancels = LoaderCore.Cancels(wedge: wedge)
    }

    /// A loader core's request after `attemptsMade` attempts of `policy`, its wedges counted in `cancels` (the
    /// virtual shell's `LoaderCore` judges its wedged playlists by this).
    public init(purpose: RequestPurpose, url: String, policy: RetryPolicy, cancels: LoaderCore.Cancels, attemptsMade: Int) {
        self.purpose = purpose
        self.url = url
        self.policy = policy
        self.attemptsMade = attemptsMade
        self.cancels = cancels
    }

    /// An attempt starts: its number.
    public mutating func attemptStarts() -> Int {
        attemptsMade += 1
        return attemptsMade
    }

    /// A wedged playlist, key or initialization section, as `wedged` judges it.
    public enum Wedged: Sendable, Equatable {
        /// Asked for again at once on a fresh connection (logged as `record`): the attempt is not counted.
        case reRequestNow(RetryScheduled)
        /// Past the wedge rules' bound: a failed attempt with this error (a transfer timeout), for `failed`.
        case failedAttempt(LoadError)
    }

    /// Attempt `requestID` of a playlist, key or initialization section was found wedged with `bytesReceived`
    /// bytes in: asked for again at once up to the wedge rules' bound, else a failed attempt.
    public mutating func wedged(requestID: Int, bytesReceived: Int) -> Wedged {
        switch cancels.playlistWedged(url: url, bytesReceived: bytesReceived) {
        case .reRequest:
            attemptsMade -= 1
            return .reRequestNow(CutShort.immediateRetry(requestID: requestID, url: url, attemptsMade: attemptsMade))
        case .failedAttempt(let error):
            return .failedAttempt(error)
        }
    }

    /// What a wedged segment is judged by (`WedgeRules.afterSegmentWedge`): the forward buffer when it was cut, its
    /// duration, its rung's BANDWIDTH (nil: not a main-track rung — re-requested, then abandoned) and the ladder's.
    public struct SegmentWedge: Sendable, Equatable {
        public var bufferSeconds: Double
        public var segmentDurationSeconds: Double
        public var rungBps: Int?
        public var ladderBitratesBps: [Int]

        public init(bufferSeconds: Double, segmentDurationSeconds: Double, rungBps: Int?, ladderBitratesBps: [Int]) {
            self.bufferSeconds = bufferSeconds
            self.segmentDurationSeconds = segmentDurationSeconds
            self.rungBps = rungBps
            self.ladderBitratesBps = ladderBitratesBps
        }
    }

    /// Attempt `requestID` was cut by the monitor (`cut`); `segment`: what its wedge is judged by when it is a
    /// segment (nil: a request of another kind, whose wedge `wedged` judges), asked for only when the cut is a
    /// wedge. Judged as every cut is (`LoaderCore.Cancels.judge`): the trickle rule's re-request and a first wedge
    /// with buffer in hand go again at once; a wedge with little buffer is decided again; an over-selection, the
    /// ABR rule's abandonment and a second wedge are abandoned; the trickle rule's failure fails the request.
    public mutating func cut(_ cut: MonitorCut, requestID: Int, segment: @autoclosure () -> SegmentWedge?) -> Next {
        guard case .judged(let reason, let failure) = cut else { return .giveBack(.liveStepDropped, record: nil) }
        switch cancels.judge(reason, segment: reason == .wedged ? segment() : nil) {
        case .reRequest:
            return reRequestNow(requestID: requestID)
        case .trickleFailed:
            return .fail(message: failure ?? "\(purpose.rawValue) \(url) trickled: still too slow after its re-requests", httpStatus: nil)
        case .reDecide:
            // Little buffer left: decide again under the recovery cap (the probe rung) rather than wait for the
            // same rung's bytes (WedgeRules.reDecideBelowBufferSegments); the attempt stands.
            return .giveBack(.reDecide, record: CutShort.immediateRetry(requestID: requestID, url: url, attemptsMade: attemptsMade))
        case .abandon(let why):
            return .giveBack(why, record: nil)
        case .notASegment:
            return .fail(message: "\(purpose.rawValue) \(url) wedged twice", httpStatus: nil)
        }
    }

    /// Attempt `requestID` failed with `error` (an HTTP status, a transport error, or a wedge past its
    /// re-requests), and no failover took its URI: retried after the policy's backoff, or given up.
    public func failed(_ error: LoadError, requestID: Int) -> Next {
        switch policy.decide(after: error, attemptsMade: attemptsMade) {
        case .retry(let delay):
            let fresh = Self.freshConnectionKinds.contains(error.kind)
            return .retry(
                RetryScheduled(requestID: requestID, url: url, attemptsMade: attemptsMade, delaySeconds: delay, errorKind: error.kind),
                afterSeconds: delay, freshConnection: fresh)
        case .giveUp(let reason):
            return .fail(message: Self.givingUpMessage(purpose: purpose, url: url, error: error, reason: reason), httpStatus: error.httpStatus)
        }
    }

    /// After these, the next attempt does not trust the old connection.
    public static let freshConnectionKinds: Set<LoadErrorKind> = [.firstByteTimeout, .transferTimeout, .truncatedBody, .connect]

    /// Why a request was given up after its last attempt: what it was, the error (and HTTP status), and the retry
    /// policy's reason. One wording for both shells (`LoaderCore`'s wedged playlists too).
    public static func givingUpMessage(purpose: RequestPurpose, url: String, error: LoadError, reason: String) -> String {
        "\(purpose.rawValue) \(url) failed: \(error.kind.rawValue)\(error.httpStatus.map { " (HTTP \($0))" } ?? ""): \(error.message) — \(reason)"
    }

    /// A URI the playlist should never have named, as the playlist error it is (the shell's exit 65), at once: no
    /// retry, no failover, no estimate penalty. An http(s) URL without a host; a scheme hlsplay does not fetch; a
    /// local playlist naming a file outside its directory. Nil: an error of another kind.
    public static func playlistFault(_ error: LoadError, purpose: RequestPurpose, url: String) -> String? {
        let what = purpose == .multivariantPlaylist ? "the URL" : "the playlist names \(purpose.rawValue) \(url):"
        switch error.kind {
        case .invalidURL, .unsupportedScheme:
            return "\(what) \(error.message); not fetched"
        case .localFileRefused:
            return
                "\(what) \(error.message), the top-level playlist's directory: a local playlist may name only files under its own directory (--allow-any-local-file lifts this); not read"
        default:
            return nil
        }
    }

    private mutating func reRequestNow(requestID: Int) -> Next {
        attemptsMade -= 1
        return .reRequestNow(CutShort.immediateRetry(requestID: requestID, url: url, attemptsMade: attemptsMade))
    }
}
