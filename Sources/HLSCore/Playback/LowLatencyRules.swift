import Foundation

// Low-Latency HLS client rules (draft-pantos-hls-rfc8216bis §4.4.3.7–8, §4.4.4.9, §4.4.5, §6.2.5, §6.3).
// Pure: every input (the last playlist, its age, what was loaded) is an argument; nothing here reads a clock
// or the network. The runtime (HLSPlayer) performs the requests these rules describe.

/// A position in a low-latency stream: part `part` of the segment with Media Sequence Number `msn`, or the
/// whole segment when `part` is nil.
public struct LowLatencyPosition: Sendable, Equatable, CustomStringConvertible {
    public var msn: Int
    public var part: Int?
    public init(msn: Int, part: Int? = nil) {
        self.msn = msn
        self.part = part
    }
    public var description: String { part.map { "\(msn).\($0)" } ?? "\(msn)" }
}

/// A blocking playlist reload (§6.2.5.2) and, optionally, a delta update (§6.2.5.1).
public struct BlockingReloadRequest: Sendable, Equatable {
    public enum Skip: String, Sendable, Equatable {
        /// Skip older segments.
        case yes = "YES"
        /// Skip older segments and date ranges (the server has CAN-SKIP-DATERANGES=YES).
        case v2 = "v2"
    }
    /// `_HLS_msn`.
    public var msn: Int
    /// `_HLS_part`; nil when the playlist has no parts (PART-INF absent): block for the whole segment.
    public var part: Int?
    /// `_HLS_skip`; nil = ask for the full playlist.
    public var skip: Skip?

    public init(msn: Int, part: Int? = nil, skip: Skip? = nil) {
        self.msn = msn
        self.part = part
        self.skip = skip
    }

    /// The delivery directives, in the order the draft lists them.
    public var queryItems: [URLQueryItem] {
        var items = [URLQueryItem(name: "_HLS_msn", value: String(msn))]
        if let part { items.append(URLQueryItem(name: "_HLS_part", value: String(part))) }
        if let skip { items.append(URLQueryItem(name: "_HLS_skip", value: skip.rawValue)) }
        return items
    }

    /// `playlistURL` with the directives added (earlier `_HLS_` parameters replaced, other parameters kept).
    public func url(playlistURL: URL) -> URL {
        guard var components = URLComponents(url: playlistURL, resolvingAgainstBaseURL: true) else { return playlistURL }
        let kept = (components.queryItems ?? []).filter { !$0.name.hasPrefix("_HLS_") }
        components.queryItems = kept + queryItems
        return components.url ?? playlistURL
    }
}

/// Why a delta update could not be merged.
public enum DeltaUpdateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A skipped segment is not in the previous playlist (it is too old, or the previous playlist was
    /// itself incomplete): the full playlist must be requested.
    case skippedSegmentMissing(msn: Int, skippedFirst: Int, skippedCount: Int)
    /// The delta's EXT-X-DISCONTINUITY-SEQUENCE disagrees with the restored first segment's.
    case discontinuitySequenceMismatch(delta: Int, previous: Int)

    public var description: String {
        switch self {
        case let .skippedSegmentMissing(msn, first, count):
            return
                "delta update skipped segments \(first)…\(first.saturatingAdd(count).saturatingAdd(-1)) but segment \(msn) is not in the previous playlist"
        case let .discontinuitySequenceMismatch(delta, previous):
            return "delta update has DISCONTINUITY-SEQUENCE \(delta), the previous playlist has \(previous) for that segment"
        }
    }
}

/// Where to start a low-latency live stream.
public struct LowLatencyStart: Sendable, Equatable {
    /// The first thing to load: an INDEPENDENT part, or a whole segment.
    public var position: LowLatencyPosition
    public var uri: URL
    /// From the start position to the end of the playlist (its last part), seconds.
    public var distanceFromEndSeconds: Double
    /// The hold-back the choice honours: PART-HOLD-BACK, or its default.
    public var holdBackSeconds: Double
}

