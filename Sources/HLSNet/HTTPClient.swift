// A blocking HTTP(S) client on libcurl: one easy handle (and one multi
// handle, which owns the connection cache) per client, reused across
// fetches so connections stay alive. The transfer loop is driven with
// curl_multi_perform / curl_multi_poll so cancellation and the first-byte and
// stall timeouts are checked every poll interval against the injected clock.

import CCurl
import Foundation
import Glibc
import HLSCore

/// curl_global_init runs once per process; Swift initialises globals lazily and thread-safely.
private let curlGlobalInitCode: CURLcode = hls_curl_global_init_all()

public final class HTTPClient: @unchecked Sendable {
    public let configuration: HTTPClientConfiguration
    private let clock: any MonotonicClock
    /// Serialises fetches: the easy handle serves one transfer at a time.
    private let fetchLock = NSLock()
    /// Guards `lastTCPInfo` (written on the fetching thread, read from any).
    private let tcpLock = NSLock()
    private var lastTCPInfo: TCPInfoSnapshot?
    /// Owned; freed in deinit. Nil only if curl failed to initialise.
    private let easy: UnsafeMutableRawPointer?
    private let multi: UnsafeMutableRawPointer?

    public init(clock: any MonotonicClock, configuration: HTTPClientConfiguration = .init()) {
        self.clock = clock
        self.configuration = configuration
        if curlGlobalInitCode == CURLE_OK {
            easy = curl_easy_init()
            multi = curl_multi_init()
        } else {
            easy = nil
            multi = nil
        }
    }

    deinit {
        if let easy { curl_easy_cleanup(easy) }
        if let multi { curl_multi_cleanup(multi) }
    }

    /// TCP_INFO of the in-flight request's connection (sampled at most every
    /// `tcpInfoSampleIntervalSeconds`), or of the last request's at its end.
    public func currentTCPInfo() -> TCPInfoSnapshot? { tcpLock.withLock { lastTCPInfo } }

    fileprivate func storeTCPInfo(_ info: TCPInfoSnapshot) { tcpLock.withLock { lastTCPInfo = info } }

    /// Blocking; call from a worker thread. Concurrent calls on one client are
    /// serialised. `onProgress` is called on the calling thread for each body
    /// chunk received (arrival time from the injected clock, size, running total).
    public func fetch(
        _ request: HTTPRequest, cancellation: CancellationToken? = nil,
        onProgress: ((ByteProgress) -> Void)? = nil
    ) -> Result<HTTPResponse, LoadError> {
        let urlString = request.url.absoluteString
        let scheme = request.url.scheme?.lowercased()
        switch scheme {
        case "http", "https":
            // Nothing to connect to (`http:///etc/passwd`): curl would guess a host from the path
            // and retry its name lookup; refused at once.
            guard let host = request.url.host, !host.isEmpty else {
                return .failure(LoadError(kind: .invalidURL, url: urlString, message: "\(scheme!) URL without a host"))
            }
        case "file", nil:
            guard configuration.allowFileURLs else {
                return .failure(
                    LoadError(
                        kind: .unsupportedScheme, url: urlString,
                        message: "local files are only read for the top-level URL"))
            }
            return fetchFile(request)
        default:
            return .failure(
                LoadError(
                    kind: .unsupportedScheme, url: urlString,
                    message: "scheme \(scheme ?? "") is not fetched (only http and https)"))
        }
        if let cancellation, cancellation.isCancelled {
            return .failure(LoadError(kind: .cancelled, url: urlString, message: "cancelled before start"))
        }
        guard let easy, let multi else {
            return .failure(
                LoadError(
                    kind: .other, url: urlString,
                    message: "libcurl failed to initialise (\(curlGlobalInitCode.rawValue))"))
        }
        return fetchLock.withLock {
            performTransfer(request, easy: easy, multi: multi, cancellation: cancellation, onProgress: onProgress)
        }
    }

    // MARK: - Files

