// Fatal constraints within one tag (one inline case each), and the ISO 8601
// reader behind EXT-X-PROGRAM-DATE-TIME and EXT-X-DATERANGE.

import Foundation
import Testing
@testable import HLSCore

struct TagConstraintTests {
    static let master = "#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n"
    static let mediaHead = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n"

    @Test(arguments: [
        (
            "SESSION-DATA with VALUE and URI", "#EXTM3U\n#EXT-X-SESSION-DATA:DATA-ID=\"a\",VALUE=\"x\",URI=\"u\"\n" + master,
            PlaylistError.Kind.constraintViolation
        ),
        ("SESSION-DATA with neither", "#EXTM3U\n#EXT-X-SESSION-DATA:DATA-ID=\"a\"\n" + master, .constraintViolation),
        (
            "CLOSED-CAPTIONS rendition with URI",
            "#EXTM3U\n#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID=\"c\",NAME=\"n\",INSTREAM-ID=\"CC1\",URI=\"x\"\n" + master, .constraintViolation
        ),
        (
            "CLOSED-CAPTIONS rendition without INSTREAM-ID", "#EXTM3U\n#EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID=\"c\",NAME=\"n\"\n" + master,
            .missingRequiredAttribute
        ),
        (
            "DEFAULT=YES with AUTOSELECT=NO", "#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"n\",DEFAULT=YES,AUTOSELECT=NO\n" + master,
            .constraintViolation
        ),
        ("FORCED on audio", "#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"n\",FORCED=YES\n" + master, .constraintViolation),
        ("unknown rendition TYPE", "#EXTM3U\n#EXT-X-MEDIA:TYPE=TEXT,GROUP-ID=\"a\",NAME=\"n\"\n" + master, .invalidAttributeValue),
        ("SESSION-KEY METHOD=NONE", "#EXTM3U\n#EXT-X-SESSION-KEY:METHOD=NONE\n" + master, .invalidAttributeValue),
        ("KEY AES-128 without URI", mediaHead + "#EXT-X-KEY:METHOD=AES-128\n#EXTINF:1,\na.ts\n", .missingRequiredAttribute),
        (
            "IV over 128 bits", mediaHead + "#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x0102030405060708090A0B0C0D0E0F1011\n#EXTINF:1,\na.ts\n",
            .invalidAttributeValue
        ),
        (
            "DATERANGE END-DATE before START-DATE",
            mediaHead + "#EXT-X-DATERANGE:ID=\"d\",START-DATE=\"2020-01-01T00:00:10Z\",END-DATE=\"2020-01-01T00:00:00Z\"\n#EXTINF:1,\na.ts\n",
            .constraintViolation
        ),
        (
            "DATERANGE END-ON-NEXT without CLASS",
            mediaHead + "#EXT-X-DATERANGE:ID=\"d\",START-DATE=\"2020-01-01T00:00:00Z\",END-ON-NEXT=YES\n#EXTINF:1,\na.ts\n", .constraintViolation
        ),
        ("DATERANGE without ID", mediaHead + "#EXT-X-DATERANGE:START-DATE=\"2020-01-01T00:00:00Z\"\n#EXTINF:1,\na.ts\n", .missingRequiredAttribute),
        (
            "CAN-SKIP-DATERANGES without CAN-SKIP-UNTIL", mediaHead + "#EXT-X-SERVER-CONTROL:CAN-SKIP-DATERANGES=YES\n#EXTINF:1,\na.ts\n",
            .constraintViolation
        ),
        ("PLAYLIST-TYPE LIVE", mediaHead + "#EXT-X-PLAYLIST-TYPE:LIVE\n#EXTINF:1,\na.ts\n", .invalidAttributeValue),
        ("negative EXTINF", mediaHead + "#EXTINF:-1,\na.ts\n", .invalidAttributeValue),
        (
            "YES/NO attribute with another value", mediaHead + "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=MAYBE\n#EXTINF:1,\na.ts\n",
            .invalidAttributeValue
        ),
        ("quoted BANDWIDTH", "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=\"1\"\nv.m3u8\n", .invalidAttributeValue),
        ("bad RESOLUTION", "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=1920*1080\nv.m3u8\n", .invalidAttributeValue),
        ("bad PROGRAM-DATE-TIME", mediaHead + "#EXT-X-PROGRAM-DATE-TIME:yesterday\n#EXTINF:1,\na.ts\n", .invalidAttributeValue),
        ("PRELOAD-HINT without URI", mediaHead + "#EXTINF:1,\na.ts\n#EXT-X-PRELOAD-HINT:TYPE=PART\n", .missingRequiredAttribute),
        ("PART without DURATION", mediaHead + "#EXT-X-PART-INF:PART-TARGET=1\n#EXT-X-PART:URI=\"p\"\n", .missingRequiredAttribute),
        ("VERSION twice", "#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-VERSION:3\n" + master, .constraintViolation),
        ("INDEPENDENT-SEGMENTS twice", "#EXTM3U\n#EXT-X-INDEPENDENT-SEGMENTS\n#EXT-X-INDEPENDENT-SEGMENTS\n" + master, .constraintViolation),
        (
            "DISCONTINUITY-SEQUENCE after DISCONTINUITY", mediaHead + "#EXT-X-DISCONTINUITY\n#EXT-X-DISCONTINUITY-SEQUENCE:3\n#EXTINF:1,\na.ts\n",
            .constraintViolation
        )
    ])
    func fatal(_ name: String, _ text: String, _ kind: PlaylistError.Kind) {
        let e = playlistError { () throws(PlaylistError) in try PlaylistParser.parse(text, baseURL: testBase) }
        #expect(e?.kind == kind, "\(name): \(e.map(\.description) ?? "parsed")")
        #expect((e?.lineNumber ?? 0) > 0, "\(name) names a line")
        #expect(e?.rule.isEmpty == false, "\(name) names a rule")
    }
}

