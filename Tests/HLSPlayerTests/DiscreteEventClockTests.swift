import Foundation
import HLSCore
import Testing

@testable import HLSPlayer

/// The discrete-event clock's rule: one thread taking part runs at a time; time moves only when none can run,
/// to the earliest deadline; a broadcast wakes without moving time; ties go in the order the waits began.
@Suite struct DiscreteEventClockTests {
    /// What the threads saw, in the order they saw it.
    final class Journal: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func note(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    /// A value the threads share, guarded by a clock condition's lock.
    final class Shared<T>: @unchecked Sendable {
        var value: T
        init(_ value: T) { self.value = value }
    }

    static func at(_ seconds: Double) -> MonotonicInstant { MonotonicInstant(seconds: seconds) }

    @Test func timeJumpsToTheEarliestDeadline_onlyWhenEveryThreadWaits() {
        let clock = DiscreteEventClock()
        let journal = Journal()
        clock.takingPart {
            let done = clock.makeCondition()
            let finished = Shared(0)
            for (name, wake) in [("late", 5.0), ("early", 2.0), ("tied-first", 3.0), ("tied-second", 3.0)] {
                clock.startThread(name: name) {
                    clock.sleep(until: Self.at(wake))
                    journal.note("\(name)@\(clock.now().seconds)")
                    done.withLock {
                        finished.value += 1
                        done.broadcast()
                    }
                }
            }
            // The caller's own wait lets them run; it is woken by the last one, at its instant.
            done.withLock {
                while finished.value < 4 { _ = done.wait(until: nil) }
            }
            journal.note("caller@\(clock.now().seconds)")
        }
        #expect(journal.all == ["early@2.0", "tied-first@3.0", "tied-second@3.0", "late@5.0", "caller@5.0"])
    }

    @Test func broadcastWakesAtTheCurrentInstant_andATimeoutReportsItself() {
        let clock = DiscreteEventClock()
        let journal = Journal()
        clock.takingPart {
            let condition = clock.makeCondition()
            let flag = Shared(false)
            clock.startThread(name: "setter") {
                clock.sleep(until: Self.at(3))
                condition.withLock {
                    flag.value = true
                    condition.broadcast()
                }
            }
            condition.withLock {
                let woken = condition.wait(until: Self.at(10))
                journal.note("woken=\(woken) flag=\(flag.value) at \(clock.now().seconds)")
                let timedOut = !condition.wait(until: Self.at(4))
                journal.note("timedOut=\(timedOut) at \(clock.now().seconds)")
            }
        }
        #expect(journal.all == ["woken=true flag=true at 3.0", "timedOut=true at 4.0"])
    }

    @Test func repeatingRunsEveryInterval_andNotAfterCancel() {
        let clock = DiscreteEventClock()
        let journal = Journal()
        clock.takingPart {
            let timer = clock.repeating(everySeconds: 0.25, name: "tick") { journal.note("tick@\(clock.now().seconds)") }
            clock.sleep(until: Self.at(1)) // ties with the fourth tick: this wait began first, so it runs first
            timer.cancel()
            clock.sleep(until: Self.at(2))
            journal.note("end@\(clock.now().seconds)")
        }
        #expect(journal.all == ["tick@0.25", "tick@0.5", "tick@0.75", "end@2.0"])
    }

    /// Every thread taking part waits with no deadline: nothing in virtual time can wake them, so the clock stops
    /// the process (naming them) instead of hanging the test run.
    @Test func everyThreadWaitingWithoutADeadline_stopsRatherThanHangs() async {
        await #expect(processExitsWith: .failure) {
            let clock = DiscreteEventClock()
            clock.takingPart {
                let never = clock.makeCondition()
                never.withLock { _ = never.wait(until: nil) }
            }
        }
    }
}
