// The process's standard streams, checked. The summary on stdout is what a
// run is for: a closed stdout, or a reader that went away (`hlsplay URL
// --json | true`), must not end in exit 0 and silence. And a standard
// descriptor that is closed at start must not be taken by the next file
// opened (the session log would then receive whatever is printed to stdout).

import Foundation
import Glibc
import HLSCore
import HLSPlayer

enum StandardStreams {
    /// Exit status when stdout (or another output) could not be written (EX_IOERR).
    static let outputFailedStatus: Int32 = 74

    /// What everything hlsplay writes goes through: URLs redacted unless --no-redact is given.
    static let outgoing = OutgoingText(redactsURLs: !CommandLine.arguments.contains("--no-redact"))

    /// The standard descriptors (0, 1, 2) that were closed when the process started.
    nonisolated(unsafe) private(set) static var closedAtStart: Set<Int32> = []
    /// Why stdout could not be written (the first failure), and whether that was said already.
    nonisolated(unsafe) private(set) static var failure: String?
    nonisolated(unsafe) private static var failureReported = false

    static var stdoutWasClosed: Bool { closedAtStart.contains(STDOUT_FILENO) }

    /// Run before anything else opens a file. Notes which standard descriptors are closed and
    /// puts /dev/null on each, so no later open takes the number: read-only on 0 and 1 (a write
    /// to the closed stdout still fails, EBADF, and is reported), write-only on 2 (messages are
    /// dropped). Ignores SIGPIPE so a gone reader is a write error (EPIPE), reported, not a
    /// silent death; and registers the exit check of stdout.
    static func guardAtStart() {
        for fd in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            closedAtStart.insert(fd)
            let null = open("/dev/null", fd == STDERR_FILENO ? O_WRONLY : O_RDONLY)
            if null >= 0 && null != fd {
                dup2(null, fd)
                close(null)
            }
        }
        signal(SIGPIPE, SIG_IGN)
        atexit { StandardStreams.checkAtExit() }
    }

    /// Writes `text` and a newline on stdout, unbuffered (write(2)); false when it could not
    /// (the first reason is kept in `failure`). Everything hlsplay prints goes through here.
    @discardableResult
    static func print(_ text: String) -> Bool {
        guard failure == nil else { return false }
        var bytes = Array(text.utf8)
        bytes.append(0x0A)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress! + offset, $0.count - offset) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 {
                failure = stdoutWasClosed ? "standard output is closed" : String(cString: strerror(n < 0 ? errno : EIO))
                return false
            }
            offset += n
        }
        return true
    }

    /// Prints `text` on stdout. When that fails, says so on stderr (naming `what` was lost) and
    /// returns false; the caller exits 74.
    static func printChecked(_ text: String, what: String) -> Bool {
        if print(text) { return true }
        failureReported = true
        Console.error("hlsplay: \(what) could not be written to standard output: \(failure ?? "unknown error")", text: outgoing)
        return false
    }

    /// Prints a session's summary: JSON (`--json`) or the human lines. With `--log -` the session log has
    /// standard output (its last line is the summary), so the summary goes to stderr instead. False when
    /// it could not be written (already said); the caller exits 74.
    static func printSummary(_ summary: SessionSummary, json: Bool, logOnStandardOutput: Bool) -> Bool {
        let text = json ? outgoing.json(SessionLogEncoder().line(summary)) : outgoing.terminalLines(SummaryFormatter.human(summary))
        if logOnStandardOutput {
            Console.writeLines(text)
            return true
        }
        return printChecked(text, what: "the summary")
    }

    /// At exit (every path: --help, subcommands, errors): a failed stdout write not yet reported
    /// (or output left in stdio's buffer that cannot be written) turns the status into 74, with a message.
    private static func checkAtExit() {
        if fflush(nil) != 0, failure == nil { failure = stdoutWasClosed ? "standard output is closed" : String(cString: strerror(errno)) }
        guard let failure, !failureReported else { return }
        Console.error("hlsplay: writing to standard output failed: \(failure)", text: outgoing)
        _exit(outputFailedStatus)
    }
}
