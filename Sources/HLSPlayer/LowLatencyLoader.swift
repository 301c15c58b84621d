import Foundation
import HLSCore
import HLSNet

/// Low-Latency HLS loading for one media playlist: blocking playlist reloads (with delta updates merged back
/// into a full playlist) and part / segment / preload-hint fetches, each decided by `LowLatencyRules`.
///
/// Blocking: call from the loader thread, one call at a time (the HTTP client serialises its transfers anyway).
/// It keeps only the newest full playlist, when it arrived, and the last position loaded; every decision it
/// makes is returned to the caller in the step or reload outcome, with its inputs, for the session log.
public final class LowLatencyLoader {
    /// A blocking reload may be held up to three target durations by the server (§6.2.5.2); the request's
    /// first-byte timeout is that plus this margin, seconds.
    public static let blockingReloadMarginSeconds = 2.0
    /// A hinted part is held until it exists: at most a part target, but the server may hold it up to three
    /// target durations like a reload; same margin.
    public static let preloadHintMarginSeconds = 2.0

    public enum LoadFailure: Error, Sendable, Equatable, CustomStringConvertible {
        case network(LoadError)
        case playlist(PlaylistError)
        case notAMediaPlaylist(URL)
        /// The playlist has no PART-INF or no CAN-BLOCK-RELOAD: play it with the ordinary live loader.
        case notLowLatency(URL)

        public var description: String {
            switch self {
            case let .network(e): return "\(e)"
            case let .playlist(e): return "\(e)"
            case let .notAMediaPlaylist(url): return "\(url.absoluteString) is not a media playlist"
            case let .notLowLatency(url): return "\(url.absoluteString) has no EXT-X-PART-INF or CAN-BLOCK-RELOAD=YES"
            }
        }
    }

    /// What one reload did.
    public struct ReloadOutcome: Sendable {
        /// The directives sent (nil for the first, plain load).
        public var request: BlockingReloadRequest?
        /// The full playlist now in force (a delta merged in).
        public var playlist: MediaPlaylist
        /// Seconds from sending the request to having the whole answer (the server's hold included).
        public var elapsedSeconds: Double
        /// The answer was a delta update (EXT-X-SKIP) that was merged into the previous playlist.
        public var mergedDelta: Bool
        /// A delta update could not be merged (why); the full playlist was fetched again.
        public var deltaMergeFailure: DeltaUpdateError?
        /// Seconds the reload waited before it was sent (`LowLatencyRules.reloadWaitSeconds`).
        public var pacedSeconds: Double = 0
    }

    /// What one load step did.
    public enum Step: Sendable {
        /// Media loaded: a part, a preload-hinted part, or a whole segment (`position.part == nil`).
        case media(position: LowLatencyPosition, uri: URL, response: HTTPResponse, viaPreloadHint: Bool)
        /// Nothing to load before the next reload.
        case waitForReload
        /// The next position left the playlist: the caller resyncs (e.g. `start()` on a fresh playlist).
        case fellBehind(next: LowLatencyPosition, firstAvailable: Int)
    }

    private let client: HTTPClient
    private let clock: any WaitingClock
    public let playlistURL: URL
    public private(set) var playlist: MediaPlaylist?
    private var playlistReceivedAt: MonotonicInstant?
    /// When the last playlist request was sent, and whether the last answer advanced the playlist (reload pacing).
    private var lastRequestStartedAt: MonotonicInstant?
    private var lastAnswerAdvanced = true
    /// After a delta update that did not merge, reloads ask for the whole playlist.
    public private(set) var deltaUpdatesOff = false
    /// The last part or segment loaded.
    public private(set) var position: LowLatencyPosition?

    public init(client: HTTPClient, playlistURL: URL, clock: any WaitingClock) {
        self.client = client
        self.playlistURL = playlistURL
        self.clock = clock
    }

