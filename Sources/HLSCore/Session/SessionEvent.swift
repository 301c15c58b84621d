// Session events: everything the session log records, as plain values.
//
// The runtime stamps each event with monotonic seconds since the session
// started and writes it as one JSON object per line (JSON Lines). The
// summary is computed from these same events (SummaryBuilder), so the log
// and the summary cannot disagree. Schema: docs/session-log.md.

import Foundation

/// The session-log schema version. Bump on any incompatible change and
/// document it in docs/session-log.md.
public let sessionLogSchemaVersion = 1
public let sessionLogSchemaName = "hlsplay.session-log"

/// What a request was for.
public enum RequestPurpose: String, Sendable, Equatable, Codable {
    case multivariantPlaylist = "multivariant-playlist"
    case mediaPlaylist = "media-playlist"
    case segment
    case initSection = "init-section"
    case key
    /// A content steering manifest (EXT-X-CONTENT-STEERING SERVER-URI).
    case steeringManifest = "steering-manifest"
}

public struct TimingsRecord: Sendable, Equatable, Codable {
    public var nameLookupSeconds: Double
    public var connectSeconds: Double
    public var tlsSeconds: Double
    /// The first response byte; nil (absent) for an attempt that ended before any arrived.
    public var firstByteSeconds: Double?
    /// The end of the transfer, whether it completed or was cut short.
    public var totalSeconds: Double
    public init(nameLookupSeconds: Double, connectSeconds: Double, tlsSeconds: Double, firstByteSeconds: Double?, totalSeconds: Double) {
        self.nameLookupSeconds = nameLookupSeconds
        self.connectSeconds = connectSeconds
        self.tlsSeconds = tlsSeconds
        self.firstByteSeconds = firstByteSeconds
        self.totalSeconds = totalSeconds
    }
}

public struct TCPInfoRecord: Sendable, Equatable, Codable {
    public var rttSeconds: Double
    public var rttVarianceSeconds: Double
    public var totalRetransmits: Int
    public var congestionWindowSegments: Int
    public var deliveryRateBps: Double?
    public var deliveryRateAppLimited: Bool?
    public init(
        rttSeconds: Double, rttVarianceSeconds: Double, totalRetransmits: Int, congestionWindowSegments: Int,
        deliveryRateBps: Double?, deliveryRateAppLimited: Bool?
    ) {
        self.rttSeconds = rttSeconds
        self.rttVarianceSeconds = rttVarianceSeconds
        self.totalRetransmits = totalRetransmits
        self.congestionWindowSegments = congestionWindowSegments
        self.deliveryRateBps = deliveryRateBps
        self.deliveryRateAppLimited = deliveryRateAppLimited
    }
}

public struct RequestStart: Sendable, Equatable, Codable {
    public var requestID: Int
    public var url: String
    public var purpose: RequestPurpose
    public var attempt: Int
    public var variantIndex: Int?
    public var mediaSequence: Int?
    /// "offset-last" inclusive byte range, when a range was asked for.
    public var range: String?
    /// "audio" for an alternate audio rendition's playlist or segment (absent: the variant's own).
    public var track: String?
    public init(
        requestID: Int, url: String, purpose: RequestPurpose, attempt: Int, variantIndex: Int? = nil,
        mediaSequence: Int? = nil, range: String? = nil
    ) {
        self.requestID = requestID
        self.url = url
        self.purpose = purpose
        self.attempt = attempt
        self.variantIndex = variantIndex
        self.mediaSequence = mediaSequence
        self.range = range
    }
}

public struct RequestProgress: Sendable, Equatable, Codable {
    public var requestID: Int
    /// Body bytes received so far.
    public var bytes: Int
    /// Bytes in the chunk(s) since the previous progress record.
    public var chunkBytes: Int
    public var expectedBytes: Int?
    public init(requestID: Int, bytes: Int, chunkBytes: Int, expectedBytes: Int?) {
        self.requestID = requestID
        self.bytes = bytes
        self.chunkBytes = chunkBytes
        self.expectedBytes = expectedBytes
    }
}

/// Why the session cut a request short (`request.end.cancelReason`, and the HAR entry's `_error`).
public enum RequestCancelReason: String, Sendable, Equatable, Codable {
    /// No byte for the wedge window (the byte-progress monitor).
    case wedged
    /// Over-selected: the rest would arrive too late; decided again lower.
    case overSelected = "over-selected"
    /// The reference rule's own abandonment (BOLA-E): its `abr.abandon` says why; re-requested at its rung.
    case abrAbandoned = "abr-abandoned"
    /// A live resync or restart dropped what the loader was doing.
    case liveResync = "live-resync"
    /// The trickle rule re-requested it on a fresh connection.
    case trickleReRequest = "trickle-re-request"
    /// The trickle rule failed it.
    case trickleFailed = "trickle-failed"
    /// The session was ending (`--duration`, a signal, a fatal error elsewhere).
    case sessionStopping = "session-stopping"
    /// Cancelled by the session for no reason above.
    case other
}

