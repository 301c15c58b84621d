// What of a URL goes into logs. Query strings often carry access tokens and
// signed-URL signatures, and userinfo carries credentials: by default the
// logs keep every parameter name but none of their values, and no userinfo.
// The same rule applies to URLs inside free text (error messages, a refused
// redirect's Location, an HTTP error body, a playlist line quoted in a
// warning), which is how every string leaving the process is redacted
// (`OutgoingText`).

import Foundation

public enum URLRedaction {
    /// The placeholder written instead of a secret.
    public static let placeholder = "REDACTED"

    /// Request and response headers whose values are credentials: a basic-auth header libcurl
    /// builds from a URL's userinfo, a bearer token, a session cookie.
    public static let credentialHeaderNames: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    /// A header's value as it may be logged: a credential header's (any case of its name) is
    /// replaced; any other is kept (URLs inside it are redacted with the text around them).
    public static func redactedHeaderValue(name: String, value: String) -> String {
        credentialHeaderNames.contains(name.lowercased()) ? placeholder : value
    }

    /// `url` as it may be logged: userinfo replaced, each query value replaced
    /// (names kept, so the shape of the URL stays readable), fragment dropped.
    public static func redacted(_ url: URL) -> String {
        redacted(urlString: url.absoluteString)
    }

    /// One URL, absolute (`scheme://[userinfo@]host/path?query#fragment`) or
    /// relative/opaque (`path?query#fragment`), redacted as `redacted(_:)` does.
    /// Text without userinfo or a query is returned as it is.
    public static func redacted(urlString: String) -> String {
        var rest = Substring(urlString)
        var out = ""
        if let schemeEnd = rest.range(of: "://"), isScheme(rest[..<schemeEnd.lowerBound]) {
            out += rest[..<schemeEnd.upperBound]
            rest = rest[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@") {
                out += placeholder
                out += authority[at...]
            } else {
                out += authority
            }
            rest = rest[authorityEnd...]
        }
        guard let question = rest.firstIndex(of: "?") else {
            // No query: a fragment is dropped from an absolute URL only (in a relative
            // reference without a query, `#` is as likely to be text as a fragment).
            if !out.isEmpty, let hash = rest.firstIndex(of: "#") { return out + rest[..<hash] }
            return out + rest
        }
        out += rest[...question]
        var query = rest[rest.index(after: question)...]
        if let hash = query.firstIndex(of: "#") { query = query[..<hash] }
        out += query.split(separator: "&", omittingEmptySubsequences: false).map { item -> String in
            guard let equals = item.firstIndex(of: "=") else { return String(item) }
            let value = item[item.index(after: equals)...]
            return value.isEmpty ? String(item) : item[...equals] + placeholder
        }.joined(separator: "&")
        return out
    }

    /// `text` with every URL inside it redacted: absolute URLs (`scheme://…`, any scheme)
    /// lose userinfo, query values and fragment; any other run of URL characters with a
    /// query (`seg.ts?token=…`, `mailto:x?subject=…`) loses its query values. A URL ends
    /// where URL characters end (space, quote, backslash, control character, `<`, `>`);
    /// trailing punctuation of the sentence around it (`.`, `,`, `)`, ...) is not part of it.
    /// Redacting redacted text changes nothing.
    public static func redactingURLs(in text: String) -> String {
        // Fast path: most log lines hold neither. (Past it, a line whose runs of URL characters
        // hold no URL comes out unchanged: each run is judged on its own, in redactedToken.)
        guard mayHoldURLMarker(text) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count)
        let scalars = text.unicodeScalars
        var i = scalars.startIndex
        while i < scalars.endIndex {
            guard isURLScalar(scalars[i]) else {
                out.unicodeScalars.append(scalars[i])
                i = scalars.index(after: i)
                continue
            }
            var j = i
            while j < scalars.endIndex, isURLScalar(scalars[j]) { j = scalars.index(after: j) }
            let run = Substring(scalars[i..<j])
            if mayHoldURLMarker(run) { out += redactedToken(String(run)) } else { out += run }
            i = j
        }
        return out
    }

    /// False when `text` holds neither "?" nor "://": then no search finds either, so the
    /// searches after it are skipped. A scan of the UTF-8 bytes (ASCII bytes never occur
    /// inside a multi-byte sequence), where Foundation's `contains` / `range(of:)` bridge the
    /// string to NSString: every session-log line passes here, and every run of URL characters
    /// in a line that holds a URL, on the threads that load and decode, before the first frame
    /// too. Only the runs that pass it meet Foundation's search.
    static func mayHoldURLMarker(_ text: some StringProtocol) -> Bool {
        let question = UInt8(ascii: "?"), colon = UInt8(ascii: ":"), slash = UInt8(ascii: "/")
        // How much of "://" ends at the current byte: 0, 1 (":") or 2 (":/").
        var matched = 0
        for byte in text.utf8 {
            if byte == question { return true }
            if byte == colon {
                matched = 1
            } else if byte == slash, matched > 0 {
                if matched == 2 { return true }
                matched = 2
            } else {
                matched = 0
            }
        }
        return false
    }

    /// One run of URL characters: the URL inside it redacted, the text around it kept.
    static func redactedToken(_ token: String) -> String {
        guard mayHoldURLMarker(token) else { return token }
        // Sentence punctuation after a URL ("(Location: ftp://x/?a=1)." ) is not part of it.
        var body = Substring(token)
        while let last = body.last, ".,;:!?')]".contains(last) { body.removeLast() }
        let trailing = token[body.endIndex...]
        // An absolute URL may follow other characters in the run ("url=http://…"): it starts
        // at its scheme, the letters before "://".
        if let separator = body.range(of: "://") {
            var start = separator.lowerBound
            while start > body.startIndex, isSchemeCharacter(body[body.index(before: start)]) { start = body.index(before: start) }
            while start < separator.lowerBound, !body[start].isLetter { start = body.index(after: start) }
            if start < separator.lowerBound {
                let before = body[..<start]
                // The part before the URL may hold a query too ("?next=http://…" is one value).
                if !before.contains("?") {
                    return before + redacted(urlString: String(body[start...])) + trailing
                }
            }
        }
        guard body.contains("?") else { return token }
        return redacted(urlString: String(body)) + trailing
    }

    /// RFC 3986 scheme: a letter, then letters, digits, "+", "-", ".".
    static func isScheme(_ s: Substring) -> Bool {
        guard let first = s.first, first.isASCII, first.isLetter else { return false }
        return s.allSatisfy(isSchemeCharacter)
    }

    static func isSchemeCharacter(_ c: Character) -> Bool {
        c.isASCII && (c.isLetter || c.isNumber || c == "+" || c == "-" || c == ".")
    }

    /// RFC 3986 characters (unreserved, reserved, "%"), and non-ASCII letters and digits
    /// (an IRI, or bytes a server did not encode).
    static func isURLScalar(_ s: Unicode.Scalar) -> Bool {
        switch s.value {
        case 0x61...0x7A, 0x41...0x5A, 0x30...0x39: return true
        case 0x00...0x7F:
            switch s {
            case "-", ".", "_", "~", ":", "/", "?", "#", "[", "]", "@", "!", "$", "&", "'", "(", ")", "*", "+", ",", ";", "=", "%":
                return true
            default: return false
            }
        default: return s.properties.isAlphabetic || s.properties.numericType != nil
        }
    }
}
