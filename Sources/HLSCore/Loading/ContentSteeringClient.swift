// Content steering (draft-pantos-hls-rfc8216bis §7): when to load the
// steering manifest, from which URL (with _HLS_pathway and _HLS_throughput),
// and which pathway to play from given the server's priority and the
// FailoverTracker's excluded pathways.
//
// A value type the loader drives: it asks `isReloadDue(at:)`, loads
// `requestURL(throughputBps:)`, and reports the outcome with
// `manifestLoaded` / `manifestFailed` / `manifestRejected`; when the tracker
// excludes or restores a pathway it calls `reevaluate`. Every change comes
// back as a SteeringAction with its reason. Constants:
// docs/renditions-and-failover.md.

import Foundation

public struct ContentSteeringConfiguration: Sendable, Equatable, Codable {
    /// Shortest wait between two manifest loads, seconds, whatever TTL says: a
    /// TTL of 0 would otherwise reload in a loop.
    public static let defaultMinimumReloadSeconds: Double = 1
    /// Wait before retrying a failed or rejected first load, when no manifest
    /// (hence no TTL) has been seen yet, seconds. Later failures retry after the
    /// last TTL. 30: a steering server that is down is not hammered, and a
    /// session still picks steering up within half a minute of it coming back.
    public static let defaultRetryWithoutTTLSeconds: Double = 30

    public var minimumReloadSeconds: Double
    public var retryWithoutTTLSeconds: Double

    public init(
        minimumReloadSeconds: Double = defaultMinimumReloadSeconds,
        retryWithoutTTLSeconds: Double = defaultRetryWithoutTTLSeconds
    ) {
        self.minimumReloadSeconds = minimumReloadSeconds
        self.retryWithoutTTLSeconds = retryWithoutTTLSeconds
    }
}

/// A change, for the log.
public enum SteeringAction: Sendable, Equatable, CustomStringConvertible {
    /// The next manifest load is due at `at`.
    case reloadScheduled(at: MonotonicInstant, reason: String)
    /// No more manifest loads this session (HTTP 410); the last priority stays.
    case reloadingStopped(reason: String)
    /// A manifest was accepted.
    case priorityUpdated([String], ttlSeconds: Double)
    /// Pathways added by PATHWAY-CLONES, or clones not applied.
    case clonesApplied(added: [String], skipped: [String])
    /// A manifest was refused (bad JSON, VERSION ≠ 1 …); the previous priority stays.
    case manifestRejected(reason: String)
    /// The pathway to play from changed.
    case pathwayChanged(from: String, to: String, reason: String)

    public var description: String {
        switch self {
        case .reloadScheduled(let at, let reason): return "steering manifest reload at \(at): \(reason)"
        case .reloadingStopped(let reason): return "steering manifest reloads stopped: \(reason)"
        case .priorityUpdated(let p, let ttl): return "pathway priority \(p.joined(separator: ",")), TTL \(ttl) s"
        case .clonesApplied(let added, let skipped):
            return "pathway clones added [\(added.joined(separator: ","))]" + (skipped.isEmpty ? "" : "; skipped: " + skipped.joined(separator: "; "))
        case .manifestRejected(let reason): return "steering manifest rejected: \(reason)"
        case .pathwayChanged(let from, let to, let reason): return "pathway \(from) → \(to): \(reason)"
        }
    }
}

/// The result of a loaded manifest: the playlist with PATHWAY-CLONES applied, and what changed.
public struct SteeringUpdate: Sendable, Equatable {
    public var playlist: MultivariantPlaylist
    public var actions: [SteeringAction]
}

public struct ContentSteeringClient: Sendable, Equatable {
    /// Query parameter naming the pathway in use (§7.2).
    public static let pathwayQueryName = "_HLS_pathway"
    /// Query parameter carrying the measured throughput, bits per second (§7.2).
    public static let throughputQueryName = "_HLS_throughput"

    public let configuration: ContentSteeringConfiguration
    /// The URL loaded next, without the _HLS_ parameters: SERVER-URI, then the latest RELOAD-URI.
    public private(set) var manifestURL: URL
    /// The pathway played from now.
    public private(set) var currentPathway: String
    /// The playlist's pathways, in playlist order (clones appended).
    public private(set) var pathways: [String]
    /// The latest accepted PATHWAY-PRIORITY; nil before the first manifest.
    public private(set) var priority: [String]?
    /// The latest accepted TTL, seconds.
    public private(set) var ttlSeconds: Double?
    /// When the next load is due; nil after HTTP 410 (no more loads).
    public private(set) var nextReload: MonotonicInstant?
    /// Why the initial pathway was chosen, for the log.
    public let initialPathwayReason: String

