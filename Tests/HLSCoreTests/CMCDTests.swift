import Foundation
import Testing
@testable import HLSCore

@Suite struct CMCDTests {
    func sample() -> CMCDData {
        var d = CMCDData()
        d.encodedBitrateKbps = 3200
        d.bufferLengthMs = CMCDData.bufferLengthMs(seconds: 21.337)
        d.contentID = "content"
        d.objectDurationMs = 2000
        d.measuredThroughputKbps = CMCDData.throughputKbps(bps: 25_444_000)
        d.objectType = .muxed
        d.sessionID = "6e2fb550-c457-11e9-bb97-0800200c9a66"
        d.streamType = "v"
        d.topBitrateKbps = 7225
        return d
    }

    @Test func payload_keysInAlphabeticalOrder_roundedToSpecGranularity() {
        #expect(
            sample().payload == #"bl=21300,br=3200,cid="content",d=2000,mtp=25400,ot=av,sf=h,sid="6e2fb550-c457-11e9-bb97-0800200c9a66",st=v,tb=7225"#
        )
    }

    @Test func booleans_appearAsBareKeysOnlyWhenTrue() {
        var d = CMCDData()
        #expect(d.payload == "sf=h")
        d.startup = true
        d.bufferStarvation = true
        #expect(d.payload == "bs,sf=h,su")
    }

    @Test func headers_splitIntoTheFourShards() {
        var d = sample()
        d.startup = true
        d.bufferStarvation = true
        let h = Dictionary(uniqueKeysWithValues: d.headers.map { ($0.name, $0.value) })
        #expect(h["CMCD-Object"] == "br=3200,d=2000,ot=av,tb=7225")
        #expect(h["CMCD-Request"] == "bl=21300,mtp=25400,su")
        #expect(h["CMCD-Session"] == #"cid="content",sf=h,sid="6e2fb550-c457-11e9-bb97-0800200c9a66",st=v"#)
        #expect(h["CMCD-Status"] == "bs")
    }

    @Test func deadline_isARequestKey_afterD_roundedLikeTheBufferLength() {
        var d = sample()
        d.deadlineMs = CMCDData.bufferLengthMs(seconds: 4.26)
        #expect(d.payload.contains("d=2000,dl=4300,mtp="), "\(d.payload)")
        let h = Dictionary(uniqueKeysWithValues: d.headers.map { ($0.name, $0.value) })
        #expect(h["CMCD-Request"] == "bl=21300,dl=4300,mtp=25400")
    }

    @Test func query_isPercentEncodedAndAppendedToAnExistingQuery() {
        var d = CMCDData()
        d.contentID = "a b"
        let url = d.adding(to: URL(string: "http://127.0.0.1/v1/seg.ts?token=x")!)
        #expect(url.absoluteString == "http://127.0.0.1/v1/seg.ts?token=x&CMCD=cid%3D%22a%20b%22%2Csf%3Dh")
        let plain = d.adding(to: URL(string: "http://127.0.0.1/v1/seg.ts")!)
        #expect(plain.query == "CMCD=cid%3D%22a%20b%22%2Csf%3Dh")
    }

    @Test func rounding_boundaryPairs() {
        #expect(CMCDData.bufferLengthMs(seconds: 0.149) == 100)
        #expect(CMCDData.bufferLengthMs(seconds: 0.15) == 200)
        #expect(CMCDData.throughputKbps(bps: 149_999) == 100)
        #expect(CMCDData.throughputKbps(bps: 150_000) == 200)
    }
}

@Suite struct URLRedactionTests {
    @Test func queryValuesAndUserinfo_redacted_namesAndPathKept() {
        let url = URL(string: "https://alice:secret@cdn.example/live/seg_1.ts?token=abc123&exp=99&flag#frag")!
        #expect(URLRedaction.redacted(url) == "https://REDACTED@cdn.example/live/seg_1.ts?token=REDACTED&exp=REDACTED&flag")
    }

    @Test func plainURL_unchanged() {
        let url = URL(string: "http://127.0.0.1:8080/v1/prog.m3u8")!
        #expect(URLRedaction.redacted(url) == url.absoluteString)
    }
}
