// One playback session: three independent loops around pure decisions.
//
//   loader thread   playlists → variant selection → segment fetch → demux → forward buffer
//   decode thread   forward buffer → decode, paced by the media clock
//   monitor timer   its own Dispatch queue and wall-clock period: advances the
//                   media clock (stalls, end), samples the buffer, enforces
//                   --duration; it never waits on the other two.
//
// Every decision (selector, estimator verdicts, retry policy, media clock)
// is a value type from HLSCore fed a snapshot and the current instant; this
// file only performs the actions and logs them with their inputs.

import Foundation
import HLSCore
import HLSMedia
import HLSNet

/// A failure that ends the session, with a category for the exit status.
struct SessionFailure: Error, CustomStringConvertible {
    enum Category: String { case network, playlist, media, internalError = "internal" }
    var category: Category
    var message: String
    var url: String?
    /// The HTTP status of the request that failed, when there was one.
    var httpStatus: Int? = nil
    var description: String { message }
}

/// The in-flight request as the wall-clock monitor sees it.
struct InFlightRequest {
    enum Abort: Equatable { case wedged, overSelected, liveResync }
    var requestID: Int
    var purpose: RequestPurpose
    var startedAt: MonotonicInstant
    var bytes = 0
    var expectedBytes: Int?
    var firstByteAt: MonotonicInstant?
    var lastByteAt: MonotonicInstant
    /// For segments: the segment's duration and the rung's BANDWIDTH.
    var segmentDurationSeconds: Double?
    var rungBitrateBps: Double?
    var token: CancellationToken
    /// Why the monitor cancelled it, if it did.
    var abort: Abort?
}

/// A segment fetch abandoned as over-selected: the loader decides again under the new cap.
struct SegmentAbandoned: Error {}

/// A wedged segment request, re-requested through a new decision (the
/// recovery cap may pick a lower rung) instead of the same URL; it is not
/// counted against the segment like an abandon.
struct SegmentReDecide: Error {}

/// The monitor asked for a live resync or restart: whatever the loader was
/// doing is dropped and the step is performed at the top of the fetch loop.
struct LiveStepInterrupt: Error {}

/// One variant of the ladder as the session uses it.
struct VariantInfo: Sendable {
    var index: Int
    var uri: URL
    /// BANDWIDTH, or 0 when the top-level URL was a media playlist.
    var bandwidthBps: Int
    var resolution: Resolution?
    /// AUDIO group id (EXT-X-STREAM-INF AUDIO).
    var audioGroup: String? = nil
}

/// An alternate audio rendition played beside the variant (EXT-X-MEDIA
/// TYPE=AUDIO with a URI): its own playlist and segments, its own queue in the
/// forward buffer; the buffer level is the minimum of the two tracks.
/// VOD segments are placed by time on the rendition's own playlist timeline;
/// live segments by media sequence number, at the start of the variant's
/// segment with the same number (renditions of one live stream share them).
struct AudioTrack {
    var rendition: Rendition
    var uri: URL
    var playlist: MediaPlaylist?
    var timeline = SegmentTimeline()
    /// Live: the next media sequence to load (nil: align on the variant's next buffered segment).
    var nextMediaSequence: Int?
    var lastReloadAt: MonotonicInstant?
    var initCache: (map: MediaInitializationSection, data: Data)?
    /// Packets of the rendition carry this variant index, so the decode loop keeps one audio decoder for it.
    static let packetVariantIndex = -1
}

public final class PlayerSession: @unchecked Sendable {
    public let configuration: PlayerConfiguration
    private let clock: any MonotonicClock = SystemMonotonicClock()
    private let recorder: SessionRecorder
    private let sessionStart: MonotonicInstant
    private let statusLine: Bool

    // Loader-owned (only the loader thread touches these).
    private let client: HTTPClient
    private var variants: [VariantInfo] = []
    private var topLevelStart: StartPoint?
    /// LL-HLS: the last part (or whole segment) loaded, and the start chosen at startup.
    private var lowLatencyLoaded: LowLatencyPosition?
    private var pendingLowLatencyStart: LowLatencyStart?
    /// Redundant variants (same rung, other URI or PATHWAY-ID) and their penalty box; content steering.
    private var failover: FailoverTracker?
    private var steering: ContentSteeringClient?
    private var multivariant: MultivariantPlaylist?
    /// The variant (URI) the loader loaded last: the rung's choice after failover.
    private var currentLoadIndex: Int?
    /// EXT-X-MEDIA TYPE=AUDIO renditions of the multivariant playlist.
    private var audioRenditions: [Rendition] = []
    /// The alternate audio rendition being played, if any (loader-owned).
    private var audio: AudioTrack?
    /// The multivariant playlist's resolved EXT-X-DEFINE variables, importable by media playlists.
    private var multivariantVariables: [String: String] = [:]
    private var mediaPlaylists: [Int: MediaPlaylist] = [:]
    private var vodTimelines: [Int: SegmentTimeline] = [:]
    private var liveTimeline = SegmentTimeline()
    private var nextMediaSequence = 0
    private var lastBufferedVariant: Int?
    /// The latest buffered segments of the variant: media sequence, timeline start, timestamp offset and
    /// discontinuity sequence (to find the segment at the playhead, and to align alternate audio on them).
    private var bufferedSegments: [(mediaSequence: Int, startSeconds: Double, offsetSeconds: Double, discontinuity: Int)] = []
    /// Most entries kept in `bufferedSegments`.
    private static let bufferedSegmentsKept = 64
    private var nextRequestID = 1
    private var lastReloadAt: MonotonicInstant?
    private var lastReloadChanged = true
    private var firstSegmentFetched = false
    /// The next request opens a new connection (set after a timeout or a broken transfer).
    private var freshConnectionNext = false
    /// The startup decision, used for the first segment instead of deciding twice.
    private var pendingDecision: SelectionDecision?
    /// Abandoned fetches (over-selected, or wedged twice) per media sequence number.
    private var abandonedAttempts: [Int: Int] = [:]
    /// AES-128 keys by URI (loader-owned; never logged).
    private var keyCache: [URL: [UInt8]] = [:]
    /// The last Media Initialization Section (EXT-X-MAP) and its bytes.
    private var initCache: (map: MediaInitializationSection, data: Data)?
    /// Demux only: the tracks of the last demuxed segment, reused for the next one of the
    /// same rendition (also after a discontinuity: the demuxer checks them against the segment).
    private var demuxOnlyTracks: (variantIndex: Int, tracks: [CodecParameters])?
    /// CMCD session id, and whether the buffer ran dry since the last request (CMCD `bs`).
    private let cmcdSessionID = UUID().uuidString.lowercased()
    private var starvedSinceLastRequest = false
    private var coalescer = TransferCoalescer()
    /// False when the startup threshold comes from the stream (LL-HLS PART-HOLD-BACK), not from the policy.
    private var policyGatesStart = true

    // Shared state, guarded by `lock`.
    private let lock = NSLock()
    /// Buffered ends of the variant's track and of the alternate audio track
    /// (nil without one), seconds of media time; the timeline gets the minimum.
    private var mainBufferedEndSeconds = 0.0
    private var audioBufferedEndSeconds: Double?
    /// The variant's segments are all buffered (VOD) / the audio rendition's are.
    private var mainTrackEnded = false
    private var audioTrackEnded = false
    private var timeline: PlaybackTimeline
    private var estimator: BandwidthEstimator
    private var currentVariant: Int?
    private var isLive: Bool?
    private var inFlight: InFlightRequest?
    private var capController: StartupCapController
    /// RTT of the last connection, from TCP_INFO.
    private var lastRTTSeconds: Double?
    /// Segment samples with evidence about the link (network-limited, or a lower bound).
    private var networkLimitedSamples = 0
    private var networkKey: NetworkKey?
    private var storeSnapshot: EstimateStoreSnapshot?
    // Stall-risk prediction and playback policy.
    private var predictor: (any StallPredictor)?
    private var policyController: PolicyController?
    private var policyKnobs: PolicyKnobs?
    private var lastFirstByteSeconds: Double?
    /// The newest buffered segment with an EXT-X-PROGRAM-DATE-TIME: its media start and its date.
    private var programDateAnchor: (mediaSeconds: Double, date: Date)?
    /// Live resync and restart (docs/startup-cap.md §5); nil until the stream is known to be live.
    private var liveResync: LiveResyncPolicy?
    /// A resync or restart decided on the monitor, for the loader to perform.
    private var pendingLiveStep: LiveResyncAction?
    /// After a resync: the first media sequence at the new position; a frame from it (or later) resolves the episode.
    private var resyncFromSequence: Int?
    /// The cap an over-selection abandon set (whatever the startup-cap mode): the
    /// abandoned rung is not chosen again until fresh delivery earns it back.
    private var overSelectionCapBps: Int?
    /// Wall seconds spent inside the decoders, and media seconds of video they produced.
    private var decodeBusySeconds = 0.0
    private var decodedMediaSeconds = 0.0
    private var lastDecodeSample: (busy: Double, media: Double) = (0, 0)
    /// When the decode loop last finished a packet (nil before the first).
    private var lastDecodeProgressAt: MonotonicInstant?
    /// Since when the stream has ended with nothing to decode and no frame (see endedWithoutFrame).
    private var endWithoutFrameSince: MonotonicInstant?
    /// An open decode-hang episode (reported once until decode moves again).
    private var decodeHangReported = false
    private var stopReason: ExitReason?
    private var stopError: String?
    private var stopCategory: SessionFailure.Category?
    private var breakdown = StartupBreakdown()
    private var decodeStats = DecodeStats(videoFrames: 0, audioFrames: 0, lateVideoFrames: 0, decodeErrors: 0)
    private var loggedDecodeErrors = 0

    private let buffer = ForwardBuffer()
    private let stopSignal = DispatchSemaphore(value: 0)
    private let threads = DispatchGroup()
    private var monitor: DispatchSourceTimer?
    private let monitorQueue = DispatchQueue(label: "hlsplay.monitor")

    /// Decoding may run ahead of the clock by this much, seconds, so a frame is ready when its time comes.
    static let decodeLookaheadSeconds = 0.25
    /// A stream fully loaded with nothing left to decode and still no frame
    /// after this long ends in an error (all its segments were skipped), seconds.
    static let noFrameAtEndSeconds = 1.0
    /// After a wedge with less than this many segment durations buffered, the
    /// segment is re-requested through a new decision — under the recovery cap,
    /// at the probe rung — instead of on the same rung: a collapsed link and a
    /// lost request look alike at that moment, and a lower rung ends a
    /// collapse's stall sooner while costing a lost request only one
    /// lower-quality segment. Segment durations.
    static let reDecideAfterWedgeBelowBufferSegments = 2.0
    /// A wedged playlist request is re-requested at once this many times
    /// (≈ this × the 3 s wedge window of a dead link) before further wedges
    /// count as attempts of the playlist retry policy. Count.
    static let maxPlaylistWedgeReRequests = 6
    /// A frame up to this much before the start position still counts as at it
    /// (timestamp rounding), seconds.
    static let preciseStartToleranceSeconds = 0.001
    /// A video frame decoded more than this after its presentation time is counted late, seconds.
    static let lateFrameToleranceSeconds = 0.1
    /// The decode loop counts as hung when, while playing, a due packet has
    /// waited this long with no packet decoded, seconds.
    static let decodeHangThresholdSeconds = 2.0
    /// Fault injection for tests: `HLSPLAY_INJECT_DECODE_HANG_SECONDS` makes the
    /// decode loop sleep once that long right after the first frame, standing
    /// in for a decoder that hangs. Never set in normal use.
    static let injectedDecodeHangSeconds: Double? = ProcessInfo.processInfo.environment["HLSPLAY_INJECT_DECODE_HANG_SECONDS"].flatMap(Double.init)
    /// The most bytes held in memory for one response, by what it is: a
    /// playlist as much as the parser accepts, a key a little over its 16
    /// bytes, media generously. A larger response fails as responseTooLarge.
    static func maxBodyBytes(for purpose: RequestPurpose) -> Int {
        switch purpose {
        case .multivariantPlaylist, .mediaPlaylist: PlaylistLimits.default.maxBytes
        case .steeringManifest: 64 << 10
        case .key: 1024
        case .initSection: 16 << 20
        case .segment: 256 << 20
        }
    }
    /// FFmpeg's log has one callback for the process: with one session it goes
    /// to that session's log; a process running many sessions turns this off
    /// (FFmpeg cannot say which session a message belongs to).
    nonisolated(unsafe) public static var routeFFmpegLog = true
    /// Decode errors written to the log before they are only counted.
    static let maxLoggedDecodeErrors = 20

    /// Opens the outputs (an unwritable path fails here, before anything plays).
    public init(configuration: PlayerConfiguration, logPath: String?, harPath: String?, statusLine: Bool) throws {
        self.configuration = configuration
        self.statusLine = statusLine
        sessionStart = clock.now()
        recorder = try SessionRecorder(logPath: logPath, harPath: harPath, clock: clock, sessionStart: sessionStart, wallStart: Date())
        var httpConfig = HTTPClientConfiguration()
        httpConfig.verifyTLS = configuration.verifyTLS
        httpConfig.allowFileURLs = configuration.url.isFileURL
        client = HTTPClient(clock: clock, configuration: httpConfig)
        timeline = PlaybackTimeline(configuration: configuration.playback)
        estimator = BandwidthEstimator(configuration: configuration.estimator)
        capController = StartupCapController(configuration: configuration.startupCap)
    }

    /// Called with every event as it is logged (tests, live views).
    public func observe(_ observer: @escaping @Sendable (TimedEvent) -> Void) {
        recorder.observer = observer
    }

    /// Plays until the end, the duration limit, a fatal error or `stop`. Blocks.
    public func run() -> SessionSummary {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        recorder.writeHeader(SessionHeader(
            hlsplayVersion: hlsplayVersion, url: shown(configuration.url),
            startedAt: formatter.string(from: Date()), configuration: configuration,
            host: HostInfo.current(ffmpeg: FFmpegVersion.description, libcurl: HTTPClient.libcurlVersion)))
        if Self.routeFFmpegLog {
            FFmpegLog.install(minimumLevel: 24 /* AV_LOG_WARNING */) { [weak self] level, message in
                self?.ffmpegMessage(level: level, message: message)
            }
        }

        setUpPredictor()
        startMonitor()
        startThread(name: "hlsplay.loader") { [self] in loaderMain() }
        if configuration.decode {
            startThread(name: "hlsplay.decode") { [self] in decodeMain() }
        }
        stopSignal.wait()
        return finish()
    }

    /// Ends the session (thread-safe; the first reason wins).
    public func stop(reason: ExitReason, error: String? = nil) {
        requestStop(reason: reason, error: error, category: nil)
    }

    private func requestStop(reason: ExitReason, error: String?, category: SessionFailure.Category?) {
        let first: Bool = lock.withLock {
            guard stopReason == nil else { return false }
            stopReason = reason
            stopError = error
            stopCategory = category
            return true
        }
        guard first else { return }
        lock.withLock { inFlight?.token.cancel() }
        buffer.close()
        stopSignal.signal()
    }