public struct RequestEnd: Sendable, Equatable, Codable {
    public var requestID: Int
    public var url: String
    public var purpose: RequestPurpose
    /// HTTP status received, whatever became of the body (a 200 cut short is 200); nil when no status line arrived.
    public var status: Int?
    /// Body bytes received (for a failed attempt: before it ended).
    public var bytes: Int
    public var ok: Bool
    /// True when the transfer did not run to the end of its response (cancelled, timed out, broken, no answer);
    /// absent for a whole response, an error status with its whole body included.
    public var aborted: Bool?
    /// Why the session cancelled it (`errorKind` `cancelled`).
    public var cancelReason: RequestCancelReason?
    public var connectionReused: Bool?
    public var timings: TimingsRecord?
    public var tcpInfo: TCPInfoRecord?
    public var errorKind: LoadErrorKind?
    public var errorMessage: String?
    /// Throughput over the transfer, bits per second (body bytes ÷ (total − first byte)).
    public var throughputBps: Double?
    /// Whether the estimator counted the sample.
    public var sampleVerdict: SampleVerdict?
    /// The HTTP version of the response as libcurl reports it (`HTTP/1.1`, `HTTP/2`; CURLINFO_HTTP_VERSION):
    /// HTTP/2 when TLS negotiated it by ALPN. Absent when no response came, and for local files.
    public var httpVersion: String?
    public init(
        requestID: Int, url: String, purpose: RequestPurpose, status: Int?, bytes: Int, ok: Bool,
        connectionReused: Bool? = nil, timings: TimingsRecord? = nil, tcpInfo: TCPInfoRecord? = nil,
        errorKind: LoadErrorKind? = nil, errorMessage: String? = nil, throughputBps: Double? = nil,
        sampleVerdict: SampleVerdict? = nil
    ) {
        self.requestID = requestID
        self.url = url
        self.purpose = purpose
        self.status = status
        self.bytes = bytes
        self.ok = ok
        self.connectionReused = connectionReused
        self.timings = timings
        self.tcpInfo = tcpInfo
        self.errorKind = errorKind
        self.errorMessage = errorMessage
        self.throughputBps = throughputBps
        self.sampleVerdict = sampleVerdict
    }
}

public struct RetryScheduled: Sendable, Equatable, Codable {
    public var requestID: Int
    public var url: String
    public var attemptsMade: Int
    public var delaySeconds: Double
    public var errorKind: LoadErrorKind
    public init(requestID: Int, url: String, attemptsMade: Int, delaySeconds: Double, errorKind: LoadErrorKind) {
        self.requestID = requestID
        self.url = url
        self.attemptsMade = attemptsMade
        self.delaySeconds = delaySeconds
        self.errorKind = errorKind
    }
}

public struct PlaylistLoaded: Sendable, Equatable, Codable {
    public var url: String
    public var kind: String
    public var variantIndex: Int?
    public var variants: Int?
    public var segments: Int?
    public var targetDurationSeconds: Double?
    public var mediaSequence: Int?
    public var endList: Bool?
    public var changed: Bool?
    public var warnings: [String]
    /// EXT-X-I-FRAMES-ONLY: each segment is one I-frame (trick-play content); absent otherwise.
    public var iFramesOnly: Bool?
    public init(
        url: String, kind: String, variantIndex: Int? = nil, variants: Int? = nil, segments: Int? = nil,
        targetDurationSeconds: Double? = nil, mediaSequence: Int? = nil, endList: Bool? = nil,
        changed: Bool? = nil, warnings: [String] = [], iFramesOnly: Bool? = nil
    ) {
        self.url = url
        self.kind = kind
        self.variantIndex = variantIndex
        self.variants = variants
        self.segments = segments
        self.targetDurationSeconds = targetDurationSeconds
        self.mediaSequence = mediaSequence
        self.endList = endList
        self.changed = changed
        self.warnings = warnings
        self.iFramesOnly = iFramesOnly
    }
}

