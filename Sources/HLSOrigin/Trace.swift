import Foundation

/// The on-disk formats of throughput traces used in the ABR literature (see `shared/data/traces/README.md`).
public enum TraceFormat: String, Sendable, CaseIterable, Codable {
    /// Mahimahi packet-delivery trace: one integer per line, a millisecond timestamp at which one
    /// 1500-byte packet may leave. Replayed with period = the last timestamp.
    case mahimahi
    /// Pensieve "cooked" trace: `time_s<TAB>Mbit/s` per line; each rate holds until the next timestamp.
    case pensieve
    /// Sabre network JSON: `[{"duration_ms": ..., "bandwidth_kbps": ..., "latency_ms": ...}, ...]`.
    case sabre
}

public struct TraceError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A throughput trace as a piecewise-constant rate `bandwidth(t)`, looped when it ends.
/// All queries take trace time in seconds from the trace origin (0 = first sample); times past the
/// end wrap around. Capacity is the number of **bytes** the link can deliver.
public struct ThroughputTrace: Sendable, Equatable {
    /// One piece: `rateBitsPerSecond` held for `durationSeconds`, with an optional one-way first-byte latency.
    public struct Piece: Sendable, Equatable {
        public var durationSeconds: Double
        public var rateBitsPerSecond: Double
        public var latencySeconds: Double?
        public init(durationSeconds: Double, rateBitsPerSecond: Double, latencySeconds: Double? = nil) {
            self.durationSeconds = durationSeconds
            self.rateBitsPerSecond = rateBitsPerSecond
            self.latencySeconds = latencySeconds
        }
    }

    /// Bytes per Mahimahi delivery opportunity (one MTU-sized packet).
    public static let mahimahiPacketBytes = 1500
    /// Mahimahi traces are binned into constant-rate pieces this long. 10 ms keeps every 1 s window exact
    /// while collapsing a 1000 s trace to at most 100 000 pieces.
    public static let mahimahiBinSeconds = 0.010

    /// Name for logs (usually the file name).
    public var name: String
    /// Made by `constant(bitsPerSecond:)` (logged as a rate, not as a trace).
    public private(set) var isConstantRate = false
    public private(set) var pieces: [Piece]
    /// Start time of each piece, plus the loop duration at the end (`pieces.count + 1` values).
    private var starts: [Double]
    /// Cumulative capacity in bytes at the start of each piece, plus one loop's capacity at the end.
    private var cumulativeBytes: [Double]

    public var loopDurationSeconds: Double { starts.last ?? 0 }
    public var loopBytes: Double { cumulativeBytes.last ?? 0 }
    /// Mean rate over one loop.
    public var meanBitsPerSecond: Double { loopDurationSeconds > 0 ? loopBytes * 8 / loopDurationSeconds : 0 }

    public init(name: String, pieces: [Piece]) throws {
        let kept = pieces.filter { $0.durationSeconds > 0 }
        guard !kept.isEmpty else { throw TraceError("trace \(name) has no piece with a positive duration") }
        guard kept.allSatisfy({ $0.rateBitsPerSecond >= 0 && $0.rateBitsPerSecond.isFinite }) else {
            throw TraceError("trace \(name) has a negative or non-finite rate")
        }
        self.name = name
        self.pieces = kept
        var s: [Double] = [0]
        var c: [Double] = [0]
        for p in kept {
            s.append(s.last! + p.durationSeconds)
            c.append(c.last! + p.durationSeconds * p.rateBitsPerSecond / 8)
        }
        starts = s
        cumulativeBytes = c
    }

    /// A constant-rate link as a one-piece trace.
    public static func constant(bitsPerSecond: Double, name: String? = nil) -> ThroughputTrace {
        // A one-second piece can never be rejected.
        var t = try! ThroughputTrace(
            name: name ?? "rate=\(Int(bitsPerSecond))bps",
            pieces: [Piece(durationSeconds: 1, rateBitsPerSecond: bitsPerSecond)])
        t.isConstantRate = true
        return t
    }

