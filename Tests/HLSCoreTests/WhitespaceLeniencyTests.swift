// Blanks (SPACE, TAB) where RFC 8216 allows none: each case inline, in pairs — accepted with a
// warning where the meaning is unambiguous, still rejected where it is not
// (policy: docs/playlist-parsing.md, "Whitespace").

import Foundation
import Testing
@testable import HLSCore

@Suite struct WhitespaceLeniencyTests {
    static let linesRule = "§4.1"
    static let attributeRule = "§4.2"

    /// The media playlist tail most cases share: one segment, ended.
    static let tail = "#EXTINF:4,\na.ts\n#EXT-X-ENDLIST\n"

    // MARK: around a tag's colon

    /// Shaka's `shaka-gap` fixture as a real packager wrote it: `#EXT-X-VERSION: 10`.
    @Test func versionWithSpaceAfterColon_acceptedWithWarning() throws {
        let m = try media(
            """
            #EXTM3U
            #EXT-X-VERSION: 10
            #EXT-X-TARGETDURATION:5
            #EXT-X-PLAYLIST-TYPE:VOD
            #EXT-X-GAP
            #EXTINF:4.004,
            1.ts
            #EXTINF:4.004,
            2.ts
            #EXT-X-ENDLIST
            """)
        #expect(m.version == 10)
        #expect(m.segments.map(\.gap) == [true, false])
        #expect(m.warnings.count == 1)
        #expect(m.warnings.first?.lineNumber == 2)
        #expect(m.warnings.first?.message.contains("#EXT-X-VERSION") == true)
        #expect(m.warnings.first?.rule?.contains(Self.linesRule) == true)
    }

