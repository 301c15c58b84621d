// StreamCheck: the rules of `hlsplay check URL`, each at its threshold and just past it.

import Foundation
import Testing
@testable import HLSCore

@Suite struct StreamCheckTests {
    func variant(_ attributes: String) throws -> VariantStream {
        let m = try multivariant("#EXTM3U\n#EXT-X-STREAM-INF:\(attributes)\nv.m3u8\n")
        return try #require(m.variants.first)
    }

    func rules(_ findings: [CheckFinding], _ severity: CheckSeverity? = nil) -> [String] {
        findings.filter { severity == nil || $0.severity == severity }.map(\.rule)
    }

    static let vod = """
        #EXTM3U
        #EXT-X-TARGETDURATION:4
        #EXT-X-PLAYLIST-TYPE:VOD
        #EXTINF:4.0,
        a.ts
        #EXTINF:4.49,
        b.ts
        #EXTINF:4.5,
        c.ts
        #EXT-X-ENDLIST
        """

    @Test func targetDuration_roundedExtinfAboveTarget_isAnError_atTheRoundingEdge() throws {
        let findings = StreamCheck.mediaPlaylistFindings(try media(Self.vod))
        let over = findings.filter { $0.rule == "target-duration" }
        // 4.49 rounds to 4 (allowed); 4.5 rounds to 5 (not).
        #expect(over.count == 1)
        #expect(over.first?.severity == .error)
        #expect(over.first?.message.contains("segment 2 EXTINF 4.500 s") == true)
        #expect(over.first?.reference?.contains("RFC 8216 §4.3.3.1") == true)
        // The parser's own warning for it is not repeated as a parser-warning.
        #expect(!rules(findings).contains("parser-warning"))
    }

    @Test func targetDuration_manyOffenders_namedUpToTheLimitThenCounted() throws {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:2\n"
        for i in 0..<8 { text += "#EXTINF:3,\ns\(i).ts\n" }
        text += "#EXT-X-ENDLIST\n"
        let over = StreamCheck.mediaPlaylistFindings(try media(text)).filter { $0.rule == "target-duration" }
        #expect(over.count == StreamCheck.maxFindingsPerRule + 1)
        #expect(over.last?.message.hasPrefix("3 more segments") == true)
    }