public struct VariantDecisionRecord: Sendable, Equatable, Codable {
    public var inputs: SelectionSnapshot
    public var decision: SelectionDecision
    public var estimatorFastBps: Double?
    public var estimatorSlowBps: Double?
    /// The segment this decision is for.
    public var mediaSequence: Int?
    /// A reference rule's choice and inputs (`--abr` other than hlsplay); absent with hlsplay's own rule.
    public var abr: AbrRuleRecord?
    public init(
        inputs: SelectionSnapshot, decision: SelectionDecision, estimatorFastBps: Double?, estimatorSlowBps: Double?, mediaSequence: Int?,
        abr: AbrRuleRecord? = nil
    ) {
        self.inputs = inputs
        self.decision = decision
        self.estimatorFastBps = estimatorFastBps
        self.estimatorSlowBps = estimatorSlowBps
        self.mediaSequence = mediaSequence
        self.abr = abr
    }
}

public struct VariantSwitch: Sendable, Equatable, Codable {
    public var fromVariantIndex: Int
    public var toVariantIndex: Int
    public var fromBandwidthBps: Int
    public var toBandwidthBps: Int
    /// Media time where the new variant's first segment starts.
    public var atPositionSeconds: Double
    public init(fromVariantIndex: Int, toVariantIndex: Int, fromBandwidthBps: Int, toBandwidthBps: Int, atPositionSeconds: Double) {
        self.fromVariantIndex = fromVariantIndex
        self.toVariantIndex = toVariantIndex
        self.fromBandwidthBps = fromBandwidthBps
        self.toBandwidthBps = toBandwidthBps
        self.atPositionSeconds = atPositionSeconds
    }
}

public struct SegmentBuffered: Sendable, Equatable, Codable {
    public var variantIndex: Int
    public var bandwidthBps: Int
    public var mediaSequence: Int
    public var startSeconds: Double
    public var durationSeconds: Double
    public var bytes: Int
    public var videoPackets: Int
    public var audioPackets: Int
    public var corruptPackets: Int
    public var demuxSeconds: Double
    /// Buffered end after the append, seconds of media time.
    public var bufferedEndSeconds: Double
    public var bufferSeconds: Double
    /// "audio" for an alternate audio rendition's segment (absent: the variant's own);
    /// then `variantIndex` is the variant playing beside it.
    public var track: String?
    /// LL-HLS: the part index within the segment (absent: a whole segment).
    public var part: Int?
    /// Seconds added to the segment's timestamps to place it on the media
    /// timeline (equal for audio and video segments of one moment: aligned).
    public var timelineOffsetSeconds: Double?
    /// Whether the segment's first video packet is an independent (key) frame (absent without
    /// video). False: the segment begins mid-GOP and is decoded with the previous one's references.
    public var startsWithKeyframe: Bool?
    public init(
        variantIndex: Int, bandwidthBps: Int, mediaSequence: Int, startSeconds: Double, durationSeconds: Double,
        bytes: Int, videoPackets: Int, audioPackets: Int, corruptPackets: Int, demuxSeconds: Double,
        bufferedEndSeconds: Double, bufferSeconds: Double
    ) {
        self.variantIndex = variantIndex
        self.bandwidthBps = bandwidthBps
        self.mediaSequence = mediaSequence
        self.startSeconds = startSeconds
        self.durationSeconds = durationSeconds
        self.bytes = bytes
        self.videoPackets = videoPackets
        self.audioPackets = audioPackets
        self.corruptPackets = corruptPackets
        self.demuxSeconds = demuxSeconds
        self.bufferedEndSeconds = bufferedEndSeconds
        self.bufferSeconds = bufferSeconds
    }
}

public struct SegmentSkipped: Sendable, Equatable, Codable {
    public var variantIndex: Int
    public var mediaSequence: Int
    public var durationSeconds: Double
    public var reason: String
    /// "audio" for an alternate audio rendition's segment.
    public var track: String?
    public init(variantIndex: Int, mediaSequence: Int, durationSeconds: Double, reason: String) {
        self.variantIndex = variantIndex
        self.mediaSequence = mediaSequence
        self.durationSeconds = durationSeconds
        self.reason = reason
    }
}

/// A failover or content-steering step: what changed and why.
public struct LoadingNote: Sendable, Equatable, Codable {
    /// failover: `error-counted`, `excluded`, `restored`, `switched`; steering:
    /// `pathway`, `reload-scheduled`, `priority`, `clones`, `rejected`, `stopped`, `failed`.
    public var kind: String
    public var detail: String
    /// For `switched`: the variant now loaded and the one before (multivariant playlist indices).
    public var variantIndex: Int?
    public var fromVariantIndex: Int?
    public var pathway: String?
    public init(kind: String, detail: String, variantIndex: Int? = nil, fromVariantIndex: Int? = nil, pathway: String? = nil) {
        self.kind = kind
        self.detail = detail
        self.variantIndex = variantIndex
        self.fromVariantIndex = fromVariantIndex
        self.pathway = pathway
    }
}

