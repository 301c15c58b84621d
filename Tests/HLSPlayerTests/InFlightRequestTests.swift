// The monitor's durations of the request in flight: it reads its clock before it takes the
// lock under which the transfer stamps its bytes, so a stamp may be later than its `now`.

import Foundation
import HLSCore
import HLSNet
import Testing
@testable import HLSPlayer

@Suite struct InFlightRequestTests {
    @Test func aByteStampedAfterTheMonitorsNow_isIdleZero_notNegative() {
        let start = MonotonicInstant(seconds: 10)
        var request = InFlightRequest(requestID: 1, purpose: .segment, startedAt: start, lastByteAt: start, token: CancellationToken())
        request.lastByteAt = MonotonicInstant(seconds: 12.0008)
        let now = MonotonicInstant(seconds: 12)
        #expect(request.idleSeconds(at: now) == 0)
        #expect(request.elapsedSeconds(at: now) == 2)
        #expect(request.idleSeconds(at: MonotonicInstant(seconds: 13.5008)) == 1.5)
        #expect(request.elapsedSeconds(at: MonotonicInstant(seconds: 9.999)) == 0)
    }
}