    private var isStopping: Bool { lock.withLock { stopReason != nil } }

    /// The failure category when the session ended in error.
    public var failureCategory: String? { lock.withLock { stopCategory?.rawValue } }

    private func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
        threads.enter()
        let thread = Thread { [threads] in
            body()
            threads.leave()
        }
        thread.name = name
        thread.start()
    }

    // MARK: - Finish

    private func finish() -> SessionSummary {
        threads.wait()
        monitor?.cancel()
        monitorQueue.sync {}
        let now = clock.now()
        let (actions, start, position, reason, error, estimate, live, stats, bd) = lock.withLock {
            let actions = timeline.finish(at: now)
            return (actions, timeline.startPositionSeconds, timeline.positionSeconds(at: now), stopReason ?? .completed,
                    stopError, estimator.hasEstimate ? estimator.estimateBps : nil, isLive, decodeStats, breakdown)
        }
        record(actions)
        saveEstimate()
        recorder.record(.decodeStats(stats))
        recorder.setBreakdown(bd)
        let summary = recorder.finish { builder in
            builder.summary(url: shown(configuration.url), isLive: live, exitReason: reason, error: error,
                            startPositionSeconds: start, finalPositionSeconds: position,
                            sessionSeconds: now.seconds(since: sessionStart), finalEstimateBps: estimate)
        }
        if statusLine { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        return summary
    }

    /// True when a log line could not be written (e.g. the disk is full).
    public var logWriteFailed: Bool { recorder.hadWriteError }

    // MARK: - Monitor

    private func startMonitor() {
        let timer = DispatchSource.makeTimerSource(queue: monitorQueue)
        let interval = configuration.monitorIntervalSeconds
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(10))
        timer.setEventHandler { [weak self] in self?.monitorTick() }
        monitor = timer
        timer.resume()
    }

    private func monitorTick() {
        let now = clock.now()
        let (actions, sample, phase, played) = lock.withLock {
            let actions = timeline.advance(to: now)
            let idle = inFlight.map { now.seconds(since: $0.lastByteAt) }
            let position = timeline.positionSeconds(at: now)
            let latency = programDateAnchor.map { anchor in
                Date().timeIntervalSince(anchor.date.addingTimeInterval(position - anchor.mediaSeconds))
            }
            var sample = BufferSample(
                phase: timeline.phase, positionSeconds: timeline.positionSeconds(at: now),
                bufferedEndSeconds: timeline.bufferedEndSeconds, bufferSeconds: timeline.bufferSeconds(at: now),
                estimateBps: estimator.estimateBps, variantIndex: currentVariant,
                inFlightIdleSeconds: idle, inFlightBytes: inFlight?.bytes,
                liveLatencySeconds: (isLive ?? false) ? latency : nil)
            if let audioEnd = audioBufferedEndSeconds {
                sample.videoBufferedEndSeconds = mainBufferedEndSeconds
                sample.audioBufferedEndSeconds = audioEnd
            }
            return (actions, sample, timeline.phase, timeline.playedSeconds(at: now))
        }
        record(actions)
        if !isStopping {
            recorder.record(.bufferSample(sample))
            checkInFlight(at: now, bufferSeconds: sample.bufferSeconds)
            checkDecodeHang(at: now, phase: sample.phase)
            if !configuration.decode { buffer.discard(decodedBefore: sample.positionSeconds) }
            capEvent(.tick(now))
            liveEvent(.tick(now))
            evaluatePolicy(at: now, bufferSeconds: sample.bufferSeconds, phase: sample.phase)
        }
        if statusLine { drawStatus(sample) }
        if phase == .ended {
            requestStop(reason: .completed, error: nil, category: nil)
        } else if endedWithoutFrame(at: now) {
            let message = "the stream ended without a playable frame: every segment was skipped or undecodable (see segment.skipped and error events)"
            recorder.record(.error(ErrorRecord(fatal: true, category: SessionFailure.Category.media.rawValue, message: message, url: shown(configuration.url))))
            requestStop(reason: .error, error: message, category: .media)
        } else if let limit = configuration.durationLimitSeconds, played >= limit {
            requestStop(reason: .durationReached, error: nil, category: nil)
        }
        buffer.poke()
    }

    /// Everything was loaded (VOD), nothing is left to decode, and no frame
    /// came of it for `noFrameAtEndSeconds`: the session cannot start.
    private func endedWithoutFrame(at now: MonotonicInstant) -> Bool {
        let pending = buffer.count
        return lock.withLock {
            guard timeline.endOfStream, !timeline.firstFrameDecoded, pending == 0 else {
                endWithoutFrameSince = nil
                return false
            }
            if endWithoutFrameSince == nil { endWithoutFrameSince = now }
            return now.seconds(since: endWithoutFrameSince!) >= Self.noFrameAtEndSeconds
        }
    }

    private func drawStatus(_ s: BufferSample) {
        let variant = s.variantIndex.flatMap { i in variants.indices.contains(i) ? variants[i] : nil }
        let res = variant?.resolution.map { "\($0.width)x\($0.height)" } ?? "-"
        let line = String(format: "\r\u{1B}[K%@  pos %.1fs  buf %.1fs  v%@ %@ %.2f Mbps  est %.2f Mbps",
                          s.phase.rawValue, s.positionSeconds, s.bufferSeconds,
                          s.variantIndex.map(String.init) ?? "-", res,
                          Double(variant?.bandwidthBps ?? 0) / 1e6, s.estimateBps / 1e6)
        FileHandle.standardError.write(Data(line.utf8))
    }

    private func record(_ actions: [PlaybackAction]) {
        for action in actions {
            switch action {
            case let .started(at, position, buffered):
                recorder.record(.playbackStarted(PlaybackChange(atSeconds: at.seconds(since: sessionStart), positionSeconds: position, bufferSeconds: buffered)))
            case let .stallStarted(at, position):
                recorder.record(.stallStart(PlaybackChange(atSeconds: at.seconds(since: sessionStart), positionSeconds: position, bufferSeconds: 0)))
                capEvent(.stallStarted(estimateBps: measuredEstimate(), at: at))
                lock.withLock { starvedSinceLastRequest = true }
                liveEvent(.stallStarted(at: at))
            case let .stallEnded(at, position, stall, buffered):
                recorder.record(.stallEnd(PlaybackChange(atSeconds: at.seconds(since: sessionStart), positionSeconds: position, bufferSeconds: buffered, stallSeconds: stall)))
                liveEvent(.stallEnded(at: at))
            case let .ended(at, position):
                recorder.record(.playbackEnded(PlaybackChange(atSeconds: at.seconds(since: sessionStart), positionSeconds: position)))
            }
        }
    }

    // MARK: - Loader

    private func loaderMain() {
        do {
            try startup()
            try fetchLoop()
        } catch let failure as SessionFailure {
            if !isStopping {
                recorder.record(.error(ErrorRecord(fatal: true, category: failure.category.rawValue, message: failure.message, url: failure.url)))
            }
            requestStop(reason: .error, error: failure.message, category: failure.category)
        } catch {
            requestStop(reason: .error, error: "\(error)", category: .internalError)
        }
    }

    private func secondsSinceStart(_ instant: MonotonicInstant) -> Double { instant.seconds(since: sessionStart) }

    private func startup() throws {
        let top = try fetch(configuration.url, purpose: .multivariantPlaylist, variantIndex: nil, mediaSequence: nil, byteRange: nil, policy: .playlist)
        let parsed = try parsePlaylist(top)
        let doneAt = secondsSinceStart(top.finishedAt)
        lock.withLock {
            breakdown.multivariantPlaylistAtSeconds = doneAt
            breakdown.multivariantPlaylistSeconds = doneAt
        }
        switch parsed {
        case .multivariant(let mv):
            recorder.record(.playlistLoaded(PlaylistLoaded(url: shown(top.effectiveURL), kind: "multivariant", variants: mv.variants.count, warnings: mv.warnings.map(\.description))))
            let playable = mv.variants.enumerated().filter { _, v in !isAudioOnly(v) }
            let chosen = playable.isEmpty ? Array(mv.variants.enumerated()) : playable
            guard !chosen.isEmpty else {
                throw SessionFailure(category: .playlist, message: "multivariant playlist has no variant streams", url: shown(configuration.url))
            }
            variants = chosen.map { i, v in VariantInfo(index: i, uri: v.uri, bandwidthBps: v.bandwidthBps, resolution: v.resolution, audioGroup: v.audioGroup) }
            audioRenditions = mv.renditions.filter { $0.type == .audio }
            multivariant = mv
            failover = FailoverTracker(variants: mv.variants)
            if let client = ContentSteeringClient(playlist: mv, at: clock.now()) {
                steering = client
                recorder.record(.steering(LoadingNote(kind: "pathway", detail: "content steering from \(shown(client.manifestURL)): starting on pathway \"\(client.currentPathway)\" (\(client.initialPathwayReason))", pathway: client.currentPathway)))
            }
            topLevelStart = mv.start
            multivariantVariables = mv.variables
        case .media(let media):
            variants = [VariantInfo(index: 0, uri: top.effectiveURL, bandwidthBps: 0, resolution: nil)]
            adopt(media, variantIndex: 0, url: top.effectiveURL, changed: true)
            lock.withLock {
                breakdown.mediaPlaylistAtSeconds = doneAt
                breakdown.mediaPlaylistSeconds = 0
            }
        }
        if let pinned = configuration.pinnedVariantIndex, !variants.contains(where: { $0.index == pinned }) {
            throw SessionFailure(category: .playlist, message: "--variant \(pinned): the playlist has variants \(variants.map(\.index))", url: nil)
        }

        startGate()
        startPolicyController()
        let decision = decide(mediaSequence: nil)
        pendingDecision = decision
        var loadIndex = chooseRedundant(forRung: decision.variantIndex)
        var playlist: MediaPlaylist
        while true {
            do {
                playlist = try mediaPlaylist(for: loadIndex, forceReload: false)
                break
            } catch is SegmentReDecide {
                // The playlist's URI failed over: the rung's next redundant variant.
                loadIndex = chooseRedundant(forRung: decision.variantIndex)
            }
        }
        currentLoadIndex = loadIndex
        lock.withLock {
            if breakdown.mediaPlaylistAtSeconds == nil {
                let at = secondsSinceStart(clock.now())
                breakdown.mediaPlaylistAtSeconds = at
                breakdown.mediaPlaylistSeconds = at - (breakdown.multivariantPlaylistAtSeconds ?? 0)
            }
        }
        guard !playlist.segments.isEmpty else {
            if playlist.endList {
                throw SessionFailure(category: .playlist, message: "media playlist has no segments", url: variants.first { $0.index == loadIndex }.map { shown($0.uri) })
            }
            return
        }
        let live = !playlist.endList
        let startIndex = live ? LivePlaylistRules.startSegmentIndex(for: playlist)
                              : LivePlaylistRules.vodStartSegmentIndex(for: playlist, start: topLevelStart ?? playlist.start)
        nextMediaSequence = playlist.segments[startIndex].mediaSequence
        var segmentStartSeconds = segmentStart(variantIndex: loadIndex, mediaSequence: nextMediaSequence) ?? 0
        /// LL-HLS: where the clock starts, PART-HOLD-BACK from the end, when that is after the INDEPENDENT part loading starts at.
        var lowLatencyPlayStart: Double?
        if live, Self.isLowLatency(playlist), let llStart = LowLatencyRules.startPosition(for: playlist) {
            // LL-HLS: start at an INDEPENDENT part PART-HOLD-BACK from the end (or a whole segment).
            let first = playlist.segments[0]
            let end = playlist.segments.reduce(0) { $0 + $1.durationSeconds } + playlist.trailingParts.reduce(0) { $0 + $1.durationSeconds }
            let firstStart = segmentStart(variantIndex: loadIndex, mediaSequence: first.mediaSequence) ?? 0
            segmentStartSeconds = firstStart + end - llStart.distanceFromEndSeconds
            // Independent parts may be a whole GOP apart: load from one, but start the clock at PART-HOLD-BACK
            // from the end (the frames before it are decoded, not shown, as for EXT-X-START PRECISE=YES).
            lowLatencyPlayStart = max(segmentStartSeconds, firstStart + end - llStart.holdBackSeconds)
            nextMediaSequence = llStart.position.msn
            pendingLowLatencyStart = llStart
            recorder.record(.lowLatencyStart(LowLatencyStartRecord(
                msn: llStart.position.msn, part: llStart.position.part, url: shown(llStart.uri),
                distanceFromEndSeconds: llStart.distanceFromEndSeconds, partHoldBackSeconds: llStart.holdBackSeconds,
                partTargetSeconds: playlist.partTargetSeconds ?? 0)))
        }
        // EXT-X-START PRECISE=YES: the clock starts at the offset inside the segment (earlier frames are decoded, not shown).
        let startSeconds = live ? segmentStartSeconds
            : segmentStartSeconds + LivePlaylistRules.vodStartSeconds(for: playlist, start: topLevelStart ?? playlist.start)
              - playlist.segments.prefix(startIndex).reduce(0) { $0 + $1.durationSeconds }
        chooseAudioRendition(forVariant: decision.variantIndex)
        lock.withLock {
            isLive = live
            timeline.setStartPosition(lowLatencyPlayStart ?? startSeconds)
            mainBufferedEndSeconds = startSeconds
            if audio != nil { audioBufferedEndSeconds = startSeconds }
            if live, Self.isLowLatency(playlist), let partTarget = playlist.partTargetSeconds {
                // LL-HLS: waiting for the usual 2 s (4 s to resume) would add them to the latency;
                // start with PART-HOLD-BACK buffered, resume with twice that.
                let holdBack = playlist.serverControl?.partHoldBackSeconds ?? LowLatencyRules.defaultPartHoldBackPartTargets * partTarget
                timeline.setStartupBufferSeconds(min(timeline.configuration.startupBufferSeconds, holdBack))
                policyGatesStart = false
                timeline.setResumeBufferSeconds(min(timeline.configuration.resumeBufferSeconds, 2 * holdBack))
            }
            if live { liveResync = LiveResyncPolicy(targetDurationSeconds: playlist.targetDurationSeconds) }
        }
    }

    private func isAudioOnly(_ v: VariantStream) -> Bool {
        !v.codecs.isEmpty && v.codecs.allSatisfy { $0.hasPrefix("mp4a") || $0.hasPrefix("ac-3") || $0.hasPrefix("ec-3") || $0.hasPrefix("opus") || $0.hasPrefix("fLaC") }
            && v.resolution == nil
    }

    /// Parses a playlist. Media playlists see the multivariant playlist's
    /// variables (EXT-X-DEFINE IMPORT); QUERYPARAM reads the URL the playlist came from.
    private func parsePlaylist(_ response: HTTPResponse, parentVariables: [String: String] = [:]) throws -> Playlist {
        do {
            return try PlaylistParser.parse(data: response.body, baseURL: response.effectiveURL, parentVariables: parentVariables)
        } catch {
            throw SessionFailure(category: .playlist, message: "malformed playlist \(shown(response.effectiveURL)): \(error)", url: shown(response.effectiveURL))
        }
    }

    private func recordMediaPlaylist(_ p: MediaPlaylist, url: URL, variantIndex: Int, changed: Bool) {
        recorder.record(.playlistLoaded(PlaylistLoaded(
            url: shown(url), kind: "media", variantIndex: variantIndex, segments: p.segments.count,
            targetDurationSeconds: p.targetDurationSeconds, mediaSequence: p.mediaSequence, endList: p.endList,
            changed: changed, warnings: p.warnings.map(\.description))))
    }

    /// The media playlist of a variant: cached for VOD, reloaded for live when asked.
    private func mediaPlaylist(for variantIndex: Int, forceReload: Bool) throws -> MediaPlaylist {
        if let cached = mediaPlaylists[variantIndex], cached.endList || !forceReload {
            return cached
        }
        guard let variant = variants.first(where: { $0.index == variantIndex }) else {
            throw SessionFailure(category: .internalError, message: "no variant \(variantIndex)", url: nil)
        }
        let response = try fetch(variant.uri, purpose: .mediaPlaylist, variantIndex: variantIndex, mediaSequence: nil, byteRange: nil, policy: .playlist)
        guard case .media(let media) = try parsePlaylist(response, parentVariables: multivariantVariables) else {
            throw SessionFailure(category: .playlist, message: "expected a media playlist at \(shown(variant.uri)), got a multivariant playlist", url: shown(variant.uri))
        }
        let previous = mediaPlaylists[variantIndex]
        let changed = previous.map { $0.segments.last?.mediaSequence != media.segments.last?.mediaSequence || $0.endList != media.endList } ?? true
        adopt(media, variantIndex: variantIndex, url: response.effectiveURL, changed: changed)
        return media
    }

    /// Makes a freshly loaded media playlist the variant's current one and places its segments on the timeline.
    private func adopt(_ media: MediaPlaylist, variantIndex: Int, url: URL, changed: Bool) {
        mediaPlaylists[variantIndex] = media
        lastReloadAt = clock.now()
        lastReloadChanged = changed
        recordMediaPlaylist(media, url: url, variantIndex: variantIndex, changed: changed)
        if media.endList {
            var t = SegmentTimeline()
            _ = t.update(with: media)
            vodTimelines[variantIndex] = t
        } else {
            liveEvent(.targetDurationChanged(media.targetDurationSeconds))
            let sync = liveTimeline.update(with: media)
            if case let .lostSync(first, last) = sync {
                recorder.record(.error(ErrorRecord(fatal: false, category: "live", message: "playlist window jumped from media sequence \(last) to \(first); timeline re-anchored", url: shown(url))))
            }
        }
    }

    private func segmentStart(variantIndex: Int, mediaSequence: Int) -> Double? {
        if let t = vodTimelines[variantIndex] { return t.startSeconds(ofMediaSequence: mediaSequence) }
        return liveTimeline.startSeconds(ofMediaSequence: mediaSequence)
    }

    /// The lowest of every peak-bitrate cap in force (nil: none).
    private func effectivePeakCapBps() -> Int? {
        lock.withLock {
            [configuration.preferredPeakBitRateBps, policyKnobs?.peakBitrateCapBps, overSelectionCapBps, capController.capBps].compactMap { $0 }.min()
        }
    }

    /// The selector's ladder: one variant per rung (redundant variants are the failover's business).
    private func ladder() -> [LadderRung] {
        let representatives = failover.map { Set($0.ladderVariantIndices) }
        return variants.filter { representatives?.contains($0.index) ?? true }.map { LadderRung(variantIndex: $0.index, bandwidthBps: $0.bandwidthBps, width: $0.resolution?.width, height: $0.resolution?.height) }
    }

    /// Runs the selector on a snapshot and logs the decision with its inputs.
    private func decide(mediaSequence: Int?) -> SelectionDecision {
        let now = clock.now()
        let (snapshot, fast, slow) = lock.withLock {
            (SelectionSnapshot(ladder: ladder(), estimateBps: estimator.estimateBps, estimateIsMeasured: estimator.hasEstimate,
                               bufferSeconds: timeline.bufferSeconds(at: now), currentVariantIndex: currentVariant,
                               peakBitrateCapBps: [configuration.preferredPeakBitRateBps, policyKnobs?.peakBitrateCapBps, overSelectionCapBps].compactMap { $0 }.min(),
                               pinnedVariantIndex: configuration.pinnedVariantIndex),
             estimator.fastBps, estimator.slowBps)
        }
        let capped = lock.withLock { capController.applying(to: snapshot) }
        let decision = configuration.selector.select(capped)
        recorder.record(.variantDecision(VariantDecisionRecord(inputs: capped, decision: decision, estimatorFastBps: fast, estimatorSlowBps: slow, mediaSequence: mediaSequence)))
        lock.withLock { currentVariant = decision.variantIndex }
        return decision
    }

    private func fetchLoop() throws {
        while !isStopping {
            do {
                try fetchSegments()
                return
            } catch is LiveStepInterrupt {
                // The monitor asked for a live resync or restart: performed at the top of fetchSegments.
                continue
            } catch is SegmentReDecide {
                // A playlist request failed over to a redundant variant: decide and load again.
                continue
            }
        }
    }

    private func fetchSegments() throws {
        while !isStopping {
            if let step = lock.withLock({ () -> LiveResyncAction? in defer { pendingLiveStep = nil }; return pendingLiveStep }) {
                try performLiveStep(step)
                continue
            }
            let now = clock.now()
            let (bufferAhead, live, target) = lock.withLock { (timeline.bufferSeconds(at: now), isLive ?? false, forwardBufferTarget()) }
            if bufferAhead >= target {
                sleepUnlessStopping(0.1)
                continue
            }
            if audio != nil, try loadAudioIfBehind(live: live) { continue }
            if lock.withLock({ mainTrackEnded }) {
                // Only the audio rendition may still be loading: wait for it (it runs above).
                if lock.withLock({ audioTrackEnded || audio == nil }) { return }
                sleepUnlessStopping(0.05)
                continue
            }
            if steering?.isReloadDue(at: clock.now()) == true { loadSteeringManifest() }
            let previousVariant = currentLoadIndex ?? variants[0].index
            let capAtDecision = effectivePeakCapBps()
            let decision = pendingDecision ?? decide(mediaSequence: nextMediaSequence)
            pendingDecision = nil
            let variantIndex = chooseRedundant(forRung: decision.variantIndex)
            if variantIndex != previousVariant || mediaPlaylists[variantIndex] == nil {
                let bufferedEnd = lock.withLock { timeline.bufferedEndSeconds }
                _ = try mediaPlaylist(for: variantIndex, forceReload: live)
                if !live, let p = mediaPlaylists[variantIndex], let t = vodTimelines[variantIndex] {
                    // VOD ladders may not share media sequence numbers: continue by time.
                    if let seg = p.segments.first(where: { (t.startSeconds(ofMediaSequence: $0.mediaSequence) ?? 0) + $0.durationSeconds > bufferedEnd + 0.001 }) {
                        nextMediaSequence = seg.mediaSequence
                    } else {
                        nextMediaSequence = (p.segments.last?.mediaSequence ?? 0) + 1
                    }
                }
                currentLoadIndex = variantIndex
                // The cap moved while the playlist loaded (a stall or wedge meanwhile): decide again.
                if effectivePeakCapBps() != capAtDecision { continue }
            }
            guard var playlist = mediaPlaylists[variantIndex] else { continue }
            if live && Self.isLowLatency(playlist) {
                try lowLatencyStep(playlist, variantIndex: variantIndex)
                continue
            }

            if playlist.segments.first(where: { $0.mediaSequence == nextMediaSequence }) == nil {
                if playlist.endList {
                    endTrack(.main)
                    if lock.withLock({ timeline.endOfStream }) { return }
                    continue
                }
                // Live: the next segment is not published yet, or has left the window.
                if let first = playlist.segments.first, nextMediaSequence < first.mediaSequence {
                    recorder.record(.error(ErrorRecord(fatal: false, category: "live", message: "fell behind the live window (next \(nextMediaSequence), window starts at \(first.mediaSequence)); resyncing to the live edge under the recovery cap", url: nil)))
                    fellOutOfLiveWindow(.segmentRolledOff, playlist: playlist, variantIndex: variantIndex)
                    continue
                }
                let delay = LivePlaylistRules.reloadDelaySeconds(targetDurationSeconds: playlist.targetDurationSeconds, playlistChanged: lastReloadChanged)
                let due = (lastReloadAt ?? clock.now()).advanced(bySeconds: delay)
                let wait = due.seconds(since: clock.now())
                if wait > 0 { sleepUnlessStopping(wait) }
                if isStopping { return }
                if lock.withLock({ pendingLiveStep != nil }) { continue }
                playlist = try mediaPlaylist(for: variantIndex, forceReload: true)
                checkPlayheadInLiveWindow(playlist, variantIndex: variantIndex)
                continue
            }
            guard let segment = playlist.segments.first(where: { $0.mediaSequence == nextMediaSequence }) else { continue }
            do {
                try fetchAndBuffer(segment, variantIndex: variantIndex, live: live, isNewest: segment.mediaSequence == playlist.segments.last?.mediaSequence)
            } catch is SegmentAbandoned {
                // Decide again for the same segment, under the lowered cap — a bounded number of times.
                abandonedAttempts[segment.mediaSequence, default: 0] += 1
                if abandonedAttempts[segment.mediaSequence, default: 0] >= PlayerConfiguration.maxWedgeReRequestsPerSegment {
                    throw SessionFailure(category: .network, message: "segment \(segment.mediaSequence) could not be loaded: wedged or abandoned \(PlayerConfiguration.maxWedgeReRequestsPerSegment) times on every rung tried", url: shown(segment.uri))
                }
                continue
            } catch is SegmentReDecide {
                continue
            } catch let failure as SessionFailure where live && (failure.httpStatus == 404 || failure.httpStatus == 410) {
                // A live segment that is gone: expired (left the window) or missing while still listed.
                let reloaded = try mediaPlaylist(for: variantIndex, forceReload: true)
                if let first = reloaded.segments.first, segment.mediaSequence < first.mediaSequence {
                    recorder.record(.error(ErrorRecord(fatal: false, category: "live", message: "segment \(segment.mediaSequence) expired (HTTP \(failure.httpStatus!)); the window now starts at \(first.mediaSequence); resyncing to the live edge under the recovery cap", url: failure.url)))
                    fellOutOfLiveWindow(.expiredSegment, playlist: reloaded, variantIndex: variantIndex)
                    continue
                }
                // Still listed after every retry: not an expiry but a broken stream.
                throw failure
            }
            nextMediaSequence = segment.mediaSequence + 1
        }
    }

    // MARK: - Tracks: the variant's and an alternate audio rendition

    /// The demuxer a segment needs: EXT-X-MAP means fMP4; a packed-audio
    /// extension means raw ADTS (or a probe for the other packed formats); else MPEG-TS.
    static func containerHint(for segment: MediaSegment) -> ContainerHint {
        if segment.initializationSection != nil { return .fragmentedMP4 }
        switch segment.uri.pathExtension.lowercased() {
        case "aac", "adts": return .packedAudioADTS
        case "ac3", "ec3", "mp3", "m4a", "m4s", "mp4": return .probe
        default: return .mpegTS
        }
    }

    /// One track's media now reaches `end`: the timeline gets the minimum of
    /// the tracks (a track that has ended no longer holds it back). Returns the buffer ahead.
    @discardableResult
    private func extendBuffered(_ track: BufferTrack, to end: Double) -> Double {
        let now = clock.now()
        let (actions, ahead) = lock.withLock {
            switch track {
            case .main: mainBufferedEndSeconds = max(mainBufferedEndSeconds, end)
            case .alternateAudio: audioBufferedEndSeconds = max(audioBufferedEndSeconds ?? end, end)
            }
            let actions = timeline.appendBuffered(upTo: combinedBufferedEnd(), at: now)
            return (actions, timeline.bufferSeconds(at: now))
        }
        record(actions)
        return ahead
    }

    /// Under `lock`: the end of what can play, the minimum of the tracks still loading.
    private func combinedBufferedEnd() -> Double {
        guard let audioEnd = audioBufferedEndSeconds, !audioTrackEnded else { return mainBufferedEndSeconds }
        return min(mainBufferedEndSeconds, audioEnd)
    }

    /// A track has no more media (VOD); when every track has ended, so has the stream.
    private func endTrack(_ track: BufferTrack) {
        let now = clock.now()
        let actions: [PlaybackAction] = lock.withLock {
            switch track {
            case .main: mainTrackEnded = true
            case .alternateAudio: audioTrackEnded = true
            }
            var actions = timeline.appendBuffered(upTo: combinedBufferedEnd(), at: now)
            if mainTrackEnded && (audioBufferedEndSeconds == nil || audioTrackEnded) {
                actions += timeline.markEndOfStream(at: now)
            }
            return actions
        }
        record(actions)
    }

    /// Picks the audio for the variant's AUDIO group with AudioRenditionSelector
    /// (`--audio-lang`, DEFAULT, AUTOSELECT in the system language, first), and
    /// logs the choice with the candidates. A rendition without URI is muxed
    /// into the variant: nothing more to load.
    private func chooseAudioRendition(forVariant variantIndex: Int) {
        guard let mv = multivariant, variantIndex >= 0, variantIndex < mv.variants.count,
              let group = mv.variants[variantIndex].audioGroup else { return }
        let preferences = AudioPreferences(
            requestedLanguage: configuration.audioLanguage,
            systemLanguage: AudioPreferences.languageTag(fromPOSIXLocale: ProcessInfo.processInfo.environment["LC_ALL"]
                ?? ProcessInfo.processInfo.environment["LC_MESSAGES"] ?? ProcessInfo.processInfo.environment["LANG"]))
        let members = mv.renditions.filter { $0.type == .audio && $0.groupID == group }
        let candidates = members.map { "\($0.name) (\($0.language ?? "und"))\($0.uri == nil ? " muxed" : "")" }
        do {
            let choice = try AudioRenditionSelector.select(for: mv.variants[variantIndex], renditions: mv.renditions, preferences: preferences)
            var url: URL?
            if case .renditionPlaylist(let u) = choice.source { url = u }
            recorder.record(.audioRendition(AudioRenditionRecord(
                groupID: group, name: choice.rendition?.name, language: choice.rendition?.language, url: url.map(shown),
                reason: choice.reason.rawValue, detail: choice.detail, requestedLanguageUnmatched: choice.requestedLanguageUnmatched,
                candidates: candidates)))
            if let rendition = choice.rendition, let url { audio = AudioTrack(rendition: rendition, uri: url) }
        } catch {
            recorder.record(.error(ErrorRecord(fatal: false, category: "playlist", message: "\(error); playing the variant's own audio", url: nil)))
        }
    }

    /// Loads the audio rendition's next segment when the audio track is behind
    /// the variant's (or the variant's has ended). Returns true when it did
    /// something (loaded a playlist or a segment, or ended the track).
    private func loadAudioIfBehind(live: Bool) throws -> Bool {
        guard var track = audio, !lock.withLock({ audioTrackEnded }) else { return false }
        defer { audio = track }
        let (mainEnd, audioEnd, mainEnded) = lock.withLock { (mainBufferedEndSeconds, audioBufferedEndSeconds ?? mainBufferedEndSeconds, mainTrackEnded) }
        guard audioEnd < mainEnd - 0.001 || mainEnded else { return false }

        // The rendition's playlist: loaded once for VOD; for live, reloaded when the next segment is not in it yet.
        func reload() throws {
            let response = try fetch(track.uri, purpose: .mediaPlaylist, variantIndex: nil, mediaSequence: nil, byteRange: nil, policy: .playlist, track: "audio")
            guard case .media(let media) = try parsePlaylist(response, parentVariables: multivariantVariables) else {
                throw SessionFailure(category: .playlist, message: "expected a media playlist for audio rendition \"\(track.rendition.name)\" at \(shown(track.uri))", url: shown(track.uri))
            }
            recorder.record(.playlistLoaded(PlaylistLoaded(
                url: shown(response.effectiveURL), kind: "media", variantIndex: nil, segments: media.segments.count,
                targetDurationSeconds: media.targetDurationSeconds, mediaSequence: media.mediaSequence, endList: media.endList,
                changed: true, warnings: media.warnings.map(\.description))))
            track.playlist = media
            track.lastReloadAt = clock.now()
            if media.endList { track.timeline = SegmentTimeline(); _ = track.timeline.update(with: media) }
        }
        if track.playlist == nil { try reload(); return true }

        var segment: MediaSegment
        var start: Double
        if track.playlist!.endList {
            // VOD: by time on the rendition's own timeline.
            guard let next = track.playlist!.segments.first(where: {
                (track.timeline.startSeconds(ofMediaSequence: $0.mediaSequence) ?? 0) + $0.durationSeconds > audioEnd + 0.001 }) else {
                endTrack(.alternateAudio)
                return true
            }
            segment = next
            start = track.timeline.startSeconds(ofMediaSequence: next.mediaSequence) ?? audioEnd
        } else {
            // Live: by media sequence number, aligned on the variant's segment with the same number.
            if track.nextMediaSequence == nil {
                guard let aligned = bufferedSegments.first(where: { abs($0.startSeconds - audioEnd) < 0.05 }) ?? bufferedSegments.first(where: { $0.startSeconds >= audioEnd - 0.05 }) else { return false }
                track.nextMediaSequence = aligned.mediaSequence
            }
            let msn = track.nextMediaSequence!
            guard let entry = bufferedSegments.first(where: { $0.mediaSequence == msn }) else {
                // The variant has not buffered this number (yet, or it was skipped): realign later.
                if let last = bufferedSegments.last, last.mediaSequence < msn { return false }
                track.nextMediaSequence = nil
                return false
            }
            guard let found = track.playlist!.segments.first(where: { $0.mediaSequence == msn }) else {
                if let first = track.playlist!.segments.first, msn < first.mediaSequence {
                    recorder.record(.segmentSkipped(SegmentSkipped(variantIndex: AudioTrack.packetVariantIndex, mediaSequence: msn, durationSeconds: 0, reason: "audio segment \(msn) left the rendition's window before it was loaded").withTrack("audio")))
                    track.nextMediaSequence = msn + 1
                    return true
                }
                let due = (track.lastReloadAt ?? clock.now()).advanced(bySeconds: LivePlaylistRules.reloadDelaySeconds(targetDurationSeconds: track.playlist!.targetDurationSeconds, playlistChanged: false))
                guard clock.now() >= due else { return false }
                try reload()
                return true
            }
            segment = found
            start = entry.startSeconds
        }

        // Fetch, decrypt, demux, and place it: with the variant's timestamp offset at the same moment when
        // there is one (shared MPEG-TS clock: exact A/V alignment), else anchored on its own start.
        do {
            let response = try fetch(segment.uri, purpose: .segment, variantIndex: nil, mediaSequence: segment.mediaSequence,
                                     byteRange: segment.byteRange, policy: .segment, segment: (segment.durationSeconds, nil, false), track: "audio")
            let aes = try segmentKey(segment, variantIndex: AudioTrack.packetVariantIndex)
            var body = response.body
            if let aes {
                body = try decrypt(body, key: aes.key, iv: aes.iv ?? SegmentDecryptor.iv(forMediaSequence: segment.mediaSequence),
                                   what: "audio segment \(segment.mediaSequence)", url: segment.uri)
            }
            let initData = try initSection(for: segment, key: aes, variantIndex: nil, cache: &track.initCache, track: "audio")
            let demuxStarted = clock.now()
            let result = try SegmentDemuxer.demux(segment: body, initializationSection: initData, hint: Self.containerHint(for: segment))
            let demuxSeconds = clock.now().seconds(since: demuxStarted)
            let packets = result.packets.filter { $0.kind == .audio }
            let reference = packets.compactMap { $0.ptsSeconds ?? $0.dtsSeconds }.min() ?? 0
            // Packed audio (raw ADTS) has no transport timestamps of its own (without an ID3 PRIV
            // timestamp each file starts at 0): it goes on its playlist time.
            let packed = Self.containerHint(for: segment) == .packedAudioADTS
            let aligned = packed ? nil : bufferedSegments.last { abs($0.startSeconds - start) < 0.05 && $0.discontinuity == segment.discontinuitySequence }
            let offset = aligned?.offsetSeconds ?? (start - reference)
            buffer.append(packets.map { p in
                BufferedPacket(packet: p, decodeSeconds: (p.dtsSeconds ?? p.ptsSeconds ?? reference) + offset,
                               presentationSeconds: (p.ptsSeconds ?? p.dtsSeconds ?? reference) + offset,
                               timelineOffsetSeconds: offset, variantIndex: AudioTrack.packetVariantIndex,
                               mediaSequence: segment.mediaSequence, discontinuitySequence: segment.discontinuitySequence)
            }, track: .alternateAudio)
            let end = start + segment.durationSeconds
            let ahead = extendBuffered(.alternateAudio, to: end)
            var record = SegmentBuffered(
                variantIndex: lock.withLock { currentVariant } ?? variants[0].index, bandwidthBps: 0, mediaSequence: segment.mediaSequence,
                startSeconds: start, durationSeconds: segment.durationSeconds, bytes: response.body.count,
                videoPackets: 0, audioPackets: packets.count, corruptPackets: result.corruptPacketCount, demuxSeconds: demuxSeconds,
                bufferedEndSeconds: end, bufferSeconds: ahead)
            record.track = "audio"
            record.timelineOffsetSeconds = offset
            recorder.record(.segmentBuffered(record))
        } catch let failure as SessionFailure {
            // A lost audio segment does not stop the video: it is skipped (silence), visibly.
            if isStopping { throw failure }
            recorder.record(.error(ErrorRecord(fatal: false, category: "audio", message: "audio segment \(segment.mediaSequence) of \"\(track.rendition.name)\": \(failure.message); skipped, video continues", url: failure.url)))
            recorder.record(.segmentSkipped(SegmentSkipped(variantIndex: AudioTrack.packetVariantIndex, mediaSequence: segment.mediaSequence, durationSeconds: segment.durationSeconds, reason: failure.message).withTrack("audio")))
            extendBuffered(.alternateAudio, to: start + segment.durationSeconds)
        } catch let error as MediaError {
            recorder.record(.segmentSkipped(SegmentSkipped(variantIndex: AudioTrack.packetVariantIndex, mediaSequence: segment.mediaSequence, durationSeconds: segment.durationSeconds, reason: "demux failed: \(error)").withTrack("audio")))
            extendBuffered(.alternateAudio, to: start + segment.durationSeconds)
        }
        if !track.playlist!.endList { track.nextMediaSequence = segment.mediaSequence + 1 }
        return true
    }

    // MARK: - Redundant variants, failover and content steering (docs/renditions-and-failover.md)

    /// Which variant of the rung `representative` stands for to load now: the
    /// FailoverTracker's choice, in the steering pathway order; a change is logged.
    private func chooseRedundant(forRung representative: Int) -> Int {
        guard var tracker = failover, representative >= 0, representative < tracker.variants.count else { return representative }
        let choice = tracker.choose(rungOf: representative, pathwayOrder: steering?.pathwayOrder, at: clock.now())
        failover = tracker
        logFailover(choice.actions)
        guard variants.contains(where: { $0.index == choice.variantIndex }) else { return representative }
        if choice.changed, let from = choice.previousVariantIndex {
            recorder.record(.failover(LoadingNote(kind: "switched", detail: choice.reason,
                                                  variantIndex: choice.variantIndex, fromVariantIndex: from, pathway: choice.pathwayID)))
        }
        return choice.variantIndex
    }

    private func logFailover(_ actions: [FailoverAction]) {
        for action in actions { recorder.record(.failover(action.logNote)) }
    }

    /// Counts a failed request against its variant's URI. True when that
    /// excluded the URI and its rung has a redundant variant still usable.
    private func failoverAfter(_ error: LoadError, purpose: RequestPurpose, variantIndex: Int?) -> Bool {
        guard purpose == .segment || purpose == .mediaPlaylist || purpose == .initSection,
              let v = variantIndex, var tracker = failover, v >= 0, v < tracker.variants.count else { return false }
        let now = clock.now()
        let actions = tracker.recordFailure(variantIndex: v, error: error, at: now)
        failover = tracker
        logFailover(actions)
        let excluded = actions.contains { if case .excluded = $0 { true } else { false } }
        guard excluded else { return false }
        if var client = steering {
            let steeringActions = client.reevaluate(excludedPathways: tracker.excludedPathways(at: now), at: now)
            steering = client
            logSteering(steeringActions)
        }
        return tracker.redundantAlternatives(of: v).contains { tracker.exclusionEnd(ofVariant: $0, at: now) == nil }
    }

    private func logSteering(_ actions: [SteeringAction]) {
        for action in actions { recorder.record(.steering(action.logNote)) }
    }

    /// Loads the steering manifest (with _HLS_pathway and _HLS_throughput) and applies it:
    /// the pathway priority, and PATHWAY-CLONES as new variants.
    private func loadSteeringManifest() {
        guard var client = steering, let mv = multivariant else { return }
        let url = client.requestURL(throughputBps: measuredEstimate())
        let response: HTTPResponse
        do {
            response = try fetch(url, purpose: .steeringManifest, variantIndex: nil, mediaSequence: nil, byteRange: nil,
                                 policy: RetryPolicy(maxAttempts: 1))
        } catch {
            let failure = error as? SessionFailure
            let loadError = LoadError(kind: failure?.httpStatus != nil ? .httpStatus : .connect, url: url.absoluteString,
                                      httpStatus: failure?.httpStatus, message: failure?.message ?? "\(error)")
            logSteering(client.manifestFailed(loadError, at: clock.now()))
            steering = client
            return
        }
        switch Result(catching: { () throws(SteeringManifestError) -> SteeringManifest in try SteeringManifest.parse(response.body, manifestURL: response.effectiveURL) }) {
        case .failure(let error):
            logSteering(client.manifestRejected(error, at: clock.now()))
        case .success(let manifest):
            let update = client.manifestLoaded(manifest, playlist: mv, excludedPathways: failover?.excludedPathways(at: clock.now()) ?? [:], at: clock.now())
            logSteering(update.actions)
            let added = Array(update.playlist.variants.dropFirst(mv.variants.count))
            if !added.isEmpty {
                // PATHWAY-CLONES: new variants, on the rungs they copy.
                for (k, v) in added.enumerated() {
                    variants.append(VariantInfo(index: mv.variants.count + k, uri: v.uri, bandwidthBps: v.bandwidthBps, resolution: v.resolution, audioGroup: v.audioGroup))
                }
                failover?.appendVariants(added)
            }
            multivariant = update.playlist
        }
        steering = client
    }

    // MARK: - Low-Latency HLS

    /// A live playlist with parts whose server blocks reloads: loaded part by part.
    static func isLowLatency(_ p: MediaPlaylist) -> Bool {
        !p.endList && p.partTargetSeconds != nil && (p.serverControl?.canBlockReload ?? false)
    }

    /// One step on the LL-HLS path: the next part (listed or preload-hinted),
    /// a whole segment when it is complete and we are at its start, or a
    /// blocking reload (`_HLS_msn`/`_HLS_part`, `_HLS_skip` delta updates) when
    /// there is nothing to load yet (LowLatencyRules decides).
    private func lowLatencyStep(_ playlist: MediaPlaylist, variantIndex: Int) throws {
        let next: LowLatencyNextLoad
        if let loaded = lowLatencyLoaded {
            next = LowLatencyRules.nextLoad(after: loaded, in: playlist)
        } else if let start = pendingLowLatencyStart ?? LowLatencyRules.startPosition(for: playlist) {
            pendingLowLatencyStart = nil
            next = start.position.part != nil ? .part(start.position, uri: start.uri) : .segment(msn: start.position.msn, uri: start.uri)
        } else {
            next = .waitForReload
        }
        switch next {
        case .part(let position, let uri), .preloadHint(let position, let uri):
            // A preload hint is requested like a listed part; the server holds it until it exists.
            try loadPart(position, uri: uri, playlist: playlist, variantIndex: variantIndex)
            lowLatencyLoaded = position
        case .segment(let msn, _):
            guard let segment = playlist.segments.first(where: { $0.mediaSequence == msn }) else {
                try blockingReload(after: playlist, variantIndex: variantIndex)
                return
            }
            if let loaded = lowLatencyLoaded, loaded.part != nil, loaded.msn == msn {
                // Its parts left the playlist before they were all loaded: go on with the next segment.
                recorder.record(.segmentSkipped(SegmentSkipped(variantIndex: variantIndex, mediaSequence: msn, durationSeconds: 0,
                    reason: "LL-HLS: the rest of segment \(msn) after part \(loaded.part!) left the playlist as parts; continuing at \(msn + 1)")))
            } else {
                try fetchAndBuffer(segment, variantIndex: variantIndex, live: true, isNewest: true, placeAt: lock.withLock { mainBufferedEndSeconds })
            }
            lowLatencyLoaded = LowLatencyPosition(msn: msn)
            nextMediaSequence = msn + 1
        case .waitForReload:
            try blockingReload(after: playlist, variantIndex: variantIndex)
        case .fellBehind(let position, let first):
            recorder.record(.error(ErrorRecord(fatal: false, category: "live", message: "LL-HLS: the next part \(position) has left the playlist (first segment \(first)); resyncing to the live edge under the recovery cap", url: nil)))
            lowLatencyLoaded = nil
            fellOutOfLiveWindow(.segmentRolledOff, playlist: playlist, variantIndex: variantIndex)
        }
    }

    /// Loads one part as a small segment placed right after what is buffered.
    private func loadPart(_ position: LowLatencyPosition, uri: URL, playlist: MediaPlaylist, variantIndex: Int) throws {
        let j = position.part ?? 0
        // The part's own tags: from its segment when listed, else from the trailing parts (the segment in progress).
        let listed = playlist.segments.first { $0.mediaSequence == position.msn }
        let parts = listed?.parts ?? (position.msn == (playlist.segments.last?.mediaSequence ?? -1) + 1 ? playlist.trailingParts : [])
        let part = j < parts.count ? parts[j] : nil
        let parent = listed ?? playlist.segments.last
        let partsBefore = parts.prefix(j).reduce(0) { $0 + $1.durationSeconds }
        let segmentDate: Date? = listed?.programDateTime ?? parent.flatMap { p in p.programDateTime.map { $0.addingTimeInterval(p.durationSeconds) } }
        let unit = MediaSegment(mediaSequence: position.msn, discontinuitySequence: parent?.discontinuitySequence ?? 0, uri: uri,
                                durationSeconds: part?.durationSeconds ?? playlist.partTargetSeconds ?? 1,
                                byteRange: part?.byteRange, key: parent?.key, initializationSection: parent?.initializationSection,
                                programDateTime: segmentDate?.addingTimeInterval(partsBefore), gap: part?.gap ?? false)
        let placeAt = lock.withLock { mainBufferedEndSeconds }
        try fetchAndBuffer(unit, variantIndex: variantIndex, live: true, isNewest: true, part: j, placeAt: placeAt)
    }

    /// A blocking playlist reload for the next part; a delta update is merged into the playlist it extends.
    private func blockingReload(after playlist: MediaPlaylist, variantIndex: Int) throws {
        guard let variant = variants.first(where: { $0.index == variantIndex }) else { return }
        let age = lastReloadAt.map { clock.now().seconds(since: $0) } ?? 0
        guard let request = LowLatencyRules.nextReload(after: playlist, playlistAgeSeconds: age) else {
            _ = try mediaPlaylist(for: variantIndex, forceReload: true)
            return
        }
        let response = try fetch(request.url(playlistURL: variant.uri), purpose: .mediaPlaylist, variantIndex: variantIndex,
                                 mediaSequence: request.msn, byteRange: nil, policy: .playlist)
        guard case .media(var media) = try parsePlaylist(response, parentVariables: multivariantVariables) else {
            throw SessionFailure(category: .playlist, message: "expected a media playlist at \(shown(variant.uri)), got a multivariant playlist", url: shown(variant.uri))
        }
        if media.skip != nil {
            do {
                media = try LowLatencyRules.merge(delta: media, into: playlist)
            } catch {
                recorder.record(.error(ErrorRecord(fatal: false, category: "live", message: "LL-HLS delta update could not be merged (\(error)); reloading the whole playlist", url: shown(response.effectiveURL))))
                _ = try mediaPlaylist(for: variantIndex, forceReload: true)
                return
            }
        }
        let advanced = media.segments.last?.mediaSequence != playlist.segments.last?.mediaSequence
            || media.trailingParts.count != playlist.trailingParts.count
        adopt(media, variantIndex: variantIndex, url: response.effectiveURL, changed: advanced)
        if !advanced {
            // The server answered without what was asked for (it does not block, or not for that part):
            // wait a part target duration before asking again instead of spinning.
            sleepUnlessStopping(media.partTargetSeconds ?? media.targetDurationSeconds / 2)
        }
    }

    // MARK: - Live resync (docs/startup-cap.md §5)

    /// Feeds the live resync policy (live streams only) and acts on what it returns.
    fileprivate func liveEvent(_ event: LiveResyncEvent) {
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
                let message = String(format: "live stream lost: no frame after a resync and %d restarts (%.1f s)", r.attempt, r.episodeSeconds ?? 0)
                recorder.record(.error(ErrorRecord(fatal: true, category: SessionFailure.Category.network.rawValue, message: message, url: shown(configuration.url))))
                requestStop(reason: .error, error: message, category: .network)
            }
        }
    }

    /// Hands a resync or restart to the loader, interrupting whatever request it has in flight.
    private func requestLiveStep(_ step: LiveResyncAction) {
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
    private func fellOutOfLiveWindow(_ trigger: LiveResyncTrigger, playlist: MediaPlaylist, variantIndex: Int) {
        liveEvent(.fellOutOfWindow(trigger, at: clock.now()))
        if lock.withLock({ pendingLiveStep == nil }) {
            seekToLiveEdge(playlist, variantIndex: variantIndex, trigger: trigger)
        }
    }

    /// After a live reload: the playhead must not be further behind the
    /// window's start than the window is long. (Merely outside the window is
    /// normal: a player at HOLD-BACK on a short window plays segments that
    /// have just left it, from its own buffer.)
    private func checkPlayheadInLiveWindow(_ playlist: MediaPlaylist, variantIndex: Int) {
        guard let first = playlist.segments.first else { return }
        let now = clock.now()
        let position = lock.withLock { timeline.positionSeconds(at: now) }
        guard let playing = bufferedSegments.last(where: { $0.startSeconds <= position + 0.001 }) else { return }
        if first.mediaSequence - playing.mediaSequence > playlist.segments.count {
            recorder.record(.error(ErrorRecord(fatal: false, category: "live", message: String(format: "the playhead (segment %d at %.2f s) is more than the window's %d segments behind the window, which starts at segment %d; resyncing to the live edge under the recovery cap", playing.mediaSequence, position, playlist.segments.count, first.mediaSequence), url: nil)))
            fellOutOfLiveWindow(.behindWindow, playlist: playlist, variantIndex: variantIndex)
        }
    }

    /// Performs a resync or restart decided by the policy, under the recovery cap.
    private func performLiveStep(_ step: LiveResyncAction) throws {
        switch step {
        case .resyncToLiveEdge(let r):
            capEvent(.liveResync(estimateBps: measuredEstimate(), at: clock.now()))
            let decision = decide(mediaSequence: nil)
            let loadIndex = chooseRedundant(forRung: decision.variantIndex)
            let playlist = try mediaPlaylist(for: loadIndex, forceReload: true)
            currentLoadIndex = loadIndex
            pendingDecision = decision
            seekToLiveEdge(playlist, variantIndex: loadIndex, trigger: r.trigger, record: r)
        case .restart(let r):
            // Start over: multivariant playlist, fresh connection, recovery cap again.
            capEvent(.failure(.restart, estimateBps: measuredEstimate(), at: clock.now()))
            lock.withLock { freshConnectionNext = true }
            mediaPlaylists.removeAll()
            initCache = nil
            let top = try fetch(configuration.url, purpose: .multivariantPlaylist, variantIndex: nil, mediaSequence: nil, byteRange: nil, policy: .playlist)
            switch try parsePlaylist(top) {
            case .multivariant(let mv):
                recorder.record(.playlistLoaded(PlaylistLoaded(url: shown(top.effectiveURL), kind: "multivariant", variants: mv.variants.count, warnings: mv.warnings.map(\.description))))
                multivariantVariables = mv.variables
                // The ladder is kept as it was (indices, caps and estimates refer to it); only the URIs are refreshed.
                for (i, v) in mv.variants.enumerated() {
                    if let k = variants.firstIndex(where: { $0.index == i }) { variants[k].uri = v.uri }
                }
            case .media(let media):
                adopt(media, variantIndex: variants[0].index, url: top.effectiveURL, changed: true)
            }
            let decision = decide(mediaSequence: nil)
            let loadIndex = chooseRedundant(forRung: decision.variantIndex)
            let playlist = try mediaPlaylist(for: loadIndex, forceReload: true)
            currentLoadIndex = loadIndex
            pendingDecision = decision
            seekToLiveEdge(playlist, variantIndex: loadIndex, trigger: r.trigger, record: r)
        case .resolved, .giveUp:
            break
        }
    }

    /// Drops the forward buffer and continues at the live start point (HOLD-BACK from the edge).
    private func seekToLiveEdge(_ playlist: MediaPlaylist, variantIndex: Int, trigger: LiveResyncTrigger, record r: LiveResyncRecord? = nil) {
        guard !playlist.segments.isEmpty else { return }
        let from = nextMediaSequence
        let to = playlist.segments[LivePlaylistRules.startSegmentIndex(for: playlist)].mediaSequence
        let now = clock.now()
        buffer.discardAll()
        let (actions, dropped, td) = lock.withLock {
            let dropped = timeline.bufferSeconds(at: now)
            let actions = timeline.discardBuffered(at: now)
            mainBufferedEndSeconds = timeline.bufferedEndSeconds
            if audioBufferedEndSeconds != nil { audioBufferedEndSeconds = timeline.bufferedEndSeconds }
            resyncFromSequence = to
            return (actions, dropped, liveResync?.targetDurationSeconds ?? playlist.targetDurationSeconds)
        }
        record(actions)
        bufferedSegments.removeAll()
        audio?.nextMediaSequence = nil
        nextMediaSequence = to
        var log = LiveResyncLog(action: .seeked, record: r ?? LiveResyncRecord(
            trigger: trigger, phase: .resyncing, attempt: 0, stalledSeconds: nil, deadlineSeconds: nil,
            episodeSeconds: nil, targetDurationSeconds: td, recoveryCapApplied: true))
        log.fromMediaSequence = from
        log.toMediaSequence = to
        log.variantIndex = variantIndex
        log.droppedBufferSeconds = dropped
        recorder.record(.liveResync(log))
    }

    /// Fetches, decrypts and demuxes one segment (or one LL-HLS part, `part`
    /// set, placed at `placeAt`) into the forward buffer.
    private func fetchAndBuffer(_ segment: MediaSegment, variantIndex: Int, live: Bool, isNewest: Bool,
                                part: Int? = nil, placeAt: Double? = nil) throws {
        guard let variant = variants.first(where: { $0.index == variantIndex }),
              var start = placeAt ?? segmentStart(variantIndex: variantIndex, mediaSequence: segment.mediaSequence) else {
            throw SessionFailure(category: .internalError, message: "segment \(segment.mediaSequence) of variant \(variantIndex) is not on the timeline", url: shown(segment.uri))
        }
        if segment.gap {
            // EXT-X-GAP: nothing to fetch; the media clock plays through the gap
            // (no stall), as a player shows the last frame over missing media.
            recorder.record(.segmentSkipped(SegmentSkipped(variantIndex: variantIndex, mediaSequence: segment.mediaSequence, durationSeconds: segment.durationSeconds, reason: "EXT-X-GAP")))
            let now = clock.now()
            let actions = lock.withLock { timeline.appendBuffered(upTo: start + segment.durationSeconds, at: now) }
            record(actions)
            return
        }
        let aes = try segmentKey(segment, variantIndex: variantIndex)
        let initData = try initSection(for: segment, key: aes, variantIndex: variantIndex, cache: &initCache, track: nil)
        let rungBps = Double(variant.bandwidthBps > 0 ? variant.bandwidthBps : 0)
        let response = try fetch(segment.uri, purpose: .segment, variantIndex: variantIndex, mediaSequence: segment.mediaSequence,
                                 byteRange: segment.byteRange, policy: .segment,
                                 segment: (segment.durationSeconds, rungBps > 0 ? rungBps : nil, live && isNewest))

        var body = response.body
        if let aes {
            body = try decrypt(body, key: aes.key, iv: aes.iv ?? SegmentDecryptor.iv(forMediaSequence: segment.mediaSequence),
                               what: "segment \(segment.mediaSequence)", url: segment.uri)
        }
        let demuxStarted = clock.now()
        let result: DemuxResult
        do {
            // Demux only: the codec parameters found in the rendition's previous segment
            // are reused instead of FFmpeg decoding the first frames of every segment
            // again to find them (packets and timestamps are the same).
            var parameters = CodecParameterSource.probe
            if !configuration.decode, let known = demuxOnlyTracks, known.variantIndex == variantIndex {
                parameters = .reusing(known.tracks)
            }
            result = try SegmentDemuxer.demux(segment: body, initializationSection: initData,
                                              hint: Self.containerHint(for: segment),
                                              codecParameters: parameters)
            if !configuration.decode { demuxOnlyTracks = (variantIndex, result.tracks) }
        } catch {
            recorder.record(.error(ErrorRecord(fatal: false, category: "media", message: "segment \(segment.mediaSequence) could not be demuxed: \(error); skipped", url: shown(segment.uri))))
            recorder.record(.segmentSkipped(SegmentSkipped(variantIndex: variantIndex, mediaSequence: segment.mediaSequence, durationSeconds: segment.durationSeconds, reason: "demux failed: \(error)")))
            return
        }
        let demuxEnded = clock.now()
        let demuxSeconds = demuxEnded.seconds(since: demuxStarted)

        // Place the segment's packets on the media timeline: its earliest video
        // timestamp (else audio) lands on the segment's playlist start.
        let bufferedEndBefore = lock.withLock { mainBufferedEndSeconds }
        if live && placeAt == nil && abs(start - bufferedEndBefore) > 0.5 && firstSegmentFetched {
            // A jump in the live window or a resync to the edge: keep the clock continuous.
            start = bufferedEndBefore
        }
        let video = result.packets.filter { $0.kind == .video }
        let reference = (video.isEmpty ? result.packets : video).compactMap { $0.ptsSeconds ?? $0.dtsSeconds }.min() ?? 0
        let offset = start - reference
        // With an alternate audio rendition, the variant's own audio (if muxed in) is not played.
        let kept = audio == nil ? result.packets : result.packets.filter { $0.kind != .audio }
        let buffered = kept.map { p in
            BufferedPacket(packet: p, decodeSeconds: (p.dtsSeconds ?? p.ptsSeconds ?? reference) + offset,
                           presentationSeconds: (p.ptsSeconds ?? p.dtsSeconds ?? reference) + offset,
                           timelineOffsetSeconds: offset, variantIndex: variantIndex, mediaSequence: segment.mediaSequence,
                           discontinuitySequence: segment.discontinuitySequence)
        }
        if let date = segment.programDateTime {
            lock.withLock { programDateAnchor = (start, date) }
        }
        if !firstSegmentFetched {
            // Before the packets reach the decoder, which reports the first frame with this breakdown.
            lock.withLock {
                breakdown.firstSegmentLastByteAtSeconds = secondsSinceStart(response.finishedAt)
                breakdown.demuxedAtSeconds = secondsSinceStart(demuxEnded)
                breakdown.demuxSeconds = demuxSeconds
            }
        }
        buffer.append(buffered)
        let end = start + segment.durationSeconds
        // Before the first start, the controller judges the start itself: a risky
        // start waits for the policy's resume threshold instead of the startup one.
        let landing: (startingUp: Bool, bufferSeconds: Double) = lock.withLock {
            let audioEnd = audioTrackEnded ? end : (audioBufferedEndSeconds ?? end)
            return (timeline.phase == .startingUp, max(0, min(end, audioEnd) - timeline.positionSeconds(at: clock.now())))
        }
        if landing.startingUp {
            evaluatePolicy(at: clock.now(), bufferSeconds: landing.bufferSeconds, phase: .startingUp, atSegmentLanding: true)
        }
        let ahead = extendBuffered(.main, to: end)
        if let previous = lastBufferedVariant, previous != variantIndex, let from = variants.first(where: { $0.index == previous }) {
            recorder.record(.variantSwitch(VariantSwitch(fromVariantIndex: previous, toVariantIndex: variantIndex, fromBandwidthBps: from.bandwidthBps, toBandwidthBps: variant.bandwidthBps, atPositionSeconds: start)))
        }
        lastBufferedVariant = variantIndex
        firstSegmentFetched = true
        bufferedSegments.append((segment.mediaSequence, start, offset, segment.discontinuitySequence))
        if bufferedSegments.count > Self.bufferedSegmentsKept { bufferedSegments.removeFirst(bufferedSegments.count - Self.bufferedSegmentsKept) }
        let indicated = variant.bandwidthBps > 0 ? variant.bandwidthBps
            : (segment.durationSeconds > 0 ? Int(Double(response.body.count) * 8 / segment.durationSeconds) : 0)
        var bufferedRecord = SegmentBuffered(
            variantIndex: variantIndex, bandwidthBps: indicated, mediaSequence: segment.mediaSequence,
            startSeconds: start, durationSeconds: segment.durationSeconds, bytes: response.body.count,
            videoPackets: video.count, audioPackets: kept.count - video.count,
            corruptPackets: result.corruptPacketCount, demuxSeconds: demuxSeconds,
            bufferedEndSeconds: end, bufferSeconds: ahead)
        bufferedRecord.timelineOffsetSeconds = offset
        bufferedRecord.part = part
        recorder.record(.segmentBuffered(bufferedRecord))
        for warning in result.warnings.prefix(5) {
            recorder.record(.error(ErrorRecord(fatal: false, category: "media", message: "segment \(segment.mediaSequence): \(warning)", url: shown(segment.uri))))
        }
        if !configuration.decode {
            // Demux only: the first demuxed video packet stands in for the first frame.
            markFirstFrame(width: variant.resolution?.width, height: variant.resolution?.height, pts: nil, variantIndex: variantIndex)
            if live, !video.isEmpty, lock.withLock({ resyncFromSequence.map { segment.mediaSequence >= $0 } ?? false }) {
                liveEvent(.frameDecoded(at: clock.now()))
            }
        }
    }

    /// The segment's AES-128 key and IV (nil: clear) (RFC 8216 §5.2): fetched like a
    /// segment and cached, its bytes never logged. SAMPLE-AES and DRM key formats
    /// are a clear "not supported" error.
    private func segmentKey(_ segment: MediaSegment, variantIndex: Int) throws -> (key: [UInt8], iv: [UInt8]?)? {
        guard let key = segment.key else { return nil }
        switch key.method {
        case .none:
            return nil
        case .aes128:
            guard let keyURI = key.uri else {
                throw SessionFailure(category: .playlist, message: "EXT-X-KEY METHOD=AES-128 without a URI", url: shown(segment.uri))
            }
            return (try keyBytes(keyURI, variantIndex: variantIndex, mediaSequence: segment.mediaSequence), key.iv)
        case .sampleAES, .sampleAESCTR, .other:
            let name: String
            switch key.method {
            case .sampleAES: name = "SAMPLE-AES"
            case .sampleAESCTR: name = "SAMPLE-AES-CTR"
            case .other(let raw): name = raw
            default: name = "?"
            }
            throw SessionFailure(category: .media, message: "EXT-X-KEY METHOD=\(name) (KEYFORMAT \(key.keyFormat)) is not supported: hlsplay plays clear and AES-128 segments only, no sample encryption or DRM", url: shown(segment.uri))
        }
    }

    /// The segment's Media Initialization Section (EXT-X-MAP), fetched once per
    /// URI and range: consecutive segments share `cache` until the map changes.
    private func initSection(for segment: MediaSegment, key: (key: [UInt8], iv: [UInt8]?)?, variantIndex: Int?,
                             cache: inout (map: MediaInitializationSection, data: Data)?, track: String?) throws -> Data? {
        guard let map = segment.initializationSection else { return nil }
        if let cached = cache, cached.map == map { return cached.data }
        var data = try fetch(map.uri, purpose: .initSection, variantIndex: variantIndex, mediaSequence: segment.mediaSequence,
                             byteRange: map.byteRange, policy: .segment, track: track).body
        if let key, let iv = key.iv {
            // An init section under an AES-128 key is encrypted with the key's explicit IV (RFC 8216 §4.3.2.5).
            data = try decrypt(data, key: key.key, iv: iv, what: "the initialization section", url: map.uri)
        }
        cache = (map, data)
        return data
    }

    /// The 16 key bytes behind a key URI, fetched once per URI.
    private func keyBytes(_ uri: URL, variantIndex: Int, mediaSequence: Int) throws -> [UInt8] {
        if let cached = keyCache[uri] { return cached }
        let response = try fetch(uri, purpose: .key, variantIndex: variantIndex, mediaSequence: mediaSequence, byteRange: nil, policy: .segment)
        guard response.body.count == 16 else {
            throw SessionFailure(category: .media, message: "AES-128 key \(shown(uri)) is \(response.body.count) bytes, not 16", url: shown(uri))
        }
        let bytes = [UInt8](response.body)
        keyCache[uri] = bytes
        return bytes
    }

    private func decrypt(_ data: Data, key: [UInt8], iv: [UInt8], what: String, url: URL) throws -> Data {
        do {
            return try SegmentDecryptor.decryptAES128(data, key: key, iv: iv)
        } catch {
            throw SessionFailure(category: .media, message: "\(what) could not be decrypted: \(error)", url: shown(url))
        }
    }

    /// A URL as it goes into the log, HAR and messages: redacted unless --no-redact.
    func shown(_ url: URL) -> String {
        configuration.redactURLs ? URLRedaction.redacted(url) : url.absoluteString
    }

    /// Sleeps, waking early when the session stops or a live resync is asked for.
    private func sleepUnlessStopping(_ seconds: Double) {
        let deadline = clock.now().advanced(bySeconds: seconds)
        while !lock.withLock({ stopReason != nil || pendingLiveStep != nil }) {
            let left = deadline.seconds(since: clock.now())
            if left <= 0 { return }
            usleep(UInt32(min(left, 0.05) * 1e6))
        }
    }

    // MARK: - Requests

    /// Fetches with retries under `policy`; logs every attempt with its progress and timings.
    private func fetch(_ url: URL, purpose: RequestPurpose, variantIndex: Int?, mediaSequence: Int?, byteRange: ByteRange?, policy: RetryPolicy,
                       segment: (durationSeconds: Double, rungBitrateBps: Double?, isLiveEdge: Bool)? = nil, track: String? = nil) throws -> HTTPResponse {
        var attempts = 0
        var wedgeReRequests = 0
        var policy = policy
        if purpose == .mediaPlaylist || purpose == .multivariantPlaylist || purpose == .segment {
            // Live: a 404 may be a segment or playlist that has not reached this server yet; retried like a 5xx.
            // After the retries, fetchSegments reloads: a segment no longer listed has expired (resync to the edge).
            policy.retryNotFound = (lock.withLock { isLive } ?? false)
        }
        while true {
            if isStopping { throw SessionFailure(category: .network, message: "cancelled", url: shown(url)) }
            attempts += 1
            let requestID = nextRequestID
            nextRequestID += 1
            var request = HTTPRequest(url: url)
            request.byteRange = byteRange
            // After a timeout or a broken transfer, do not trust the old connection.
            request.freshConnection = lock.withLock {
                defer { freshConnectionNext = false }
                return freshConnectionNext
            }
            if let mode = configuration.cmcd {
                let data = cmcdData(purpose: purpose, variantIndex: variantIndex, segmentDurationSeconds: segment?.durationSeconds)
                switch mode {
                case .query: request.url = data.adding(to: url)
                case .header: request.headers += data.headers
                }
            }
            request.maxBodyBytes = Self.maxBodyBytes(for: purpose)
            request.firstByteTimeoutSeconds = configuration.firstByteTimeoutSeconds
            request.stallTimeoutSeconds = configuration.requestStallTimeoutSeconds
            let rangeText = byteRange.map { r in "\(r.offset ?? 0)-\((r.offset ?? 0) + r.length - 1)" }
            var start = RequestStart(requestID: requestID, url: shown(url), purpose: purpose, attempt: attempts,
                                     variantIndex: variantIndex, mediaSequence: mediaSequence, range: rangeText)
            start.track = track
            recorder.record(.requestStart(start))
            let wallStart = Date()
            let startedAt = clock.now()
            let token = CancellationToken()
            lock.withLock {
                inFlight = InFlightRequest(requestID: requestID, purpose: purpose, startedAt: startedAt, lastByteAt: startedAt,
                                           segmentDurationSeconds: segment?.durationSeconds, rungBitrateBps: segment?.rungBitrateBps,
                                           token: token)
            }
            if isStopping { token.cancel() }
            var lastLogged: MonotonicInstant?
            var bytesSinceLog = 0
            let interval = configuration.progressLogIntervalSeconds
            let fetched = client.fetch(request, cancellation: token) { [self] progress in
                lock.withLock {
                    inFlight?.bytes = progress.totalBytes
                    inFlight?.expectedBytes = progress.expectedBytes
                    inFlight?.lastByteAt = progress.at
                    if inFlight?.firstByteAt == nil { inFlight?.firstByteAt = progress.at }
                }
                bytesSinceLog += progress.chunkBytes
                if lastLogged == nil || progress.at.seconds(since: lastLogged!) >= interval || (progress.expectedBytes.map { progress.totalBytes >= $0 } ?? false) {
                    recorder.record(.requestProgress(RequestProgress(requestID: requestID, bytes: progress.totalBytes, chunkBytes: bytesSinceLog, expectedBytes: progress.expectedBytes)))
                    lastLogged = progress.at
                    bytesSinceLog = 0
                }
            }
            let abort = lock.withLock {
                defer { inFlight = nil }
                return inFlight?.abort
            }
            var result = fetched
            if case .failure(let e) = fetched, e.kind == .cancelled, abort == .wedged, segment == nil, !isStopping {
                wedgeReRequests += 1
                if wedgeReRequests <= Self.maxPlaylistWedgeReRequests {
                    // A wedged playlist request: re-requested at once on a fresh connection, not an attempt of the retry policy.
                    attempts -= 1
                    lock.withLock { freshConnectionNext = true }
                    recorder.record(.requestEnd(RequestEnd(requestID: requestID, url: shown(url), purpose: purpose, status: nil,
                                                           bytes: e.bytesReceived, ok: false, errorKind: .transferTimeout,
                                                           errorMessage: "no byte for the wedge window (byte-progress monitor); re-requested")))
                    recorder.record(.retryScheduled(RetryScheduled(requestID: requestID, url: shown(url), attemptsMade: attempts, delaySeconds: 0, errorKind: .transferTimeout)))
                    continue
                }
                // Past that, a wedge is a timeout for the retry policy (backoff, bounded attempts).
                result = .failure(LoadError(kind: .firstByteTimeout, url: e.url, bytesReceived: e.bytesReceived,
                                            message: "no byte for the wedge window (byte-progress monitor), \(wedgeReRequests) times"))
            }
            switch result {
            case .success(let response):
                let timings = TimingsRecord(response.timings)
                let transfer = max(0, response.timings.totalSeconds - response.timings.firstByteSeconds)
                let sample = ThroughputSample(bytes: response.body.count, transferSeconds: transfer, firstByteSeconds: response.timings.firstByteSeconds)
                var verdict: SampleVerdict?
                var throughput: Double?
                if let rtt = response.tcpInfo?.rttSeconds, rtt > 0 { lock.withLock { lastRTTSeconds = rtt } }
                if purpose == .segment || purpose == .initSection {
                    verdict = lock.withLock { estimator.add(sample) }
                    throughput = sample.throughputBps(minimumSeconds: configuration.estimator.minimumTransferSeconds)
                    if purpose == .segment { lock.withLock { lastFirstByteSeconds = response.timings.firstByteSeconds } }
                    if purpose == .segment && !firstSegmentFetched {
                        lock.withLock {
                            breakdown.firstSegmentFirstByteAtSeconds = secondsSinceStart(startedAt) + response.timings.firstByteSeconds
                        }
                    }
                }
                recorder.record(.requestEnd(RequestEnd(
                    requestID: requestID, url: shown(url), purpose: purpose, status: response.statusCode,
                    bytes: response.body.count, ok: true, connectionReused: response.connectionReused, timings: timings,
                    tcpInfo: response.tcpInfo.map(TCPInfoRecord.init), throughputBps: throughput, sampleVerdict: verdict)))
                recorder.addHAREntry(.make(requestID: requestID, purpose: purpose, url: shown(url), startedAt: wallStart,
                                           requestHeaders: rangeText.map { [("Range", "bytes=\($0)")] } ?? [],
                                           status: response.statusCode, responseHeaders: response.headers, bytes: response.body.count,
                                           timings: timings, error: nil))
                if let segment {
                    classifySample(requestID: requestID, response: response, transferSeconds: transfer, segment: segment, startedAt: startedAt)
                }
                if let v = variantIndex, track == nil, purpose == .segment || purpose == .mediaPlaylist,
                   failover.map({ v >= 0 && v < $0.variants.count }) == true {
                    failover!.recordSuccess(variantIndex: v)
                }
                return response
            case .failure(let error):
                recorder.record(.requestEnd(RequestEnd(
                    requestID: requestID, url: shown(url), purpose: purpose, status: error.httpStatus,
                    bytes: error.bytesReceived, ok: false, errorKind: error.kind, errorMessage: error.message)))
                recorder.addHAREntry(.make(requestID: requestID, purpose: purpose, url: shown(url), startedAt: wallStart,
                                           requestHeaders: [], status: error.httpStatus, responseHeaders: [:], bytes: error.bytesReceived,
                                           timings: nil, error: error.description))
                if isStopping {
                    throw SessionFailure(category: .network, message: "cancelled", url: shown(url))
                }
                if error.kind == .cancelled, let abort {
                    switch abort {
                    case .liveResync:
                        throw LiveStepInterrupt()
                    case .overSelected:
                        throw SegmentAbandoned()
                    case .wedged where wedgeReRequests == 0 && segment != nil && shouldReDecideAfterWedge(segmentDurationSeconds: segment!.durationSeconds, variantIndex: variantIndex):
                        // Little buffer left: decide again under the recovery cap (the probe rung) rather than
                        // wait for the same rung's bytes (reDecideAfterWedgeBelowBufferSegments).
                        lock.withLock { freshConnectionNext = true }
                        recorder.record(.retryScheduled(RetryScheduled(requestID: requestID, url: shown(url), attemptsMade: attempts, delaySeconds: 0, errorKind: .transferTimeout)))
                        throw SegmentReDecide()
                    case .wedged where wedgeReRequests == 0:
                        // The first wedge: re-request at once on a fresh connection (the link may be
                        // fine and one request lost); not a failed attempt of the retry policy.
                        wedgeReRequests += 1
                        attempts -= 1
                        lock.withLock { freshConnectionNext = true }
                        recorder.record(.retryScheduled(RetryScheduled(requestID: requestID, url: shown(url), attemptsMade: attempts, delaySeconds: 0, errorKind: .transferTimeout)))
                        continue
                    case .wedged:
                        // Wedged again: the loader decides again, now under the recovery cap.
                        if segment != nil { throw SegmentAbandoned() }
                        throw SessionFailure(category: .network, message: "\(purpose.rawValue) \(shown(url)) wedged twice", url: shown(url))
                    }
                }
                if error.kind == .cancelled {
                    throw SessionFailure(category: .network, message: "cancelled", url: shown(url))
                }
                capEvent(.loadFailed(estimateBps: measuredEstimate(), at: clock.now()))
                if failoverAfter(error, purpose: purpose, variantIndex: variantIndex) {
                    // Excluded now, with a redundant variant to go to: decide again instead of retrying this URI.
                    throw SegmentReDecide()
                }
                switch policy.decide(after: error, attemptsMade: attempts) {
                case .retry(let delay):
                    let fresh = [.firstByteTimeout, .transferTimeout, .truncatedBody, .connect].contains(error.kind)
                    lock.withLock { freshConnectionNext = fresh }
                    recorder.record(.retryScheduled(RetryScheduled(requestID: requestID, url: shown(url), attemptsMade: attempts, delaySeconds: delay, errorKind: error.kind)))
                    sleepUnlessStopping(delay)
                    if isStopping { throw SessionFailure(category: .network, message: "cancelled", url: shown(url)) }
                case .giveUp(let reason):
                    throw SessionFailure(category: .network, message: "\(purpose.rawValue) \(shown(url)) failed: \(error.kind.rawValue)\(error.httpStatus.map { " (HTTP \($0))" } ?? ""): \(error.message) — \(reason)", url: shown(url), httpStatus: error.httpStatus)
                }
            }
        }
    }

    /// Whether a wedged segment goes back through the selector (see reDecideAfterWedgeBelowBufferSegments):
    /// when the buffer is short and a lower rung than the wedged one exists.
    private func shouldReDecideAfterWedge(segmentDurationSeconds: Double, variantIndex: Int?) -> Bool {
        let now = clock.now()
        let ahead = lock.withLock { timeline.bufferSeconds(at: now) }
        guard ahead < Self.reDecideAfterWedgeBelowBufferSegments * segmentDurationSeconds,
              let variantIndex, let rung = variants.first(where: { $0.index == variantIndex })?.bandwidthBps else { return false }
        return variants.contains { $0.bandwidthBps < rung }
    }

    // MARK: - Decode

    private func decodeMain() {
        var decoders: [TrackKind: (decoder: TrackDecoder, variantIndex: Int, discontinuity: Int, parameters: CodecParameters)] = [:]
        var firstFrameSeen = false
        var drained = false
        var injectedHangDone = false
        while true {
            let packet = buffer.take(timeoutSeconds: 0.05) { [self] p in
                if !firstFrameSeen { return true }
                let now = clock.now()
                let (position, phase) = lock.withLock { (timeline.positionSeconds(at: now), timeline.phase) }
                guard phase == .playing || phase == .stalled || phase == .startingUp else { return false }
                return p.decodeSeconds <= position + Self.decodeLookaheadSeconds
            }
            if isStopping { break }
            guard let item = packet else {
                // End of stream and nothing left: flush the frames the decoders still hold.
                if !drained, firstFrameSeen, lock.withLock({ timeline.endOfStream }), buffer.count == 0 {
                    drained = true
                    for (_, entry) in decoders {
                        do {
                            count(try entry.decoder.drain(), offset: 0, variantIndex: entry.variantIndex, checkLate: false)
                        } catch {
                            decodeError("draining the \(entry.decoder.codecName) decoder: \(error)")
                        }
                    }
                }
                continue
            }
            guard item.packet.kind == .video || item.packet.kind == .audio else { continue }
            var entry = decoders[item.packet.kind]
            // A new variant, a discontinuity or a new codec configuration record (a changed EXT-X-MAP)
            // resets the decoder (after draining what it holds).
            if entry == nil || entry!.variantIndex != item.variantIndex || entry!.discontinuity != item.discontinuitySequence
                || !entry!.parameters.sameFormat(as: item.packet.parameters) {
                if let old = entry {
                    // Variant switch: the old decoder's delayed frames are still shown.
                    do {
                        count(try old.decoder.drain(), offset: item.timelineOffsetSeconds, variantIndex: old.variantIndex, checkLate: true)
                    } catch {
                        decodeError("draining the \(old.decoder.codecName) decoder at a switch: \(error)")
                    }
                }
                do {
                    entry = (try TrackDecoder(parameters: item.packet.parameters, threadCount: configuration.decodeThreadCount), item.variantIndex,
                             item.discontinuitySequence, item.packet.parameters)
                    decoders[item.packet.kind] = entry
                } catch {
                    decodeError("cannot open a \(item.packet.kind.rawValue) decoder: \(error)")
                    continue
                }
            }
            let frames: [DecodedFrame]
            let decodeStarted = clock.now()
            defer {
                let busy = clock.now().seconds(since: decodeStarted)
                let media = item.packet.kind == .video ? (item.packet.durationSeconds ?? 0) : 0
                lock.withLock {
                    decodeBusySeconds += busy
                    decodedMediaSeconds += media
                    lastDecodeProgressAt = clock.now()
                    decodeHangReported = false
                }
            }
            if let hang = Self.injectedDecodeHangSeconds, !injectedHangDone, firstFrameSeen {
                injectedHangDone = true
                Thread.sleep(forTimeInterval: hang)
            }
            do {
                frames = try entry!.decoder.decode(item.packet)
            } catch {
                decodeError("segment \(item.mediaSequence): \(error)")
                continue
            }
            count(frames, offset: item.timelineOffsetSeconds, variantIndex: item.variantIndex, checkLate: true)
            if item.packet.kind == .video, frames.contains(where: { $0.kind == .video }),
               lock.withLock({ resyncFromSequence.map { item.mediaSequence >= $0 } ?? false }) {
                liveEvent(.frameDecoded(at: clock.now()))
            }
        }

        /// Counts decoded frames; the first video frame is the session's first frame.
        func count(_ frames: [DecodedFrame], offset: Double, variantIndex: Int, checkLate: Bool) {
            var video = 0, audio = 0, late = 0
            let startPosition = frames.isEmpty ? 0 : lock.withLock { timeline.startPositionSeconds }
            for frame in frames {
                switch frame.kind {
                case .video:
                    video += 1
                    if let pts = frame.ptsSeconds, pts + offset < startPosition - Self.preciseStartToleranceSeconds {
                        // Before an EXT-X-START PRECISE=YES position: decoded for its references, never presented.
                        continue
                    }
                    if !firstFrameSeen {
                        firstFrameSeen = true
                        markFirstFrame(width: frame.width, height: frame.height, pts: frame.ptsSeconds.map { $0 + offset }, variantIndex: variantIndex)
                    } else if checkLate, let pts = frame.ptsSeconds {
                        let now = clock.now()
                        let position = lock.withLock { timeline.positionSeconds(at: now) }
                        if pts + offset < position - Self.lateFrameToleranceSeconds { late += 1 }
                    }
                case .audio:
                    audio += 1
                default:
                    break
                }
            }
            if video + audio + late > 0 {
                lock.withLock {
                    decodeStats.videoFrames += video
                    decodeStats.audioFrames += audio
                    decodeStats.lateVideoFrames += late
                }
            }
        }
    }

    private func decodeError(_ message: String) {
        let log = lock.withLock {
            decodeStats.decodeErrors += 1
            loggedDecodeErrors += 1
            return loggedDecodeErrors <= Self.maxLoggedDecodeErrors
        }
        if log { recorder.record(.error(ErrorRecord(fatal: false, category: "decode", message: message))) }
    }

    private func ffmpegMessage(level: Int32, message: String) {
        let log = lock.withLock {
            loggedDecodeErrors += 1
            return loggedDecodeErrors <= Self.maxLoggedDecodeErrors
        }
        if log {
            recorder.record(.error(ErrorRecord(fatal: false, category: "ffmpeg", message: message.trimmingCharacters(in: .whitespacesAndNewlines))))
        }
    }

    private func markFirstFrame(width: Int?, height: Int?, pts: Double?, variantIndex: Int) {
        let now = clock.now()
        let (record, actions): (FirstFrame?, [PlaybackAction]) = lock.withLock {
            guard !timeline.firstFrameDecoded else { return (nil, []) }
            let at = secondsSinceStart(now)
            breakdown.firstFrameAtSeconds = at
            if let last = breakdown.firstSegmentLastByteAtSeconds, let first = breakdown.firstSegmentFirstByteAtSeconds {
                breakdown.firstSegmentFirstByteSeconds = first - (breakdown.mediaPlaylistAtSeconds ?? 0)
                breakdown.firstSegmentLastByteSeconds = last - first
            }
            breakdown.firstFrameDecodeSeconds = at - (breakdown.demuxedAtSeconds ?? at)
            let actions = timeline.markFirstFrameDecoded(at: now)
            return (FirstFrame(timeToFirstFrameSeconds: at, variantIndex: variantIndex, width: width, height: height, ptsSeconds: pts, breakdown: breakdown), actions)
        }
        if let record {
            recorder.record(.firstFrame(record))
            capEvent(.firstFrame(at: now))
        }
        self.record(actions)
    }
}

