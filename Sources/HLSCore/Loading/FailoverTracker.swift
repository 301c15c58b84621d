// Redundant variants and failover: a penalty box over variant URIs and
// pathways (RFC 8216 §6.2.4 redundant streams; draft-pantos-hls-rfc8216bis
// §7 content steering pathways).
//
// Variants with the same BANDWIDTH, RESOLUTION and CODECS are one rung served
// from several places (URIs, and with content steering, pathways). The
// tracker counts consecutive load errors per variant URI; after
// `errorsBeforeFailover` of them the URI — and, when the variant has a
// PATHWAY-ID, its whole pathway — is excluded for `penaltySeconds`. Asked
// which URI to use for a rung, it answers the first member not excluded, in
// pathway order (the steering priority) then playlist order; when every
// member is excluded, the one whose penalty ends first. Penalties expire on
// their own and the URI comes back (the primary is preferred again).
// Value type, time passed in, every change returned as an action with its
// reason for the log. Constants: docs/renditions-and-failover.md.

import Foundation

public struct FailoverConfiguration: Sendable, Equatable, Codable {
    /// Consecutive failed requests (playlist or segment) to one variant URI
    /// before it is excluded. 2: one error is often a blip the retry policy
    /// absorbs on the same URI; a second in a row means that path is unhealthy,
    /// and a redundant variant carries the same media, so moving costs nothing. Count.
    public static let defaultErrorsBeforeFailover = 2
    /// How long an excluded URI or pathway stays out, seconds. 60: an origin or
    /// CDN fault usually outlasts a few segments, and trying it again costs up to
    /// `errorsBeforeFailover` failed requests (each maybe a timeout) — at most two
    /// per minute, under 4% of the requests of a 2 s-segment stream; short enough
    /// that a healed primary is back within a minute. (hls.js keeps a failed
    /// pathway out for 300 s.)
    public static let defaultPenaltySeconds: Double = 60

    public var errorsBeforeFailover: Int
    public var penaltySeconds: Double
    /// Exclude the failing variant's whole pathway too (when it has a PATHWAY-ID):
    /// the variants of one pathway share a CDN, so when one fails the others
    /// usually do. Ignored for variants without PATHWAY-ID.
    public var excludeWholePathway: Bool

    public init(
        errorsBeforeFailover: Int = defaultErrorsBeforeFailover, penaltySeconds: Double = defaultPenaltySeconds,
        excludeWholePathway: Bool = true
    ) {
        precondition(errorsBeforeFailover >= 1, "errorsBeforeFailover must be at least 1")
        precondition(penaltySeconds >= 0, "penaltySeconds must not be negative")
        self.errorsBeforeFailover = errorsBeforeFailover
        self.penaltySeconds = penaltySeconds
        self.excludeWholePathway = excludeWholePathway
    }
}

/// What can be excluded.
public enum FailoverTarget: Sendable, Hashable, CustomStringConvertible {
    case uri(URL)
    case pathway(String)
    public var description: String {
        switch self {
        case .uri(let u): return "URI \(URLRedaction.redacted(u))"
        case .pathway(let p): return "pathway \"\(p)\""
        }
    }
}

/// A change of the penalty box, for the log.
public enum FailoverAction: Sendable, Equatable, CustomStringConvertible {
    /// An error was counted; not yet enough to exclude.
    case errorCounted(uri: URL, consecutiveErrors: Int, threshold: Int)
    /// `target` is out until `until`.
    case excluded(FailoverTarget, until: MonotonicInstant, reason: String)
    /// `target`'s penalty ended at `at`.
    case restored(FailoverTarget, at: MonotonicInstant)

    public var description: String {
        switch self {
        case .errorCounted(let u, let n, let t):
            return "error \(n) of \(t) on \(URLRedaction.redacted(u)) counted toward failover"
        case .excluded(let target, let until, let reason):
            return "\(target) excluded until \(until): \(reason)"
        case .restored(let target, let at):
            return "\(target) restored at \(at): penalty over"
        }
    }
}

/// The answer to "which URI for this rung now".
public struct FailoverChoice: Sendable, Equatable {
    public enum Kind: String, Sendable, Equatable, Codable {
        /// The first member in preference order; nothing excluded in the way.
        case preferred
        /// A preferred member is excluded; the next one that is not.
        case failover
        /// Every member is excluded: the one whose penalty ends first.
        case allExcluded = "all-excluded"
    }
    /// Index into the multivariant playlist's variants.
    public var variantIndex: Int
    public var uri: URL
    /// PATHWAY-ID, "." when absent.
    public var pathwayID: String
    public var kind: Kind
    /// True when this differs from the previous answer for the same rung.
    public var changed: Bool
    /// The previous answer for the rung, when `changed`.
    public var previousVariantIndex: Int?
    /// Why, for the log.
    public var reason: String
    /// Penalties that ended before this answer.
    public var actions: [FailoverAction]
}

