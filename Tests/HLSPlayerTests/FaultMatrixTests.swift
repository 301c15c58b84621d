import Foundation
import HLSCore
import HLSOrigin
import Testing
import TestSupport

// The fault matrix (issue 7): every fault hls-origin can inject × when it strikes × VOD or live,
// each case a real hlsplay run against an in-process origin on loopback. Every case must end in
// recovery (the session plays its --duration) or in a clear fatal error, within a bounded time,
// with a valid session log ending in a summary — and show the evidence of how it recovered.
// docs/fault-matrix.md is this matrix's output (Tools/characterize/fault-matrix.sh regenerates it).

/// A fault hls-origin can inject (`FaultAction`, plus the time-scripted link collapse and stale playlist).
enum MatrixFault: String, CaseIterable, Sendable {
    case notFound404 = "404"
    case serverError500 = "500"
    case unavailable503 = "503 + Retry-After: 1"
    case blackHole = "black hole"
    case stalledBody = "body stalls 2.5 s"
    case stalledForever = "body stalls forever"
    case reset = "TCP reset"
    case truncated = "truncated body"
    case slowFirstByte = "first byte 2.5 s late"
    case linkCollapse = "link collapse 2.5 s"
    case stalePlaylist = "stale playlist 6 s"
    /// 188 bytes (one TS packet) every 0.5 s: bytes never stop, so no timeout fires (trickle rule).
    case trickle = "body trickles 188 B / 0.5 s"
    /// The live window never advances again (the live resync policy's restarts, then give-up).
    case stalePlaylistForever = "stale playlist forever"

    /// Body bytes sent before a stall or truncation: fewer than any playlist or segment holds.
    static let partialBodyBytes = 100
    /// How long a slow-but-healthy fault holds bytes back, seconds: half a second (two monitor
    /// ticks) under the 3 s minimum wedge window (`ByteProgressClassifier`), so it is waited for.
    /// At exactly 3 s, whether a monitor tick or the late bytes came first was a race.
    static let delaySeconds = 2.5

    var action: FaultAction? {
        switch self {
        case .notFound404: .status(code: 404, retryAfterSeconds: nil)
        case .serverError500: .status(code: 500, retryAfterSeconds: nil)
        case .unavailable503: .status(code: 503, retryAfterSeconds: 1)
        case .blackHole: .blackHole
        case .stalledBody: .stallAfterBytes(bytes: Self.partialBodyBytes, seconds: Self.delaySeconds)
        case .stalledForever: .stallAfterBytes(bytes: Self.partialBodyBytes, seconds: nil)
        case .reset: .resetConnection
        case .truncated: .truncateAfterBytes(bytes: Self.partialBodyBytes)
        case .slowFirstByte: .slowFirstByte(seconds: Self.delaySeconds)
        case .trickle: .trickle(bytes: 188, everySeconds: 0.5)
        case .linkCollapse, .stalePlaylist, .stalePlaylistForever: nil
        }
    }
}

/// When the fault strikes. Request faults hit exactly one request (`requestIndex: 0` of the pattern).
enum MatrixWhen: String, CaseIterable, Sendable {
    /// For the time-scripted faults (collapse, stale playlist): in force from server start.
    case atStart = "startup: from 0 s"
    case startupMultivariant = "startup: multivariant playlist"
    case startupMediaPlaylist = "startup: first media playlist"
    case startupSegment = "startup: first segment"
    case midPlay = "mid-play: first segment after 3 s"
    case liveReload = "live reload: first media playlist reload after 3 s"
    /// A persistent fault: every segment request from 3 s on (retries exhausted, or abandoned on every rung).
    case everySegment = "persistent: every segment after 3 s"

    /// Server seconds after which mid-play and reload faults fire (playback started well before).
    static let midPlayAtSeconds = 3.0

