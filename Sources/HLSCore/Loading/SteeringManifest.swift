// The Content Steering manifest (draft-pantos-hls-rfc8216bis §7.1): the JSON
// document EXT-X-CONTENT-STEERING's SERVER-URI answers with, and pathway
// cloning (PATHWAY-CLONES, §7.2) applied to a multivariant playlist.
// Pure: bytes + the manifest's URL in, a value or a SteeringManifestError out.

import Foundation

/// A parsed steering manifest.
public struct SteeringManifest: Sendable, Equatable {
    /// The only VERSION defined.
    public static let supportedVersion = 1
    /// Largest manifest accepted, bytes (a priority list and a few clones fit in far less).
    public static let maxBytes = 64 * 1024

    /// VERSION.
    public var version: Int
    /// TTL: seconds to wait before the next load.
    public var ttlSeconds: Double
    /// RELOAD-URI, resolved against the manifest's URL; nil = reload the same URI.
    public var reloadURI: URL?
    /// PATHWAY-PRIORITY, duplicates removed (first kept).
    public var pathwayPriority: [String]
    /// PATHWAY-CLONES.
    public var pathwayClones: [PathwayClone]
    /// Tolerated problems (duplicate pathway IDs, unknown keys), for the log.
    public var warnings: [String]

    public init(
        version: Int = 1, ttlSeconds: Double, reloadURI: URL? = nil, pathwayPriority: [String],
        pathwayClones: [PathwayClone] = [], warnings: [String] = []
    ) {
        self.version = version
        self.ttlSeconds = ttlSeconds
        self.reloadURI = reloadURI
        self.pathwayPriority = pathwayPriority
        self.pathwayClones = pathwayClones
        self.warnings = warnings
    }
}

/// One PATHWAY-CLONES entry: a new pathway made from BASE-ID's variants and renditions.
public struct PathwayClone: Sendable, Equatable {
    /// BASE-ID: the pathway copied.
    public var baseID: String
    /// ID: the new pathway.
    public var id: String
    /// URI-REPLACEMENT HOST: replaces the host (and the port, when given as `host:port`).
    public var host: String?
    /// URI-REPLACEMENT PARAMS: query parameters set on every cloned URI (sorted by name).
    public var params: [String: String]
    /// URI-REPLACEMENT PER-VARIANT-URIS: STABLE-VARIANT-ID → URI (resolved against the manifest's URL).
    public var perVariantURIs: [String: URL]
    /// URI-REPLACEMENT PER-RENDITION-URIS: STABLE-RENDITION-ID → URI (resolved against the manifest's URL).
    public var perRenditionURIs: [String: URL]

    public init(
        baseID: String, id: String, host: String? = nil, params: [String: String] = [:],
        perVariantURIs: [String: URL] = [:], perRenditionURIs: [String: URL] = [:]
    ) {
        self.baseID = baseID
        self.id = id
        self.host = host
        self.params = params
        self.perVariantURIs = perVariantURIs
        self.perRenditionURIs = perRenditionURIs
    }
}

/// A manifest that cannot be used; the client keeps the previous one.
public struct SteeringManifestError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        case tooLarge = "too-large"
        case notJSON = "not-json"
        case notAnObject = "not-an-object"
        case missingField = "missing-field"
        case wrongType = "wrong-type"
        case unsupportedVersion = "unsupported-version"
        case invalidValue = "invalid-value"
    }
    public var kind: Kind
    public var message: String
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }
    public var description: String { "steering manifest \(kind.rawValue): \(message)" }
}

/// A JSON value, decoded strictly (a boolean is not a number).
enum JSONValue: Decodable, Equatable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null; return }
        if let b = try? c.decode(Bool.self) { self = .bool(b); return }
        if let d = try? c.decode(Double.self) { self = .number(d); return }
        if let s = try? c.decode(String.self) { self = .string(s); return }
        if let a = try? c.decode([JSONValue].self) { self = .array(a); return }
        self = .object(try c.decode([String: JSONValue].self))
    }

    var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .number: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

extension SteeringManifest {
    /// The keys §7.1 defines; others are ignored with a warning.
    static let knownKeys: Set<String> = ["VERSION", "TTL", "RELOAD-URI", "PATHWAY-PRIORITY", "PATHWAY-CLONES"]

