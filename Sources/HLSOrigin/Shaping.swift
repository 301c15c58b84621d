import Foundation
import Glibc

/// Monotonic seconds (CLOCK_MONOTONIC).
@inline(__always) func monotonicNow() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Throughput shaping for the send path. Every body/header chunk goes through `admit` before it is written.
/// Later shapers (trace-driven, per-connection) conform to this.
public protocol LinkShaper: AnyObject, Sendable {
    /// Called before writing `bytes` on `connectionID`; blocks (or returns a delay) until they may go.
    /// Returns the number of seconds the caller must wait before sending (0 = now).
    func admit(bytes: Int, connectionID: Int) -> Double
    /// Largest chunk the send path should hand to `admit` at once.
    var preferredChunkSize: Int { get }
    /// Short description for the request log, e.g. `"rate=8000000bps"`.
    var logDescription: String { get }
    /// Like `admit(bytes:connectionID:)`; `continuing` is true for every chunk of a response after its first,
    /// i.e. when the data was ready and any delay since the previous chunk is the emulator's own scheduling.
    /// Has a default (ignores `continuing`).
    func admit(bytes: Int, connectionID: Int, continuing: Bool) -> Double
    /// Called by `OriginServer.start` with the monotonic time of server start (the trace origin).
    /// Has a default (does nothing).
    func serverStarted(monotonicOrigin: Double)
    /// The link at `secondsSinceStart`, for the request log and the trace-latency RTT. Has a default.
    func linkState(atSeconds secondsSinceStart: Double) -> LinkState
}

/// Constant-rate token bucket shared by all connections. Reservations may drive the bucket negative
/// ("debt"), so concurrent senders are served in arrival order and the aggregate rate stays at `bitsPerSecond`.
public final class TokenBucketShaper: LinkShaper, @unchecked Sendable {
    public let bitsPerSecond: Double
    private let bytesPerSecond: Double
    private let capacity: Double
    private var tokens: Double
    private var last: Double
    private let lock = NSLock()
    public let preferredChunkSize: Int

    public init(bitsPerSecond: Double, burstBytes: Int? = nil) {
        self.bitsPerSecond = bitsPerSecond
        self.bytesPerSecond = max(bitsPerSecond / 8, 1)
        // Small chunks keep pacing smooth: ~10 ms worth of data, between 1 KB and 64 KB.
        let chunk = Int(min(max(bytesPerSecond * 0.01, 1024), 65536))
        self.preferredChunkSize = chunk
        self.capacity = Double(burstBytes ?? chunk)
        self.tokens = capacity
        self.last = monotonicNow()
    }

    public func admit(bytes: Int, connectionID: Int) -> Double {
        lock.lock()
        defer { lock.unlock() }
        let now = monotonicNow()
        tokens = min(capacity, tokens + (now - last) * bytesPerSecond)
        last = now
        tokens -= Double(bytes)
        return tokens >= 0 ? 0 : -tokens / bytesPerSecond
    }

    public var logDescription: String { "rate=\(Int(bitsPerSecond))bps" }

    public func linkState(atSeconds secondsSinceStart: Double) -> LinkState {
        LinkState(rateBitsPerSecond: bitsPerSecond, description: logDescription)
    }
}

/// What the link looks like at one moment, for the request log and the RTT model.
public struct LinkState: Sendable, Equatable {
    /// Rate in force; nil = unshaped.
    public var rateBitsPerSecond: Double?
    /// Trace name and position within its loop, if a trace drives the link.
    public var traceName: String?
    public var tracePositionSeconds: Double?
    /// The trace's own first-byte latency at this moment (Sabre `latency_ms`), if it has one.
    public var latencySeconds: Double?
    /// A link collapse is in force.
    public var collapsed: Bool
    /// e.g. `trace=x.json pos=12.300s rate=2000000bps` or `rate=8000000bps`.
    public var description: String

    public init(
        rateBitsPerSecond: Double?, traceName: String? = nil, tracePositionSeconds: Double? = nil,
        latencySeconds: Double? = nil, collapsed: Bool = false, description: String
    ) {
        self.rateBitsPerSecond = rateBitsPerSecond
        self.traceName = traceName
        self.tracePositionSeconds = tracePositionSeconds
        self.latencySeconds = latencySeconds
        self.collapsed = collapsed
        self.description = description
    }
}

extension LinkShaper {
    public func admit(bytes: Int, connectionID: Int, continuing: Bool) -> Double {
        admit(bytes: bytes, connectionID: connectionID)
    }
    public func serverStarted(monotonicOrigin: Double) {}
    public func linkState(atSeconds secondsSinceStart: Double) -> LinkState {
        LinkState(rateBitsPerSecond: nil, description: logDescription)
    }
}

