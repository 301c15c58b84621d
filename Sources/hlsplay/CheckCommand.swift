// `hlsplay check URL|FILE...`: a URL (http, https, file://) is validated whole: every
// playlist fetched and parsed, each variant's first segment fetched and probed, and the
// declarations held to what was measured (HLSCore's StreamCheck rules). A FILE (a path) is
// parsed only: what the parser accepts, rejects (with the line and rule) or tolerates.

import Foundation
import HLSCore
import HLSPlayer

enum CheckCommand {
    static let usage = """
        usage: hlsplay check [--json] [--base URL] [request options] URL|FILE...

        URL (http, https or file://): validates the stream, like mediastreamvalidator:
        fetches the playlist with hlsplay's own loader; for a Multivariant Playlist
        every variant's and rendition's Media Playlist, and the first segment of each
        (its key, EXT-X-MAP and byte range as playback fetches them; AES-128 is
        decrypted), demuxed to compare CODECS and RESOLUTION with the streams found,
        BANDWIDTH and AVERAGE-BANDWIDTH with the measured bit rates (first segment,
        EXT-X-BYTERANGE sizes), and every EXTINF with EXT-X-TARGETDURATION. Prints one
        block per playlist with findings (error, warning, info, each with its rule).
        FILE (a path): parses the playlist only and reports whether it is accepted,
        with its kind, size and warnings, or rejected, with the line and the rule.

          --json            one JSON object per URL or FILE (fields: docs/playlist-parsing.md)
          --base URL        the URL that a FILE's relative URIs resolve against
                            (default: the file's own URL)
          --header, --cookie, --user-agent, --referer, --proxy, --cacert, -k/--insecure,
          --no-redact, --first-byte-timeout, --stall-timeout: as for playback ('hlsplay --help')

        Exit status: 0 no errors (FILE: all accepted); 65 errors found (FILE: some
        rejected); 64 usage error; 66 unreadable file; 69 a fetch failed.
        """