    @Test func parserWarnings_arePassedOnWithTheirLine() throws {
        let m = try media("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-BOGUS-TAG\n#EXTINF:4,\na.ts\n#EXT-X-ENDLIST\n#EXT-X-VERSION:3\n")
        let findings = StreamCheck.mediaPlaylistFindings(m)
        #expect(m.warnings.count == findings.filter { $0.rule == "parser-warning" }.count)
        for f in findings where f.rule == "parser-warning" { #expect(f.message.hasPrefix("line ")) }
    }

    @Test func parserWarnings_repeatedOnManyLines_namedUpToTheLimitThenCounted() throws {
        var text = "#EXTM3U\n#EXT-X-TARGETDURATION:4\n"
        for i in 0..<8 { text += "#EXTINF:4\ns\(i).ts\n" } // no comma: one warning per segment
        text += "#EXT-X-ENDLIST\n"
        let m = try media(text)
        #expect(m.warnings.count == 8)
        let findings = StreamCheck.mediaPlaylistFindings(m).filter { $0.rule == "parser-warning" }
        #expect(findings.count == StreamCheck.maxFindingsPerRule + 1)
        #expect(findings.last?.message.hasPrefix("3 more lines (13–17): ") == true, "\(findings.last?.message ?? "")")
    }

    @Test func peakBitrate_firstSegmentAboveBandwidthByMoreThanTenPercent_isAnError() throws {
        let v = try variant("BANDWIDTH=1000000")
        let m = try media(Self.vod)
        // 4 s segment: 1.10 Mbit/s = 550,000 bytes is at the limit; one byte more is over.
        let atLimit = SegmentProbe(durationSeconds: 4, bytes: 550_000, streams: [])
        #expect(!rules(StreamCheck.variantFindings(v, playlist: m, probe: atLimit)).contains("peak-bitrate"))
        let over = SegmentProbe(durationSeconds: 4, bytes: 550_001, streams: [])
        let f = StreamCheck.variantFindings(v, playlist: m, probe: over).first { $0.rule == "peak-bitrate" }
        #expect(f?.severity == .error)
        #expect(f?.reference?.contains("Apple HLS Authoring Specification") == true)
        #expect(f?.message.contains("tolerance 10%") == true)
    }

    @Test func peakBitrate_liveToleranceIs25Percent() throws {
        let v = try variant("BANDWIDTH=1000000")
        let live = try media("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\na.ts\n")
        // 1.2 Mbit/s: over the VOD tolerance, within the live one.
        let probe = SegmentProbe(durationSeconds: 4, bytes: 600_000, streams: [])
        #expect(!rules(StreamCheck.variantFindings(v, playlist: live, probe: probe)).contains("peak-bitrate"))
        #expect(rules(StreamCheck.variantFindings(v, playlist: try media(Self.vod), probe: probe)).contains("peak-bitrate"))
        let far = SegmentProbe(durationSeconds: 4, bytes: 625_001, streams: [])
        #expect(rules(StreamCheck.variantFindings(v, playlist: live, probe: far)).contains("peak-bitrate"))
    }

    @Test func byteRanges_peakAndAverage_againstBandwidthAndAverageBandwidth() throws {
        // Two 2 s segments of 250,000 and 500,000 bytes: peak 2 Mbit/s, average 1.5 Mbit/s.
        let m = try media(
            """
            #EXTM3U
            #EXT-X-TARGETDURATION:2
            #EXT-X-VERSION:4
            #EXTINF:2,
            #EXT-X-BYTERANGE:250000@0
            all.ts
            #EXTINF:2,
            #EXT-X-BYTERANGE:500000@250000
            all.ts
            #EXT-X-ENDLIST
            """)
        let rates = try #require(ByteRangeRates.measure(m))
        #expect(rates.peakBps == 2_000_000)
        #expect(rates.averageBps == 1_500_000)
        #expect(rates.segments == 2 && rates.totalSegments == 2)
        let honest = try variant("BANDWIDTH=2000000,AVERAGE-BANDWIDTH=1500000")
        #expect(rules(StreamCheck.variantFindings(honest, playlist: m, probe: nil), .error).isEmpty)
        let low = try variant("BANDWIDTH=1000000,AVERAGE-BANDWIDTH=1000000")
        let lowFindings = StreamCheck.variantFindings(low, playlist: m, probe: nil)
        #expect(rules(lowFindings, .error).sorted() == ["average-bitrate", "peak-bitrate"])
        // Declared far above what the byte ranges show: a warning (players under-select), not an error.
        let high = try variant("BANDWIDTH=4000000,AVERAGE-BANDWIDTH=3000000,CODECS=\"avc1.64001f\"")
        let highFindings = StreamCheck.variantFindings(high, playlist: m, probe: nil)
        #expect(rules(highFindings, .error).isEmpty)
        #expect(rules(highFindings, .warning).sorted() == ["average-bitrate", "peak-bitrate-overstated"])
    }

    @Test func codecs_probedStreamNotListed_andListedCodecNotFound_areErrors() throws {
        let v = try variant("BANDWIDTH=1000000,CODECS=\"hvc1.1.6.L93.B0,mp4a.40.2\",RESOLUTION=640x360")
        let probe = SegmentProbe(
            durationSeconds: 4, bytes: 1000,
            streams: [ProbedStream(kind: "video", codec: "h264", width: 640, height: 360), ProbedStream(kind: "audio", codec: "aac")])
        let f = StreamCheck.variantFindings(v, playlist: nil, probe: probe)
        let undeclared = f.filter { $0.rule == "codecs-undeclared" }
        #expect(undeclared.count == 1)
        #expect(undeclared.first?.message.contains("video h264") == true)
        let missing = f.filter { $0.rule == "codecs-not-found" }
        #expect(missing.count == 1)
        #expect(missing.first?.message.contains("hvc1") == true)
        // The right CODECS: clean.
        let right = try variant("BANDWIDTH=1000000,CODECS=\"avc1.64001e,mp4a.40.2\",RESOLUTION=640x360")
        #expect(rules(StreamCheck.variantFindings(right, playlist: nil, probe: probe), .error).isEmpty)
    }

    @Test func codecs_audioInARendition_isExpectedThere_andHeldToTheRenditionsStreams() throws {
        let v = try variant("BANDWIDTH=1000000,CODECS=\"avc1.64001e,mp4a.40.2\",AUDIO=\"a\"")
        let video = SegmentProbe(durationSeconds: 4, bytes: 1000, streams: [ProbedStream(kind: "video", codec: "h264", width: 640, height: 360)])
        let notProbed = StreamCheck.variantFindings(v, playlist: nil, probe: video, alternateKinds: ["audio"])
        #expect(rules(notProbed, .error).isEmpty)
        #expect(rules(notProbed).contains("codecs-in-rendition"))
        let ac3 = StreamCheck.variantFindings(
            v, playlist: nil, probe: video, alternateKinds: ["audio"], renditionStreams: [ProbedStream(kind: "audio", codec: "ac3")])
        #expect(rules(ac3, .error).sorted() == ["codecs-not-found", "codecs-undeclared"])
        let aac = StreamCheck.variantFindings(
            v, playlist: nil, probe: video, alternateKinds: ["audio"], renditionStreams: [ProbedStream(kind: "audio", codec: "aac")])
        #expect(rules(aac, .error).isEmpty)
    }

    @Test func resolution_mismatchIsAnError_missingAWarning() throws {
        let probe = SegmentProbe(durationSeconds: 4, bytes: 1000, streams: [ProbedStream(kind: "video", codec: "h264", width: 1280, height: 720)])
        let wrong = try variant("BANDWIDTH=1000000,CODECS=\"avc1.64001f\",RESOLUTION=640x360")
        #expect(rules(StreamCheck.variantFindings(wrong, playlist: nil, probe: probe), .error) == ["resolution-mismatch"])
        let none = try variant("BANDWIDTH=1000000,CODECS=\"avc1.64001f\"")
        #expect(rules(StreamCheck.variantFindings(none, playlist: nil, probe: probe), .warning) == ["resolution-missing"])
        let noCodecs = try variant("BANDWIDTH=1000000,RESOLUTION=1280x720")
        #expect(rules(StreamCheck.variantFindings(noCodecs, playlist: nil, probe: probe), .warning) == ["codecs-missing"])
    }

    @Test func codecFamilies_fromRFC6381EntriesAndFFmpegNames() {
        #expect(StreamCheck.codecFamily("avc1.64001f") == "h264")
        #expect(StreamCheck.codecFamily("avc3.640028") == "h264")
        #expect(StreamCheck.codecFamily("hev1.1.6.L93.B0") == "hevc")
        #expect(StreamCheck.codecFamily("mp4a.40.2") == "aac")
        #expect(StreamCheck.codecFamily("mp4a.40.5") == "aac")
        #expect(StreamCheck.codecFamily("mp4a.40.34") == "mp3")
        #expect(StreamCheck.codecFamily("mp4a.69") == "mp3")
        #expect(StreamCheck.codecFamily("ec-3") == "eac3")
        #expect(StreamCheck.codecFamily("ac-3") == "ac3")
        #expect(StreamCheck.codecFamily("Opus") == "opus")
        #expect(StreamCheck.codecFamily("wvtt") == nil)
        #expect(StreamCheck.ffmpegCodecFamily("mp3float") == "mp3")
        #expect(StreamCheck.ffmpegCodecFamily("h264") == "h264")
    }

    @Test func multivariant_withoutVariants_isAnError() throws {
        let m = try multivariant("#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID=\"a\",NAME=\"en\",URI=\"a.m3u8\"\n")
        #expect(rules(StreamCheck.multivariantFindings(m), .error) == ["no-variants"])
    }
}
