import Foundation

/// A time window (server time) during which live media playlists stop advancing: every playlist and segment
/// check uses the live clock frozen at `atSeconds`; afterwards the window jumps back to the wall clock.
public struct StalePlaylist: Sendable, Codable, Equatable {
    public var atSeconds: Double
    public var durationSeconds: Double
    public init(atSeconds: Double, durationSeconds: Double) {
        self.atSeconds = atSeconds
        self.durationSeconds = durationSeconds
    }
}

/// Serving VOD media playlists as live streams.
public struct LiveConfiguration: Sendable, Equatable {
    /// Segments in the sliding window (in EVENT mode: segments present at server start).
    public var windowSegments: Int
    /// EVENT mode: the playlist grows from the first segment (`#EXT-X-PLAYLIST-TYPE:EVENT`) instead of sliding.
    public var event: Bool
    /// Stale-playlist faults.
    public var stalePlaylists: [StalePlaylist]
    /// Low-Latency HLS (parts, blocking reload, delta updates); nil = plain live playlists.
    public var lowLatency: LowLatencyConfiguration?
    /// Whether a segment that has left the window stays available for the period RFC 8216 §6.2.2 requires (its
    /// own duration plus the duration of the longest playlist that listed it) before it answers 404. Off = it
    /// answers 404 the moment it leaves the window (a server breaking that rule, for tests of expiry handling).
    public var keepsExpiredSegments: Bool

    public static let defaultWindowSegments = 6
    /// Query parameter carrying a live segment's media sequence number: `seg_00003.ts?live=42`.
    public static let sequenceQueryName = "live"

    public init(
        windowSegments: Int = LiveConfiguration.defaultWindowSegments, event: Bool = false,
        stalePlaylists: [StalePlaylist] = [], lowLatency: LowLatencyConfiguration? = nil,
        keepsExpiredSegments: Bool = true
    ) {
        self.windowSegments = max(1, windowSegments)
        self.event = event
        self.stalePlaylists = stalePlaylists
        self.lowLatency = lowLatency
        self.keepsExpiredSegments = keepsExpiredSegments
    }

    /// The live clock at server time `t`: frozen during a stale-playlist window.
    public func liveClock(atSeconds t: Double) -> Double {
        for s in stalePlaylists where t >= s.atSeconds && t < s.atSeconds + s.durationSeconds { return s.atSeconds }
        return t
    }
}

/// A VOD media playlist reduced to what the live generator needs. The origin never parses media.
public struct VODPlaylist: Sendable, Equatable {
    public struct Segment: Sendable, Equatable {
        /// Tags before the URI other than PROGRAM-DATE-TIME / DISCONTINUITY (EXTINF, BYTERANGE, KEY, ...).
        public var tags: [String]
        public var uri: String
        public var durationSeconds: Double
    }
    /// Playlist-level tags kept in the live version (VERSION, TARGETDURATION, INDEPENDENT-SEGMENTS, MAP, ...).
    public let header: [String]
    public let segments: [Segment]
    public let totalDurationSeconds: Double
    /// Start of each segment within one loop.
    private let segmentStarts: [Double]

    init(header: [String], segments: [Segment]) {
        self.header = header
        self.segments = segments
        var starts: [Double] = []
        var t = 0.0
        for s in segments { starts.append(t); t += s.durationSeconds }
        segmentStarts = starts
        totalDurationSeconds = t
    }

    private static let droppedHeaderTags = [
        "#EXTM3U", "#EXT-X-MEDIA-SEQUENCE", "#EXT-X-PLAYLIST-TYPE", "#EXT-X-ENDLIST",
        "#EXT-X-DISCONTINUITY-SEQUENCE", "#EXT-X-PROGRAM-DATE-TIME"
    ]