/// LL-HLS: where playback starts (LowLatencyRules.startPosition).
public struct LowLatencyStartRecord: Sendable, Equatable, Codable {
    public var msn: Int
    public var part: Int?
    public var url: String
    /// From the start to the end of the playlist (its last part), seconds.
    public var distanceFromEndSeconds: Double
    public var partHoldBackSeconds: Double
    public var partTargetSeconds: Double
    public init(msn: Int, part: Int?, url: String, distanceFromEndSeconds: Double, partHoldBackSeconds: Double, partTargetSeconds: Double) {
        self.msn = msn
        self.part = part
        self.url = url
        self.distanceFromEndSeconds = distanceFromEndSeconds
        self.partHoldBackSeconds = partHoldBackSeconds
        self.partTargetSeconds = partTargetSeconds
    }
}

/// The audio chosen for a variant's AUDIO group, and why (AudioRenditionSelector).
public struct AudioRenditionRecord: Sendable, Equatable, Codable {
    public var groupID: String?
    public var name: String?
    public var language: String?
    /// The rendition's playlist; absent when the audio is in the variant's segments.
    public var url: String?
    /// AudioRenditionReason: requested-language, default, autoselect-system-language, first-in-group, ...
    public var reason: String
    public var detail: String
    /// `--audio-lang` matched no rendition of the group.
    public var requestedLanguageUnmatched: Bool
    /// The renditions of the group: name, language and whether muxed, in playlist order.
    public var candidates: [String]
    public init(
        groupID: String?, name: String?, language: String?, url: String?, reason: String, detail: String,
        requestedLanguageUnmatched: Bool, candidates: [String]
    ) {
        self.groupID = groupID
        self.name = name
        self.language = language
        self.url = url
        self.reason = reason
        self.detail = detail
        self.requestedLanguageUnmatched = requestedLanguageUnmatched
        self.candidates = candidates
    }
}

/// A live resync step (docs/startup-cap.md §5): what the LiveResyncPolicy
/// decided and why, and where the loader landed when it performed it.
public struct LiveResyncLog: Sendable, Equatable, Codable {
    public enum Action: String, Sendable, Equatable, Codable {
        /// Decided: seek to the live edge (the recovery cap applies).
        case resync
        /// Decided: reload the multivariant playlist and start over (the recovery cap applies).
        case restart
        /// Performed by the loader: the media sequence it left and the one it jumped to.
        case seeked
        /// Performed by the loader: the live start point was not ahead of what was loaded, so nothing
        /// was dropped and loading goes on where it was, waiting for the playlist to advance.
        case held
        /// Playback started or resumed (`resolvedBy`): the episode is over.
        case resolved
        /// Restarts exhausted: the session ends with an error.
        case giveUp = "give-up"
    }
    public var action: Action
    public var trigger: LiveResyncTrigger
    public var phase: LiveResyncPhase
    /// Restart attempt (0 for a resync).
    public var attempt: Int
    public var stalledSeconds: Double?
    /// Seconds allowed for a frame to follow this step.
    public var deadlineSeconds: Double?
    public var episodeSeconds: Double?
    public var targetDurationSeconds: Double
    public var recoveryCapApplied: Bool
    /// Seconds from the step to the first frame decoded from its new position (for `restart` and
    /// `give-up`: of the step that ran out of time); absent when none came.
    public var firstFrameSeconds: Double?
    /// For `resolved`: `playback-resumed` (the stall ended) or `playback-started` (the first start).
    public var resolvedBy: LiveResyncResolution?
    /// For `seeked` and `held`: the next media sequence before and after the step (the same when
    /// held), the variant, and for LL-HLS the part loading goes on at.
    public var fromMediaSequence: Int?
    public var toMediaSequence: Int?
    public var toPart: Int?
    public var variantIndex: Int?
    /// For `seeked`: media seconds of forward buffer dropped by the seek.
    public var droppedBufferSeconds: Double?
    /// For `seeked` and `held`, the inputs of the landing rule (`LiveResyncRules.landing`): `seek` (to
    /// the start point), `skip-buffered` (the buffer dropped, loading goes on where it was) or `hold`;
    /// the reloaded playlist's start point (HOLD-BACK from its end; LL-HLS: an INDEPENDENT part
    /// PART-HOLD-BACK from it), the last segment (and part) loaded, the segment at the playhead, the
    /// playlist's newest segment and the seconds over which reloads found it unchanged.
    public var landing: String?
    public var edgeMediaSequence: Int?
    public var edgePart: Int?
    public var lastLoadedMediaSequence: Int?
    public var lastLoadedPart: Int?
    public var playheadMediaSequence: Int?
    public var playlistLastMediaSequence: Int?
    public var playlistUnchangedSeconds: Double?

