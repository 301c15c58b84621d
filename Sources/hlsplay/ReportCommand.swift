// `hlsplay report SESSION.jsonl --html OUT.html [--title T]`: renders a
// session log as a self-contained HTML timeline (HLSReport's TimelineReport).

import Foundation
import HLSCore
import HLSPlayer
import HLSReport

enum ReportCommand {
    static let usage = """
        usage: hlsplay report SESSION.jsonl --html OUT.html [--title TITLE] [--no-redact]

        Renders a session log (written by --log) as one self-contained HTML page:
        buffer, bitrate, throughput, stall risk, policy and stalls over time.
        Use '-' as OUT.html to write the page to standard output. URLs in the page
        lose their credentials and query values (as in a log written without
        --no-redact), also when the log has them; --no-redact keeps them whole.
        """

    /// Runs the subcommand with the words after `report`; returns the exit status
    /// (0, 64 for a usage error, 66 for an unreadable log, 65 for an invalid one,
    /// 73 when the page cannot be written).
    static func run(_ arguments: [String]) -> Int32 {
        var input: String?
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
                    guard input == nil else { return usageError("unexpected argument '\(word)' (one session log only)") }
                    input = word
                }
            }
        } catch {
            return usageError(error.message)
        }
        guard let input else { return usageError("missing the session log (SESSION.jsonl)") }
        guard let output else { return usageError("missing '--html OUT.html'") }

        let text: String
        if input != "-" && !FileManager.default.fileExists(atPath: input) {
            return failure("cannot read '\(input)': no such file", status: 66)
        }
        do {
            let data = input == "-" ? FileHandle.standardInput.readDataToEndOfFile() : try Data(contentsOf: URL(fileURLWithPath: input))
            text = String(decoding: data, as: UTF8.self)
        } catch {
            return failure("cannot read '\(input)': \(reason(error))", status: 66)
        }
        let html: String
        do {
            // The log may have been written with --no-redact, and the page is made to be shared.
            html = try TimelineReport.render(
                sessionLog: StandardStreams.outgoing.redacted(text),
                title: title.map(StandardStreams.outgoing.redacted))
        } catch {
            return failure("'\(input)' is not a session log: \(error)", status: 65)
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
