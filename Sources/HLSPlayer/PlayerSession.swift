// One playback session: three independent loops around pure decisions.
//
//   loader thread   playlists → variant selection → segment fetch → demux → forward buffer
//   decode thread   forward buffer → decode, paced by the media clock
//   monitor timer   its own period on the session's clock: advances the
//                   media clock (stalls, end), samples the buffer, enforces
//                   --duration; it never waits on the other two.
//
// Every timed wait (the monitor's period, pacing, backoff, the decode loop's
// wait for a due packet, the wait for the stop and for the threads) goes
// through the injected WaitingClock: wall time by default, virtual time on a
// DiscreteEventClock (docs/architecture.md, "Seams").
//
// Every decision (selector, estimator verdicts, retry policy, media clock)
// is a value type from HLSCore fed a snapshot and the current instant; these
// files only perform the actions and log them with their inputs.
//
// This file: the session's state, its start and finish, the monitor, and the
// loader's top (startup, playlists, the fetch loop). By concern, beside it:
//   +Segments  one segment from request to forward buffer (keys, init, demux)
//   +Requests  every HTTP request (retries, wedges, samples, HAR) and CMCD
//   +Tracks    the variant's and an alternate audio rendition's queues
//   +Live      LL-HLS parts and blocking reloads; live resync to the edge
//   +Failover  redundant variants, failover, content steering
//   +Decode    the decode thread and its watchdog
//   +Policy    the stall predictor and the policy controller
//   +Cap       the startup/recovery cap and the byte-progress rules
//   +Progress  the no-progress watchdog
//   +Pacing    the request-rate bound; thresholds clamped to the live window

import Foundation
import HLSCore
import HLSMedia
import HLSNet

/// A failure that ends the session, with a category for the exit status.
struct SessionFailure: Error, CustomStringConvertible {
    enum Category: String {
        case network, playlist, media, internalError = "internal"
        /// The progress watchdog ended the session (exit 75).
        case noProgress = "no-progress"
    }
    var category: Category
    var message: String
    var url: String?
    /// The HTTP status of the request that failed, when there was one.
    var httpStatus: Int? = nil
    var description: String { message }
}

/// The in-flight request as the wall-clock monitor sees it: who it is (the core's `InFlightRequestInfo`), its bytes
/// and times as the transfer notes them, its cancellation token, and the monitor's cut.
struct InFlightRequest {
    enum Abort: Equatable {
        case wedged, overSelected, abrAbandoned, liveResync
        /// The trickle rule: re-request on a fresh connection / fail the request with this message.
        case trickleReRequest
        case trickleFailed(String)

        /// The monitor's judgement this abort carries out, for the ones the session core judges.
        var inFlightCancel: InFlightCancel? {
            switch self {
            case .wedged: .wedged
            case .overSelected: .overSelected
            case .abrAbandoned: .abrAbandoned
            case .trickleReRequest: .trickleReRequest
            case .trickleFailed: .trickleFailed
            case .liveResync: nil
            }
        }

        /// The trickle rule's message when it failed the request.
        var trickleFailure: String? {
            if case .trickleFailed(let message) = self { message } else { nil }
        }

        /// The abort that carries out the session core's cut (`InFlightJudgement.cancel`, and its `failure`).
        init(_ cancel: InFlightCancel, failure: String?) {
            switch cancel {
            case .wedged: self = .wedged
            case .overSelected: self = .overSelected
            case .abrAbandoned: self = .abrAbandoned
            case .trickleReRequest: self = .trickleReRequest
            case .trickleFailed: self = .trickleFailed(failure ?? "")
            }
        }
    }
    /// Which request, as `request.start` logged it and as the core's in-flight rules read it (the fetch it belongs
    /// to, for the trickle rule's re-request count; a segment's media sequence and rung; the track).
    var info: InFlightRequestInfo
    var startedAt: MonotonicInstant
    var bytes = 0
    var expectedBytes: Int?
    var firstByteAt: MonotonicInstant?
    var lastByteAt: MonotonicInstant
    /// For segments: the segment's duration (the rung's BANDWIDTH is `info`'s).
    var segmentDurationSeconds: Double?
    var token: CancellationToken
    /// Why the monitor cancelled it, if it did.
    var abort: Abort?

    // The monitor reads its clock before it takes the lock under which the transfer notes its bytes, so a
    // byte may carry a later instant than the monitor's `now`: durations are never below 0.
    /// Seconds since the last byte (or the start, before one) at `now`, never negative.
    func idleSeconds(at now: MonotonicInstant) -> Double { max(0, now.seconds(since: lastByteAt)) }
    /// Seconds since the request started at `now`, never negative.
    func elapsedSeconds(at now: MonotonicInstant) -> Double { max(0, now.seconds(since: startedAt)) }
}

/// What a request (or a step made of requests) gave: its value, or a cancel that sends the loader back to a decision.
enum Loaded<Value> {
    case loaded(Value)
    case cancelled(LoaderCancel)
    /// The monitor cut the request (a main-track segment's, for its loader core to judge:
    /// `LoaderCore.transferCancelled`, `LiveLoaderCore.transferCancelled`): why, what went over the wire (`request.end`, not yet logged), the retry
    /// policy's attempt it was (HTTP errors before it were retried by `fetch`), and for `trickleFailed` the
    /// session's error. Only a fetch asked to hand its cuts over (`handsCutsToLoader`) gives it.
    case cut(InFlightCancel, wire: RequestEnd, attempt: Int, failure: String?)

    /// The value, nil when cancelled.
    var value: Value? { if case .loaded(let v) = self { v } else { nil } }

    /// The same outcome for a caller whose value is of another type (nil: it loaded).
    func passedOn<Other>() -> Loaded<Other>? {
        switch self {
        case .loaded: nil
        case .cancelled(let c): .cancelled(c)
        case .cut(let c, let wire, let attempt, let failure): .cut(c, wire: wire, attempt: attempt, failure: failure)
        }
    }

    /// The value, for a caller with no decision to go back to: a cancel is a network failure of `what` at `url`.
    func value(orFailing what: String, url: String) throws -> Value {
        switch self {
        case .loaded(let v): return v
        case .cancelled(let c): throw SessionFailure(category: .network, message: "\(what) \(url) \(c.rawValue)", url: url)
        case .cut(let c, _, _, let failure):
            throw SessionFailure(category: .network, message: failure ?? "\(what) \(url) cut: \(c.rawValue)", url: url)
        }
    }

