import Foundation
import Glibc

/// The per-connection send path. Every byte of a response goes through `send`, which paces via the
/// server's `LinkShaper`, records first/last byte times and enforces byte limits set by faults.
final class ResponseSender {
    let fd: Int32
    let server: OriginServer
    let connectionID: Int
    private(set) var bytesSent = 0
    private(set) var firstByteAt: Double?
    private(set) var lastByteAt: Double?
    /// Set after the first chunk of the response: later chunks keep their place on the link (see `TraceShaper`).
    /// Cleared by `pause()` when a fault deliberately holds the response.
    private var continuing = false

    init(fd: Int32, server: OriginServer, connectionID: Int) {
        self.fd = fd
        self.server = server
        self.connectionID = connectionID
    }

    var chunkSize: Int { server.shaper?.preferredChunkSize ?? 65536 }
    /// Pacing waits shorter than this are not slept (the debt carries into the next chunk's wait).
    static let minimumSleepSeconds = 0.0005
    /// How long to wait at a time when the link will never deliver (an all-zero trace).
    static let outageSleepSeconds = 1.0

    /// Writes all of `buffer`; false if the peer went away or the server is stopping.
    func send(_ buffer: UnsafeRawBufferPointer) -> Bool {
        guard let base = buffer.baseAddress else { return true }
        var offset = 0
        while offset < buffer.count {
            let n = min(chunkSize, buffer.count - offset)
            if let shaper = server.shaper {
                let delay = shaper.admit(bytes: n, connectionID: connectionID, continuing: continuing)
                continuing = true
                // Shorter waits are skipped: reservations are cumulative, so the next chunk absorbs them.
                if delay >= Self.minimumSleepSeconds,
                    !server.interruptibleSleep(delay.isFinite ? delay : Self.outageSleepSeconds)
                {
                    return false
                }
            }
            var written = 0
            while written < n {
                let r = Glibc.send(fd, base + offset + written, n - written, Int32(MSG_NOSIGNAL))
                if r < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                written += r
                bytesSent += r
                let t = server.now()
                if firstByteAt == nil { firstByteAt = t }
                lastByteAt = t
            }
            offset += n
        }
        return true
    }

    /// The response was deliberately held (a stall fault): its next chunk queues like a new one.
    func pause() { continuing = false }

    func send(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { send($0) } }
    func send(_ string: String) -> Bool { send(Array(string.utf8)) }
}

/// Linux POLLRDHUP (not exported by Glibc module).
private let pollRDHUP: Int16 = 0x2000

final class Connection: @unchecked Sendable {
    let server: OriginServer
    let fd: Int32
    let id: Int
    let clientAddress: String
    /// Accepted at (server seconds).
    let accepted: Double
    private var pending: [UInt8] = []
    private var closed = false
    private var requestIndex = 0
    /// When the current request's head (and the body it declares) must have arrived (server seconds).
    private var requestDeadline = 0.0
    /// When the origin began waiting for the current request's head (server seconds).
    private var waitingSince = 0.0

    init(server: OriginServer, fd: Int32, id: Int, clientAddress: String, accepted: Double) {
        self.server = server
        self.fd = fd
        self.id = id
        self.clientAddress = clientAddress
        self.accepted = accepted
    }

    /// Closes the socket once; deregisters first so `stop()` never shuts down a reused descriptor number.
    func closeSocket() {
        guard !closed else { return }
        closed = true
        server.connectionClosing(id)
        close(fd)
    }

    private enum HeadRead {
        case head(ArraySlice<UInt8>)
        /// The peer closed, the connection was evicted or the server is stopping.
        case closed
        case tooLarge
        /// A kept-alive connection stayed idle for `keepAliveIdleSeconds`.
        case idle
        /// No whole head within `headerTimeoutSeconds`.
        case timedOut
    }

    private enum ReadOutcome { case data, closed, timedOut }

    private static let maxHead = 64 * 1024
    /// Body bytes read from the file per iteration; `ResponseSender` splits them into the shaper's chunks.
    static let bodyBufferBytes = 256 * 1024

