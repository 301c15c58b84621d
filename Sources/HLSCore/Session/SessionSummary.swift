// The session summary, computed from the session's own events so that the
// summary line and the events before it always agree.

import Foundation

public enum ExitReason: String, Sendable, Equatable, Codable {
    /// VOD played to the end.
    case completed
    /// `--duration` seconds were played.
    case durationReached
    /// SIGINT or SIGTERM.
    case interrupted
    /// A fatal error ended the session (see `error`).
    case error
}

public struct SessionSummary: Sendable, Equatable, Codable {
    public var type = "summary"
    public var url: String
    public var isLive: Bool?
    public var exitReason: ExitReason
    public var error: String?
    /// The first frame playback waited for (video; audio when the stream starts without video).
    public var timeToFirstFrameSeconds: Double?
    /// When the media clock first started advancing (`playback.started`), seconds since session start;
    /// absent when playback never started.
    public var timeToPlaybackStartSeconds: Double? = nil
    /// Playback start minus the first frame: the wait for the start buffer after the first frame was decoded,
    /// seconds (absent without either).
    public var startupWaitSeconds: Double? = nil
    /// When the end of the stream was played (`playback.ended`), seconds since session start (absent: it was not).
    /// The session's wall time is timeToPlaybackStartSeconds + playedSeconds + stallSeconds + the time after this.
    public var playbackEndedAtSeconds: Double? = nil
    /// The first decoded video and audio frames, seconds since session start (absent: none of that kind).
    public var timeToFirstVideoSeconds: Double?
    public var timeToFirstAudioSeconds: Double?
    /// The stream was an I-frame-only playlist, played as trick-play content (absent otherwise).
    public var iFramesOnly: Bool?
    public var startup: StartupBreakdown
    public var stallCount: Int
    public var stallSeconds: Double
    public var playedSeconds: Double
    /// BANDWIDTH of the played media, weighted by media time played, bits per second.
    public var averageBitrateBps: Double
    /// BANDWIDTH of the variant at the final position, bits per second.
    public var lastBitrateBps: Int?
    public var variantSwitches: Int
    /// Requests made (each attempt counts).
    public var requests: Int
    public var failedRequests: Int
    public var retries: Int
    /// Body bytes received.
    public var bytes: Int
    /// The variant's segments; an alternate audio rendition's are `audioSegmentsBuffered`.
    public var segmentsBuffered: Int
    public var audioSegmentsBuffered: Int?
    public var segmentsSkipped: Int
    public var decodedVideoFrames: Int
    public var decodedAudioFrames: Int
    public var lateVideoFrames: Int
    public var decodeErrors: Int
    /// Wall-clock seconds from session start to this summary.
    public var sessionSeconds: Double
    /// The bandwidth estimate at the end, bits per second.
    public var finalEstimateBps: Double?
    /// The estimate-availability gate at start: warm, cold or recovery (docs/startup-cap.md).
    public var startupGate: String?
    /// Times the startup/recovery cap changed.
    public var capChanges: Int
    /// In-flight requests found wedged (≈0 bytes for the wedge window) and re-requested.
    public var wedgesDetected: Int
    /// In-flight requests abandoned as over-selected (and the cap lowered).
    public var overSelections: Int
    /// Trickle verdicts that acted: abandoned for a lower rung, re-requested, or failed (docs/startup-cap.md §4b).
    /// Absent in logs written before the rule existed.
    public var trickleVerdicts: Int? = nil
    /// Segment requests the reference rule abandoned by its own rule (`abr.abandon`: BOLA-E); absent when none.
    public var abrAbandonments: Int? = nil
    /// Live only: resyncs to the live edge and full restarts performed (docs/startup-cap.md §5).
    public var liveResyncs: Int?
    public var liveRestarts: Int?
    /// Live latency at the end and on average while playing, seconds (live streams with EXT-X-PROGRAM-DATE-TIME).
    public var liveLatencySeconds: Double?
    public var averageLiveLatencySeconds: Double?
    /// The stall predictor in use (nil: the policy controller was off).
    public var predictor: String?
    public var policyChanges: Int
    /// Seconds spent in each playback policy.
    public var policySeconds: [String: Double]
    /// Requests the request-rate bound held back, and their waits added up
    /// (seconds); absent when it held nothing back (`request.paced`).
    public var pacedRequests: Int? = nil
    public var pacedSeconds: Double? = nil
    /// Episodes in which the forward buffer's byte bound stopped loading, and how long they
    /// held it in all (seconds); absent when it never did (`buffer.byteBound`).
    public var byteBoundEpisodes: Int? = nil
    public var byteBoundSeconds: Double? = nil
    /// Quality of experience: played bitrate, rebuffering, switches, time per rung, linear QoE (`SessionQoE`).
    /// Absent in logs written before it existed.
    public var qoe: SessionQoE? = nil
}