    @Test func versionWithBlankInsideNumber_rejected() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-VERSION:1 0\n#EXT-X-TARGETDURATION:5\n" + Self.tail, baseURL: testBase)
        }
        #expect(e?.kind == .invalidAttributeValue)
        #expect(e?.lineNumber == 2)
    }

    @Test func tabAfterColonOfEveryValueTag_acceptedWithOneWarningCounted() throws {
        let m = try media(
            "#EXTM3U\n#EXT-X-TARGETDURATION:\t6\n#EXT-X-MEDIA-SEQUENCE: 5\n#EXT-X-DISCONTINUITY-SEQUENCE:  2\n"
                + "#EXT-X-PLAYLIST-TYPE: VOD\n#EXT-X-BITRATE: 800\n#EXT-X-PROGRAM-DATE-TIME: 2024-03-04T23:02:17.684Z\n" + Self.tail)
        #expect(m.targetDurationSeconds == 6)
        #expect(m.mediaSequence == 5)
        #expect(m.discontinuitySequence == 2)
        #expect(m.playlistType == .vod)
        #expect(m.segments[0].bitrateBps == 800_000)
        #expect(m.segments[0].programDateTime == Date(timeIntervalSince1970: 1_709_593_337.684))
        // One warning for the kind, at its first line, counting the other five lines.
        #expect(m.warnings.count == 1)
        #expect(m.warnings[0].lineNumber == 2)
        #expect(m.warnings[0].message.contains("5 more lines"))
    }

    @Test func playlistTypeWithBlankInsideValue_rejected() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-TARGETDURATION:5\n#EXT-X-PLAYLIST-TYPE:V OD\n" + Self.tail, baseURL: testBase)
        }
        #expect(e?.kind == .invalidAttributeValue)
        #expect(e?.lineNumber == 3)
    }

    @Test func spaceBeforeColon_acceptedWithWarning() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION :6\n#EXTINF :4,\na.ts\n#EXT-X-ENDLIST\n")
        #expect(m.targetDurationSeconds == 6)
        #expect(m.segments.count == 1)
        #expect(m.warnings.map(\.lineNumber) == [2])
        #expect(m.warnings[0].message.contains("before the ':' of #EXT-X-TARGETDURATION"))
        #expect(m.warnings[0].message.contains("1 more line"))
    }

    /// A blank inside the tag name makes another (unknown) tag: EXT-X-TARGETDURATION is then missing.
    @Test func blankInsideTagName_notTheTag_rejected() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X- TARGETDURATION:6\n" + Self.tail, baseURL: testBase)
        }
        #expect(e?.kind == .missingRequiredTag)
    }

    /// A blank where the colon should be is not read as a colon: the tag is kept as unknown,
    /// with a warning that says why (here EXT-X-ENDLIST is then not in force: the stream stays live).
    @Test func tagFollowedByBlankInsteadOfColon_unknownWithWarning() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:6\n#EXTINF:4,\na.ts\n#EXT-X-ENDLIST now\n")
        #expect(!m.endList)
        #expect(m.unknownTags.map(\.line) == ["#EXT-X-ENDLIST now"])
        #expect(m.warnings.map(\.lineNumber) == [5])
        #expect(m.warnings[0].message.contains("#EXT-X-ENDLIST"))
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-TARGETDURATION 6\n" + Self.tail, baseURL: testBase)
        }
        #expect(e?.kind == .missingRequiredTag)
    }

    // MARK: at the ends of a line

    @Test func trailingAndLeadingBlanks_acceptedWithOneWarning() throws {
        let m = try media("#EXTM3U \n#EXT-X-TARGETDURATION:6 \t\n  #EXTINF:4,\n\ta.ts  \n#EXT-X-ENDLIST\n")
        #expect(m.targetDurationSeconds == 6)
        #expect(m.segments.map(\.uri.absoluteString) == ["http://example.com/path/a.ts"])
        #expect(m.warnings.count == 1)
        #expect(m.warnings[0].lineNumber == 1)
        #expect(m.warnings[0].rule?.contains(Self.linesRule) == true)
        #expect(m.warnings[0].message.contains("3 more lines"))
    }

    /// An EXTINF title is free text, blanks included; a comment line is not read at all; a line of
    /// blanks only is a blank line (RFC 8216 §4.1: blank lines are ignored): none of them warns.
    @Test func blanksInTitlesCommentsAndBlankLines_silent() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:6\n# a comment with blanks \t\n \t \n#EXTINF:4,\ttitle \t\na.ts\n#EXT-X-ENDLIST\n")
        #expect(m.segments[0].title == "title")
        #expect(m.warnings.isEmpty)
    }

    /// NO-BREAK SPACE is not a blank: it is not trimmed, and the number it precedes is not a number.
    @Test func noBreakSpaceAfterColon_rejected() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-TARGETDURATION:\u{00A0}6\n" + Self.tail, baseURL: testBase)
        }
        #expect(e?.kind == .invalidAttributeValue)
        #expect(e?.lineNumber == 2)
    }

    @Test func crlfWithTrailingBlank_warnsForTheBlankOnly() throws {
        let m = try media("#EXTM3U\r\n#EXT-X-TARGETDURATION:6 \r\n#EXTINF:4,\r\na.ts\r\n#EXT-X-ENDLIST\r\n")
        #expect(m.warnings.map(\.lineNumber) == [2])
        #expect(!m.warnings[0].message.contains("more line"))
    }

    /// A 1,000-segment playlist with a trailing blank on every line gets one warning, not a thousand.
    @Test func blanksOnEveryLine_oneWarningWithCount() throws {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:6\n"
        for i in 0..<1000 { text += "#EXTINF:4, \ns\(i).ts \n" }
        let m = try media(text + "#EXT-X-ENDLIST\n")
        #expect(m.segments.count == 1000)
        #expect(m.warnings.count == 1)
        #expect(m.warnings[0].lineNumber == 4)
        #expect(m.warnings[0].message.contains("999 more lines"))
    }

    // MARK: attribute lists

    @Test func blanksAroundEqualsAndCommas_acceptedWithWarning() throws {
        let mv = try multivariant(
            """
            #EXTM3U
            #EXT-X-STREAM-INF: BANDWIDTH = 1280000 , RESOLUTION= 1280x720,CODECS = "avc1.4d401f, mp4a.40.2" ,FRAME-RATE= 29.970
            v.m3u8
            """)
        let v = try #require(mv.variants.first)
        #expect(v.bandwidthBps == 1_280_000)
        #expect(v.resolution == Resolution(width: 1280, height: 720))
        #expect(v.codecs == ["avc1.4d401f", "mp4a.40.2"])
        #expect(v.frameRate == 29.97)
        #expect(mv.warnings.map(\.lineNumber) == [2, 2])
        #expect(mv.warnings.contains { $0.rule?.contains(Self.attributeRule) == true && $0.message.contains("EXT-X-STREAM-INF") })
        #expect(mv.warnings.contains { $0.rule?.contains(Self.linesRule) == true && $0.message.contains("after '#EXT-X-STREAM-INF:'") })
    }

    /// The comma is the separator: `A=1 B=2` is not two attributes with a blank between them.
    @Test func blankInsteadOfComma_rejected() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1280000 RESOLUTION=1280x720\nv.m3u8\n", baseURL: testBase)
        }
        #expect(e?.kind == .syntax)
        #expect(e?.lineNumber == 2)
        #expect(e?.message.contains("','") == true)
    }

    @Test func blankInsideAttributeName_rejected() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-STREAM-INF:BAND WIDTH=1\nv.m3u8\n", baseURL: testBase)
        }
        #expect(e?.kind == .syntax)
    }

    @Test func blankInsideNumberOrResolution_rejected() {
        let number = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1 280 000\nv.m3u8\n", baseURL: testBase)
        }
        #expect(number?.kind == .invalidAttributeValue)
        let resolution = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=1280 x 720\nv.m3u8\n", baseURL: testBase)
        }
        #expect(resolution?.kind == .invalidAttributeValue)
    }

    @Test func signedDecimalWithSurroundingBlanks_acceptedWithWarning() throws {
        let m = try media("#EXTM3U\n#EXT-X-START:TIME-OFFSET= -12.5 ,PRECISE=YES\n#EXT-X-TARGETDURATION:5\n" + Self.tail)
        #expect(m.start == StartPoint(timeOffsetSeconds: -12.5, precise: true))
        #expect(m.warnings.map(\.lineNumber) == [2])
    }

    @Test func blankBetweenSignAndDigits_rejected() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-START:TIME-OFFSET=- 12.5\n#EXT-X-TARGETDURATION:5\n" + Self.tail, baseURL: testBase)
        }
        #expect(e?.kind == .invalidAttributeValue)
    }

    /// A quoted-string is taken as written, blanks included, without a warning.
    @Test func blanksInsideQuotedString_keptSilently() throws {
        let mv = try multivariant(
            "#EXTM3U\n#EXT-X-SESSION-DATA:DATA-ID=\"com.example.title\",VALUE=\" padded \"\n#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n")
        #expect(mv.sessionData.first?.value == " padded ")
        #expect(mv.warnings.isEmpty)
    }

    // MARK: EXTINF and BYTERANGE values

    @Test func extinfDurationWithBlanks_acceptedWithWarning() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF: 9.5 ,title\na.ts\n#EXT-X-ENDLIST\n")
        #expect(m.segments[0].durationSeconds == 9.5)
        #expect(m.segments[0].title == "title")
        #expect(m.warnings.map(\.lineNumber) == [3])
        #expect(m.warnings[0].message.contains("EXTINF duration"))
    }

    @Test func extinfDurationWithBlankInside_rejected() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:9 .5,\na.ts\n", baseURL: testBase)
        }
        #expect(e?.kind == .invalidAttributeValue)
        #expect(e?.lineNumber == 3)
    }

    @Test func byteRangeWithBlanksAroundAt_acceptedWithWarning() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-BYTERANGE: 1000 @ 200\n#EXTINF:4,\na.ts\n#EXT-X-ENDLIST\n")
        #expect(m.segments[0].byteRange == ByteRange(length: 1000, offset: 200))
        #expect(m.warnings.map(\.lineNumber) == [3, 3])
    }

    @Test func byteRangeWithBlankInsideNumber_rejected() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-BYTERANGE:10 00@0\n#EXTINF:4,\na.ts\n", baseURL: testBase)
        }
        #expect(e?.kind == .invalidAttributeValue)
        #expect(e?.lineNumber == 3)
    }
}