    /// Reads the next request head. Its deadline (`requestDeadline`) is `headerTimeoutSeconds` after the
    /// connection's acceptance for its first request; for a later one the connection may first idle for up to
    /// `keepAliveIdleSeconds`, and the deadline counts from the head's first byte (at once if it is already here).
    private func readHead() -> HeadRead {
        let configuration = server.configuration
        waitingSince = requestIndex == 0 ? accepted : server.now()
        if requestIndex == 0 {
            requestDeadline = accepted + configuration.headerTimeoutSeconds
        } else {
            if pending.isEmpty {
                switch readMore(until: waitingSince + configuration.keepAliveIdleSeconds) {
                case .data: break
                case .closed: return .closed
                case .timedOut: return .idle
                }
            }
            requestDeadline = server.now() + configuration.headerTimeoutSeconds
        }
        var scanFrom = 0
        while true {
            if let end = findTerminator(from: scanFrom) {
                let head = pending[0..<end.headEnd]
                pending.removeFirst(end.bodyStart)
                return .head(head)
            }
            if pending.count > Self.maxHead { return .tooLarge }
            scanFrom = max(0, pending.count - 3)
            switch readMore(until: requestDeadline) {
            case .data: continue
            case .closed: return .closed
            case .timedOut: return .timedOut
            }
        }
    }

