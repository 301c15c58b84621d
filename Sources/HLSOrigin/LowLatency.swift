import Foundation

/// Low-Latency HLS on top of the live mode (draft-pantos-hls-rfc8216bis §4.4.3.7–8, §4.4.4.9, §4.4.5, §6.2.5, §6.2.6):
/// Partial Segments cut from the VOD's MPEG-TS segments (`SegmentPartPlan`), blocking playlist reload
/// (`_HLS_msn`/`_HLS_part`), delta updates (`_HLS_skip`), preload hints and rendition reports.
public struct LowLatencyConfiguration: Sendable, Equatable {
    /// Requested Part Target Duration, seconds. The advertised PART-TARGET is the longest part actually cut (parts
    /// end on frame starts, so they can only be shorter than this unless one frame is longer).
    public var partTargetSeconds: Double

    public static let defaultPartTargetSeconds = 0.5
    /// PART-HOLD-BACK in part target durations (the draft: at least 2, SHOULD be at least 3).
    public static let partHoldBackPartTargets = 3.0
    /// CAN-SKIP-UNTIL (the Skip Boundary) in target durations: the draft's minimum, 6.
    public static let skipBoundaryTargetDurations = 6.0
    /// EXT-X-PART tags are listed for segments ending within this many target durations of the playlist end
    /// (the draft: SHOULD be removed once further than 3).
    public static let partListingTargetDurations = 3.0
    /// A blocked request that cannot be answered within this many target durations gets 503 (§6.2.5.2).
    public static let blockingLimitTargetDurations = 3.0
    /// EXT-X-VERSION of low-latency playlists (EXT-X-SKIP needs 9).
    public static let playlistVersion = 9
    /// Query parameter naming a part of a live segment: `seg_00003.ts?live=42&part=1`.
    public static let partQueryName = "part"

    public init(partTargetSeconds: Double = LowLatencyConfiguration.defaultPartTargetSeconds) {
        self.partTargetSeconds = partTargetSeconds > 0 ? partTargetSeconds : Self.defaultPartTargetSeconds
    }
}

/// The delivery directives of a playlist request (§6.2.5).
struct DeliveryDirectives: Equatable {
    var msn: Int?
    var part: Int?
    var skip: Bool

    enum Invalid: Error, Equatable { case reason(String) }

    /// Parses `_HLS_msn`, `_HLS_part` and `_HLS_skip` from a request target's query.
    static func parse(target: String) throws(Invalid) -> DeliveryDirectives {
        var d = DeliveryDirectives(msn: nil, part: nil, skip: false)
        guard let q = target.firstIndex(of: "?") else { return d }
        for pair in target[target.index(after: q)...].prefix(while: { $0 != "#" }).split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(kv[0])
            let value = kv.count == 2 ? String(kv[1]) : ""
            switch name {
            case "_HLS_msn":
                guard let v = Int(value), v >= 0 else { throw .reason("_HLS_msn=\(value) is not a decimal-integer") }
                d.msn = v
            case "_HLS_part":
                guard let v = Int(value), v >= 0 else { throw .reason("_HLS_part=\(value) is not a decimal-integer") }
                d.part = v
            case "_HLS_skip":
                guard value == "YES" || value == "v2" else { throw .reason("_HLS_skip=\(value) is not YES or v2") }
                d.skip = true
            default:
                if name.hasPrefix("_HLS_") { throw .reason("unknown delivery directive \(name)") }
            }
        }
        if d.part != nil && d.msn == nil { throw .reason("_HLS_part without _HLS_msn") }
        return d
    }
}

/// A VOD media playlist served as a low-latency live playlist: the VOD plus the part plan of each of its segments.
/// Pure: every answer is a function of the live clock.
public struct LowLatencyPlaylist: Sendable {
    public let vod: VODPlaylist
    public let plans: [SegmentPartPlan]
    public let configuration: LiveConfiguration
    public let targetDurationSeconds: Double
    /// Advertised PART-TARGET: the longest part cut, never below the requested target.
    public let partTargetSeconds: Double

