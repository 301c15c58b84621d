// The persistent estimate store: a small JSON file in the user's cache
// directory holding the last measured bandwidth per (origin host, local
// network). The model, lookup and TTL are pure (HLSCore EstimateStore); this
// file only reads and writes it, and names the local network.

import Foundation
import HLSCore

enum EstimateStoreFile {
    /// `$XDG_CACHE_HOME/hlsplay/estimates.json`, else `~/.cache/hlsplay/estimates.json`.
    static var defaultPath: String {
        let env = ProcessInfo.processInfo.environment
        let cache =
            env["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (env["HOME"] ?? NSHomeDirectory()) + "/.cache"
        return cache + "/hlsplay/estimates.json"
    }

    /// The stored snapshot: an empty one when the file does not exist, nil when it cannot be read or parsed.
    static func load(path: String) -> (snapshot: EstimateStoreSnapshot?, problem: String?) {
        guard FileManager.default.fileExists(atPath: path) else { return (EstimateStoreSnapshot(), nil) }
        guard let data = FileManager.default.contents(atPath: path) else { return (nil, "cannot read \(path)") }
        do {
            return (try EstimateStoreSnapshot.decode(data), nil)
        } catch {
            return (nil, "\(path): \(error)")
        }
    }

    /// Writes atomically (temp file + rename). Returns a problem description, or nil.
    static func save(_ snapshot: EstimateStoreSnapshot, path: String) -> String? {
        let url = URL(fileURLWithPath: path)
        do {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try snapshot.encoded().write(to: url, options: .atomic)
            return nil
        } catch {
            return "cannot write \(path): \(error)"
        }
    }

    /// The local network a request to `host` leaves through: "loopback" for
    /// loopback hosts, else the default route's interface and gateway from
    /// /proc/net/route ("unknown" when it cannot be read). A different value
    /// means a different network, and an estimate from another network is not trusted.
    static func localNetworkIdentity(forHost host: String) -> String {
        let h = host.lowercased()
        if h == "localhost" || h.hasPrefix("127.") || h == "::1" || h == "[::1]" { return "loopback" }
        guard let text = try? String(contentsOfFile: "/proc/net/route", encoding: .utf8) else { return "unknown" }
        for line in text.split(separator: "\n").dropFirst() {
            let f = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            if f.count > 2, f[1] == "00000000" { return "\(f[0])/gw-\(f[2])" }
        }
        return "unknown"
    }
}