    private func fetchFile(_ request: HTTPRequest) -> Result<HTTPResponse, LoadError> {
        let urlString = request.url.absoluteString
        let path = request.url.isFileURL ? request.url.path : (request.url.path.isEmpty ? urlString : request.url.path)
        let started = clock.now()
        // The real path (every symlink resolved, no `..`) is what is checked and what is opened.
        guard let resolved = realpath(path, nil) else {
            return .failure(LoadError(kind: .file, url: urlString, message: "cannot open \(path): \(String(cString: strerror(errno)))"))
        }
        let real = String(cString: resolved)
        free(resolved)
        if let directory = configuration.localFileDirectory, !localPath(real, isInside: directory) {
            let shownPath = real == path ? path : "\(path) (really \(real))"
            return .failure(
                LoadError(
                    kind: .localFileRefused, url: urlString,
                    message: "\(shownPath) is outside \(directory)"))
        }
        // O_NONBLOCK: a FIFO must not hang the open; it is refused below like every non-regular file.
        let fd = open(real, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            return .failure(LoadError(kind: .file, url: urlString, message: "cannot open \(path): \(String(cString: strerror(errno)))"))
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            return .failure(LoadError(kind: .file, url: urlString, message: "\(path) is not a regular file"))
        }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: false)
        var data: Data
        do {
            // Size first, so a huge file is refused without being read.
            let size = Int(clamping: try handle.seekToEnd())
            let start = min(size, max(0, request.byteRange?.offset ?? 0))
            let available = size - start
            let wanted = request.byteRange.map { min(max(0, $0.length), available) } ?? available
            if wanted > request.maxBodyBytes {
                return .failure(
                    LoadError(
                        kind: .responseTooLarge, url: urlString,
                        message: "\(wanted) bytes exceed the \(request.maxBodyBytes)-byte limit"))
            }
            try handle.seek(toOffset: UInt64(start))
            data = wanted > 0 ? (try handle.read(upToCount: wanted) ?? Data()) : Data()
        } catch {
            return .failure(LoadError(kind: .file, url: urlString, message: "reading \(path): \(error)"))
        }
        let finished = clock.now()
        let total = finished.seconds(since: started)
        return .success(
            HTTPResponse(
                statusCode: 200, headers: ["content-length": String(data.count)], body: data,
                effectiveURL: request.url.isFileURL ? request.url : URL(fileURLWithPath: path),
                redirectCount: 0, connectionReused: false,
                timings: RequestTimings(firstByteSeconds: total, totalSeconds: total),
                tcpInfo: nil, startedAt: started, finishedAt: finished,
                contentLength: data.count))
    }

    // MARK: - HTTP

    private func performTransfer(
        _ request: HTTPRequest, easy: UnsafeMutableRawPointer, multi: UnsafeMutableRawPointer,
        cancellation: CancellationToken?,
        onProgress: ((ByteProgress) -> Void)?
    ) -> Result<HTTPResponse, LoadError> {
        let urlString = request.url.absoluteString
        let context = TransferContext(
            client: self, easy: easy, clock: clock, request: request,
            cancellation: cancellation, onProgress: onProgress,
            tcpSampleIntervalSeconds: configuration.tcpInfoSampleIntervalSeconds)
        let box = Unmanaged.passRetained(context)
        defer { box.release() }

        // Request headers: owned here, freed after the handle stops using them.
        var headerList: UnsafeMutablePointer<curl_slist>? = nil
        defer { if let headerList { curl_slist_free_all(headerList) } }
        let userHeaders = configuration.userHeaders.filter { $0.applies(toHost: request.url.host) }.map { (name: $0.name, value: $0.value) }
        for header in userHeaders + request.headers {
            guard let appended = curl_slist_append(headerList, "\(header.name): \(header.value)") else {
                return .failure(LoadError(kind: .other, url: urlString, message: "curl_slist_append failed"))
            }
            headerList = appended
        }

        curl_easy_reset(easy)
        if let error = configure(
            easy: easy, request: request, headerList: headerList,
            context: box.toOpaque(), errorBuffer: UnsafeMutableRawPointer(context.errorBuffer))
        {
            curl_easy_reset(easy) // forget the pointers into this transfer's context
            return .failure(error)
        }

        let addCode = curl_multi_add_handle(multi, easy)
        guard addCode == CURLM_OK else {
            curl_easy_reset(easy)
            return .failure(
                LoadError(
                    kind: .other, url: urlString,
                    message: "curl_multi_add_handle: \(String(cString: curl_multi_strerror(addCode)))"))
        }
        context.startedAt = clock.now()

        var curlResult: CURLcode? = nil
        var multiFailure: String? = nil
        let pollMillis = Int32(max(1, (configuration.pollIntervalSeconds * 1000).rounded()))
        while true {
            var running: Int32 = 0
            let performCode = curl_multi_perform(multi, &running)
            if performCode != CURLM_OK {
                multiFailure = "curl_multi_perform: \(String(cString: curl_multi_strerror(performCode)))"
                break
            }
            var done = CURLE_OK
            if hls_curl_multi_done_result(multi, easy, &done) != 0 {
                curlResult = done
                break
            }
            if running == 0 {
                multiFailure = "transfer ended without a result"
                break
            }
            if context.checkAbort(now: clock.now()) { break }
            var fds: Int32 = 0
            let pollCode = curl_multi_poll(multi, nil, 0, pollMillis, &fds)
            if pollCode != CURLM_OK {
                multiFailure = "curl_multi_poll: \(String(cString: curl_multi_strerror(pollCode)))"
                break
            }
        }
        let finishedAt = clock.now()
        // TCP_INFO needs the connection, which curl only finds while the handle is attached.
        let tcpInfo = context.sampleTCPInfo(now: finishedAt, force: true)
        let info = readInfo(easy: easy)
        context.curlErrorMessage = String(cString: context.errorBuffer)
        let removeCode = curl_multi_remove_handle(multi, easy)
        if removeCode != CURLM_OK, multiFailure == nil, curlResult == nil, context.abortReason == nil {
            multiFailure = "curl_multi_remove_handle: \(String(cString: curl_multi_strerror(removeCode)))"
        }
        // The handle keeps pointers to the header list and the context until reset.
        curl_easy_reset(easy)

        return finish(
            request: request, context: context, curlResult: curlResult, multiFailure: multiFailure,
            info: info, tcpInfo: tcpInfo, finishedAt: finishedAt)
    }

    /// Sets every option for one transfer; returns the error of the first option curl refuses.
    private func configure(
        easy: UnsafeMutableRawPointer, request: HTTPRequest,
        headerList: UnsafeMutablePointer<curl_slist>?,
        context: UnsafeMutableRawPointer, errorBuffer: UnsafeMutableRawPointer
    ) -> LoadError? {
        let urlString = request.url.absoluteString
        var failure: LoadError? = nil
        func check(_ code: CURLcode, _ what: String) {
            guard failure == nil, code != CURLE_OK else { return }
            let kind: LoadErrorKind = code == CURLE_UNSUPPORTED_PROTOCOL ? .unsupportedScheme : .other
            failure = LoadError(
                kind: kind, url: urlString,
                message: "curl_easy_setopt(\(what)): \(String(cString: curl_easy_strerror(code)))")
        }
        check(hls_curl_setopt_str(easy, CURLOPT_URL, urlString), "URL")
        check(hls_curl_setopt_str(easy, CURLOPT_PROTOCOLS_STR, "http,https"), "PROTOCOLS_STR")
        check(hls_curl_setopt_str(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https"), "REDIR_PROTOCOLS_STR")
        check(hls_curl_setopt_long(easy, CURLOPT_FOLLOWLOCATION, 1), "FOLLOWLOCATION")
        check(hls_curl_setopt_long(easy, CURLOPT_MAXREDIRS, max(0, configuration.maxRedirects)), "MAXREDIRS")
        check(hls_curl_setopt_long(easy, CURLOPT_NOSIGNAL, 1), "NOSIGNAL")
        check(hls_curl_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, configuration.verifyTLS ? 1 : 0), "SSL_VERIFYPEER")
        check(hls_curl_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, configuration.verifyTLS ? 2 : 0), "SSL_VERIFYHOST")
        if let caFile = configuration.caCertificateFile { check(hls_curl_setopt_str(easy, CURLOPT_CAINFO, caFile), "CAINFO") }
        check(hls_curl_setopt_str(easy, CURLOPT_USERAGENT, configuration.userAgent), "USERAGENT")
        if let proxy = configuration.proxy { check(hls_curl_setopt_str(easy, CURLOPT_PROXY, proxy), "PROXY") }
        check(
            hls_curl_setopt_long(
                easy, CURLOPT_CONNECTTIMEOUT_MS,
                max(1, Int((configuration.connectTimeoutSeconds * 1000).rounded()))), "CONNECTTIMEOUT_MS")
        if let total = request.totalTimeoutSeconds {
            // Backstop only: the transfer loop enforces it first so the error kind is right.
            check(hls_curl_setopt_long(easy, CURLOPT_TIMEOUT_MS, max(1, Int(((total + 1) * 1000).rounded()))), "TIMEOUT_MS")
        }
        check(hls_curl_setopt_long(easy, CURLOPT_TCP_NODELAY, 1), "TCP_NODELAY")
        if request.freshConnection { check(hls_curl_setopt_long(easy, CURLOPT_FRESH_CONNECT, 1), "FRESH_CONNECT") }
        if let headerList { check(hls_curl_setopt_slist(easy, CURLOPT_HTTPHEADER, headerList), "HTTPHEADER") }
        if let range = request.byteRange {
            check(hls_curl_setopt_str(easy, CURLOPT_RANGE, range.httpRange), "RANGE")
        }
        check(hls_curl_setopt_datacb(easy, CURLOPT_WRITEFUNCTION, transferWriteCallback), "WRITEFUNCTION")
        check(hls_curl_setopt_ptr(easy, CURLOPT_WRITEDATA, context), "WRITEDATA")
        check(hls_curl_setopt_datacb(easy, CURLOPT_HEADERFUNCTION, transferHeaderCallback), "HEADERFUNCTION")
        check(hls_curl_setopt_ptr(easy, CURLOPT_HEADERDATA, context), "HEADERDATA")
        check(hls_curl_setopt_xferinfocb(easy, CURLOPT_XFERINFOFUNCTION, transferProgressCallback), "XFERINFOFUNCTION")
        check(hls_curl_setopt_ptr(easy, CURLOPT_XFERINFODATA, context), "XFERINFODATA")
        check(hls_curl_setopt_long(easy, CURLOPT_NOPROGRESS, 0), "NOPROGRESS")
        check(hls_curl_setopt_ptr(easy, CURLOPT_ERRORBUFFER, errorBuffer), "ERRORBUFFER")
        // The request headers as libcurl really sends them (Host, User-Agent, Range, the caller's
        // own) reach only a debug callback, which libcurl calls only in verbose mode; with the
        // callback set, verbose text goes to it and nowhere else.
        check(hls_curl_setopt_debugcb(easy, CURLOPT_DEBUGFUNCTION, transferDebugCallback), "DEBUGFUNCTION")
        check(hls_curl_setopt_ptr(easy, CURLOPT_DEBUGDATA, context), "DEBUGDATA")
        check(hls_curl_setopt_long(easy, CURLOPT_VERBOSE, 1), "VERBOSE")
        return failure
    }

    private struct TransferInfo {
        var timings = RequestTimings()
        var redirectCount = 0
        var connectionReused = false
        var effectiveURL: String?
        var responseCode = 0
        /// CURLINFO_HTTP_VERSION as text; nil when no response came.
        var httpVersion: String?
        var primaryIP: String?
        var localPort: Int?
    }

    private func readInfo(easy: UnsafeMutableRawPointer) -> TransferInfo {
        var info = TransferInfo()
        func seconds(_ what: CURLINFO) -> Double {
            var micros: curl_off_t = 0
            return hls_curl_getinfo_off(easy, what, &micros) == CURLE_OK ? Double(micros) / 1e6 : 0
        }
        info.timings = RequestTimings(
            nameLookupSeconds: seconds(CURLINFO_NAMELOOKUP_TIME_T),
            connectSeconds: seconds(CURLINFO_CONNECT_TIME_T),
            tlsSeconds: seconds(CURLINFO_APPCONNECT_TIME_T),
            firstByteSeconds: seconds(CURLINFO_STARTTRANSFER_TIME_T),
            totalSeconds: seconds(CURLINFO_TOTAL_TIME_T),
            redirectSeconds: seconds(CURLINFO_REDIRECT_TIME_T))
        var value = 0
        if hls_curl_getinfo_long(easy, CURLINFO_REDIRECT_COUNT, &value) == CURLE_OK { info.redirectCount = value }
        value = 1
        if hls_curl_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &value) == CURLE_OK { info.connectionReused = value == 0 }
        value = 0
        if hls_curl_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &value) == CURLE_OK { info.responseCode = value }
        var cString: UnsafeMutablePointer<CChar>? = nil
        if hls_curl_getinfo_str(easy, CURLINFO_EFFECTIVE_URL, &cString) == CURLE_OK, let cString {
            info.effectiveURL = String(cString: cString)
        }
        value = 0
        if hls_curl_getinfo_long(easy, CURLINFO_HTTP_VERSION, &value) == CURLE_OK {
            switch value {
            case CURL_HTTP_VERSION_1_0: info.httpVersion = "HTTP/1.0"
            case CURL_HTTP_VERSION_1_1: info.httpVersion = "HTTP/1.1"
            case CURL_HTTP_VERSION_2_0: info.httpVersion = "HTTP/2"
            case CURL_HTTP_VERSION_3: info.httpVersion = "HTTP/3"
            default: info.httpVersion = nil
            }
        }
        cString = nil
        if hls_curl_getinfo_str(easy, CURLINFO_PRIMARY_IP, &cString) == CURLE_OK, let cString, cString.pointee != 0 {
            info.primaryIP = String(cString: cString)
        }
        value = 0
        if hls_curl_getinfo_long(easy, CURLINFO_LOCAL_PORT, &value) == CURLE_OK, value > 0 { info.localPort = value }
        return info
    }

    private func finish(
        request: HTTPRequest, context: TransferContext, curlResult: CURLcode?, multiFailure: String?,
        info: TransferInfo, tcpInfo: TCPInfoSnapshot?,
        finishedAt: MonotonicInstant
    ) -> Result<HTTPResponse, LoadError> {
        let urlString = request.url.absoluteString
        let received = context.networkBodyBytes
        let status = context.statusCode ?? info.responseCode
        let retryAfter = context.headers["retry-after"].flatMap { parseRetryAfter($0, now: Date()) }
        let exchange = exchange(request: request, context: context, info: info, status: status, finishedAt: finishedAt)

        func fail(_ kind: LoadErrorKind, _ message: String) -> Result<HTTPResponse, LoadError> {
            var error = LoadError(
                kind: kind, url: urlString, httpStatus: status >= 400 ? status : nil,
                retryAfterSeconds: retryAfter, bytesReceived: received, message: message)
            error.exchange = exchange
            return .failure(error)
        }

        if let reason = context.abortReason, !(reason == .rangeComplete) {
            switch reason {
            case .cancelled: return fail(.cancelled, "cancelled after \(received) body bytes")
            case .firstByteTimeout(let s): return fail(.firstByteTimeout, String(format: "no response byte within %.3f s", s))
            case .stall(let s): return fail(.transferTimeout, String(format: "no byte for %.3f s after %d body bytes", s, received))
            case .total(let s): return fail(.transferTimeout, String(format: "request exceeded %.3f s", s))
            case .tooLarge(let limit): return fail(.responseTooLarge, "body exceeds \(limit) bytes")
            case .errorStatusBodyTooLong:
                return errorStatus(request: request, context: context, status: status, retryAfter: retryAfter, exchange: exchange)
            case .rangeComplete: break
            }
        }
        if let multiFailure { return fail(.other, multiFailure) }
        let code = curlResult ?? CURLE_OK
        let rangeComplete = context.abortReason == .rangeComplete
        if code != CURLE_OK && !rangeComplete {
            let curlMessage =
                context.curlErrorMessage.isEmpty
                ? String(cString: curl_easy_strerror(code)) : context.curlErrorMessage
            let message = "curl error \(code.rawValue): \(curlMessage)"
            switch code {
            case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
                return fail(.nameResolution, message)
            case CURLE_COULDNT_CONNECT:
                return fail(.connect, message)
            case CURLE_OPERATION_TIMEDOUT:
                if context.firstByteAt == nil {
                    return fail(info.timings.connectSeconds == 0 ? .connect : .firstByteTimeout, message)
                }
                return fail(.transferTimeout, message)
            case CURLE_PEER_FAILED_VERIFICATION:
                // The peer's certificate (chain, dates, name) is not trusted: say by what, and the way out.
                let trust =
                    configuration.caCertificateFile.map { "not trusted by the CA certificates in \($0)" }
                    ?? "not trusted by the system's CA certificates: --cacert FILE trusts a private CA, -k/--insecure skips the check"
                return fail(.tls, "\(message) (\(trust))")
            case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM,
                CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
                CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_CRL_BADFILE,
                CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
                CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED, CURLE_SSL_CLIENTCERT:
                return fail(.tls, message)
            case CURLE_TOO_MANY_REDIRECTS:
                return fail(.redirect, message)
            case CURLE_UNSUPPORTED_PROTOCOL:
                // The top-level scheme was checked before curl; a refusal after a response is a redirect.
                if context.firstByteAt != nil {
                    let target = context.headers["location"].map { " (Location: \($0))" } ?? ""
                    return fail(.redirect, "redirect to a scheme other than http/https refused\(target): \(message)")
                }
                return fail(.unsupportedScheme, message)
            case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_GOT_NOTHING, CURLE_SEND_ERROR,
                CURLE_HTTP2, CURLE_HTTP2_STREAM, CURLE_BAD_CONTENT_ENCODING:
                return fail(.truncatedBody, message)
            case CURLE_FILESIZE_EXCEEDED:
                return fail(.responseTooLarge, message)
            case CURLE_ABORTED_BY_CALLBACK where context.cancellation?.isCancelled == true:
                return fail(.cancelled, message)
            default:
                return fail(.other, message)
            }
        }
        if status >= 400 {
            return errorStatus(request: request, context: context, status: status, retryAfter: retryAfter, exchange: exchange)
        }
        let effective = info.effectiveURL.flatMap { URL(string: $0) } ?? request.url
        return .success(
            HTTPResponse(
                statusCode: status, headers: context.headers, body: context.body,
                effectiveURL: effective, redirectCount: info.redirectCount,
                connectionReused: info.connectionReused, timings: info.timings,
                tcpInfo: tcpInfo, startedAt: context.startedAt, finishedAt: finishedAt,
                contentLength: context.contentLength,
                rangeSlicedLocally: context.slicingRange, bytesReceived: received, exchange: exchange))
    }

    private func errorStatus(
        request: HTTPRequest, context: TransferContext, status: Int,
        retryAfter: Double?, exchange: HTTPExchange
    ) -> Result<HTTPResponse, LoadError> {
        let snippet = String(decoding: context.body.prefix(200), as: UTF8.self)
            .replacingOccurrences(of: "\n", with: " ").trimmingCharacters(in: .whitespaces)
        var error = LoadError(
            kind: .httpStatus, url: request.url.absoluteString, httpStatus: status,
            retryAfterSeconds: retryAfter, bytesReceived: context.networkBodyBytes,
            message: snippet.isEmpty ? "HTTP \(status)" : "HTTP \(status): \(snippet)")
        error.exchange = exchange
        return .failure(error)
    }

    /// What went over the wire, from libcurl's reports and the transfer's own record. libcurl's
    /// phase times are kept; a transfer hlsplay cut short (cancelled, timed out) or that failed
    /// gets its end from the client's clock when libcurl's total falls short of it (libcurl
    /// finalises its total only for a transfer it completed), and its first byte from the
    /// header callback when libcurl recorded none.
    private func exchange(
        request: HTTPRequest, context: TransferContext, info: TransferInfo, status: Int,
        finishedAt: MonotonicInstant
    ) -> HTTPExchange {
        let t = info.timings
        let elapsed = max(0, finishedAt.seconds(since: context.startedAt))
        let firstByteAt = context.firstByteAt.map { max(0, $0.seconds(since: context.startedAt)) }
        let firstByte: Double? = t.firstByteSeconds > 0 ? t.firstByteSeconds : firstByteAt
        let total = max(t.totalSeconds, elapsed, firstByte ?? 0)
        let connect = max(t.connectSeconds, t.nameLookupSeconds)
        let sent = context.requestHeaderBlock.map(HTTPExchange.parseRequestHeaderBlock)
        return HTTPExchange(
            url: request.url.absoluteString, method: sent?.method ?? "GET",
            httpVersion: info.httpVersion ?? context.statusLineVersion,
            requestHeaders: sent?.fields ?? [], requestHeaderBytes: context.requestHeaderBlock.map { $0.utf8.count },
            status: status > 0 ? status : nil, statusText: context.statusText,
            responseHeaders: context.responseFields, responseHeaderBytes: context.statusCode == nil ? nil : context.responseHeaderBytes,
            bodyBytesReceived: context.networkBodyBytes, redirectCount: info.redirectCount,
            serverIPAddress: info.primaryIP, localPort: info.localPort,
            timings: HTTPExchange.Timings(
                nameLookupSeconds: t.nameLookupSeconds, connectSeconds: connect,
                tlsSeconds: t.tlsSeconds > 0 ? max(t.tlsSeconds, connect) : 0,
                firstByteSeconds: firstByte, totalSeconds: total))
    }
}

