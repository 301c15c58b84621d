// Hostile and edge cases, each a named test with its playlist inline, plus a
// just-under / over pair for every limit in PlaylistLimits.

import Foundation
import Testing
@testable import HLSCore

let simpleVOD = """
    #EXTM3U
    #EXT-X-TARGETDURATION:10
    #EXTINF:9.009,
    a.ts
    #EXTINF:9.009,first title
    b.ts
    #EXT-X-ENDLIST

    """

struct PlaylistParserTests {
    // MARK: text-level quirks

    @Test func crlfLineEnds_parseLikeLF() throws {
        let m = try media(simpleVOD.replacingOccurrences(of: "\n", with: "\r\n"))
        #expect(m.segments.map(\.uri.absoluteString) == ["http://example.com/path/a.ts", "http://example.com/path/b.ts"])
        #expect(m.segments[1].title == "first title")
        #expect(m.warnings.isEmpty)
    }

    /// Blank lines are ignored (RFC 8216 §4.1); blanks at the ends of a tag or URI line are dropped
    /// with one warning for all such lines (the EXTINF title's TAB is free text: no warning).
    @Test func blankLinesIgnored_trailingWhitespaceDroppedWithOneWarning() throws {
        let m = try media("#EXTM3U\n\n#EXT-X-TARGETDURATION:10  \n\n#EXTINF:10,\t\n\n  a.ts \t\n\n")
        #expect(m.segments.count == 1)
        #expect(m.segments[0].uri.absoluteString == "http://example.com/path/a.ts")
        #expect(m.warnings.map(\.lineNumber) == [3])
        #expect(m.warnings.first?.message.contains("the same on 1 more line") == true)
    }

    /// The parser's shortcut for a bare file name resolves exactly as RFC 3986 resolution does.
    @Test func bareFileNameShortcut_resolvesLikeFoundation() throws {
        let bases = [
            "http://example.com/path/playlist.m3u8", "https://h:8443/a/b/c/p.m3u8?token=x&y=1#frag",
            "http://h/p.m3u8", "http://h/", "http://h", "http://h?x=1", "file:///tmp/dir/p.m3u8",
            "http://h/a/../b/p.m3u8", "http://h/a/./p.m3u8", "http://user:pw@h/x%20y/p.m3u8", "http://h//double/p.m3u8"
        ]
        let references = ["a.ts", "seg_00042.ts", "x-y~z.m4s", "...", ".hidden", "noext"]
        for b in bases {
            let base = try #require(URL(string: b))
            for r in references {
                let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n\(r)\n", base: base)
                #expect(m.segments[0].uri == URL(string: r, relativeTo: base)?.absoluteURL, "\(r) against \(b)")
                #expect(m.segments[0].uri.absoluteString == URL(string: r, relativeTo: base)?.absoluteString, "\(r) against \(b)")
            }
        }
    }