// MARK: - CMCD (CTA-5004)

extension PlayerSession {
    /// The values hlsplay really uses, for the request about to go out.
    fileprivate func cmcdData(purpose: RequestPurpose, variantIndex: Int?, segmentDurationSeconds: Double?) -> CMCDData {
        let now = clock.now()
        var d = CMCDData()
        d.sessionID = cmcdSessionID
        d.contentID = Self.contentID(configuration.url)
        switch purpose {
        case .multivariantPlaylist, .mediaPlaylist, .steeringManifest: d.objectType = .manifest
        case .segment: d.objectType = .muxed
        case .initSection: d.objectType = .initSegment
        case .key: d.objectType = .key
        }
        if let segmentDurationSeconds { d.objectDurationMs = Int((segmentDurationSeconds * 1000).rounded()) }
        lock.withLock {
            if let i = variantIndex, let v = variants.first(where: { $0.index == i }), v.bandwidthBps > 0, purpose != .mediaPlaylist {
                d.encodedBitrateKbps = CMCDData.kbps(v.bandwidthBps)
            }
            let caps = [configuration.preferredPeakBitRateBps, policyKnobs?.peakBitrateCapBps, capController.capBps].compactMap { $0 }
            let eligible = variants.map(\.bandwidthBps).filter { bps in caps.allSatisfy { bps <= $0 } }
            if let top = eligible.max() ?? variants.map(\.bandwidthBps).min(), top > 0 { d.topBitrateKbps = CMCDData.kbps(top) }
            if timeline.phase != .startingUp || timeline.bufferedEndSeconds > timeline.startPositionSeconds {
                d.bufferLengthMs = CMCDData.bufferLengthMs(seconds: timeline.bufferSeconds(at: now))
            }
            if estimator.hasEstimate { d.measuredThroughputKbps = CMCDData.throughputKbps(bps: estimator.estimateBps) }
            if let live = isLive { d.streamType = live ? "l" : "v" }
            // `su`: this segment is needed before playback can start or resume.
            let ahead = timeline.bufferedEndSeconds - timeline.positionSeconds(at: now)
            switch timeline.phase {
            case .startingUp: d.startup = purpose == .segment && ahead < timeline.configuration.startupBufferSeconds
            case .stalled: d.startup = purpose == .segment && ahead < timeline.configuration.resumeBufferSeconds
            case .playing, .ended: d.startup = false
            }
            d.bufferStarvation = starvedSinceLastRequest
            starvedSinceLastRequest = false
        }
        return d
    }

