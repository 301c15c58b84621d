// `hlsplay report SESSION.jsonl [MORE.jsonl …] --html OUT.html [--title T]`:
// renders session logs as one self-contained HTML timeline page (HLSReport's
// TimelineReport), one section per log on a shared time axis.

import Foundation
import HLSCore
import HLSPlayer
import HLSReport

enum ReportCommand {
    static let usage = """
        usage: hlsplay report SESSION.jsonl [MORE.jsonl ...] --html OUT.html
                              [--title TITLE] [--no-redact]

        Renders a session log (written by --log) as one self-contained HTML page:
        requests (a waterfall), buffer, bitrate, throughput, stall risk, policy and
        stalls over time. Several logs give one page with a section per session,
        all on the same time axis and scales; a log of 'hlsplay simulate' is
        marked as simulated. Use '-' as a log to read it from standard input, and
        as OUT.html to write the page to standard output. URLs in the page
        lose their credentials and query values (as in a log written without
        --no-redact), also when the log has them; --no-redact keeps them whole.
        """

    /// Runs the subcommand with the words after `report`; returns the exit status
    /// (0, 64 for a usage error, 66 for an unreadable log, 65 for an invalid one,
    /// 73 when the page cannot be written). With several logs, the first one that
    /// cannot be read or is not valid is named and nothing is written.
    static func run(_ arguments: [String]) -> Int32 {
        var inputs: [String] = []
        var output: String?
        var title: String?
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
                        log: StandardStreams.outgoing.redacted(String(decoding: data, as: UTF8.self))))
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