    public init(action: Action, record r: LiveResyncRecord) {
        self.action = action
        trigger = r.trigger
        phase = r.phase
        attempt = r.attempt
        stalledSeconds = r.stalledSeconds
        deadlineSeconds = r.deadlineSeconds
        episodeSeconds = r.episodeSeconds
        targetDurationSeconds = r.targetDurationSeconds
        recoveryCapApplied = r.recoveryCapApplied
        firstFrameSeconds = r.firstFrameSeconds
        resolvedBy = r.resolvedBy
    }
}

public struct BufferSample: Sendable, Equatable, Codable {
    public var phase: PlaybackPhase
    public var positionSeconds: Double
    public var bufferedEndSeconds: Double
    public var bufferSeconds: Double
    public var estimateBps: Double
    public var variantIndex: Int?
    /// Seconds since the last byte arrived on the in-flight request (nil when none is in flight).
    public var inFlightIdleSeconds: Double?
    public var inFlightBytes: Int?
    /// Live latency: wall-clock now minus the EXT-X-PROGRAM-DATE-TIME of the
    /// media at the playhead, seconds (nil without program date-times).
    public var liveLatencySeconds: Double?
    /// With an alternate audio rendition: each track's buffered end (the buffer is the minimum of the two).
    public var videoBufferedEndSeconds: Double?
    public var audioBufferedEndSeconds: Double?
    /// Payload bytes of the demuxed packets in the forward buffer, not yet taken by the decoder
    /// (what `--max-buffer-bytes` bounds; absent in `hlsplay simulate`).
    public var bufferedBytes: Int?
    public init(
        phase: PlaybackPhase, positionSeconds: Double, bufferedEndSeconds: Double, bufferSeconds: Double,
        estimateBps: Double, variantIndex: Int?, inFlightIdleSeconds: Double?, inFlightBytes: Int?,
        liveLatencySeconds: Double? = nil
    ) {
        self.liveLatencySeconds = liveLatencySeconds
        self.phase = phase
        self.positionSeconds = positionSeconds
        self.bufferedEndSeconds = bufferedEndSeconds
        self.bufferSeconds = bufferSeconds
        self.estimateBps = estimateBps
        self.variantIndex = variantIndex
        self.inFlightIdleSeconds = inFlightIdleSeconds
        self.inFlightBytes = inFlightBytes
    }
}

public struct PlaybackChange: Sendable, Equatable, Codable {
    /// Seconds since session start when the change happened. The media clock
    /// computes a stall's start exactly (the instant the playhead reached the
    /// end of the buffer), which can be slightly before the line is written.
    public var atSeconds: Double
    public var positionSeconds: Double
    public var bufferSeconds: Double?
    public var stallSeconds: Double?
    /// The session's first `playback.started` only: when the first frame was decoded (seconds since session
    /// start), and how long playback then waited for the start buffer (`atSeconds` minus that).
    public var timeToFirstFrameSeconds: Double? = nil
    public var startupWaitSeconds: Double? = nil

    /// The `playback.started` record: for the session's first start (`isFirstStart`), with the first frame's
    /// time and the start wait after it (absent when no frame was decoded, e.g. demux only before a frame).
    public static func started(
        atSeconds: Double, positionSeconds: Double, bufferSeconds: Double,
        firstFrameAtSeconds: Double?, isFirstStart: Bool
    ) -> PlaybackChange {
        var change = PlaybackChange(atSeconds: atSeconds, positionSeconds: positionSeconds, bufferSeconds: bufferSeconds)
        if isFirstStart, let first = firstFrameAtSeconds {
            change.timeToFirstFrameSeconds = first
            change.startupWaitSeconds = max(0, atSeconds - first)
        }
        return change
    }

    public init(atSeconds: Double, positionSeconds: Double, bufferSeconds: Double? = nil, stallSeconds: Double? = nil) {
        self.atSeconds = atSeconds
        self.positionSeconds = positionSeconds
        self.bufferSeconds = bufferSeconds
        self.stallSeconds = stallSeconds
    }
}

