// `hlsplay report SESSION.jsonl [MORE.jsonl …] --html OUT.html [--title T]`:
// renders session logs as one self-contained HTML timeline page (HLSReport's
// TimelineReport), one section per log on a shared time axis.

import Foundation
import HLSCore
import HLSOrigin
import HLSPlayer
import HLSReport

enum ReportCommand {
    static let usage = """
        usage: hlsplay report SESSION.jsonl [MORE.jsonl ...] --html OUT.html
                              [--title TITLE] [--no-redact]
                              [--link TRACE [--link-format F] | --origin-log FILE]

        Renders a session log (written by --log) as one self-contained HTML page:
        requests (a waterfall), buffer, bitrate, throughput, stall risk, policy and
        stalls over time. Several logs give one page with a section per session,
        all on the same time axis and scales; a log of 'hlsplay simulate' is
        marked as simulated. Use '-' as a log to read it from standard input, and
        as OUT.html to write the page to standard output. URLs in the page
        lose their credentials and query values (as in a log written without
        --no-redact), also when the log has them; --no-redact keeps them whole.

          --link TRACE        draw the link's real rate on the bitrate lane: a
                              throughput trace (the formats 'hlsplay simulate
                              --trace' reads), looped from each session's start
          --link-format F     mahimahi | pensieve | sabre (default: detect)
          --origin-log FILE   draw the rate hls-origin's request log (--log)
                              recorded at each request; its first request is
                              taken to be each session's first
        """

