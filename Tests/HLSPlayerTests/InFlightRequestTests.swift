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
        let info = InFlightRequestInfo(
            requestID: 1, fetchID: 1, purpose: .segment, url: "http://127.0.0.1/s.ts", mediaSequence: 0, track: nil, rungBitrateBps: nil)
        var request = InFlightRequest(info: info, startedAt: start, lastByteAt: start, token: CancellationToken())
        request.lastByteAt = MonotonicInstant(seconds: 12.0008)
        let now = MonotonicInstant(seconds: 12)
        #expect(request.idleSeconds(at: now) == 0)
        #expect(request.elapsedSeconds(at: now) == 2)
        #expect(request.idleSeconds(at: MonotonicInstant(seconds: 13.5008)) == 1.5)
        #expect(request.elapsedSeconds(at: MonotonicInstant(seconds: 9.999)) == 0)
    }

    /// The monitor's cut and the abort that carries it out name the same judgement, both ways.
    @Test func abortFromTheCoresCut_roundTrips() {
        for cancel in [InFlightCancel.wedged, .overSelected, .abrAbandoned, .trickleReRequest, .trickleFailed] {
            #expect(InFlightRequest.Abort(cancel, failure: "slow").inFlightCancel == cancel)
        }
        #expect(InFlightRequest.Abort(.trickleFailed, failure: "too slow") == .trickleFailed("too slow"))
        #expect(InFlightRequest.Abort(.wedged, failure: "ignored") == .wedged)
        #expect(InFlightRequest.Abort.liveResync.inFlightCancel == nil, "a live resync is the shell's, not the core's")
    }
}
