import Testing

@testable import HLSCore

/// The records of a cut-short request, one rule for both shells: the shell's wire facts survive, the reason is the rule's.
@Suite struct CutShortTests {
    /// A real shell's record of an attempt cut mid-body: status line, bytes, timings, version, aborted.
    static func realWire() -> RequestEnd {
        var end = RequestEnd(
            requestID: 7, url: "http://127.0.0.1/v2/s3.ts", purpose: .segment, status: 200, bytes: 51_200, ok: false,
            connectionReused: true,
            timings: TimingsRecord(nameLookupSeconds: 0, connectSeconds: 0, tlsSeconds: 0, firstByteSeconds: 0.04, totalSeconds: 2.5),
            errorKind: .cancelled, errorMessage: "cancelled after 51200 body bytes")
        end.aborted = true
        end.httpVersion = "HTTP/1.1"
        return end
    }

    @Test func segmentCancel_keepsTheWireFacts_andSaysWhyByTheRule() {
        let end = CutShort.monitorCancelled(.overSelected).requestEnd(Self.realWire())
        #expect(end.status == 200)
        #expect(end.bytes == 51_200)
        #expect(end.timings?.totalSeconds == 2.5)
        #expect(end.aborted == true)
        #expect(end.httpVersion == "HTTP/1.1")
        #expect(end.connectionReused == true)
        #expect(end.ok == false)
        #expect(end.errorKind == .cancelled)
        #expect(end.cancelReason == .overSelected)
        #expect(end.errorMessage == "abandoned: over-selected")
    }

    @Test func sessionStopped_isACancelForTheSessionsEnd_inTheSameWordsFromBothShells() {
        let virtual = RequestEnd(requestID: 9, url: "v1/segment-4", purpose: .segment, status: nil, bytes: 8_000, ok: false)
        let (real, simulated) = (CutShort.sessionStopped.requestEnd(Self.realWire()), CutShort.sessionStopped.requestEnd(virtual))
        for end in [real, simulated] {
            #expect(end.ok == false)
            #expect(end.errorKind == .cancelled)
            #expect(end.cancelReason == .sessionStopping)
            #expect(end.errorMessage == "cancelled: the session stopped")
        }
        // What went over the wire stays each shell's own.
        #expect(real.bytes == 51_200 && real.status == 200 && real.aborted == true)
        #expect(simulated.bytes == 8_000 && simulated.status == nil)
    }

    @Test func sameCut_sameRecord_whateverTheShellMeasured() {
        // A virtual shell has no status, timings or version: everything the rule writes is the same.
        let virtual = RequestEnd(requestID: 7, url: "http://127.0.0.1/v2/s3.ts", purpose: .segment, status: nil, bytes: 51_200, ok: false)
        for reason in [InFlightCancel.wedged, .overSelected, .abrAbandoned] {
            let (a, b) = (CutShort.monitorCancelled(reason).requestEnd(Self.realWire()), CutShort.monitorCancelled(reason).requestEnd(virtual))
            #expect(a.errorKind == b.errorKind && a.errorMessage == b.errorMessage && a.cancelReason == b.cancelReason, "\(reason)")
            #expect(a.cancelReason == reason.requestCancelReason)
        }
    }

    @Test func wedgedPlaylist_reRequested_isATransferTimeout_notACancel() {
        var wire = Self.realWire()
        wire.purpose = .mediaPlaylist
        wire.cancelReason = .wedged
        let end = CutShort.playlistWedgeReRequested.requestEnd(wire)
        #expect(end.errorKind == .transferTimeout)
        #expect(end.cancelReason == nil, "cancelReason goes with errorKind cancelled")
        #expect(end.errorMessage == "no byte for the wedge window (byte-progress monitor); re-requested")
        let failed = CutShort.playlistWedgeFailed(LoadError(kind: .firstByteTimeout, url: wire.url, message: "no first byte")).requestEnd(wire)
        #expect(failed.errorKind == .firstByteTimeout)
        #expect(failed.errorMessage == "no first byte")
    }

    @Test func immediateRetry_hasNoBackoff() {
        #expect(
            CutShort.immediateRetry(requestID: 3, url: "u", attemptsMade: 0)
                == RetryScheduled(requestID: 3, url: "u", attemptsMade: 0, delaySeconds: 0, errorKind: .transferTimeout))
    }
}