/// What to load next after a (re)load of the playlist.
public enum LowLatencyNextLoad: Sendable, Equatable {
    /// A listed part.
    case part(LowLatencyPosition, uri: URL)
    /// A whole segment: the next segment is complete, or the parts of the segment in progress are no longer
    /// listed (then the parts already loaded of it are replaced by the segment).
    case segment(msn: Int, uri: URL)
    /// The next part is the one the server hinted (EXT-X-PRELOAD-HINT TYPE=PART): request it now, the server
    /// holds the answer until it exists.
    case preloadHint(LowLatencyPosition, uri: URL)
    /// Nothing to load until the next (blocking) reload.
    case waitForReload
    /// The next position has left the playlist: resynchronise from `firstAvailable`.
    case fellBehind(next: LowLatencyPosition, firstAvailable: Int)
}

public enum LowLatencyRules {
    /// PART-HOLD-BACK when the server does not give one, in Part Target Durations: the draft says it SHOULD be at
    /// least three of them.
    public static let defaultPartHoldBackPartTargets = 3.0
    /// A delta update may only be asked for with a playlist younger than this fraction of the Skip Boundary
    /// (CAN-SKIP-UNTIL): §6.3.7 says no older than one half.
    public static let deltaUpdateMaximumAgeFraction = 0.5
    /// Slack when comparing positions on the timeline, seconds.
    static let toleranceSeconds = 1e-6

    /// A live playlist with parts whose server blocks reloads (CAN-BLOCK-RELOAD=YES): loaded part by part, with
    /// blocking reloads. Any other live playlist is loaded segment by segment.
    public static func loadsPartByPart(_ playlist: MediaPlaylist) -> Bool {
        !playlist.endList && playlist.partTargetSeconds != nil && (playlist.serverControl?.canBlockReload ?? false)
    }

    /// Media Sequence Number of the last complete segment (segments before a delta's EXT-X-SKIP count).
    static func lastCompleteMSN(_ playlist: MediaPlaylist) -> Int {
        playlist.segments.last?.mediaSequence ?? (playlist.mediaSequence + (playlist.skip?.skippedSegments ?? 0) - 1)
    }

    // MARK: Blocking reload

    /// The next blocking reload after `playlist` (received `playlistAgeSeconds` ago): the part after the last
    /// listed one (`_HLS_msn`/`_HLS_part`), or the next segment when the playlist has no PART-INF; `_HLS_skip`
    /// when the server offers delta updates and the playlist is young enough to merge one into.
    /// nil when the server does not block (no CAN-BLOCK-RELOAD=YES) or the playlist has ended.
    /// `deltaUpdates` false: never ask for one (a delta from this server did not merge).
    public static func nextReload(after playlist: MediaPlaylist, playlistAgeSeconds: Double, deltaUpdates: Bool = true) -> BlockingReloadRequest? {
        guard playlist.isLive, let control = playlist.serverControl, control.canBlockReload else { return nil }
        let next = lastCompleteMSN(playlist) + 1
        var request = BlockingReloadRequest(msn: next)
        if playlist.partTargetSeconds != nil {
            // Trailing parts belong to segment `next`; ask for the one after them.
            request.part = playlist.trailingParts.count
        }
        if deltaUpdates, let boundary = control.canSkipUntilSeconds, playlistAgeSeconds >= 0,
            playlistAgeSeconds < boundary * deltaUpdateMaximumAgeFraction
        {
            request.skip = control.canSkipDateRanges ? .v2 : .yes
        }
        return request
    }

    // MARK: Reload pacing

    /// Two reloads of one playlist start at least this many part targets apart
    /// (target durations without PART-INF): a blocking server answers when the
    /// next part exists, about one part target later, so only a server that
    /// does not block — or a loop — would go faster. Fraction.
    public static let minimumReloadIntervalPartTargets = 0.5