    /// The value, for a caller on a path a live step can cut: nil when it did (`LoaderCancel.liveStepDropped`: the
    /// caller drops what it was doing, and the fetch loop performs the step); any other cancel fails as above.
    func value(unlessLiveStepDropped what: String, url: String) throws -> Value? {
        if case .cancelled(.liveStepDropped) = self { return nil }
        return try value(orFailing: what, url: url)
    }
}

/// One variant of the ladder as the session uses it.
struct VariantInfo: Sendable {
    var index: Int
    var uri: URL
    /// BANDWIDTH, or 0 when the top-level URL was a media playlist.
    var bandwidthBps: Int
    var resolution: Resolution?
    /// AUDIO group id (EXT-X-STREAM-INF AUDIO).
    var audioGroup: String? = nil
    /// An audio-only variant (CODECS audio only, no RESOLUTION) in a ladder that also has video.
    var audioOnly = false
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
    /// What every timed wait and the monitor's period go through (the clock seam): wall time by default, a
    /// DiscreteEventClock in tests that run the session in virtual time.
    let clock: any WaitingClock
    /// The host's pressure signals for the stall features (HostSignals, or none in a test).
    let hostSignals: any HostSignalReading
    let recorder: SessionRecorder
    let sessionStart: MonotonicInstant
    let statusLine: Bool

    // Loader-owned (only the loader thread touches these).
    /// Every request goes through this (libcurl, or a test's scripted loader).
    let client: any RequestLoading
    var variants: [VariantInfo] = []
    var topLevelStart: StartPoint?
    /// LL-HLS: the last part (or whole segment) loaded, and the start chosen at startup.
    var lowLatencyLoaded: LowLatencyPosition?
    var pendingLowLatencyStart: LowLatencyStart?
    /// Redundant variants (same rung, other URI or PATHWAY-ID) and their penalty box; content steering.
    var failover: FailoverTracker?
    var steering: ContentSteeringClient?
    var multivariant: MultivariantPlaylist?
    /// The variant (URI) the loader loaded last: the rung's choice after failover.
    var currentLoadIndex: Int?
    /// EXT-X-MEDIA TYPE=AUDIO renditions of the multivariant playlist.
    var audioRenditions: [Rendition] = []
    /// The alternate audio rendition being played, if any (loader-owned).
    var audio: AudioTrack?
    /// The multivariant playlist's resolved EXT-X-DEFINE variables, importable by media playlists.
    var multivariantVariables: [String: String] = [:]
    var mediaPlaylists: [Int: MediaPlaylist] = [:]
    var vodTimelines: [Int: SegmentTimeline] = [:]
    var liveTimeline = SegmentTimeline()
    /// Live: the main track's loader (`liveLoop`); the start's replaces this placeholder.
    lazy var liveLoader = makeLiveLoaderCore(startingAt: 0, variant: 0, decidedRung: nil)
    /// The latest buffered segments of the variant: media sequence, timeline start, timestamp offset and
    /// discontinuity sequence (to find the segment at the playhead, and to align alternate audio on them).
    var bufferedSegments: [(mediaSequence: Int, startSeconds: Double, offsetSeconds: Double, discontinuity: Int)] = []
    /// Most entries kept in `bufferedSegments`.
    static let bufferedSegmentsKept = 64
    var nextRequestID = 1
    var lastReloadAt: MonotonicInstant?
    var lastReloadChanged = true
    /// A main segment has been buffered (the session core keeps the last one).
    var firstSegmentFetched: Bool { lock.withLock { core.lastBuffered != nil } }
    /// The next request opens a new connection (set after a timeout or a broken transfer).
    var freshConnectionNext = false
    /// The request ID of the first request of the loader core's current fetch: its re-requests carry it.
    var loaderFetchID: Int?
    /// The URL (as logged) of the loader core's current request, for a failure it ends the session with.
    var loaderWorkURL: String?
    /// The wedges of the request in flight that `fetch` judges itself (playlists, keys, init sections, the
    /// alternate audio's segments), with what they lead to: the loader cores count theirs the same way
    /// (`LoaderCore.Cancels`), and the abandonments per segment are the loader cores' (`LoaderCore`, `LiveLoaderCore`).
    /// AES-128 keys by URI (loader-owned; never logged).
    var keyCache: [URL: [UInt8]] = [:]
    /// The last Media Initialization Section (EXT-X-MAP) and its bytes.
    var initCache: (map: MediaInitializationSection, data: Data)?
    /// The tracks of the last demuxed segment, reused for the next one of the same variant
    /// instead of probing it again: with decoding within one discontinuity sequence (the
    /// decoder carries over there too); demux only also after a discontinuity (the demuxer
    /// checks them against the segment).
    var lastDemuxedTracks: (variantIndex: Int, discontinuitySequence: Int, tracks: [CodecParameters])?
    /// Whether the variant's last buffered segment carried video (alternate audio beside a
    /// variant without video starts playback on its own).
    var lastMainSegmentHadVideo = true
    /// Demux only: the kinds whose first packet has been logged as their first frame.
    var demuxedFirstKinds: Set<TrackKind> = []
    /// CMCD session id, and whether the buffer ran dry since the last request (CMCD `bs`).
    let cmcdSessionID = UUID().uuidString.lowercased()
    var starvedSinceLastRequest = false
    /// The request-rate bound's schedules (docs/session-log.md `request.paced`).
    var requestBound = RequestRateBound()
    /// LL-HLS: when the last blocking reload started.
    var lastBlockingReloadStartedAt: MonotonicInstant?
    /// LL-HLS: whether reloads ask for delta updates, and what an answer gives.
    var deltaUpdates = DeltaUpdates()
    /// The live window: warned once when it is shorter than three target durations; its first segment last time.
    var shortLiveWindowWarned = false
    var liveWindowFirstMediaSequence: Int?
    /// Variants whose RESOLUTION is above `--max-resolution`: never chosen (`resolution.limit`).
    var resolutionExcludedVariants: Set<Int> = []
    /// The forward buffer's byte bound: the open episode (`buffer.byteBound`), and the packet
    /// bytes of the last segment buffered, which the next one is expected to add.
    var byteBoundEpisodes = ByteBoundEpisodes()
    var lastSegmentPacketBytes = 0