    /// Index of the piece in force at `position` (trace time within one loop, `0 ..< loopDurationSeconds`).
    private func pieceIndex(atPosition position: Double) -> Int {
        // Largest i with starts[i] <= position.
        var lo = 0, hi = pieces.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if starts[mid] <= position { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// Position within the loop for trace time `t`.
    public func loopPosition(_ t: Double) -> Double {
        let d = loopDurationSeconds
        let r = t.truncatingRemainder(dividingBy: d)
        return r < 0 ? r + d : r
    }

    /// The piece in force at trace time `t`.
    public func piece(at t: Double) -> Piece { pieces[pieceIndex(atPosition: loopPosition(t))] }

    /// Rate in force at trace time `t`.
    public func rateBitsPerSecond(at t: Double) -> Double { piece(at: t).rateBitsPerSecond }

    /// Bytes the link can deliver between trace time 0 and `t` (t >= 0), loops included.
    public func capacityBytes(until t: Double) -> Double {
        guard t > 0 else { return 0 }
        let loops = (t / loopDurationSeconds).rounded(.down)
        let position = t - loops * loopDurationSeconds
        let i = pieceIndex(atPosition: min(position, loopDurationSeconds))
        let within = cumulativeBytes[i] + (position - starts[i]) * pieces[i].rateBitsPerSecond / 8
        return loops * loopBytes + min(within, cumulativeBytes[i + 1])
    }

    /// Earliest trace time at which the cumulative capacity reaches `bytes`; nil if the trace never delivers
    /// anything (all-zero).
    public func time(whenCapacityReaches bytes: Double) -> Double? {
        guard bytes > 0 else { return 0 }
        guard loopBytes > 0 else { return nil }
        var loops = (bytes / loopBytes).rounded(.down)
        var rest = bytes - loops * loopBytes
        if rest <= 0 { loops -= 1; rest += loopBytes } // exactly on a loop boundary: end of the previous loop
        // Smallest i with cumulativeBytes[i + 1] >= rest.
        var lo = 0, hi = pieces.count - 1
        while lo < hi {
            let mid = (lo + hi) / 2
            if cumulativeBytes[mid + 1] >= rest { hi = mid } else { lo = mid + 1 }
        }
        let rate = pieces[lo].rateBitsPerSecond / 8
        let within = rate > 0 ? starts[lo] + (rest - cumulativeBytes[lo]) / rate : starts[lo]
        return loops * loopDurationSeconds + within
    }

    // MARK: Parsing

    /// Guesses the format from the file extension, then from the content.
    public static func detectFormat(fileName: String, text: String) -> TraceFormat? {
        let lower = fileName.lowercased()
        if lower.hasSuffix(".json") { return .sabre }
        if lower.hasSuffix(".down") || lower.hasSuffix(".up") { return .mahimahi }
        guard
            let first = text.split(whereSeparator: \.isNewline).first(where: {
                !$0.trimmingCharacters(in: .whitespaces).isEmpty
            })
        else { return nil }
        let trimmed = first.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("[") || trimmed.hasPrefix("{") { return .sabre }
        let fields = trimmed.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
        if fields.count == 1, Int(fields[0]) != nil { return .mahimahi }
        if fields.count >= 2, Double(fields[0]) != nil, Double(fields[1]) != nil { return .pensieve }
        return nil
    }

    /// Parses trace text. `format` nil = detect from `name` and content.
    public static func parse(_ text: String, name: String, format: TraceFormat? = nil) throws -> ThroughputTrace {
        guard let format = format ?? detectFormat(fileName: name, text: text) else {
            throw TraceError("cannot tell the format of trace \(name); pass it explicitly")
        }
        switch format {
        case .mahimahi: return try parseMahimahi(text, name: name)
        case .pensieve: return try parsePensieve(text, name: name)
        case .sabre: return try parseSabre(text, name: name)
        }
    }

    /// Loads a trace file.
    public static func load(contentsOf url: URL, format: TraceFormat? = nil) throws -> ThroughputTrace {
        let text = try String(contentsOf: url, encoding: .utf8)
        return try parse(text, name: url.lastPathComponent, format: format)
    }

    static func parseMahimahi(_ text: String, name: String) throws -> ThroughputTrace {
        var stamps: [Int] = []
        for (n, line) in text.split(whereSeparator: \.isNewline).enumerated() {
            let t = line.trimmingCharacters(in: .whitespaces)
            if t.isEmpty { continue }
            guard let ms = Int(t), ms >= 0 else { throw TraceError("\(name): line \(n + 1) is not a millisecond timestamp") }
            if let last = stamps.last, ms < last { throw TraceError("\(name): timestamps go backwards at line \(n + 1)") }
            stamps.append(ms)
        }
        guard let lastMs = stamps.last else { throw TraceError("\(name): empty Mahimahi trace") }
        // mm-link loops with period = last timestamp; a trace of just "1" is 1 packet per ms.
        let periodMs = max(lastMs, 1)
        let binMs = max(1, Int((mahimahiBinSeconds * 1000).rounded()))
        let binCount = (periodMs + binMs - 1) / binMs
        var counts = [Int](repeating: 0, count: binCount)
        for ms in stamps {
            // Opportunity at ms lies in (ms-1, ms]; a stamp equal to the period wraps to bin of time 0.. keep it last.
            let slot = min(max(ms - 1, 0) / binMs, binCount - 1)
            counts[slot] += 1
        }
        var pieces: [Piece] = []
        for (i, count) in counts.enumerated() {
            let duration = Double(min(binMs, periodMs - i * binMs)) / 1000
            let rate = Double(count * mahimahiPacketBytes * 8) / duration
            if let last = pieces.last, last.rateBitsPerSecond == rate {
                pieces[pieces.count - 1].durationSeconds += duration
            } else {
                pieces.append(Piece(durationSeconds: duration, rateBitsPerSecond: rate))
            }
        }
        return try ThroughputTrace(name: name, pieces: pieces)
    }

    static func parsePensieve(_ text: String, name: String) throws -> ThroughputTrace {
        var samples: [(Double, Double)] = []
        for (n, line) in text.split(whereSeparator: \.isNewline).enumerated() {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" || $0 == "," })
            if fields.isEmpty { continue }
            guard fields.count >= 2, let t = Double(fields[0]), let mbps = Double(fields[1]), mbps >= 0 else {
                throw TraceError("\(name): line \(n + 1) is not `time_s<TAB>Mbit/s`")
            }
            if let last = samples.last, t < last.0 { throw TraceError("\(name): time goes backwards at line \(n + 1)") }
            samples.append((t, mbps))
        }
        guard !samples.isEmpty else { throw TraceError("\(name): empty Pensieve trace") }
        var pieces: [Piece] = []
        for i in samples.indices {
            let duration: Double
            if i + 1 < samples.count {
                duration = samples[i + 1].0 - samples[i].0
            } else {
                // The last sample has no end: hold it as long as the step before it (1 s if alone).
                duration = samples.count > 1 ? samples[i].0 - samples[i - 1].0 : 1
            }
            pieces.append(Piece(durationSeconds: duration, rateBitsPerSecond: samples[i].1 * 1e6))
        }
        return try ThroughputTrace(name: name, pieces: pieces)
    }

    static func parseSabre(_ text: String, name: String) throws -> ThroughputTrace {
        struct Entry: Decodable {
            var duration_ms: Double
            var bandwidth_kbps: Double
            var latency_ms: Double?
        }
        let entries: [Entry]
        do { entries = try JSONDecoder().decode([Entry].self, from: Data(text.utf8)) } catch {
            throw TraceError("\(name): not a Sabre network JSON array: \(error)")
        }
        return try ThroughputTrace(
            name: name,
            pieces: entries.map {
                Piece(
                    durationSeconds: $0.duration_ms / 1000, rateBitsPerSecond: $0.bandwidth_kbps * 1000,
                    latencySeconds: $0.latency_ms.map { $0 / 1000 })
            })
    }
}

/// A link collapse: from `atSeconds` after server start, the shared link delivers nothing for `durationSeconds`.
public struct LinkCollapse: Sendable, Codable, Equatable {
    public var atSeconds: Double
    public var durationSeconds: Double
    public init(atSeconds: Double, durationSeconds: Double) {
        self.atSeconds = atSeconds
        self.durationSeconds = durationSeconds
    }
    public var endSeconds: Double { atSeconds + durationSeconds }
}

/// The capacity of the emulated bottleneck over server time: a (looped) trace with collapse windows cut out.
/// Pure; `TraceShaper` drives it with the clock.
public struct LinkSchedule: Sendable, Equatable {
    public var trace: ThroughputTrace
    /// Sorted by start, non-overlapping after init.
    public private(set) var collapses: [LinkCollapse]

    public init(trace: ThroughputTrace, collapses: [LinkCollapse] = []) {
        self.trace = trace
        var merged: [LinkCollapse] = []
        for c in collapses.filter({ $0.durationSeconds > 0 }).sorted(by: { $0.atSeconds < $1.atSeconds }) {
            if let last = merged.last, c.atSeconds <= last.endSeconds {
                merged[merged.count - 1].durationSeconds = max(last.endSeconds, c.endSeconds) - last.atSeconds
            } else {
                merged.append(c)
            }
        }
        self.collapses = merged
    }

    public func isCollapsed(at t: Double) -> Bool { collapses.contains { t >= $0.atSeconds && t < $0.endSeconds } }

    public func rateBitsPerSecond(at t: Double) -> Double { isCollapsed(at: t) ? 0 : trace.rateBitsPerSecond(at: t) }

    /// Bytes deliverable between 0 and `t`.
    public func capacityBytes(until t: Double) -> Double {
        var c = trace.capacityBytes(until: t)
        for w in collapses where w.atSeconds < t {
            c -= trace.capacityBytes(until: min(t, w.endSeconds)) - trace.capacityBytes(until: w.atSeconds)
        }
        return c
    }

    /// Earliest time at which the cumulative capacity reaches `bytes`; nil = never.
    public func time(whenCapacityReaches bytes: Double) -> Double? {
        var offset = 0.0
        for w in collapses {
            guard let t = trace.time(whenCapacityReaches: bytes + offset) else { return nil }
            if t <= w.atSeconds { return t }
            offset += trace.capacityBytes(until: w.endSeconds) - trace.capacityBytes(until: w.atSeconds)
        }
        return trace.time(whenCapacityReaches: bytes + offset)
    }
}
