/// Who may hold one of the origin's connections, and which connection gives its place up when a limit is reached.
///
/// A connection is **waiting** while the origin waits for a request head on it: a new connection that has not sent
/// one yet, a kept-alive one between requests, one dripping its head a byte at a time. It is **busy** from the moment
/// a whole head has arrived until its response has been sent, including responses held on purpose (black holes,
/// blocking playlist reloads, stalls). A client that never finishes a request only ever holds waiting connections,
/// so when a new connection would go over a limit, a waiting connection is closed to make room — a connection that
/// has not delivered a single request before a kept-alive one, and among those the one waiting longest. Busy
/// connections are never closed for room: when every connection counting against the limit is busy, the new
/// connection is refused (closed at once), as it always was.
///
/// Pure: the caller passes the connections and their times (server seconds); nothing here reads a clock.
public struct ConnectionAdmission: Sendable, Equatable {
    /// Open connections at most.
    public var maxConnections: Int
    /// Open connections from one client IP address at most; nil = no limit but `maxConnections`.
    public var maxConnectionsPerAddress: Int?

    public init(maxConnections: Int, maxConnectionsPerAddress: Int?) {
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
    }

    /// An open connection, as the decision sees it.
    public struct Occupant: Sendable, Equatable {
        public var id: Int
        public var address: String
        /// When the origin began waiting for a request head on it (server seconds); nil while it is busy.
        public var waitingSince: Double?
        /// Request heads received on it so far.
        public var requestsReceived: Int

        public init(id: Int, address: String, waitingSince: Double?, requestsReceived: Int) {
            self.id = id
            self.address = address
            self.waitingSince = waitingSince
            self.requestsReceived = requestsReceived
        }
    }

    /// The limit a new connection ran into (the names are the configuration's).
    public enum Limit: String, Sendable, Codable {
        case maxConnections, maxConnectionsPerAddress
    }

    /// A waiting connection closed to make room, and under which limit.
    public struct Eviction: Sendable, Equatable {
        public var id: Int
        public var limit: Limit
    }

    public enum Decision: Sendable, Equatable {
        /// Take the new connection, after closing these waiting ones (empty when it fits).
        case admit(evicting: [Eviction])
        /// Close the new connection at once: every connection counting against `limit` is busy.
        case refuse(limit: Limit)
    }

    /// Whether a new connection fits without closing anything: `open` connections are open in all, `openFromAddress`
    /// of them from the new connection's address. (The server asks this first, and builds the occupant list for
    /// `decide` only when it does not.)
    public func fits(open: Int, openFromAddress: Int) -> Bool {
        open < maxConnections && openFromAddress < maxConnectionsPerAddress ?? Int.max
    }

    /// What to do with a new connection from `address` while `occupants` are open.
    public func decide(address: String, occupants: [Occupant]) -> Decision {
        var open = occupants
        var evictions: [Eviction] = []
        while open.count(where: { $0.address == address }) >= maxConnectionsPerAddress ?? Int.max {
            guard let victim = Self.firstToGiveUp(open.filter { $0.address == address }) else {
                return .refuse(limit: .maxConnectionsPerAddress)
            }
            evictions.append(Eviction(id: victim.id, limit: .maxConnectionsPerAddress))
            open.removeAll { $0.id == victim.id }
        }
        while open.count >= maxConnections {
            guard let victim = Self.firstToGiveUp(open) else { return .refuse(limit: .maxConnections) }
            evictions.append(Eviction(id: victim.id, limit: .maxConnections))
            open.removeAll { $0.id == victim.id }
        }
        return .admit(evicting: evictions)
    }

    /// The waiting connection to close first: one that has received no request before a kept-alive one, then the
    /// one waiting longest, then the oldest (lowest id). nil if all are busy.
    public static func firstToGiveUp(_ occupants: [Occupant]) -> Occupant? {
        occupants.compactMap { o in o.waitingSince.map { (o, $0) } }
            .min { a, b in
                (a.0.requestsReceived > 0 ? 1 : 0, a.1, a.0.id) < (b.0.requestsReceived > 0 ? 1 : 0, b.1, b.0.id)
            }?.0
    }
}