    /// A stable content id: FNV-1a of the URL without its query, in hex.
    static func contentID(_ url: URL) -> String {
        var c = URLComponents(url: url, resolvingAgainstBaseURL: false)
        c?.query = nil
        var hash: UInt64 = 0xcbf29ce484222325
        for byte in (c?.string ?? url.absoluteString).utf8 /* hashed, not logged */ {
            hash ^= UInt64(byte)
            hash = hash &* 0x100000001b3
        }
        return String(hash, radix: 16)
    }
}

// MARK: - Decode watchdog

extension PlayerSession {
    /// On the monitor: a decode loop that has not finished a packet for the
    /// hang threshold while playing, with a packet due, is reported (once per episode).
    fileprivate func checkDecodeHang(at now: MonotonicInstant, phase: PlaybackPhase) {
        guard configuration.decode, phase == .playing else { return }
        let due = buffer.nextDecodeSeconds
        let report: (idle: Double, position: Double)? = lock.withLock {
            guard !decodeHangReported, let last = lastDecodeProgressAt else { return nil }
            let idle = now.seconds(since: last)
            let position = timeline.positionSeconds(at: now)
            guard idle >= Self.decodeHangThresholdSeconds, let due, due <= position else { return nil }
            decodeHangReported = true
            return (idle, position)
        }
        guard let report else { return }
        recorder.record(.error(ErrorRecord(fatal: false, category: "decode-hang",
            message: String(format: "no packet decoded for %.2f s while playing at %.2f s with packets due", report.idle, report.position))))
    }
}

