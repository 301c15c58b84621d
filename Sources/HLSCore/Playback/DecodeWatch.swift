// What the monitor knows of the decode loop, and the two judgements it makes of it (pure: instants in, verdicts
// out). The decode loop reports each packet it finishes (`decoded`); the monitor reads the decode lag since its
// last reading for the stall predictor (`lagSinceLastReading`), asks whether decode has hung while playing
// (`hang`, once per episode), and whether a stream that ended without a single frame has been so for long
// enough to stop the session (`endedWithoutFrame`).

public struct DecodeWatch: Sendable, Equatable {
    /// Wall seconds spent inside the decoders, and media seconds of video they produced, since the start.
    public private(set) var busySeconds = 0.0
    public private(set) var mediaSeconds = 0.0
    /// Both at the monitor's last reading (`lagSinceLastReading`).
    private var busySecondsRead = 0.0
    private var mediaSecondsRead = 0.0
    /// When the decode loop last finished a packet (nil before the first).
    public private(set) var lastProgressAt: MonotonicInstant?
    /// An open decode-hang episode: reported once, until decode moves again.
    public private(set) var hangReported = false
    /// Since when the stream has ended with nothing to decode and no frame.
    private var endWithoutFrameSince: MonotonicInstant?

    public init() {}

    /// The decode loop finished a packet at `now`, after `busySeconds` in the decoder, giving `mediaSeconds` of
    /// video (0 for audio): decode moves, and a hang episode ends.
    public mutating func decoded(busySeconds busy: Double, mediaSeconds media: Double, at now: MonotonicInstant) {
        busySeconds += busy
        mediaSeconds += media
        lastProgressAt = now
        hangReported = false
    }

    /// The seconds spent decoding and the media seconds decoded since the last reading (the predictor's decode
    /// lag, `DecodeLag.ratio`); the reading is taken.
    public mutating func lagSinceLastReading() -> (busySeconds: Double, mediaSeconds: Double) {
        defer { (busySecondsRead, mediaSecondsRead) = (busySeconds, mediaSeconds) }
        return (busySeconds - busySecondsRead, mediaSeconds - mediaSecondsRead)
    }

    /// While playing at `positionSeconds`, with the next packet due at `nextDueSeconds` (nil: none buffered):
    /// the seconds decode has been idle when that is at least `thresholdSeconds` with a packet due, and the episode
    /// not yet reported (it is reported now); else nil. Before the first packet nothing can hang.
    public mutating func hang(
        at now: MonotonicInstant, positionSeconds: Double, nextDueSeconds: Double?, thresholdSeconds: Double
    ) -> Double? {
        guard !hangReported, let last = lastProgressAt, let due = nextDueSeconds, due <= positionSeconds else { return nil }
        let idle = now.seconds(since: last)
        guard idle >= thresholdSeconds else { return nil }
        hangReported = true
        return idle
    }

    /// Whether the stream has ended with nothing left to decode and no frame (`endedEmpty`) for `afterSeconds` at
    /// `now`: the session cannot start. The episode starts at the first `now` it holds and ends when it does not.
    public mutating func endedWithoutFrame(_ endedEmpty: Bool, at now: MonotonicInstant, afterSeconds: Double) -> Bool {
        guard endedEmpty else {
            endWithoutFrameSince = nil
            return false
        }
        if endWithoutFrameSince == nil { endWithoutFrameSince = now }
        return now.seconds(since: endWithoutFrameSince!) >= afterSeconds
    }
}