    /// Options that shape requests, taken as playback takes them (Arguments), with a value or without.
    static let requestOptionsWithValue: Set<String> = [
        "--header", "--cookie", "--user-agent", "--referer", "--proxy", "--cacert", "--first-byte-timeout", "--stall-timeout"
    ]
    static let requestFlags: Set<String> = ["--insecure", "-k", "--no-redact"]

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
        var inputs: [String] = []
        var requestWords: [String] = []
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
                case _ where requestOptionsWithValue.contains(word):
                    let value = try words.value(for: word)
                    requestWords += [word, value]
                case _ where requestFlags.contains(word):
                    requestWords.append(word)
                default:
                    if words.isOption(word) {
                        say("unknown option '\(words.current)'")
                        return 64
                    }
                    inputs.append(word)
                }
            }
        } catch {
            say(error.message)
            return 64
        }
        guard !inputs.isEmpty else {
            say("no playlist URL or file given")
            Console.error("Try 'hlsplay check --help'.", text: StandardStreams.outgoing)
            return 64
        }
        let requestOptions: Arguments
        do {
            requestOptions = try Arguments.parse(requestWords)
        } catch {
            say(error.message)
            return 64
        }
        if requestOptions.insecure { say("warning: --insecure: TLS certificates and host names are not verified") }
        // Every URL is checked before anything runs: a typo is a usage error, not a half-done check.
        var targets: [(input: String, url: URL?)] = []
        for input in inputs {
            guard input.contains("://") else {
                targets.append((input, nil))
                continue
            }
            guard let u = URL(string: input), let scheme = u.scheme?.lowercased(), ["http", "https", "file"].contains(scheme) else {
                say("'\(input)' is not an http, https or file URL")
                return 64
            }
            if scheme != "file", (u.host ?? "").isEmpty {
                say("'\(input)' is not a usable \(scheme) URL: it has no host")
                return 64
            }
            targets.append((input, u))
        }
        var status: Int32 = 0
        for (input, url) in targets {
            if let url {
                let checker = StreamChecker(configuration: requestOptions.configuration(for: url))
                let report = checker.check(url)
                if report.fetchFailed {
                    status = max(status, 69)
                } else if report.errors > 0 {
                    status = max(status, 65)
                }
                if json {
                    StandardStreams.print(StandardStreams.outgoing.json(SessionLogEncoder().line(report)))
                } else {
                    StandardStreams.print(StandardStreams.outgoing.terminalLines(human(report)))
                }
                continue
            }
            let file = input
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

    // MARK: - URL mode, human output

    static func human(_ r: StreamCheckReport) -> String {
        let esc = TerminalText.escaped
        var out = "\(esc(r.url)): "
        if !r.accepted {
            out += "NOT CHECKED"
        } else {
            out += r.errors > 0 ? "ERRORS" : "OK"
            out += " \(r.kind ?? "") playlist, \(r.errors) error\(r.errors == 1 ? "" : "s"), \(r.warnings) warning\(r.warnings == 1 ? "" : "s")"
        }
        out += findingLines(r.findings, indent: "  ")
        for p in r.playlists {
            var head = "  "
            if let i = p.variantIndex { head += "variant \(i)" } else { head += p.role }
            if let g = p.groupID { head += " \(p.role == "variant" ? "" : "group ")'\(esc(g))'" }
            if let n = p.name { head += " '\(esc(n))'" }
            head += ": \(esc(p.url))"
            out += "\n" + head
            var facts: [String] = []
            if let d = p.declared {
                var declared = "declared BANDWIDTH \(kbps(Double(d.bandwidthBps)))"
                if let a = d.averageBandwidthBps { declared += ", AVERAGE-BANDWIDTH \(kbps(Double(a)))" }
                declared += ", CODECS \(d.codecs.isEmpty ? "(none)" : esc(d.codecs.joined(separator: ",")))"
                if let res = d.resolution { declared += ", RESOLUTION \(res)" }
                facts.append(declared)
            }
            if let n = p.segments, let t = p.targetDurationSeconds {
                var playlist = "\(n) segments, TARGETDURATION \(format(t)) s"
                if let l = p.longestSegmentSeconds { playlist += ", longest EXTINF \(format(l)) s" }
                playlist += p.endList == true ? ", ENDLIST" : ", live"
                if let b = p.byteRanges { playlist += "; byte ranges: peak \(kbps(b.peakBps)), average \(kbps(b.averageBps))" }
                facts.append(playlist)
            }
            if let s = p.firstSegment {
                var seg = "first segment \(s.mediaSequence) (\(format(s.durationSeconds)) s"
                if let b = s.bytes { seg += ", \(b) bytes" }
                if let rate = s.bitrateBps { seg += ", \(kbps(rate))" }
                if let e = s.encryption { seg += ", \(esc(e))" }
                seg += "): "
                if s.probed {
                    seg += s.streams.map { st in
                        st.kind == "video"
                            ? "video \(esc(st.codec)) \(st.width ?? 0)x\(st.height ?? 0)"
                            : "audio \(esc(st.codec)) \(st.sampleRate ?? 0) Hz \(st.channels ?? 0) ch"
                    }.joined(separator: ", ")
                } else {
                    seg += "not probed: \(esc(s.notProbedReason ?? "unknown"))"
                }
                facts.append(seg)
            }
            out += facts.map { "\n    " + $0 }.joined()
            out += findingLines(p.findings, indent: "    ")
        }
        return out
    }

    static func findingLines(_ findings: [CheckFinding], indent: String) -> String {
        let esc = TerminalText.escaped
        return findings.sorted { $0.severity > $1.severity }.map { f in
            "\n\(indent)\(f.severity.rawValue) [\(f.rule)]: \(esc(f.message))" + (f.reference.map { " (\(esc($0)))" } ?? "")
        }.joined()
    }

    static func kbps(_ bps: Double) -> String { String(format: "%.0f kbit/s", bps / 1000) }

    static func format(_ v: Double) -> String { v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(format: "%.3f", v) }
}