// MARK: - Retry-After

/// Parses Retry-After: delay-seconds or an HTTP-date (IMF-fixdate, RFC 850 or
/// asctime), returning seconds from `now` (never negative).
public func parseRetryAfter(_ value: String, now: Date) -> Double? {
    let trimmed = value.trimmingCharacters(in: .whitespaces)
    if let seconds = Double(trimmed), seconds.isFinite { return max(0, seconds) }
    let formats = ["EEE, dd MMM yyyy HH:mm:ss zzz", "EEEE, dd-MMM-yy HH:mm:ss zzz", "EEE MMM d HH:mm:ss yyyy"]
    for format in formats {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = format
        if let date = formatter.date(from: trimmed) { return max(0, date.timeIntervalSince(now)) }
    }
    return nil
}

// MARK: - Per-transfer state and curl callbacks

/// Why the client stopped a transfer itself.
enum AbortReason: Equatable {
    case cancelled
    case firstByteTimeout(Double)
    case stall(Double)
    case total(Double)
    case tooLarge(Int)
    /// An error status with a long body: stop reading, report the status.
    case errorStatusBodyTooLong
    /// A 200 answer to a range request: the range has been cut out, the rest is not needed.
    case rangeComplete
}

/// State of one transfer, shared with the curl callbacks through an
/// Unmanaged pointer the fetch holds for the transfer's duration. Touched only
/// on the fetching thread (curl calls back from inside curl_multi_perform).
final class TransferContext {
    /// Kept for the error message of an error status; the rest is read and dropped.
    static let errorBodyKeepBytes = 64 << 10

