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
}