    /// Parses a finished (VOD) media playlist; nil for multivariant playlists, playlists that are already live
    /// (no ENDLIST and no PLAYLIST-TYPE:VOD), and playlists without a positive-duration segment.
    public static func parse(_ text: String) -> VODPlaylist? {
        var header: [String] = []
        var segments: [Segment] = []
        var pending: [String] = []
        var duration: Double?
        var finished = false
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty { continue }
            if line.hasPrefix("#EXT-X-STREAM-INF") || line.hasPrefix("#EXT-X-I-FRAMES-ONLY") { return nil }
            if line == "#EXT-X-ENDLIST" || line == "#EXT-X-PLAYLIST-TYPE:VOD" { finished = true }
            if line.hasPrefix("#") {
                if line.hasPrefix("#EXTINF:") {
                    let value = line.dropFirst("#EXTINF:".count).prefix { $0 != "," }
                    duration = Double(value.trimmingCharacters(in: .whitespaces))
                    pending.append(line)
                } else if line == "#EXT-X-DISCONTINUITY" || line.hasPrefix("#EXT-X-PROGRAM-DATE-TIME") {
                    continue // the live generator writes its own
                } else if duration == nil && segments.isEmpty && pending.isEmpty {
                    if !droppedHeaderTags.contains(where: { line.hasPrefix($0) }) { header.append(line) }
                } else if line.hasPrefix("#EXT-X-") && !droppedHeaderTags.contains(where: { line.hasPrefix($0) }) {
                    pending.append(line)
                } else if !line.hasPrefix("#EXT") {
                    continue // comment
                }
                continue
            }
            guard let d = duration else { return nil } // URI without EXTINF
            segments.append(Segment(tags: pending, uri: line, durationSeconds: d))
            pending = []
            duration = nil
        }
        guard finished, !segments.isEmpty, segments.contains(where: { $0.durationSeconds > 0 }) else { return nil }
        return VODPlaylist(header: header, segments: segments)
    }

    /// Start of looped segment `k` (content time, seconds from the start of loop 0).
    public func startSeconds(ofSequence k: Int) -> Double {
        let n = segments.count
        return Double(k / n) * totalDurationSeconds + segmentStarts[k % n]
    }

    /// Segments that have been completed `t` seconds after server start: the largest m with start(m) <= t.
    public func advancedSegments(atSeconds t: Double) -> Int {
        guard t > 0 else { return 0 }
        let total = totalDurationSeconds
        let loops = Int((t / total).rounded(.down))
        var rest = t - Double(loops) * total + 1e-9
        var m = loops * segments.count
        for s in segments {
            if rest < s.durationSeconds { break }
            rest -= s.durationSeconds
            m += 1
        }
        return m
    }

    /// Media sequence numbers in the live window at live-clock time `t`.
    public func window(atSeconds t: Double, configuration: LiveConfiguration) -> ClosedRange<Int> {
        let n = advancedSegments(atSeconds: t)
        let last = n + configuration.windowSegments - 1
        return (configuration.event ? 0 : n)...last
    }

    /// Whether segment `k` may be served at live-clock time `t`: in the window, or (when the configuration keeps
    /// expired segments) left it less than RFC 8216 §6.2.2's period ago — the segment's duration plus the duration
    /// of the longest playlist listing it, here the window that follows it (segments k+1 … k+W) — so a client that
    /// read the playlist just before the window slid still gets the segment it names.
    public func segmentAvailable(_ k: Int, atSeconds t: Double, configuration: LiveConfiguration) -> Bool {
        let window = window(atSeconds: t, configuration: configuration)
        guard k >= 0, k <= window.upperBound else { return false }
        if k >= window.lowerBound { return true }
        guard configuration.keepsExpiredSegments else { return false }
        let n = segments.count
        let leftAt = startSeconds(ofSequence: k + 1)
        let listedFor = startSeconds(ofSequence: k + 1 + configuration.windowSegments) - leftAt
        return t < leftAt + listedFor + segments[k % n].durationSeconds
    }

    /// EXT-X-DISCONTINUITY-SEQUENCE for a window starting at `first`: discontinuity tags (one before the first
    /// segment of every loop after the first) on segments that have left the window.
    public func discontinuitySequence(firstSequence first: Int) -> Int {
        first >= 1 ? (first - 1) / segments.count : 0
    }

    /// The live media playlist at live-clock time `t`. `startDate` is the wall clock at server start; the window's
    /// last segment ends at `startDate + t`.
    public func livePlaylist(atSeconds t: Double, configuration: LiveConfiguration, startDate: Date) -> String {
        let window = window(atSeconds: t, configuration: configuration)
        let n = segments.count
        let edgeOffset = startSeconds(ofSequence: configuration.windowSegments)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var out = ["#EXTM3U"]
        out += header
        if configuration.event { out.append("#EXT-X-PLAYLIST-TYPE:EVENT") }
        out.append("#EXT-X-MEDIA-SEQUENCE:\(window.lowerBound)")
        out.append("#EXT-X-DISCONTINUITY-SEQUENCE:\(discontinuitySequence(firstSequence: window.lowerBound))")
        for k in window {
            let segment = segments[k % n]
            if k > 0 && k % n == 0 { out.append("#EXT-X-DISCONTINUITY") }
            let date = startDate.addingTimeInterval(startSeconds(ofSequence: k) - edgeOffset)
            out.append("#EXT-X-PROGRAM-DATE-TIME:\(formatter.string(from: date))")
            out += segment.tags
            let separator = segment.uri.contains("?") ? "&" : "?"
            out.append("\(segment.uri)\(separator)\(LiveConfiguration.sequenceQueryName)=\(k)")
        }
        return out.joined(separator: "\n") + "\n"
    }
}