    /// Starts steering for `playlist` (which must carry EXT-X-CONTENT-STEERING,
    /// else nil). The first manifest load is due at once (`now`).
    public init?(
        playlist: MultivariantPlaylist, at now: MonotonicInstant,
        configuration: ContentSteeringConfiguration = ContentSteeringConfiguration()
    ) {
        guard let tag = playlist.contentSteering else { return nil }
        self.configuration = configuration
        self.manifestURL = tag.serverURI
        var seen = Set<String>()
        self.pathways = playlist.variants.map(FailoverTracker.pathway(of:)).filter { seen.insert($0).inserted }
        if let wanted = tag.pathwayID, pathways.contains(wanted) {
            currentPathway = wanted
            initialPathwayReason = "EXT-X-CONTENT-STEERING PATHWAY-ID=\"\(wanted)\""
        } else {
            currentPathway = pathways.first ?? FailoverTracker.defaultPathwayID
            initialPathwayReason =
                tag.pathwayID.map { "EXT-X-CONTENT-STEERING PATHWAY-ID=\"\($0)\" names no variant's pathway; the first variant's" }
                ?? "no PATHWAY-ID on EXT-X-CONTENT-STEERING; the first variant's"
        }
        self.nextReload = now
    }

    /// Pathways in preference order, for FailoverTracker.choose(rungOf:pathwayOrder:at:):
    /// before the first manifest, the current pathway then the others in
    /// playlist order; after, PATHWAY-PRIORITY (pathways the playlist has), then
    /// the unlisted ones (used only when every listed one is excluded).
    public var pathwayOrder: [String] {
        if let priority {
            let listed = priority.filter { pathways.contains($0) }
            return listed + pathways.filter { !listed.contains($0) }
        }
        return [currentPathway] + pathways.filter { $0 != currentPathway }
    }

    public func isReloadDue(at now: MonotonicInstant) -> Bool {
        guard let nextReload else { return false }
        return now >= nextReload
    }

    /// The URL to load: `manifestURL` with _HLS_pathway = the current pathway and
    /// _HLS_throughput = `throughputBps` rounded to an integer (omitted when nil,
    /// i.e. nothing measured yet), replacing any values already there. A `data:`
    /// URI is returned unchanged.
    public func requestURL(throughputBps: Double?) -> URL {
        guard manifestURL.scheme?.lowercased() != "data",
            var c = URLComponents(url: manifestURL, resolvingAgainstBaseURL: true)
        else { return manifestURL }
        var items = (c.queryItems ?? []).filter { $0.name != Self.pathwayQueryName && $0.name != Self.throughputQueryName }
        items.append(URLQueryItem(name: Self.pathwayQueryName, value: currentPathway))
        if let t = throughputBps, t.isFinite, t >= 0 {
            items.append(URLQueryItem(name: Self.throughputQueryName, value: String(Int64(saturating: t.rounded()))))
        }
        c.queryItems = items
        return c.url ?? manifestURL
    }

    /// A manifest arrived and parsed. Applies its clones to `playlist`, takes
    /// its priority, TTL and RELOAD-URI, schedules the next load at now + TTL
    /// (at least `minimumReloadSeconds`) and chooses the pathway.
    public mutating func manifestLoaded(
        _ m: SteeringManifest, playlist: MultivariantPlaylist,
        excludedPathways: [String: MonotonicInstant], at now: MonotonicInstant
    ) -> SteeringUpdate {
        var actions: [SteeringAction] = []
        var updated = playlist
        if !m.pathwayClones.isEmpty {
            let r = m.applyingClones(to: playlist)
            updated = r.playlist
            for id in r.added where !pathways.contains(id) { pathways.append(id) }
            actions.append(.clonesApplied(added: r.added, skipped: r.skipped))
        }
        priority = m.pathwayPriority
        ttlSeconds = m.ttlSeconds
        actions.append(.priorityUpdated(m.pathwayPriority, ttlSeconds: m.ttlSeconds))
        if let reload = m.reloadURI { manifestURL = reload }
        if nextReload != nil {
            let wait = max(m.ttlSeconds, configuration.minimumReloadSeconds)
            let at = now.advanced(bySeconds: wait)
            nextReload = at
            actions.append(
                .reloadScheduled(
                    at: at,
                    reason: m.ttlSeconds < configuration.minimumReloadSeconds
                        ? "TTL \(m.ttlSeconds) s raised to the \(configuration.minimumReloadSeconds) s minimum"
                        : "TTL \(m.ttlSeconds) s"))
        }
        actions += reevaluate(excludedPathways: excludedPathways, at: now)
        return SteeringUpdate(playlist: updated, actions: actions)
    }

