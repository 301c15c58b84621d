// Every string hlsplay sends out of the process — the session log, the HAR,
// the summary on stdout, messages on stderr, the status line, the HTML
// report — goes through `OutgoingText`: first the one redaction pass
// (URLRedaction.redactingURLs: userinfo, query values and fragments of every
// URL anywhere in the text, unless --no-redact), then the escaping its
// destination needs. Text from the network (error bodies, Location headers,
// curl and FFmpeg messages, playlist lines) can hold anything, including
// terminal control sequences.

public struct OutgoingText: Sendable {
    /// False with --no-redact: URLs are written whole.
    public var redactsURLs: Bool
    /// Lowercased names of headers whose values are redacted besides the credential headers: the ones the
    /// user added (`--header`), whatever they are called (an API key header has any name).
    public var secretHeaderNames: Set<String>

    public init(redactsURLs: Bool = true, secretHeaderNames: [String] = []) {
        self.redactsURLs = redactsURLs
        self.secretHeaderNames = Set(secretHeaderNames.map { $0.lowercased() })
    }

    /// The redaction pass alone (the input of the HTML report).
    public func redacted(_ text: String) -> String {
        redactsURLs ? URLRedaction.redactingURLs(in: text) : text
    }

    /// A header's value in a structured record (the HAR): a credential header's value
    /// (Authorization, Cookie, Set-Cookie, ...) replaced (`URLRedaction.redactedHeaderValue`).
    public func headerValue(name: String, value: String) -> String {
        guard redactsURLs else { return value }
        if secretHeaderNames.contains(name.lowercased()), !value.isEmpty { return URLRedaction.placeholder }
        return URLRedaction.redactedHeaderValue(name: name, value: value)
    }

    /// A query parameter's value taken out of its URL (the HAR's `queryString`): replaced
    /// as it is inside the URL; an empty value stays empty.
    public func queryValue(_ value: String) -> String {
        redactsURLs && !value.isEmpty ? URLRedaction.placeholder : value
    }

    /// Encoded JSON (a session-log line, the HAR document, the `--json` summary):
    /// redacted, and DEL and C1 controls written as `\u` escapes. JSONEncoder escapes
    /// C0 controls itself but leaves DEL and U+0080–U+009F raw, which a terminal
    /// showing the file (`cat`, `tail -f`) may act on; outside strings JSON holds
    /// only ASCII punctuation, so every such character is inside a string.
    public func json(_ encoded: String) -> String {
        TerminalText.escapingJSONControls(redacted(encoded))
    }

    /// One line for a terminal (a stderr message, the status line): redacted, and every
    /// control character visible, newline included, so text from the network cannot
    /// move the cursor, recolour, retitle, or start a line that looks like hlsplay's own.
    public func terminalLine(_ text: String) -> String {
        TerminalText.escaped(redacted(text))
    }

    /// Several lines hlsplay composed itself (the human summary, a usage text): each line
    /// as `terminalLine`, the newlines between them kept. Fields taken from the network
    /// should already be escaped with `TerminalText.escaped` where they are put in.
    public func terminalLines(_ text: String) -> String {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { terminalLine(String($0)) }.joined(separator: "\n")
    }
}

/// Control characters made visible for a terminal.
public enum TerminalText {
    /// `text` with every C0 control (tab and newline included), DEL, every C1 control and
    /// the Unicode bidirectional overrides and isolates (which can make a URL display as
    /// another) replaced by a visible escape: `\e` ESC, `\a` BEL, `\b`, `\t`, `\n`, `\v`,
    /// `\f`, `\r`, other C0 and DEL as `\xHH`, C1 and bidi controls as `\u{HHHH}`.
    /// Everything else, backslashes included, is kept.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for s in text.unicodeScalars {
            guard needsEscape(s) else {
                out.unicodeScalars.append(s)
                continue
            }
            switch s.value {
            case 0x1B: out += "\\e"
            case 0x07: out += "\\a"
            case 0x08: out += "\\b"
            case 0x09: out += "\\t"
            case 0x0A: out += "\\n"
            case 0x0B: out += "\\v"
            case 0x0C: out += "\\f"
            case 0x0D: out += "\\r"
            case 0x00...0x1F, 0x7F: out += "\\x" + hex(s.value, digits: 2)
            default: out += "\\u{" + hex(s.value, digits: 4) + "}"
            }
        }
        return out
    }

    /// Whether `s` is escaped by `escaped(_:)`.
    public static func needsEscape(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x202A...0x202E, 0x2066...0x2069: return true
        default: return false
        }
    }

    /// Encoded JSON with DEL and C1 controls as `\u00HH` (equal in value, so any JSON reader sees the same string).
    public static func escapingJSONControls(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: { (0x7F...0x9F).contains($0.value) }) else { return json }
        var out = ""
        out.reserveCapacity(json.utf8.count + 16)
        for s in json.unicodeScalars {
            if (0x7F...0x9F).contains(s.value) { out += "\\u" + hex(s.value, digits: 4) } else { out.unicodeScalars.append(s) }
        }
        return out
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let h = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - h.count)) + h
    }
}
