// The clock seam's discrete-event implementation: a real, multi-threaded
// session (PlayerSession with its loader, monitor and decode threads) in
// virtual time, deterministically (tests, docs/architecture.md "Seams").

import Foundation
import HLSCore

/// A discrete-event clock for running a real, multi-threaded session in virtual time, deterministically.
///
/// The rule: **one thread taking part runs at a time, and time moves only when none can run.** A thread takes part
/// when it is started through `startThread` (or `repeating`), or inside `takingPart`. It holds the turn until it
/// waits on the clock (`sleep(until:)`, a condition's `wait(until:)`) or ends; then the turn passes to the next
/// thread that can run, in a fixed order: the ready queue, first in first out. A thread joins the ready queue
/// when it is started, when a broadcast wakes it (in the order its waits began), or when time reaches its
/// deadline. Only when the queue is empty and nobody holds the turn does time jump, to the earliest deadline; the
/// threads due then join the queue in the order of their deadlines, ties in the order their waits began. A
/// broadcast never moves time. A wait whose deadline has passed returns at once, keeping the turn.
///
/// So what a session does is a function of its inputs, not of the machine's scheduling: every thread's steps run
/// in one order, which two runs repeat exactly. No wall time passes in a wait. Work between waits (demux, decode)
/// takes no virtual time. A thread taking part must not block on anything but this clock for long (a lock held
/// briefly is fine): the others cannot run meanwhile. Threads not taking part (a test's own) may read `now()`
/// and broadcast; a broadcast from one when nobody holds the turn hands the turn on. When every thread taking part
/// waits without a deadline, nothing in virtual time can wake them: the clock stops the process with their names
/// (a test that fails this way names the wait to look at, where it would otherwise hang).
public final class DiscreteEventClock: WaitingClock, @unchecked Sendable {
    private final class Participant: @unchecked Sendable {
        let name: String
        let turn = DispatchSemaphore(value: 0)
        /// While waiting: the deadline, the condition waited on, the order the wait began.
        var deadline: MonotonicInstant?
        var condition: ObjectIdentifier?
        var order = 0
        /// Woken by a broadcast (not by its deadline).
        var signalled = false
        init(name: String) { self.name = name }
    }

    private let mutex = NSLock()
    private var current: MonotonicInstant
    private var holder: Participant?
    private var ready: [Participant] = []
    private var waiting: [Participant] = []
    private var nextOrder = 0
    private var byThread: [pthread_t: Participant] = [:]

    /// Whether a state no thread taking part can leave — all wait without a deadline — stops the process with
    /// their names rather than hanging. Off only for a test whose own thread (not taking part) broadcasts later.
    private let stopsWhenStuck: Bool

    public init(start: MonotonicInstant = MonotonicInstant(nanoseconds: 0), stopsWhenStuck: Bool = true) {
        current = start
        self.stopsWhenStuck = stopsWhenStuck
    }

    public func now() -> MonotonicInstant { mutex.withLock { current } }

    // MARK: Taking part

    public func startThread(name: String, _ body: @escaping @Sendable () -> Void) {
        let p = Participant(name: name)
        mutex.withLock { enqueue(p) }
        let thread = Thread { [self] in
            mutex.withLock { byThread[pthread_self()] = p }
            p.turn.wait()
            body()
            leave(p)
        }
        thread.name = name
        thread.start()
    }

    public func takingPart<T>(_ body: () throws -> T) rethrows -> T {
        let me = pthread_self()
        let (p, joined): (Participant, Bool) = mutex.withLock {
            if let p = byThread[me] { return (p, false) }
            let p = Participant(name: Thread.current.name ?? "caller")
            byThread[me] = p
            enqueue(p)
            return (p, true)
        }
        guard joined else { return try body() }
        p.turn.wait()
        defer { leave(p) }
        return try body()
    }

    /// Adds a new participant to the ready queue; hands it the turn if nobody holds it. With `mutex` held.
    private func enqueue(_ p: Participant) {
        ready.append(p)
        if holder == nil { handOn() }
    }

    private func leave(_ p: Participant) {
        mutex.withLock {
            byThread[pthread_self()] = nil
            if holder === p { holder = nil }
            handOn()
        }
    }

