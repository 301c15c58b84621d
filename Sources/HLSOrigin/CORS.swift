import Foundation

/// What the origin adds to answers so browser players (hls.js, Shaka, video.js in a page served from another
/// origin) can load from it, and how a request's header fields are written to the request log.
extension OriginHTTP {
    /// Methods the origin answers, for `Allow` and `Access-Control-Allow-Methods`.
    static let allowedMethods = "GET, HEAD, OPTIONS"

    /// Response headers a player's script may read besides the CORS-safelisted ones (Cache-Control, Content-Language,
    /// Content-Type, Expires, Last-Modified, Pragma, and Content-Length in newer browsers): sizes and ranges for
    /// bandwidth estimates and byte-range loads, Date and Age for live clocks and cache age, Retry-After for faults.
    static let exposedHeaders = "Content-Length, Content-Range, Accept-Ranges, Date, Age, Retry-After, Content-Type, Cache-Control"

    /// Sent on every answer, errors and faults included, so a script sees the real status instead of a network error.
    /// `*` (no credentials): the origin serves public test content and sets no cookies. `Timing-Allow-Origin`
    /// lets the page's Resource Timing entries for these answers carry their real timings and sizes (responseStart,
    /// transferSize…), which a cross-origin resource otherwise reports as zero: what a player in a page measured
    /// can then be compared with this origin's log.
    static let corsHeaders: [(String, String)] = [
        ("Access-Control-Allow-Origin", "*"),
        ("Access-Control-Expose-Headers", exposedHeaders),
        ("Timing-Allow-Origin", "*")
    ]

    /// How long a browser may cache a preflight answer, seconds (`Access-Control-Max-Age`): browsers cap it at
    /// 2 h (Chromium) or 24 h (Firefox); 10 minutes spares a player one preflight per request on a long run.
    static let preflightMaxAgeSeconds = 600

    /// Headers of the 204 answer to OPTIONS. The header names a preflight asks for
    /// (`Access-Control-Request-Headers`, e.g. `cmcd-request,range`) are echoed, each kept only if it is an HTTP
    /// token, so a client cannot inject a header line through them; none asked, none echoed. A preflight that asks
    /// `Access-Control-Request-Private-Network: true` (Chrome's Private Network Access, for a public page loading
    /// from a loopback or private address) is granted it.
    static func preflightHeaders(requestedHeaders: String?, privateNetwork: String? = nil) -> [(String, String)] {
        var headers: [(String, String)] = [
            ("Allow", allowedMethods),
            ("Access-Control-Allow-Methods", allowedMethods),
            ("Access-Control-Max-Age", "\(preflightMaxAgeSeconds)")
        ]
        let names = (requestedHeaders ?? "").split(separator: ",")
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty && $0.unicodeScalars.allSatisfy(isTokenCharacter) }
        if !names.isEmpty { headers.append(("Access-Control-Allow-Headers", names.joined(separator: ", "))) }
        if privateNetwork?.trimmingCharacters(in: .whitespaces).lowercased() == "true" {
            headers.append(("Access-Control-Allow-Private-Network", "true"))
        }
        return headers
    }

    /// RFC 9110 §5.6.2 `tchar`.
    static func isTokenCharacter(_ c: Unicode.Scalar) -> Bool {
        guard c.isASCII else { return false }
        if ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) { return true }
        return "!#$%&'*+-.^_`|~".unicodeScalars.contains(c)
    }

    /// A request's header fields as the request log records them: names lowercased; a field sent more than once
    /// joined with ", " (RFC 9110 §5.3), `Cookie` with "; "; `Cookie` reduced to its cookie names (`a; b`) and
    /// `Authorization` / `Proxy-Authorization` to their scheme (`Bearer REDACTED`), so a log can be shared.
    static func loggedHeaders(_ fields: [(name: String, value: String)]) -> [String: String] {
        var logged: [String: String] = [:]
        for (name, value) in fields {
            let key = name.lowercased()
            let shown: String
            switch key {
            case "cookie":
                shown = value.split(separator: ";").map {
                    String($0.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]).trimmingCharacters(in: .whitespaces)
                }.filter { !$0.isEmpty }.joined(separator: "; ")
            case "authorization", "proxy-authorization":
                let scheme = value.split(separator: " ", maxSplits: 1).first.map(String.init) ?? ""
                shown = scheme.isEmpty ? "REDACTED" : "\(scheme) REDACTED"
            default:
                shown = value
            }
            if let earlier = logged[key] {
                logged[key] = earlier + (key == "cookie" ? "; " : ", ") + shown
            } else {
                logged[key] = shown
            }
        }
        return logged
    }

    /// An IMF-fixdate (RFC 9110 §5.6.7), e.g. `Sun, 06 Nov 1994 08:49:37 GMT`, for the `Date` header.
    static func httpDate(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ n: Int32) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
