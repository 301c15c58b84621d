// Time as the decision code sees it: injected, never read.
//
// Every decision in HLSCore takes the current instant as an argument. The
// runtime (HLSPlayer) reads the system's monotonic clock; tests drive a
// ManualClock and so run in virtual time. The runtime's waits go through a
// WaitingClock (WaitingClock.swift), the seam a test's virtual time enters by.

import Foundation

/// A point on a monotonic clock, in nanoseconds since an arbitrary epoch
/// (the clock's own). Only differences between instants of one clock mean anything.
public struct MonotonicInstant: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var nanoseconds: UInt64

    public init(nanoseconds: UInt64) { self.nanoseconds = nanoseconds }
    /// Saturating: negative and NaN seconds are the epoch, seconds beyond UInt64 nanoseconds (584 years) its end.
    public init(seconds: Double) { self.nanoseconds = UInt64(saturating: (seconds * 1e9).rounded()) }

    /// Seconds since the clock's epoch.
    public var seconds: Double { Double(nanoseconds) / 1e9 }

    public static func < (a: Self, b: Self) -> Bool { a.nanoseconds < b.nanoseconds }

    /// Seconds from `earlier` to `self` (negative when `earlier` is later).
    public func seconds(since earlier: MonotonicInstant) -> Double {
        nanoseconds >= earlier.nanoseconds
            ? Double(nanoseconds - earlier.nanoseconds) / 1e9
            : -Double(earlier.nanoseconds - nanoseconds) / 1e9
    }

    /// `self` moved by `s` seconds, saturating: never before the epoch, never past the clock's last
    /// instant (`UInt64.max` nanoseconds), and NaN does not move it. Seconds come from the network
    /// here (a target duration, an EXTINF, a steering TTL, a media timestamp): a huge one means
    /// "not in this process's lifetime", never a trap.
    public func advanced(bySeconds s: Double) -> MonotonicInstant {
        let delta = (s * 1e9).rounded()
        if delta.isNaN { return self }
        if delta >= 0 {
            return MonotonicInstant(nanoseconds: nanoseconds.saturatingAdd(UInt64(saturating: delta)))
        }
        let back = UInt64(saturating: -delta)
        return MonotonicInstant(nanoseconds: nanoseconds >= back ? nanoseconds - back : 0)
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
