// The command-line grammar hlsplay (every subcommand) and hls-origin share: `--opt value` and `--opt=value`,
// `--` ending the options, and how durations, rates and sizes are written.

import Testing
@testable import HLSCore

@Suite struct CommandLineOptionsTests {
    /// Reads `argv` as a command with `--rate`, `--log` (valued) and `--live` (a flag) would.
    private func read(_ argv: [String]) throws(UsageError) -> (options: [String: String], flags: [String], operands: [String]) {
        var words = OptionWords(argv)
        var options: [String: String] = [:]
        var flags: [String] = []
        var operands: [String] = []
        while let word = try words.next() {
            switch word {
            case "--rate", "--log": options[word] = try words.value(for: word)
            case "--live": flags.append(word)
            default:
                if words.isOption(word) { throw UsageError(message: "unknown option '\(words.current)'") }
                operands.append(word)
            }
        }
        return (options, flags, operands)
    }

    @Test func valueAsNextWordOrAfterEquals_sameResult() throws {
        let separate = try read(["ROOT", "--rate", "2m", "--log", "a.jsonl", "--live"])
        let joined = try read(["ROOT", "--rate=2m", "--log=a.jsonl", "--live"])
        #expect(separate.options == ["--rate": "2m", "--log": "a.jsonl"])
        #expect(joined.options == separate.options)
        #expect(joined.flags == ["--live"] && joined.operands == ["ROOT"])
    }

    @Test func equalsValue_keepsLaterEqualsSigns_andMayBeEmpty() throws {
        #expect(try read(["--log=a=b.jsonl"]).options["--log"] == "a=b.jsonl")
        #expect(try read(["--log="]).options["--log"] == "")
    }

    @Test func valueStartingWithDash_isTakenAsTheValue() throws {
        #expect(try read(["--log", "-"]).options["--log"] == "-")
    }

    @Test func missingValue_namesTheOption() {
        #expect(throws: UsageError(message: "--rate needs a value")) { try read(["ROOT", "--rate"]) }
    }

    @Test func flagGivenAValue_isRefusedNamingTheWord() {
        #expect(throws: UsageError(message: "'--live=yes': --live takes no value (got 'yes')")) { try read(["--live=yes"]) }
        // Also when it is the last word, and before other words.
        #expect(throws: UsageError.self) { try read(["--live=", "ROOT"]) }
    }

    @Test func unknownOptionWithEquals_isReportedAsGiven() {
        #expect(throws: UsageError(message: "unknown option '--bogus=1'")) { try read(["--bogus=1"]) }
    }

    @Test func doubleDash_endsTheOptions() throws {
        let r = try read(["--live", "--", "--rate=2m", "-x"])
        #expect(r.flags == ["--live"])
        #expect(r.operands == ["--rate=2m", "-x"])
        #expect(r.options.isEmpty)
    }

    @Test func singleDashAndURLsWithEquals_areOperands() throws {
        #expect(try read(["-", "http://h/p?a=b"]).operands == ["-", "http://h/p?a=b"])
    }

    @Test func seconds_unitsAndBareNumbers() {
        #expect(OptionValue.seconds("2") == 2)
        #expect(OptionValue.seconds("0.05") == 0.05)
        #expect(OptionValue.seconds(".5") == 0.5)
        #expect(OptionValue.seconds("2s") == 2)
        #expect(OptionValue.seconds("50ms") == 0.05)
        #expect(OptionValue.seconds("50MS") == 0.05)
        #expect(OptionValue.seconds("250us") == 0.00025)
        #expect(OptionValue.seconds("50000us") == 0.05)
        #expect(OptionValue.seconds("1.5min") == 90)
        #expect(OptionValue.seconds("2h") == 7200)
        #expect(OptionValue.seconds("1e9") == 1e9)
        #expect(OptionValue.seconds("0") == 0)
    }

    @Test func seconds_refusesWhatIsNotADuration() {
        for bad in ["", "s", "ms", "-1", "+1", "soon", "5parsecs", "2m", "1.2.3", "inf", "nan", "0x10", "1e999", "2 s", "1e"] {
            #expect(OptionValue.seconds(bad) == nil, "\(bad)")
        }
    }

    @Test func bitsPerSecond_everySpellingBothCommandsAccepted() {
        #expect(OptionValue.bitsPerSecond("2000000") == 2_000_000)
        #expect(OptionValue.bitsPerSecond("500k") == 500_000)
        #expect(OptionValue.bitsPerSecond("500kbit") == 500_000)
        #expect(OptionValue.bitsPerSecond("3m") == 3_000_000)
        #expect(OptionValue.bitsPerSecond("2.5M") == 2_500_000)
        #expect(OptionValue.bitsPerSecond("2mbit") == 2_000_000)
        #expect(OptionValue.bitsPerSecond("1.5mbps") == 1_500_000)
        #expect(OptionValue.bitsPerSecond("1gbit/s") == 1e9)
        #expect(OptionValue.bitsPerSecond("800kb/s") == 800_000)
        for bad in ["", "fast", "2x", "2mbyte", "-1m", "m"] {
            #expect(OptionValue.bitsPerSecond(bad) == nil, "\(bad)")
        }
    }

    @Test func bytes_powersOf1024() {
        #expect(OptionValue.bytes("268435456") == 268_435_456)
        #expect(OptionValue.bytes("256m") == 268_435_456)
        #expect(OptionValue.bytes("256MiB") == 268_435_456)
        #expect(OptionValue.bytes("1k") == 1024)
        #expect(OptionValue.bytes("0.25g") == 268_435_456)
        #expect(OptionValue.bytes("1e30") == nil)
        #expect(OptionValue.bytes("lots") == nil)
    }
}