// MARK: - Stall-risk prediction and playback policy (docs/stall-prediction.md)

extension PlayerSession {
    /// Loads the chosen predictor; a model that cannot be loaded falls back to the heuristic, logged.
    fileprivate func setUpPredictor() {
        let (chosen, problem) = SessionDecisions.makePredictor(configuration, defaultModelPath: ModelLocator.defaultModelPath)
        predictor = chosen
        if let problem {
            recorder.record(.error(ErrorRecord(fatal: false, category: "predictor", message: problem)))
        }
    }

    /// Starts the policy controller once the ladder is known.
    fileprivate func startPolicyController() {
        guard predictor != nil else { return }
        let (made, problem) = SessionDecisions.makePolicyController(configuration, ladderBitratesBps: variants.map(\.bandwidthBps))
        if let problem {
            recorder.record(.error(ErrorRecord(fatal: false, category: "policy", message: problem)))
        }
        guard let controller = made else { return }
        lock.withLock {
            policyController = controller
            applyKnobs(controller.knobs)
        }
    }

    /// Applies a policy's knobs (under the lock). A value the user set on the command line wins.
    private func applyKnobs(_ knobs: PolicyKnobs) {
        policyKnobs = knobs
        if !configuration.resumeBufferSetByUser {
            timeline.setResumeBufferSeconds(knobs.resumeBufferSeconds)
        }
        if timeline.phase == .startingUp, policyGatesStart, !configuration.startupBufferSetByUser {
            timeline.setStartupBufferSeconds(PolicyKnobs.startupBufferSeconds(configuredSeconds: configuration.playback.startupBufferSeconds, knobs: knobs))
        }
    }

