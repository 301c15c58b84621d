// A request header the user asked for (`--header`, `--cookie`, `--referer`): sent with every request,
// or only with requests to one host. Its value may be a credential, so it is never written out: the
// configuration record keeps its name, host and length, and every output redacts it by name.

/// One header to add to requests, optionally only for one host.
public struct UserHeader: Sendable, Equatable, Encodable {
    /// Only requests to this host (case-insensitive, no port) get it; nil: every request.
    public var host: String?
    public var name: String
    public var value: String

    public init(host: String? = nil, name: String, value: String) {
        self.host = host
        self.name = name
        self.value = value
    }

    /// Whether a request to `host` gets this header.
    public func applies(toHost requestHost: String?) -> Bool {
        guard let host else { return true }
        return requestHost?.lowercased() == host.lowercased()
    }

    public enum ParseError: Error, Equatable, CustomStringConvertible {
        case noColon(String)
        case badName(String)
        case controlCharacter(String)
        public var description: String {
            switch self {
            case .noColon(let s): "'\(s)' is not a header 'Name: value' (optionally 'HOST/Name: value')"
            case .badName(let s): "'\(s)' is not a header name (letters, digits and !#$%&'*+-.^_`|~)"
            case .controlCharacter(let s): "the value of '\(s)' holds a control character (a header is one line)"
            }
        }
    }

    /// `Name: value` or `HOST/Name: value` (a header name cannot hold '/', so the host prefix is unambiguous).
    public static func parse(_ text: String) throws(ParseError) -> UserHeader {
        guard let colon = text.firstIndex(of: ":") else { throw .noColon(text) }
        var name = String(text[..<colon])
        var host: String?
        if let slash = name.firstIndex(of: "/") {
            host = String(name[..<slash])
            name = String(name[name.index(after: slash)...])
            if host?.isEmpty == true { host = nil }
        }
        name = name.trimmingWhitespace
        guard !name.isEmpty, name.unicodeScalars.allSatisfy(Self.isTokenCharacter) else { throw .badName(name) }
        let value = String(text[text.index(after: colon)...]).trimmingWhitespace
        guard !value.unicodeScalars.contains(where: { $0.value < 0x20 && $0 != "\t" || $0.value == 0x7F }) else {
            throw .controlCharacter(name)
        }
        return UserHeader(host: host, name: name, value: value)
    }

    /// The header one of the shorthand options asks for, nil when the text cannot be one: `--cookie 'A=1; B=2'`
    /// (optionally `HOST/A=1`: a host prefix ends at a '/' before the first '='), `--referer URL`,
    /// `--user-agent TEXT` (each a non-empty value on one line).
    public static func shorthand(_ option: Shorthand, _ text: String) -> UserHeader? {
        switch option {
        case .cookie:
            let slash = text.firstIndex(of: "/"), equals = text.firstIndex(of: "=")
            let scoped = slash.map { s in equals.map { s < $0 } ?? true } ?? false
            let line = scoped ? String(text[..<slash!]) + "/Cookie: " + String(text[text.index(after: slash!)...]) : "Cookie: " + text
            guard let header = try? parse(line), !header.value.isEmpty, header.value.contains("=") else { return nil }
            return header
        case .referer, .userAgent:
            guard let header = try? parse(option.headerName + ": " + text), !header.value.isEmpty else { return nil }
            return header
        }
    }

    /// The options that name their header for the user.
    public enum Shorthand: Sendable {
        case cookie, referer, userAgent
        public var headerName: String {
            switch self {
            case .cookie: "Cookie"
            case .referer: "Referer"
            case .userAgent: "User-Agent"
            }
        }
    }

    /// RFC 9110 token characters.
    static func isTokenCharacter(_ c: Unicode.Scalar) -> Bool {
        switch c {
        case "a"..."z", "A"..."Z", "0"..."9": true
        case "!", "#", "$", "%", "&", "'", "*", "+", "-", ".", "^", "_", "`", "|", "~": true
        default: false
        }
    }

    private enum CodingKeys: String, CodingKey { case host, name, valueBytes }

    /// The configuration record: name, host and the value's length, never the value.
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(host, forKey: .host)
        try c.encode(name, forKey: .name)
        try c.encode(value.utf8.count, forKey: .valueBytes)
    }
}

extension String {
    fileprivate var trimmingWhitespace: String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