    // Shared state, guarded by `lock`.
    let lock = NSLock()
    /// The decision state and its rules (SessionCore): the media clock, estimator, caps,
    /// predictor and controller, current variant. Fed events; its actions performed by `perform`.
    var core: SessionCore
    var isLive: Bool?
    var inFlight: InFlightRequest?
    var networkKey: NetworkKey?
    var storeSnapshot: EstimateStoreSnapshot?
    /// The newest buffered segment with an EXT-X-PROGRAM-DATE-TIME: its media start and its date.
    var programDateAnchor: (mediaSeconds: Double, date: Date)?
    /// Live resync and restart (docs/startup-cap.md §5); nil until the stream is known to be live.
    var liveResync: LiveResyncPolicy?
    /// A resync or restart decided on the monitor, for the loader to perform.
    var pendingLiveStep: LiveResyncAction?
    /// After a resync: the first media sequence at the new position; a frame from it (or later) is noted.
    var resyncFromSequence: Int?
    /// Since when the variant's live playlist has not changed, and whether it is stale (RFC 8216 §6.2.1).
    var playlistStaleness = LivePlaylistStaleness()
    /// The progress watchdog (--no-progress-timeout) and the bytes it counts as new: media body bytes
    /// not received before, playlists when new or changed (see NoProgressWatchdog).
    var progressWatchdog: NoProgressWatchdog
    var progressBytes = 0
    /// Loader-owned: a hash of each playlist URL's last body, to tell a changed reload from an unchanged one,
    /// and the most body bytes received per media resource (URL and range), to tell new bytes from a download repeated.
    var playlistBodyHashes = RecentEntries<Int>(limit: PlayerSession.progressMemoryEntries)
    var mediaBytesReceived = RecentEntries<Int>(limit: PlayerSession.progressMemoryEntries)
    /// The decode loop's progress as the monitor judges it: decode lag, a hang, an end without a frame.
    var decodeWatch = DecodeWatch()
    /// Why the session ends, once it was asked to (the first reason wins): the exit reason, the error, its category.
    var stopping: (reason: ExitReason, error: String?, category: SessionFailure.Category?)?
    var decodeStats = DecodeStats(videoFrames: 0, audioFrames: 0, lateVideoFrames: 0, decodeErrors: 0)
    var loggedDecodeErrors = 0
    /// Video packets the decode loop skipped so far waiting for an independent frame for a new decoder.
    var packetsAwaitingKeyframe = 0
    /// The media playlist is an I-frame-only one (EXT-X-I-FRAMES-ONLY): decoders are opened low-delay.
    var iFramesOnly = false
    /// FFmpeg messages logged so far (a segment's demux messages count as one).
    var loggedFFmpegMessages = 0

    let buffer: ForwardBuffer
    /// Broadcast when the session is asked to stop (`stopping` set) and when a loader or decode thread ends
    /// (`runningThreads` shrinks): what `run` and `finish` wait on.
    let lifecycle: any ClockCondition
    var monitor: (any ClockTimer)?
    /// How many resources `playlistBodyHashes` and `mediaBytesReceived` are kept for (the newest): a
    /// replay or a reload looks back a live window or so — tens of entries; a long LL-HLS session
    /// would otherwise grow them with every part and every blocking-reload URL. Entries.
    static let progressMemoryEntries = 4096
    /// Names of the loader and decode threads still running (under `lock`).
    var runningThreads: Set<String> = []
    /// After the session is asked to stop, its loader and decode threads get this long to end before
    /// the summary is written without them, seconds. Both stop within milliseconds unless hung (a
    /// request is cancelled, a sleep is cut short, the buffer is closed).
    static let threadStopGraceSeconds = 5.0

    /// Decoding may run ahead of the clock by this much, seconds, so a frame is ready when its time comes.
    static let decodeLookaheadSeconds = 0.25
    /// A frame up to this much before the start position still counts as at it
    /// (timestamp rounding), seconds.
    static let preciseStartToleranceSeconds = 0.001
    /// A video frame decoded more than this after its presentation time is counted late, seconds.
    static let lateFrameToleranceSeconds = 0.1
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
    /// FFmpeg's own messages (and per-segment demux message summaries) written to the log
    /// before the rest are dropped; a budget of their own, so they cannot crowd out decode errors.
    static let maxLoggedFFmpegMessages = 20

    /// Opens the outputs (an unwritable path fails here, before anything plays). `loader`: what requests go
    /// through — nil for libcurl (`HTTPClient`) with the configuration's request options; a test passes a scripted
    /// loader to play without sockets. `clock`: what the session's time and waits go through — the system's wall
    /// time by default; a test passes a DiscreteEventClock to run the same threads in virtual time. `hostSignals`: where
    /// the stall features' CPU pressure and thermal state come from — the host's by default; a test passes
    /// NoHostSignals to compare with a virtual session, which has none.
    public init(
        configuration: PlayerConfiguration, logPath: String?, harPath: String?, statusLine: Bool, loader: (any RequestLoading)? = nil,
        clock: any WaitingClock = SystemWaitingClock(), hostSignals: any HostSignalReading = HostSignals()
    ) throws {
        self.configuration = configuration
        self.clock = clock
        self.hostSignals = hostSignals
        buffer = ForwardBuffer(clock: clock)
        lifecycle = clock.makeCondition()
        self.statusLine = statusLine
        sessionStart = clock.now()
        recorder = try SessionRecorder(
            logPath: logPath, harPath: harPath, clock: clock, sessionStart: sessionStart, wallStart: Date(),
            outgoing: OutgoingText(redactsURLs: configuration.redactURLs, secretHeaderNames: configuration.requestHeaders.map(\.name)))
        client = loader ?? HTTPClient(clock: clock, configuration: Self.httpConfiguration(configuration))
        core = SessionCore(configuration: configuration.core, predictor: nil)
        progressWatchdog = NoProgressWatchdog(timeoutSeconds: configuration.noProgressTimeoutSeconds, startedAt: sessionStart)
    }

