// hlsplay: a headless reference HLS player.

import Foundation
import HLSCore
import HLSOrigin
import HLSPlayer

// First: a closed stdin/stdout/stderr gets /dev/null before any file is opened; SIGPIPE is ignored.
StandardStreams.guardAtStart()
// A file-size limit (ulimit -f) makes a log write fail with EFBIG, reported like a full disk, instead of killing the process.
signal(SIGXFSZ, SIG_IGN)

/// What every message, summary and file goes through: URLs redacted unless --no-redact.
let outgoing = StandardStreams.outgoing

/// One line on stderr, redacted and with control characters made visible.
func say(_ message: String) {
    Console.error("hlsplay: \(message)", text: outgoing)
}

func fail(_ message: String, status: Int32) -> Never {
    say(message)
    exit(status)
}

// Subcommands.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "check" {
    exit(CheckCommand.run(Array(CommandLine.arguments.dropFirst(2))))
}
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "report" {
    exit(ReportCommand.run(Array(CommandLine.arguments.dropFirst(2))))
}
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "simulate" {
    exit(SimulateCommand.run(Array(CommandLine.arguments.dropFirst(2))))
}

// Initialised in one expression: the functions below read these globals, and a
// global whose initialisation is deferred to later top-level statements is not
// safely visible from a function.
let arguments: Arguments = {
    do {
        return try Arguments.parse(Array(CommandLine.arguments.dropFirst()))
    } catch let error as UsageError {
        say(error.message)
        Console.error("Try 'hlsplay --help'.", text: outgoing)
        exit(64)
    } catch {
        fail("\(error)", status: 64)
    }
}()
if arguments.help {
    StandardStreams.print(Arguments.usage)
    exit(0)
}
if arguments.version {
    StandardStreams.print("hlsplay \(hlsplayVersion)")
    exit(0)
}
if StandardStreams.stdoutWasClosed {
    fail(
        "standard output is closed, so the summary could not be written; nothing was played "
            + "(redirect it to /dev/null to discard the summary)", status: StandardStreams.outputFailedStatus)
}
if arguments.insecure {
    say("warning: --insecure: TLS certificates and host names are not verified")
}

/// A URL from the command line: http(s), file://, or a local path.
func parseURL(_ given: String) -> URL {
    if given.contains("://") {
        guard let u = URL(string: given), let scheme = u.scheme?.lowercased(), ["http", "https", "file"].contains(scheme) else {
            fail("'\(given)' is not an http, https or file URL", status: 64)
        }
        // `http:///etc/passwd`: nothing to connect to (curl would take a host from the path and look it up).
        if scheme != "file", (u.host ?? "").isEmpty {
            fail("'\(given)' is not a usable \(scheme) URL: it has no host", status: 64)
        }
        return u
    }
    guard FileManager.default.fileExists(atPath: given) else { fail("no such file '\(given)'", status: 64) }
    return URL(fileURLWithPath: given)
}

/// FILE.jsonl → FILE-2.jsonl: where the --then session's outputs go.
func secondPath(_ path: String?) -> String? {
    guard let path else { return nil }
    let url = URL(fileURLWithPath: path)
    let ext = url.pathExtension
    let stem = url.deletingPathExtension().path
    return ext.isEmpty ? stem + "-2" : stem + "-2." + ext
}

// The URL, or the embedded default: the sample ladder from a loopback origin.
var origin: OriginServer?
let url: URL
if let given = arguments.url {
    url = parseURL(given)
} else {
    guard let samples = SampleLocator.defaultLadder() else {
        fail(
            "the embedded sample ladder was not found: give a URL, or run Samples/make-all.sh in a checkout (then make install "
                + "copies it to PREFIX/\(SampleLocator.installedLadderPath)), or set HLSPLAY_SAMPLES", status: 69)
    }
    let server = OriginServer(root: samples)
    do {
        _ = try server.start(port: 0)
    } catch {
        fail("cannot start the loopback origin: \(error)", status: 69)
    }
    origin = server
    url = server.baseURL.appendingPathComponent("master.m3u8")
    if !arguments.json {
        say("no URL given; playing the embedded sample ladder from \(url.absoluteString)")
    }
}
let thenURL = arguments.thenURL.map(parseURL)

// The estimate store is replaced with a temp file + rename when the session ends: a path that
// could never take it is an error now, not a lost estimate later (nor a device node replaced).
if let path = arguments.estimateStorePath {
    var st = stat()
    let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
    if stat(path, &st) == 0, (st.st_mode & S_IFMT) != S_IFREG {
        fail("cannot write the estimate store \(path): not a regular file", status: 73)
    }
    // The directory is created when missing: check the nearest one that exists.
    var existing = URL(fileURLWithPath: directory)
    while !FileManager.default.fileExists(atPath: existing.path) && existing.path != "/" { existing.deleteLastPathComponent() }
    if access(existing.path, W_OK) != 0 {
        fail("cannot write the estimate store \(path): \(existing.path): \(String(cString: strerror(errno)))", status: 73)
    }
}

func makeConfiguration(_ url: URL) -> PlayerConfiguration { arguments.configuration(for: url) }

let statusLine = arguments.status ?? (isatty(STDERR_FILENO) == 1)