    /// Whether `id` is a valid Pathway ID: characters [a-zA-Z0-9], '.', '-', '_' (draft §4.4.6.6), not empty.
    public static func isValidPathwayID(_ id: String) -> Bool {
        !id.isEmpty
            && id.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "." || $0 == "-" || $0 == "_"
            }
    }

    /// Parses a steering manifest loaded from `manifestURL`.
    public static func parse(_ data: Data, manifestURL: URL) throws(SteeringManifestError) -> SteeringManifest {
        if data.count > maxBytes {
            throw SteeringManifestError(kind: .tooLarge, message: "\(data.count) bytes, limit \(maxBytes)")
        }
        let root: JSONValue
        do {
            root = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw SteeringManifestError(kind: .notJSON, message: "not valid JSON (\(Self.describe(error)))")
        }
        guard case .object(let o) = root else {
            throw SteeringManifestError(kind: .notAnObject, message: "the top level is \(root.typeName), not an object")
        }
        var warnings: [String] = []
        let unknown = o.keys.filter { !knownKeys.contains($0) }.sorted()
        if !unknown.isEmpty { warnings.append("ignored unknown keys: \(unknown.joined(separator: ", "))") }

        let versionNumber = try number(o, "VERSION", required: true)!
        guard versionNumber == Double(supportedVersion) else {
            throw SteeringManifestError(
                kind: .unsupportedVersion,
                message: "VERSION \(format(versionNumber)) is not supported (only \(supportedVersion))")
        }
        let ttl = try number(o, "TTL", required: true)!
        guard ttl.isFinite, ttl >= 0 else {
            throw SteeringManifestError(kind: .invalidValue, message: "TTL \(format(ttl)) is not a number of seconds ≥ 0")
        }
        var reload: URL?
        if let s = try string(o, "RELOAD-URI") {
            reload = try resolve(s, manifestURL, what: "RELOAD-URI")
        }
        guard let priorityValue = o["PATHWAY-PRIORITY"] else {
            throw SteeringManifestError(kind: .missingField, message: "PATHWAY-PRIORITY is required")
        }
        guard case .array(let items) = priorityValue else {
            throw SteeringManifestError(kind: .wrongType, message: "PATHWAY-PRIORITY is \(priorityValue.typeName), not an array")
        }
        var priority: [String] = []
        for (i, item) in items.enumerated() {
            guard case .string(let id) = item else {
                throw SteeringManifestError(kind: .wrongType, message: "PATHWAY-PRIORITY[\(i)] is \(item.typeName), not a string")
            }
            guard isValidPathwayID(id) else {
                throw SteeringManifestError(
                    kind: .invalidValue,
                    message: "PATHWAY-PRIORITY[\(i)] \"\(id)\" is not a Pathway ID ([a-zA-Z0-9._-]+)")
            }
            if priority.contains(id) {
                warnings.append("PATHWAY-PRIORITY lists \"\(id)\" twice; the first place is kept")
            } else {
                priority.append(id)
            }
        }
        if priority.isEmpty {
            throw SteeringManifestError(kind: .invalidValue, message: "PATHWAY-PRIORITY is empty")
        }
        var clones: [PathwayClone] = []
        if let clonesValue = o["PATHWAY-CLONES"] {
            guard case .array(let list) = clonesValue else {
                throw SteeringManifestError(kind: .wrongType, message: "PATHWAY-CLONES is \(clonesValue.typeName), not an array")
            }
            for (i, item) in list.enumerated() {
                clones.append(try clone(item, index: i, manifestURL: manifestURL))
            }
        }
        return SteeringManifest(
            version: supportedVersion, ttlSeconds: ttl, reloadURI: reload, pathwayPriority: priority,
            pathwayClones: clones, warnings: warnings)
    }

    static func clone(_ item: JSONValue, index i: Int, manifestURL: URL) throws(SteeringManifestError) -> PathwayClone {
        let at = "PATHWAY-CLONES[\(i)]"
        guard case .object(let o) = item else {
            throw SteeringManifestError(kind: .wrongType, message: "\(at) is \(item.typeName), not an object")
        }
        let base = try string(o, "BASE-ID", in: at, required: true)!
        let id = try string(o, "ID", in: at, required: true)!
        guard isValidPathwayID(id) else {
            throw SteeringManifestError(kind: .invalidValue, message: "\(at).ID \"\(id)\" is not a Pathway ID ([a-zA-Z0-9._-]+)")
        }
        guard let replacementValue = o["URI-REPLACEMENT"] else {
            throw SteeringManifestError(kind: .missingField, message: "\(at).URI-REPLACEMENT is required")
        }
        guard case .object(let r) = replacementValue else {
            throw SteeringManifestError(kind: .wrongType, message: "\(at).URI-REPLACEMENT is \(replacementValue.typeName), not an object")
        }
        let where_ = "\(at).URI-REPLACEMENT"
        let host = try string(r, "HOST", in: where_)
        if let host, host.isEmpty || host.contains("/") {
            throw SteeringManifestError(kind: .invalidValue, message: "\(where_).HOST \"\(host)\" is not a host name")
        }
        let params = try stringMap(r, "PARAMS", in: where_)
        var perVariant: [String: URL] = [:]
        for (k, v) in try stringMap(r, "PER-VARIANT-URIS", in: where_) {
            perVariant[k] = try resolve(v, manifestURL, what: "\(where_).PER-VARIANT-URIS[\"\(k)\"]")
        }
        var perRendition: [String: URL] = [:]
        for (k, v) in try stringMap(r, "PER-RENDITION-URIS", in: where_) {
            perRendition[k] = try resolve(v, manifestURL, what: "\(where_).PER-RENDITION-URIS[\"\(k)\"]")
        }
        return PathwayClone(
            baseID: base, id: id, host: host, params: params, perVariantURIs: perVariant,
            perRenditionURIs: perRendition)
    }

    static func number(_ o: [String: JSONValue], _ key: String, required: Bool = false) throws(SteeringManifestError) -> Double? {
        guard let v = o[key] else {
            if required { throw SteeringManifestError(kind: .missingField, message: "\(key) is required") }
            return nil
        }
        guard case .number(let d) = v else {
            throw SteeringManifestError(kind: .wrongType, message: "\(key) is \(v.typeName), not a number")
        }
        return d
    }

    static func string(
        _ o: [String: JSONValue], _ key: String, in at: String? = nil,
        required: Bool = false
    ) throws(SteeringManifestError) -> String? {
        let name = at.map { "\($0).\(key)" } ?? key
        guard let v = o[key] else {
            if required { throw SteeringManifestError(kind: .missingField, message: "\(name) is required") }
            return nil
        }
        guard case .string(let s) = v else {
            throw SteeringManifestError(kind: .wrongType, message: "\(name) is \(v.typeName), not a string")
        }
        return s
    }

    static func stringMap(_ o: [String: JSONValue], _ key: String, in at: String) throws(SteeringManifestError) -> [String: String] {
        guard let v = o[key] else { return [:] }
        guard case .object(let m) = v else {
            throw SteeringManifestError(kind: .wrongType, message: "\(at).\(key) is \(v.typeName), not an object")
        }
        var out: [String: String] = [:]
        for (k, item) in m {
            guard case .string(let s) = item else {
                throw SteeringManifestError(kind: .wrongType, message: "\(at).\(key)[\"\(k)\"] is \(item.typeName), not a string")
            }
            out[k] = s
        }
        return out
    }

    static func resolve(_ s: String, _ base: URL, what: String) throws(SteeringManifestError) -> URL {
        guard !s.isEmpty, let u = URL(string: s, relativeTo: base)?.absoluteURL, u.scheme != nil else {
            throw SteeringManifestError(kind: .invalidValue, message: "\(what) \"\(s)\" is not a URI")
        }
        return u
    }

    static func format(_ d: Double) -> String {
        d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : String(d)
    }

    static func describe(_ error: Error) -> String {
        if case DecodingError.dataCorrupted(let c) = error {
            return (c.underlyingError as NSError?)?.localizedDescription ?? c.debugDescription
        }
        return String(describing: error)
    }
}