/// Folds events into a summary.
public struct SummaryBuilder: Sendable {
    private var requests = 0
    private var failedRequests = 0
    private var retries = 0
    private var bytes = 0
    private var stallCount = 0
    private var stallSeconds = 0.0
    private var switches = 0
    private var skipped = 0
    private var firstFrame: FirstFrame?
    private var firstOfKind: [String: Double] = [:]
    private var iFramesOnly = false
    private var decode = DecodeStats(videoFrames: 0, audioFrames: 0, lateVideoFrames: 0, decodeErrors: 0)
    private var segments: [QoEChunk] = []
    private var playbackStartedAt: Double?
    private var playbackEndedAt: Double?
    private var ladderTopBps: Int?
    private var lastBreakdown = StartupBreakdown()
    private var gate: String?
    private var capChanges = 0
    private var wedges = 0
    private var overSelections = 0
    private var trickleVerdicts = 0
    private var abrAbandonments = 0
    private var liveResyncs = 0
    private var audioSegments = 0
    private var liveRestarts = 0
    private var predictor: String?
    private var latencies: [Double] = []
    private var policyChanges = 0
    private var policyEntered: [(policy: String, atSeconds: Double)] = []
    private var pacedRequests = 0
    private var pacedSeconds = 0.0
    private var byteBoundEpisodes = 0
    private var byteBoundSeconds = 0.0

    public init() {}

    public mutating func record(_ event: SessionEvent) {
        switch event {
        case .requestEnd(let e):
            requests += 1
            bytes += e.bytes
            if !e.ok { failedRequests += 1 }
        case .retryScheduled:
            retries += 1
        case .stallStart:
            stallCount += 1
        case .stallEnd(let e):
            stallSeconds += e.stallSeconds ?? 0
        case .variantSwitch:
            switches += 1
        case .segmentBuffered(let e) where e.track == "audio":
            audioSegments += 1
        case .segmentBuffered(let e):
            segments.append(
                QoEChunk(
                    variantIndex: e.variantIndex, bandwidthBps: e.bandwidthBps,
                    startSeconds: e.startSeconds, durationSeconds: e.durationSeconds, bytes: e.bytes))
        case .playbackStarted(let e):
            if playbackStartedAt == nil { playbackStartedAt = e.atSeconds }
        case .playbackEnded(let e):
            playbackEndedAt = e.atSeconds
        case .variantDecision(let e):
            if let top = e.inputs.ladder.map(\.bandwidthBps).max() { ladderTopBps = max(ladderTopBps ?? 0, top) }
        case .segmentSkipped:
            skipped += 1
        case .firstFrame(let e):
            firstFrame = e
        case .trackFirstFrame(let e):
            if firstOfKind[e.kind] == nil { firstOfKind[e.kind] = e.timeToFirstFrameSeconds }
        case .playlistLoaded(let e):
            if e.iFramesOnly == true { iFramesOnly = true }
        case .decodeStats(let e):
            decode = e
        case .bufferSample(let e):
            if e.phase == .playing, let l = e.liveLatencySeconds { latencies.append(l) }
        case .stallRisk(let e):
            if predictor == nil { predictor = e.predictor }
            if policyEntered.isEmpty { policyEntered.append((e.policy.rawValue, 0)) }
        case .policyChange(let e):
            policyChanges += 1
            policyEntered.append((e.to.rawValue, e.atSeconds))
        case .capGate(let e):
            gate = e.gate
        case .capChange:
            capChanges += 1
        case .liveResync(let e):
            if e.action == .resync { liveResyncs += 1 }
            if e.action == .restart { liveRestarts += 1 }
        case .requestPaced(let e) where e.action == .released:
            pacedRequests += e.heldRequests ?? 0
            pacedSeconds += e.heldSeconds ?? 0
        case .byteBound(let e):
            if e.action == .holding { byteBoundEpisodes += 1 }
            byteBoundSeconds += e.heldSeconds ?? 0
        case .byteProgress(let e):
            switch e.assessment.verdict {
            case .wedged: wedges += 1
            case .overSelected: overSelections += 1
            default: break
            }
        case .trickle(let e):
            if e.assessment.verdict != .healthy { trickleVerdicts += 1 }
        case .abrAbandon:
            abrAbandonments += 1
        default:
            break
        }
    }