    /// The forward-buffer target in force (under the lock): the user's
    /// preferredForwardBufferDuration, else the policy's, else automatic —
    /// never below the startup and resume thresholds.
    fileprivate func forwardBufferTarget() -> Double {
        configuration.forwardBufferTargetSeconds(policySeconds: policyKnobs?.preferredForwardBufferDurationSeconds,
                                                 startupSeconds: timeline.configuration.startupBufferSeconds,
                                                 resumeSeconds: timeline.configuration.resumeBufferSeconds)
    }

    /// One predictor + controller step on the monitor: features → risk → policy.
    fileprivate func evaluatePolicy(at now: MonotonicInstant, bufferSeconds: Double, phase: PlaybackPhase, atSegmentLanding: Bool = false) {
        // A stall is the buffer running dry while playing: on the monitor, the
        // controller runs only then. Before the first start it also runs once per
        // segment that lands, with the buffer that segment makes, to judge the start.
        guard let predictor, phase == .playing || atSegmentLanding && phase == .startingUp else { return }
        let cpu = DeviceProbe.cpuPressureAvg10Percent()
        let thermal = DeviceProbe.thermalMaxCelsius()
        let features: StallFeatures? = lock.withLock {
            guard policyController != nil else { return nil }
            let segmentInFlight = inFlight.flatMap { $0.purpose == .segment ? $0 : nil }
            let busyDelta = decodeBusySeconds - lastDecodeSample.busy
            let mediaDelta = decodedMediaSeconds - lastDecodeSample.media
            lastDecodeSample = (decodeBusySeconds, decodedMediaSeconds)
            return SessionDecisions.stallFeatures(
                bufferSeconds: bufferSeconds, estimator: estimator, ladderBitratesBps: variants.map(\.bandwidthBps),
                currentRungBps: currentVariant.flatMap { i in variants.first { $0.index == i } }?.bandwidthBps,
                inFlight: segmentInFlight.map { f in
                    SessionDecisions.InFlightView(bytesReceived: f.bytes, bytesExpected: f.expectedBytes,
                                                  elapsedSeconds: now.seconds(since: f.startedAt),
                                                  secondsSinceLastByte: now.seconds(since: f.lastByteAt))
                },
                firstByteSeconds: lastFirstByteSeconds, rttSeconds: lastRTTSeconds,
                cpuPressureAvg10Percent: cpu,
                decodeLagRatio: DecodeLag.ratio(decodeSeconds: busyDelta, mediaSeconds: mediaDelta),
                thermalMaxCelsius: thermal)
        }
        guard let features else { return }
        var risk: Double?
        var failure: String?
        do {
            risk = try predictor.stallProbability(features)
        } catch {
            failure = String(describing: error)
        }
        // The controller runs on session time, so its change records read as seconds since start.
        let sessionNow = MonotonicInstant(seconds: now.seconds(since: sessionStart))
        let (actions, policy) = lock.withLock { () -> ([PolicyAction], PlaybackPolicy) in
            guard var controller = policyController else { return ([], .lowLatency) }
            let actions = controller.update(risk: risk, failure: failure, features: features, at: sessionNow)
            policyController = controller
            for case .changePolicy(let change) in actions { applyKnobs(change.knobs) }
            return (actions, controller.policy)
        }
        recorder.record(.stallRisk(StallRiskSample(predictor: predictor.predictorName, risk: risk, horizonSeconds: predictor.horizonSeconds,
                                                    policy: policy, phase: phase, features: features)))
        for action in actions {
            switch action {
            case .changePolicy(let change): recorder.record(.policyChange(change))
            case .predictorFailed(let failure): recorder.record(.predictorFailed(failure))
            case .predictorRecovered(let recovery): recorder.record(.predictorRecovered(recovery))
            }
        }
    }
}

