// A body that trickles: bytes keep coming, so neither the wedge window (~0
// bytes for N s) nor the request's stall timeout (no byte for 10 s) ever
// fires, yet the rest of the response will not arrive in any useful time.
// 188 bytes every 0.5 s is 3 kbit/s: a 150 kB segment takes almost 7 minutes.
// The over-selection rule (ByteProgressClassifier) abandons such a fetch only
// when there is a lower rung to go to; on a one-rung stream, on the lowest
// rung of a ladder, for a pinned variant, an alternate audio rendition or a
// playlist there is none, and the player used to wait with no limit and no
// report.
//
// This rule judges the in-flight request by its projected completion: the
// bytes still to come at the rate they are arriving now, against what the
// session can afford — the forward buffer plus a startup budget derived from
// the segment duration — and, when there is nothing lower to go to, against a
// looser patience bound. Verdicts: healthy / abandon and decide again lower /
// re-request on a fresh connection / fail the request with a reason. Pure: the
// runtime's wall-clock monitor passes a snapshot each tick. Formulas and
// tunables: docs/startup-cap.md §4b.

import Foundation

/// The in-flight request as the trickle rule sees it at one monitor tick.
public struct TrickleSnapshot: Sendable, Equatable, Codable {
    /// Body bytes received so far.
    public var bytesReceived: Int
    /// Content-Length (or byte-range length), when known.
    public var bytesExpected: Int?
    /// BANDWIDTH of the rung being fetched, bits per second (nil: unknown, e.g. a media playlist URL or a playlist request).
    public var rungBitrateBps: Double?
    /// Duration of the segment being fetched, seconds of media (0 for a playlist).
    public var segmentDurationSeconds: Double
    /// Seconds since the request started.
    public var elapsedSeconds: Double
    /// Seconds since the last body byte (since the request started when none has arrived).
    public var secondsSinceLastByte: Double
    /// Body bits since the first byte ÷ seconds since the first byte, bits per second (nil before two measurable instants).
    public var averageRateBps: Double?
    /// Body bits over the last `rateWindowSeconds` ÷ that window, bits per second (nil while the request is younger than the window).
    public var recentRateBps: Double?
    /// The window `recentRateBps` was measured over, seconds.
    public var rateWindowSeconds: Double
    /// Forward buffer ahead of the playhead, seconds of media (0 while starting up or stalled).
    public var forwardBufferSeconds: Double
    /// Seconds this request has kept the viewer waiting: 0 while playing; while starting up
    /// or stalled, the time since the request started or the stall began, whichever is later.
    public var waitedSeconds: Double
    /// A lower rung the selector may pick exists (not for a pinned variant, an audio rendition or a playlist).
    public var lowerRungAvailable: Bool
    /// Fresh-connection re-requests this rule already made for the same request.
    public var reRequestsSoFar: Int
    /// The byte-progress wedge window N for this request, seconds: silences shorter than it are tolerated.
    public var wedgeWindowSeconds: Double

    public init(
        bytesReceived: Int, bytesExpected: Int?, rungBitrateBps: Double?, segmentDurationSeconds: Double,
        elapsedSeconds: Double, secondsSinceLastByte: Double, averageRateBps: Double?, recentRateBps: Double?,
        rateWindowSeconds: Double, forwardBufferSeconds: Double, waitedSeconds: Double, lowerRungAvailable: Bool,
        reRequestsSoFar: Int, wedgeWindowSeconds: Double
    ) {
        self.bytesReceived = bytesReceived
        self.bytesExpected = bytesExpected
        self.rungBitrateBps = rungBitrateBps
        self.segmentDurationSeconds = segmentDurationSeconds
        self.elapsedSeconds = elapsedSeconds
        self.secondsSinceLastByte = secondsSinceLastByte
        self.averageRateBps = averageRateBps
        self.recentRateBps = recentRateBps
        self.rateWindowSeconds = rateWindowSeconds
        self.forwardBufferSeconds = forwardBufferSeconds
        self.waitedSeconds = waitedSeconds
        self.lowerRungAvailable = lowerRungAvailable
        self.reRequestsSoFar = reRequestsSoFar
        self.wedgeWindowSeconds = wedgeWindowSeconds
    }
}

public enum TrickleVerdict: String, Sendable, Equatable, Codable {
    case healthy
    /// Over the budget with a lower rung to go to: abandon, cap below this rung, decide again.
    case abandonLower = "abandon-lower"
    /// Over the patience bound with nothing lower: abort and re-request on a fresh connection.
    case reRequest = "re-request"
    /// Over the patience bound again after the re-requests: the request fails, with the reason.
    case fail
}

