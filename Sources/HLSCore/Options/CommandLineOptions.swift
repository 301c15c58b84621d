// The command-line grammar every hlsplay command and hls-origin share: how words become options and values,
// and how durations and rates are written. Pure: no I/O, no exit; the commands print and exit.

/// A command-line mistake. `message` names the word at fault; the command prints it with a short usage and exits
/// 64 (EX_USAGE).
public struct UsageError: Error, CustomStringConvertible, Equatable {
    public var message: String
    public var description: String { message }
    public init(message: String) { self.message = message }
}

/// The words of a command line, read one option at a time. `--opt value` and `--opt=value` are the same;
/// `--` ends the options (every later word is an operand, even one starting with `-`).
///
///     var words = OptionWords(argv)
///     while let word = try words.next() {
///         switch word {
///         case "--rate": rate = try words.value(for: word)
///         case "--live": live = true          // `--live=yes` throws: a flag takes no value
///         default: if words.isOption(word) { throw UsageError(…) } else { operands.append(word) }
///         }
///     }
public struct OptionWords {
    private let words: [String]
    private var index = 0
    /// The `value` of the current `--opt=value`, until `value(for:)` takes it.
    private var inlineValue: String?
    /// The current word as given (`--rate=2m`), for messages and for passing it on.
    public private(set) var current: String = ""
    private var optionsEnded = false

    public init(_ argv: [String]) { words = argv }

    /// The next option name (`--rate` of `--rate=2m`) or operand; nil after the last word. Throws if the
    /// previous option was written `--flag=value` and takes no value.
    public mutating func next() throws(UsageError) -> String? {
        if let inlineValue {
            throw UsageError(message: "'\(current)': \(current.prefix { $0 != "=" }) takes no value (got '\(inlineValue)')")
        }
        guard index < words.count else { return nil }
        let word = words[index]
        index += 1
        current = word
        if !optionsEnded && word == "--" {
            optionsEnded = true
            return try next()
        }
        if !optionsEnded, word.hasPrefix("--"), let equals = word.firstIndex(of: "=") {
            inlineValue = String(word[word.index(after: equals)...])
            return String(word[..<equals])
        }
        return word
    }

    /// Whether `word` (as `next()` returned it) is an option rather than an operand: it starts with `-`, is not
    /// `-` alone (standard input) and came before any `--`.
    public func isOption(_ word: String) -> Bool {
        !optionsEnded && word.hasPrefix("-") && word != "-"
    }

    /// The current option's value: the text after `=`, or the next word. Throws naming `option` when there is none.
    public mutating func value(for option: String) throws(UsageError) -> String {
        if let inline = inlineValue {
            inlineValue = nil
            return inline
        }
        guard index < words.count else { throw UsageError(message: "\(option) needs a value") }
        let word = words[index]
        index += 1
        return word
    }

    /// The current word as given, its `=value` included, for a command that hands it on to another parser.
    public mutating func passOn() -> String {
        inlineValue = nil
        return current
    }
}

/// How durations, rates and sizes are written on every command line: a number, then an optional unit.
public enum OptionValue {
    /// Seconds in `text`: `2.5`, `2s`, `500ms`, `250us` (or `µs`), `1.5min`, `2h`; a bare number is seconds.
    /// Exponents (`1e9`) are accepted; a sign, hex, `inf` and `nan` are not. nil if it is not a duration.
    public static func seconds(_ text: String) -> Double? {
        guard let (number, unit) = split(text) else { return nil }
        // Sub-second units divide (correctly rounded: 50000us is exactly the 0.05 that `0.05` is).
        let seconds: Double
        switch unit {
        case "", "s", "sec", "secs", "second", "seconds": seconds = number
        case "ms": seconds = number / 1e3
        case "us", "µs": seconds = number / 1e6
        case "min", "mins", "minute", "minutes": seconds = number * 60
        case "h", "hour", "hours": seconds = number * 3600
        default: return nil
        }
        return seconds.isFinite ? seconds : nil
    }

    /// Bits per second in `text`: `2000000`, `500k`, `2m`, `1.5g`, each optionally followed by `bit`, `bits`,
    /// `bps`, `b`, `bit/s` or `b/s` (`2mbit`, `1.5mbps`, `500kb/s`); k, m, g are powers of 1000. nil if not a rate.
    public static func bitsPerSecond(_ text: String) -> Double? {
        guard let (number, unit) = split(text) else { return nil }
        var rest = Substring(unit)
        var scale = 1.0
        switch rest.first {
        case "k": scale = 1e3; rest = rest.dropFirst()
        case "m": scale = 1e6; rest = rest.dropFirst()
        case "g": scale = 1e9; rest = rest.dropFirst()
        default: break
        }
        guard ["", "bit", "bits", "bps", "b", "bit/s", "b/s"].contains(rest) else { return nil }
        let bps = number * scale
        return bps.isFinite ? bps : nil
    }

    /// Bytes in `text`: `268435456`, `262144k`, `256m`, `0.25g`, optionally followed by `b`, `ib` or `B`
    /// (`256MiB`); k, m, g are powers of 1024. nil if not a size or too large for an Int.
    public static func bytes(_ text: String) -> Int? {
        guard let (number, unit) = split(text) else { return nil }
        var rest = Substring(unit)
        var scale = 1.0
        switch rest.first {
        case "k": scale = 1024; rest = rest.dropFirst()
        case "m": scale = 1_048_576; rest = rest.dropFirst()
        case "g": scale = 1_073_741_824; rest = rest.dropFirst()
        default: break
        }
        guard ["", "b", "ib"].contains(rest) else { return nil }
        let bytes = number * scale
        guard bytes.isFinite, bytes < Double(Int.max / 2) else { return nil }
        return Int(bytes.rounded())
    }

    /// `text` cut into a non-negative decimal number (digits, one `.`, an optional exponent) and its lowercased
    /// unit; nil if the number part is missing or malformed.
    private static func split(_ text: String) -> (Double, String)? {
        let lower = text.lowercased()
        var numberEnd = lower.startIndex
        var sawDigit = false
        var sawExponent = false
        var i = lower.startIndex
        while i < lower.endIndex {
            let c = lower[i]
            if c.isASCII && c.isNumber {
                sawDigit = true
            } else if c == "." && !sawExponent {
            } else if c == "e", sawDigit, !sawExponent, let next = lower[lower.index(after: i)...].first,
                next.isASCII && next.isNumber || next == "-" || next == "+"
            {
                sawExponent = true
                let afterE = lower.index(after: i)
                if lower[afterE] == "-" || lower[afterE] == "+" { i = afterE }
            } else {
                break
            }
            i = lower.index(after: i)
            numberEnd = i
        }
        guard sawDigit, let number = Double(lower[..<numberEnd]), number.isFinite else { return nil }
        return (number, String(lower[numberEnd...]))
    }
}