    /// nil when some segment cannot be cut (not MPEG-TS, byte ranges) or low latency is not configured.
    public init?(vod: VODPlaylist, segmentBytes: (VODPlaylist.Segment) -> [UInt8]?, configuration: LiveConfiguration) {
        guard let ll = configuration.lowLatency else { return nil }
        var plans: [SegmentPartPlan] = []
        for s in vod.segments {
            guard !s.tags.contains(where: { $0.hasPrefix("#EXT-X-BYTERANGE") }), let bytes = segmentBytes(s),
                let plan = SegmentPartPlan.plan(
                    segment: bytes, durationSeconds: s.durationSeconds,
                    partTargetSeconds: ll.partTargetSeconds)
            else { return nil }
            plans.append(plan)
        }
        self.vod = vod
        self.plans = plans
        self.configuration = configuration
        let declared = vod.header.first { $0.hasPrefix("#EXT-X-TARGETDURATION:") }
            .flatMap { Double($0.dropFirst("#EXT-X-TARGETDURATION:".count).trimmingCharacters(in: .whitespaces)) }
        targetDurationSeconds = declared ?? vod.segments.map(\.durationSeconds).max()!.rounded(.up)
        let longest = plans.map(\.longestPartSeconds).max() ?? 0
        // Rounded up to the millisecond so every part's printed duration stays within it.
        partTargetSeconds = max(ll.partTargetSeconds, (longest * 1000).rounded(.up) / 1000)
    }

    public var partHoldBackSeconds: Double { LowLatencyConfiguration.partHoldBackPartTargets * partTargetSeconds }
    public var skipBoundarySeconds: Double { LowLatencyConfiguration.skipBoundaryTargetDurations * targetDurationSeconds }
    public var blockingLimitSeconds: Double { LowLatencyConfiguration.blockingLimitTargetDurations * targetDurationSeconds }

    /// The part plan of live segment `k`.
    public func plan(ofSequence k: Int) -> SegmentPartPlan { plans[k % plans.count] }

    /// Content time of the live edge at live-clock time `clock` (at clock 0 the first `windowSegments` are complete).
    func edgeContentSeconds(clock: Double) -> Double {
        clock + vod.startSeconds(ofSequence: configuration.windowSegments)
    }

    /// The producer's state: `segment` is the segment being produced (all before it are complete) and
    /// `completedParts` how many of its parts are.
    public struct Edge: Sendable, Equatable {
        public var segment: Int
        public var completedParts: Int
    }

    public func edge(clock: Double) -> Edge {
        let e = edgeContentSeconds(clock: clock)
        let m = vod.advancedSegments(atSeconds: e)
        let elapsed = e - vod.startSeconds(ofSequence: m)
        let done = plan(ofSequence: m).parts.prefix { $0.endSeconds <= elapsed + 1e-9 }.count
        return Edge(segment: m, completedParts: done)
    }

    /// Complete segments listed at `clock`.
    public func window(clock: Double) -> ClosedRange<Int>? {
        let m = edge(clock: clock).segment
        guard m > 0 else { return nil }
        return (configuration.event ? 0 : max(0, m - configuration.windowSegments))...(m - 1)
    }

    /// The live clock at which segment `msn` (part nil) or part `part` of it is complete. Part indices past the
    /// segment's last part mean part 0 of the next segment (§6.2.5.2).
    public func clockWhenAvailable(msn: Int, part: Int?) -> Double {
        var content: Double
        if let part {
            let parts = plan(ofSequence: msn).parts
            content =
                part < parts.count
                ? vod.startSeconds(ofSequence: msn) + parts[part].endSeconds
                : vod.startSeconds(ofSequence: msn + 1) + plan(ofSequence: msn + 1).parts[0].endSeconds
        } else {
            content = vod.startSeconds(ofSequence: msn + 1)
        }
        return content - vod.startSeconds(ofSequence: configuration.windowSegments)
    }