    /// The request faults of this row hit: the first request matching `path` (after `afterSeconds`).
    var pattern: (path: String, afterSeconds: Double?) {
        switch self {
        case .atStart: ("", nil)
        case .startupMultivariant: ("/master.m3u8", nil)
        case .startupMediaPlaylist: ("/v*/prog.m3u8", nil)
        case .startupSegment: ("*.ts", nil)
        case .midPlay: ("*.ts", Self.midPlayAtSeconds)
        case .liveReload: ("/v*/prog.m3u8", Self.midPlayAtSeconds)
        case .everySegment: ("*.ts", Self.midPlayAtSeconds)
        }
    }
}

enum MatrixContent: String, CaseIterable, Sendable {
    case vod = "VOD"
    case live = "live"
}

/// What a case must end in.
enum MatrixExpectation: Sendable, Equatable {
    /// Played its --duration; the log shows this evidence of the fault being handled.
    case recovers(MatrixEvidence)
    /// Ended with this exit status, error category and a message naming the failure.
    case fails(status: Int32, category: String, message: String)
}

/// How a recovery shows in the session log.
enum MatrixEvidence: String, Sendable {
    /// A `request.retry` after a failed attempt (with the fault's error kind).
    case retry
    /// A `request.byteProgress` wedge verdict and a re-request on a fresh connection.
    case wedgeReRequest
    /// The fault only delayed a response: no failed request, the session just waited for it.
    case waited
    /// A live playlist reload that did not advance, then one that did.
    case liveReloadWaited
    /// The origin saw the request again after the reset (libcurl re-sends on its own when a reused
    /// connection dies before the response; a fresh one fails as `truncatedBody` and is retried).
    case resent
    /// A trickling fetch was given up on by a verdict: abandoned for a lower rung (over-selected, or
    /// `request.trickle` abandon-lower) or re-requested on a fresh connection (`request.trickle`).
    case trickleJudged
}

struct FaultCase: Sendable, CustomTestStringConvertible {
    var fault: MatrixFault
    var when: MatrixWhen
    var content: MatrixContent
    var expected: MatrixExpectation

    var id: String { "\(content.rawValue) | \(when.rawValue) | \(fault.rawValue)" }
    var testDescription: String { id }

    /// Played media asked of most cases (`--duration`): enough to see playback go on after a mid-play fault.
    static let defaultDurationSeconds = 8.0
    /// Cases whose recovery takes longer play longer: a live reload that waits out the 10 s first-byte or
    /// stall timeout, and the stale window (3 s to 9 s).
    var durationSeconds: Double {
        switch (when, fault) {
        case (.liveReload, .blackHole), (.liveReload, .stalledForever): 20
        case (.liveReload, .stalePlaylist), (.atStart, .stalePlaylist): 14
        // Long enough that only the abandon limit can end it (each abandon costs two wedge windows).
        case (.everySegment, .blackHole): 90
        // Long enough that the trickle verdicts, not --duration, end it (the buffer lasts past 8 s).
        case (.everySegment, .trickle): 30
        // Long enough that only the live resync policy (a resync and 3 restarts that hold, 42 s after the
        // stall) or the no-progress watchdog (60 s after the last new media) can end it.
        case (.liveReload, .stalePlaylistForever): 150
        default: Self.defaultDurationSeconds
        }
    }
    /// VOD keeps fetching while it plays (otherwise the whole 30 s ladder is buffered in the first second).
    static let vodForwardBufferSeconds = 6.0
    /// Caps the rung at 720p: the decode stays cheap with several cases running at once, and two rungs stay below.
    static let peakBitrate = "4m"

    /// Generous upper bound on a case's wall time: a hang or an unbounded retry loop exceeds it.
    var wallBoundSeconds: Double {
        switch expected {
        case .recovers: return durationSeconds + 30
        case .fails:
            if fault == .stalePlaylistForever { return 110 }
            return when == .everySegment && fault == .blackHole ? 100 : 60
        }
    }