    /// The first load: the whole playlist, no directives. Fails with `.notLowLatency` for a playlist the
    /// ordinary live loader should play.
    public func loadPlaylist(cancellation: CancellationToken? = nil) -> Result<ReloadOutcome, LoadFailure> {
        let started = clock.now()
        lastRequestStartedAt = started
        switch fetchPlaylist(playlistURL, timeoutSeconds: nil, cancellation: cancellation) {
        case let .failure(e): return .failure(e)
        case let .success(p):
            guard p.partTargetSeconds != nil, p.serverControl?.canBlockReload == true else {
                return .failure(.notLowLatency(playlistURL))
            }
            accept(p)
            return .success(
                ReloadOutcome(
                    request: nil, playlist: p, elapsedSeconds: clock.now().seconds(since: started),
                    mergedDelta: false, deltaMergeFailure: nil))
        }
    }

    /// Where to start (PART-HOLD-BACK from the end, at an INDEPENDENT part); sets the position just before it,
    /// so the next `loadNext` loads it.
    public func start() -> LowLatencyStart? {
        guard let playlist, let start = LowLatencyRules.startPosition(for: playlist) else { return nil }
        position = Self.position(before: start.position, in: playlist)
        return start
    }

    /// One blocking reload for the part after the newest one listed (with `_HLS_skip` when the playlist is young
    /// enough); a delta answer is merged into the playlist held, and if that fails the full playlist is fetched.
    /// Paced however often it is called (`LowLatencyRules.reloadWaitSeconds`): at least half a part target after
    /// the previous request started, a part target after an answer that did not advance; a delta update that does
    /// not merge turns delta updates off for the loader.
    public func reload(cancellation: CancellationToken? = nil) -> Result<ReloadOutcome, LoadFailure> {
        guard let previous = playlist, playlistReceivedAt != nil else { return loadPlaylist(cancellation: cancellation) }
        let asked = clock.now()
        guard waitBeforeRequest(previous, cancellation: cancellation) else { return .failure(.network(cancelled())) }
        let started = clock.now()
        let age = playlistReceivedAt.map { started.seconds(since: $0) } ?? 0
        guard let request = LowLatencyRules.nextReload(after: previous, playlistAgeSeconds: age, deltaUpdates: !deltaUpdatesOff) else {
            return .failure(.notLowLatency(playlistURL))
        }
        let timeout = LowLatencyRulesDefaults.blockingLimitSeconds(previous) + Self.blockingReloadMarginSeconds
        switch fetchPlaylist(request.url(playlistURL: playlistURL), timeoutSeconds: timeout, cancellation: cancellation) {
        case let .failure(e): return .failure(e)
        case let .success(answer):
            do {
                let merged = try LowLatencyRules.merge(delta: answer, into: previous)
                accept(merged, previous: previous)
                return .success(
                    ReloadOutcome(
                        request: request, playlist: merged, elapsedSeconds: clock.now().seconds(since: started),
                        mergedDelta: answer.skip != nil, deltaMergeFailure: nil,
                        pacedSeconds: started.seconds(since: asked)))
            } catch {
                // The skipped segments are not all known: ask again for the whole playlist (paced too), and
                // from now on always.
                deltaUpdatesOff = true
                var full = request
                full.skip = nil
                guard waitBeforeRequest(previous, cancellation: cancellation) else { return .failure(.network(cancelled())) }
                switch fetchPlaylist(full.url(playlistURL: playlistURL), timeoutSeconds: timeout, cancellation: cancellation) {
                case let .failure(e): return .failure(e)
                case let .success(p):
                    // A server that answers even that with an unmergeable delta: its listed segments are what there is.
                    let usable = (try? LowLatencyRules.merge(delta: p, into: previous)) ?? p
                    accept(usable, previous: previous)
                    return .success(
                        ReloadOutcome(
                            request: full, playlist: usable, elapsedSeconds: clock.now().seconds(since: started),
                            mergedDelta: false, deltaMergeFailure: error, pacedSeconds: started.seconds(since: asked)))
                }
            }
        }
    }

