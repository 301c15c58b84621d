// Hostile numbers: each playlist number that overflowed the parser's or the player's arithmetic
// (a trap: SIGILL, exit 132, a log without a summary) is now an `outOfRange` PlaylistError naming
// its line and the PlaylistRanges rule, with a pair at the bound (accepted) and one past it
// (refused). The arithmetic below the parser saturates instead of trapping
// (docs/playlist-parsing.md "Numbers", docs/hardening.md).

import Foundation
import Testing
@testable import HLSCore

private let int64Max = "9223372036854775807"
/// 2^53 − 1.
private let bound = PlaylistRanges.maxExactInteger

/// The error `text` is refused with, or a test failure when it parses.
private func refused(_ text: String, limits: PlaylistLimits = .default) -> PlaylistError? {
    playlistError { () throws(PlaylistError) in try PlaylistParser.parse(text, baseURL: testBase, limits: limits) }
}

private func expectOutOfRange(_ e: PlaylistError?, line: Int, ruleContains: String, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(e?.kind == .outOfRange, "\(String(describing: e))", sourceLocation: sourceLocation)
    #expect(e?.lineNumber == line, "\(String(describing: e))", sourceLocation: sourceLocation)
    #expect(e?.rule.contains(ruleContains) == true, "\(String(describing: e?.rule))", sourceLocation: sourceLocation)
}

@Suite struct HostileNumberParserTests {
    // MARK: Media Sequence Numbers

    /// Before: `mediaSequence + skipped + segments.count` overflowed at the second segment (`hlsplay check` exit 132).
    @Test func mediaSequenceInt64Max_twoSegments_outOfRangeAtTheTag() {
        let e = refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(int64Max)\n#EXTINF:2,\na.ts\n#EXTINF:2,\nb.ts\n")
        expectOutOfRange(e, line: 3, ruleContains: "Media Sequence Number")
    }

    @Test func mediaSequence_nextNumberAtTheBound_accepted_pastIt_refusedAtTheSegment() throws {
        let head = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(bound - 1)\n#EXTINF:2,\na.ts\n"
        let m = try media(head)
        #expect(m.segments.map(\.mediaSequence) == [bound - 1]) // the next one, 2^53 − 1, still fits
        let e = refused(head + "#EXTINF:2,\nb.ts\n")
        expectOutOfRange(e, line: 7, ruleContains: "Media Sequence Number")
        expectOutOfRange(
            refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:\(bound + 1)\n"),
            line: 3, ruleContains: "Media Sequence Number")
        // Digits beyond Int64 are out of range too, not a syntax error.
        expectOutOfRange(
            refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MEDIA-SEQUENCE:99999999999999999999999\n"),
            line: 3, ruleContains: "Media Sequence Number")
    }

    /// Before: `discontinuitySequence + discontinuityCount` overflowed (exit 132).
    @Test func discontinuitySequenceInt64Max_outOfRange_boundPlusOneDiscontinuity_refused() throws {
        expectOutOfRange(
            refused(
                "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-DISCONTINUITY-SEQUENCE:\(int64Max)\n#EXTINF:2,\na.ts\n#EXT-X-DISCONTINUITY\n#EXTINF:2,\nb.ts\n"
            ),
            line: 3, ruleContains: "Discontinuity Sequence Number")
        let head = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-DISCONTINUITY-SEQUENCE:\(bound)\n#EXTINF:2,\na.ts\n"
        #expect(try media(head).segments.map(\.discontinuitySequence) == [bound])
        expectOutOfRange(refused(head + "#EXT-X-DISCONTINUITY\n#EXTINF:2,\nb.ts\n"), line: 8, ruleContains: "Discontinuity Sequence Number")
    }

    // MARK: Byte ranges

    /// Before: the implicit offset `po + pr.length` overflowed (exit 132).
    @Test func implicitByteRangeOffsetNearInt64Max_outOfRange() {
        let e = refused(
            "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\n#EXT-X-BYTERANGE:100@9223372036854775800\na.ts\n#EXTINF:2,\n#EXT-X-BYTERANGE:100\na.ts\n")
        expectOutOfRange(e, line: 4, ruleContains: "byte range")
    }