    func originConfiguration(requestLog: URL) -> OriginConfiguration {
        var config = OriginConfiguration(requestLogURL: requestLog)
        if content == .live { config.live = LiveConfiguration(windowSegments: 6) }
        switch fault {
        case .linkCollapse:
            let at = when == .midPlay ? MatrixWhen.midPlayAtSeconds : 0
            config.linkCollapses = [LinkCollapse(atSeconds: at, durationSeconds: MatrixFault.delaySeconds)]
        case .stalePlaylist:
            let at = when == .liveReload ? MatrixWhen.midPlayAtSeconds : 0
            config.live?.stalePlaylists = [StalePlaylist(atSeconds: at, durationSeconds: 6)]
        case .stalePlaylistForever:
            config.live?.stalePlaylists = [StalePlaylist(atSeconds: MatrixWhen.midPlayAtSeconds, durationSeconds: 100_000)]
        default:
            let p = when.pattern
            config.faults = [
                FaultRule(
                    pathPattern: p.path, requestIndex: when == .everySegment ? nil : 0,
                    afterSeconds: p.afterSeconds, action: fault.action!)
            ]
        }
        return config
    }

    var arguments: [String] {
        var a = ["--headless", "--json", "--no-status", "--duration", "\(durationSeconds)", "--peak-bitrate", Self.peakBitrate]
        if content == .vod { a += ["--forward-buffer", "\(Self.vodForwardBufferSeconds)"] }
        return a
    }
}

extension FaultCase {
    /// The whole matrix, with what each case must end in (from the retry policy, the wedge detector and
    /// the live reload rules; see docs/fault-matrix.md for the why of each).
    static let all: [FaultCase] = {
        var cases: [FaultCase] = []
        for content in MatrixContent.allCases {
            for fault in MatrixFault.allCases {
                let whens: [MatrixWhen]
                switch fault {
                case .linkCollapse: whens = [.atStart, .midPlay]
                case .stalePlaylist: whens = content == .live ? [.atStart, .liveReload] : []
                case .stalePlaylistForever: whens = content == .live ? [.liveReload] : []
                default:
                    whens = MatrixWhen.allCases.filter { w in
                        switch w {
                        case .atStart: false
                        case .liveReload: content == .live
                        // Persistent: the retry limit (500), the abandon limit (black hole), the trickle
                        // rule's fail verdict, and live 404s.
                        case .everySegment:
                            fault == .serverError500 || fault == .blackHole || fault == .trickle
                                || (fault == .notFound404 && content == .live)
                        default: true
                        }
                    }
                }
                for when in whens {
                    cases.append(FaultCase(fault: fault, when: when, content: content, expected: expectation(fault, when, content)))
                }
            }
        }
        return cases
    }()

    /// The cases to run: all of them, or those whose id (`content | when | fault`, as in the table)
    /// matches the regular expression in `FAULT_MATRIX_CASES` — e.g. `FAULT_MATRIX_CASES='^live .*stale'`
    /// (swift test's --filter cannot pick arguments of a parameterized test).
    static let selected: [FaultCase] = {
        guard let pattern = ProcessInfo.processInfo.environment["FAULT_MATRIX_CASES"], !pattern.isEmpty else { return all }
        return all.filter { $0.id.range(of: pattern, options: .regularExpression) != nil }
    }()