    /// The startup breakdown collected so far (filled by the runtime as steps finish).
    public mutating func setBreakdown(_ b: StartupBreakdown) { lastBreakdown = b }

    public func summary(
        url: String, isLive: Bool?, exitReason: ExitReason, error: String?,
        startPositionSeconds: Double, finalPositionSeconds: Double,
        sessionSeconds: Double, finalEstimateBps: Double?
    ) -> SessionSummary {
        var policySeconds: [String: Double] = [:]
        for (i, entry) in policyEntered.enumerated() {
            let end = i + 1 < policyEntered.count ? policyEntered[i + 1].atSeconds : sessionSeconds
            policySeconds[entry.policy, default: 0] += max(0, end - entry.atSeconds)
        }
        let played = max(0, finalPositionSeconds - startPositionSeconds)
        var weighted = 0.0
        var covered = 0.0
        var last: Int?
        for s in segments {
            let overlap = min(s.startSeconds + s.durationSeconds, finalPositionSeconds) - max(s.startSeconds, startPositionSeconds)
            if overlap > 0 {
                weighted += Double(s.bandwidthBps) * overlap
                covered += overlap
            }
            if s.startSeconds <= finalPositionSeconds || last == nil { last = s.bandwidthBps }
        }
        var summary = SessionSummary(
            url: url, isLive: isLive, exitReason: exitReason, error: error,
            timeToFirstFrameSeconds: firstFrame?.timeToFirstFrameSeconds,
            timeToFirstVideoSeconds: firstOfKind["video"], timeToFirstAudioSeconds: firstOfKind["audio"],
            iFramesOnly: iFramesOnly ? true : nil,
            startup: firstFrame?.breakdown ?? lastBreakdown,
            stallCount: stallCount, stallSeconds: stallSeconds, playedSeconds: played,
            averageBitrateBps: covered > 0 ? weighted / covered : 0, lastBitrateBps: last,
            variantSwitches: switches, requests: requests, failedRequests: failedRequests, retries: retries,
            bytes: bytes, segmentsBuffered: segments.count, audioSegmentsBuffered: audioSegments > 0 ? audioSegments : nil, segmentsSkipped: skipped,
            decodedVideoFrames: decode.videoFrames, decodedAudioFrames: decode.audioFrames,
            lateVideoFrames: decode.lateVideoFrames, decodeErrors: decode.decodeErrors,
            sessionSeconds: sessionSeconds, finalEstimateBps: finalEstimateBps,
            startupGate: gate, capChanges: capChanges, wedgesDetected: wedges, overSelections: overSelections,
            liveResyncs: isLive == true ? liveResyncs : nil, liveRestarts: isLive == true ? liveRestarts : nil,
            liveLatencySeconds: latencies.last,
            averageLiveLatencySeconds: latencies.isEmpty ? nil : latencies.reduce(0, +) / Double(latencies.count),
            predictor: predictor, policyChanges: policyChanges, policySeconds: policySeconds)
        summary.trickleVerdicts = trickleVerdicts
        summary.abrAbandonments = abrAbandonments > 0 ? abrAbandonments : nil
        summary.timeToPlaybackStartSeconds = playbackStartedAt
        if let start = playbackStartedAt, let first = firstFrame?.timeToFirstFrameSeconds {
            summary.startupWaitSeconds = max(0, start - first)
        }
        summary.playbackEndedAtSeconds = playbackEndedAt
        summary.startup.playbackStartAtSeconds = playbackStartedAt
        summary.startup.startupWaitSeconds = summary.startupWaitSeconds
        summary.qoe = SessionQoE.compute(
            chunks: segments, startPositionSeconds: startPositionSeconds,
            finalPositionSeconds: finalPositionSeconds, stallCount: stallCount,
            stallSeconds: stallSeconds, ladderTopBps: ladderTopBps)
        if pacedRequests > 0 {
            summary.pacedRequests = pacedRequests
            summary.pacedSeconds = pacedSeconds
        }
        if byteBoundEpisodes > 0 {
            summary.byteBoundEpisodes = byteBoundEpisodes
            summary.byteBoundSeconds = byteBoundSeconds
        }
        return summary
    }
}
