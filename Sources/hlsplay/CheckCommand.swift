// `hlsplay check FILE...`: parse playlists with hlsplay's parser and say what
// it accepts, rejects (with the line and rule) or tolerates (warnings).

import Foundation
import HLSCore
import HLSPlayer

enum CheckCommand {
    static let usage = """
        usage: hlsplay check [--json] [--base URL] FILE...

        Parses each playlist file with hlsplay's parser (RFC 8216 and its successor
        draft; policy in docs/playlist-parsing.md) and reports whether it is
        accepted, with its kind, size and warnings, or rejected, with the line and
        the rule. --json prints one JSON object per file. --base sets the URL that
        relative URIs resolve against (default: the file's own URL).
        Exit status: 0 all accepted, 65 some rejected, 64 usage error, 66 unreadable file.
        """

    struct Result: Encodable {
        var file: String
        var accepted: Bool
        var kind: String?
        var variants: Int?
        var renditions: Int?
        var segments: Int?
        var endList: Bool?
        var warnings: [String]
        var error: String?
        var errorKind: String?
        var errorLine: Int?
        var rule: String?
    }

    static func run(_ arguments: [String]) -> Int32 {
        var json = false
        var base: URL?
        var files: [String] = []
        var words = OptionWords(arguments)
        do {
            while let word = try words.next() {
                switch word {
                case "--json": json = true
                case "--help", "-h":
                    StandardStreams.print(usage)
                    return 0
                case "--base":
                    let value = try words.value(for: word)
                    guard let u = URL(string: value) else {
                        say("--base: '\(value)' is not a URL")
                        return 64
                    }
                    base = u
                default:
                    if words.isOption(word) {
                        say("unknown option '\(words.current)'")
                        return 64
                    }
                    files.append(word)
                }
            }
        } catch {
            say(error.message)
            return 64
        }
        guard !files.isEmpty else {
            say("no playlist file given")
            Console.error(usage, text: StandardStreams.outgoing)
            return 64
        }
        var status: Int32 = 0
        for file in files {
            guard let data = FileManager.default.contents(atPath: file) else {
                say("cannot read '\(file)'")
                status = max(status, 66)
                continue
            }
            let result = check(data: data, file: file, base: base ?? URL(fileURLWithPath: file))
            if !result.accepted { status = max(status, 65) }
            // Playlists come from anywhere: their lines are redacted and escaped like network text.
            if json {
                StandardStreams.print(StandardStreams.outgoing.json(SessionLogEncoder().line(result)))
            } else {
                StandardStreams.print(StandardStreams.outgoing.terminalLines(human(result)))
            }
        }
        return status
    }

    /// One line on stderr, redacted and escaped.
    static func say(_ message: String) {
        Console.error("hlsplay check: \(message)", text: StandardStreams.outgoing)
    }

    static func check(data: Data, file: String, base: URL) -> Result {
        do {
            switch try PlaylistParser.parse(data: data, baseURL: base) {
            case .multivariant(let p):
                return Result(
                    file: file, accepted: true, kind: "multivariant", variants: p.variants.count, renditions: p.renditions.count,
                    warnings: p.warnings.map(\.description))
            case .media(let p):
                return Result(
                    file: file, accepted: true, kind: "media", segments: p.segments.count, endList: p.endList,
                    warnings: p.warnings.map(\.description))
            }
        } catch {
            return Result(
                file: file, accepted: false, warnings: [], error: error.message, errorKind: error.kind.rawValue,
                errorLine: error.lineNumber, rule: error.rule)
        }
    }

    static func human(_ r: Result) -> String {
        let esc = TerminalText.escaped
        guard r.accepted else {
            return "\(esc(r.file)): REJECTED line \(r.errorLine ?? 0): \(esc(r.error ?? "")) (\(r.rule ?? ""))"
        }
        let size =
            r.kind == "multivariant"
            ? "\(r.variants ?? 0) variants, \(r.renditions ?? 0) renditions"
            : "\(r.segments ?? 0) segments\(r.endList == true ? ", ENDLIST" : ", live")"
        var out = "\(esc(r.file)): OK \(r.kind ?? "") playlist, \(size)"
        for w in r.warnings { out += "\n  warning: \(esc(w))" }
        return out
    }
}
