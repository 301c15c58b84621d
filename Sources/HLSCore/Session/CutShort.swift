// The records of a request the session cut short, written by one rule for both shells (docs/architecture.md,
// "The records of a cancel"): the shell says what went over the wire — status, body bytes, timings, HTTP version,
// whether the transfer was aborted, as far as it has them — and this says why the request ended. A real and a
// virtual session therefore log the same `errorKind`, `errorMessage` and `cancelReason` for the same cut, and the
// same `retry.scheduled` for the same re-request.

/// How the session cut a request short.
public enum CutShort: Sendable, Equatable {
    /// A request the monitor cancelled: a segment wedged, over-selected, or abandoned by the ABR rule; a segment or
    /// playlist the trickle rule re-requested or failed.
    case monitorCancelled(InFlightCancel)
    /// A playlist (or key, or initialization section) request found wedged and asked for again at once.
    case playlistWedgeReRequested
    /// A playlist request wedged past its re-requests: a failed attempt of the retry policy with `error`.
    case playlistWedgeFailed(LoadError)
    /// A request still in flight when the session stopped (`--duration` reached, a signal, a fatal error).
    case sessionStopped

    /// The attempt's `request.end`: `wire` (the shell's record of what went over the wire, its `ok` false) with
    /// why it ended — `errorKind`, `errorMessage`, and `cancelReason` for a request cancelled (`errorKind`
    /// `cancelled`).
    public func requestEnd(_ wire: RequestEnd) -> RequestEnd {
        var end = wire
        end.ok = false
        switch self {
        case .monitorCancelled(let reason):
            end.errorKind = .cancelled
            end.errorMessage = reason.cutShortMessage
            end.cancelReason = reason.requestCancelReason
        case .playlistWedgeReRequested:
            end.errorKind = .transferTimeout
            end.errorMessage = "no byte for the wedge window (byte-progress monitor); re-requested"
            end.cancelReason = nil
        case .playlistWedgeFailed(let error):
            end.errorKind = error.kind
            end.errorMessage = error.message
            end.cancelReason = nil
        case .sessionStopped:
            end.errorKind = .cancelled
            end.errorMessage = "cancelled: the session stopped"
            end.cancelReason = .sessionStopping
        }
        return end
    }

    /// The `retry.scheduled` of a request asked for again at once (a wedge re-request, or a decision again after
    /// a wedge): no backoff, counted as a transfer timeout. `attemptsMade`: the retry policy's attempts the
    /// request has used — a re-request is not one (the attempt's number less one), a decision again is.
    public static func immediateRetry(requestID: Int, url: String, attemptsMade: Int) -> RetryScheduled {
        RetryScheduled(requestID: requestID, url: url, attemptsMade: attemptsMade, delaySeconds: 0, errorKind: .transferTimeout)
    }
}

extension InFlightCancel {
    /// The `request.end.errorMessage` of a request the monitor cancelled for this.
    public var cutShortMessage: String {
        switch self {
        case .wedged: "wedged (byte-progress monitor)"
        case .overSelected: "abandoned: over-selected"
        case .abrAbandoned: "abandoned by the ABR rule (abr.abandon)"
        case .trickleReRequest: "trickling: re-requested on a fresh connection (request.trickle)"
        case .trickleFailed: "trickling: failed (request.trickle)"
        }
    }
}