/// Time to first frame and its parts. Each `…AtSeconds` is seconds since
/// the session started; each phase duration is derived from them.
public struct StartupBreakdown: Sendable, Equatable, Codable {
    public var multivariantPlaylistSeconds: Double?
    public var mediaPlaylistSeconds: Double?
    public var firstSegmentFirstByteSeconds: Double?
    public var firstSegmentLastByteSeconds: Double?
    public var demuxSeconds: Double?
    public var firstFrameDecodeSeconds: Double?
    /// Seconds since session start when each step finished.
    public var multivariantPlaylistAtSeconds: Double?
    public var mediaPlaylistAtSeconds: Double?
    public var firstSegmentFirstByteAtSeconds: Double?
    public var firstSegmentLastByteAtSeconds: Double?
    public var demuxedAtSeconds: Double?
    public var firstFrameAtSeconds: Double?
    /// When the media clock first started (the first `playback.started`), and how long after the first
    /// frame that was (the wait for the start buffer). Known only after the first frame, so only the
    /// summary's `startup` and the first `playback.started` carry them, never `frame.first`'s breakdown.
    public var playbackStartAtSeconds: Double?
    public var startupWaitSeconds: Double?
    public init() {}
}

/// The first frame playback waits for: the first video frame, or the first audio
/// frame of a stream (or variant) whose segments carry no video.
public struct FirstFrame: Sendable, Equatable, Codable {
    public var timeToFirstFrameSeconds: Double
    public var variantIndex: Int
    /// `video` or `audio`.
    public var kind: String?
    public var width: Int?
    public var height: Int?
    public var ptsSeconds: Double?
    public var breakdown: StartupBreakdown
    public init(
        timeToFirstFrameSeconds: Double, variantIndex: Int, kind: String? = "video", width: Int?, height: Int?,
        ptsSeconds: Double?, breakdown: StartupBreakdown
    ) {
        self.timeToFirstFrameSeconds = timeToFirstFrameSeconds
        self.variantIndex = variantIndex
        self.kind = kind
        self.width = width
        self.height = height
        self.ptsSeconds = ptsSeconds
        self.breakdown = breakdown
    }
}

/// The first frame of one kind (video, audio) decoded in the session — or, demux only, the
/// first packet of that kind demuxed.
public struct TrackFirstFrame: Sendable, Equatable, Codable {
    /// `video` or `audio`.
    public var kind: String
    /// Seconds since session start.
    public var timeToFirstFrameSeconds: Double
    public var variantIndex: Int
    public var codec: String?
    public var width: Int?
    public var height: Int?
    public var ptsSeconds: Double?
    public init(
        kind: String, timeToFirstFrameSeconds: Double, variantIndex: Int, codec: String? = nil,
        width: Int? = nil, height: Int? = nil, ptsSeconds: Double? = nil
    ) {
        self.kind = kind
        self.timeToFirstFrameSeconds = timeToFirstFrameSeconds
        self.variantIndex = variantIndex
        self.codec = codec
        self.width = width
        self.height = height
        self.ptsSeconds = ptsSeconds
    }
}

/// A decoder was opened for a track, with why and where it starts (DecoderContinuity).
public struct DecoderOpened: Sendable, Equatable, Codable {
    /// `video` or `audio`.
    public var kind: String
    public var codec: String
    /// The codec parameters it was opened with, e.g. `video h264 320x180 tb 1/90000` (0x0: not known
    /// from the segment's probe; the decoder reads them from the bitstream).
    public var parameters: String
    public var variantIndex: Int
    public var discontinuitySequence: Int
    /// The segment of its first packet.
    public var mediaSequence: Int
    public var reason: DecoderOpenReason
    /// Media time of its first packet, seconds.
    public var startSeconds: Double
    /// Packets before its first independent frame, not fed to it, and the media seconds they span.
    public var skippedPackets: Int
    public var skippedSeconds: Double
    /// False when no independent frame came within DecoderContinuity.maximumKeyframeWaitSeconds.
    public var startsAtKeyframe: Bool
    /// Opened to output each frame at once (I-frame-only content has no reordering).
    public var lowDelay: Bool?
    public init(
        kind: String, codec: String, parameters: String, variantIndex: Int, discontinuitySequence: Int,
        mediaSequence: Int, reason: DecoderOpenReason, startSeconds: Double, skippedPackets: Int,
        skippedSeconds: Double, startsAtKeyframe: Bool, lowDelay: Bool? = nil
    ) {
        self.kind = kind
        self.codec = codec
        self.parameters = parameters
        self.variantIndex = variantIndex
        self.discontinuitySequence = discontinuitySequence
        self.mediaSequence = mediaSequence
        self.reason = reason
        self.startSeconds = startSeconds
        self.skippedPackets = skippedPackets
        self.skippedSeconds = skippedSeconds
        self.startsAtKeyframe = startsAtKeyframe
        self.lowDelay = lowDelay
    }
}