    @Test func byteRangeEnd_atTheBound_accepted_oneMore_refused_explicitAndImplicit() throws {
        let offset = bound - 200
        let head = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\n#EXT-X-BYTERANGE:100@\(offset)\na.ts\n"
        let m = try media(head + "#EXTINF:2,\n#EXT-X-BYTERANGE:100\na.ts\n")
        #expect(m.segments[1].byteRange == ByteRange(length: 100, offset: offset + 100)) // ends exactly at 2^53 − 1
        let implicit = refused(head + "#EXTINF:2,\n#EXT-X-BYTERANGE:101\na.ts\n")
        expectOutOfRange(implicit, line: 7, ruleContains: "byte range")
        #expect(implicit?.message.contains("implicit offset") == true)
        expectOutOfRange(
            refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:2,\n#EXT-X-BYTERANGE:101@\(bound - 100)\na.ts\n"),
            line: 4, ruleContains: "byte range")
        expectOutOfRange(
            refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-MAP:URI=\"i.mp4\",BYTERANGE=\"\(int64Max)@1\"\n"),
            line: 3, ruleContains: "byte range")
    }

    /// Before: the part's implicit offset `o + br.length` overflowed (exit 132).
    @Test func partByteRangeImplicitOffsetNearInt64Max_outOfRange() {
        let e = refused(
            "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PART-INF:PART-TARGET=0.5\n#EXT-X-PART:DURATION=0.5,URI=\"a.mp4\",BYTERANGE=\"100@9223372036854775800\"\n#EXT-X-PART:DURATION=0.5,URI=\"a.mp4\",BYTERANGE=\"100\"\n#EXTINF:1,\na.mp4\n"
        )
        expectOutOfRange(e, line: 4, ruleContains: "byte range")
        let atBound =
            "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PART-INF:PART-TARGET=0.5\n#EXT-X-PART:DURATION=0.5,URI=\"a.mp4\",BYTERANGE=\"100@\(bound - 200)\"\n"
        #expect(
            playlistError { () throws(PlaylistError) in
                try PlaylistParser.parse(atBound + "#EXT-X-PART:DURATION=0.5,URI=\"a.mp4\",BYTERANGE=\"100\"\n", baseURL: testBase)
            } == nil)
        expectOutOfRange(refused(atBound + "#EXT-X-PART:DURATION=0.5,URI=\"a.mp4\",BYTERANGE=\"101\"\n"), line: 5, ruleContains: "byte range")
    }

    @Test func preloadHintByteRange_startPlusLengthPastTheBound_outOfRange() {
        let e = refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"p.mp4\",BYTERANGE-START=\(bound),BYTERANGE-LENGTH=1\n")
        expectOutOfRange(e, line: 3, ruleContains: "byte range")
    }

    // MARK: EXT-X-SKIP

    /// Before: `mediaSequence + SKIPPED-SEGMENTS + count` overflowed (exit 132).
    @Test func skippedSegmentsInt64Max_refusedByMaxSegments_theSkippedCountWithTheListedOnes() {
        let head = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-SERVER-CONTROL:CAN-SKIP-UNTIL=12\n#EXT-X-MEDIA-SEQUENCE:10\n"
        let e = refused(head + "#EXT-X-SKIP:SKIPPED-SEGMENTS=\(int64Max)\n#EXTINF:2,\na.ts\n")
        #expect(e?.kind == .limitExceeded)
        #expect(e?.lineNumber == 5)
        #expect(e?.rule == "PlaylistLimits.maxSegments")
        // Skipped + listed is what the full playlist would list: at the limit passes, one more fails.
        let limits = PlaylistLimits(maxSegments: 3)
        let two = head + "#EXT-X-SKIP:SKIPPED-SEGMENTS=2\n#EXTINF:2,\na.ts\n"
        #expect(playlistError { () throws(PlaylistError) in try PlaylistParser.parse(two, baseURL: testBase, limits: limits) } == nil)
        let over = refused(two + "#EXTINF:2,\nb.ts\n", limits: limits)
        #expect(over?.kind == .limitExceeded)
        #expect(over?.lineNumber == 9)
    }

    // MARK: Durations

    /// Before: parsed, then 1e11 s reached the request-rate bound's seconds → Int64 nanoseconds (exit 132 while playing).
    @Test func extinfHuge_outOfRange_atTheBound_accepted() throws {
        expectOutOfRange(
            refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:100000000000.0,\na.ts\n#EXT-X-ENDLIST\n"), line: 3, ruleContains: "1000000 s")
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:1000000\n#EXTINF:1000000,\na.ts\n#EXT-X-ENDLIST\n")
        #expect(m.segments[0].durationSeconds == 1_000_000)
        expectOutOfRange(refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:1000000.001,\na.ts\n"), line: 3, ruleContains: "1000000 s")
    }

    /// Before: parsed, then a live reload delay of 1e10 s reached the monotonic-time conversion (exit 132 while playing).
    @Test func targetDuration1e10_outOfRange() {
        expectOutOfRange(refused("#EXTM3U\n#EXT-X-TARGETDURATION:10000000000\n#EXTINF:2,\na.ts\n"), line: 2, ruleContains: "1000000 s")
    }

    /// 400 digits: a Double reads it as +infinity, which every later conversion trapped on.
    @Test func durationsThatNoDoubleHolds_outOfRange() {
        let huge = "1" + String(repeating: "0", count: 400)
        expectOutOfRange(refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXTINF:\(huge),\na.ts\n"), line: 3, ruleContains: "1000000 s")
        expectOutOfRange(
            refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PART-INF:PART-TARGET=\(huge).5\n"), line: 3, ruleContains: "64-bit IEEE double")
        expectOutOfRange(
            refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-START:TIME-OFFSET=-\(huge)\n"), line: 3, ruleContains: "64-bit IEEE double")
    }

    @Test func partDurationAndPartTarget_pastOneDay_outOfRange() {
        expectOutOfRange(refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PART-INF:PART-TARGET=1000001\n"), line: 3, ruleContains: "1000000 s")
        expectOutOfRange(
            refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PART-INF:PART-TARGET=1\n#EXT-X-PART:DURATION=1000000.5,URI=\"p\"\n"),
            line: 4, ruleContains: "1000000 s")
    }

    @Test func holdBackAndDateRangeSpans_atTheBound_accepted_pastIt_outOfRange() throws {
        let m = try media(
            "#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-SERVER-CONTROL:HOLD-BACK=100000000000\n#EXT-X-DATERANGE:ID=\"a\",DURATION=100000000000\n")
        #expect(m.serverControl?.holdBackSeconds == PlaylistRanges.maxSpanSeconds)
        expectOutOfRange(
            refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-SERVER-CONTROL:PART-HOLD-BACK=100000000001\n"), line: 3, ruleContains: "HOLD-BACK")
        expectOutOfRange(
            refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-DATERANGE:ID=\"a\",PLANNED-DURATION=100000000000.5\n"),
            line: 3, ruleContains: "DATERANGE")
    }

    // MARK: Bit rates, resolution, reports

    /// Before: `k * 1000` overflowed (exit 132).
    @Test func bitrateTagInt64Max_outOfRange_atTheBound_accepted() throws {
        expectOutOfRange(
            refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-BITRATE:\(int64Max)\n#EXTINF:2,\na.ts\n"), line: 3, ruleContains: "bit rate")
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-BITRATE:\(bound / 1000)\n#EXTINF:2,\na.ts\n")
        #expect(m.segments[0].bitrateBps == bound / 1000 * 1000)
    }

    @Test func bandwidthAndResolution_pastTheirBounds_outOfRange() throws {
        let ok = try multivariant(
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=\(bound),AVERAGE-BANDWIDTH=\(bound),RESOLUTION=2147483647x2147483647\nv.m3u8\n")
        #expect(ok.variants[0].bandwidthBps == bound)
        expectOutOfRange(refused("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=\(bound + 1)\nv.m3u8\n"), line: 2, ruleContains: "bit rate")
        expectOutOfRange(
            refused("#EXTM3U\n#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1,AVERAGE-BANDWIDTH=\(int64Max),URI=\"i.m3u8\"\n"), line: 2,
            ruleContains: "bit rate")
        expectOutOfRange(refused("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,RESOLUTION=2147483648x1\nv.m3u8\n"), line: 2, ruleContains: "RESOLUTION")
        expectOutOfRange(refused("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=99999999999999999999\nv.m3u8\n"), line: 2, ruleContains: "decimal-integer")
    }

    @Test func renditionReportPositions_pastTheBound_outOfRange() {
        expectOutOfRange(
            refused("#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-RENDITION-REPORT:URI=\"r.m3u8\",LAST-MSN=\(int64Max),LAST-PART=0\n"),
            line: 3, ruleContains: "LAST-MSN")
    }
}
