// RFC 8216 §4.2 attribute lists: `NAME=value,NAME=value,...`.

import Foundation

/// One attribute value, typed by its syntax (RFC 8216 §4.2). The syntax alone
/// cannot always tell the intended type (`10` is a decimal-integer but also a
/// valid decimal-floating-point), so the typed accessors accept every syntax
/// that represents the requested type.
public enum AttributeValue: Sendable, Equatable {
    /// decimal-integer: `[0-9]+`, range 0...2^63-1 here (larger is an error).
    case decimalInteger(Int)
    /// hexadecimal-sequence: `0x`/`0X` followed by hex digits. `text` keeps the
    /// original spelling (with prefix); `bytes` is big-endian, an odd digit count
    /// is padded with a leading zero nibble.
    case hexadecimalSequence(text: String, bytes: [UInt8])
    /// decimal-floating-point or signed-decimal-floating-point: `-?[0-9]+(.[0-9]+)?`, finite (a
    /// number no Double holds is an `outOfRange` error).
    case decimalFloatingPoint(Double, text: String)
    /// quoted-string, without the quotes (variables already substituted when
    /// parsed by PlaylistParser).
    case quotedString(String)
    /// enumerated-string: any other unquoted token (YES, NO, NONE, AES-128 …).
    case enumeratedString(String)
    /// decimal-resolution: `WxH`.
    case decimalResolution(Resolution)

    /// The value as written (quotes removed), for logs and the `attributes` dictionaries.
    public var rawText: String {
        switch self {
        case .decimalInteger(let v): return String(v)
        case .hexadecimalSequence(let text, _): return text
        case .decimalFloatingPoint(_, let text): return text
        case .quotedString(let s): return s
        case .enumeratedString(let s): return s
        case .decimalResolution(let r): return "\(r.width)x\(r.height)"
        }
    }

    /// decimal-integer only.
    public var integerValue: Int? {
        if case .decimalInteger(let v) = self { return v }
        return nil
    }

    /// decimal-floating-point, signed or not; a decimal-integer is accepted too.
    public var doubleValue: Double? {
        switch self {
        case .decimalInteger(let v): return Double(v)
        case .decimalFloatingPoint(let d, _): return d
        default: return nil
        }
    }

    /// quoted-string only.
    public var quotedStringValue: String? {
        if case .quotedString(let s) = self { return s }
        return nil
    }

    /// enumerated-string only (an all-digit token such as `2` is a decimal-integer,
    /// so callers that accept numeric enumerations use `rawText`).
    public var enumeratedValue: String? {
        if case .enumeratedString(let s) = self { return s }
        return nil
    }

    /// hexadecimal-sequence bytes.
    public var hexBytes: [UInt8]? {
        if case .hexadecimalSequence(_, let b) = self { return b }
        return nil
    }

    /// decimal-resolution.
    public var resolutionValue: Resolution? {
        if case .decimalResolution(let r) = self { return r }
        return nil
    }
}

/// Parser for RFC 8216 §4.2 attribute lists.
///
/// Policy:
/// - A duplicate AttributeName is **fatal** (§4.2: "A given AttributeName MUST NOT
///   appear more than once in a given attribute-list. Clients SHOULD refuse to
///   parse such Playlists.").
/// - Blanks (SPACE, TAB) before or after a name, around `=`, after a value and
///   around `,` are skipped (seen in the wild: `AUTOSELECT=YES, DEFAULT=YES`);
///   §4.2 allows none, so the parser warns (`blanks` is set). Blanks inside a
///   quoted-string are part of the value.
/// - An unterminated quoted-string, a missing `=`, an empty name or value, a
///   name outside `[A-Z0-9-]` (a blank inside a name included), a trailing
///   comma, and a blank where a comma belongs (`A=1 B=2`) are fatal.
/// - An unquoted value runs to the next comma, blanks at its ends removed; if it
///   is not a number, resolution or hex sequence it is an enumerated-string
///   (which may then hold characters §4.2 does not allow, such as a TAB or a
///   blank inside; the tag's own rules decide, and a number with a blank inside
///   is not a number).
public enum AttributeList {
    static let rule = "RFC 8216 §4.2: attribute-list syntax"

    /// Parses `s` (the text after `TAG:`). `lineNumber` goes into errors.
    public static func parse(_ s: String, lineNumber: Int) throws(PlaylistError) -> [(name: String, value: AttributeValue)] {
        var blanks = false
        return try parse(s, lineNumber: lineNumber, maxAttributes: Int.max, substitute: nil, blanks: &blanks)
    }

