import Foundation

/// What the fault decision point sees about a request.
public struct RequestContext: Sendable {
    public var method: String
    public var path: String
    public var connectionID: Int
    /// 0-based index of this request on its connection.
    public var requestIndexOnConnection: Int
    /// Seconds since server start (monotonic) when the request line was read.
    public var secondsSinceStart: Double
}

/// The per-request fault decision point. The server asks it once per parsed request.
/// Later scenario engines (time-scripted faults, live simulation) plug in here.
public protocol FaultPolicy: AnyObject, Sendable {
    func fault(for request: RequestContext) -> FaultAction?
}

/// A `FaultPolicy` evaluating `FaultRule`s in order. Each rule keeps its own count of matching requests
/// (path and `afterSeconds` both satisfied), across all connections; the first rule that fires wins,
/// but every matching rule's counter still advances.
public final class RuleFaultPolicy: FaultPolicy, @unchecked Sendable {
    public let rules: [FaultRule]
    private var counters: [Int]
    private let lock = NSLock()

    public init(rules: [FaultRule]) {
        self.rules = rules
        self.counters = Array(repeating: 0, count: rules.count)
    }

    public func fault(for request: RequestContext) -> FaultAction? {
        lock.lock()
        defer { lock.unlock() }
        var chosen: FaultAction?
        for (i, rule) in rules.enumerated() {
            if let after = rule.afterSeconds, request.secondsSinceStart < after { continue }
            guard rule.matches(path: request.path) else { continue }
            let n = counters[i]
            counters[i] += 1
            if chosen == nil, rule.requestIndex == nil || rule.requestIndex == n {
                chosen = rule.action
            }
        }
        return chosen
    }
}

extension OriginServer {
    /// Loads fault rules from a JSON file.
    ///
    /// The file holds either an array of rules or an object `{"faults": [ ... ]}`. Each rule:
    /// - `pathPattern` (string, required): glob if it contains `*`, `?` or `[` (matched against the whole
    ///   decoded path, `*` also crosses `/`), else a substring of the path.
    /// - `requestIndex` (int, optional): fire only on the nth (0-based) matching request; absent = every one.
    /// - `afterSeconds` (number, optional): only for requests arriving this long after server start.
    /// - `action` (object, required) with a `type` and its parameters:
    ///   - `{"type": "status", "code": 503, "retryAfterSeconds": 2}` (`retryAfterSeconds` optional)
    ///   - `{"type": "blackHole"}`
    ///   - `{"type": "stallAfterBytes", "bytes": 1000, "seconds": 3}` (`seconds` absent = stall forever)
    ///   - `{"type": "resetConnection"}`
    ///   - `{"type": "truncateAfterBytes", "bytes": 500}`
    ///   - `{"type": "slowFirstByte", "seconds": 1.5}`
    ///   - `{"type": "trickle", "bytes": 188, "everySeconds": 0.5}` (the body `bytes` at a time, one piece per period)
    ///
    /// Example:
    /// ```json
    /// [
    ///   {"pathPattern": "*.m3u8", "requestIndex": 1, "action": {"type": "status", "code": 503, "retryAfterSeconds": 2}},
    ///   {"pathPattern": "/v1/seg3.ts", "action": {"type": "truncateAfterBytes", "bytes": 1000}},
    ///   {"pathPattern": "seg", "afterSeconds": 10, "action": {"type": "stallAfterBytes", "bytes": 0, "seconds": 5}}
    /// ]
    /// ```
    public static func loadFaults(from url: URL) throws -> [FaultRule] {
        let data = try Data(contentsOf: url)
        struct Wrapped: Decodable { var faults: [FaultRule] }
        let decoder = JSONDecoder()
        if let rules = try? decoder.decode([FaultRule].self, from: data) { return rules }
        if let wrapped = try? decoder.decode(Wrapped.self, from: data) { return wrapped.faults }
        // Re-run the array decode to surface a useful error.
        return try decoder.decode([FaultRule].self, from: data)
    }
}

/// A fault scenario file: per-request fault rules plus the time-scripted faults that act on the link and the
/// live clock. See `OriginServer.loadScenario(from:)`.
public struct FaultScenario: Sendable, Equatable, Decodable {
    public var faults: [FaultRule]
    /// Link collapses: the shared link delivers nothing from `atSeconds` for `durationSeconds`.
    public var linkCollapses: [LinkCollapse]
    /// Stale live playlists: the live window stops advancing from `atSeconds` for `durationSeconds`.
    public var stalePlaylists: [StalePlaylist]

    public init(faults: [FaultRule] = [], linkCollapses: [LinkCollapse] = [], stalePlaylists: [StalePlaylist] = []) {
        self.faults = faults
        self.linkCollapses = linkCollapses
        self.stalePlaylists = stalePlaylists
    }

    private enum CodingKeys: String, CodingKey { case faults, linkCollapses, stalePlaylists }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        faults = try c.decodeIfPresent([FaultRule].self, forKey: .faults) ?? []
        linkCollapses = try c.decodeIfPresent([LinkCollapse].self, forKey: .linkCollapses) ?? []
        stalePlaylists = try c.decodeIfPresent([StalePlaylist].self, forKey: .stalePlaylists) ?? []
    }

    /// Adds the scenario to a configuration: rules, collapses, and stale windows (these only if live mode is on,
    /// so apply the scenario after setting `configuration.live`).
    public func apply(to configuration: inout OriginConfiguration) {
        configuration.faults += faults
        configuration.linkCollapses += linkCollapses
        configuration.live?.stalePlaylists += stalePlaylists
    }
}

extension OriginServer {
    /// Loads a scenario file: either an array of fault rules (the `loadFaults` format) or an object
    /// `{"faults": [...], "linkCollapses": [{"atSeconds": 20, "durationSeconds": 5}],
    ///   "stalePlaylists": [{"atSeconds": 30, "durationSeconds": 10}]}` (every key optional).
    public static func loadScenario(from url: URL) throws -> FaultScenario {
        let data = try Data(contentsOf: url)
        let decoder = JSONDecoder()
        if let rules = try? decoder.decode([FaultRule].self, from: data) { return FaultScenario(faults: rules) }
        return try decoder.decode(FaultScenario.self, from: data)
    }
}