    unowned let client: HTTPClient
    let easy: UnsafeMutableRawPointer
    let clock: any MonotonicClock
    let request: HTTPRequest
    let cancellation: CancellationToken?
    let onProgress: ((ByteProgress) -> Void)?
    let tcpSampleIntervalSeconds: Double

    var startedAt = MonotonicInstant(nanoseconds: 0)
    var firstByteAt: MonotonicInstant?
    var lastByteAt: MonotonicInstant?
    var lastTCPSampleAt: MonotonicInstant?
    var abortReason: AbortReason?
    var curlErrorMessage = ""
    /// CURLOPT_ERRORBUFFER; the handle is reset (forgetting it) before the context goes.
    let errorBuffer: UnsafeMutablePointer<CChar> = {
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        buffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        return buffer
    }()

    var statusCode: Int?
    /// The last status line's reason phrase and protocol ("OK", "HTTP/1.1").
    var statusText = ""
    var statusLineVersion: String?
    var headers: [String: String] = [:]
    /// The final response's headers in order, names as received (`headers` is the lookup table).
    var responseFields: [HTTPExchange.Field] = []
    /// Bytes of the final response's status line and headers.
    var responseHeaderBytes = 0
    /// The last request header block libcurl sent (CURLINFO_HEADER_OUT), request line included.
    var requestHeaderBlock: String?
    var contentLength: Int?
    var body = Data()
    var networkBodyBytes = 0
    var slicingRange = false
    var bodyStarted = false