    /// Parts from the current edge to part `part` of `msn` (0 = it is the next part to be completed).
    func partsAhead(of edge: Edge, msn: Int, part: Int) -> Int {
        if msn < edge.segment || (msn == edge.segment && part < edge.completedParts) { return -1 }
        var count = 0
        var k = edge.segment
        var j = edge.completedParts
        while k < msn || (k == msn && j < part) {
            count += 1
            j += 1
            if j >= plan(ofSequence: k).parts.count { k += 1; j = 0 }
            if count > 10_000 { break }
        }
        return count
    }

    /// The Advance Part Limit (§6.2.5.2): 3 / PART-TARGET parts if PART-TARGET < 1 s, else 3.
    var advancePartLimit: Int {
        partTargetSeconds < 1 ? Int((3 / partTargetSeconds).rounded(.up)) : 3
    }

    static func format(_ seconds: Double) -> String {
        var s = String(format: "%.5f", seconds)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }

    /// Live segment URI (`?live=K`) or part URI (`?live=K&part=J`).
    func uri(sequence k: Int, part: Int? = nil) -> String {
        let base = vod.segments[k % vod.segments.count].uri
        var s = base + (base.contains("?") ? "&" : "?") + "\(LiveConfiguration.sequenceQueryName)=\(k)"
        if let part { s += "&\(LowLatencyConfiguration.partQueryName)=\(part)" }
        return s
    }

    /// RENDITION-REPORT values at `clock`: the last segment with a completed part, and that part.
    public func lastPart(clock: Double) -> (msn: Int, part: Int) {
        let e = edge(clock: clock)
        if e.completedParts > 0 || e.segment == 0 { return (e.segment, max(0, e.completedParts - 1)) }
        return (e.segment - 1, plan(ofSequence: e.segment - 1).parts.count - 1)
    }

    /// The playlist at `clock`. `skip`: a delta update (§6.2.5.1). `reports`: URI and playlist of the other renditions.
    public func text(clock: Double, startDate: Date, skip: Bool, reports: [(uri: String, playlist: LowLatencyPlaylist)]) -> String {
        let e = edge(clock: clock)
        let n = vod.segments.count
        let edgeOffset = vod.startSeconds(ofSequence: configuration.windowSegments)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var out = ["#EXTM3U", "#EXT-X-VERSION:\(LowLatencyConfiguration.playlistVersion)"]
        out += vod.header.filter { !$0.hasPrefix("#EXT-X-VERSION") }
        if configuration.event { out.append("#EXT-X-PLAYLIST-TYPE:EVENT") }
        out.append(
            "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,PART-HOLD-BACK=\(Self.format(partHoldBackSeconds))"
                + ",CAN-SKIP-UNTIL=\(Self.format(skipBoundarySeconds))")
        out.append("#EXT-X-PART-INF:PART-TARGET=\(Self.format(partTargetSeconds))")
        let first = configuration.event ? 0 : max(0, e.segment - configuration.windowSegments)
        let playlistEnd = vod.startSeconds(ofSequence: e.segment) // end of the last complete segment
        out.append("#EXT-X-MEDIA-SEQUENCE:\(first)")
        out.append("#EXT-X-DISCONTINUITY-SEQUENCE:\(vod.discontinuitySequence(firstSequence: first))")
        var firstListed = first
        if skip {
            // Segments that end at least the Skip Boundary before the playlist end.
            var k = first
            while k < e.segment && vod.startSeconds(ofSequence: k + 1) <= playlistEnd - skipBoundarySeconds + 1e-9 { k += 1 }
            if k > first { out.append("#EXT-X-SKIP:SKIPPED-SEGMENTS=\(k - first)") }
            firstListed = k
        }
        let partHorizon = playlistEnd - LowLatencyConfiguration.partListingTargetDurations * targetDurationSeconds
        func partLines(_ k: Int, count: Int) -> [String] {
            plan(ofSequence: k).parts.prefix(count).enumerated().map { j, p in
                "#EXT-X-PART:DURATION=\(Self.format(p.durationSeconds)),URI=\"\(uri(sequence: k, part: j))\""
                    + (p.independent ? ",INDEPENDENT=YES" : "")
            }
        }
        for k in firstListed..<max(firstListed, e.segment) {
            let segment = vod.segments[k % n]
            if k > 0 && k % n == 0 { out.append("#EXT-X-DISCONTINUITY") }
            let date = startDate.addingTimeInterval(vod.startSeconds(ofSequence: k) - edgeOffset)
            out.append("#EXT-X-PROGRAM-DATE-TIME:\(formatter.string(from: date))")
            if vod.startSeconds(ofSequence: k + 1) > partHorizon + 1e-9 {
                out += partLines(k, count: plan(ofSequence: k).parts.count)
            }
            out += segment.tags
            out.append(uri(sequence: k))
        }
        // The segment being produced: its completed parts, then the hint for the next one.
        if e.segment > 0 && e.segment % n == 0 && e.completedParts > 0 { out.append("#EXT-X-DISCONTINUITY") }
        out += partLines(e.segment, count: e.completedParts)
        out.append("#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"\(uri(sequence: e.segment, part: e.completedParts))\"")
        for (reportURI, other) in reports {
            let last = other.lastPart(clock: clock)
            out.append("#EXT-X-RENDITION-REPORT:URI=\"\(reportURI)\",LAST-MSN=\(last.msn),LAST-PART=\(last.part)")
        }
        return out.joined(separator: "\n") + "\n"
    }
}