    /// The least time between the starts of two reloads of `playlist`: half its
    /// part target, or half its target duration without PART-INF (and never
    /// below the request-rate bound's floor), seconds.
    public static func minimumReloadIntervalSeconds(for playlist: MediaPlaylist) -> Double {
        let paced =
            playlist.partTargetSeconds.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
            ?? LivePlaylistRules.targetDurationSeconds(for: playlist)
        return max(RequestRateRules.minimumIntervalFloorSeconds, minimumReloadIntervalPartTargets * paced)
    }

    /// Seconds to wait before the next reload of `playlist`, in every path
    /// (blocking reload, the full reload after a delta that did not merge, a
    /// playlist without a next blocking reload):
    /// - at least `minimumReloadIntervalSeconds` after the previous reload started;
    /// - after an answer that did not advance (the server answered without
    ///   blocking, or answered with what it had), one part target (half the
    ///   target duration without PART-INF) after that answer.
    /// nil instants: no earlier reload, nothing to wait for.
    public static func reloadWaitSeconds(
        for playlist: MediaPlaylist, secondsSinceLastRequest: Double?,
        secondsSinceLastAnswer: Double?, lastAnswerAdvanced: Bool
    ) -> Double {
        var wait = 0.0
        if let since = secondsSinceLastRequest {
            wait = max(wait, minimumReloadIntervalSeconds(for: playlist) - since)
        }
        if !lastAnswerAdvanced, let since = secondsSinceLastAnswer {
            let unchanged =
                playlist.partTargetSeconds.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
                ?? LivePlaylistRules.reloadDelaySeconds(
                    targetDurationSeconds: LivePlaylistRules.targetDurationSeconds(for: playlist),
                    playlistChanged: false)
            wait = max(wait, max(unchanged, RequestRateRules.minimumIntervalFloorSeconds) - since)
        }
        return max(0, wait)
    }

    // MARK: Delta updates

    /// Merges a delta update (a playlist with EXT-X-SKIP) into the previous playlist: the skipped segments are
    /// taken from `previous` by Media Sequence Number, the delta's segments follow with their discontinuity
    /// sequence numbers carried on from them. A playlist without EXT-X-SKIP is returned unchanged.
    /// Date ranges of `previous` are kept unless the delta lists them again or RECENTLY-REMOVED-DATERANGES names
    /// them. A delta segment without EXT-X-MAP inherits the last restored segment's, and without a
    /// PROGRAM-DATE-TIME gets one extrapolated from the restored segments.
    public static func merge(delta: MediaPlaylist, into previous: MediaPlaylist) throws(DeltaUpdateError) -> MediaPlaylist {
        guard let skip = delta.skip else { return delta }
        let first = delta.mediaSequence
        var known: [Int: MediaSegment] = [:]
        for s in previous.segments { known[s.mediaSequence] = s }
        var restored: [MediaSegment] = []
        // A parsed delta keeps these far below Int.max (PlaylistRanges); a hand-built one may not.
        // A parsed delta keeps first + skipped far below Int.max (PlaylistRanges); a hand-built one may
        // not, and then the segments past Int.max cannot be in `previous` either.
        let (end, overflow) = first.addingReportingOverflow(max(0, skip.skippedSegments))
        if overflow {
            var msn = first
            while known[msn] != nil && msn < Int.max { msn += 1 }
            throw .skippedSegmentMissing(msn: msn, skippedFirst: first, skippedCount: skip.skippedSegments)
        }
        // The loop stops at the first segment `previous` lacks: at most previous.segments.count + 1 rounds.
        for msn in first..<end {
            guard let s = known[msn] else {
                throw .skippedSegmentMissing(msn: msn, skippedFirst: first, skippedCount: skip.skippedSegments)
            }
            restored.append(s)
        }
        if let head = restored.first, head.discontinuitySequence != delta.discontinuitySequence {
            throw .discontinuitySequenceMismatch(delta: delta.discontinuitySequence, previous: head.discontinuitySequence)
        }
        var merged = delta
        var segments = restored
        for var s in delta.segments {
            if let last = segments.last {
                s.discontinuitySequence = last.discontinuitySequence + (s.discontinuity ? 1 : 0)
                if s.initializationSection == nil { s.initializationSection = last.initializationSection }
                if s.programDateTime == nil, !s.discontinuity, let date = last.programDateTime {
                    s.programDateTime = date.addingTimeInterval(last.durationSeconds)
                }
            }
            segments.append(s)
        }
        merged.segments = segments
        merged.skip = nil
        let listed = Set(delta.dateRanges.map(\.id))
        let removed = Set(skip.recentlyRemovedDateRanges)
        merged.dateRanges = previous.dateRanges.filter { !listed.contains($0.id) && !removed.contains($0.id) } + delta.dateRanges
        return merged
    }