    init(
        client: HTTPClient, easy: UnsafeMutableRawPointer, clock: any MonotonicClock, request: HTTPRequest,
        cancellation: CancellationToken?, onProgress: ((ByteProgress) -> Void)?, tcpSampleIntervalSeconds: Double
    ) {
        self.client = client
        self.easy = easy
        self.clock = clock
        self.request = request
        self.cancellation = cancellation
        self.onProgress = onProgress
        self.tcpSampleIntervalSeconds = tcpSampleIntervalSeconds
    }

    deinit { errorBuffer.deallocate() }

    /// Checks cancellation and the time limits; records the reason and returns true to abort.
    func checkAbort(now: MonotonicInstant) -> Bool {
        if abortReason != nil { return true }
        if cancellation?.isCancelled == true {
            abortReason = .cancelled
        } else if let total = request.totalTimeoutSeconds, now.seconds(since: startedAt) >= total {
            abortReason = firstByteAt == nil ? .firstByteTimeout(total) : .total(total)
        } else if firstByteAt == nil {
            if now.seconds(since: startedAt) >= request.firstByteTimeoutSeconds {
                abortReason = .firstByteTimeout(request.firstByteTimeoutSeconds)
            }
        } else if let last = lastByteAt, now.seconds(since: last) >= request.stallTimeoutSeconds {
            abortReason = .stall(request.stallTimeoutSeconds)
        }
        return abortReason != nil
    }