    /// With `mutex` held and nobody holding the turn: gives it to the first ready thread, moving time to the
    /// earliest deadline first when none is ready.
    private func handOn() {
        guard holder == nil else { return }
        if ready.isEmpty {
            guard let earliest = waiting.compactMap(\.deadline).min() else {
                // Nobody can run and no deadline will come: in virtual time nothing can wake them. A hang is the
                // worst way for a test to fail, so this one stops with the names of who waits.
                if !waiting.isEmpty, stopsWhenStuck {
                    preconditionFailure(
                        "DiscreteEventClock: every thread taking part waits with no deadline (\(waiting.map(\.name).sorted().joined(separator: ", "))): nothing can wake them"
                    )
                }
                return
            }
            if earliest > current { current = earliest }
            let due = waiting.filter { $0.deadline.map { $0 <= current } ?? false }.sorted {
                ($0.deadline!, $0.order) < ($1.deadline!, $1.order)
            }
            waiting.removeAll { w in due.contains { $0 === w } }
            ready.append(contentsOf: due)
        }
        let next = ready.removeFirst()
        holder = next
        next.turn.signal()
    }

    // MARK: Waiting

    /// The calling thread waits (the turn passed on) until its deadline or a broadcast of `condition`. True when
    /// woken by a broadcast. `release` runs after the thread is registered as waiting, before it blocks.
    private func block(until deadline: MonotonicInstant?, on condition: ObjectIdentifier?, release: () -> Void) -> Bool {
        let me = pthread_self()
        let p: Participant = mutex.withLock {
            guard let p = byThread[me] else {
                preconditionFailure("DiscreteEventClock: a wait on a thread that does not take part (start it through the clock)")
            }
            p.deadline = deadline
            p.condition = condition
            p.signalled = false
            p.order = nextOrder
            nextOrder += 1
            waiting.append(p)
            if holder === p { holder = nil }
            handOn()
            return p
        }
        release()
        p.turn.wait()
        return mutex.withLock {
            p.condition = nil
            return p.signalled
        }
    }

    public func sleep(until deadline: MonotonicInstant) {
        guard deadline > now() else { return }
        _ = block(until: deadline, on: nil) {}
    }

    /// Wakes the waiters of `condition`, in the order their waits began.
    fileprivate func broadcast(_ condition: ObjectIdentifier) {
        mutex.withLock {
            let woken = waiting.filter { $0.condition == condition }.sorted { $0.order < $1.order }
            guard !woken.isEmpty else { return }
            waiting.removeAll { $0.condition == condition }
            for p in woken { p.signalled = true }
            ready.append(contentsOf: woken)
            if holder == nil { handOn() }
        }
    }

    public func makeCondition() -> any ClockCondition { Condition(clock: self) }

    private final class Condition: ClockCondition, @unchecked Sendable {
        private let clock: DiscreteEventClock
        private let userLock = NSLock()
        init(clock: DiscreteEventClock) { self.clock = clock }
        func lock() { userLock.lock() }
        func unlock() { userLock.unlock() }
        func broadcast() { clock.broadcast(ObjectIdentifier(self)) }
        func wait(until deadline: MonotonicInstant?) -> Bool {
            if let deadline, deadline <= clock.now() { return false }
            let signalled = clock.block(until: deadline, on: ObjectIdentifier(self)) { userLock.unlock() }
            userLock.lock()
            return signalled
        }
    }

    // MARK: Periodic runs

    public func repeating(everySeconds intervalSeconds: Double, name: String, _ body: @escaping @Sendable () -> Void) -> any ClockTimer {
        let timer = Timer(condition: makeCondition())
        let first = now().advanced(bySeconds: intervalSeconds)
        startThread(name: name) {
            var next = first
            while timer.waitUntilDue(next) {
                timer.run(body)
                next = next.advanced(bySeconds: intervalSeconds)
            }
        }
        return timer
    }

    private final class Timer: ClockTimer, @unchecked Sendable {
        private let condition: any ClockCondition
        private var cancelled = false
        /// Held while a run is under way, so `cancel` returns only after it.
        private let running = NSLock()
        init(condition: any ClockCondition) { self.condition = condition }

        /// Waits until `deadline`; false when cancelled.
        func waitUntilDue(_ deadline: MonotonicInstant) -> Bool {
            condition.withLock {
                while !cancelled {
                    if !condition.wait(until: deadline) { return true }
                }
                return false
            }
        }

        func run(_ body: () -> Void) {
            running.withLock {
                if condition.withLock({ !cancelled }) { body() }
            }
        }

        func cancel() {
            running.withLock {
                condition.withLock {
                    cancelled = true
                    condition.broadcast()
                }
            }
        }
    }
}
