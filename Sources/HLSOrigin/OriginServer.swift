import Foundation
import Glibc

public enum OriginError: Error, CustomStringConvertible {
    case socket(String, Int32)
    case badBindAddress(String)
    case alreadyStarted

    public var description: String {
        switch self {
        case let .socket(what, err): return "\(what): \(String(cString: strerror(err)))"
        case let .badBindAddress(a): return "bind address '\(a)' is not an IPv4 or IPv6 address literal (e.g. 127.0.0.1, ::1)"
        case .alreadyStarted: return "server already started"
        }
    }
}

/// A loopback HTTP/1.1 origin serving a folder (GET/HEAD, keep-alive, byte ranges) with fault injection,
/// optional link-rate pacing, RTT delay and a JSON Lines request log.
///
/// Structure, for growth: each request passes one fault decision point (`FaultPolicy`), and every byte a
/// connection writes goes through its `ResponseSender`, which consults the `LinkShaper` (if any).
public final class OriginServer: @unchecked Sendable {
    public let root: URL
    /// `root` with every symbolic link resolved, once: a served file's real path must lie under it (unless
    /// `configuration.followSymlinks`), so a ROOT given through a link serves as before.
    public let rootRealPath: String
    public let configuration: OriginConfiguration
    let faultPolicy: any FaultPolicy
    let shaper: (any LinkShaper)?
    let live: LiveServer?
    private var log: RequestLogWriter?

    // All mutable state below is guarded by `state`.
    private let state = NSCondition()
    private var stopping = false
    private var started = false
    private var listenFD: Int32 = -1
    private var acceptRunning = false
    private var connections: [Int: ConnectionSlot] = [:]
    /// Open connections per client address, those already evicted not counted.
    private var openByAddress: [String: Int] = [:]
    private var openCount = 0
    private var activeThreads = 0
    private var nextConnectionID = 0
    private var _requestCount = 0
    private var _port: UInt16 = 0
    private(set) var startTime: Double = monotonicNow()

    public convenience init(root: URL, configuration: OriginConfiguration = .init()) {
        self.init(
            root: root, configuration: configuration,
            faultPolicy: RuleFaultPolicy(rules: configuration.faults),
            shaper: configuration.makeShaper())
    }

    /// Plug-in form: a custom per-request fault decision point and a custom link shaper
    /// (`configuration.faults` and `configuration.rateBitsPerSecond` are then ignored).
    public init(root: URL, configuration: OriginConfiguration, faultPolicy: any FaultPolicy, shaper: (any LinkShaper)?) {
        self.root = root
        self.rootRealPath = OriginHTTP.realPath(root.path) ?? root.standardizedFileURL.path
        self.configuration = configuration
        self.faultPolicy = faultPolicy
        self.shaper = shaper
        self.live = configuration.live.map { LiveServer(root: root, configuration: $0) }
    }

    /// The link at `secondsSinceStart`: its state (nil = unshaped) and the first-byte delay it imposes.
    func link(atSeconds t: Double) -> (state: LinkState?, rttSeconds: Double) {
        let state = shaper?.linkState(atSeconds: t)
        var rtt = configuration.rttSeconds
        if rtt <= 0, configuration.useTraceLatency, let latency = state?.latencySeconds { rtt = latency }
        return (state, rtt)
    }

    /// Shaping in force at `secondsSinceStart`, as logged: e.g. `trace=x pos=1.200s rate=2000000bps rtt=0.02s`.
    func shapingDescription(atSeconds t: Double) -> String {
        let (state, rtt) = link(atSeconds: t)
        var parts: [String] = []
        if let state { parts.append(state.description) }
        if rtt > 0 { parts.append("rtt=\(rtt)s") }
        return parts.isEmpty ? "none" : parts.joined(separator: " ")
    }

    deinit { stop() }

    public var port: UInt16 { state.lock(); defer { state.unlock() }; return _port }

    /// `http://ADDRESS:PORT/`, an IPv6 address in brackets (`http://[::1]:PORT/`).
    public var baseURL: URL {
        let host = BindAddress(configuration.bindAddress)?.urlHost ?? configuration.bindAddress
        return URL(string: "http://\(host):\(port)/")!
    }

    /// Number of request heads read so far (including faulted and malformed ones).
    public var requestCount: Int { state.lock(); defer { state.unlock() }; return _requestCount }

    /// Seconds since `start` (monotonic).
    public func now() -> Double { monotonicNow() - startTime }