    /// Runs the subcommand with the words after `report`; returns the exit status
    /// (0, 64 for a usage error, 66 for an unreadable log, 65 for an invalid one,
    /// 73 when the page cannot be written). With several logs, the first one that
    /// cannot be read or is not valid is named and nothing is written.
    static func run(_ arguments: [String]) -> Int32 {
        var inputs: [String] = []
        var output: String?
        var title: String?
        var linkPath: String?
        var linkFormat: TraceFormat?
        var originLogPath: String?
        func usageError(_ message: String) -> Int32 {
            Console.error("hlsplay report: \(message)", text: StandardStreams.outgoing)
            Console.error("Try 'hlsplay report --help'.", text: StandardStreams.outgoing)
            return 64
        }
        var words = OptionWords(arguments)
        do {
            while let word = try words.next() {
                switch word {
                case "-h", "--help":
                    StandardStreams.print(usage)
                    return 0
                case "--no-redact":
                    break // read by StandardStreams.outgoing
                case "--html":
                    let value = try words.value(for: word)
                    guard output == nil else { return usageError("'--html' given twice") }
                    guard !value.isEmpty else { return usageError("'--html' needs a non-empty path") }
                    output = value
                case "--title":
                    title = try words.value(for: word)
                case "--link":
                    guard linkPath == nil else { return usageError("'--link' given twice") }
                    linkPath = try words.value(for: word)
                case "--link-format":
                    let value = try words.value(for: word)
                    guard let format = TraceFormat(rawValue: value.lowercased()) else {
                        return usageError("--link-format: '\(value)' is not one of \(TraceFormat.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    linkFormat = format
                case "--origin-log":
                    guard originLogPath == nil else { return usageError("'--origin-log' given twice") }
                    originLogPath = try words.value(for: word)
                default:
                    if words.isOption(word) { return usageError("unknown option '\(words.current)'") }
                    if word == "-" && inputs.contains("-") { return usageError("'-' (standard input) given twice") }
                    inputs.append(word)
                }
            }
        } catch {
            return usageError(error.message)
        }
        guard !inputs.isEmpty else { return usageError("missing the session log (SESSION.jsonl)") }
        guard let output else { return usageError("missing '--html OUT.html'") }
        if linkPath != nil && originLogPath != nil { return usageError("'--link' and '--origin-log' both given (one link rate per page)") }
        if linkFormat != nil && linkPath == nil { return usageError("'--link-format' without '--link'") }

        var linkRate: TimelineReport.LinkRate?
        if let path = linkPath {
            guard FileManager.default.fileExists(atPath: path) else { return failure("cannot read '\(path)': no such file", status: 66) }
            do {
                let trace = try ThroughputTrace.load(contentsOf: URL(fileURLWithPath: path), format: linkFormat)
                linkRate = Self.linkRate(trace)
            } catch let error as TraceError {
                return failure("'\(path)' is not a usable trace: \(error)", status: 65)
            } catch {
                return failure("cannot read '\(path)': \(reason(error))", status: 66)
            }
        } else if let path = originLogPath {
            guard FileManager.default.fileExists(atPath: path) else { return failure("cannot read '\(path)': no such file", status: 66) }
            let text: String
            do { text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self) } catch {
                return failure("cannot read '\(path)': \(reason(error))", status: 66)
            }
            switch Self.linkRate(originLog: text, name: (path as NSString).lastPathComponent) {
            case .success(let rate): linkRate = rate
            case .failure(let error): return failure("'\(path)' is not a usable origin request log: \(error)", status: 65)
            }
        }

        var sessions: [TimelineReport.Session] = []
        for input in inputs {
            if input != "-" && !FileManager.default.fileExists(atPath: input) {
                return failure("cannot read '\(input)': no such file", status: 66)
            }
            do {
                let data = input == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: input))
                // The log may have been written with --no-redact, and the page is made to be shared.
                sessions.append(
                    TimelineReport.Session(
                        name: input == "-" ? "(standard input)" : input,
                        log: StandardStreams.outgoing.redacted(String(decoding: data, as: UTF8.self)), linkRate: linkRate))
            } catch {
                return failure("cannot read '\(input)': \(reason(error))", status: 66)
            }
        }
        let html: String
        do {
            html = try TimelineReport.render(sessions: sessions, title: title.map(StandardStreams.outgoing.redacted))
        } catch let error as TimelineReport.InvalidLog {
            let name = error.sessionName.flatMap { $0.isEmpty ? nil : $0 } ?? inputs[0]
            return failure("'\(name == "(standard input)" ? "-" : name)' is not a session log: \(error)", status: 65)
        } catch {
            return failure("'\(inputs[0])' is not a session log: \(error)", status: 65)
        }
        if output == "-" {
            return StandardStreams.printChecked(html, what: "the page") ? 0 : StandardStreams.outputFailedStatus
        }
        do {
            try Data(html.utf8).write(to: URL(fileURLWithPath: output), options: .atomic)
        } catch {
            return failure("cannot write '\(output)': \(reason(error))", status: 73)
        }
        return 0
    }

    /// A trace as the report draws it: its pieces, looped.
    static func linkRate(_ trace: ThroughputTrace) -> TimelineReport.LinkRate {
        var steps: [TimelineReport.LinkRate.Step] = []
        var t = 0.0
        for piece in trace.pieces {
            steps.append(.init(atSeconds: t, bitsPerSecond: piece.rateBitsPerSecond))
            t += piece.durationSeconds
        }
        let label = trace.name + String(format: ", mean %.0f kb/s", trace.meanBitsPerSecond / 1000)
        return TimelineReport.LinkRate(label: label, steps: steps, loopSeconds: trace.loopDurationSeconds)
    }

    /// hls-origin's request log as a link rate: the rate in force when each request was accepted
    /// (`rateBitsPerSecond`; 0 while `linkCollapsed`), on the server's clock, aligned at its first request.
    /// Connection lines (`type`) are skipped; requests on an unshaped link give no rate.
    static func linkRate(originLog text: String, name: String) -> Result<TimelineReport.LinkRate, TimelineReport.InvalidLog> {
        var steps: [TimelineReport.LinkRate.Step] = []
        var firstAccepted: Double?
        var requestLines = 0
        for (index, line) in text.split(whereSeparator: \.isNewline).enumerated() where !line.allSatisfy(\.isWhitespace) {
            guard let object = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] else {
                return .failure(TimelineReport.InvalidLog("line \(index + 1) is not a JSON object"))
            }
            if object["type"] != nil { continue }
            guard let accepted = (object["accepted"] as? NSNumber)?.doubleValue, accepted.isFinite else {
                return .failure(TimelineReport.InvalidLog("line \(index + 1) has no 'accepted' time (not a request line of hls-origin's log)"))
            }
            requestLines += 1
            firstAccepted = min(firstAccepted ?? accepted, accepted)
            let collapsed = (object["linkCollapsed"] as? Bool) == true
            guard let rate = (object["rateBitsPerSecond"] as? NSNumber)?.doubleValue ?? (collapsed ? 0 : nil) else { continue }
            steps.append(.init(atSeconds: accepted, bitsPerSecond: collapsed ? 0 : rate))
        }
        guard let firstAccepted, requestLines > 0 else { return .failure(TimelineReport.InvalidLog("it has no request lines")) }
        guard !steps.isEmpty else {
            return .failure(TimelineReport.InvalidLog("no request in it was on a shaped link (no 'rateBitsPerSecond'): nothing to draw"))
        }
        return .success(
            TimelineReport.LinkRate(label: "origin log \(name)", steps: steps, clock: .firstRequest(atSeconds: firstAccepted)))
    }

    private static func failure(_ message: String, status: Int32) -> Int32 {
        Console.error("hlsplay report: \(message)", text: StandardStreams.outgoing)
        return status
    }

    /// One line, without Foundation's multi-line userInfo dumps.
    private static func reason(_ error: Error) -> String {
        let ns = error as NSError
        if let posix = ns.userInfo[NSUnderlyingErrorKey] as? NSError, posix.domain == NSPOSIXErrorDomain,
            let message = strerror(Int32(posix.code))
        {
            return String(cString: message)
        }
        return ns.localizedDescription.replacingOccurrences(of: "\n", with: " ")
    }
}