/// Finds the shipped stall model.
enum ModelLocator {
    static let modelFile = "models/stall-logistic-v2.json"

    static func defaultModelPath() -> String? {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["HLSPLAY_MODEL"], fm.fileExists(atPath: env) { return env }
        var candidates = [URL(fileURLWithPath: fm.currentDirectoryPath)]
        if let exe = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            var dir = exe.deletingLastPathComponent()
            for _ in 0..<6 {
                candidates.append(dir)
                dir = dir.deletingLastPathComponent()
            }
        }
        return candidates.map { $0.appendingPathComponent(modelFile).path }.first { fm.fileExists(atPath: $0) }
    }
}

// MARK: - Startup/recovery cap (docs/startup-cap.md)

extension PlayerSession {
    /// The estimate when it is measured; nil while it is still the default.
    fileprivate func measuredEstimate() -> Double? {
        lock.withLock { estimator.hasEstimate ? estimator.estimateBps : nil }
    }

    /// Classifies the estimate-availability gate from the store and starts the cap controller.
    fileprivate func startGate() {
        let host = configuration.url.host ?? "local"
        let key = NetworkKey(originHost: host, localNetwork: EstimateStoreFile.localNetworkIdentity(forHost: host))
        let path = configuration.estimateStorePath ?? EstimateStoreFile.defaultPath
        let (snapshot, problem) = EstimateStoreFile.load(path: path)
        if let problem {
            recorder.record(.error(ErrorRecord(fatal: false, category: "estimate-store", message: "\(problem); starting cold")))
        }
        let lookup = snapshot?.lookup(key, nowWallSeconds: Date().timeIntervalSince1970, configuration: configuration.estimateStore)
        let gate = EstimateGate.classify(lookup, forcedCold: configuration.forceCold, configuration: configuration.estimateStore)
        lock.withLock {
            networkKey = key
            storeSnapshot = snapshot
        }
        recorder.record(.capGate(GateDecisionRecord(gate: gate, lookup: lookup, networkKey: key, mode: configuration.startupCap.mode,
                                                    configuration: configuration.estimateStore)))
        capEvent(.sessionStarted(gate: gate, ladder: ladder(), at: clock.now()))
    }