// MARK: pathway cloning

/// What cloning did, for the log.
public struct PathwayCloneResult: Sendable, Equatable {
    /// The playlist with the cloned variants (appended) and renditions (appended).
    public var playlist: MultivariantPlaylist
    /// Pathways added.
    public var added: [String]
    /// Clones not applied, each with why (ID already present, BASE-ID unknown).
    public var skipped: [String]
}

extension SteeringManifest {
    /// Applies PATHWAY-CLONES to `playlist` (draft §7.2): each clone whose ID is
    /// not yet a pathway copies BASE-ID's variants with PATHWAY-ID = ID and URIs
    /// from PER-VARIANT-URIS (by STABLE-VARIANT-ID), else the base URI with HOST
    /// and PARAMS replaced; the AUDIO, VIDEO and SUBTITLES groups those variants
    /// name are copied under a new GROUP-ID (renditions' URIs replaced the same
    /// way, PER-RENDITION-URIS by STABLE-RENDITION-ID). CLOSED-CAPTIONS groups
    /// have no URI and are shared.
    public func applyingClones(to playlist: MultivariantPlaylist) -> PathwayCloneResult {
        var p = playlist
        var added: [String] = []
        var skipped: [String] = []
        for clone in pathwayClones {
            let pathways = Set(p.variants.map(FailoverTracker.pathway(of:)))
            if pathways.contains(clone.id) {
                skipped.append("clone \"\(clone.id)\": the pathway already exists")
                continue
            }
            let base = p.variants.filter { FailoverTracker.pathway(of: $0) == clone.baseID }
            if base.isEmpty {
                skipped.append("clone \"\(clone.id)\": BASE-ID \"\(clone.baseID)\" has no variants")
                continue
            }
            var groupNames: [String: String] = [:] // "TYPE/old" → new
            var existingGroups = Set(p.renditions.map { "\($0.type.rawValue)/\($0.groupID)" })
            func clonedGroup(_ type: RenditionType, _ id: String?) -> String? {
                guard let id else { return nil }
                let key = "\(type.rawValue)/\(id)"
                if let known = groupNames[key] { return known }
                guard existingGroups.contains(key) else { return id } // undefined group: left as is (the parser warned)
                var name = "\(id)@\(clone.id)"
                while existingGroups.contains("\(type.rawValue)/\(name)") { name += "'" }
                existingGroups.insert("\(type.rawValue)/\(name)")
                groupNames[key] = name
                return name
            }
            for v in base {
                var c = v
                c.pathwayID = clone.id
                c.attributes["PATHWAY-ID"] = clone.id
                c.uri = v.stableVariantID.flatMap { clone.perVariantURIs[$0] } ?? Self.replace(v.uri, clone)
                c.audioGroup = clonedGroup(.audio, v.audioGroup)
                c.videoGroup = clonedGroup(.video, v.videoGroup)
                c.subtitlesGroup = clonedGroup(.subtitles, v.subtitlesGroup)
                for (attr, value) in [("AUDIO", c.audioGroup), ("VIDEO", c.videoGroup), ("SUBTITLES", c.subtitlesGroup)] {
                    if let value { c.attributes[attr] = value }
                }
                p.variants.append(c)
            }
            for r in p.renditions {
                guard let newGroup = groupNames["\(r.type.rawValue)/\(r.groupID)"] else { continue }
                var c = r
                c.groupID = newGroup
                c.attributes["GROUP-ID"] = newGroup
                if let uri = r.uri {
                    c.uri = r.stableRenditionID.flatMap { clone.perRenditionURIs[$0] } ?? Self.replace(uri, clone)
                }
                p.renditions.append(c)
            }
            added.append(clone.id)
        }
        return PathwayCloneResult(playlist: p, added: added, skipped: skipped)
    }