/// A shared bottleneck driven by a `LinkSchedule` (a looped throughput trace, or a constant rate, with collapse
/// windows). The link is a FIFO fluid server: each admitted chunk reserves the next `bytes` of link capacity;
/// the caller sends it when the link would have finished delivering it. Unused capacity is banked only for
/// `idleSlackSeconds` (a real link cannot send in the past), so an idle link bursts at most that much link time.
public final class TraceShaper: LinkShaper, @unchecked Sendable {
    public let schedule: LinkSchedule
    /// Pace in chunks of about this much link time (bounded by `minimumChunkBytes`...`maximumChunkBytes`).
    public static let chunkSeconds = 0.010
    public static let minimumChunkBytes = 1500
    public static let maximumChunkBytes = 256 * 1024
    /// Chunk size while the link delivers nothing (collapse, outage): small, so sending resumes promptly.
    public static let outageChunkBytes = 1500
    /// Capacity the link keeps for a sender that comes back late (wake-up and syscall latency between chunks).
    /// Without it each pacing cycle would lose its overhead (≈10% at 10 ms chunks on a busy machine); with it an
    /// idle link bursts at most this much link time.
    public static let idleSlackSeconds = 0.020
    /// The slack a new response gets on an idle link: a wake-up's worth, not
    /// `idleSlackSeconds`, so the first bytes of a small response are not a
    /// burst above the link rate (20 ms of burst made a 150 KB segment at
    /// 8 Mbit/s arrive 13% faster than the link).
    public static let newResponseSlackSeconds = 0.002
    /// A response's later chunks keep their place on the link when their sender comes back late (a real sender's
    /// data would have been queued at the bottleneck), up to this much link time; so CPU starvation of a sending
    /// thread is caught up instead of lost. Bounded, because a sender blocked by a client that stopped reading
    /// genuinely loses link time.
    public static let maximumCatchUpSeconds = 0.25

    private let lock = NSLock()
    private var origin: Double
    /// Capacity (bytes since the origin) reserved so far.
    private var reservedBytes = 0.0
    /// Per connection: trace time at which its last reserved chunk completes.
    private var lastCompletion: [Int: Double] = [:]

    public init(schedule: LinkSchedule) {
        self.schedule = schedule
        self.origin = monotonicNow()
    }

    public convenience init(trace: ThroughputTrace, collapses: [LinkCollapse] = []) {
        self.init(schedule: LinkSchedule(trace: trace, collapses: collapses))
    }

    public func serverStarted(monotonicOrigin: Double) {
        lock.lock()
        origin = monotonicOrigin
        reservedBytes = 0
        lastCompletion = [:]
        lock.unlock()
    }

    public func admit(bytes: Int, connectionID: Int) -> Double {
        admit(bytes: bytes, connectionID: connectionID, continuing: false)
    }

    public func admit(bytes: Int, connectionID: Int, continuing: Bool) -> Double {
        lock.lock()
        defer { lock.unlock() }
        let t = monotonicNow() - origin
        // Capacity before `floorTime` that nobody reserved is lost.
        var floorTime = t - (continuing ? Self.idleSlackSeconds : Self.newResponseSlackSeconds)
        if continuing, let previous = lastCompletion[connectionID] {
            floorTime = max(t - Self.maximumCatchUpSeconds, min(floorTime, previous))
        }
        reservedBytes = max(reservedBytes, schedule.capacityBytes(until: max(0, floorTime))) + Double(bytes)
        guard let done = schedule.time(whenCapacityReaches: reservedBytes) else {
            lastCompletion[connectionID] = nil
            return .infinity
        }
        lastCompletion[connectionID] = done
        return max(0, done - t)
    }

    public var preferredChunkSize: Int {
        lock.lock()
        let t = monotonicNow() - origin
        lock.unlock()
        let rate = schedule.rateBitsPerSecond(at: t) / 8
        if rate <= 0 { return Self.outageChunkBytes }
        return Int(min(max(rate * Self.chunkSeconds, Double(Self.minimumChunkBytes)), Double(Self.maximumChunkBytes)))
    }

    public var logDescription: String {
        schedule.trace.isConstantRate ? schedule.trace.name : "trace=\(schedule.trace.name)"
    }

    public func linkState(atSeconds t: Double) -> LinkState {
        let piece = schedule.trace.piece(at: t)
        let collapsed = schedule.isCollapsed(at: t)
        let rate = collapsed ? 0 : piece.rateBitsPerSecond
        let isTrace = !schedule.trace.isConstantRate
        let position = schedule.trace.loopPosition(t)
        var d = isTrace ? "trace=\(schedule.trace.name) pos=\(String(format: "%.3f", position))s " : ""
        d += "rate=\(Int(rate))bps"
        if collapsed { d += " collapsed" }
        return LinkState(
            rateBitsPerSecond: rate, traceName: isTrace ? schedule.trace.name : nil,
            tracePositionSeconds: isTrace ? position : nil, latencySeconds: piece.latencySeconds,
            collapsed: collapsed, description: d)
    }
}