    // MARK: Start position

    /// One loadable unit of the playlist in order: a listed part, or a whole segment whose parts are not listed.
    struct Unit {
        var position: LowLatencyPosition
        var uri: URL
        var startSeconds: Double
        var durationSeconds: Double
        var independent: Bool
    }

    static func units(of playlist: MediaPlaylist) -> [Unit] {
        var units: [Unit] = []
        var t = 0.0
        func addParts(_ parts: [PartialSegment], msn: Int, segmentStartIsIndependent: Bool) {
            for (j, p) in parts.enumerated() {
                let independent = p.independent || (j == 0 && segmentStartIsIndependent)
                units.append(
                    Unit(
                        position: LowLatencyPosition(msn: msn, part: j), uri: p.uri, startSeconds: t,
                        durationSeconds: p.durationSeconds, independent: independent && !p.gap))
                t += p.durationSeconds
            }
        }
        for s in playlist.segments {
            if s.parts.isEmpty {
                units.append(
                    Unit(
                        position: LowLatencyPosition(msn: s.mediaSequence), uri: s.uri, startSeconds: t,
                        durationSeconds: s.durationSeconds, independent: !s.gap))
                t += s.durationSeconds
            } else {
                addParts(s.parts, msn: s.mediaSequence, segmentStartIsIndependent: playlist.independentSegments)
            }
        }
        addParts(
            playlist.trailingParts, msn: lastCompleteMSN(playlist) + 1,
            segmentStartIsIndependent: playlist.independentSegments)
        return units
    }

    /// Where to start: the latest INDEPENDENT part (or unlisted-parts segment, which starts at a segment
    /// boundary) that starts at least PART-HOLD-BACK (default 3 × PART-TARGET) before the end of the playlist;
    /// the first independent unit when none is that far back. nil for a playlist without PART-INF (use
    /// `LivePlaylistRules.startSegmentIndex`) or with nothing to load.
    public static func startPosition(for playlist: MediaPlaylist) -> LowLatencyStart? {
        guard let partTarget = playlist.partTargetSeconds else { return nil }
        let holdBack = playlist.serverControl?.partHoldBackSeconds ?? defaultPartHoldBackPartTargets * partTarget
        let all = units(of: playlist)
        guard let last = all.last else { return nil }
        let end = last.startSeconds + last.durationSeconds
        let latest = end - holdBack
        let chosen =
            all.last { $0.independent && $0.startSeconds <= latest + toleranceSeconds }
            ?? all.first { $0.independent } ?? all[0]
        return LowLatencyStart(
            position: chosen.position, uri: chosen.uri, distanceFromEndSeconds: end - chosen.startSeconds,
            holdBackSeconds: holdBack)
    }

    // MARK: Next load