/// What the origin does with a request in low-latency mode.
enum LowLatencyAnswer: Equatable {
    /// Not a low-latency resource: serve it as the plain live mode would.
    case notLowLatency
    /// Send these bytes (a playlist, a part, a segment made of parts).
    case content([UInt8])
    /// Answer with this status (400 for bad directives, 404, 503 after blocking too long).
    case reject(status: Int, reason: String)
    /// Not available yet: ask again at this server time.
    case wait(untilServerSeconds: Double)
}

extension LiveConfiguration {
    /// The earliest server time ≥ `t` at which the live clock reaches `clock` (stale windows freeze it).
    func serverTime(whenClockReaches clock: Double, from t: Double) -> Double {
        var candidate = max(t, clock)
        for _ in 0...stalePlaylists.count {
            guard let frozen = stalePlaylists.first(where: { candidate >= $0.atSeconds && candidate < $0.atSeconds + $0.durationSeconds }),
                frozen.atSeconds < clock
            else { return candidate }
            candidate = max(clock, frozen.atSeconds + frozen.durationSeconds)
        }
        return candidate
    }
}

extension LiveServer {
    /// Answers a request in low-latency mode at server time `t` for a request accepted at `accepted`.
    func lowLatencyAnswer(filePath: String, target: String, atSeconds t: Double, acceptedAt accepted: Double) -> LowLatencyAnswer {
        let clock = configuration.liveClock(atSeconds: t)
        if filePath.hasSuffix(".m3u8") {
            guard let ll = lowLatencyPlaylist(at: filePath) else { return .notLowLatency }
            let directives: DeliveryDirectives
            do { directives = try DeliveryDirectives.parse(target: target) } catch {
                if case let .reason(r) = error { return .reject(status: 400, reason: r) }
                return .reject(status: 400, reason: "bad delivery directive")
            }
            if let msn = directives.msn {
                let edge = ll.edge(clock: configuration.liveClock(atSeconds: accepted))
                let lastComplete = edge.segment - 1
                if msn > lastComplete + 2 {
                    return .reject(status: 400, reason: "_HLS_msn=\(msn) is more than 2 past the last segment \(lastComplete)")
                }
                if let part = directives.part, ll.partsAhead(of: edge, msn: msn, part: part) > ll.advancePartLimit {
                    return .reject(status: 400, reason: "_HLS_part=\(part) of \(msn) is more than \(ll.advancePartLimit) parts ahead")
                }
                let needed = ll.clockWhenAvailable(msn: msn, part: directives.part)
                if clock + 1e-9 < needed {
                    return waitOrGiveUp(
                        until: configuration.serverTime(whenClockReaches: needed, from: t), now: t,
                        accepted: accepted, limit: ll.blockingLimitSeconds)
                }
            }
            let reports = renditionReports(for: filePath)
            return .content(Array(ll.text(clock: clock, startDate: startDateValue, skip: directives.skip, reports: reports).utf8))
        }
        guard let sequence = LiveServer.sequence(inTarget: target),
            let (key, ll) = lowLatencyOwner(ofSegment: filePath, sequence: sequence)
        else { return .notLowLatency }
        _ = key
        let edge = ll.edge(clock: clock)
        let first = ll.configuration.event ? 0 : max(0, edge.segment - configuration.windowSegments)
        guard sequence >= first else { return .reject(status: 404, reason: "left the window") }
        guard let bytes = try? [UInt8](Data(contentsOf: URL(fileURLWithPath: filePath))) else {
            return .reject(status: 404, reason: "unreadable")
        }
        let plan = ll.plan(ofSequence: sequence)
        guard let part = LiveServer.part(inTarget: target) else {
            // A whole segment: the concatenation of its parts, once complete.
            guard sequence < edge.segment else { return .reject(status: 404, reason: "not produced yet") }
            return .content(plan.segmentBytes(segment: bytes))
        }
        guard part >= 0, part < plan.parts.count else { return .reject(status: 404, reason: "no such part") }
        if sequence < edge.segment || (sequence == edge.segment && part < edge.completedParts) {
            return .content(plan.bytes(ofPart: part, segment: bytes))
        }
        // The preload-hinted part (the next one to complete) blocks until it is; anything further is not there.
        let acceptedEdge = ll.edge(clock: configuration.liveClock(atSeconds: accepted))
        guard ll.partsAhead(of: acceptedEdge, msn: sequence, part: part) == 0 else {
            return .reject(status: 404, reason: "part not hinted yet")
        }
        return waitOrGiveUp(
            until: configuration.serverTime(whenClockReaches: ll.clockWhenAvailable(msn: sequence, part: part), from: t),
            now: t, accepted: accepted, limit: ll.blockingLimitSeconds)
    }

