// Time as the decision code sees it: injected, never read.
//
// Every decision in HLSCore takes the current instant as an argument. The
// runtime (HLSPlayer) reads the system's monotonic clock; tests drive a
// ManualClock and so run in virtual time.

import Foundation

/// A point on a monotonic clock, in nanoseconds since an arbitrary epoch
/// (the clock's own). Only differences between instants of one clock mean anything.
public struct MonotonicInstant: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }
    public init(seconds: Double) { self.nanoseconds = UInt64((max(0, seconds) * 1e9).rounded()) }

    /// Seconds since the clock's epoch.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    public static func < (a: Self, b: Self) -> Bool { a.nanoseconds < b.nanoseconds }

    /// Seconds from `earlier` to `self` (negative when `earlier` is later).
    public func seconds(since earlier: MonotonicInstant) -> Double {
        nanoseconds >= earlier.nanoseconds
            ? Double(nanoseconds - earlier.nanoseconds) / 1e9
            : -Double(earlier.nanoseconds - nanoseconds) / 1e9
    }

    public func advanced(bySeconds s: Double) -> MonotonicInstant {
        let delta = Int64((s * 1e9).rounded())
        return MonotonicInstant(nanoseconds: delta >= 0 ? nanoseconds &+ UInt64(delta) : nanoseconds &- min(nanoseconds, UInt64(-delta)))
    }

    public var description: String { String(format: "%.6fs", seconds) }
}

/// A source of monotonic instants. The system one lives in the runtime;
/// ManualClock is for tests and simulations.
public protocol MonotonicClock: Sendable {
    func now() -> MonotonicInstant
}

/// A clock that only moves when told to. Thread-safe.
public final class ManualClock: MonotonicClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: MonotonicInstant

    public init(start: MonotonicInstant = MonotonicInstant(nanoseconds: 0)) { current = start }

    public func now() -> MonotonicInstant { lock.withLock { current } }

    public func advance(bySeconds s: Double) {
        lock.withLock { current = current.advanced(bySeconds: s) }
    }
}