struct ISO8601Tests {
    func ms(_ s: String) -> Int? {
        ISO8601.parse(s).map { Int(($0.0.timeIntervalSince1970 * 1000).rounded()) }
    }

    @Test func zulu() { #expect(ms("2019-02-14T02:13:36.106Z") == 1550110416106) }
    @Test func offsetWithColon() { #expect(ms("2016-06-22T09:20:16.166-04:00") == 1466601616166) }
    @Test func offsetWithoutColon() { #expect(ms("2016-06-22T15:20:16.166+0200") == 1466601616166) }
    @Test func offsetHoursOnly() { #expect(ms("2016-06-22T15:20:16.166+02") == 1466601616166) }
    @Test func noFraction() { #expect(ms("2014-08-13T13:36:33Z") == 1407936993000) }
    @Test func manyFractionDigits() { #expect(ms("2021-11-10T03:25:49.0151234Z") == 1636514749015) }
    @Test func leapDay() { #expect(ms("2024-02-29T00:00:00Z") == 1709164800000) }
    @Test func beforeEpoch() { #expect(ms("1969-12-31T23:59:59Z") == -1000) }
    @Test func noZone_isUTCButFlagged() {
        let r = ISO8601.parse("2014-08-13T13:36:33")
        #expect(r?.1 == false)
        #expect(r.map { Int($0.0.timeIntervalSince1970) } == 1407936993)
    }
    @Test func noZone_warnsInPlaylist() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-PROGRAM-DATE-TIME:2014-08-13T13:36:33\n#EXTINF:1,\na.ts\n")
        #expect(m.warnings.map(\.lineNumber) == [3])
    }
    @Test(arguments: [
        "2014-13-01T00:00:00Z", "2014-08-13", "2014-08-13T13:36Z", "2014-08-13T13:36:33.Z", "2014-08-13T13:36:33Zjunk", "2014-08-13T13:36:33+5"
    ])
    func invalid(_ s: String) { #expect(ISO8601.parse(s) == nil) }
}