    /// Binds `configuration.bindAddress:port` (0 = ephemeral), starts the accept thread, returns the bound port.
    @discardableResult
    public func start(port: UInt16 = 0) throws -> UInt16 {
        state.lock()
        defer { state.unlock() }
        guard !started else { throw OriginError.alreadyStarted }
        guard let address = BindAddress(configuration.bindAddress) else {
            throw OriginError.badBindAddress(configuration.bindAddress)
        }
        var storage = address.socketAddress(port: port)
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw OriginError.socket("socket", errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        // `::` means IPv6 only, whatever the system's net.ipv6.bindv6only default: `0.0.0.0` is the IPv4 wildcard.
        if address.family == AF_INET6 {
            setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, address.socketAddressLength) }
        }
        guard bound == 0 else { let e = errno; close(fd); throw OriginError.socket("bind \(address.urlHost)", e) }
        guard listen(fd, 512) == 0 else { let e = errno; close(fd); throw OriginError.socket("listen", e) }
        var len = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        if let url = configuration.requestLogURL {
            do { log = try RequestLogWriter(url: url) } catch { close(fd); throw error }
        }
        _port = BindAddress.port(of: storage)
        listenFD = fd
        started = true
        startTime = monotonicNow()
        shaper?.serverStarted(monotonicOrigin: startTime)
        live?.serverStarted(wallClock: Date())
        acceptRunning = true
        let thread = Thread { [self] in acceptLoop(fd) }
        thread.name = "hls-origin accept"
        thread.start()
        return _port
    }

    /// Closes the listener and every connection, and waits for all server threads to finish. Idempotent.
    public func stop() {
        state.lock()
        guard started, !stopping else { state.unlock(); return }
        stopping = true
        state.broadcast()
        while acceptRunning { state.wait() }
        if listenFD >= 0 { close(listenFD); listenFD = -1 }
        for slot in connections.values { shutdown(slot.fd, Int32(SHUT_RDWR)) }
        while activeThreads > 0 { state.wait() }
        let log = self.log
        self.log = nil
        state.unlock()
        log?.close()
    }

    var isStopping: Bool { state.lock(); defer { state.unlock() }; return stopping }

    /// Sleeps up to `seconds`, waking early when the server stops. Returns false if stopping.
    func interruptibleSleep(_ seconds: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: max(0, seconds))
        state.lock()
        defer { state.unlock() }
        while !stopping {
            if !state.wait(until: deadline) { return !stopping }
        }
        return false
    }

    func connectionClosing(_ id: Int) {
        state.lock(); removeSlot(id); state.unlock()
    }

    /// Forgets a connection (state locked).
    private func removeSlot(_ id: Int) {
        guard let slot = connections.removeValue(forKey: id), slot.eviction == nil else { return }
        uncount(slot.address)
    }

    /// Takes a connection out of the counts the admission rule sees (state locked).
    private func uncount(_ address: String) {
        openCount -= 1
        let n = (openByAddress[address] ?? 1) - 1
        openByAddress[address] = n > 0 ? n : nil
    }

    /// The connection waits for its next request head from now on (its first one: from its acceptance).
    func connectionAwaitsRequest(_ id: Int) {
        let t = now()
        state.lock(); connections[id]?.waitingSince = t; state.unlock()
    }

    /// A whole request head arrived: the connection is busy until it waits again. False if it was evicted
    /// meanwhile (the request is then dropped).
    func connectionBeginsRequest(_ id: Int) -> Bool {
        state.lock()
        defer { state.unlock() }
        guard var slot = connections[id], slot.eviction == nil else { return false }
        slot.waitingSince = nil
        slot.requestsReceived += 1
        connections[id] = slot
        return true
    }

    /// Why the connection was closed to make room, if it was.
    func eviction(of id: Int) -> ConnectionSlot.Eviction? {
        state.lock(); defer { state.unlock() }; return connections[id]?.eviction
    }

    func countRequest() {
        state.lock(); _requestCount += 1; state.unlock()
    }

    func writeLog(_ entry: some Encodable) {
        state.lock()
        let log = self.log
        state.unlock()
        log?.write(entry)
    }

    private func acceptLoop(_ lfd: Int32) {
        defer {
            state.lock(); acceptRunning = false; state.broadcast(); state.unlock()
        }
        while !isStopping {
            var pfd = pollfd(fd: lfd, events: Int16(POLLIN), revents: 0)
            let r = poll(&pfd, 1, 100)
            if r <= 0 { continue }
            var peer = sockaddr_storage()
            var peerLength = socklen_t(MemoryLayout<sockaddr_storage>.size)
            let cfd = withUnsafeMutablePointer(to: &peer) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { accept(lfd, $0, &peerLength) }
            }
            if cfd < 0 { continue }
            _ = fcntl(cfd, F_SETFD, FD_CLOEXEC)
            let address = Self.addressString(peer)
            let acceptedAt = now()
            state.lock()
            if stopping {
                state.unlock()
                close(cfd)
                continue
            }
            let id = nextConnectionID
            nextConnectionID += 1
            if case let .refuse(limit) = admit(id: id, address: address) {
                state.unlock()
                close(cfd)
                var record = ConnectionLogEntry(
                    event: .refused, at: now(), connectionID: id, clientAddress: address,
                    accepted: acceptedAt)
                record.limit = limit
                record.limitValue = limitValue(limit)
                writeLog(record)
                continue
            }
            connections[id] = ConnectionSlot(fd: cfd, address: address, accepted: acceptedAt, waitingSince: acceptedAt)
            openCount += 1
            openByAddress[address, default: 0] += 1
            activeThreads += 1
            state.unlock()
            configureConnectionSocket(cfd)
            let connection = Connection(server: self, fd: cfd, id: id, clientAddress: address, accepted: acceptedAt)
            let thread = Thread { [self] in
                connection.run()
                state.lock()
                removeSlot(id)
                activeThreads -= 1
                state.broadcast()
                state.unlock()
                connection.closeSocket()
            }
            thread.name = "hls-origin conn \(id)"
            thread.stackSize = 256 * 1024
            thread.start()
        }
    }

    /// Applies the admission rule to a new connection (state locked): closes the waiting connections it names
    /// (their threads log the eviction when they notice), or says the new one is refused.
    private func admit(id: Int, address: String) -> ConnectionAdmission.Decision {
        let admission = configuration.admission
        guard !admission.fits(open: openCount, openFromAddress: openByAddress[address] ?? 0) else { return .admit(evicting: []) }
        let occupants = connections.compactMap { id, slot in
            slot.eviction == nil
                ? ConnectionAdmission.Occupant(
                    id: id, address: slot.address, waitingSince: slot.waitingSince,
                    requestsReceived: slot.requestsReceived) : nil
        }
        let decision = admission.decide(address: address, occupants: occupants)
        if case let .admit(evictions) = decision {
            for e in evictions {
                guard var slot = connections[e.id] else { continue }
                slot.eviction = .init(limit: e.limit, limitValue: limitValue(e.limit), forConnection: id)
                connections[e.id] = slot
                uncount(slot.address)
                shutdown(slot.fd, Int32(SHUT_RDWR))
            }
        }
        return decision
    }

    private func limitValue(_ limit: ConnectionAdmission.Limit) -> Int {
        switch limit {
        case .maxConnections: return configuration.maxConnections
        case .maxConnectionsPerAddress: return configuration.maxConnectionsPerAddress ?? configuration.maxConnections
        }
    }

    /// Text form of a peer address: dotted quad for IPv4, RFC 5952 text for IPv6 (`::1`).
    private static func addressString(_ peer: sockaddr_storage) -> String {
        var peer = peer
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let converted: UnsafePointer<CChar>? = withUnsafePointer(to: &peer) { pointer in
            switch Int32(pointer.pointee.ss_family) {
            case AF_INET:
                return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    var address = $0.pointee.sin_addr
                    return inet_ntop(AF_INET, &address, &text, socklen_t(text.count))
                }
            case AF_INET6:
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    var address = $0.pointee.sin6_addr
                    return inet_ntop(AF_INET6, &address, &text, socklen_t(text.count))
                }
            default:
                return nil
            }
        }
        guard converted != nil else { return "?" }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func configureConnectionSocket(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        // Reads wait in poll() against the connection's own deadlines (see `Connection`); sends still time out.
        var sendTimeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
    }
}

/// An open connection in the server's table.
struct ConnectionSlot {
    let fd: Int32
    let address: String
    /// Accepted at (server seconds).
    let accepted: Double
    /// Waiting for a request head since (server seconds); nil while busy with a request.
    var waitingSince: Double?
    var requestsReceived = 0
    /// Set when the connection was closed to make room for another; it stops counting against the limits then.
    var eviction: Eviction?

    struct Eviction: Equatable {
        var limit: ConnectionAdmission.Limit
        var limitValue: Int
        /// The new connection it made room for.
        var forConnection: Int
    }
}
