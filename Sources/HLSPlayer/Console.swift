// hlsplay's messages on stderr. Every message goes out as one line through
// OutgoingText (URLs redacted unless --no-redact, control characters
// visible), with write(2): a closed or broken stderr loses the message, it
// does not stop the process (FileHandle traps on a failed write).

import Foundation
import Synchronization
import Glibc
import HLSCore

public enum Console {
    /// Writes `message` as one line on stderr, as `text` makes it safe for a terminal.
    /// `clearingStatusLine`: erase the status line drawn on the current terminal line first.
    public static func error(_ message: String, text: OutgoingText, clearingStatusLine: Bool = false) {
        writeStandardError((clearingStatusLine ? eraseLine : "") + text.terminalLine(message) + "\n")
    }

    /// Writes text already made safe for a terminal (`OutgoingText`), and a newline, on stderr: where the
    /// summary goes when the session log has standard output (`--log -`).
    public static func writeLines(_ safeText: String) {
        writeStandardError(safeText + "\n")
    }

    /// The terminal shows escape sequences as text (TERM is dumb or unset): the status line is redrawn
    /// with carriage returns and spaces instead.
    static let dumbTerminal = StatusLine.isDumbTerminal(ProcessInfo.processInfo.environment)
    /// The length of the status line on screen now (0: none), for a dumb terminal's redraw and clear.
    private static let drawn = Mutex(0)

    /// Draws `text` (made safe for a terminal) as the status line over the one on screen.
    static func drawStatusLine(_ text: String) {
        let previous = drawn.withLock { length in
            defer { length = text.count }
            return length
        }
        writeStandardError(StatusLine.redraw(text, previousLength: previous, dumbTerminal: dumbTerminal))
    }

    /// What erases the status line on screen (nothing when there is none).
    static var eraseLine: String {
        let previous = drawn.withLock { length in
            defer { length = 0 }
            return length
        }
        return previous == 0 ? "" : StatusLine.clear(previousLength: previous, dumbTerminal: dumbTerminal)
    }

    /// Writes hlsplay's own bytes (the status line and its control sequences) to stderr as they are.
    static func writeStandardError(_ s: String) {
        var bytes = Array(s.utf8)
        var offset = 0
        bytes.withUnsafeMutableBytes { raw in
            while offset < raw.count {
                let n = write(STDERR_FILENO, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return }
                offset += n
            }
        }
    }
}