/// The sessions being played, for the signal handlers.
final class CurrentSession: @unchecked Sendable {
    private let lock = NSLock()
    private var sessions: [ObjectIdentifier: PlayerSession] = [:]
    private var interrupted = false
    /// The signal that ended the sessions: SIGINT or SIGTERM.
    private var signal: Int32?
    func add(_ s: PlayerSession) {
        let stopNow = lock.withLock {
            sessions[ObjectIdentifier(s)] = s; return interrupted
        }
        if stopNow { s.stop(reason: .interrupted) }
    }
    func remove(_ s: PlayerSession) {
        lock.withLock { sessions[ObjectIdentifier(s)] = nil }
    }
    func interrupt(by signal: Int32) {
        let all = lock.withLock {
            interrupted = true
            if self.signal == nil { self.signal = signal }
            return Array(sessions.values)
        }
        for s in all { s.stop(reason: .interrupted) }
    }
    var wasInterrupted: Bool { lock.withLock { interrupted } }
    /// The exit status of an interrupted run: 128 + the signal's number (130 SIGINT, 143 SIGTERM).
    var interruptedStatus: Int32 { lock.withLock { 128 + (signal ?? SIGINT) } }
}
let current = CurrentSession()

// SIGINT/SIGTERM end the session cleanly (summary written), exit 130/143; a second one exits at once.
signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)
let signalQueue = DispatchQueue(label: "hlsplay.signals")
nonisolated(unsafe) var interrupts = 0
func onSignal(_ number: Int32) {
    interrupts += 1
    if interrupts > 1 { _exit(128 + number) }
    current.interrupt(by: number)
}
let sigint = DispatchSource.makeSignalSource(signal: SIGINT, queue: signalQueue)
sigint.setEventHandler { onSignal(SIGINT) }
sigint.resume()
let sigterm = DispatchSource.makeSignalSource(signal: SIGTERM, queue: signalQueue)
sigterm.setEventHandler { onSignal(SIGTERM) }
sigterm.resume()

/// Plays one session; returns its exit status.
func play(_ url: URL, logPath: String?, harPath: String?) -> Int32 {
    let session: PlayerSession
    do {
        session = try PlayerSession(configuration: makeConfiguration(url), logPath: logPath, harPath: harPath, statusLine: statusLine)
    } catch {
        fail("\(error)", status: 73)
    }
    current.add(session)
    let summary = session.run()
    current.remove(session)
    let printed = StandardStreams.printSummary(summary, json: arguments.json, logOnStandardOutput: logPath == "-")
    var status: Int32
    switch summary.exitReason {
    case .completed, .durationReached: status = 0
    case .interrupted: status = current.interruptedStatus
    case .error:
        say("error: \(summary.error ?? "unknown error")")
        switch session.failureCategory {
        case "playlist", "media": status = 65
        case "network": status = 69
        case "no-progress": status = 75
        default: status = 70
        }
    }
    if session.logWriteFailed {
        say("an output file is incomplete: a write failed (disk full?), see above")
        status = StandardStreams.outputFailedStatus
    }
    if !printed { status = StandardStreams.outputFailedStatus }
    return status
}

/// FILE.jsonl → FILE-i.jsonl for session i of many.
func numberedPath(_ path: String?, _ i: Int) -> String? {
    guard let path else { return nil }
    let u = URL(fileURLWithPath: path)
    return u.pathExtension.isEmpty ? u.path + "-\(i)" : u.deletingPathExtension().path + "-\(i)." + u.pathExtension
}

/// Runs N sessions at once (each with its own estimator, buffer, clock and
/// log), staggered over --ramp, and prints the aggregate summary.
func playMany(_ url: URL, count: Int) -> Int32 {
    PlayerSession.routeFFmpegLog = false
    let started = Date()
    let group = DispatchGroup()
    let lock = NSLock()
    nonisolated(unsafe) var summaries: [SessionSummary] = []
    nonisolated(unsafe) var createFailure: String?
    for i in 1...count {
        if current.wasInterrupted { break }
        let delay = arguments.rampSeconds * Double(i - 1) / Double(count)
        let wait = delay - Date().timeIntervalSince(started)
        if wait > 0 { Thread.sleep(forTimeInterval: wait) }
        let session: PlayerSession
        do {
            session = try PlayerSession(
                configuration: makeConfiguration(url), logPath: numberedPath(arguments.logPath, i),
                harPath: numberedPath(arguments.harPath, i), statusLine: false)
        } catch {
            createFailure = "\(error)"
            break
        }
        current.add(session)
        group.enter()
        let thread = Thread {
            let summary = session.run()
            current.remove(session)
            lock.withLock { summaries.append(summary) }
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
    let aggregate = AggregateSummary.make(from: summaries, wallSeconds: Date().timeIntervalSince(started))
    let printed =
        arguments.json
        ? StandardStreams.printChecked(outgoing.json(SessionLogEncoder().line(aggregate)), what: "the summary")
        : StandardStreams.printChecked(outgoing.terminalLines(SummaryFormatter.aggregate(aggregate)), what: "the summary")
    if let createFailure { fail(createFailure, status: 73) }
    if !printed { return StandardStreams.outputFailedStatus }
    if current.wasInterrupted { return current.interruptedStatus }
    return aggregate.exitReasons["error", default: 0] > 0 ? 69 : 0
}

var status: Int32
if arguments.sessions > 1 {
    status = playMany(url, count: arguments.sessions)
} else {
    status = play(url, logPath: arguments.logPath, harPath: arguments.harPath)
    if let thenURL, status == 0, !current.wasInterrupted {
        status = play(thenURL, logPath: secondPath(arguments.logPath), harPath: secondPath(arguments.harPath))
    }
}
origin?.stop()
exit(status)