/// Why the rule said what it said (for the log).
public enum TrickleReason: String, Sendable, Equatable, Codable {
    /// All expected bytes are in.
    case complete
    /// Younger than the judging age (the wedge window, at least half a segment).
    case tooEarlyToJudge = "too-early-to-judge"
    /// No byte for `maximumIdleSeconds`: a silence is the wedge rule's business, not a rate.
    case goingQuiet = "going-quiet"
    /// No rate measure yet.
    case noRateMeasure = "no-rate-measure"
    /// Neither Content-Length nor a rung bitrate: the rest cannot be projected (judged by time waited alone).
    case noSizeEstimate = "no-size-estimate"
    /// The rest arrives within the buffer plus the startup budget.
    case withinBudget = "within-budget"
    /// Over the budget, nothing lower to go to, but within the patience bound: waited for.
    case overBudgetWithinPatience = "over-budget-within-patience"
    /// Over the budget (verdict abandon-lower).
    case overBudget = "over-budget"
    /// Over the patience bound (verdict re-request or fail).
    case overPatience = "over-patience"
}

/// The judgement with every number behind it.
public struct TrickleAssessment: Sendable, Equatable, Codable {
    public var verdict: TrickleVerdict
    public var reason: TrickleReason
    /// The rate the rest is projected at, bits per second, and which measure it is (`recent` or `average`).
    public var rateBps: Double?
    public var rateSource: String?
    /// The expected body size, bytes, and where it came from (`content-length` or `rung-bitrate`).
    public var expectedBytes: Int?
    public var expectedSource: String?
    /// Seconds until the rest arrives at `rateBps`.
    public var projectedRemainingSeconds: Double?
    /// Projected completion, seconds since the request started (elapsed + projected remaining).
    public var projectedCompletionSeconds: Double?
    /// The startup budget and the patience bound for this request, seconds.
    public var startupBudgetSeconds: Double
    public var patienceSeconds: Double
    /// What the session can afford from now: forward buffer + startup budget − waited, seconds.
    public var affordableRemainingSeconds: Double
    /// How long it will wait from now with nothing lower: forward buffer + patience − waited, seconds.
    public var patientRemainingSeconds: Double
    public var forwardBufferSeconds: Double
    public var waitedSeconds: Double
    public var lowerRungAvailable: Bool
    public var reRequestsSoFar: Int

    /// One line for messages: the inputs a reader needs to check the verdict.
    public var summary: String {
        let rate = rateBps.map { String(format: "%.0f bit/s (%@)", $0, rateSource ?? "?") } ?? "no rate"
        let projected =
            projectedCompletionSeconds.map { String(format: "projected completion %.1f s after the request started", $0) }
            ?? String(format: "size unknown, waited %.1f s", waitedSeconds)
        return String(
            format: "%@ at %@; affordable %.1f s from now (buffer %.1f s + startup budget %.1f s − waited %.1f s), patience %.1f s",
            projected, rate, affordableRemainingSeconds, forwardBufferSeconds, startupBudgetSeconds, waitedSeconds, patienceSeconds)
    }
}

public struct TrickleClassifier: Sendable, Equatable, Codable {
    /// Startup budget = max(this × segment duration, `minimumStartupBudgetSeconds`): how long one
    /// request may keep the viewer waiting before a lower rung is tried. The seed's slow-but-healthy
    /// start (2 Mbit/s link, 6 s segments) takes up to 7.2 s for a legitimate segment; 3 × 6 s = 18 s
    /// leaves room for a 2 s loss pause and a pessimistic early rate. Segment durations.
    public var startupBudgetSegmentMultiple: Double = 3
    /// Floor of the startup budget, seconds: hls.js's first-byte ceiling and hlsplay's request
    /// timeouts are 10 s; short segments and playlists must not be judged on less.
    public var minimumStartupBudgetSeconds: Double = 10
    /// Patience = max(this × segment duration, `minimumPatienceSeconds`): with nothing lower to go to,
    /// a request whose rest would keep the viewer waiting longer than this is given up on. At 5
    /// segment durations a stream stalls ≥ 80% of the time — not playable, only waited for. Segment durations.
    public var patienceSegmentMultiple: Double = 5
    /// Floor of the patience bound, seconds: three times the request timeouts.
    public var minimumPatienceSeconds: Double = 30
    /// Judged no earlier than this share of a segment duration (hls.js's abandon rule waits half a
    /// segment), and never before the wedge window has passed. Fraction.
    public var minimumElapsedSegmentShare: Double = 0.5
    /// Judged only while bytes flow: the last byte came within this long, seconds (as the over-selection rule).
    public var maximumIdleSeconds: Double = 1
    /// The recent rate is measured over this many wedge windows: a tolerated silence (< N) then cuts
    /// it by at most half, so one loss pause cannot make a healthy transfer look like a trickle. Count.
    public var rateWindowWedgeWindows: Double = 2
    /// Fresh-connection re-requests before the request fails: one rules out a connection-specific
    /// trickle (a bad edge, a broken middlebox); a second trickle says the path is the problem. Count.
    public var maximumReRequests: Int = 1

    public init() {}

    public func startupBudgetSeconds(segmentDurationSeconds: Double) -> Double {
        max(startupBudgetSegmentMultiple * max(0, segmentDurationSeconds), minimumStartupBudgetSeconds)
    }

    public func patienceSeconds(segmentDurationSeconds: Double) -> Double {
        max(patienceSegmentMultiple * max(0, segmentDurationSeconds), minimumPatienceSeconds)
    }