    /// What to load after `loaded` (the last part or whole segment fully loaded), given the newest playlist.
    public static func nextLoad(after loaded: LowLatencyPosition, in playlist: MediaPlaylist) -> LowLatencyNextLoad {
        var bySequence: [Int: MediaSegment] = [:]
        for s in playlist.segments { bySequence[s.mediaSequence] = s }
        let lastComplete = lastCompleteMSN(playlist)
        let firstListed = playlist.segments.first?.mediaSequence ?? lastComplete + 1

        // The position after `loaded`.
        var next: LowLatencyPosition
        if let j = loaded.part {
            if let s = bySequence[loaded.msn], !s.parts.isEmpty, j + 1 >= s.parts.count {
                next = LowLatencyPosition(msn: loaded.msn + 1, part: 0)
            } else if let s = bySequence[loaded.msn], s.parts.isEmpty {
                // Segment complete, its parts no longer listed: load the rest as the whole segment.
                return .segment(msn: s.mediaSequence, uri: s.uri)
            } else {
                next = LowLatencyPosition(msn: loaded.msn, part: j + 1)
            }
        } else {
            next = LowLatencyPosition(msn: loaded.msn + 1, part: 0)
        }
        if next.msn < firstListed {
            return .fellBehind(next: next, firstAvailable: firstListed)
        }
        // A whole segment when it is complete and we are at its start.
        if next.part == 0, let s = bySequence[next.msn] {
            return .segment(msn: s.mediaSequence, uri: s.uri)
        }
        let all = units(of: playlist)
        if let unit = all.first(where: { $0.position == next }) {
            return .part(next, uri: unit.uri)
        }
        // The hinted part is the one right after the last listed part.
        let hinted: LowLatencyPosition
        if let last = all.last, let j = last.position.part {
            let count = bySequence[last.position.msn]?.parts.count
            hinted =
                count.map { j + 1 >= $0 } == true
                ? LowLatencyPosition(msn: last.position.msn + 1, part: 0)
                : LowLatencyPosition(msn: last.position.msn, part: j + 1)
        } else {
            hinted = LowLatencyPosition(msn: lastComplete + 1, part: 0)
        }
        if next == hinted, let hint = playlist.preloadHints.first(where: { $0.type == "PART" }) {
            return .preloadHint(next, uri: hint.uri)
        }
        return .waitForReload
    }
}

/// Delta updates (`_HLS_skip`, EXT-X-SKIP) for one LL-HLS stream: whether reloads ask for them, and what an answer
/// gives. A delta that merges into the previous playlist is the full playlist again. One that does not (a skipped
/// segment the previous playlist lacks, a discontinuity sequence that disagrees) turns delta updates off for the
/// stream: the whole playlist is asked for at once, and on every later reload. A server that answers even that with
/// a delta that does not merge (a static file, say) is played from the segments its answer lists, noted once.
public struct DeltaUpdates: Sendable, Equatable {
    /// What a reload's answer leads to.
    public enum Answer: Sendable, Equatable {
        /// The playlist to adopt: the answer, or the delta merged into the previous playlist; `note` (when given) is
        /// what the log says about it.
        case playlist(MediaPlaylist, note: String?)
        /// Ask again, for the whole playlist (the same request without `_HLS_skip`), logging `note`; its answer goes
        /// to `answered` with `askedForDelta` false.
        case askWhole(note: String)
    }

    /// Delta updates were turned off for the stream: every reload asks for the whole playlist.
    public private(set) var isOff = false
    /// The note that a request for the whole playlist was answered with an unmergeable delta has been given.
    private var unmergeableNoted = false

    public init() {}

    /// The answer `media` to a reload of `previous`, asked with `_HLS_skip` (`askedForDelta`) or without.
    public mutating func answered(_ media: MediaPlaylist, previous: MediaPlaylist, askedForDelta: Bool) -> Answer {
        guard media.skip != nil else { return .playlist(media, note: nil) }
        do {
            return .playlist(try LowLatencyRules.merge(delta: media, into: previous), note: nil)
        } catch {
            guard askedForDelta else {
                if unmergeableNoted { return .playlist(media, note: nil) }
                unmergeableNoted = true
                return .playlist(
                    media,
                    note:
                        "LL-HLS: the server answered a request for the whole playlist with a delta update (EXT-X-SKIP) that does not merge into the previous playlist; playing the segments it lists"
                )
            }
            isOff = true
            return .askWhole(
                note:
                    "LL-HLS delta update could not be merged (\(error)); delta updates turned off for this stream: reloading the whole playlist, and every later reload asks for it whole"
            )
        }
    }
}