    private func waitOrGiveUp(until: Double, now: Double, accepted: Double, limit: Double) -> LowLatencyAnswer {
        let deadline = accepted + limit
        if now >= deadline - 1e-6 {
            return .reject(status: 503, reason: "not available after blocking \(LowLatencyPlaylist.format(limit)) s")
        }
        return .wait(untilServerSeconds: min(until, deadline))
    }

    /// The `part=J` query value of a request target, if present.
    static func part(inTarget target: String) -> Int? {
        guard let q = target.firstIndex(of: "?") else { return nil }
        for pair in target[target.index(after: q)...].prefix(while: { $0 != "#" }).split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1)
            if kv.count == 2, kv[0] == LowLatencyConfiguration.partQueryName { return Int(kv[1]) ?? -1 }
        }
        return nil
    }

    /// Relative URI from the directory `from` to the file `to` (both absolute, standardized).
    static func relativeURI(fromDirectory from: String, to: String) -> String {
        let a = from.split(separator: "/")
        let b = to.split(separator: "/")
        var common = 0
        while common < min(a.count, b.count - 1) && a[common] == b[common] { common += 1 }
        let ups = Array(repeating: "..", count: a.count - common)
        return (ups + b[common...].map(String.init)).joined(separator: "/")
    }
}

extension LiveServer {
    /// The low-latency version of the VOD playlist at `filePath` (cached); nil if it is not a VOD media playlist,
    /// low latency is off, or a segment cannot be cut into parts.
    func lowLatencyPlaylist(at filePath: String) -> LowLatencyPlaylist? {
        guard configuration.lowLatency != nil else { return nil }
        let key = Self.normalize(filePath)
        lock.lock()
        if let cached = lowLatencyPlaylists[key] { lock.unlock(); return cached }
        lock.unlock()
        guard let vod = vod(at: key) else { return nil }
        let dir = (key as NSString).deletingLastPathComponent
        let ll = LowLatencyPlaylist(
            vod: vod,
            segmentBytes: { segment in
                Self.segmentPath(uri: segment.uri, playlistDirectory: dir)
                    .flatMap { try? [UInt8](Data(contentsOf: URL(fileURLWithPath: $0))) }
            }, configuration: configuration)
        lock.lock()
        lowLatencyPlaylists[key] = .some(ll)
        lock.unlock()
        return ll
    }