    /// `uri` with the clone's HOST (and port, from `host:port`) and PARAMS applied.
    static func replace(_ uri: URL, _ clone: PathwayClone) -> URL {
        guard clone.host != nil || !clone.params.isEmpty,
            var c = URLComponents(url: uri, resolvingAgainstBaseURL: true)
        else { return uri }
        if let host = clone.host {
            let (h, port) = splitHostPort(host)
            c.host = h
            if let port { c.port = port }
        }
        if !clone.params.isEmpty {
            var items = (c.queryItems ?? []).filter { clone.params[$0.name] == nil }
            for name in clone.params.keys.sorted() { items.append(URLQueryItem(name: name, value: clone.params[name])) }
            c.queryItems = items
        }
        return c.url ?? uri
    }

    static func splitHostPort(_ s: String) -> (String, Int?) {
        if s.hasPrefix("["), let close = s.firstIndex(of: "]") {
            let host = String(s[s.index(after: s.startIndex)..<close])
            let rest = s[s.index(after: close)...]
            return (host, rest.hasPrefix(":") ? Int(rest.dropFirst()) : nil)
        }
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        if parts.count == 2, let port = Int(parts[1]) { return (String(parts[0]), port) }
        return (s, nil)
    }
}

extension Rendition {
    /// STABLE-RENDITION-ID (draft §4.4.6.1), used by content steering's PER-RENDITION-URIS.
    public var stableRenditionID: String? { attributes["STABLE-RENDITION-ID"] }
}
