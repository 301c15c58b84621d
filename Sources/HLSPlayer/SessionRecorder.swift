// Writes the session log as it goes (one JSON object per line, flushed per
// line so a crash loses at most the line in progress), folds every event into
// the summary, and collects HAR entries. Every line and the HAR document go
// out through OutgoingText: URLs anywhere in them redacted (unless
// --no-redact), DEL and C1 controls escaped.

import Foundation
import HLSCore

/// The first line of every session log.
public struct SessionHeader: Encodable, Sendable {
    public var type = "header"
    public var schema = sessionLogSchemaName
    public var schemaVersion = sessionLogSchemaVersion
    public var hlsplayVersion: String
    public var url: String
    /// Wall-clock time the session started (ISO 8601); event `t` values are monotonic seconds after this.
    public var startedAt: String
    public var configuration: PlayerConfiguration
    public var host: HostInfo
    /// Set by `hlsplay simulate`: the log is from the virtual-time simulator.
    public var simulation: SimulationHeader?

    /// The header of a session starting now (`startedAt`: this instant, ISO 8601 with fractional seconds).
    static func startingNow(url: String, configuration: PlayerConfiguration, host: HostInfo, simulation: SimulationHeader? = nil) -> SessionHeader {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return SessionHeader(
            hlsplayVersion: HLSPlayer.hlsplayVersion, url: url, startedAt: formatter.string(from: Date()), configuration: configuration,
            host: host, simulation: simulation)
    }
}

/// What a simulated session's log header says about its inputs.
public struct SimulationHeader: Encodable, Sendable {
    /// The virtual-time simulator wrote this log (no real network, media or decoder).
    public var virtualTime = true
    public var ladder: String
    public var link: String
}

public struct HostInfo: Encodable, Sendable {
    public var hostname: String
    public var os: String
    public var cpuCount: Int
    public var ffmpeg: String
    public var libcurl: String

    static func current(ffmpeg: String, libcurl: String) -> HostInfo {
        var uts = utsname()
        uname(&uts)
        func field<T>(_ value: T) -> String {
            withUnsafeBytes(of: value) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
        }
        return HostInfo(
            hostname: ProcessInfo.processInfo.hostName,
            os: "\(field(uts.sysname)) \(field(uts.release)) \(field(uts.machine))",
            cpuCount: ProcessInfo.processInfo.activeProcessorCount,
            ffmpeg: ffmpeg, libcurl: libcurl)
    }
}

/// Failure to open an output file, reported before the session starts.
public struct OutputFileError: Error, CustomStringConvertible {
    public var path: String
    public var reason: String
    public var description: String { "cannot write \(path): \(reason)" }
}

/// An open output file, written line by line. One owner of the descriptor, closed in deinit.
///
/// Opening probes the file so a path that cannot take data fails before the session starts, not at
/// the first line: a zero-byte `write(2)` (which `/dev/full` and other failing devices refuse with
/// ENOSPC) and, for a regular file, the free blocks of its file system (none left = ENOSPC).
/// Each line goes out in one `write(2)` loop, unbuffered; a line that fails half-way is cut off
/// again, so after a failure the file holds whole lines only. The first failure is kept (path and
/// errno text) and later lines are not attempted, so a disk that frees up again cannot leave a gap
/// in the middle of the log.
final class LineFile: @unchecked Sendable {
    private let fd: Int32
    let path: String
    private let lock = NSLock()
    /// The first write failure, e.g. "No space left on device"; nil while every write succeeded.
    private(set) var failure: String?
    /// Lines written whole before the first failure.
    private(set) var linesWritten = 0
    /// Bytes of those lines (the file offset after the last whole line).
    private var bytesWritten: off_t = 0

    /// The path that means standard output (`--log -`).
    static let standardOutputPath = "-"

    init(path: String) throws {
        // "-" is standard output, as for most command-line tools: a duplicate, so closing this file leaves stdout open.
        let fd = path == Self.standardOutputPath ? dup(STDOUT_FILENO) : open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw OutputFileError(path: path, reason: String(cString: strerror(errno))) }
        if let problem = Self.probe(fd) {
            close(fd)
            throw OutputFileError(path: path, reason: problem)
        }
        self.fd = fd
        self.path = path
    }

    /// Why `fd` cannot take data, or nil.
    private static func probe(_ fd: Int32) -> String? {
        var none: UInt8 = 0
        if write(fd, &none, 0) < 0 { return String(cString: strerror(errno)) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { return String(cString: strerror(errno)) }
        if (st.st_mode & S_IFMT) == S_IFREG {
            var fs = statvfs()
            if fstatvfs(fd, &fs) == 0 {
                // root may use the blocks reserved for it; anyone else only the available ones.
                let free = geteuid() == 0 ? fs.f_bfree : fs.f_bavail
                if free == 0 { return String(cString: strerror(ENOSPC)) + " (no free blocks)" }
            }
        }
        return nil
    }

    /// Writes one line; returns false if it (or an earlier line) failed (e.g. disk full).
    @discardableResult
    func writeLine(_ line: String) -> Bool {
        lock.withLock {
            guard failure == nil else { return false }
            var bytes = Array(line.utf8)
            bytes.append(0x0A)
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = String(cString: strerror(errno))
                    // Cut the part of this line that did go out, so the file ends on a whole line
                    // (works on a full disk; a device or pipe simply refuses, which is fine).
                    if offset > 0 { _ = ftruncate(fd, bytesWritten) }
                    return false
                }
                offset += n
            }
            linesWritten += 1
            bytesWritten += off_t(bytes.count)
            return true
        }
    }

    deinit { close(fd) }
}

