import Foundation
import Glibc

public enum OriginError: Error, CustomStringConvertible {
    case socket(String, Int32)
    case badBindAddress(String)
    case alreadyStarted

    public var description: String {
        switch self {
        case let .socket(what, err): return "\(what): \(String(cString: strerror(err)))"
        case let .badBindAddress(a): return "bad bind address \(a)"
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
    private var connections: [Int: Int32] = [:]   // id -> fd
    private var activeThreads = 0
    private var nextConnectionID = 0
    private var _requestCount = 0
    private var _port: UInt16 = 0
    private(set) var startTime: Double = monotonicNow()

    public convenience init(root: URL, configuration: OriginConfiguration = .init()) {
        self.init(root: root, configuration: configuration,
                  faultPolicy: RuleFaultPolicy(rules: configuration.faults),
                  shaper: configuration.makeShaper())
    }

    /// Plug-in form: a custom per-request fault decision point and a custom link shaper
    /// (`configuration.faults` and `configuration.rateBitsPerSecond` are then ignored).
    public init(root: URL, configuration: OriginConfiguration, faultPolicy: any FaultPolicy, shaper: (any LinkShaper)?) {
        self.root = root
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

    /// `http://ADDRESS:PORT/`
    public var baseURL: URL { URL(string: "http://\(configuration.bindAddress):\(port)/")! }

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
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = port.bigEndian
        guard inet_pton(AF_INET, configuration.bindAddress, &addr.sin_addr) == 1 else {
            throw OriginError.badBindAddress(configuration.bindAddress)
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw OriginError.socket("socket", errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else { let e = errno; close(fd); throw OriginError.socket("bind", e) }
        guard listen(fd, 512) == 0 else { let e = errno; close(fd); throw OriginError.socket("listen", e) }
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        if let url = configuration.requestLogURL {
            do { log = try RequestLogWriter(url: url) } catch { close(fd); throw error }
        }
        _port = UInt16(bigEndian: addr.sin_port)
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
        for fd in connections.values { shutdown(fd, Int32(SHUT_RDWR)) }
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
        state.lock(); connections[id] = nil; state.unlock()
    }

    func countRequest() {
        state.lock(); _requestCount += 1; state.unlock()
    }

    func writeLog(_ entry: RequestLogEntry) {
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
            let cfd = accept(lfd, nil, nil)
            if cfd < 0 { continue }
            _ = fcntl(cfd, F_SETFD, FD_CLOEXEC)
            state.lock()
            if stopping || connections.count >= configuration.maxConnections {
                state.unlock()
                close(cfd)
                continue
            }
            let id = nextConnectionID
            nextConnectionID += 1
            connections[id] = cfd
            activeThreads += 1
            state.unlock()
            configureConnectionSocket(cfd)
            let connection = Connection(server: self, fd: cfd, id: id)
            let thread = Thread { [self] in
                connection.run()
                state.lock()
                connections[id] = nil
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

    private func configureConnectionSocket(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var idle = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &idle, socklen_t(MemoryLayout<timeval>.size))
        var sendTimeout = timeval(tv_sec: 60, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &sendTimeout, socklen_t(MemoryLayout<timeval>.size))
    }
}