    @Test func missingFinalNewline_accepted() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\na.ts\n#EXT-X-ENDLIST")
        #expect(m.endList)
    }

    @Test func commentBeforeHeader_warning() throws {
        let m = try media("# produced by a tool\n#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\na.ts")
        #expect(m.warnings.map(\.lineNumber) == [1])
    }

    @Test func noHeader_fatal() {
        let e = playlistError { () throws(PlaylistError) in try PlaylistParser.parse("#EXT-X-TARGETDURATION:10\n#EXTINF:10,\na.ts", baseURL: testBase)
        }
        #expect(e?.kind == .missingHeader)
        #expect(e?.lineNumber == 1)
        #expect(e?.rule.contains("§4.3.1.1") == true)
    }

    @Test func headerGluedToTag_fatal() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U#EXT-X-STREAM-INF:BANDWIDTH=1\na.m3u8", baseURL: testBase)
        }
        #expect(e?.kind == .missingHeader)
    }

    @Test func nonUTF8_fatalWithLine() {
        var d = Data("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,caf".utf8)
        d.append(contentsOf: [0xE9, 0x0A]) // Latin-1 é
        d.append(contentsOf: Data("a.ts\n".utf8))
        let e = playlistError { () throws(PlaylistError) in try PlaylistParser.parse(data: d, baseURL: testBase) }
        #expect(e?.kind == .notUTF8)
        #expect(e?.lineNumber == 3)
    }

    @Test func byteOrderMark_fatal() {
        let d = Data([0xEF, 0xBB, 0xBF]) + Data(simpleVOD.utf8)
        #expect(playlistError { () throws(PlaylistError) in try PlaylistParser.parse(data: d, baseURL: testBase) }?.kind == .notUTF8)
    }

    @Test func utf8Data_parses() throws {
        let p = try PlaylistParser.parse(data: Data(simpleVOD.utf8), baseURL: testBase)
        guard case .media(let m) = p else { Issue.record("not media"); return }
        #expect(m.segments.count == 2)
    }

    // MARK: structure

    @Test func missingURIAfterEXTINF_atEnd_fatal() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\na.ts\n#EXTINF:10,\n", baseURL: testBase)
        }
        #expect(e?.kind == .missingURI)
        #expect(e?.lineNumber == 5)
    }

    @Test func missingURIAfterEXTINF_followedByEXTINF_fatal() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n#EXTINF:10,\na.ts\n", baseURL: testBase)
        }
        #expect(e?.kind == .missingURI)
        #expect(e?.lineNumber == 3)
    }

    @Test func uriWithoutEXTINF_fatal() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\na.ts\nb.ts\n", baseURL: testBase)
        }
        #expect(e?.kind == .missingRequiredTag)
        #expect(e?.lineNumber == 5)
    }

    @Test func streamInfWithoutURI_fatal() {
        let e = playlistError { () throws(PlaylistError) in try PlaylistParser.parse("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\n", baseURL: testBase) }
        #expect(e?.kind == .missingURI)
        #expect(e?.lineNumber == 2)
    }

    @Test func bandwidthMissing_fatal() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-STREAM-INF:CODECS=\"avc1\"\na.m3u8\n", baseURL: testBase)
        }
        #expect(e?.kind == .missingRequiredAttribute)
        #expect(e?.rule.contains("BANDWIDTH") == true)
    }

    @Test func mixedKinds_fatal() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\na.m3u8\n#EXTINF:10,\nb.ts\n", baseURL: testBase)
        }
        #expect(e?.kind == .mixedPlaylistKinds)
        #expect(e?.lineNumber == 4)
    }

    @Test func missingTargetDuration_fatal() {
        let e = playlistError { () throws(PlaylistError) in try PlaylistParser.parse("#EXTM3U\n#EXTINF:10,\na.ts\n", baseURL: testBase) }
        #expect(e?.kind == .missingRequiredTag)
        #expect(e?.rule == "RFC 8216 §4.3.3.1: EXT-X-TARGETDURATION is REQUIRED")
    }

    @Test func targetDurationNaN_fatal() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-TARGETDURATION:NaN\n#EXTINF:10,\na.ts\n", baseURL: testBase)
        }
        #expect(e?.kind == .invalidAttributeValue)
        #expect(e?.lineNumber == 2)
    }

    @Test func segmentLongerThanTarget_warning() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10.5,\na.ts\n#EXTINF:10.4,\nb.ts\n")
        #expect(m.warnings.map(\.lineNumber) == [3]) // 10.5 rounds to 11 > 10; 10.4 rounds to 10
    }

    @Test func commalessEXTINF_warning() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10\na.ts\n")
        #expect(m.segments[0].durationSeconds == 10)
        #expect(m.warnings.count == 1)
    }

    @Test func unknownTags_kept() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-CUE-OUT:30\n#EXTINF:10,\na.ts\n")
        #expect(m.unknownTags == [UnknownTag(line: "#EXT-X-CUE-OUT:30", lineNumber: 3)])
    }

    @Test func rotatedLiveWindow_mediaSequenceAdvanced() throws {
        let first = try media(
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:100\n#EXTINF:4,\ns100.ts\n#EXTINF:4,\ns101.ts\n#EXTINF:4,\ns102.ts\n")
        let next = try media(
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:102\n#EXTINF:4,\ns102.ts\n#EXTINF:4,\ns103.ts\n#EXTINF:4,\ns104.ts\n")
        #expect(first.segments.map(\.mediaSequence) == [100, 101, 102])
        #expect(next.segments.map(\.mediaSequence) == [102, 103, 104])
        #expect(next.isLive)
        // The segment in both windows keeps its sequence number.
        #expect(first.segments[2].uri == next.segments[0].uri)
    }

    @Test func byteRangeWithoutOffset_continuesSameResource() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n#EXT-X-BYTERANGE:100@50\na.ts\n#EXTINF:10,\n#EXT-X-BYTERANGE:200\na.ts\n")
        #expect(m.segments[1].byteRange == ByteRange(length: 200, offset: 150))
    }

    @Test func byteRangeWithoutOffset_differentResource_fatal() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse(
                "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\n#EXT-X-BYTERANGE:100@50\na.ts\n#EXTINF:10,\n#EXT-X-BYTERANGE:200\nb.ts\n",
                baseURL: testBase)
        }
        #expect(e?.kind == .constraintViolation)
        #expect(e?.lineNumber == 7)
    }

    @Test func keyIV_sixteenBytes_andMethodNoneClears() throws {
        let m = try media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:10
            #EXT-X-KEY:METHOD=AES-128,URI="k1",IV=0x1
            #EXTINF:10,
            a.ts
            #EXT-X-KEY:METHOD=NONE
            #EXTINF:10,
            b.ts
            """)
        #expect(m.segments[0].key?.iv == [UInt8](repeating: 0, count: 15) + [1])
        #expect(m.segments[0].key?.uri?.absoluteString == "http://example.com/path/k1")
        #expect(m.segments[1].key == nil)
        #expect(m.segments[1].keys.isEmpty)
    }

    @Test func programDateTime_extrapolatedWithOffsetAndFraction() throws {
        let m = try media(
            "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXT-X-PROGRAM-DATE-TIME:2016-06-22T09:20:16.166-04:00\n#EXTINF:10,\na.ts\n#EXTINF:2.5,\nb.ts\n#EXTINF:1,\nc.ts\n"
        )
        let ms = m.segments.map { Int(($0.programDateTime!.timeIntervalSince1970 * 1000).rounded()) }
        #expect(ms == [1466601616166, 1466601626166, 1466601628666])
    }

    @Test func partsAttachToFollowingSegment_restAreTrailing() throws {
        let m = try media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:4
            #EXT-X-PART-INF:PART-TARGET=1
            #EXT-X-PART:DURATION=1,URI="p1.mp4",INDEPENDENT=YES
            #EXT-X-PART:DURATION=1,URI="p2.mp4"
            #EXTINF:2,
            s1.mp4
            #EXT-X-PART:DURATION=1,URI="p3.mp4",GAP=YES
            #EXT-X-PRELOAD-HINT:TYPE=PART,URI="p4.mp4"
            """)
        #expect(m.segments[0].parts.map(\.uri.lastPathComponent) == ["p1.mp4", "p2.mp4"])
        #expect(m.segments[0].parts[0].independent)
        #expect(m.trailingParts.map(\.uri.lastPathComponent) == ["p3.mp4"])
        #expect(m.trailingParts[0].gap)
        #expect(m.preloadHints.first?.type == "PART")
    }

    @Test func deltaUpdate_mediaSequenceCountsSkipped() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-MEDIA-SEQUENCE:266\n#EXT-X-SKIP:SKIPPED-SEGMENTS=3\n#EXTINF:4,\ns269.mp4\n")
        #expect(m.segments[0].mediaSequence == 269)
        #expect(m.skip?.skippedSegments == 3)
    }

    @Test func closedCaptionsNone_isEnumerated() throws {
        let m = try multivariant(
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1280000,CLOSED-CAPTIONS=NONE,RESOLUTION=640x360,CODECS=\"avc1.4d401e, mp4a.40.2\"\nlow.m3u8\n")
        #expect(m.variants[0].closedCaptionsNone)
        #expect(m.variants[0].closedCaptionsGroup == nil)
        #expect(m.variants[0].codecs == ["avc1.4d401e", "mp4a.40.2"])
        #expect(m.variants[0].resolution == Resolution(width: 640, height: 360))
    }

    @Test func define_undefinedReference_fatal() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\na{$x}.ts\n", baseURL: testBase)
        }
        #expect(e?.kind == .variableError)
        #expect(e?.lineNumber == 4)
    }

    @Test func relativeURIs_resolveRFC3986() throws {
        let m = try media(
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\n../up.ts\n#EXTINF:4,\n/abs.ts\n#EXTINF:4,\n//cdn.example.net/x.ts\n#EXTINF:4,\nhttps://other/y.ts\n",
            base: URL(string: "https://h.example/a/b/list.m3u8?tok=1")!)
        #expect(
            m.segments.map(\.uri.absoluteString) == [
                "https://h.example/a/up.ts", "https://h.example/abs.ts",
                "https://cdn.example.net/x.ts", "https://other/y.ts"
            ])
    }

    // MARK: limits (inclusive: at the limit passes, one over fails)

    func vod(segments n: Int) -> String {
        var s = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n"
        for i in 0..<n { s += "#EXTINF:1,\n\(i).ts\n" }
        return s
    }

    func master(variants n: Int) -> String {
        var s = "#EXTM3U\n"
        for i in 0..<n { s += "#EXT-X-STREAM-INF:BANDWIDTH=\(i + 1)\n\(i).m3u8\n" }
        return s
    }

    func expectLimit(_ name: String, _ body: () throws(PlaylistError) -> some Any) {
        let e = playlistError(body)
        #expect(e?.kind == .limitExceeded)
        #expect(e?.rule == "PlaylistLimits.\(name)")
    }

    @Test func limit_maxSegments_boundary() throws {
        let limits = PlaylistLimits(maxSegments: 5)
        #expect(try media(vod(segments: 5), limits: limits).segments.count == 5)
        expectLimit("maxSegments") { () throws(PlaylistError) in try PlaylistParser.parse(vod(segments: 6), baseURL: testBase, limits: limits) }
    }

    @Test func limit_maxVariants_boundary() throws {
        let limits = PlaylistLimits(maxVariants: 3)
        #expect(try multivariant(master(variants: 3), limits: limits).variants.count == 3)
        expectLimit("maxVariants") { () throws(PlaylistError) in try PlaylistParser.parse(master(variants: 4), baseURL: testBase, limits: limits) }
    }

    @Test func limit_maxBytes_boundary() throws {
        let text = simpleVOD
        let n = text.utf8.count
        _ = try parseText(text, limits: PlaylistLimits(maxBytes: n))
        _ = try PlaylistParser.parse(data: Data(text.utf8), baseURL: testBase, limits: PlaylistLimits(maxBytes: n))
        expectLimit("maxBytes") { () throws(PlaylistError) in
            try PlaylistParser.parse(text, baseURL: testBase, limits: PlaylistLimits(maxBytes: n - 1))
        }
        expectLimit("maxBytes") { () throws(PlaylistError) in
            try PlaylistParser.parse(data: Data(text.utf8), baseURL: testBase, limits: PlaylistLimits(maxBytes: n - 1))
        }
    }

    @Test func limit_defaultMaxBytes_is4MiB() {
        #expect(PlaylistLimits.default.maxBytes == 4 * 1024 * 1024)
        let huge = Data(count: 4 * 1024 * 1024 + 1)
        expectLimit("maxBytes") { () throws(PlaylistError) in try PlaylistParser.parse(data: huge, baseURL: testBase) }
    }

    @Test func limit_maxLineLength_boundary() throws {
        let uri = String(repeating: "a", count: 61) + ".ts" // 64 bytes
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n\(uri)\r\n"
        _ = try parseText(text, limits: PlaylistLimits(maxLineLength: 64)) // CR not counted
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse(text, baseURL: testBase, limits: PlaylistLimits(maxLineLength: 63))
        }
        #expect(e?.kind == .limitExceeded)
        #expect(e?.lineNumber == 4)
    }

    @Test func hugeLine_overDefaultLimit_fatal() {
        let text = "#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n" + String(repeating: "x", count: 64 * 1024 + 1) + "\n"
        expectLimit("maxLineLength") { () throws(PlaylistError) in try PlaylistParser.parse(text, baseURL: testBase) }
    }

    @Test func limit_maxRenditions_boundary() throws {
        func text(_ n: Int) -> String {
            var s = "#EXTM3U\n"
            for i in 0..<n { s += "#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"n\(i)\",URI=\"a\(i).m3u8\"\n" }
            return s + "#EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO=\"a\"\nv.m3u8\n"
        }
        let limits = PlaylistLimits(maxRenditions: 2)
        #expect(try multivariant(text(2), limits: limits).renditions.count == 2)
        expectLimit("maxRenditions") { () throws(PlaylistError) in try PlaylistParser.parse(text(3), baseURL: testBase, limits: limits) }
    }

    @Test func limit_maxAttributes_boundary() throws {
        func text(_ n: Int) -> String {
            "#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1" + (1..<n).map { ",X-A\($0)=1" }.joined() + "\nv.m3u8\n"
        }
        let limits = PlaylistLimits(maxAttributes: 4)
        #expect(try multivariant(text(4), limits: limits).variants[0].attributes.count == 4)
        expectLimit("maxAttributes") { () throws(PlaylistError) in try PlaylistParser.parse(text(5), baseURL: testBase, limits: limits) }
    }

    @Test func limit_maxPartialSegments_boundary() throws {
        func text(_ n: Int) -> String {
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PART-INF:PART-TARGET=1\n"
                + (0..<n).map { "#EXT-X-PART:DURATION=1,URI=\"p\($0).mp4\"\n" }.joined()
        }
        let limits = PlaylistLimits(maxPartialSegments: 2)
        #expect(try media(text(2), limits: limits).trailingParts.count == 2)
        expectLimit("maxPartialSegments") { () throws(PlaylistError) in try PlaylistParser.parse(text(3), baseURL: testBase, limits: limits) }
    }

    @Test func limit_maxVariables_boundary() throws {
        func text(_ n: Int) -> String {
            "#EXTM3U\n" + (0..<n).map { "#EXT-X-DEFINE:NAME=\"v\($0)\",VALUE=\"x\"\n" }.joined() + "#EXT-X-STREAM-INF:BANDWIDTH=1\nv.m3u8\n"
        }
        let limits = PlaylistLimits(maxVariables: 2)
        #expect(try multivariant(text(2), limits: limits).variables.count == 2)
        expectLimit("maxVariables") { () throws(PlaylistError) in try PlaylistParser.parse(text(3), baseURL: testBase, limits: limits) }
    }

    @Test func limit_maxDateRanges_boundary() throws {
        func text(_ n: Int) -> String {
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n" + (0..<n).map { "#EXT-X-DATERANGE:ID=\"d\($0)\",START-DATE=\"2020-01-01T00:00:00Z\"\n" }.joined()
                + "#EXTINF:4,\na.ts\n"
        }
        let limits = PlaylistLimits(maxDateRanges: 2)
        #expect(try media(text(2), limits: limits).dateRanges.count == 2)
        expectLimit("maxDateRanges") { () throws(PlaylistError) in try PlaylistParser.parse(text(3), baseURL: testBase, limits: limits) }
    }

    @Test func tooManySegments_defaultLimit() {
        expectLimit("maxSegments") { () throws(PlaylistError) in try PlaylistParser.parse(vod(segments: 100_001), baseURL: testBase) }
    }

    @Test func tooManyVariants_defaultLimit() {
        expectLimit("maxVariants") { () throws(PlaylistError) in try PlaylistParser.parse(master(variants: 513), baseURL: testBase) }
    }
    // MARK: policy decisions taken against one library or another

    @Test func partWithoutPartInf_warning() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-PART:DURATION=1,URI=\"p.mp4\"\n#EXTINF:4,\ns.mp4\n")
        #expect(m.segments[0].parts.count == 1)
        #expect(m.warnings.map(\.lineNumber) == [3])
    }

    @Test func startTwice_fatal() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse(
                "#EXTM3U\n#EXT-X-START:TIME-OFFSET=-10\n#EXT-X-START:TIME-OFFSET=-20\n#EXT-X-STREAM-INF:BANDWIDTH=1\na.m3u8\n", baseURL: testBase)
        }
        #expect(e?.kind == .constraintViolation)
        #expect(e?.lineNumber == 3)
        #expect(e?.rule.contains("§4.3.5") == true)
    }

    @Test func startNegativeOffsetAndPrecise() throws {
        let m = try multivariant("#EXTM3U\n#EXT-X-START:TIME-OFFSET=-12.5,PRECISE=YES\n#EXT-X-STREAM-INF:BANDWIDTH=1\na.m3u8\n")
        #expect(m.start == StartPoint(timeOffsetSeconds: -12.5, precise: true))
    }

    @Test func mediaSequenceBetweenEXTINFAndURI_accepted() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:9,\n#EXT-X-MEDIA-SEQUENCE:20\na.ts\n")
        #expect(m.segments[0].mediaSequence == 20)
    }

    @Test func subtitlesWithoutURI_fatal() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse(
                "#EXTM3U\n#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID=\"s\",NAME=\"en\"\n#EXT-X-STREAM-INF:BANDWIDTH=1,SUBTITLES=\"s\"\na.m3u8\n",
                baseURL: testBase)
        }
        #expect(e?.kind == .missingRequiredAttribute)
        #expect(e?.lineNumber == 2)
    }

    @Test func undefinedAudioGroup_warning() throws {
        let m = try multivariant("#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO=\"missing\"\na.m3u8\n")
        #expect(m.variants[0].audioGroup == "missing")
        #expect(m.warnings.count == 1)
    }

    @Test func define_duplicateName_fatal() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse(
                "#EXTM3U\n#EXT-X-DEFINE:NAME=\"a\",VALUE=\"1\"\n#EXT-X-DEFINE:NAME=\"a\",VALUE=\"2\"\n#EXT-X-STREAM-INF:BANDWIDTH=1\na.m3u8\n",
                baseURL: testBase)
        }
        #expect(e?.kind == .variableError)
        #expect(e?.lineNumber == 3)
    }

    @Test func define_importAndQueryParam() throws {
        let m = try media(
            "#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-DEFINE:IMPORT=\"cdn\"\n#EXT-X-DEFINE:QUERYPARAM=\"tok\"\n#EXTINF:4,t {$cdn}\nhttps://{$cdn}/a.ts?t={$tok}\n",
            base: URL(string: "https://h/x.m3u8?tok=abc")!, parent: ["cdn": "edge.example", "other": "x"])
        #expect(m.segments[0].uri.absoluteString == "https://edge.example/a.ts?t=abc")
        #expect(m.segments[0].title == "t {$cdn}")
        #expect(m.definitions == [.importFromParent(name: "cdn"), .queryParameter(name: "tok")])
        #expect(m.variables == ["cdn": "edge.example", "tok": "abc"])
    }

    @Test func define_importMissing_fatal() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-DEFINE:IMPORT=\"cdn\"\n", baseURL: testBase)
        }
        #expect(e?.kind == .variableError)
        #expect(e?.lineNumber == 3)
    }

    @Test func iframeStreamInf_unquotedURI_fatal() {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse("#EXTM3U\n#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=1,URI=/i.m3u8\n", baseURL: testBase)
        }
        #expect(e?.kind == .invalidAttributeValue)
    }
}