    func noteByte(now: MonotonicInstant) {
        if firstByteAt == nil { firstByteAt = now }
        lastByteAt = now
    }

    @discardableResult
    func sampleTCPInfo(now: MonotonicInstant, force: Bool) -> TCPInfoSnapshot? {
        if !force, let last = lastTCPSampleAt, now.seconds(since: last) < tcpSampleIntervalSeconds { return nil }
        lastTCPSampleAt = now
        let fd = hls_curl_active_socket(easy)
        guard fd >= 0 else { return nil }
        var raw = hls_tcp_info_t()
        guard hls_tcp_info(fd, &raw) == 0 else { return nil }
        let snapshot = TCPInfoSnapshot(
            rttSeconds: Double(raw.rttMicros) / 1e6,
            rttVarianceSeconds: Double(raw.rttVarMicros) / 1e6,
            totalRetransmits: Int(raw.totalRetransmits),
            congestionWindowSegments: Int(raw.sendCongestionWindow),
            deliveryRateBytesPerSecond: raw.hasDeliveryRate != 0 ? Double(raw.deliveryRateBytesPerSecond) : nil,
            deliveryRateAppLimited: raw.hasDeliveryRate != 0 ? raw.deliveryRateAppLimited != 0 : nil)
        client.storeTCPInfo(snapshot)
        return snapshot
    }

