import Foundation
import HLSNet
import Testing

/// `CancellationToken.onCancel`: how a loader that waits on a condition is woken by a cancel.
@Suite struct CancellationTokenTests {
    final class Count: @unchecked Sendable {
        private let lock = NSLock()
        private var n = 0
        func add() { lock.withLock { n += 1 } }
        var value: Int { lock.withLock { n } }
    }

    @Test func onCancel_runsOnceAtTheCancel_andAtOnceWhenAlreadyCancelled() {
        let token = CancellationToken()
        let before = Count()
        token.onCancel { before.add() }
        #expect(before.value == 0, "not before the cancel")
        token.cancel()
        token.cancel()
        #expect(before.value == 1, "once, however often it is cancelled")
        #expect(token.isCancelled)
        let after = Count()
        token.onCancel { after.add() }
        #expect(after.value == 1, "registered after the cancel: run at once")
    }
}