    /// The HTTP client settings a configuration asks for (`--header`, `--cookie`, `--user-agent`,
    /// `--referer`, `--proxy`, `--insecure`, `--cacert`, local files): one place, for playback and `check` alike.
    static func httpConfiguration(_ configuration: PlayerConfiguration) -> HTTPClientConfiguration {
        var httpConfig = HTTPClientConfiguration()
        httpConfig.verifyTLS = configuration.verifyTLS
        httpConfig.caCertificateFile = configuration.caCertificateFile
        httpConfig.userHeaders = configuration.requestHeaders
        if let agent = configuration.userAgent { httpConfig.userAgent = agent }
        httpConfig.proxy = configuration.proxy
        httpConfig.allowFileURLs = configuration.url.isFileURL
        if configuration.url.isFileURL, !configuration.allowAnyLocalFile {
            httpConfig.localFileDirectory = Self.localFileDirectory(of: configuration.url)
        }
        return httpConfig
    }

    /// The directory a local top-level playlist may name files in (LocalFileScope): the real
    /// directory of the real playlist file (a symlinked playlist's segments are where it really is).
    static func localFileDirectory(of url: URL) -> String {
        let path = url.path
        guard let resolved = realpath(path, nil) else { return URL(fileURLWithPath: path).deletingLastPathComponent().path }
        defer { free(resolved) }
        return URL(fileURLWithPath: String(cString: resolved)).deletingLastPathComponent().path
    }

    /// Called with every event as it is logged (tests, live views).
    public func observe(_ observer: @escaping @Sendable (TimedEvent) -> Void) {
        recorder.observer = observer
    }

    /// Plays until the end, the duration limit, a fatal error or `stop`. Blocks.
    public func run() -> SessionSummary {
        recorder.writeHeader(
            .startingNow(
                url: shown(configuration.url), configuration: configuration,
                host: HostInfo.current(ffmpeg: FFmpegVersion.description, libcurl: HTTPClient.libcurlVersion)))
        if Self.routeFFmpegLog {
            FFmpegLog.install(minimumLevel: 24 /* AV_LOG_WARNING */) { [weak self] level, message in
                self?.ffmpegMessage(level: level, message: message)
            }
        }

        // The calling thread takes part in the clock's time: its waits (for the stop, for the threads) are the clock's.
        return clock.takingPart {
            setUpPredictor()
            startMonitor()
            startThread(name: "hlsplay.loader") { [self] in loaderMain() }
            if configuration.decode {
                startThread(name: "hlsplay.decode") { [self] in decodeMain() }
            }
            lifecycle.withLock {
                while !isStopping { _ = lifecycle.wait(until: nil) }
            }
            return finish()
        }
    }

    /// Ends the session (thread-safe; the first reason wins).
    public func stop(reason: ExitReason, error: String? = nil) {
        requestStop(reason: reason, error: error, category: nil)
    }

    func requestStop(reason: ExitReason, error: String?, category: SessionFailure.Category?) {
        let first: Bool = lock.withLock {
            guard stopping == nil else { return false }
            stopping = (reason, error, category)
            return true
        }
        guard first else { return }
        lock.withLock { inFlight?.token.cancel() }
        buffer.close()
        lifecycle.withLock { lifecycle.broadcast() }
    }

    var isStopping: Bool { lock.withLock { stopping != nil } }

    /// The failure category when the session ended in error.
    public var failureCategory: String? { lock.withLock { stopping?.category?.rawValue } }