public struct ErrorRecord: Sendable, Equatable, Codable {
    public var fatal: Bool
    public var category: String
    public var message: String
    public var url: String?
    public init(fatal: Bool, category: String, message: String, url: String? = nil) {
        self.fatal = fatal
        self.category = category
        self.message = message
        self.url = url
    }
}

public struct DecodeStats: Sendable, Equatable, Codable {
    public var videoFrames: Int
    public var audioFrames: Int
    public var lateVideoFrames: Int
    public var decodeErrors: Int
    public init(videoFrames: Int, audioFrames: Int, lateVideoFrames: Int, decodeErrors: Int) {
        self.videoFrames = videoFrames
        self.audioFrames = audioFrames
        self.lateVideoFrames = lateVideoFrames
        self.decodeErrors = decodeErrors
    }
}

/// One stall-risk evaluation on the monitor: the features, the predictor's
/// probability of a stall within the horizon, and the policy in force.
/// These lines are what the trainer turns into labelled examples.
public struct StallRiskSample: Sendable, Equatable, Codable {
    public var predictor: String
    /// P(stall within horizonSeconds); nil when the predictor failed.
    public var risk: Double?
    public var horizonSeconds: Double
    public var policy: PlaybackPolicy
    public var phase: PlaybackPhase
    public var features: StallFeatures
    public init(predictor: String, risk: Double?, horizonSeconds: Double, policy: PlaybackPolicy, phase: PlaybackPhase, features: StallFeatures) {
        self.predictor = predictor
        self.risk = risk
        self.horizonSeconds = horizonSeconds
        self.policy = policy
        self.phase = phase
        self.features = features
    }
}

/// One session-log event.
public enum SessionEvent: Sendable, Equatable {
    case requestStart(RequestStart)
    case requestProgress(RequestProgress)
    case requestEnd(RequestEnd)
    case retryScheduled(RetryScheduled)
    case playlistLoaded(PlaylistLoaded)
    case variantDecision(VariantDecisionRecord)
    case variantSwitch(VariantSwitch)
    /// The reference rule (BOLA-E) abandoned the segment request in flight (docs/abr.md, "Abandonment").
    case abrAbandon(AbrAbandonRecord)
    case segmentBuffered(SegmentBuffered)
    case segmentSkipped(SegmentSkipped)
    case bufferSample(BufferSample)
    case playbackStarted(PlaybackChange)
    case stallStart(PlaybackChange)
    case stallEnd(PlaybackChange)
    case playbackEnded(PlaybackChange)
    case firstFrame(FirstFrame)
    case trackFirstFrame(TrackFirstFrame)
    case decoderOpened(DecoderOpened)
    case decodeStats(DecodeStats)
    case error(ErrorRecord)
    // Startup/recovery cap (docs/startup-cap.md)
    case capGate(GateDecisionRecord)
    case capChange(CapChangeRecord)
    case capEstimatorSeed(EstimatorSeedRecord)
    case capReconnect(ReconnectRecord)
    case capNote(CapNote)
    case sampleVerdict(SampleVerdictRecord)
    case byteProgress(ByteProgressRecord)
    /// A body that trickles, judged by its projected completion (docs/startup-cap.md §4b).
    case trickle(TrickleRecord)
    /// The progress watchdog fired: neither the media clock nor the downloaded bytes moved for its timeout.
    case noProgress(NoProgressRecord)
    // Stall-risk prediction and playback policy (docs/stall-prediction.md)
    case stallRisk(StallRiskSample)
    case policyChange(PolicyChange)
    case predictorFailed(PredictorFailure)
    case predictorRecovered(PredictorRecovery)
    // Live resync and restart (docs/startup-cap.md §5)
    case liveResync(LiveResyncLog)
    case audioRendition(AudioRenditionRecord)
    case lowLatencyStart(LowLatencyStartRecord)
    case failover(LoadingNote)
    case steering(LoadingNote)
    // The progress guarantee: the request-rate bound, thresholds clamped to the live window
    case requestPaced(RequestPacingEpisode)
    case thresholdClamp(ThresholdClamp)
    case liveWindow(LiveWindowRecord)
    /// The live playlist crossed the RFC 8216 §6.2.1 update bound, or advanced again after that.
    case liveStale(LivePlaylistStaleRecord)
    // Resource limits on hostile input: the largest picture decoded, the forward buffer's byte bound
    case resolutionLimit(ResolutionLimitRecord)
    case byteBound(ByteBoundRecord)