public struct FailoverTracker: Sendable, Equatable {
    /// PATHWAY-ID of a variant without one (draft-pantos-hls-rfc8216bis §4.4.6.2).
    public static let defaultPathwayID = "."

    public let configuration: FailoverConfiguration
    public private(set) var variants: [VariantStream]
    /// Rungs: indices into `variants`, each group in playlist order; groups in
    /// the order of their first member.
    public private(set) var rungs: [[Int]]
    private var rungOfVariant: [Int]
    private var consecutiveErrors: [URL: Int] = [:]
    private var penaltyEnds: [FailoverTarget: MonotonicInstant] = [:]
    private var lastChoice: [Int: Int] = [:]

    public init(variants: [VariantStream], configuration: FailoverConfiguration = FailoverConfiguration()) {
        self.configuration = configuration
        self.variants = variants
        self.rungs = Self.redundantGroups(variants)
        var map = Array(repeating: 0, count: variants.count)
        for (r, members) in rungs.enumerated() { for i in members { map[i] = r } }
        self.rungOfVariant = map
    }

    /// Takes a new variant list that keeps the old one as its prefix (content
    /// steering's PATHWAY-CLONES append variants). Penalties and error counts
    /// are kept (they are keyed by URI and pathway); appended variants join the
    /// rungs they match, so rung numbers stay.
    public mutating func appendVariants(_ added: [VariantStream]) {
        variants += added
        rungs = Self.redundantGroups(variants)
        var map = Array(repeating: 0, count: variants.count)
        for (r, members) in rungs.enumerated() { for i in members { map[i] = r } }
        rungOfVariant = map
    }

    /// Groups variants that are the same rung: equal BANDWIDTH, RESOLUTION and
    /// CODECS (as a set). Each group in playlist order.
    public static func redundantGroups(_ variants: [VariantStream]) -> [[Int]] {
        struct Key: Hashable { var bandwidth: Int; var resolution: Resolution?; var codecs: Set<String> }
        var order: [Key] = []
        var groups: [Key: [Int]] = [:]
        for (i, v) in variants.enumerated() {
            let k = Key(bandwidth: v.bandwidthBps, resolution: v.resolution, codecs: Set(v.codecs))
            if groups[k] == nil { order.append(k) }
            groups[k, default: []].append(i)
        }
        return order.map { groups[$0]! }
    }

    /// One variant per rung (the first in playlist order): the ladder to give
    /// the variant selector, so redundant copies do not look like extra rungs.
    public var ladderVariantIndices: [Int] { rungs.map { $0[0] } }

    /// The other members of `variantIndex`'s rung, in playlist order.
    public func redundantAlternatives(of variantIndex: Int) -> [Int] {
        rungs[rungOfVariant[variantIndex]].filter { $0 != variantIndex }
    }

    public static func pathway(of v: VariantStream) -> String { v.pathwayID ?? defaultPathwayID }

    /// Counts a failed request to `variants[variantIndex]` (its playlist or one of
    /// its segments). `.cancelled` (the player's own abandon) does not count.
    /// Errors on a URI already excluded change nothing (requests in flight when
    /// it was excluded).
    public mutating func recordFailure(variantIndex: Int, error: LoadError, at now: MonotonicInstant) -> [FailoverAction] {
        var actions = expire(at: now)
        guard error.kind != .cancelled else { return actions }
        let v = variants[variantIndex]
        let uriTarget = FailoverTarget.uri(v.uri)
        if let end = penaltyEnds[uriTarget], end > now { return actions }
        let n = (consecutiveErrors[v.uri] ?? 0) + 1
        consecutiveErrors[v.uri] = n
        let threshold = configuration.errorsBeforeFailover
        guard n >= threshold else {
            actions.append(.errorCounted(uri: v.uri, consecutiveErrors: n, threshold: threshold))
            return actions
        }
        consecutiveErrors[v.uri] = 0
        let until = now.advanced(bySeconds: configuration.penaltySeconds)
        let last = error.httpStatus.map { "HTTP \($0)" } ?? error.kind.rawValue
        penaltyEnds[uriTarget] = until
        actions.append(
            .excluded(
                uriTarget, until: until,
                reason: "\(n) consecutive errors (threshold \(threshold)), last \(last)"))
        if configuration.excludeWholePathway, let p = v.pathwayID {
            let target = FailoverTarget.pathway(p)
            if (penaltyEnds[target] ?? now) <= now {
                penaltyEnds[target] = until
                actions.append(
                    .excluded(
                        target, until: until,
                        reason: "variant \(v.uri.path) on it excluded after \(n) consecutive errors"))
            }
        }
        return actions
    }

    /// A request to `variants[variantIndex]` succeeded: its consecutive count restarts.
    public mutating func recordSuccess(variantIndex: Int) {
        consecutiveErrors[variants[variantIndex].uri] = 0
    }