    static func expectation(_ fault: MatrixFault, _ when: MatrixWhen, _ content: MatrixContent) -> MatrixExpectation {
        let playlist = when == .startupMultivariant || when == .startupMediaPlaylist || when == .liveReload
        switch fault {
        case .notFound404:
            // VOD: a missing file will not appear; at startup it is not yet known to be live. A live
            // reload or live segment 404 may be content not yet on this server: retried.
            if when == .everySegment { return .fails(status: 69, category: "network", message: "4 of 4 attempts failed") }
            if content == .vod || when == .startupMultivariant || when == .startupMediaPlaylist {
                return .fails(status: 69, category: "network", message: "HTTP 404")
            }
            return .recovers(.retry)
        case .serverError500:
            if when == .everySegment { return .fails(status: 69, category: "network", message: "4 of 4 attempts failed") }
            return .recovers(.retry)
        case .unavailable503, .truncated:
            return .recovers(.retry)
        case .reset:
            return .recovers(.resent)
        case .blackHole:
            // VOD: the segment's abandon limit. Live: the stall outlasts the live resync policy's
            // resync and restarts first (docs/startup-cap.md §5), which then gives up.
            if when == .everySegment {
                return .fails(status: 69, category: "network", message: content == .live ? "live stream lost" : "wedged or abandoned")
            }
            // Playlists wait out the first-byte timeout; segments are caught by the wedge detector.
            return .recovers(playlist ? .retry : .wedgeReRequest)
        case .stalledForever:
            return .recovers(playlist ? .retry : .wedgeReRequest)
        case .stalledBody, .slowFirstByte, .linkCollapse:
            return .recovers(.waited)
        case .stalePlaylist:
            return .recovers(.liveReloadWaited)
        case .trickle:
            // Down to the lowest rung, re-requested once, then failed with the projection.
            if when == .everySegment { return .fails(status: 69, category: "network", message: "trickled") }
            // A playlist (≈ 600 bytes) is in after four pieces, under the judging age (the 3 s wedge window).
            if playlist { return .recovers(.waited) }
            return .recovers(.trickleJudged)
        case .stalePlaylistForever:
            // The window's segments play; a resync has nothing newer to jump to and holds (it used to
            // jump back and replay them until the no-progress watchdog ended it); the restarts find the
            // playlist still frozen and the policy gives up, naming the stale playlist.
            return .fails(status: 69, category: "network", message: "the live playlist did not change over")
        }
    }
}

/// At most `FAULT_MATRIX_PARALLEL` (default 8) cases run at once: they mostly wait in real time.
actor MatrixLimiter {
    static let shared = MatrixLimiter(slots: Int(ProcessInfo.processInfo.environment["FAULT_MATRIX_PARALLEL"] ?? "") ?? 8)
    private var free: Int
    private var waiters: [CheckedContinuation<Void, Never>] = []
    init(slots: Int) { free = max(1, slots) }
    func acquire() async {
        if free > 0 { free -= 1; return }
        await withCheckedContinuation { waiters.append($0) }
    }
    func release() {
        if waiters.isEmpty { free += 1 } else { waiters.removeFirst().resume() }
    }
}

/// One case's run and what the origin logged, handed back from its own thread.
struct MatrixRun: @unchecked Sendable {
    var run: Run
    var origin: [RequestLogEntry]
    var wallSeconds: Double
}

/// Runs blocking work on its own thread, so waiting cases do not hold Swift concurrency's few threads.
func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread { continuation.resume(with: Result { try body() }) }
        thread.start()
    }
}

/// What the session log says about a case: the figures of its row in docs/fault-matrix.md.
struct MatrixFindings {
    var outcome: String
    var faultAtSeconds: Double?
    var recoverySeconds: Double?
    var errorAfterSeconds: Double?
    var evidence: [String]
    var retries: [[String: Any]]
    var wedges: Int
    var stalls: Int
    var fatal: [String: Any]?
    /// Failed attempts, leaving out the cancels of a session that was ending anyway (wedge aborts show as byteProgress).
    var failedRequests: [[String: Any]]
    /// Requests the origin received for the path (and query) of the first faulted request.
    var originRequestsForFaultedPath: Int