/// The origin's live state: parsed VOD playlists and which playlist each segment file belongs to.
final class LiveServer: @unchecked Sendable {
    let root: URL
    let configuration: LiveConfiguration
    let lock = NSLock()
    private var startDate = Date()
    private var playlists: [String: VODPlaylist] = [:]
    /// Segment file path → playlist file paths listing it.
    var owners: [String: [String]] = [:]
    /// Low-latency versions of the VOD playlists (nil = cannot be cut into parts), by playlist file path.
    var lowLatencyPlaylists: [String: LowLatencyPlaylist?] = [:]
    /// Playlist file path → (URI relative to it, file path) of the other renditions of its multivariant playlists.
    var renditionSiblings: [String: [(uri: String, path: String)]] = [:]

    init(root: URL, configuration: LiveConfiguration) {
        self.root = root
        self.configuration = configuration
    }

    func serverStarted(wallClock: Date) {
        lock.lock(); startDate = wallClock; lock.unlock()
    }

    var startDateValue: Date { lock.lock(); defer { lock.unlock() }; return startDate }

    static func normalize(_ path: String) -> String { URL(fileURLWithPath: path).standardized.path }

    /// The VOD playlist at `filePath` (cached), registering its segments; nil if it is not a VOD media playlist.
    func vod(at filePath: String) -> VODPlaylist? {
        let key = Self.normalize(filePath)
        lock.lock()
        if let p = playlists[key] { lock.unlock(); return p }
        lock.unlock()
        guard let text = try? String(contentsOfFile: key, encoding: .utf8), let p = VODPlaylist.parse(text) else {
            return nil
        }
        let dir = (key as NSString).deletingLastPathComponent
        lock.lock()
        playlists[key] = p
        for s in p.segments {
            guard let path = Self.segmentPath(uri: s.uri, playlistDirectory: dir) else { continue }
            if !(owners[path]?.contains(key) ?? false) { owners[path, default: []].append(key) }
        }
        lock.unlock()
        return p
    }

    static func segmentPath(uri: String, playlistDirectory: String) -> String? {
        if uri.contains("://") { return nil }
        let bare = String(uri.prefix { $0 != "?" && $0 != "#" })
        let decoded = bare.removingPercentEncoding ?? bare
        if decoded.hasPrefix("/") { return nil }
        return normalize(playlistDirectory + "/" + decoded)
    }

    /// The live version of the media playlist at `filePath` at server time `t`; nil = serve the file unchanged.
    func playlist(filePath: String, atSeconds t: Double) -> String? {
        guard let p = vod(at: filePath) else { return nil }
        lock.lock(); let date = startDate; lock.unlock()
        return p.livePlaylist(atSeconds: configuration.liveClock(atSeconds: t), configuration: configuration, startDate: date)
    }

    /// Whether live segment `sequence` of the file at `filePath` may be served at server time `t` (in its playlist's
    /// window, or recently expired: `VODPlaylist.segmentAvailable`).
    func segmentAvailable(filePath: String, sequence: Int, atSeconds t: Double) -> Bool {
        let path = Self.normalize(filePath)
        lock.lock()
        let candidates = (owners[path] ?? []).compactMap { key in playlists[key].map { (key, $0) } }
        lock.unlock()
        let clock = configuration.liveClock(atSeconds: t)
        for (key, p) in candidates where sequence >= 0 {
            let dir = (key as NSString).deletingLastPathComponent
            guard p.segmentAvailable(sequence, atSeconds: clock, configuration: configuration),
                Self.segmentPath(uri: p.segments[sequence % p.segments.count].uri, playlistDirectory: dir) == path
            else { continue }
            return true
        }
        return false
    }

    /// The `live=K` query value of a request target, if present.
    static func sequence(inTarget target: String) -> Int? {
        guard let q = target.firstIndex(of: "?") else { return nil }
        let query = target[target.index(after: q)...].prefix { $0 != "#" }
        for pair in query.split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            if kv.count == 2, kv[0] == LiveConfiguration.sequenceQueryName { return Int(kv[1]) ?? -1 }
        }
        return nil
    }
}