    /// Ends penalties whose time has come (also done by every other call).
    public mutating func expire(at now: MonotonicInstant) -> [FailoverAction] {
        let over = penaltyEnds.filter { $0.value <= now }.sorted { ($0.value, $0.key.description) < ($1.value, $1.key.description) }
        var actions: [FailoverAction] = []
        for (target, end) in over {
            penaltyEnds[target] = nil
            if case .uri(let u) = target { consecutiveErrors[u] = 0 }
            actions.append(.restored(target, at: end))
        }
        return actions
    }

    /// When `target`'s penalty ends; nil when it is not excluded at `now`.
    public func penaltyEnd(of target: FailoverTarget, at now: MonotonicInstant) -> MonotonicInstant? {
        guard let end = penaltyEnds[target], end > now else { return nil }
        return end
    }

    /// Excluded pathways and when each penalty ends (for ContentSteeringClient).
    public func excludedPathways(at now: MonotonicInstant) -> [String: MonotonicInstant] {
        var out: [String: MonotonicInstant] = [:]
        for (target, end) in penaltyEnds where end > now {
            if case .pathway(let p) = target { out[p] = end }
        }
        return out
    }

    /// When `variants[i]` can be used again: the later of its URI's and its
    /// pathway's penalty ends; nil when usable now.
    public func exclusionEnd(ofVariant i: Int, at now: MonotonicInstant) -> MonotonicInstant? {
        let v = variants[i]
        let ends = [penaltyEnd(of: .uri(v.uri), at: now), v.pathwayID.flatMap { penaltyEnd(of: .pathway($0), at: now) }].compactMap { $0 }
        return ends.max()
    }

    /// Which member of `variantIndex`'s rung to load now. `pathwayOrder` is the
    /// pathway preference (ContentSteeringClient.pathwayOrder); members on
    /// pathways it lists come first in its order, then the rest (used only
    /// when every listed one is excluded); nil = playlist order.
    public mutating func choose(
        rungOf variantIndex: Int, pathwayOrder: [String]? = nil,
        at now: MonotonicInstant
    ) -> FailoverChoice {
        let actions = expire(at: now)
        let rung = rungOfVariant[variantIndex]
        let members = rungs[rung]
        let ordered: [Int]
        if let order = pathwayOrder {
            let rank = Dictionary(order.enumerated().map { ($1, $0) }, uniquingKeysWith: { a, _ in a })
            ordered = members.enumerated().sorted {
                (rank[Self.pathway(of: variants[$0.element])] ?? Int.max, $0.offset)
                    < (rank[Self.pathway(of: variants[$1.element])] ?? Int.max, $1.offset)
            }.map(\.element)
        } else {
            ordered = members
        }
        let chosen: Int
        let kind: FailoverChoice.Kind
        var reason: String
        if let first = ordered.first(where: { exclusionEnd(ofVariant: $0, at: now) == nil }) {
            chosen = first
            if first == ordered[0] {
                kind = .preferred
                reason =
                    ordered.count == 1
                    ? "only variant of its rung"
                    : "first of \(ordered.count) redundant variants\(pathwayOrder == nil ? " in playlist order" : " in pathway order")"
            } else {
                kind = .failover
                let skipped = ordered.prefix { $0 != first }.map { i -> String in
                    let end = exclusionEnd(ofVariant: i, at: now)!
                    return
                        "\(variants[i].uri.path) [\(Self.pathway(of: variants[i]))] excluded for \(String(format: "%.1f", end.seconds(since: now))) s more"
                }
                reason = "failover: " + skipped.joined(separator: "; ")
            }
        } else {
            chosen = ordered.min { exclusionEnd(ofVariant: $0, at: now)! < exclusionEnd(ofVariant: $1, at: now)! }!
            kind = .allExcluded
            reason =
                "all \(ordered.count) variants of the rung excluded; this one's penalty ends first (in \(String(format: "%.1f", exclusionEnd(ofVariant: chosen, at: now)!.seconds(since: now))) s)"
        }
        let previous = lastChoice[rung]
        let changed = previous != nil && previous != chosen
        lastChoice[rung] = chosen
        if changed, let previous {
            reason += " (was \(variants[previous].uri.path) [\(Self.pathway(of: variants[previous]))])"
        }
        let v = variants[chosen]
        return FailoverChoice(
            variantIndex: chosen, uri: v.uri, pathwayID: Self.pathway(of: v), kind: kind, changed: changed,
            previousVariantIndex: changed ? previous : nil, reason: reason, actions: actions)
    }
}

extension FailoverAction {
    /// The `failover` log record: a stable kind, the description, and the pathway when one is excluded or restored.
    public var logNote: LoadingNote {
        switch self {
        case .errorCounted:
            return LoadingNote(kind: "error-counted", detail: description, pathway: nil)
        case .excluded(let target, _, _):
            if case .pathway(let p) = target { return LoadingNote(kind: "excluded", detail: description, pathway: p) }
            return LoadingNote(kind: "excluded", detail: description, pathway: nil)
        case .restored(let target, _):
            if case .pathway(let p) = target { return LoadingNote(kind: "restored", detail: description, pathway: p) }
            return LoadingNote(kind: "restored", detail: description, pathway: nil)
        }
    }
}