    func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
        lock.withLock { _ = runningThreads.insert(name) }
        clock.startThread(name: name) { [self] in
            body()
            lock.withLock { _ = runningThreads.remove(name) }
            lifecycle.withLock { lifecycle.broadcast() }
        }
    }

    // MARK: - Finish

    func finish() -> SessionSummary {
        let graceEnds = clock.now().advanced(bySeconds: Self.threadStopGraceSeconds)
        let allStopped = lifecycle.withLock {
            while !lock.withLock({ runningThreads.isEmpty }) {
                if !lifecycle.wait(until: graceEnds) { return lock.withLock { runningThreads.isEmpty } }
            }
            return true
        }
        if !allStopped {
            // A hung loader or decoder must not keep the session from ending with a complete log.
            let stuck = lock.withLock { runningThreads.sorted() }
            recorder.record(
                .error(
                    ErrorRecord(
                        fatal: false, category: SessionFailure.Category.internalError.rawValue,
                        message: String(
                            format: "%@ did not stop within %g s of the session's end (hung); the summary is written without waiting for %@",
                            stuck.joined(separator: " and "), Self.threadStopGraceSeconds, stuck.count == 1 ? "it" : "them"))))
        }
        monitor?.cancel() // a tick under way ends first
        let now = clock.now()
        let (actions, start, position, reason, error, estimate, live, stats, bd) = lock.withLock {
            let actions = core.timeline.finish(at: now)
            return (
                actions, core.timeline.startPositionSeconds, core.timeline.positionSeconds(at: now), stopping?.reason ?? .completed,
                stopping?.error, core.estimator.hasEstimate ? core.estimator.estimateBps : nil, isLive, decodeStats, core.breakdown
            )
        }
        record(actions)
        closePacingEpisodes(at: now)
        if let episode = byteBoundEpisodes.finish(at: now) { recorder.record(.byteBound(episode)) }
        saveEstimate()
        recorder.record(.decodeStats(stats))
        recorder.setBreakdown(bd)
        let summary = recorder.finish { builder in
            builder.summary(
                url: shown(configuration.url), isLive: live, exitReason: reason, error: error,
                startPositionSeconds: start, finalPositionSeconds: position,
                sessionSeconds: now.seconds(since: sessionStart), finalEstimateBps: estimate)
        }
        if statusLine { Console.writeStandardError(Console.eraseLine) }
        return summary
    }

    /// True when a log line could not be written (e.g. the disk is full).
    public var logWriteFailed: Bool { recorder.hadWriteError }

    // MARK: - Monitor

    func startMonitor() {
        monitor = clock.repeating(everySeconds: configuration.monitorIntervalSeconds, name: "hlsplay.monitor") { [weak self] in
            self?.monitorTick()
        }
    }

    func monitorTick() {
        let now = clock.now()
        let (actions, observed, end) = lock.withLock {
            let actions = core.timeline.advance(to: now)
            let idle = inFlight.map { $0.idleSeconds(at: now) }
            let position = core.timeline.positionSeconds(at: now)
            let latency = programDateAnchor.map { anchor in
                Date().timeIntervalSince(anchor.date.addingTimeInterval(position - anchor.mediaSeconds))
            }
            var sample = core.bufferSample(
                at: now, inFlightIdleSeconds: idle, inFlightBytes: inFlight?.bytes, liveLatencySeconds: (isLive ?? false) ? latency : nil)
            if let audioEnd = core.tracks.audioEndSeconds {
                sample.videoBufferedEndSeconds = core.tracks.mainEndSeconds
                sample.audioBufferedEndSeconds = audioEnd
            }
            return (actions, sample, core.playbackEnd(at: now))
        }
        var sample = observed
        sample.bufferedBytes = buffer.bytes
        record(actions)
        if !isStopping {
            recorder.record(.bufferSample(sample))
            // The progress watchdog first: when it ends the session, nothing else is decided on this tick.
            checkProgress(at: now, sample: sample)
        }
        if !isStopping {
            monitorDecisions(at: now, bufferSeconds: sample.bufferSeconds, phase: sample.phase)
            checkDecodeHang(at: now, phase: sample.phase)
            if !configuration.decode { buffer.discard(decodedBefore: sample.positionSeconds) }
            liveEvent(.tick(now))
        }
        if statusLine { drawStatus(sample, at: now) }
        if end == .completed {
            requestStop(reason: .completed, error: nil, category: nil)
        } else if endedWithoutFrame(at: now) {
            let message = noPlayableFrameMessage()
            recorder.record(
                .error(ErrorRecord(fatal: true, category: SessionFailure.Category.media.rawValue, message: message, url: shown(configuration.url))))
            requestStop(reason: .error, error: message, category: .media)
        } else if end == .durationReached {
            requestStop(reason: .durationReached, error: nil, category: nil)
        }
        buffer.poke()
    }

    /// Everything was loaded (VOD), nothing is left to decode, and no frame
    /// came of it for `noFrameAtEndSeconds`: the session cannot start.
    func endedWithoutFrame(at now: MonotonicInstant) -> Bool {
        let pending = buffer.count
        return lock.withLock {
            decodeWatch.endedWithoutFrame(
                core.timeline.endOfStream && !core.timeline.firstFrameDecoded && pending == 0, at: now,
                afterSeconds: configuration.session.noFrameAtEndSeconds)
        }
    }

    /// Why a finished stream gave no frame, from what this session's log holds: only events that
    /// are in it, with their counts.
    func noPlayableFrameMessage() -> String {
        let buffered = recorder.count(of: "segment.buffered"), skipped = recorder.count(of: "segment.skipped")
        let (stats, waiting) = lock.withLock { (decodeStats, packetsAwaitingKeyframe) }
        var facts: [String] = []
        if buffered > 0 {
            facts.append(
                "\(buffered) segment\(buffered == 1 ? "" : "s") demuxed (segment.buffered) gave \(stats.videoFrames) video and \(stats.audioFrames) audio frames"
            )
        }
        if waiting > 0 {
            facts.append("\(waiting) video packet\(waiting == 1 ? "" : "s") skipped waiting for an independent frame that never came")
        }
        if skipped > 0 { facts.append("\(skipped) segment\(skipped == 1 ? "" : "s") skipped (segment.skipped)") }
        let errors = recorder.errorCounts()
        if !errors.isEmpty {
            facts.append("error events: " + errors.map { "\($0.count) \($0.category)" }.joined(separator: ", "))
        }
        if stats.decodeErrors > 0 { facts.append("\(stats.decodeErrors) decode error\(stats.decodeErrors == 1 ? "" : "s")") }
        if buffered == 0 && skipped == 0 { facts.append("no segment was loaded") }
        return "the stream ended without a playable frame: " + facts.joined(separator: "; ")
    }

    func drawStatus(_ s: BufferSample, at now: MonotonicInstant) {
        let variant = s.variantIndex.flatMap { i in variants.indices.contains(i) ? variants[i] : nil }
        let (stalls, stallSeconds, expected) = lock.withLock {
            (core.timeline.stallCount, core.timeline.stallSeconds(at: now), inFlight?.expectedBytes)
        }
        let status = StatusLine(
            phase: s.phase, positionSeconds: s.positionSeconds, bufferSeconds: s.bufferSeconds, stalls: stalls,
            stallSeconds: stallSeconds, retries: recorder.count(of: "request.retry"), variantIndex: s.variantIndex,
            resolution: variant?.resolution, variantBandwidthBps: variant?.bandwidthBps, estimateBps: s.estimateBps,
            inFlightBytes: s.inFlightBytes, inFlightExpectedBytes: expected, inFlightIdleSeconds: s.inFlightIdleSeconds,
            liveLatencySeconds: s.liveLatencySeconds)
        let text = recorder.outgoing.terminalLine(status.text)
        Console.drawStatusLine(text)
    }

    /// Says `message` on stderr as a warning, besides the log (where the event has the details):
    /// a problem that does not stop the session but changes what it measures or trusts. Said once
    /// per process, so N sessions of `--sessions` sharing one estimate store do not say it N times.
    func warn(_ message: String) {
        guard Self.warnings.firstTime(message) else { return }
        Console.error("hlsplay: warning: \(message)", text: recorder.outgoing, clearingStatusLine: statusLine)
    }

    /// The warnings said so far in this process.
    static let warnings = SaidOnce()

    /// Logs what the media clock did (SessionCore.mediaClock) and tells the live rules; a stall also marks the
    /// buffer starved for CMCD.
    func record(_ actions: [PlaybackAction]) {
        for action in actions {
            perform(lock.withLock { core.mediaClock(action, sessionStart: sessionStart) })
            switch action {
            case let .started(at, _, _):
                liveEvent(.playbackStarted(at: at))
            case let .stallStarted(at, _):
                lock.withLock { starvedSinceLastRequest = true }
                liveEvent(.stallStarted(at: at))
            case let .stallEnded(at, _, _, _):
                liveEvent(.stallEnded(at: at))
            case .ended:
                break
            }
        }
    }

    // MARK: - Loader

    func loaderMain() {
        do {
            // A VOD's main track is sequenced by the loader core (`vodLoop`); a live stream by `liveLoop`.
            switch try startup() {
            case .vod(let loader, let firstActions): try vodLoop(loader, firstActions)
            case .live: try liveLoop()
            }
        } catch let failure as SessionFailure {
            if !isStopping {
                recorder.record(.error(ErrorRecord(fatal: true, category: failure.category.rawValue, message: failure.message, url: failure.url)))
            }
            requestStop(reason: .error, error: failure.message, category: failure.category)
        } catch {
            requestStop(reason: .error, error: "\(error)", category: .internalError)
        }
    }

    func secondsSinceStart(_ instant: MonotonicInstant) -> Double { instant.seconds(since: sessionStart) }

    /// How the session goes on after `startup()`.
    enum Started {
        /// A VOD: the loader core that sequences its main track, and the core's first actions (the first segment's request).
        case vod(LoaderCore, [LoaderCore.Action])
        /// A live stream (its playlist may have no segments yet): `liveLoop` loads it.
        case live
    }

    func startup() throws -> Started {
        let top = try fetch(
            configuration.url, purpose: .multivariantPlaylist, variantIndex: nil, mediaSequence: nil, byteRange: nil,
            policy: configuration.retry.playlist
        ).value(orFailing: "multivariant playlist", url: shown(configuration.url))
        let parsed = try parsePlaylist(top)
        let doneAt = secondsSinceStart(top.finishedAt)
        lock.withLock { core.multivariantPlaylistLoaded(atSeconds: doneAt) }
        switch parsed {
        case .multivariant(let mv):
            recorder.record(
                .playlistLoaded(
                    PlaylistLoaded(
                        url: shown(top.effectiveURL), kind: "multivariant", variants: mv.variants.count, warnings: mv.warnings.map(\.description))))
            guard !mv.variants.isEmpty else {
                throw SessionFailure(category: .playlist, message: "multivariant playlist has no variant streams", url: shown(configuration.url))
            }
            // Audio-only variants stay in the ladder: the selector falls back on them when no video
            // rung can be played (VariantSelector), and an audio-only stream is nothing else.
            let audioOnly = AudioOnlyRungs.fallbackFlags(mv.variants)
            variants = mv.variants.enumerated().map { i, v in
                VariantInfo(
                    index: i, uri: v.uri, bandwidthBps: v.bandwidthBps, resolution: v.resolution, audioGroup: v.audioGroup,
                    audioOnly: audioOnly[i])
            }
            audioRenditions = mv.renditions.filter { $0.type == .audio }
            multivariant = mv
            failover = FailoverTracker(variants: mv.variants)
            if let client = ContentSteeringClient(playlist: mv, at: clock.now()) {
                steering = client
                recorder.record(
                    .steering(
                        LoadingNote(
                            kind: "pathway",
                            detail:
                                "content steering from \(shown(client.manifestURL)): starting on pathway \"\(client.currentPathway)\" (\(client.initialPathwayReason))",
                            pathway: client.currentPathway)))
            }
            topLevelStart = mv.start
            multivariantVariables = mv.variables
        case .media(let media):
            variants = [VariantInfo(index: 0, uri: top.effectiveURL, bandwidthBps: 0, resolution: nil)]
            adopt(media, variantIndex: 0, url: top.effectiveURL, changed: true)
            lock.withLock { core.mediaPlaylistLoaded(atSeconds: doneAt, playedAlone: true) }
        }
        let allRungs = variants.map {
            LadderRung(
                variantIndex: $0.index, bandwidthBps: $0.bandwidthBps, width: $0.resolution?.width, height: $0.resolution?.height,
                audioOnly: $0.audioOnly)
        }
        lock.withLock { core.ladderKnown(allRungs) }
        if let pinned = configuration.pinnedVariantIndex, !variants.contains(where: { $0.index == pinned }) {
            throw SessionFailure(category: .playlist, message: "--variant \(pinned): the playlist has variants \(variants.map(\.index))", url: nil)
        }
        try excludeVariantsAboveResolutionLimit()

        startGate()
        startPolicyController()
        // Content steering: the manifest's pathway priority before the first decision, so the first playlist and
        // segment come from the pathway it prefers (and its PATHWAY-CLONES are variants from the start).
        reloadSteeringIfDue()
        // The loader core is told of the start's steps as they complete; a VOD goes on with it (`vodLoop`).
        var loader = makeVODLoaderCore()
        try expectLoader(loader.start(), .fetch(.multivariant, attempt: 1))
        try expectLoader(loader.transferFinished(loaderInputs(), at: clock.now()), .decide(mediaSequence: nil, because: .startup))
        let decision = decide(mediaSequence: nil)
        var loadIndex = chooseRedundant(forRung: decision.variantIndex)
        var loaderNext = loader.decided(variant: loadIndex, inputs: loaderInputs(), at: clock.now())
        var playlist: MediaPlaylist
        while true {
            try expectLoader(loaderNext, .fetch(.mediaPlaylist(variant: loadIndex, afterStartup: true, capAtDecisionBps: nil), attempt: 1))
            if let loaded = try mediaPlaylist(for: loadIndex, forceReload: false).value {
                playlist = loaded
                break
            }
            // The playlist's URI failed over: the rung's next redundant variant.
            loadIndex = chooseRedundant(forRung: decision.variantIndex)
            loaderNext = loader.failedOver(redundantVariant: loadIndex, inputs: loaderInputs(), at: clock.now())
        }
        currentLoadIndex = loadIndex
        let mediaPlaylistAt = secondsSinceStart(clock.now())
        lock.withLock { core.mediaPlaylistLoaded(atSeconds: mediaPlaylistAt) }
        guard !playlist.segments.isEmpty else {
            if playlist.endList {
                throw SessionFailure(
                    category: .playlist, message: "media playlist has no segments",
                    url: variants.first { $0.index == loadIndex }.map { shown($0.uri) })
            }
            // The first turn loads the start's variant with the start's decision, once its playlist lists segments.
            liveLoader = makeLiveLoaderCore(startingAt: 0, variant: loadIndex, decidedRung: decision.variantIndex)
            return .live
        }
        let live = !playlist.endList
        // VOD: EXT-X-START's segment and how far into it the clock starts, in one pass over the playlist.
        let vodStart = live ? nil : LivePlaylistRules.vodStartPosition(for: playlist, start: topLevelStart ?? playlist.start)
        let startIndex = vodStart?.segmentIndex ?? LivePlaylistRules.startSegmentIndex(for: playlist)
        var startMediaSequence = playlist.segments[startIndex].mediaSequence
        var segmentStartSeconds = segmentStart(variantIndex: loadIndex, mediaSequence: startMediaSequence) ?? 0
        /// LL-HLS: where the clock starts, PART-HOLD-BACK from the end, when that is after the INDEPENDENT part loading starts at.
        var lowLatencyPlayStart: Double?
        if live, LowLatencyRules.loadsPartByPart(playlist), let llStart = LowLatencyRules.startPosition(for: playlist) {
            // LL-HLS: start at an INDEPENDENT part PART-HOLD-BACK from the end (or a whole segment).
            let first = playlist.segments[0]
            let end = playlist.segments.reduce(0) { $0 + $1.durationSeconds } + playlist.trailingParts.reduce(0) { $0 + $1.durationSeconds }
            let firstStart = segmentStart(variantIndex: loadIndex, mediaSequence: first.mediaSequence) ?? 0
            segmentStartSeconds = firstStart + end - llStart.distanceFromEndSeconds
            // Independent parts may be a whole GOP apart: load from one, but start the clock at PART-HOLD-BACK
            // from the end (the frames before it are decoded, not shown, as for EXT-X-START PRECISE=YES).
            lowLatencyPlayStart = max(segmentStartSeconds, firstStart + end - llStart.holdBackSeconds)
            startMediaSequence = llStart.position.msn
            pendingLowLatencyStart = llStart
            recorder.record(
                .lowLatencyStart(
                    LowLatencyStartRecord(
                        msn: llStart.position.msn, part: llStart.position.part, url: shown(llStart.uri),
                        distanceFromEndSeconds: llStart.distanceFromEndSeconds, partHoldBackSeconds: llStart.holdBackSeconds,
                        partTargetSeconds: playlist.partTargetSeconds ?? 0)))
        }
        // EXT-X-START PRECISE=YES: the clock starts at the offset inside the segment (earlier frames are decoded, not shown).
        let startSeconds = segmentStartSeconds + (vodStart?.offsetIntoSegmentSeconds ?? 0)
        chooseAudioRendition(forVariant: decision.variantIndex)
        lock.withLock {
            isLive = live
            core.timeline.setStartPosition(lowLatencyPlayStart ?? startSeconds)
            core.tracksPlaced(at: startSeconds, alternateAudio: audio != nil)
            if live, LowLatencyRules.loadsPartByPart(playlist), let partTarget = playlist.partTargetSeconds {
                // LL-HLS: waiting for the usual 2 s (4 s to resume) would add them to the latency;
                // start with PART-HOLD-BACK buffered, resume with twice that.
                let holdBack = playlist.serverControl?.partHoldBackSeconds ?? LowLatencyRules.defaultPartHoldBackPartTargets * partTarget
                core.timeline.setStartupBufferSeconds(min(core.timeline.configuration.startupBufferSeconds, holdBack))
                core.policyGatesStart = false
                core.timeline.setResumeBufferSeconds(min(core.timeline.configuration.resumeBufferSeconds, 2 * holdBack))
            }
            if live { liveResync = LiveResyncPolicy(targetDurationSeconds: LivePlaylistRules.targetDurationSeconds(for: playlist)) }
        }
        // A VOD cannot hold more than what is left after the start (a live window's ceiling follows each reload).
        if !live {
            setThresholdCeiling(.vod(remainingSeconds: playlist.totalDurationSeconds - startSeconds))
            // From here the loader core sequences the main track (`vodLoop`), from EXT-X-START's segment.
            let firstActions = loader.playlistLoaded(
                variant: loadIndex, firstMediaSequence: playlist.segments[0].mediaSequence,
                segmentDurationsSeconds: playlist.segments.map(\.durationSeconds), startSegmentIndex: startIndex, inputs: loaderInputs(),
                at: clock.now())
            return .vod(loader, firstActions)
        }
        perform(lock.withLock { core.thresholdClamps() })
        // The first turn uses the start's decision (not deciding twice) on the start's variant.
        liveLoader = makeLiveLoaderCore(startingAt: startMediaSequence, variant: loadIndex, decidedRung: decision.variantIndex)
        return .live
    }

    /// Leaves the rungs whose RESOLUTION is above `--max-resolution` out of the ladder, each
    /// logged (`resolution.limit`, `variant-excluded`); none left, or the pinned one left out,
    /// is a media error.
    func excludeVariantsAboveResolutionLimit() throws {
        guard let limit = configuration.maxResolution else { return }
        for variant in variants where limit.excludes(variant.resolution) {
            resolutionExcludedVariants.insert(variant.index)
            recorder.record(
                .resolutionLimit(
                    ResolutionLimitRecord(
                        action: .variantExcluded, source: .playlist, variantIndex: variant.index,
                        width: variant.resolution!.width, height: variant.resolution!.height, limit: limit)))
        }
        guard !resolutionExcludedVariants.isEmpty else { return }
        let sizes = variants.compactMap { v in v.resolution.map { "\($0.width)x\($0.height)" } }
        if resolutionExcludedVariants.count == variants.count {
            throw SessionFailure(
                category: .media,
                message:
                    "every variant's RESOLUTION (\(sizes.joined(separator: ", "))) is above the resolution limit \(limit); nothing to play (--max-resolution WxH or none sets the limit)",
                url: shown(configuration.url))
        }
        if let pinned = configuration.pinnedVariantIndex, resolutionExcludedVariants.contains(pinned),
            let resolution = variants.first(where: { $0.index == pinned })?.resolution
        {
            throw SessionFailure(
                category: .media,
                message:
                    "--variant \(pinned): its RESOLUTION \(resolution.width)x\(resolution.height) is above the resolution limit \(limit) (--max-resolution WxH or none sets the limit)",
                url: shown(configuration.url))
        }
    }

    /// Parses a playlist. Media playlists see the multivariant playlist's
    /// variables (EXT-X-DEFINE IMPORT); QUERYPARAM reads the URL the playlist came from.
    func parsePlaylist(_ response: HTTPResponse, parentVariables: [String: String] = [:]) throws -> Playlist {
        do {
            return try PlaylistParser.parse(data: response.body, baseURL: response.effectiveURL, parentVariables: parentVariables)
        } catch {
            throw SessionFailure(
                category: .playlist, message: "malformed playlist \(shown(response.effectiveURL)): \(error)", url: shown(response.effectiveURL))
        }
    }

    func recordMediaPlaylist(_ p: MediaPlaylist, url: URL, variantIndex: Int, changed: Bool) {
        if p.iFramesOnly { lock.withLock { iFramesOnly = true } }
        recorder.record(
            .playlistLoaded(
                PlaylistLoaded(
                    url: shown(url), kind: "media", variantIndex: variantIndex, segments: p.segments.count,
                    targetDurationSeconds: p.targetDurationSeconds, mediaSequence: p.mediaSequence, endList: p.endList,
                    changed: changed, warnings: p.warnings.map(\.description), iFramesOnly: p.iFramesOnly ? true : nil)))
    }

    /// The media playlist of a variant: cached for VOD, reloaded for live when asked; `.cancelled(.failedOver)`
    /// when its URI was excluded and the rung has a redundant variant (the loader decides again).
    func mediaPlaylist(for variantIndex: Int, forceReload: Bool) throws -> Loaded<MediaPlaylist> {
        if let cached = mediaPlaylists[variantIndex], cached.endList || !forceReload {
            return .loaded(cached)
        }
        guard let variant = variants.first(where: { $0.index == variantIndex }) else {
            throw SessionFailure(category: .internalError, message: "no variant \(variantIndex)", url: nil)
        }
        let loaded = try fetch(
            variant.uri, purpose: .mediaPlaylist, variantIndex: variantIndex, mediaSequence: nil, byteRange: nil, policy: configuration.retry.playlist
        )
        guard case .loaded(let response) = loaded else { return loaded.passedOn()! }
        guard case .media(let media) = try parsePlaylist(response, parentVariables: multivariantVariables) else {
            throw SessionFailure(
                category: .playlist, message: "expected a media playlist at \(shown(variant.uri)), got a multivariant playlist",
                url: shown(variant.uri))
        }
        let previous = mediaPlaylists[variantIndex]
        let changed = previous.map { $0.segments.last?.mediaSequence != media.segments.last?.mediaSequence || $0.endList != media.endList } ?? true
        adopt(media, variantIndex: variantIndex, url: response.effectiveURL, changed: changed)
        return .loaded(media)
    }

    /// Makes a freshly loaded media playlist the variant's current one and places its segments on the timeline.
    func adopt(_ media: MediaPlaylist, variantIndex: Int, url: URL, changed: Bool) {
        mediaPlaylists[variantIndex] = media
        lastReloadAt = clock.now()
        lastReloadChanged = changed
        recordMediaPlaylist(media, url: url, variantIndex: variantIndex, changed: changed)
        if media.endList {
            var t = SegmentTimeline()
            _ = t.update(with: media)
            vodTimelines[variantIndex] = t
        } else {
            liveEvent(.targetDurationChanged(LivePlaylistRules.targetDurationSeconds(for: media)))
            followLiveWindow(media)
            followLivePlaylistStaleness(media)
            let sync = liveTimeline.update(with: media)
            if case let .lostSync(first, last) = sync {
                recordLiveNote("playlist window jumped from media sequence \(last) to \(first); core.timeline re-anchored", url: shown(url))
            }
        }
    }

    func segmentStart(variantIndex: Int, mediaSequence: Int) -> Double? {
        if let t = vodTimelines[variantIndex] { return t.startSeconds(ofMediaSequence: mediaSequence) }
        return liveTimeline.startSeconds(ofMediaSequence: mediaSequence)
    }

    /// The cap in force: the lowest of every peak-bitrate cap (nil: none).
    func effectivePeakCapBps() -> Int? {
        lock.withLock { core.peakBitrateCaps.effectiveBps }
    }

    /// The selector's ladder: one variant per rung (redundant variants are the failover's business).
    func ladder() -> [LadderRung] {
        let representatives = failover.map { Set($0.ladderVariantIndices) }
        return variants.filter { (representatives?.contains($0.index) ?? true) && !resolutionExcludedVariants.contains($0.index) }.map {
            LadderRung(
                variantIndex: $0.index, bandwidthBps: $0.bandwidthBps, width: $0.resolution?.width, height: $0.resolution?.height,
                audioOnly: $0.audioOnly)
        }
    }

    /// The video rungs' BANDWIDTHs (all rungs' when none has video): what the startup cap ramps
    /// through and the policy controller steps between; an audio-only fallback is the selector's call.
    func videoLadderBitratesBps() -> [Int] {
        let video = variants.filter { !$0.audioOnly }
        return (video.isEmpty ? variants : video).map(\.bandwidthBps)
    }

    /// Runs the selector on a snapshot and logs the decision with its inputs.
    func decide(mediaSequence: Int?) -> SelectionDecision {
        let now = clock.now()
        // A reference rule (--abr) plans with the segments' duration: the playlist loading's target duration.
        let segmentSeconds = (currentLoadIndex.flatMap { mediaPlaylists[$0] } ?? mediaPlaylists.values.first)?.targetDurationSeconds
        let (decision, record) = lock.withLock {
            core.decide(ladder: ladder(), at: now, mediaSequence: mediaSequence, segmentDurationSeconds: segmentSeconds)
        }
        perform([record])
        return decision
    }

    /// Whether loading goes on (`ForwardBufferRule.gate`: load, or hold on the seconds or the byte bound), from the
    /// forward buffer's level and the bounds in force: the seconds target, the byte bound, and the floor under
    /// which the byte bound never holds loading (the start and resume thresholds in force, so neither a start nor
    /// a resume waits for bytes that cannot come).
    ///
    /// With
    /// `logsByteBound`, an episode of the byte bound holding loading is logged as it starts and ends; the main
    /// track's loops observe it, the alternate audio's checks between main requests do not.
    func forwardBufferGate(at now: MonotonicInstant, logsByteBound: Bool) -> ForwardBufferGate {
        let bytes = buffer.bytes
        let (level, bounds) = lock.withLock {
            (
                ForwardBufferLevel(
                    bufferSeconds: core.timeline.bufferSeconds(at: now), bufferedBytes: bytes,
                    expectedSegmentBytes: lastSegmentPacketBytes),
                ForwardBufferBounds(
                    targetSeconds: core.forwardBufferTargetSeconds, maxBytes: configuration.maxForwardBufferBytes,
                    floorSeconds: max(core.timeline.startupThresholdSeconds, core.timeline.resumeThresholdSeconds))
            )
        }
        let gate = ForwardBufferRule.gate(level, bounds)
        if logsByteBound, let episode = byteBoundEpisodes.observe(gate, level: level, bounds: bounds, at: now) {
            recorder.record(.byteBound(episode))
        }
        return gate
    }
}

/// Messages already said, process-wide.
final class SaidOnce: @unchecked Sendable {
    private let lock = NSLock()
    private var said: Set<String> = []
    /// True the first time `message` is passed.
    func firstTime(_ message: String) -> Bool { lock.withLock { said.insert(message).inserted } }
}