    /// `substitute` is applied to quoted-string contents and to hexadecimal-sequence
    /// text before they are typed (EXT-X-DEFINE variable references). `blanks` is set
    /// when blanks §4.2 does not allow were skipped (around a name, `=`, a value or `,`).
    static func parse(
        _ s: String, lineNumber: Int, maxAttributes: Int,
        substitute: ((String) throws(PlaylistError) -> String)?,
        blanks: inout Bool
    ) throws(PlaylistError) -> [(name: String, value: AttributeValue)] {
        var result: [(name: String, value: AttributeValue)] = []
        var seen = Set<String>()
        let chars = Array(s.unicodeScalars)
        var i = 0
        func fail(_ message: String, rule: String = AttributeList.rule) -> PlaylistError {
            PlaylistError(kind: .syntax, lineNumber: lineNumber, rule: rule, message: message)
        }
        func skipSpace() {
            let from = i
            while i < chars.count, isBlank(chars[i]) { i += 1 }
            if i > from { blanks = true }
        }
        skipSpace()
        if i == chars.count { return [] }
        while true {
            skipSpace()
            // AttributeName (blanks before '=' are skipped; one inside the name is not a name character)
            let nameStart = i
            while i < chars.count, chars[i] != "=", chars[i] != "," { i += 1 }
            var nameEnd = i
            while nameEnd > nameStart, isBlank(chars[nameEnd - 1]) { nameEnd -= 1 }
            if nameEnd < i { blanks = true }
            let name = String(String.UnicodeScalarView(chars[nameStart..<nameEnd]))
            guard i < chars.count, chars[i] == "=" else {
                throw fail("attribute \"\(name)\" has no '=value'")
            }
            guard !name.isEmpty else { throw fail("empty attribute name") }
            guard name.unicodeScalars.allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }) else {
                throw fail("attribute name \"\(name)\" has characters outside [A-Z0-9-]")
            }
            i += 1 // '='
            skipSpace()
            let value: AttributeValue
            if i < chars.count, chars[i] == "\"" {
                i += 1
                let start = i
                while i < chars.count, chars[i] != "\"" { i += 1 }
                guard i < chars.count else { throw fail("unterminated quoted-string in attribute \(name)") }
                var text = String(String.UnicodeScalarView(chars[start..<i]))
                i += 1
                if let substitute { text = try substitute(text) }
                value = .quotedString(text)
            } else {
                let start = i
                while i < chars.count, chars[i] != "," {
                    if chars[i] == "\"" { throw fail("quote inside unquoted value of attribute \(name)") }
                    i += 1
                }
                var end = i
                while end > start, isBlank(chars[end - 1]) { end -= 1 }
                if end < i { blanks = true }
                guard end > start else { throw fail("attribute \(name) has an empty value") }
                if let next = secondAttribute(in: chars[start..<end]) {
                    throw fail("attribute \(name)'s value runs into \"\(next)=\": a ',' is missing between them")
                }
                var text = String(String.UnicodeScalarView(chars[start..<end]))
                if let substitute, text.hasPrefix("0x") || text.hasPrefix("0X") { text = try substitute(text) }
                value = try classify(text, name: name, lineNumber: lineNumber)
            }
            if seen.contains(name) {
                throw fail(
                    "attribute \(name) appears more than once",
                    rule: "RFC 8216 §4.2: an AttributeName MUST NOT appear more than once in an attribute-list")
            }
            seen.insert(name)
            result.append((name: name, value: value))
            if result.count > maxAttributes {
                throw PlaylistError(
                    kind: .limitExceeded, lineNumber: lineNumber, rule: "PlaylistLimits.maxAttributes",
                    message: "more than \(maxAttributes) attributes in one tag (limit maxAttributes)")
            }
            skipSpace()
            if i == chars.count { break }
            guard chars[i] == "," else { throw fail("expected ',' after attribute \(name)") }
            i += 1
            skipSpace()
            if i == chars.count { throw fail("trailing ',' after attribute \(name)") }
        }
        return result
    }

    /// SPACE or TAB: the only characters read as blanks (a NO-BREAK SPACE is text).
    static func isBlank(_ c: Unicode.Scalar) -> Bool { c == " " || c == "\t" }

    /// An unquoted value holding `blank NAME=` (`1280000 RESOLUTION=1280x720`): a comma is
    /// missing, and the blank is not read as one. Returns that NAME.
    static func secondAttribute(in value: ArraySlice<Unicode.Scalar>) -> String? {
        var k = value.startIndex
        while let blank = value[k...].firstIndex(where: isBlank) {
            k = blank
            while k < value.endIndex, isBlank(value[k]) { k += 1 }
            let nameStart = k
            while k < value.endIndex, ("A"..."Z").contains(value[k]) || ("0"..."9").contains(value[k]) || value[k] == "-" { k += 1 }
            if k > nameStart, k < value.endIndex, value[k] == "=" {
                return String(String.UnicodeScalarView(value[nameStart..<k]))
            }
        }
        return nil
    }

    static func classify(_ text: String, name: String, lineNumber: Int) throws(PlaylistError) -> AttributeValue {
        if text.hasPrefix("0x") || text.hasPrefix("0X") {
            let digits = text.dropFirst(2)
            guard let bytes = hexBytes(digits) else {
                throw PlaylistError(
                    kind: .invalidAttributeValue, lineNumber: lineNumber,
                    rule: "RFC 8216 §4.2: hexadecimal-sequence is 0x followed by [0-9A-F]+",
                    message: "attribute \(name) has an invalid hexadecimal-sequence \"\(text)\"")
            }
            return .hexadecimalSequence(text: text, bytes: bytes)
        }
        if isDigits(Substring(text)) {
            guard let v = Int(text) else {
                throw PlaylistError(
                    kind: .outOfRange, lineNumber: lineNumber,
                    rule: Numbers.integerRangeRule,
                    message: "attribute \(name) integer \(text.prefix(40))\(text.count > 40 ? "…" : "") is out of range")
            }
            return .decimalInteger(v)
        }
        if let d = Numbers.decimalFloat(text) {
            guard d.isFinite else {
                throw PlaylistError(
                    kind: .outOfRange, lineNumber: lineNumber, rule: Numbers.floatRangeRule,
                    message: "attribute \(name) number \(text.prefix(40))\(text.count > 40 ? "…" : "") is out of range")
            }
            return .decimalFloatingPoint(d, text: text)
        }
        if let r = Numbers.resolution(text) { return .decimalResolution(r) }
        return .enumeratedString(text)
    }

    static func isDigits(_ s: Substring) -> Bool {
        !s.isEmpty && s.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    static func hexBytes(_ digits: Substring) -> [UInt8]? {
        guard !digits.isEmpty else { return nil }
        var nibbles: [UInt8] = []
        nibbles.reserveCapacity(digits.utf8.count + 1)
        for c in digits.utf8 {
            switch c {
            case 0x30...0x39: nibbles.append(c - 0x30)
            case 0x41...0x46: nibbles.append(c - 0x41 + 10)
            case 0x61...0x66: nibbles.append(c - 0x61 + 10)
            default: return nil
            }
        }
        if nibbles.count % 2 == 1 { nibbles.insert(0, at: 0) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(nibbles.count / 2)
        var k = 0
        while k < nibbles.count { bytes.append(nibbles[k] << 4 | nibbles[k + 1]); k += 2 }
        return bytes
    }
}

/// Strict number grammars of RFC 8216 §4.2 (Swift's `Double("nan")`, `Double("1e3")`
/// and `Int("+1")` accept more than the RFC does).
enum Numbers {
    /// A decimal-integer too large for Int.
    static let integerRangeRule = "RFC 8216 §4.2: a decimal-integer is 0 to 2^64-1; hlsplay reads 0 to 2^63-1"
    /// A decimal-floating-point that no Double holds (it would be infinite).
    static let floatRangeRule = "RFC 8216 §4.2: decimal-floating-point; hlsplay reads what a 64-bit IEEE double holds (below 1.8e308)"

    /// decimal-integer.
    static func integer(_ s: Substring) -> Int? {
        AttributeList.isDigits(s) ? Int(s) : nil
    }

    /// signed-decimal-floating-point (a plain decimal-floating-point is a subset).
    static func decimalFloat<S: StringProtocol>(_ s: S) -> Double? {
        var u = Substring(s).utf8[...]
        if u.first == UInt8(ascii: "-") { u = u.dropFirst() }
        guard let first = u.first, first >= 0x30, first <= 0x39 else { return nil }
        var sawDot = false
        var lastWasDot = false
        for c in u {
            if c == UInt8(ascii: ".") {
                if sawDot { return nil }
                sawDot = true
                lastWasDot = true
            } else if c >= 0x30, c <= 0x39 {
                lastWasDot = false
            } else {
                return nil
            }
        }
        if lastWasDot { return nil }
        return Double(String(s))
    }

    /// decimal-resolution `WxH`.
    static func resolution(_ s: String) -> Resolution? {
        let parts = s.split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = integer(parts[0]), let h = integer(parts[1]) else { return nil }
        return Resolution(width: w, height: h)
    }
}