    /// One header line (curl passes status lines, headers and the blank end line).
    func header(_ line: String) {
        noteByte(now: clock.now())
        let trimmed = line.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("HTTP/") {
            // A new response (after a redirect or a 1xx): start over.
            let parts = trimmed.split(separator: " ", maxSplits: 2)
            statusCode = parts.count > 1 ? Int(parts[1]) : nil
            let parsed = HTTPExchange.parseStatusLine(trimmed)
            statusText = parsed?.reason ?? ""
            statusLineVersion = parsed?.version
            headers = [:]
            responseFields = []
            responseHeaderBytes = line.utf8.count
            contentLength = nil
            return
        }
        responseHeaderBytes += line.utf8.count
        guard let colon = trimmed.firstIndex(of: ":") else { return }
        if let field = HTTPExchange.parseField(trimmed) { responseFields.append(field) }
        let name = trimmed[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
        let value = trimmed[trimmed.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        if let existing = headers[name] { headers[name] = existing + ", " + value } else { headers[name] = value }
        if name == "content-length" { contentLength = Int(value) }
    }

    /// A body chunk; returns false to abort the transfer.
    func write(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let now = clock.now()
        noteByte(now: now)
        let status = statusCode ?? 0
        if !bodyStarted {
            bodyStarted = true
            slicingRange = request.byteRange != nil && status == 200
            if status < 400, !slicingRange, let contentLength, contentLength > request.maxBodyBytes {
                abortReason = .tooLarge(request.maxBodyBytes)
                return false
            }
            // One allocation for the whole body instead of regrowing (and copying) it chunk by chunk.
            if status < 400, !slicingRange, let contentLength, contentLength > 0 { body.reserveCapacity(contentLength) }
        }
        let before = networkBodyBytes
        networkBodyBytes += bytes.count
        onProgress?(ByteProgress(at: now, chunkBytes: bytes.count, totalBytes: networkBodyBytes, expectedBytes: contentLength))
        sampleTCPInfo(now: now, force: false)

        if status >= 400 {
            let room = max(0, Self.errorBodyKeepBytes - body.count)
            body.append(contentsOf: bytes.prefix(room))
            if networkBodyBytes > 4 * Self.errorBodyKeepBytes {
                abortReason = .errorStatusBodyTooLong
                return false
            }
            return true
        }
        if slicingRange, let range = request.byteRange {
            let start = range.firstByte
            let end = range.endByte
            let lo = max(start, before), hi = min(end, networkBodyBytes)
            if lo < hi { body.append(contentsOf: bytes[(lo - before)..<(hi - before)]) }
            if networkBodyBytes >= end {
                abortReason = .rangeComplete
                return false
            }
        } else {
            body.append(contentsOf: bytes)
        }
        if body.count > request.maxBodyBytes {
            abortReason = .tooLarge(request.maxBodyBytes)
            return false
        }
        return true
    }
}

private func transferWriteCallback(
    _ ptr: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
    _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let userdata else { return 0 }
    let context = Unmanaged<TransferContext>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    guard length > 0, let ptr else { return length }
    return context.write(UnsafeRawBufferPointer(start: ptr, count: length)) ? length : 0
}

private func transferHeaderCallback(
    _ ptr: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int,
    _ userdata: UnsafeMutableRawPointer?
) -> Int {
    guard let userdata else { return 0 }
    let context = Unmanaged<TransferContext>.fromOpaque(userdata).takeUnretainedValue()
    let length = size * count
    guard length > 0, let ptr else { return length }
    let line = String(decoding: UnsafeRawBufferPointer(start: ptr, count: length), as: UTF8.self)
    context.header(line)
    return length
}

private func transferDebugCallback(
    _ handle: UnsafeMutableRawPointer?, _ type: curl_infotype, _ data: UnsafeMutablePointer<CChar>?,
    _ size: Int, _ userptr: UnsafeMutableRawPointer?
) -> Int32 {
    // Only the request headers are kept; the rest of the verbose stream (text, body bytes) is dropped.
    guard type == CURLINFO_HEADER_OUT, let userptr, let data, size > 0 else { return 0 }
    let context = Unmanaged<TransferContext>.fromOpaque(userptr).takeUnretainedValue()
    context.requestHeaderBlock = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
    return 0
}

private func transferProgressCallback(
    _ clientp: UnsafeMutableRawPointer?, _ dltotal: curl_off_t, _ dlnow: curl_off_t,
    _ ultotal: curl_off_t, _ ulnow: curl_off_t
) -> Int32 {
    guard let clientp else { return 0 }
    let context = Unmanaged<TransferContext>.fromOpaque(clientp).takeUnretainedValue()
    let now = context.clock.now()
    if context.checkAbort(now: now) { return 1 }
    if context.firstByteAt != nil { context.sampleTCPInfo(now: now, force: false) }
    return 0
}