    init(_ c: FaultCase, _ m: MatrixRun) {
        let run = m.run
        let summary = run.summary ?? [:]
        // Align the origin's clock with the session's: the first request's start vs its arrival.
        let firstStart = run.events("request.start").first?["t"] as? Double ?? 0
        let offset = (m.origin.first?.accepted ?? 0) - firstStart
        let faulted = m.origin.filter { $0.fault != nil }
        var onsetServer = faulted.first?.accepted
        var clearedServer = faulted.last?.accepted
        if c.fault == .linkCollapse {
            let at = c.when == .midPlay ? MatrixWhen.midPlayAtSeconds : 0
            onsetServer = at
            clearedServer = at + MatrixFault.delaySeconds
        }
        faultAtSeconds = onsetServer.map { max(0, $0 - offset) }
        let cleared = clearedServer.map { max(0, $0 - offset) }
        fatal = run.events("error").first { $0["fatal"] as? Bool == true }
        retries = run.events("request.retry")
        wedges = run.events("request.byteProgress").count
        stalls = summary["stallCount"] as? Int ?? 0
        let reason = summary["exitReason"] as? String ?? "?"
        outcome = reason == "error" ? "fatal (\(fatal?["category"] as? String ?? "?"))" : "recovered (\(reason))"
        if let at = faultAtSeconds {
            if let f = fatal, let t = f["t"] as? Double {
                errorAfterSeconds = t - at
            } else if let cleared,
                let next = run.events("segment.buffered").first(where: { ($0["t"] as? Double ?? 0) > cleared }),
                let t = next["t"] as? Double
            {
                recoverySeconds = t - at
            }
        }
        var evidence: [String] = []
        let failed = run.events("request.end").filter { $0["ok"] as? Bool == false && $0["errorKind"] as? String != "cancelled" }
        failedRequests = failed
        originRequestsForFaultedPath = faulted.first.map { f in m.origin.filter { $0.path == f.path && $0.query == f.query }.count } ?? 0
        if c.fault == .reset, originRequestsForFaultedPath > 1 {
            evidence.append("origin: the reset request was sent again (\(originRequestsForFaultedPath) requests)")
        }
        if !failed.isEmpty {
            let kinds = failed.map { e in
                "\(e["purpose"] as? String ?? "?") \(e["errorKind"] as? String ?? "?")\((e["status"] as? Int).map { " \($0)" } ?? "")"
            }
            evidence.append("failed: " + Self.counted(kinds))
        }
        if !retries.isEmpty {
            let kinds = retries.map { r in "\(r["errorKind"] as? String ?? "?") after \(Self.seconds(r["delaySeconds"] as? Double ?? 0))" }
            evidence.append("request.retry: " + Self.counted(kinds))
        }
        if wedges > 0 {
            let verdicts = run.events("request.byteProgress").map { ($0["assessment"] as? [String: Any])?["verdict"] as? String ?? "?" }
            evidence.append("request.byteProgress: " + Self.counted(verdicts))
        }
        let trickles = run.events("request.trickle").map { ($0["assessment"] as? [String: Any])?["verdict"] as? String ?? "?" }
        if !trickles.isEmpty { evidence.append("request.trickle: " + Self.counted(trickles)) }
        if let watchdog = run.events("session.noProgress").first {
            evidence.append(String(format: "session.noProgress: %.0f s without new media", watchdog["secondsWithoutProgress"] as? Double ?? 0))
        }
        let downs = run.events("abr.switch").filter { ($0["toBandwidthBps"] as? Int ?? 0) < ($0["fromBandwidthBps"] as? Int ?? 0) }
        if !downs.isEmpty {
            evidence.append(
                "abr.switch down: " + downs.map { "v\($0["fromVariantIndex"] ?? "?")→v\($0["toVariantIndex"] ?? "?")" }.joined(separator: ", "))
        }
        let nonFatal = run.events("error").filter { $0["fatal"] as? Bool == false && $0["category"] as? String != "ffmpeg" }
        if !nonFatal.isEmpty {
            evidence.append(
                "error (non-fatal): "
                    + Self.counted(nonFatal.map { "\($0["category"] as? String ?? "?"): \(Self.short($0["message"] as? String ?? ""))" }))
        }
        let unchanged = run.events("playlist.loaded").filter { $0["kind"] as? String == "media" && $0["changed"] as? Bool == false }
        if !unchanged.isEmpty { evidence.append("media playlist reloads unchanged: \(unchanged.count)") }
        if stalls > 0 {
            evidence.append(String(format: "stalls: %d (%.1f s)", stalls, summary["stallSeconds"] as? Double ?? 0))
        }
        if let f = fatal { evidence.append("fatal \(f["category"] as? String ?? "?"): \(Self.short(f["message"] as? String ?? "", 150))") }
        if evidence.isEmpty { evidence.append("none: the fault only delayed a response") }
        self.evidence = evidence
    }

