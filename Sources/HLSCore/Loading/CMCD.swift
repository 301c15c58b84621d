// Common Media Client Data (CTA-5004): what the player really used, sent with
// each request so a CDN can see it. Pure encoding; the runtime fills the values.

import Foundation

/// CTA-5004 object type (`ot`).
public enum CMCDObjectType: String, Sendable, Equatable {
    case manifest = "m"
    case audio = "a"
    case video = "v"
    case muxed = "av"
    case initSegment = "i"
    case key = "k"
    case other = "o"
}

/// How CMCD travels: a `CMCD` query parameter or four `CMCD-*` headers.
public enum CMCDMode: String, Sendable, Equatable, Codable, CaseIterable {
    case query
    case header
}

/// One request's CMCD values (CTA-5004 §3.3). Units as the spec has them:
/// kilobits per second and milliseconds, integers.
public struct CMCDData: Sendable, Equatable {
    /// `br`: encoded bitrate of the requested rendition, kbps.
    public var encodedBitrateKbps: Int?
    /// `bl`: buffer length, ms (rounded to the nearest 100 ms).
    public var bufferLengthMs: Int?
    /// `bs`: the buffer ran dry since the previous request.
    public var bufferStarvation = false
    /// `cid`: content id.
    public var contentID: String?
    /// `d`: object duration, ms.
    public var objectDurationMs: Int?
    /// `dl`: deadline, ms (rounded to the nearest 100 ms): how long until this object's first sample is needed
    /// to avoid a stall — at playback rate 1 the buffer length, for a segment of the playing track.
    public var deadlineMs: Int?
    /// `mtp`: measured throughput, kbps (rounded to the nearest 100 kbps).
    public var measuredThroughputKbps: Int?
    /// `ot`: object type.
    public var objectType: CMCDObjectType?
    /// `sf`: streaming format; `h` = HLS.
    public var streamingFormat = "h"
    /// `sid`: session id.
    public var sessionID: String?
    /// `st`: `v` (VOD) or `l` (live).
    public var streamType: String?
    /// `su`: the object is needed to start (or restart) playback.
    public var startup = false
    /// `tb`: top bitrate, kbps: the highest rendition the player is allowed to play (CTA-5004: given codec,
    /// licensing and sizing constraints) — the ladder under `--max-resolution` and `--peak-bitrate`, not a
    /// moment's adaptation caps (startup/recovery, over-selection, policy).
    public var topBitrateKbps: Int?

    public init() {}

    /// Rounds to the spec's granularity. Saturating: the inputs follow from media timestamps and
    /// playlist bit rates, which a broken stream can make huge.
    public static func bufferLengthMs(seconds: Double) -> Int { Int(saturating: (seconds * 10).rounded()).saturatingMultiply(100) }
    public static func throughputKbps(bps: Double) -> Int { Int(saturating: (bps / 100_000).rounded()).saturatingMultiply(100) }
    public static func kbps(_ bps: Int) -> Int { Int(saturating: (Double(bps) / 1000).rounded()) }

    private enum Shard { case object, request, session, status }

    /// Each key's `key=value` (or bare `key` for true booleans), with the header it belongs to.
    private var pairs: [(key: String, text: String, shard: Shard)] {
        func quoted(_ s: String) -> String {
            "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }
        var p: [(String, String, Shard)] = []
        if let v = bufferLengthMs { p.append(("bl", "bl=\(v)", .request)) }
        if let v = encodedBitrateKbps { p.append(("br", "br=\(v)", .object)) }
        if bufferStarvation { p.append(("bs", "bs", .status)) }
        if let v = contentID { p.append(("cid", "cid=\(quoted(v))", .session)) }
        if let v = objectDurationMs { p.append(("d", "d=\(v)", .object)) }
        if let v = deadlineMs { p.append(("dl", "dl=\(v)", .request)) }
        if let v = measuredThroughputKbps { p.append(("mtp", "mtp=\(v)", .request)) }
        if let v = objectType { p.append(("ot", "ot=\(v.rawValue)", .object)) }
        p.append(("sf", "sf=\(streamingFormat)", .session))
        if let v = sessionID { p.append(("sid", "sid=\(quoted(v))", .session)) }
        if let v = streamType { p.append(("st", "st=\(v)", .session)) }
        if startup { p.append(("su", "su", .request)) }
        if let v = topBitrateKbps { p.append(("tb", "tb=\(v)", .object)) }
        return p.sorted { $0.0 < $1.0 }
    }

    /// The payload: keys in alphabetical order, comma-separated.
    public var payload: String { pairs.map(\.text).joined(separator: ",") }

    /// The value of the `CMCD` query parameter, percent-encoded.
    public var queryValue: String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return payload.addingPercentEncoding(withAllowedCharacters: allowed) ?? payload
    }

    /// The four headers, each with its keys; empty ones are left out.
    public var headers: [(name: String, value: String)] {
        let groups: [(String, Shard)] = [("CMCD-Object", .object), ("CMCD-Request", .request), ("CMCD-Session", .session), ("CMCD-Status", .status)]
        return groups.compactMap { name, shard in
            let texts = pairs.filter { $0.shard == shard }.map(\.text)
            return texts.isEmpty ? nil : (name, texts.joined(separator: ","))
        }
    }

    /// `url` with `CMCD=<payload>` added to its query.
    public func adding(to url: URL) -> URL {
        guard var c = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        let item = "CMCD=" + queryValue
        c.percentEncodedQuery = c.percentEncodedQuery.map { $0.isEmpty ? item : $0 + "&" + item } ?? item
        return c.url ?? url
    }
}