    /// Feeds the cap controller and performs what it returns.
    fileprivate func capEvent(_ event: StartupCapEvent) {
        let actions = lock.withLock { capController.event(event) }
        for action in actions {
            switch action {
            case .setPeakBitrateCap(let change):
                recorder.record(.capChange(change))
            case .seedEstimator(let seed):
                lock.withLock {
                    if seed.resetFirst { estimator.reset() }
                    if let bps = seed.bps { estimator.seed(estimateBps: bps, weightSeconds: seed.weightSeconds) }
                }
                recorder.record(.capEstimatorSeed(seed))
            case .reconnect(let reconnect):
                lock.withLock { freshConnectionNext = true }
                recorder.record(.capReconnect(reconnect))
            case .log(let note):
                recorder.record(.capNote(note))
            }
        }
    }

    /// Judges whether a segment's throughput sample is network-limited, logs the verdict, and tells the cap.
    fileprivate func classifySample(requestID: Int, response: HTTPResponse, transferSeconds: Double,
                                    segment: (durationSeconds: Double, rungBitrateBps: Double?, isLiveEdge: Bool), startedAt: MonotonicInstant) {
        let observation = TransferObservation(
            bytes: response.body.count, transferSeconds: transferSeconds, firstByteSeconds: response.timings.firstByteSeconds,
            rttSeconds: response.tcpInfo?.rttSeconds, readPauseSeconds: 0, isLiveEdgeSegment: segment.isLiveEdge,
            mediaBitrateBps: segment.rungBitrateBps, tcpAppLimited: nil)
        // Small segments fetched back to back are judged together (TransferCoalescer).
        let (classified, transfers, runStartedAt) = coalescer.observation(
            for: observation, startedAt: startedAt, endedAt: response.finishedAt, minimumBytes: configuration.networkLimit.minimumBytes)
        let verdict = configuration.networkLimit.classify(classified)
        if let evidence = verdict.evidenceBps {
            lock.withLock {
                networkLimitedSamples += 1
                // Fresh delivery earns back rungs above an over-selection cap, as far as it supports them.
                overSelectionCapBps = SessionDecisions.overSelectionCap(
                    afterEvidence: evidence, current: overSelectionCapBps, ladderBitratesBps: variants.map(\.bandwidthBps),
                    upSwitchSafetyFactor: configuration.selector.upSwitchSafetyFactor)
            }
        }
        recorder.record(.sampleVerdict(SampleVerdictRecord(requestID: requestID, observation: classified, verdict: verdict, coalescedTransfers: transfers)))
        capEvent(.sample(CapSample(verdict: verdict, requestStartedAt: runStartedAt, completedAt: response.finishedAt)))
    }

    /// The wall-clock byte-progress check of the in-flight segment request:
    /// wedged → abort and re-request on a fresh connection; over-selected →
    /// abandon and lower the cap. Runs on the monitor, never on the loader.
    fileprivate func checkInFlight(at now: MonotonicInstant, bufferSeconds: Double) {
        let found: (InFlightSnapshot, ByteProgressAssessment, Int)? = lock.withLock {
            // Segments get both rules; playlists the wedge rule only (no duration, no rung: never over-selected).
            guard let f = inFlight, f.abort == nil else { return nil }
            let duration: Double
            switch f.purpose {
            case .segment:
                guard let d = f.segmentDurationSeconds else { return nil }
                duration = d
            case .mediaPlaylist, .multivariantPlaylist:
                duration = 0
            case .initSection, .key, .steeringManifest:
                return nil
            }
            let sinceFirst = f.firstByteAt.map { now.seconds(since: $0) } ?? 0
            let throughput: Double? = f.bytes > 0 && sinceFirst > 0 ? Double(f.bytes) * 8 / sinceFirst : nil
            let snapshot = InFlightSnapshot(
                bytesReceived: f.bytes, bytesExpected: f.expectedBytes, secondsSinceLastByte: now.seconds(since: f.lastByteAt),
                elapsedSeconds: now.seconds(since: f.startedAt), rttSeconds: lastRTTSeconds, segmentDurationSeconds: duration,
                rungBitrateBps: f.rungBitrateBps ?? 0, measuredThroughputBps: throughput, forwardBufferSeconds: bufferSeconds)
            let assessment = configuration.byteProgress.classify(snapshot)
            switch assessment.remedy {
            case .none:
                return nil
            case .reRequestOnFreshConnection:
                inFlight?.abort = .wedged
            case .abandonAndCap:
                // Abandoning pays only when there is a lower rung to go to.
                guard let rung = f.rungBitrateBps, variants.contains(where: { Double($0.bandwidthBps) < rung }) else { return nil }
                inFlight?.abort = .overSelected
            }
            f.token.cancel()
            return (snapshot, assessment, f.requestID)
        }
        guard let (snapshot, assessment, requestID) = found else { return }
        recorder.record(.byteProgress(ByteProgressRecord(requestID: requestID, snapshot: snapshot, assessment: assessment)))
        switch assessment.remedy {
        case .reRequestOnFreshConnection:
            lock.withLock { freshConnectionNext = true }
            capEvent(.wedgeDetected(estimateBps: measuredEstimate(), at: now))
        case .abandonAndCap(let cap):
            // The abandoned transfer is evidence too: its throughput so far goes to the estimator,
            // and the choice is capped below the abandoned rung until delivery earns it back.
            let partial = lock.withLock { () -> ThroughputSample? in
                overSelectionCapBps = SessionDecisions.overSelectionCap(
                    afterAbandoning: snapshot.rungBitrateBps, suggestedCapBps: cap, current: overSelectionCapBps,
                    ladderBitratesBps: variants.map(\.bandwidthBps))
                guard let elapsed = snapshot.measuredThroughputBps.map({ _ in snapshot.elapsedSeconds }), snapshot.bytesReceived > 0 else { return nil }
                return ThroughputSample(bytes: snapshot.bytesReceived, transferSeconds: elapsed, firstByteSeconds: 0)
            }
            if let partial {
                let verdict = lock.withLock { estimator.add(partial) }
                recorder.record(.capNote(CapNote(kind: .overSelection, phase: lock.withLock { capController.phase },
                    detail: String(format: "abandoned after %d bytes at %.0f bps (estimator: %@); choice capped at %d bps until delivery earns more",
                                   partial.bytes, partial.throughputBps(minimumSeconds: 0.001), verdict.rawValue, lock.withLock { overSelectionCapBps ?? 0 }))))
            }
            capEvent(.overSelected(suggestedCapBps: cap, ratio: assessment.overSelectionRatio ?? 0, measuredBps: snapshot.measuredThroughputBps, at: now))
        case .none:
            break
        }
    }

    /// Stores the session's final estimate for the next start on this network.
    fileprivate func saveEstimate() {
        let (key, snapshot, estimate, samples) = lock.withLock {
            (networkKey, storeSnapshot, estimator.hasEstimate ? estimator.estimateBps : nil, networkLimitedSamples)
        }
        guard let key, let estimate, samples > 0 else { return }
        let record = EstimateRecord(networkKey: key, valueBps: estimate, sampleCount: samples, measuredAt: Date().timeIntervalSince1970)
        // Re-read the file so sessions that ran meanwhile are not overwritten.
        let path = configuration.estimateStorePath ?? EstimateStoreFile.defaultPath
        let current = EstimateStoreFile.load(path: path).snapshot ?? snapshot ?? EstimateStoreSnapshot()
        if let problem = EstimateStoreFile.save(current.updating(with: record), path: path) {
            recorder.record(.error(ErrorRecord(fatal: false, category: "estimate-store", message: problem)))
        }
    }
}

extension SegmentSkipped {
    func withTrack(_ track: String) -> SegmentSkipped {
        var copy = self
        copy.track = track
        return copy
    }
}

extension TimingsRecord {
    /// curl reports 0 for phases a reused connection skipped; here each phase
    /// ends no earlier than the one before it, so the record reads as a timeline.
    init(_ t: RequestTimings) {
        let connect = max(t.connectSeconds, t.nameLookupSeconds)
        self.init(nameLookupSeconds: t.nameLookupSeconds, connectSeconds: connect, tlsSeconds: t.tlsSeconds > 0 ? max(t.tlsSeconds, connect) : 0,
                  firstByteSeconds: t.firstByteSeconds, totalSeconds: t.totalSeconds)
    }
}

extension TCPInfoRecord {
    init(_ t: TCPInfoSnapshot) {
        self.init(rttSeconds: t.rttSeconds, rttVarianceSeconds: t.rttVarianceSeconds, totalRetransmits: t.totalRetransmits,
                  congestionWindowSegments: t.congestionWindowSegments, deliveryRateBps: t.deliveryRateBitsPerSecond,
                  deliveryRateAppLimited: t.deliveryRateAppLimited)
    }
}
