// The system's implementation of the clock seam (HLSCore's WaitingClock):
// waits in wall time, for every real session. DiscreteEventClock.swift has
// the one that runs a real, multi-threaded session in virtual time (tests).

import Foundation
import HLSCore
import HLSNet

/// Wall time: `CLOCK_MONOTONIC`, sleeps, `NSCondition` and a Dispatch timer. What a session runs on by default.
public struct SystemWaitingClock: WaitingClock {
    /// How late a periodic run may start, seconds (the Dispatch timer's leeway: lets the system batch wakeups).
    static let timerLeewaySeconds = 0.01

    private let monotonic = SystemMonotonicClock()

    public init() {}

    public func now() -> MonotonicInstant { monotonic.now() }

    public func sleep(until deadline: MonotonicInstant) {
        let left = deadline.seconds(since: now())
        if left > 0 { Thread.sleep(forTimeInterval: left) }
    }

    public func makeCondition() -> any ClockCondition { SystemCondition(clock: monotonic) }

    public func repeating(everySeconds intervalSeconds: Double, name: String, _ body: @escaping @Sendable () -> Void) -> any ClockTimer {
        SystemTimer(intervalSeconds: intervalSeconds, name: name, body)
    }

    public func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
        let thread = Thread(block: body)
        thread.name = name
        thread.start()
    }

    public func takingPart<T>(_ body: () throws -> T) rethrows -> T { try body() }

    private final class SystemCondition: ClockCondition, @unchecked Sendable {
        private let condition = NSCondition()
        private let clock: SystemMonotonicClock
        init(clock: SystemMonotonicClock) { self.clock = clock }
        func lock() { condition.lock() }
        func unlock() { condition.unlock() }
        func broadcast() { condition.broadcast() }
        func wait(until deadline: MonotonicInstant?) -> Bool {
            guard let deadline else {
                condition.wait()
                return true
            }
            return condition.wait(until: Date(timeIntervalSinceNow: deadline.seconds(since: clock.now())))
        }
    }

    private final class SystemTimer: ClockTimer, @unchecked Sendable {
        private let queue: DispatchQueue
        private let timer: DispatchSourceTimer
        init(intervalSeconds: Double, name: String, _ body: @escaping @Sendable () -> Void) {
            queue = DispatchQueue(label: name)
            timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(
                deadline: .now() + intervalSeconds, repeating: intervalSeconds,
                leeway: .milliseconds(Int(SystemWaitingClock.timerLeewaySeconds * 1000)))
            timer.setEventHandler(handler: body)
            timer.resume()
        }
        func cancel() {
            timer.cancel()
            queue.sync {} // a run under way ends first
        }
    }
}