final class SessionRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private let log: LineFile?
    private let encoder = SessionLogEncoder()
    private let sessionStart: MonotonicInstant
    private let clock: any MonotonicClock
    private var builder = SummaryBuilder()
    private var har: HARBuilder?
    private var writeFailed = false
    /// Set by `finish`: the summary is the last line, so events after it (from a thread that hung
    /// past the end) are dropped.
    private var finished = false
    /// What every line goes through on its way out (redaction, escaping).
    let outgoing: OutgoingText
    /// Events recorded so far by `type`, and `error` events also by `error:<category>`.
    private var counts: [String: Int] = [:]
    /// Called for every event (after it is recorded), e.g. by tests or a live view.
    var observer: (@Sendable (TimedEvent) -> Void)?

    init(
        logPath: String?, harPath: String?, clock: any MonotonicClock, sessionStart: MonotonicInstant, wallStart: Date,
        outgoing: OutgoingText
    ) throws {
        self.clock = clock
        self.outgoing = outgoing
        log = try logPath.map { try LineFile(path: $0) }
        if let harPath {
            // Open now so an unwritable path fails before the session starts.
            har = HARBuilder(path: try LineFile(path: harPath), sessionWallStart: wallStart)
        }
        self.sessionStart = sessionStart
    }

    func seconds(at instant: MonotonicInstant) -> Double { instant.seconds(since: sessionStart) }

    func writeHeader(_ header: SessionHeader) {
        lock.withLock { write(encoder.line(header)) }
    }

    /// Records an event stamped with the current time. The stamp is taken
    /// under the lock, so `t` never decreases down the log.
    func record(_ event: SessionEvent) {
        let timed: TimedEvent? = lock.withLock {
            guard !finished else { return nil }
            let timed = TimedEvent(seconds: seconds(at: clock.now()), event: event)
            builder.record(event)
            counts[event.type, default: 0] += 1
            if case .error(let e) = event { counts["error:\(e.category)", default: 0] += 1 }
            write(encoder.line(timed))
            return timed
        }
        if let timed { observer?(timed) }
    }

    /// How many events of a `type` (or `error:<category>`) were recorded so far.
    func count(of type: String) -> Int {
        lock.withLock { counts[type] ?? 0 }
    }

    /// The error categories recorded so far, with their counts.
    func errorCounts() -> [(category: String, count: Int)] {
        lock.withLock {
            counts.filter { $0.key.hasPrefix("error:") }.map { (String($0.key.dropFirst("error:".count)), $0.value) }
                .sorted { $0.category < $1.category }
        }
    }

    /// Built only when a HAR file is written (building one formats a date).
    func addHAREntry(_ entry: @autoclosure () -> HAREntry) {
        lock.withLock {
            if har != nil { har?.entries.append(entry()) }
        }
    }

    func setBreakdown(_ breakdown: StartupBreakdown) {
        lock.withLock { builder.setBreakdown(breakdown) }
    }

    /// Builds the summary from the recorded events, writes it as the last line, and writes the HAR file.
    func finish(makeSummary: (SummaryBuilder) -> SessionSummary) -> SessionSummary {
        lock.withLock {
            finished = true
            let summary = makeSummary(builder)
            write(encoder.line(summary))
            if let har, !har.write(outgoing) { reportWriteFailure(har.path, what: "the HAR file") }
            return summary
        }
    }

    /// True when a log or HAR write failed (disk full): reported in the exit status.
    var hadWriteError: Bool { lock.withLock { writeFailed } }

    private func write(_ line: String) {
        guard let log, log.failure == nil else { return }
        if !log.writeLine(outgoing.json(line)) { reportWriteFailure(log, what: "the session log") }
    }

    /// Says so on stderr at once (the log itself cannot), with the path and the errno text; the exit
    /// status reports it again at the end.
    private func reportWriteFailure(_ file: LineFile, what: String) {
        writeFailed = true
        Console.error(
            "hlsplay: writing \(what) \(file.path) failed: \(file.failure ?? "unknown error"); "
                + "it is incomplete after \(file.linesWritten) line\(file.linesWritten == 1 ? "" : "s")", text: outgoing)
    }
}