    /// The `type` field in the log.
    public var type: String {
        switch self {
        case .requestStart: "request.start"
        case .requestProgress: "request.progress"
        case .requestEnd: "request.end"
        case .retryScheduled: "request.retry"
        case .playlistLoaded: "playlist.loaded"
        case .variantDecision: "abr.decision"
        case .variantSwitch: "abr.switch"
        case .abrAbandon: "abr.abandon"
        case .segmentBuffered: "segment.buffered"
        case .segmentSkipped: "segment.skipped"
        case .bufferSample: "buffer.sample"
        case .playbackStarted: "playback.started"
        case .stallStart: "stall.start"
        case .stallEnd: "stall.end"
        case .playbackEnded: "playback.ended"
        case .firstFrame: "frame.first"
        case .trackFirstFrame: "track.firstFrame"
        case .decoderOpened: "decoder.open"
        case .decodeStats: "decode.stats"
        case .error: "error"
        case .capGate: "cap.gate"
        case .capChange: "cap.change"
        case .capEstimatorSeed: "cap.seed"
        case .capReconnect: "cap.reconnect"
        case .capNote: "cap.note"
        case .sampleVerdict: "sample.verdict"
        case .byteProgress: "request.byteProgress"
        case .trickle: "request.trickle"
        case .noProgress: "session.noProgress"
        case .stallRisk: "risk.sample"
        case .policyChange: "policy.change"
        case .predictorFailed: "predictor.failed"
        case .predictorRecovered: "predictor.recovered"
        case .liveResync: "live.resync"
        case .audioRendition: "audio.rendition"
        case .lowLatencyStart: "lowlatency.start"
        case .failover: "failover"
        case .steering: "steering"
        case .requestPaced: "request.paced"
        case .thresholdClamp: "playback.threshold"
        case .liveWindow: "live.window"
        case .liveStale: "live.stale"
        case .resolutionLimit: "resolution.limit"
        case .byteBound: "buffer.byteBound"
        }
    }

    var payload: any Encodable & Sendable {
        switch self {
        case .requestStart(let p): p
        case .requestProgress(let p): p
        case .requestEnd(let p): p
        case .retryScheduled(let p): p
        case .playlistLoaded(let p): p
        case .variantDecision(let p): p
        case .variantSwitch(let p): p
        case .abrAbandon(let p): p
        case .segmentBuffered(let p): p
        case .segmentSkipped(let p): p
        case .bufferSample(let p): p
        case .playbackStarted(let p): p
        case .stallStart(let p): p
        case .stallEnd(let p): p
        case .playbackEnded(let p): p
        case .firstFrame(let p): p
        case .trackFirstFrame(let p): p
        case .decoderOpened(let p): p
        case .decodeStats(let p): p
        case .error(let p): p
        case .capGate(let p): p
        case .capChange(let p): p
        case .capEstimatorSeed(let p): p
        case .capReconnect(let p): p
        case .capNote(let p): p
        case .sampleVerdict(let p): p
        case .byteProgress(let p): p
        case .trickle(let p): p
        case .noProgress(let p): p
        case .stallRisk(let p): p
        case .policyChange(let p): p
        case .predictorFailed(let p): p
        case .predictorRecovered(let p): p
        case .liveResync(let p): p
        case .audioRendition(let p): p
        case .lowLatencyStart(let p): p
        case .failover(let p): p
        case .steering(let p): p
        case .requestPaced(let p): p
        case .thresholdClamp(let p): p
        case .liveWindow(let p): p
        case .liveStale(let p): p
        case .resolutionLimit(let p): p
        case .byteBound(let p): p
        }
    }
}

/// An event with its time: seconds since the session started (monotonic).
public struct TimedEvent: Sendable, Encodable {
    public var seconds: Double
    public var event: SessionEvent
    public init(seconds: Double, event: SessionEvent) {
        self.seconds = seconds
        self.event = event
    }

    enum Keys: String, CodingKey { case t, type }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        try c.encode((seconds * 1e6).rounded() / 1e6, forKey: .t)
        try c.encode(event.type, forKey: .type)
        try event.payload.encode(to: encoder)
    }
}

/// Encodes log lines: one compact JSON object each, keys sorted so logs diff well.
public struct SessionLogEncoder: Sendable {
    public init() {}
    public func line<T: Encodable>(_ value: T) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        encoder.dateEncodingStrategy = .iso8601
        guard let data = try? encoder.encode(value), let s = String(data: data, encoding: .utf8) else {
            return "{\"type\":\"error\",\"category\":\"log\",\"message\":\"unencodable event\",\"fatal\":false}"
        }
        return s
    }
}