    static func counted(_ xs: [String]) -> String {
        var order: [String] = []
        var n: [String: Int] = [:]
        for x in xs {
            if n[x] == nil { order.append(x) }
            n[x, default: 0] += 1
        }
        return order.map { n[$0]! > 1 ? "\($0) ×\(n[$0]!)" : $0 }.joined(separator: "; ")
    }

    static func seconds(_ s: Double) -> String { String(format: "%.2g s", s) }

    /// A message without the loopback port (differs per run), cut at `limit` characters.
    static func short(_ s: String, _ limit: Int = 90) -> String {
        let noPort = s.replacingOccurrences(of: #"http://127\.0\.0\.1:\d+"#, with: "", options: .regularExpression)
        return noPort.count > limit ? String(noPort.prefix(limit)) + "…" : noPort
    }
}

@Suite(.tags(.realTime)) struct FaultMatrixTests {
    @Test(arguments: FaultCase.selected)
    func faultCase(_ c: FaultCase) async throws {
        let samples = try Repo.requireSamples("ladder-2s")
        await MatrixLimiter.shared.acquire()
        let m: MatrixRun
        do {
            m = try await onOwnThread { try Self.play(c, samples: samples) }
            await MatrixLimiter.shared.release()
        } catch {
            await MatrixLimiter.shared.release()
            throw error
        }
        let run = m.run
        let findings = MatrixFindings(c, m)
        Self.report(c, m, findings)

        // Every case: a valid log ending in a summary, within a bounded time, and exit status = exit reason.
        expectValidLog(run)
        let summary = try #require(run.summary)
        #expect(m.wallSeconds < c.wallBoundSeconds, "bounded: \(m.wallSeconds) s")
        #expect(m.origin.contains { $0.fault != nil } || c.fault == .linkCollapse, "the fault was injected")
        #expect(summary["requests"] as? Int == run.events("request.end").count)
        if c.when == .midPlay || c.when == .liveReload || c.when == .everySegment,
            let started = run.events("playback.started").first?["t"] as? Double, let at = findings.faultAtSeconds
        {
            #expect(started < at, "the fault struck after playback started (\(started) s), at \(at) s")
        }
        // The request-rate bound: however the fault drives the loader, no kind of request outpaces it (counted by the origin).
        for (kind, count) in Self.originRequestsByKind(m.origin) {
            let allowed = RequestRateRules.limit(for: kind, inputs: Self.ladderRateInputs).maximumRequests(inSeconds: m.wallSeconds)
            #expect(count <= allowed + Self.resendSlack, "\(count) \(kind) requests in \(m.wallSeconds) s; the bound allows \(allowed)")
        }
        switch c.expected {
        case .recovers(let evidence):
            #expect(run.status == 0, "stderr: \(run.stderr)")
            #expect(summary["exitReason"] as? String == "durationReached")
            #expect((summary["playedSeconds"] as? Double ?? 0) >= c.durationSeconds)
            #expect(findings.fatal == nil)
            #expect(findings.recoverySeconds != nil, "media flowed again after the fault")
            switch evidence {
            case .retry:
                #expect(!findings.retries.isEmpty, "a request.retry: \(findings.evidence)")
            case .wedgeReRequest:
                #expect(findings.wedges > 0, "a wedge verdict: \(findings.evidence)")
                #expect(findings.retries.contains { $0["delaySeconds"] as? Double == 0 }, "an immediate re-request: \(findings.evidence)")
            case .waited:
                #expect(findings.failedRequests.isEmpty, "no failed request: \(findings.evidence)")
            case .liveReloadWaited:
                #expect(run.events("playlist.loaded").contains { $0["changed"] as? Bool == false }, "an unchanged reload: \(findings.evidence)")
            case .resent:
                #expect(findings.originRequestsForFaultedPath >= 2, "the origin saw the request again: \(findings.evidence)")
            case .trickleJudged:
                let overSelected = run.events("request.byteProgress").contains {
                    ($0["assessment"] as? [String: Any])?["verdict"] as? String == "over-selected"
                }
                let trickle = run.events("request.trickle").contains { ($0["assessment"] as? [String: Any])?["verdict"] as? String != "healthy" }
                #expect(overSelected || trickle, "an over-selection or trickle verdict: \(findings.evidence)")
            }
        case .fails(let status, let category, let message):
            #expect(run.status == status, "stderr: \(run.stderr)")
            #expect(summary["exitReason"] as? String == "error")
            let fatal = try #require(findings.fatal)
            #expect(fatal["category"] as? String == category)
            #expect((fatal["message"] as? String ?? "").contains(message), "message: \(fatal["message"] ?? "-")")
            #expect(run.stderr.contains("hlsplay: error:"), "a clear message on stderr: \(run.stderr)")
        }
    }

    /// The request-rate bound's inputs for ladder-2s (target duration 2, 2 s segments), with the largest
    /// forward-buffer target the policy sets (the most generous segment burst).
    static let ladderRateInputs = RequestRateInputs(targetDurationSeconds: 2, meanSegmentDurationSeconds: 2, forwardBufferTargetSeconds: 60)
    /// Requests the origin may see that the player never paced: libcurl's own re-send of a request whose reused
    /// connection died before the response (the TCP reset cases). Count.
    static let resendSlack = 2

    /// The origin's requests by the kind the bound counts: playlists and segments (ladder-2s has no parts).
    static func originRequestsByKind(_ origin: [RequestLogEntry]) -> [(PacedRequestKind, Int)] {
        [(.playlist, origin.filter { $0.path.hasSuffix(".m3u8") }.count), (.segment, origin.filter { $0.path.hasSuffix(".ts") }.count)]
    }

    static func play(_ c: FaultCase, samples: URL) throws -> MatrixRun {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-matrix-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let requestLog = dir.appendingPathComponent("requests.jsonl")
        let started = Date()
        let run = try withOrigin(samples, configuration: c.originConfiguration(requestLog: requestLog)) { server in
            try runHlsplay(
                [server.baseURL.appendingPathComponent("master.m3u8").absoluteString] + c.arguments,
                timeoutSeconds: c.wallBoundSeconds + 15)
        }
        let wall = Date().timeIntervalSince(started)
        return MatrixRun(run: run, origin: (try? readRequestLog(requestLog)) ?? [], wallSeconds: wall)
    }

    /// Appends the case's row to `$FAULT_MATRIX_REPORT` (JSON Lines; Tools/characterize/fault-matrix.py renders it).
    static func report(_ c: FaultCase, _ m: MatrixRun, _ f: MatrixFindings) {
        guard let path = ProcessInfo.processInfo.environment["FAULT_MATRIX_REPORT"] else { return }
        let expected: String
        switch c.expected {
        case .recovers(let e): expected = "recovers (\(e.rawValue))"
        case .fails(let s, let cat, _): expected = "fails (\(cat), exit \(s))"
        }
        var row: [String: Any] = [
            "content": c.content.rawValue, "when": c.when.rawValue, "fault": c.fault.rawValue, "expected": expected,
            "outcome": f.outcome, "exitStatus": Int(m.run.status), "wallSeconds": m.wallSeconds,
            "evidence": f.evidence, "stalls": f.stalls,
            "test": "FaultMatrixTests/faultCase(_:) \"\(c.id)\""
        ]
        row["faultAtSeconds"] = f.faultAtSeconds
        row["playbackStartedSeconds"] = m.run.events("playback.started").first?["t"] as? Double
        row["recoverySeconds"] = f.recoverySeconds
        row["errorAfterSeconds"] = f.errorAfterSeconds
        row["exitReason"] = m.run.summary?["exitReason"] as? String
        guard let data = try? JSONSerialization.data(withJSONObject: row, options: [.sortedKeys]) else { return }
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let line = data + Data("\n".utf8)
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } // one O_APPEND write: rows never interleave
    }
}