    /// Sleeps until the next playlist request may be sent and marks it sent; false when cancelled meanwhile.
    private func waitBeforeRequest(_ previous: MediaPlaylist, cancellation: CancellationToken?) -> Bool {
        let now = clock.now()
        let wait = LowLatencyRules.reloadWaitSeconds(
            for: previous, secondsSinceLastRequest: lastRequestStartedAt.map { now.seconds(since: $0) },
            secondsSinceLastAnswer: playlistReceivedAt.map { now.seconds(since: $0) }, lastAnswerAdvanced: lastAnswerAdvanced)
        let until = now.advanced(bySeconds: wait)
        while clock.now() < until {
            if cancellation?.isCancelled == true { return false }
            // The clock is read again: the instant may have passed since the loop's test (max 0).
            clock.sleep(until: min(until, clock.now().advanced(bySeconds: 0.05)))
        }
        if cancellation?.isCancelled == true { return false }
        lastRequestStartedAt = clock.now()
        return true
    }

    private func cancelled() -> LoadError {
        LoadError(kind: .cancelled, url: playlistURL.absoluteString, message: "cancelled while waiting to reload")
    }

    /// Loads what comes after the last position (see `LowLatencyRules.nextLoad`); a preload-hinted part is
    /// requested before it exists and held by the server until it does.
    public func loadNext(
        cancellation: CancellationToken? = nil,
        onProgress: ((ByteProgress) -> Void)? = nil
    ) -> Result<Step, LoadFailure> {
        guard let playlist, let loaded = position else { return .success(.waitForReload) }
        let decision = LowLatencyRules.nextLoad(after: loaded, in: playlist)
        let target: (LowLatencyPosition, URL, Bool)
        switch decision {
        case .waitForReload: return .success(.waitForReload)
        case let .fellBehind(next, first): return .success(.fellBehind(next: next, firstAvailable: first))
        case let .part(p, uri): target = (p, uri, false)
        case let .preloadHint(p, uri): target = (p, uri, true)
        case let .segment(msn, uri): target = (LowLatencyPosition(msn: msn), uri, false)
        }
        var request = HTTPRequest(url: target.1)
        if target.2 {
            request.firstByteTimeoutSeconds = LowLatencyRulesDefaults.blockingLimitSeconds(playlist) + Self.preloadHintMarginSeconds
        }
        switch client.fetch(request, cancellation: cancellation, onProgress: onProgress) {
        case let .failure(e): return .failure(.network(e))
        case let .success(response):
            position = target.0
            return .success(.media(position: target.0, uri: target.1, response: response, viaPreloadHint: target.2))
        }
    }

    // MARK: Helpers

    private func accept(_ p: MediaPlaylist, previous: MediaPlaylist? = nil) {
        if let previous {
            lastAnswerAdvanced =
                p.segments.last?.mediaSequence != previous.segments.last?.mediaSequence
                || p.trailingParts.count != previous.trailingParts.count
        } else {
            lastAnswerAdvanced = true
        }
        playlist = p
        playlistReceivedAt = clock.now()
    }

    private func fetchPlaylist(_ url: URL, timeoutSeconds: Double?, cancellation: CancellationToken?) -> Result<MediaPlaylist, LoadFailure> {
        var request = HTTPRequest(url: url)
        if let timeoutSeconds { request.firstByteTimeoutSeconds = max(request.firstByteTimeoutSeconds, timeoutSeconds) }
        switch client.fetch(request, cancellation: cancellation) {
        case let .failure(e): return .failure(.network(e))
        case let .success(response):
            do {
                guard case let .media(p) = try PlaylistParser.parse(data: response.body, baseURL: response.effectiveURL) else {
                    return .failure(.notAMediaPlaylist(url))
                }
                return .success(p)
            } catch {
                return .failure(.playlist(error))
            }
        }
    }

    /// The position whose successor (by `LowLatencyRules.nextLoad`) is `start`.
    static func position(before start: LowLatencyPosition, in playlist: MediaPlaylist) -> LowLatencyPosition {
        guard let part = start.part, part > 0 else { return LowLatencyPosition(msn: start.msn - 1) }
        return LowLatencyPosition(msn: start.msn, part: part - 1)
    }
}

/// Server-side bounds a client plans its timeouts with.
enum LowLatencyRulesDefaults {
    /// Three target durations (§6.2.5.2: a server SHOULD answer 503 after blocking that long).
    static func blockingLimitSeconds(_ playlist: MediaPlaylist) -> Double { 3 * playlist.targetDurationSeconds }
}