    /// Appends what the peer sent next to `pending`, waiting until `deadline` (server seconds) at most. The wait
    /// is a total: bytes trickling in do not extend it. Eviction and `stop()` shut the socket down, which ends it.
    private func readMore(until deadline: Double) -> ReadOutcome {
        var buf = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let left = deadline - server.now()
            if left <= 0 { return .timedOut }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pfd, 1, Int32((min(left, 3600) * 1000).rounded(.up)))
            if ready < 0 && errno != EINTR { return .closed }
            if ready <= 0 { continue }
            let r = buf.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if r > 0 { pending.append(contentsOf: buf[0..<r]); return .data }
            if r < 0 && (errno == EINTR || errno == EAGAIN) { continue }
            return .closed
        }
    }

    /// Logs a connection the origin closed while waiting for a request head (timeout or eviction).
    private func logWaitEnded(
        _ event: ConnectionLogEntry.Event, sentStatus: Int? = nil,
        eviction: ConnectionSlot.Eviction? = nil
    ) {
        var record = ConnectionLogEntry(
            event: event, at: server.now(), connectionID: id, clientAddress: clientAddress,
            accepted: accepted)
        record.waitingSince = waitingSince
        record.headBytes = pending.count
        record.requestsReceived = requestIndex
        if event == .headerTimeout { record.headerTimeoutSeconds = server.configuration.headerTimeoutSeconds }
        record.sentStatus = sentStatus
        record.limit = eviction?.limit
        record.limitValue = eviction?.limitValue
        record.evictedFor = eviction?.forConnection
        server.writeLog(record)
    }

    /// The head did not arrive in time: a 408 if part of it came (a client that said nothing gets nothing), then
    /// close. The 408 is a notice about the connection, not an answer to a request: it is not paced by the link
    /// and has no request line in the log.
    private func closeForHeaderTimeout() {
        var status: Int?
        if !pending.isEmpty {
            let notice = Array(headerBlock(status: 408, headers: [("Content-Length", "0")], keepAlive: false).utf8)
            let sent = notice.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            if sent == notice.count { status = 408 }
        }
        logWaitEnded(.headerTimeout, sentStatus: status)
        shutdown(fd, Int32(SHUT_WR))
    }

    private func findTerminator(from start: Int) -> (headEnd: Int, bodyStart: Int)? {
        guard pending.count >= 2 else { return nil }
        var i = start
        while i < pending.count {
            if pending[i] == 0x0A {
                // "\n\n" or "\n\r\n"
                if i + 1 < pending.count, pending[i + 1] == 0x0A { return (i, i + 2) }
                if i + 2 < pending.count, pending[i + 1] == 0x0D, pending[i + 2] == 0x0A { return (i, i + 3) }
            }
            i += 1
        }
        return nil
    }

    /// Discards `count` request-body bytes, by the request's deadline. False if the connection ended or the
    /// deadline passed.
    private func discard(_ count: Int) -> Bool {
        var remaining = count
        while remaining > 0 {
            if pending.isEmpty, readMore(until: requestDeadline) != .data { return false }
            let n = min(remaining, pending.count)
            pending.removeFirst(n)
            remaining -= n
        }
        return true
    }

    /// Waits up to `seconds` (nil = until the peer closes or the server stops). False if the peer closed or stopping.
    private func idle(for seconds: Double?) -> Bool {
        let deadline = seconds.map { server.now() + $0 }
        while true {
            let left = deadline.map { $0 - server.now() } ?? 0.05
            if left <= 0 { return !server.isStopping }
            if server.isStopping { return false }
            var pfd = pollfd(fd: fd, events: Int16(POLLIN) | pollRDHUP, revents: 0)
            let r = poll(&pfd, 1, Int32(max(1, min(left, 0.05) * 1000)))
            if r > 0 {
                if pfd.revents & (Int16(POLLHUP) | Int16(POLLERR) | pollRDHUP) != 0 { return false }
                var b: UInt8 = 0
                let n = recv(fd, &b, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT))
                if n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) { return false }
                // Pipelined bytes: leave them; avoid spinning.
                if !server.interruptibleSleep(min(max(left, 0.001), 0.05)) { return false }
            }
        }
    }

    func run() {
        while !server.isStopping {
            if requestIndex > 0 { server.connectionAwaitsRequest(id) }
            let read = readHead()
            switch read {
            case .head, .tooLarge:
                // Busy from here to the end of the response, unless it was closed for room a moment ago.
                if server.connectionBeginsRequest(id) { break }
                if let eviction = server.eviction(of: id) { logWaitEnded(.evicted, eviction: eviction) }
                return
            case .closed, .idle, .timedOut:
                if let eviction = server.eviction(of: id) {
                    logWaitEnded(.evicted, eviction: eviction)
                    return
                }
            }
            switch read {
            case .closed, .idle: return
            case .timedOut:
                closeForHeaderTimeout()
                return
            case .tooLarge:
                server.countRequest()
                let entry = newEntry(method: "", path: "", range: nil)
                _ = respondSimple(status: 400, method: "GET", keepAlive: false, entry: entry, extraHeaders: [])
                return
            case let .head(bytes):
                server.countRequest()
                guard handle(bytes) else { return }
                requestIndex += 1
            }
        }
    }

    private func newEntry(method: String, path: String, range: String?) -> RequestLogEntry {
        let t = server.now()
        let (state, rtt) = server.link(atSeconds: t)
        return RequestLogEntry(
            accepted: t, firstByteSent: nil, lastByteSent: nil, method: method, path: path,
            query: nil, range: range, status: 0, bytesSent: 0, bodyBytesSent: 0, connectionID: id,
            requestIndex: requestIndex, fault: nil, shaping: server.shapingDescription(atSeconds: t),
            rateBitsPerSecond: state?.rateBitsPerSecond, trace: state?.traceName,
            tracePositionSeconds: state?.tracePositionSeconds,
            linkCollapsed: state?.collapsed == true ? true : nil,
            rttSeconds: rtt > 0 ? rtt : nil, blockedSeconds: nil, clientAddress: clientAddress)
    }

    private func finish(_ entry: RequestLogEntry, sender: ResponseSender?, status: Int, body: Int) {
        var e = entry
        e.status = status
        if let sender {
            e.firstByteSent = sender.firstByteAt
            e.lastByteSent = sender.lastByteAt
            e.bytesSent = sender.bytesSent
        }
        e.bodyBytesSent = body
        server.writeLog(e)
    }

    /// Waits the RTT plus any slow-first-byte fault. False if stopping.
    private func firstByteDelay(_ fault: FaultAction?, entry: RequestLogEntry) -> Bool {
        var delay = entry.rttSeconds ?? 0
        if case let .slowFirstByte(s)? = fault { delay += s }
        return delay <= 0 || server.interruptibleSleep(delay)
    }

    /// Status line, `headers`, then what every response carries: `Date`, the CORS headers (`OriginHTTP.corsHeaders`,
    /// so a player in a web page on another origin can read any answer, errors included) and `Connection`.
    private func headerBlock(status: Int, headers: [(String, String)], keepAlive: Bool) -> String {
        var s = "HTTP/1.1 \(status) \(HTTPStatus.reason(status))\r\n"
        for (k, v) in headers { s += "\(k): \(v)\r\n" }
        s += "Date: \(OriginHTTP.httpDate(Date()))\r\n"
        for (k, v) in OriginHTTP.corsHeaders { s += "\(k): \(v)\r\n" }
        s += "Connection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
        return s
    }

    /// Sends a short text response. Returns whether the connection may continue.
    private func respondSimple(
        status: Int, method: String, keepAlive: Bool, entry: RequestLogEntry,
        extraHeaders: [(String, String)], fault: FaultAction? = nil
    ) -> Bool {
        let body = Array("\(status) \(HTTPStatus.reason(status))\n".utf8)
        var headers = extraHeaders
        headers.append(("Content-Type", "text/plain; charset=utf-8"))
        headers.append(("Content-Length", "\(body.count)"))
        let sender = ResponseSender(fd: fd, server: server, connectionID: id)
        guard firstByteDelay(fault, entry: entry) else { finish(entry, sender: sender, status: 0, body: 0); return false }
        var ok = sender.send(headerBlock(status: status, headers: headers, keepAlive: keepAlive))
        var sentBody = 0
        if ok, method != "HEAD" { ok = sender.send(body); if ok { sentBody = body.count } }
        finish(entry, sender: sender, status: status, body: sentBody)
        if !keepAlive { shutdown(fd, Int32(SHUT_WR)) }
        return ok && keepAlive
    }

    /// Answers OPTIONS (a CORS preflight or a plain one): 204 with the methods the origin serves and, for a
    /// preflight, the request headers it asked for, echoed (`OriginHTTP.preflightHeaders`). Pays the RTT like any
    /// answer. Returns whether the connection may continue.
    private func respondToOptions(_ head: HTTPRequestHead, keepAlive: Bool, entry: RequestLogEntry) -> Bool {
        let headers = OriginHTTP.preflightHeaders(
            requestedHeaders: head.header("Access-Control-Request-Headers"),
            privateNetwork: head.header("Access-Control-Request-Private-Network"))
        let sender = ResponseSender(fd: fd, server: server, connectionID: id)
        guard firstByteDelay(nil, entry: entry) else { finish(entry, sender: sender, status: 0, body: 0); return false }
        let ok = sender.send(headerBlock(status: 204, headers: headers, keepAlive: keepAlive))
        finish(entry, sender: sender, status: 204, body: 0)
        if !keepAlive { shutdown(fd, Int32(SHUT_WR)) }
        return ok && keepAlive
    }

    /// Handles one request. Returns whether to keep reading requests on this connection.
    private func handle(_ headBytes: ArraySlice<UInt8>) -> Bool {
        guard let head = HTTPRequestHead.parse(headBytes) else {
            var entry = newEntry(method: "", path: "", range: nil)
            if let line = String(decoding: headBytes.prefix(200), as: UTF8.self).split(separator: "\r\n").first {
                entry.path = String(line)
            }
            return respondSimple(status: 400, method: "GET", keepAlive: false, entry: entry, extraHeaders: [])
        }
        let decodedPath = OriginHTTP.decodedPath(ofTarget: head.target)
        var entry = newEntry(method: head.method, path: decodedPath ?? head.target, range: head.header("Range"))
        entry.headers = OriginHTTP.loggedHeaders(head.headers)
        if let q = head.target.firstIndex(of: "?") {
            let query = head.target[head.target.index(after: q)...].prefix { $0 != "#" }
            if !query.isEmpty { entry.query = String(query) }
        }
        var keepAlive = head.wantsKeepAlive

        // Request body (unusual for GET/HEAD): discard by Content-Length; refuse chunked.
        if head.header("Transfer-Encoding") != nil {
            return respondSimple(status: 400, method: head.method, keepAlive: false, entry: entry, extraHeaders: [])
        }
        if let cl = head.header("Content-Length") {
            guard let n = Int(cl), n >= 0 else {
                return respondSimple(status: 400, method: head.method, keepAlive: false, entry: entry, extraHeaders: [])
            }
            if !discard(n) { keepAlive = false }
        }

        // CORS preflight (and any OPTIONS): answered before the fault decision point, which applies to GET and HEAD.
        if head.method == "OPTIONS" {
            return respondToOptions(head, keepAlive: keepAlive, entry: entry)
        }

        // The fault decision point.
        let context = RequestContext(
            method: head.method, path: decodedPath ?? head.target, connectionID: id,
            requestIndexOnConnection: requestIndex, secondsSinceStart: entry.accepted)
        let fault = server.faultPolicy.fault(for: context)
        entry.fault = fault?.logDescription

        switch fault {
        case .blackHole?:
            finish(entry, sender: nil, status: 0, body: 0)
            _ = idle(for: nil)
            return false
        case .resetConnection?:
            var lin = linger(l_onoff: 1, l_linger: 0)
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &lin, socklen_t(MemoryLayout<linger>.size))
            finish(entry, sender: nil, status: 0, body: 0)
            closeSocket()
            return false
        case let .status(code, retry)?:
            let headers: [(String, String)] = retry.map { [("Retry-After", "\($0)")] } ?? []
            return respondSimple(
                status: code, method: head.method, keepAlive: keepAlive, entry: entry,
                extraHeaders: headers, fault: fault)
        default:
            break
        }

        guard head.method == "GET" || head.method == "HEAD" else {
            return respondSimple(
                status: 405, method: head.method, keepAlive: keepAlive, entry: entry,
                extraHeaders: [("Allow", OriginHTTP.allowedMethods)], fault: fault)
        }
        let filePath: String
        switch OriginHTTP.resolve(target: head.target, root: server.root.path) {
        case .badRequest:
            return respondSimple(status: 400, method: head.method, keepAlive: false, entry: entry, extraHeaders: [], fault: fault)
        case .forbidden:
            entry.refused = "forbiddenSegment"
            return respondSimple(status: 403, method: head.method, keepAlive: keepAlive, entry: entry, extraHeaders: [], fault: fault)
        case let .file(path, _):
            filePath = path
        }
        // Symbolic links: whatever the path leads to must lie under ROOT (what it does not lead to is a 404 below).
        if !server.configuration.followSymlinks,
            case let .outside(realPath) = OriginHTTP.confine(filePath, rootRealPath: server.rootRealPath)
        {
            entry.refused = "outsideRoot"
            entry.resolvedPath = realPath
            return respondSimple(status: 403, method: head.method, keepAlive: keepAlive, entry: entry, extraHeaders: [], fault: fault)
        }
        // Live mode: generated media playlists; segments outside their window are gone.
        var generated: [UInt8]?
        var lowLatencyHandled = false
        if let live = server.live, live.configuration.lowLatency != nil {
            // Low-latency mode: playlists with parts (blocking reload, delta updates), parts and part-made segments.
            let clock = live.configuration.liveClock(atSeconds: entry.accepted)
            let stale = clock != entry.accepted && entry.fault == nil ? "stalePlaylist(frozenAt=\(clock)s)" : nil
            answering: while true {
                let now = server.now()
                switch live.lowLatencyAnswer(filePath: filePath, target: head.target, atSeconds: now, acceptedAt: entry.accepted) {
                case .notLowLatency:
                    break answering
                case let .content(bytes):
                    generated = bytes
                    lowLatencyHandled = true
                    entry.blockedSeconds = now - entry.accepted
                    break answering
                case let .reject(status, _):
                    entry.blockedSeconds = now - entry.accepted
                    if let stale { entry.fault = stale }
                    return respondSimple(
                        status: status, method: head.method, keepAlive: keepAlive, entry: entry,
                        extraHeaders: [], fault: fault)
                case let .wait(until):
                    guard server.interruptibleSleep(max(0.0005, until - now)) else {
                        finish(entry, sender: nil, status: 0, body: 0)
                        return false
                    }
                }
            }
            if lowLatencyHandled, let stale { entry.fault = stale }
        }
        if let live = server.live, !lowLatencyHandled {
            // A stale-playlist window in force is logged as the fault of every live playlist / segment answer.
            let clock = live.configuration.liveClock(atSeconds: entry.accepted)
            let stale = clock != entry.accepted && entry.fault == nil ? "stalePlaylist(frozenAt=\(clock)s)" : nil
            if filePath.hasSuffix(".m3u8"), let text = live.playlist(filePath: filePath, atSeconds: entry.accepted) {
                generated = Array(text.utf8)
                if let stale { entry.fault = stale }
            } else if let sequence = LiveServer.sequence(inTarget: head.target) {
                if let stale { entry.fault = stale }
                if !live.segmentAvailable(filePath: filePath, sequence: sequence, atSeconds: entry.accepted) {
                    return respondSimple(
                        status: 404, method: head.method, keepAlive: keepAlive, entry: entry,
                        extraHeaders: [], fault: fault)
                }
            }
        }
        let file = generated == nil ? open(filePath, O_RDONLY | O_CLOEXEC) : -1
        var st = stat()
        guard file >= 0 || generated != nil else {
            return respondSimple(status: 404, method: head.method, keepAlive: keepAlive, entry: entry, extraHeaders: [], fault: fault)
        }
        defer { if file >= 0 { close(file) } }
        guard generated != nil || (fstat(file, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG) else {
            return respondSimple(status: 404, method: head.method, keepAlive: keepAlive, entry: entry, extraHeaders: [], fault: fault)
        }
        let size = generated?.count ?? Int(st.st_size)
        var headers: [(String, String)] = [
            ("Content-Type", OriginHTTP.contentType(forPath: filePath)),
            ("Accept-Ranges", "bytes"), ("Cache-Control", "no-cache")
        ]
        var status = 200
        var first = 0
        var length = size
        switch OriginHTTP.resolveRange(head.header("Range"), size: size) {
        case .whole: break
        case let .partial(a, b):
            status = 206
            first = a
            length = b - a + 1
            headers.append(("Content-Range", "bytes \(a)-\(b)/\(size)"))
        case .unsatisfiable:
            return respondSimple(
                status: 416, method: head.method, keepAlive: keepAlive, entry: entry,
                extraHeaders: [("Content-Range", "bytes */\(size)")], fault: fault)
        }
        headers.append(("Content-Length", "\(length)"))

        let sender = ResponseSender(fd: fd, server: server, connectionID: id)
        guard firstByteDelay(fault, entry: entry) else { finish(entry, sender: sender, status: 0, body: 0); return false }
        guard sender.send(headerBlock(status: status, headers: headers, keepAlive: keepAlive)) else {
            finish(entry, sender: sender, status: status, body: 0)
            return false
        }
        if head.method == "HEAD" {
            finish(entry, sender: sender, status: status, body: 0)
            if !keepAlive { shutdown(fd, Int32(SHUT_WR)) }
            return keepAlive
        }

        // Body, with fault byte limits.
        var stallAt: Int? = nil
        var stallFor: Double? = nil
        var truncateAt: Int? = nil
        var trickle: (bytes: Int, everySeconds: Double)? = nil
        switch fault {
        case let .stallAfterBytes(bytes, seconds)?: stallAt = max(0, bytes); stallFor = seconds
        case let .truncateAfterBytes(bytes)?: truncateAt = max(0, bytes)
        case let .trickle(bytes, every)?: trickle = (max(1, bytes), max(0.001, every))
        default: break
        }
        var sent = 0
        var buffer = [UInt8](repeating: 0, count: Self.bodyBufferBytes)
        var ok = true
        while sent < length {
            if let t = truncateAt, sent >= t {
                finish(entry, sender: sender, status: status, body: sent)
                closeSocket()
                return false
            }
            if let s = stallAt, sent >= s {
                stallAt = nil
                sender.pause()
                if !idle(for: stallFor) || stallFor == nil {
                    finish(entry, sender: sender, status: status, body: sent)
                    return false
                }
            }
            if let t = trickle, sent > 0 {
                // One piece every `everySeconds` (the first right after the headers); the wait ends
                // early if the client goes away or the server stops.
                sender.pause()
                if !idle(for: t.everySeconds) {
                    finish(entry, sender: sender, status: status, body: sent)
                    return false
                }
            }
            var want = min(buffer.count, length - sent)
            if let t = truncateAt { want = min(want, t - sent) }
            if let s = stallAt { want = min(want, s - sent) }
            if let t = trickle { want = min(want, t.bytes) }
            let n: Int
            if let generated {
                n = want
                buffer.withUnsafeMutableBytes { dst in
                    generated.withUnsafeBytes { src in
                        dst.baseAddress!.copyMemory(from: src.baseAddress! + first + sent, byteCount: want)
                    }
                }
            } else {
                n = buffer.withUnsafeMutableBytes { pread(file, $0.baseAddress, want, off_t(first + sent)) }
            }
            if n <= 0 { ok = false; break } // file shrank or I/O error: cannot honour Content-Length
            if !buffer.withUnsafeBytes({ sender.send(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }) { ok = false; break }
            sent += n
        }
        finish(entry, sender: sender, status: status, body: sent)
        if !ok { return false }
        if !keepAlive { shutdown(fd, Int32(SHUT_WR)) }
        return keepAlive
    }
}
