import Foundation
import Glibc

/// A parsed HTTP/1.x request head.
struct HTTPRequestHead: Sendable {
    var method: String
    var target: String
    var version: String
    var headers: [(name: String, value: String)]

    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// HTTP/1.1 defaults to keep-alive, HTTP/1.0 to close; `Connection` overrides.
    var wantsKeepAlive: Bool {
        let tokens = (header("Connection") ?? "").lowercased().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        if tokens.contains("close") { return false }
        if version == "HTTP/1.0" { return tokens.contains("keep-alive") }
        return true
    }

    /// Parses the bytes before the blank line. Returns nil if malformed.
    static func parse(_ bytes: ArraySlice<UInt8>) -> HTTPRequestHead? {
        // Split on bytes: "\r\n" is one Character in Swift strings.
        var lines: [Substring] = []
        for raw in bytes.split(separator: 0x0A, omittingEmptySubsequences: false) {
            let line = raw.last == 0x0D ? raw.dropLast() : raw
            guard let text = String(validating: line, as: UTF8.self) else { return nil }
            lines.append(Substring(text))
        }
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst()
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty,
            parts[0].allSatisfy({ $0.isLetter && $0.isUppercase }),
            parts[2] == "HTTP/1.1" || parts[2] == "HTTP/1.0"
        else { return nil }
        var headers: [(String, String)] = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = line[..<colon]
            guard !name.isEmpty, !name.contains(" "), !name.contains("\t") else { return nil }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers.append((String(name), value))
        }
        return HTTPRequestHead(method: String(parts[0]), target: String(parts[1]), version: String(parts[2]), headers: headers)
    }
}

enum HTTPStatus {
    static func reason(_ code: Int) -> String {
        switch code {
        case 200: return "OK"
        case 204: return "No Content"
        case 206: return "Partial Content"
        case 400: return "Bad Request"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 408: return "Request Timeout"
        case 410: return "Gone"
        case 416: return "Range Not Satisfiable"
        case 429: return "Too Many Requests"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 502: return "Bad Gateway"
        case 503: return "Service Unavailable"
        case 504: return "Gateway Timeout"
        default: return "Status \(code)"
        }
    }
}

/// Result of resolving a request target against the served root.
enum PathResolution: Equatable {
    case file(path: String, decoded: String)
    case forbidden(decoded: String)
    case badRequest
}

enum OriginHTTP {
    static func contentType(forPath path: String) -> String {
        let ext = (path as NSString).pathExtension.lowercased()
        switch ext {
        case "m3u8", "m3u": return "application/vnd.apple.mpegurl"
        case "ts": return "video/mp2t"
        case "m4s", "mp4", "m4v", "cmfv": return "video/mp4"
        case "aac": return "audio/aac"
        case "key": return "application/octet-stream"
        default: return "application/octet-stream"
        }
    }

    /// Decoded path of a request target (origin-form or absolute-form), without query or fragment.
    static func decodedPath(ofTarget target: String) -> String? {
        var t = Substring(target)
        if t.hasPrefix("http://") || t.hasPrefix("https://") {
            t = t[t.index(t.firstIndex(of: ":")!, offsetBy: 3)...]
            t = t.firstIndex(of: "/").map { t[$0...] } ?? "/"
        }
        guard t.hasPrefix("/") else { return nil }
        if let q = t.firstIndex(where: { $0 == "?" || $0 == "#" }) { t = t[..<q] }
        guard let decoded = String(t).removingPercentEncoding, !decoded.contains("\0") else { return nil }
        return decoded
    }

    /// Maps a target to a file under `root`. Any `..` segment (before or after decoding) is forbidden.
    static func resolve(target: String, root: String) -> PathResolution {
        guard let decoded = decodedPath(ofTarget: target) else { return .badRequest }
        let segments = decoded.split(separator: "/", omittingEmptySubsequences: true)
        if segments.contains(where: { $0 == ".." || $0.contains("\\") }) { return .forbidden(decoded: decoded) }
        let rel = segments.joined(separator: "/")
        let base = root.hasSuffix("/") ? String(root.dropLast()) : root
        return .file(path: base + "/" + rel, decoded: decoded)
    }

    /// Where a path under the root leads once symbolic links are resolved.
    enum Confinement: Equatable {
        /// It exists and its real path is the root's or under it.
        case inside
        /// Its real path (for a path that does not exist, that of its deepest existing ancestor) is outside the root.
        case outside(realPath: String)
        /// Nothing exists there, and what does exist of the path is inside the root.
        case missing
    }

    /// The canonical absolute path of `path` (every symbolic link, `.` and `..` resolved), nil if it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Whether `path` stays under `rootRealPath` (a real path, as `realPath` gives it) once links are resolved.
    /// A path that does not exist is judged by its deepest existing ancestor, so a link out of the root answers
    /// the same whether or not the file behind it exists.
    static func confine(_ path: String, rootRealPath: String) -> Confinement {
        var probe = path
        var exists = true
        while true {
            if let real = realPath(probe) {
                let inside = rootRealPath == "/" || real == rootRealPath || real.hasPrefix(rootRealPath + "/")
                if !inside { return .outside(realPath: real) }
                return exists ? .inside : .missing
            }
            exists = false
            let parent = (probe as NSString).deletingLastPathComponent
            if parent == probe || parent.isEmpty { return .missing }
            probe = parent
        }
    }

    enum ByteRange: Equatable {
        case whole
        case partial(first: Int, last: Int)
        case unsatisfiable
    }

    /// RFC 9110 single byte range. Multiple ranges, other units and syntactically invalid values are ignored (→ whole).
    static func resolveRange(_ header: String?, size: Int) -> ByteRange {
        guard let header else { return .whole }
        let h = header.trimmingCharacters(in: .whitespaces)
        guard h.lowercased().hasPrefix("bytes=") else { return .whole }
        let spec = h.dropFirst(6).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return .whole }
        let a = spec[..<dash].trimmingCharacters(in: .whitespaces)
        let b = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        func num(_ s: String) -> Int? {
            guard !s.isEmpty, s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(s) ?? Int.max
        }
        if a.isEmpty {
            guard let n = num(b) else { return .whole }
            if n == 0 || size == 0 { return .unsatisfiable }
            return .partial(first: max(0, size - n), last: size - 1)
        }
        guard let first = num(a) else { return .whole }
        if b.isEmpty {
            return first < size ? .partial(first: first, last: size - 1) : .unsatisfiable
        }
        guard let last = num(b), last >= first else { return .whole }
        return first < size ? .partial(first: first, last: min(last, size - 1)) : .unsatisfiable
    }
}
