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
    var description: String { message }
}

/// The in-flight request as the wall-clock monitor sees it.
struct InFlightRequest {
    enum Abort: Equatable { case wedged, overSelected }
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

/// One variant of the ladder as the session uses it.
struct VariantInfo: Sendable {
    var index: Int
    var uri: URL
    /// BANDWIDTH, or 0 when the top-level URL was a media playlist.
    var bandwidthBps: Int
    var resolution: Resolution?
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
    private var mediaPlaylists: [Int: MediaPlaylist] = [:]
    private var vodTimelines: [Int: SegmentTimeline] = [:]
    private var liveTimeline = SegmentTimeline()
    private var nextMediaSequence = 0
    private var lastBufferedVariant: Int?
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

    // Shared state, guarded by `lock`.
    private let lock = NSLock()
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
    /// The cap an over-selection abandon set (whatever the startup-cap mode): the
    /// abandoned rung is not chosen again until fresh delivery earns it back.
    private var overSelectionCapBps: Int?
    /// Wall seconds spent inside the decoders, and media seconds of video they produced.
    private var decodeBusySeconds = 0.0
    private var decodedMediaSeconds = 0.0
    private var lastDecodeSample: (busy: Double, media: Double) = (0, 0)
    /// When the decode loop last finished a packet (nil before the first).
    private var lastDecodeProgressAt: MonotonicInstant?
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
            let sample = BufferSample(
                phase: timeline.phase, positionSeconds: timeline.positionSeconds(at: now),
                bufferedEndSeconds: timeline.bufferedEndSeconds, bufferSeconds: timeline.bufferSeconds(at: now),
                estimateBps: estimator.estimateBps, variantIndex: currentVariant,
                inFlightIdleSeconds: idle, inFlightBytes: inFlight?.bytes,
                liveLatencySeconds: (isLive ?? false) ? latency : nil)
            return (actions, sample, timeline.phase, timeline.playedSeconds(at: now))
        }
        record(actions)
        if !isStopping {
            recorder.record(.bufferSample(sample))
            checkInFlight(at: now, bufferSeconds: sample.bufferSeconds)
            checkDecodeHang(at: now, phase: sample.phase)
            if !configuration.decode { buffer.discard(decodedBefore: sample.positionSeconds) }
            capEvent(.tick(now))
            evaluatePolicy(at: now, bufferSeconds: sample.bufferSeconds, phase: sample.phase)
        }
        if statusLine { drawStatus(sample) }
        if phase == .ended {
            requestStop(reason: .completed, error: nil, category: nil)
        } else if let limit = configuration.durationLimitSeconds, played >= limit {
            requestStop(reason: .durationReached, error: nil, category: nil)
        }
        buffer.poke()
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
            case let .stallEnded(at, position, stall, buffered):
                recorder.record(.stallEnd(PlaybackChange(atSeconds: at.seconds(since: sessionStart), positionSeconds: position, bufferSeconds: buffered, stallSeconds: stall)))
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
            variants = chosen.map { i, v in VariantInfo(index: i, uri: v.uri, bandwidthBps: v.bandwidthBps, resolution: v.resolution) }
            topLevelStart = mv.start
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
        let playlist = try mediaPlaylist(for: decision.variantIndex, forceReload: false)
        lock.withLock {
            if breakdown.mediaPlaylistAtSeconds == nil {
                let at = secondsSinceStart(clock.now())
                breakdown.mediaPlaylistAtSeconds = at
                breakdown.mediaPlaylistSeconds = at - (breakdown.multivariantPlaylistAtSeconds ?? 0)
            }
        }
        guard !playlist.segments.isEmpty else {
            if playlist.endList {
                throw SessionFailure(category: .playlist, message: "media playlist has no segments", url: variants.first { $0.index == decision.variantIndex }.map { shown($0.uri) })
            }
            return
        }
        let live = !playlist.endList
        let startIndex = live ? LivePlaylistRules.startSegmentIndex(for: playlist)
                              : LivePlaylistRules.vodStartSegmentIndex(for: playlist, start: topLevelStart ?? playlist.start)
        nextMediaSequence = playlist.segments[startIndex].mediaSequence
        let startSeconds = segmentStart(variantIndex: decision.variantIndex, mediaSequence: nextMediaSequence) ?? 0
        lock.withLock {
            isLive = live
            timeline.setStartPosition(startSeconds)
        }
    }

    private func isAudioOnly(_ v: VariantStream) -> Bool {
        !v.codecs.isEmpty && v.codecs.allSatisfy { $0.hasPrefix("mp4a") || $0.hasPrefix("ac-3") || $0.hasPrefix("ec-3") || $0.hasPrefix("opus") || $0.hasPrefix("fLaC") }
            && v.resolution == nil
    }

    private func parsePlaylist(_ response: HTTPResponse) throws -> Playlist {
        do {
            return try PlaylistParser.parse(data: response.body, baseURL: response.effectiveURL)
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
        guard case .media(let media) = try parsePlaylist(response) else {
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

    private func ladder() -> [LadderRung] {
        variants.map { LadderRung(variantIndex: $0.index, bandwidthBps: $0.bandwidthBps, width: $0.resolution?.width, height: $0.resolution?.height) }
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
            let now = clock.now()
            let (bufferAhead, live, target) = lock.withLock { (timeline.bufferSeconds(at: now), isLive ?? false, forwardBufferTarget()) }
            if bufferAhead >= target {
                sleepUnlessStopping(0.1)
                continue
            }
            let previousVariant = lock.withLock { currentVariant } ?? variants[0].index
            let decision = pendingDecision ?? decide(mediaSequence: nextMediaSequence)
            pendingDecision = nil
            let variantIndex = decision.variantIndex
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
            }
            guard var playlist = mediaPlaylists[variantIndex] else { continue }

            if playlist.segments.first(where: { $0.mediaSequence == nextMediaSequence }) == nil {
                if playlist.endList {
                    let actions = lock.withLock { timeline.markEndOfStream(at: clock.now()) }
                    record(actions)
                    return
                }
                // Live: the next segment is not published yet, or has left the window.
                if let first = playlist.segments.first, nextMediaSequence < first.mediaSequence {
                    recorder.record(.error(ErrorRecord(fatal: false, category: "live", message: "fell behind the live window (next \(nextMediaSequence), window starts at \(first.mediaSequence)); resyncing to the live edge under the recovery cap", url: nil)))
                    // The resync is a recovery: the estimate that let the player fall behind is suspect.
                    capEvent(.liveResync(estimateBps: measuredEstimate(), at: clock.now()))
                    nextMediaSequence = playlist.segments[LivePlaylistRules.startSegmentIndex(for: playlist)].mediaSequence
                    continue
                }
                let delay = LivePlaylistRules.reloadDelaySeconds(targetDurationSeconds: playlist.targetDurationSeconds, playlistChanged: lastReloadChanged)
                let due = (lastReloadAt ?? clock.now()).advanced(bySeconds: delay)
                let wait = due.seconds(since: clock.now())
                if wait > 0 { sleepUnlessStopping(wait) }
                if isStopping { return }
                playlist = try mediaPlaylist(for: variantIndex, forceReload: true)
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
            }
            nextMediaSequence = segment.mediaSequence + 1
        }
    }

    private func fetchAndBuffer(_ segment: MediaSegment, variantIndex: Int, live: Bool, isNewest: Bool) throws {
        guard let variant = variants.first(where: { $0.index == variantIndex }),
              var start = segmentStart(variantIndex: variantIndex, mediaSequence: segment.mediaSequence) else {
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
        // AES-128 (RFC 8216 §5.2): the key is fetched like a segment and cached; its bytes are never logged.
        var aes: (key: [UInt8], iv: [UInt8]?)?
        if let key = segment.key {
            switch key.method {
            case .none:
                break
            case .aes128:
                guard let keyURI = key.uri else {
                    throw SessionFailure(category: .playlist, message: "EXT-X-KEY METHOD=AES-128 without a URI", url: shown(segment.uri))
                }
                aes = (try keyBytes(keyURI, variantIndex: variantIndex, mediaSequence: segment.mediaSequence), key.iv)
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
        var initData: Data?
        if let map = segment.initializationSection {
            // Fetched once per URI and range: consecutive segments share it until the EXT-X-MAP changes.
            if let cached = initCache, cached.map == map {
                initData = cached.data
            } else {
                var data = try fetch(map.uri, purpose: .initSection, variantIndex: variantIndex, mediaSequence: segment.mediaSequence, byteRange: map.byteRange, policy: .segment).body
                if let aes, let iv = aes.iv {
                    // An init section under an AES-128 key is encrypted with the key's explicit IV (RFC 8216 §4.3.2.5).
                    data = try decrypt(data, key: aes.key, iv: iv, what: "the initialization section", url: map.uri)
                }
                initCache = (map, data)
                initData = data
            }
        }
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
                                              hint: segment.initializationSection != nil ? .fragmentedMP4 : .mpegTS,
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
        let bufferedEndBefore = lock.withLock { timeline.bufferedEndSeconds }
        if live && start > bufferedEndBefore + 0.5 && firstSegmentFetched {
            // A jump in the live window: keep the clock continuous.
            start = bufferedEndBefore
        }
        let video = result.packets.filter { $0.kind == .video }
        let reference = (video.isEmpty ? result.packets : video).compactMap { $0.ptsSeconds ?? $0.dtsSeconds }.min() ?? 0
        let offset = start - reference
        let buffered = result.packets.map { p in
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
        let now = clock.now()
        let (actions, ahead) = lock.withLock {
            let actions = timeline.appendBuffered(upTo: end, at: now)
            return (actions, timeline.bufferSeconds(at: now))
        }
        record(actions)
        if let previous = lastBufferedVariant, previous != variantIndex, let from = variants.first(where: { $0.index == previous }) {
            recorder.record(.variantSwitch(VariantSwitch(fromVariantIndex: previous, toVariantIndex: variantIndex, fromBandwidthBps: from.bandwidthBps, toBandwidthBps: variant.bandwidthBps, atPositionSeconds: start)))
        }
        lastBufferedVariant = variantIndex
        firstSegmentFetched = true
        let indicated = variant.bandwidthBps > 0 ? variant.bandwidthBps
            : (segment.durationSeconds > 0 ? Int(Double(response.body.count) * 8 / segment.durationSeconds) : 0)
        recorder.record(.segmentBuffered(SegmentBuffered(
            variantIndex: variantIndex, bandwidthBps: indicated, mediaSequence: segment.mediaSequence,
            startSeconds: start, durationSeconds: segment.durationSeconds, bytes: response.body.count,
            videoPackets: video.count, audioPackets: result.packets.count - video.count,
            corruptPackets: result.corruptPacketCount, demuxSeconds: demuxSeconds,
            bufferedEndSeconds: end, bufferSeconds: ahead)))
        for warning in result.warnings.prefix(5) {
            recorder.record(.error(ErrorRecord(fatal: false, category: "media", message: "segment \(segment.mediaSequence): \(warning)", url: shown(segment.uri))))
        }
        if !configuration.decode {
            // Demux only: the first demuxed video packet stands in for the first frame.
            markFirstFrame(width: variant.resolution?.width, height: variant.resolution?.height, pts: nil, variantIndex: variantIndex)
        }
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

    private func sleepUnlessStopping(_ seconds: Double) {
        let deadline = clock.now().advanced(bySeconds: seconds)
        while !isStopping {
            let left = deadline.seconds(since: clock.now())
            if left <= 0 { return }
            usleep(UInt32(min(left, 0.05) * 1e6))
        }
    }

    // MARK: - Requests

    /// Fetches with retries under `policy`; logs every attempt with its progress and timings.
    private func fetch(_ url: URL, purpose: RequestPurpose, variantIndex: Int?, mediaSequence: Int?, byteRange: ByteRange?, policy: RetryPolicy,
                       segment: (durationSeconds: Double, rungBitrateBps: Double?, isLiveEdge: Bool)? = nil) throws -> HTTPResponse {
        var attempts = 0
        var wedgeReRequests = 0
        var policy = policy
        if purpose == .mediaPlaylist || purpose == .multivariantPlaylist {
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
            recorder.record(.requestStart(RequestStart(requestID: requestID, url: shown(url), purpose: purpose, attempt: attempts,
                                                       variantIndex: variantIndex, mediaSequence: mediaSequence, range: rangeText)))
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
            let result = client.fetch(request, cancellation: token) { [self] progress in
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
                    case .overSelected:
                        throw SegmentAbandoned()
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
                switch policy.decide(after: error, attemptsMade: attempts) {
                case .retry(let delay):
                    let fresh = [.firstByteTimeout, .transferTimeout, .truncatedBody, .connect].contains(error.kind)
                    lock.withLock { freshConnectionNext = fresh }
                    recorder.record(.retryScheduled(RetryScheduled(requestID: requestID, url: shown(url), attemptsMade: attempts, delaySeconds: delay, errorKind: error.kind)))
                    sleepUnlessStopping(delay)
                    if isStopping { throw SessionFailure(category: .network, message: "cancelled", url: shown(url)) }
                case .giveUp(let reason):
                    throw SessionFailure(category: .network, message: "\(purpose.rawValue) \(shown(url)) failed: \(error.kind.rawValue)\(error.httpStatus.map { " (HTTP \($0))" } ?? ""): \(error.message) — \(reason)", url: shown(url))
                }
            }
        }
    }

    // MARK: - Decode

    private func decodeMain() {
        var decoders: [TrackKind: (decoder: TrackDecoder, variantIndex: Int, discontinuity: Int)] = [:]
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
            // A new variant or a discontinuity resets the decoder (after draining what it holds).
            if entry == nil || entry!.variantIndex != item.variantIndex || entry!.discontinuity != item.discontinuitySequence {
                if let old = entry {
                    // Variant switch: the old decoder's delayed frames are still shown.
                    do {
                        count(try old.decoder.drain(), offset: item.timelineOffsetSeconds, variantIndex: old.variantIndex, checkLate: true)
                    } catch {
                        decodeError("draining the \(old.decoder.codecName) decoder at a switch: \(error)")
                    }
                }
                do {
                    entry = (try TrackDecoder(parameters: item.packet.parameters, threadCount: configuration.decodeThreadCount), item.variantIndex, item.discontinuitySequence)
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
        }

        /// Counts decoded frames; the first video frame is the session's first frame.
        func count(_ frames: [DecodedFrame], offset: Double, variantIndex: Int, checkLate: Bool) {
            var video = 0, audio = 0, late = 0
            for frame in frames {
                switch frame.kind {
                case .video:
                    video += 1
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
        case .multivariantPlaylist, .mediaPlaylist: d.objectType = .manifest
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
        let horizon = defaultStallHorizonSeconds
        switch configuration.predictor {
        case .off:
            predictor = nil
        case .heuristic:
            predictor = HeuristicPredictor()
        case .threshold:
            predictor = BufferThresholdPredictor()
        case .model:
            guard let path = configuration.modelPath ?? ModelLocator.defaultModelPath() else {
                recorder.record(.error(ErrorRecord(fatal: false, category: "predictor", message: "model file \(ModelLocator.modelFile) not found (set HLSPLAY_MODEL or --model); using the heuristic predictor")))
                predictor = HeuristicPredictor()
                return
            }
            do {
                predictor = try LogisticModelPredictor(contentsOfFile: path, requiredHorizonSeconds: horizon)
            } catch {
                recorder.record(.error(ErrorRecord(fatal: false, category: "predictor", message: "cannot load the stall model \(path): \(error); using the heuristic predictor")))
                predictor = HeuristicPredictor()
            }
        }
    }

    /// Starts the policy controller once the ladder is known.
    fileprivate func startPolicyController() {
        guard predictor != nil else { return }
        let ladder = variants.map(\.bandwidthBps)
        let controller: PolicyController
        do {
            controller = try PolicyController(configuration: configuration.policy, ladderBitratesBps: ladder)
        } catch {
            recorder.record(.error(ErrorRecord(fatal: false, category: "policy", message: "invalid policy configuration (\(error)); using the defaults")))
            guard let fallback = try? PolicyController(ladderBitratesBps: ladder) else { return }
            controller = fallback
        }
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
    fileprivate func evaluatePolicy(at now: MonotonicInstant, bufferSeconds: Double, phase: PlaybackPhase) {
        // A stall is the buffer running dry while playing: before the first
        // start, and during a stall, there is nothing to predict.
        guard let predictor, phase == .playing else { return }
        let cpu = DeviceProbe.cpuPressureAvg10Percent()
        let thermal = DeviceProbe.thermalMaxCelsius()
        let features: StallFeatures? = lock.withLock {
            guard policyController != nil else { return nil }
            let rung = currentVariant.flatMap { i in variants.first { $0.index == i } }
            let rungBps = Double(rung?.bandwidthBps ?? 0)
            let higher = variants.map { Double($0.bandwidthBps) }.filter { $0 > rungBps }.min()
            let segmentInFlight = inFlight.flatMap { $0.purpose == .segment ? $0 : nil }
            let busyDelta = decodeBusySeconds - lastDecodeSample.busy
            let mediaDelta = decodedMediaSeconds - lastDecodeSample.media
            lastDecodeSample = (decodeBusySeconds, decodedMediaSeconds)
            return StallFeatures(
                bufferSeconds: bufferSeconds,
                bandwidthFastBps: estimator.fastBps, bandwidthSlowBps: estimator.slowBps,
                currentRungBitrateBps: rungBps, nextHigherRungBitrateBps: higher,
                inFlightBytesReceived: segmentInFlight.map { Double($0.bytes) },
                inFlightBytesExpected: segmentInFlight?.expectedBytes.map(Double.init),
                inFlightElapsedSeconds: segmentInFlight.map { now.seconds(since: $0.startedAt) },
                inFlightSecondsSinceLastByte: segmentInFlight.map { now.seconds(since: $0.lastByteAt) },
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
    static let modelFile = "models/stall-logistic-v1.json"

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
        let verdict = configuration.networkLimit.classify(observation)
        if let evidence = verdict.evidenceBps {
            lock.withLock {
                networkLimitedSamples += 1
                // Fresh delivery earns back rungs above an over-selection cap, as far as it supports them.
                if let cap = overSelectionCapBps {
                    let supported = variants.map(\.bandwidthBps).filter { Double($0) <= configuration.selector.upSwitchSafetyFactor * evidence }.max() ?? 0
                    if supported > cap {
                        overSelectionCapBps = supported >= (variants.map(\.bandwidthBps).max() ?? 0) ? nil : supported
                    }
                }
            }
        }
        recorder.record(.sampleVerdict(SampleVerdictRecord(requestID: requestID, observation: observation, verdict: verdict)))
        capEvent(.sample(CapSample(verdict: verdict, requestStartedAt: startedAt, completedAt: response.finishedAt)))
    }

    /// The wall-clock byte-progress check of the in-flight segment request:
    /// wedged → abort and re-request on a fresh connection; over-selected →
    /// abandon and lower the cap. Runs on the monitor, never on the loader.
    fileprivate func checkInFlight(at now: MonotonicInstant, bufferSeconds: Double) {
        let found: (InFlightSnapshot, ByteProgressAssessment, Int)? = lock.withLock {
            guard let f = inFlight, f.abort == nil, f.purpose == .segment, let duration = f.segmentDurationSeconds else { return nil }
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
            capEvent(.wedgeDetected(estimateBps: measuredEstimate(), at: now))
        case .abandonAndCap(let cap):
            // The abandoned transfer is evidence too: its throughput so far goes to the estimator,
            // and the choice is capped below the abandoned rung until delivery earns it back.
            let partial = lock.withLock { () -> ThroughputSample? in
                let rungs = variants.map(\.bandwidthBps).sorted()
                let below = rungs.last { Double($0) <= cap } ?? rungs.first
                let abandonedRung = snapshot.rungBitrateBps
                let capBps = min(below ?? Int(cap), rungs.last { Double($0) < abandonedRung } ?? rungs.first ?? Int(cap))
                overSelectionCapBps = min(overSelectionCapBps ?? Int.max, capBps)
                guard let elapsed = snapshot.measuredThroughputBps.map({ _ in snapshot.elapsedSeconds }), snapshot.bytesReceived > 0 else { return nil }
                return ThroughputSample(bytes: snapshot.bytesReceived, transferSeconds: elapsed, firstByteSeconds: 0)
            }
            if let partial {
                let verdict = lock.withLock { estimator.add(partial) }
                recorder.record(.capNote(CapNote(kind: .overSelection, phase: lock.withLock { capController.phase },
                    detail: String(format: "abandoned after %d bytes at %.0f bps (estimator: %@); choice capped at %d bps until delivery earns more",
                                   partial.bytes, partial.throughputBps(minimumSeconds: 0.001), verdict.rawValue, lock.withLock { overSelectionCapBps ?? 0 }))))
            }
            capEvent(.overSelected(suggestedCapBps: cap, ratio: assessment.overSelectionRatio ?? 0, at: now))
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