    /// The low-latency playlist listing the file at `filePath` as live segment `sequence`.
    func lowLatencyOwner(ofSegment filePath: String, sequence: Int) -> (String, LowLatencyPlaylist)? {
        guard configuration.lowLatency != nil, sequence >= 0 else { return nil }
        let path = Self.normalize(filePath)
        lock.lock()
        let candidates = owners[path] ?? []
        lock.unlock()
        for key in candidates {
            guard let ll = lowLatencyPlaylist(at: key) else { continue }
            let dir = (key as NSString).deletingLastPathComponent
            if Self.segmentPath(uri: ll.vod.segments[sequence % ll.vod.segments.count].uri, playlistDirectory: dir) == path {
                return (key, ll)
            }
        }
        return nil
    }

    /// RENDITION-REPORT targets for the playlist at `filePath`: the other media playlists of every multivariant
    /// playlist (in its folder or the one above) that lists it, when they too can be served with parts.
    func renditionReports(for filePath: String) -> [(uri: String, playlist: LowLatencyPlaylist)] {
        let key = Self.normalize(filePath)
        lock.lock()
        let known = renditionSiblings[key]
        lock.unlock()
        let siblings = known ?? findSiblings(of: key)
        if known == nil { lock.lock(); renditionSiblings[key] = siblings; lock.unlock() }
        return siblings.compactMap { s in lowLatencyPlaylist(at: s.path).map { (s.uri, $0) } }
    }

    private func findSiblings(of key: String) -> [(uri: String, path: String)] {
        let dir = (key as NSString).deletingLastPathComponent
        var result: [(uri: String, path: String)] = []
        for folder in [dir, (dir as NSString).deletingLastPathComponent] {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            for name in files.sorted() where name.hasSuffix(".m3u8") {
                let path = Self.normalize(folder + "/" + name)
                guard path != key, let text = try? String(contentsOfFile: path, encoding: .utf8),
                    text.contains("#EXT-X-STREAM-INF")
                else { continue }
                let members = Self.mediaPlaylistURIs(inMultivariant: text).compactMap {
                    Self.segmentPath(uri: $0, playlistDirectory: folder)
                }
                guard members.contains(key) else { continue }
                for m in members where m != key && !result.contains(where: { $0.path == m }) {
                    result.append((Self.relativeURI(fromDirectory: dir, to: m), m))
                }
            }
        }
        return result
    }

    /// Media playlist URIs of a multivariant playlist: the line after each EXT-X-STREAM-INF, EXT-X-MEDIA URIs.
    static func mediaPlaylistURIs(inMultivariant text: String) -> [String] {
        var uris: [String] = []
        var expectURI = false
        for raw in text.split(whereSeparator: \.isNewline) {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#EXT-X-STREAM-INF") { expectURI = true; continue }
            if line.hasPrefix("#EXT-X-MEDIA:"), let r = line.range(of: "URI=\"") {
                uris.append(String(line[r.upperBound...].prefix { $0 != "\"" }))
                continue
            }
            if expectURI && !line.isEmpty && !line.hasPrefix("#") { uris.append(line); expectURI = false }
        }
        return uris
    }
}
