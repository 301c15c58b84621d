// The clock seam for waiting: every timed wait of a session's threads goes
// through one of these, never a sleep of its own.
//
// The system implementation (HLSPlayer's SystemWaitingClock) waits in wall
// time; a discrete-event one (HLSPlayer's DiscreteEventClock) moves its time
// only when every thread taking part is waiting, so a real, multi-threaded
// session runs in virtual time. HLSCore holds only the protocols: the
// implementations use threads.

/// A lock with a condition whose timed waits go through a clock. Used like `NSCondition`: `lock()`, test the
/// state, `wait(until:)` while it is not yet what the caller waits for, `unlock()`; whoever changes the state
/// does so under the lock and calls `broadcast()`.
public protocol ClockCondition: AnyObject, Sendable {
    func lock()
    func unlock()
    /// With the lock held: releases it, waits until `broadcast()` or `deadline` (nil: no deadline), and takes it
    /// again. False when the deadline passed without a broadcast. Like any condition, a caller re-tests its state.
    func wait(until deadline: MonotonicInstant?) -> Bool
    /// Wakes every waiter of this condition (time does not move).
    func broadcast()
}

extension ClockCondition {
    /// `body` with the lock held.
    public func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}

/// A periodic task started by `WaitingClock.repeating`.
public protocol ClockTimer: AnyObject, Sendable {
    /// Stops the task. When it returns, no run is under way and none will start.
    func cancel()
}

/// A monotonic clock a session's threads wait on. Threads that wait on it are started through it
/// (`startThread`), or take part for a while (`takingPart`), so a discrete-event implementation knows
/// who is still running.
public protocol WaitingClock: MonotonicClock {
    /// Returns at `deadline` (at once when it has passed).
    func sleep(until deadline: MonotonicInstant)
    /// A new condition whose waits are timed on this clock.
    func makeCondition() -> any ClockCondition
    /// Runs `body` every `intervalSeconds`, the first time one interval from now, until cancelled. Runs do not
    /// overlap.
    func repeating(everySeconds intervalSeconds: Double, name: String, _ body: @escaping @Sendable () -> Void) -> any ClockTimer
    /// Starts a thread that takes part in this clock's time until `body` returns.
    func startThread(name: String, _ body: @escaping @Sendable () -> Void)
    /// Runs `body` on the calling thread as a thread taking part in this clock's time.
    func takingPart<T>(_ body: () throws -> T) rethrows -> T
}