/// The LL-HLS part loader's next step on the newest playlist: from the last part or segment loaded, or — nothing
/// loaded yet (the start, a resync) — from the start a resync chose when this playlist lists it, else from a fresh
/// start on this playlist (PART-HOLD-BACK from the end, `LowLatencyRules.startPosition`).
public struct PartLoaderStep: Sendable, Equatable {
    public enum Load: Sendable, Equatable {
        /// A listed part, or the part the server hinted (requested now; the server holds it until it exists).
        case part(LowLatencyPosition, uri: URL)
        /// The whole segment at `index` in the playlist, numbered `msn`.
        case segment(index: Int, msn: Int)
        /// Segment `msn`'s parts left the playlist before all were loaded (after part `afterPart`): it is skipped,
        /// and loading goes on with the next segment.
        case skipRest(msn: Int, afterPart: Int)
        /// Nothing to load until the next blocking reload.
        case reload
        /// The next position has left the playlist: resync to the live edge.
        case fellBehind(next: LowLatencyPosition, firstAvailable: Int)
    }

    public var load: Load
    /// A fresh start chosen on this playlist, for the shell to log (`lowlatency.start`).
    public var freshStart: LowLatencyStart?
    /// The start waiting (a resync's) was used or replaced by a fresh one: the shell forgets it.
    public var startTaken: Bool

    public init(load: Load, freshStart: LowLatencyStart? = nil, startTaken: Bool = false) {
        self.load = load
        self.freshStart = freshStart
        self.startTaken = startTaken
    }

    /// The step after `loaded` (nil: nothing loaded since the start or a resync), `pendingStart` waiting, on `playlist`.
    public static func next(loaded: LowLatencyPosition?, pendingStart: LowLatencyStart?, in playlist: MediaPlaylist) -> PartLoaderStep {
        let next: LowLatencyNextLoad
        var step = PartLoaderStep(load: .reload)
        if let loaded {
            next = LowLatencyRules.nextLoad(after: loaded, in: playlist)
        } else {
            // A start chosen on another variant's playlist (a switch right after a resync) is not used on this one.
            let listed = pendingStart.flatMap { lists($0.uri, in: playlist) ? $0 : nil }
            guard let start = listed ?? LowLatencyRules.startPosition(for: playlist) else { return step }
            if listed == nil { step.freshStart = start }
            step.startTaken = true
            next = start.position.part != nil ? .part(start.position, uri: start.uri) : .segment(msn: start.position.msn, uri: start.uri)
        }
        switch next {
        case .part(let position, let uri), .preloadHint(let position, let uri):
            step.load = .part(position, uri: uri)
        case .segment(let msn, _):
            guard let index = playlist.segments.firstIndex(where: { $0.mediaSequence == msn }) else { return step }
            if let loaded, let part = loaded.part, loaded.msn == msn {
                step.load = .skipRest(msn: msn, afterPart: part)
            } else {
                step.load = .segment(index: index, msn: msn)
            }
        case .waitForReload:
            break
        case .fellBehind(let position, let first):
            step.load = .fellBehind(next: position, firstAvailable: first)
        }
        return step
    }

    /// Whether `playlist` lists `uri` as a segment or a part.
    static func lists(_ uri: URL, in playlist: MediaPlaylist) -> Bool {
        playlist.segments.contains { $0.uri == uri || $0.parts.contains { $0.uri == uri } } || playlist.trailingParts.contains { $0.uri == uri }
    }
}
