import Foundation
import HLSCore
import HLSPlayer
import Testing

@Suite struct ConfigurationTests {
    @Test func forwardBufferTarget_zeroIsAutomatic() {
        let c = PlayerConfiguration(url: URL(string: "http://127.0.0.1/x.m3u8")!)
        #expect(c.forwardBufferTargetSeconds == SessionCore.automaticForwardBufferSeconds)
    }

    @Test func forwardBufferTarget_neverBelowResumeThreshold() {
        // A 2 s target with a 4 s resume threshold would stop fetching before a stall could end.
        var c = PlayerConfiguration(url: URL(string: "http://127.0.0.1/x.m3u8")!)
        c.preferredForwardBufferDurationSeconds = 2
        #expect(c.forwardBufferTargetSeconds == c.playback.resumeBufferSeconds)
        c.preferredForwardBufferDurationSeconds = 12
        #expect(c.forwardBufferTargetSeconds == 12)
    }
}
