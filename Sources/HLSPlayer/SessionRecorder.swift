// Writes the session log as it goes (one JSON object per line, flushed per
// line so a crash loses at most the line in progress), folds every event into
// the summary, and collects HAR entries.

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
        return HostInfo(hostname: ProcessInfo.processInfo.hostName,
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

/// An open output file, written line by line. One owner of the FILE*.
final class LineFile: @unchecked Sendable {
    private let file: UnsafeMutablePointer<FILE>
    let path: String

    init(path: String) throws {
        guard let f = fopen(path, "w") else {
            throw OutputFileError(path: path, reason: String(cString: strerror(errno)))
        }
        file = f
        self.path = path
    }

    /// Writes one line and flushes it; returns false on a write error (e.g. disk full).
    @discardableResult
    func writeLine(_ line: String) -> Bool {
        var ok = fputs(line, file) >= 0
        ok = fputc(0x0A, file) != EOF && ok
        return fflush(file) == 0 && ok
    }

    deinit { fclose(file) }
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
    /// Called for every event (after it is recorded), e.g. by tests or a live view.
    var observer: (@Sendable (TimedEvent) -> Void)?

    init(logPath: String?, harPath: String?, clock: any MonotonicClock, sessionStart: MonotonicInstant, wallStart: Date) throws {
        self.clock = clock
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
        let timed = lock.withLock {
            let timed = TimedEvent(seconds: seconds(at: clock.now()), event: event)
            builder.record(event)
            write(encoder.line(timed))
            return timed
        }
        observer?(timed)
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
            let summary = makeSummary(builder)
            write(encoder.line(summary))
            har?.write()
            return summary
        }
    }

    /// True when a log write failed (disk full): reported in the exit status.
    var hadWriteError: Bool { lock.withLock { writeFailed } }

    private func write(_ line: String) {
        guard let log else { return }
        if !log.writeLine(line) { writeFailed = true }
    }
}