    /// The window the runtime measures the recent rate over, seconds.
    public func rateWindowSeconds(wedgeWindowSeconds: Double) -> Double {
        rateWindowWedgeWindows * max(0, wedgeWindowSeconds)
    }

    public func classify(_ s: TrickleSnapshot) -> TrickleAssessment {
        let budget = startupBudgetSeconds(segmentDurationSeconds: s.segmentDurationSeconds)
        let patience = patienceSeconds(segmentDurationSeconds: s.segmentDurationSeconds)
        let buffer = max(0, s.forwardBufferSeconds)
        let waited = max(0, s.waitedSeconds)
        var a = TrickleAssessment(
            verdict: .healthy, reason: .withinBudget, startupBudgetSeconds: budget, patienceSeconds: patience,
            affordableRemainingSeconds: buffer + budget - waited, patientRemainingSeconds: buffer + patience - waited,
            forwardBufferSeconds: buffer, waitedSeconds: waited, lowerRungAvailable: s.lowerRungAvailable,
            reRequestsSoFar: s.reRequestsSoFar)
        if let expected = s.bytesExpected, expected > 0 {
            a.expectedBytes = expected
            a.expectedSource = "content-length"
        } else if let rung = s.rungBitrateBps, rung > 0, s.segmentDurationSeconds > 0 {
            // BANDWIDTH × EXTINF can exceed Int (2^53 bit/s × 10^6 s): saturate.
            a.expectedBytes = Int(saturating: (rung * s.segmentDurationSeconds / 8).rounded())
            a.expectedSource = "rung-bitrate"
        }
        if let expected = a.expectedBytes, s.bytesReceived >= expected {
            a.reason = .complete
            return a
        }
        let judgeAfter = max(s.wedgeWindowSeconds, minimumElapsedSegmentShare * max(0, s.segmentDurationSeconds))
        if s.elapsedSeconds < judgeAfter {
            a.reason = .tooEarlyToJudge
            return a
        }
        if max(0, s.secondsSinceLastByte) >= maximumIdleSeconds {
            a.reason = .goingQuiet
            return a
        }
        if let recent = s.recentRateBps, recent > 0, recent.isFinite {
            a.rateBps = recent
            a.rateSource = "recent"
        } else if let average = s.averageRateBps, average > 0, average.isFinite {
            a.rateBps = average
            a.rateSource = "average"
        }
        guard let rate = a.rateBps else {
            a.reason = .noRateMeasure
            return a
        }
        guard let expected = a.expectedBytes else {
            // Nothing to project: only the time already waited can say it is too long.
            guard waited >= patience else {
                a.reason = .noSizeEstimate
                return a
            }
            a.reason = .overPatience
            a.verdict = s.lowerRungAvailable ? .abandonLower : s.reRequestsSoFar < maximumReRequests ? .reRequest : .fail
            return a
        }
        let remaining = Double(max(0, expected - s.bytesReceived)) * 8 / rate
        a.projectedRemainingSeconds = remaining
        a.projectedCompletionSeconds = s.elapsedSeconds + remaining
        if remaining < a.affordableRemainingSeconds {
            a.reason = .withinBudget
            return a
        }
        if s.lowerRungAvailable {
            a.reason = .overBudget
            a.verdict = .abandonLower
            return a
        }
        if remaining < a.patientRemainingSeconds {
            a.reason = .overBudgetWithinPatience
            return a
        }
        a.reason = .overPatience
        a.verdict = s.reRequestsSoFar < maximumReRequests ? .reRequest : .fail
        return a
    }
}

/// The body bytes of one request at the monitor's ticks, for its recent rate. Pure: the runtime
/// adds a sample per tick and asks for the rate over a window ending now.
public struct ByteRateWindow: Sendable {
    private var samples: [(at: MonotonicInstant, bytes: Int)] = []

    public init() {}

    /// Records the running byte total at `at`; keeps what a window of up to `keepSeconds` needs.
    public mutating func add(bytes: Int, at: MonotonicInstant, keepSeconds: Double) {
        samples.append((at, bytes))
        // Keep the newest sample at or before the window's start, and everything after it.
        let start = at.advanced(bySeconds: -max(0, keepSeconds))
        if let k = samples.lastIndex(where: { $0.at <= start }), k > 0 {
            samples.removeFirst(k)
        }
    }

    /// Bits per second over the last `windowSeconds` up to the newest sample, measured from the
    /// newest sample at or before the window's start; nil when no sample is that old (the request
    /// is younger than the window) or the window is empty.
    public func rateBps(windowSeconds: Double) -> Double? {
        guard let last = samples.last, windowSeconds > 0 else { return nil }
        let start = last.at.advanced(bySeconds: -windowSeconds)
        guard let first = samples.last(where: { $0.at <= start }) else { return nil }
        let seconds = last.at.seconds(since: first.at)
        guard seconds > 0 else { return nil }
        return Double(max(0, last.bytes - first.bytes)) * 8 / seconds
    }
}