    /// The manifest request failed. HTTP 410: never load again (§7.2). HTTP 429
    /// with Retry-After: wait that long. Otherwise retry after the last TTL (or
    /// `retryWithoutTTLSeconds`). The current priority stays.
    public mutating func manifestFailed(_ error: LoadError, at now: MonotonicInstant) -> [SteeringAction] {
        guard nextReload != nil else { return [] }
        if error.httpStatus == 410 {
            nextReload = nil
            return [.reloadingStopped(reason: "HTTP 410 Gone from the steering server")]
        }
        let wait: Double
        let why: String
        if error.httpStatus == 429, let after = error.retryAfterSeconds {
            wait = max(after, configuration.minimumReloadSeconds)
            why = "HTTP 429, Retry-After \(after) s"
        } else {
            (wait, why) = retryWait(after: error.httpStatus.map { "HTTP \($0)" } ?? error.kind.rawValue)
        }
        let at = now.advanced(bySeconds: wait)
        nextReload = at
        return [.reloadScheduled(at: at, reason: why)]
    }

    /// The manifest loaded but could not be used (SteeringManifest.parse threw).
    public mutating func manifestRejected(_ error: SteeringManifestError, at now: MonotonicInstant) -> [SteeringAction] {
        var actions: [SteeringAction] = [.manifestRejected(reason: error.description)]
        guard nextReload != nil else { return actions }
        let (wait, why) = retryWait(after: "rejected manifest")
        let at = now.advanced(bySeconds: wait)
        nextReload = at
        actions.append(.reloadScheduled(at: at, reason: why))
        return actions
    }

    func retryWait(after what: String) -> (Double, String) {
        if let ttlSeconds {
            return (max(ttlSeconds, configuration.minimumReloadSeconds), "\(what); retry after the last TTL \(ttlSeconds) s")
        }
        return (configuration.retryWithoutTTLSeconds, "\(what); no TTL yet, retry after \(configuration.retryWithoutTTLSeconds) s")
    }

    /// Chooses the pathway: the first of `pathwayOrder` not excluded; when all
    /// are excluded, the one whose penalty ends first. Call after the tracker
    /// excludes or restores a pathway (and it is called on every manifest).
    public mutating func reevaluate(excludedPathways: [String: MonotonicInstant], at now: MonotonicInstant) -> [SteeringAction] {
        let order = pathwayOrder
        guard !order.isEmpty else { return [] }
        let usable = order.filter { (excludedPathways[$0] ?? now) <= now }
        let choice: String
        let reason: String
        if let first = usable.first {
            choice = first
            let skipped = order.prefix { $0 != first }
            let source = priority == nil ? "initial pathway" : "PATHWAY-PRIORITY"
            reason =
                skipped.isEmpty
                ? "first in \(source) order"
                : "first in \(source) order not excluded (excluded: \(skipped.joined(separator: ", ")))"
        } else {
            choice = order.min { excludedPathways[$0]! < excludedPathways[$1]! }!
            reason = "all pathways excluded; this one's penalty ends first"
        }
        guard choice != currentPathway else { return [] }
        let from = currentPathway
        currentPathway = choice
        return [.pathwayChanged(from: from, to: choice, reason: reason)]
    }
}

extension SteeringAction {
    /// The `steering` log record: a stable kind, the description, and the new pathway on a change.
    public var logNote: LoadingNote {
        switch self {
        case .reloadScheduled: LoadingNote(kind: "reload-scheduled", detail: description, pathway: nil)
        case .reloadingStopped: LoadingNote(kind: "stopped", detail: description, pathway: nil)
        case .priorityUpdated: LoadingNote(kind: "priority", detail: description, pathway: nil)
        case .clonesApplied: LoadingNote(kind: "clones", detail: description, pathway: nil)
        case .manifestRejected: LoadingNote(kind: "rejected", detail: description, pathway: nil)
        case .pathwayChanged(_, let to, _): LoadingNote(kind: "pathway", detail: description, pathway: to)
        }
    }
}
