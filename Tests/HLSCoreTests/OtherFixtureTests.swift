// kuu/hls-parser examples (must all parse), python-m3u8 (globocom) expected
// values, grafov samples, and one verdict per fixture file for all 80.

import Foundation
import Testing
@testable import HLSCore

func fixture(_ path: String, base: URL = testBase) throws -> Playlist {
    try PlaylistParser.parse(data: try Fixtures.data(path), baseURL: base)
}

func fixtureMedia(_ path: String, base: URL = testBase) throws -> MediaPlaylist {
    guard case .media(let m) = try fixture(path, base: base) else { throw TestFailure("\(path) is not media") }
    return m
}

func fixtureMultivariant(_ path: String, base: URL = testBase) throws -> MultivariantPlaylist {
    guard case .multivariant(let m) = try fixture(path, base: base) else { throw TestFailure("\(path) is not multivariant") }
    return m
}

struct AllFixturesVerdictTests {
    /// Every fixture file we refuse, with the error kind and why. All others must parse.
    static let refused: [String: (kind: PlaylistError.Kind, reason: String)] = [
        "globocom-m3u8/daterange-scte35-out-and-in-playlist.m3u8": (.missingRequiredTag, "no EXT-X-TARGETDURATION (python-m3u8 lenient accepts)"),
        "globocom-m3u8/low-latency-with-preload-and-byteranges-playlist.m3u8": (
            .missingRequiredTag, "no EXT-X-TARGETDURATION (python-m3u8 lenient accepts)"
        ),
        "globocom-m3u8/simple-playlist-messy.m3u8": (
            .missingRequiredTag, "stray `JUNK` line is a URI without EXTINF (python-m3u8 strict refuses too)"
        ),
        "grafov-m3u8/media-playlist-with-cue-out-in-without-oatcls.m3u8": (.missingURI, "last EXTINF has no URI line (truncated live playlist)"),
        "hlsjs/broken-syntax-master.m3u8": (.missingHeader, "hls.js errors too"),
        "hlsjs/define-duplicate-name.m3u8": (.variableError, "hls.js errors too"),
        "hlsjs/define-import-missing.m3u8": (.variableError, "hls.js errors too (parsed without its parent variables here)"),
        "hlsjs/define-import-media.m3u8": (.variableError, "needs parentVariables; parsed with them in HlsjsFixtureTests"),
        "hlsjs/define-queryparam-media.m3u8": (.variableError, "needs parentVariables and a query; parsed with them in HlsjsFixtureTests"),
        "hlsjs/define-queryparam-multivariant.m3u8": (.variableError, "needs the base URL query; parsed with it in HlsjsFixtureTests"),
        "hlsjs/define-reference-before-definition.m3u8": (.variableError, "hls.js errors too"),
        "hlsjs/define-undefined-reference.m3u8": (.variableError, "hls.js errors too"),
        "hlsjs/media-sequence-after-first-segment.m3u8": (.constraintViolation, "hls.js errors too"),
        "hlsjs/targetduration-twice.m3u8": (.constraintViolation, "hls.js errors too"),
        "kuu-hls-parser/strict-fail/byterange-no-offset-different-resource.m3u8": (.constraintViolation, "hls-parser strict refuses too"),
        "kuu-hls-parser/strict-fail/extm3u-not-first-line.m3u8": (.missingHeader, "hls-parser strict refuses too"),
        "kuu-hls-parser/strict-fail/preload-hint-without-type.m3u8": (.missingRequiredAttribute, "hls-parser strict refuses too"),
        "kuu-hls-parser/strict-fail/skip-without-skipped-segments.m3u8": (.missingRequiredAttribute, "hls-parser strict refuses too"),
        "kuu-hls-parser/strict-fail/stream-inf-without-uri.m3u8": (.missingURI, "hls-parser strict refuses too"),
        "kuu-hls-parser/strict-fail/uri-without-extinf.m3u8": (.missingRequiredTag, "hls-parser strict refuses too"),
        "videojs-m3u8-parser/byteRange.m3u8": (.constraintViolation, "see videojsDeviations"),
        "videojs-m3u8-parser/invalidTargetDuration.m3u8": (.invalidAttributeValue, "see videojsDeviations"),
        "videojs-m3u8-parser/llhls-byte-range.m3u8": (.constraintViolation, "see videojsDeviations"),
        "videojs-m3u8-parser/llhls-delta-byte-range.m3u8": (.missingURI, "see videojsDeviations"),
        "videojs-m3u8-parser/manifestNoExtM3u.m3u8": (.missingHeader, "see videojsDeviations")
    ]

    @Test func everyFixture_hasTheExpectedVerdict() throws {
        let all = try Fixtures.allPlaylists()
        #expect(all.count == 80, "expected the README's 80 playlists, found \(all.count)")
        var parsed = 0
        for path in all {
            let data = try Fixtures.data(path)
            do {
                _ = try PlaylistParser.parse(data: data, baseURL: testBase)
                parsed += 1
                #expect(Self.refused[path] == nil, "\(path) parsed but is listed as refused")
            } catch {
                let r = Self.refused[path]
                #expect(r != nil, "\(path) refused: \(error)")
                #expect(error.kind == r?.kind, "\(path): \(error)")
                #expect(error.rule.isEmpty == false)
            }
        }
        print("fixtures: \(parsed) of \(all.count) parse with a default base URL and no parent variables; \(all.count - parsed) refused as listed")
        #expect(Set(Self.refused.keys).isSubset(of: Set(all)))
    }
}

struct KuuExampleTests {
    let dir = "kuu-hls-parser/examples/"

    @Test func rfc8_1_simpleVOD() throws {
        let m = try fixtureMedia(dir + "8.1-Simple-Media-Playlist.m3u8")
        #expect(m.targetDurationSeconds == 10)
        #expect(m.version == 3)
        #expect(m.segments.map(\.durationSeconds) == [9.009, 9.009, 3.003])
        #expect(m.endList)
    }

    @Test func rfc8_2_liveWindow() throws {
        let m = try fixtureMedia(dir + "8.2-Live-Media-Playlist_using-HTTPS.m3u8")
        #expect(m.mediaSequence == 2680)
        #expect(m.segments.map(\.mediaSequence) == [2680, 2681, 2682])
        #expect(m.segments[1].uri.absoluteString == "https://priv.example.com/fileSequence2681.ts")
        #expect(m.isLive)
    }

    @Test func rfc8_3_keyRotation() throws {
        let m = try fixtureMedia(dir + "8.3-Playlist-with-encrypted-Media-Segments.m3u8")
        #expect(m.segments.map { $0.key?.uri?.query } == ["r=52", "r=52", "r=52", "r=53"])
        #expect(m.segments.allSatisfy { $0.key?.method == .aes128 && $0.key?.iv == nil })
    }

    @Test func rfc8_4_master() throws {
        let m = try fixtureMultivariant(dir + "8.4-Master-Playlist.m3u8")
        #expect(m.variants.map(\.bandwidthBps) == [1280000, 2560000, 7680000, 65000])
        #expect(m.variants.map(\.averageBandwidthBps) == [1000000, 2000000, 6000000, nil])
        #expect(m.variants[3].codecs == ["mp4a.40.5"])
        #expect(m.variants[0].uri.absoluteString == "http://example.com/low.m3u8")
    }

    @Test func rfc8_5_iFrames() throws {
        let m = try fixtureMultivariant(dir + "8.5-Master-Playlist-with-I-Frames.m3u8")
        #expect(m.variants.count == 4)
        #expect(m.iFrameStreams.count == 3)
    }

    @Test func rfc8_6_alternativeAudio() throws {
        let m = try fixtureMultivariant(dir + "8.6-Master-Playlist-with-Alternative-audio.m3u8")
        #expect(m.renditions.count == 3)
        #expect(m.renditions.allSatisfy { $0.type == .audio })
        #expect(m.variants.count == 4)
        #expect(m.warnings.count == 3) // three comment lines before #EXTM3U
    }

    @Test func rfc8_7_alternativeVideo() throws {
        let m = try fixtureMultivariant(dir + "8.7-Master-Playlist-with-Alternative-video.m3u8")
        #expect(m.renditions.count == 9)
        #expect(Set(m.renditions.map(\.groupID)).count == 3)
        #expect(m.variants.allSatisfy { $0.videoGroup != nil })
    }

    @Test func rfc8_8_sessionData() throws {
        let m = try fixtureMultivariant(dir + "8.8-Session-Data-in-a-Master-Playlist.m3u8")
        #expect(m.variants.isEmpty)
        #expect(m.sessionData.count >= 2)
        #expect(m.sessionData.allSatisfy { ($0.value == nil) != ($0.uri == nil) })
    }

    @Test func rfc8_9_characteristics() throws {
        let m = try fixtureMultivariant(dir + "8.9-CHARACTERISTICS-attribute-containing-multiple-characteristics.m3u8")
        #expect(m.renditions.contains { $0.characteristics.count >= 2 })
    }

    @Test func rfc8_10_daterangeSCTE35() throws {
        let m = try fixtureMedia(dir + "8.10-EXT-X-DATERANGE-carrying-SCTE-35-tags.m3u8")
        #expect(m.dateRanges.count == 2)
        #expect(m.dateRanges[0].id == m.dateRanges[1].id)
        #expect(m.dateRanges[0].attributes["SCTE35-OUT"]?.hasPrefix("0x") == true)
        #expect(m.dateRanges[1].attributes["SCTE35-IN"] != nil)
    }

    @Test func cueOut_isUnknownTag() throws {
        let m = try fixtureMedia(dir + "8.11-EXT-X-CUE-OUT-Media-Playlist.m3u8")
        #expect(m.unknownTags.contains { $0.line.hasPrefix("#EXT-X-CUE-OUT") })
    }

    @Test func llExample01() throws {
        let m = try fixtureMedia(dir + "Low-Latency_Example-01_Low-Latency_HLS_Playlist.m3u8")
        #expect(m.segments.count == 7)
        #expect(m.segments.reduce(0) { $0 + $1.parts.count } + m.trailingParts.count == 27)
        #expect(!m.trailingParts.isEmpty)
        #expect(m.serverControl?.canBlockReload == true)
        #expect(m.partTargetSeconds != nil)
        #expect(!m.preloadHints.isEmpty)
        #expect(m.renditionReports.count >= 1)
        #expect(m.segments.allSatisfy { $0.programDateTime != nil })
    }

    @Test func llExample02_deltaUpdate() throws {
        let m = try fixtureMedia(dir + "Low-Latency_Example-02_Playlist_Delta_Update.m3u8")
        #expect(m.mediaSequence == 266)
        #expect(m.skip?.skippedSegments == 3)
        #expect(m.segments.first?.mediaSequence == 269)
    }

    @Test func llExample03_byteRangeParts() throws {
        let m = try fixtureMedia(dir + "Low-Latency_Example-03_Byterange-addressed_Parts-01.m3u8")
        #expect(m.segments.map(\.mediaSequence) == [269, 270])
        #expect(
            m.trailingParts.map(\.byteRange) == [
                ByteRange(length: 20000, offset: 0), ByteRange(length: 23000, offset: 20000),
                ByteRange(length: 18000, offset: 43000)
            ])
        #expect(m.preloadHints.first?.byteRangeStart == 61000)
        #expect(m.preloadHints.first?.byteRangeLength == nil) // open-ended
        for n in ["02", "03"] {
            let next = try fixtureMedia(dir + "Low-Latency_Example-03_Byterange-addressed_Parts-\(n).m3u8")
            #expect(next.segments.count == 3)
        }
    }

    @Test func redundantSegments() throws {
        let m = try fixtureMedia(dir + "RedundantSegments.m3u8")
        #expect(m.segments.map(\.byteRange) == [nil, nil, ByteRange(length: 128, offset: 256), nil])
    }

    @Test func multipleRenditionGroups_noFinalNewline() throws {
        let m = try fixtureMultivariant(dir + "Multiple-rendition-groups.m3u8")
        #expect(m.variants.count == 4)
        #expect(m.renditions.count == 6)
    }

    @Test func appleBipbop16x9() throws {
        let m = try fixtureMultivariant(dir + "Streaming-Examples_bipbop_16x9_variant.m3u8")
        #expect(m.variants.count == 6)
        #expect(m.iFrameStreams.count == 5)
        #expect(m.renditions.count == 10)
        #expect(m.renditions.contains { $0.type == .subtitles && $0.forced })
        #expect(m.renditions.contains { $0.name == "日本語" })
    }

    @Test func appleAdvancedTS() throws {
        let m = try fixtureMultivariant(dir + "Streaming-Examples_img_bipbop_adv_example_ts_master.m3u8")
        #expect(m.variants.count + m.iFrameStreams.count == 30)
        #expect(m.variants.allSatisfy { $0.averageBandwidthBps != nil && $0.frameRate != nil })
        #expect(Set(m.renditions.filter { $0.type == .audio }.map(\.groupID)).count == 3)
        #expect(m.warnings.isEmpty)
    }
}

struct GlobocomFixtureTests {
    let dir = "globocom-m3u8/"

    @Test func crlf() throws {
        let m = try fixtureMedia(dir + "simple-playlist-crlf.m3u8")
        #expect(m.targetDurationSeconds == 5220)
        #expect(m.segments.map(\.uri.absoluteString) == ["http://media.example.com/entire.ts"])
        #expect(m.segments.map(\.durationSeconds) == [5220])
    }

    @Test func messy_refusedLikePythonStrict() throws {
        let e = playlistError { () throws(PlaylistError) in
            try PlaylistParser.parse(data: try! Fixtures.data(dir + "simple-playlist-messy.m3u8"), baseURL: testBase)
        }
        #expect(e?.lineNumber == 5) // python-m3u8 strict: "Syntax error in manifest on line 5: JUNK"
    }

    @Test func commalessEXTINF_acceptedWithWarning() throws {
        // python-m3u8 lenient accepts, strict refuses ("line 3: #EXTINF:5220"): we accept and warn on line 3.
        let m = try fixtureMedia(dir + "simple-playlist-commaless-extinf.m3u8")
        #expect(m.segments.map(\.durationSeconds) == [5220])
        #expect(m.warnings.map(\.lineNumber) == [3])
    }

    @Test func discontinuityWithPDT() throws {
        let m = try fixtureMedia(dir + "discontinuity-playlist-with-program-date-time.m3u8")
        let iso = { (d: Date?) in d.map { ISO8601DateFormatter().string(from: $0) } }
        #expect(iso(m.segments[0].programDateTime) == "2014-08-13T13:36:33Z")
        #expect(iso(m.segments[1].programDateTime) == "2014-08-13T13:36:36Z")
        #expect(m.segments[5].discontinuity)
        #expect(iso(m.segments[5].programDateTime) == "2014-08-13T13:36:55Z")
        #expect(!m.segments[6].discontinuity)
    }

    @Test func keysClearEncNoneEnc() throws {
        let m = try fixtureMedia(dir + "playlist-with-multiple-keys-unencrypted-and-encrypted-none.m3u8")
        #expect(m.segments.count == 10)
        #expect(
            m.segments.map { $0.key?.uri?.lastPathComponent } == [
                nil, nil, "key.bin", "key.bin", "key.bin", "key.bin", nil, nil, "key2.bin", "key2.bin"
            ])
        #expect(m.segments[2].key?.iv?.first == 0x10) // upper-case 0X prefix
        #expect(m.warnings.count == 1) // METHOD=NONE,URI=""
    }

    @Test func mapWithByteRange() throws {
        let m = try fixtureMedia(dir + "map-uri-playlist-with-byterange.m3u8")
        #expect(m.segments.first?.initializationSection?.uri.lastPathComponent == "main.mp4")
        #expect(
            Set(m.segments.compactMap { $0.initializationSection?.byteRange }) == [
                ByteRange(length: 812, offset: 0), ByteRange(length: 912, offset: 0)
            ])
    }

    @Test func gap() throws {
        let m = try fixtureMedia(dir + "gap-playlist.m3u8")
        #expect(m.segments.map(\.gap) == [false, true, true, false])
    }

    @Test func daterangeSCTE35_valuesMatchWhenTargetDurationAdded() throws {
        // Refused as-is (no EXT-X-TARGETDURATION); with the tag added the values match python-m3u8.
        let text = String(decoding: try Fixtures.data(dir + "daterange-scte35-out-and-in-playlist.m3u8"), as: UTF8.self)
            .replacingOccurrences(of: "#EXTM3U\n", with: "#EXTM3U\n#EXT-X-TARGETDURATION:10\n")
        let m = try media(text)
        #expect(m.dateRanges.first?.id == "splice-6FFFFFF0")
        #expect(m.dateRanges.first?.plannedDurationSeconds == 59.993)
        #expect(m.dateRanges.first?.attributes["SCTE35-OUT"] != nil)
        #expect(m.dateRanges.last?.durationSeconds == 59.993)
        #expect(m.dateRanges.last?.attributes["SCTE35-IN"] != nil)
    }

    @Test func lowLatency_valuesMatchWhenTargetDurationAdded() throws {
        let text = String(decoding: try Fixtures.data(dir + "low-latency-with-preload-and-byteranges-playlist.m3u8"), as: UTF8.self)
            .replacingOccurrences(of: "#EXTM3U\n", with: "#EXTM3U\n#EXT-X-TARGETDURATION:5\n")
        let m = try media(text)
        #expect(m.trailingParts[2].byteRange == ByteRange(length: 18000, offset: 43000)) // "18000@43000"
        #expect(
            m.preloadHints.first
                == PreloadHint(
                    type: "PART", uri: URL(string: "http://example.com/path/fs271.mp4")!,
                    byteRangeStart: 61000, byteRangeLength: 20000))
    }

    @Test func deltaSkipDateranges() throws {
        let m = try fixtureMedia(dir + "delta-update-skip-dateranges-playlist.m3u8")
        #expect(m.skip == SkipInfo(skippedSegments: 16, recentlyRemovedDateRanges: ["1"]))
        #expect(m.serverControl?.canSkipUntilSeconds == 36)
        #expect(m.serverControl?.canSkipDateRanges == true)
        #expect(m.segments.first?.mediaSequence == 17)
    }

    @Test func bitrate_kbpsToBps() throws {
        let m = try fixtureMedia(dir + "bitrate-playlist.m3u8")
        #expect(Array(m.segments.compactMap(\.bitrateBps).prefix(2)) == [1_674_000, 1_625_000])
    }

    @Test func contentSteering() throws {
        let m = try fixtureMultivariant(dir + "content-steering-playlist.m3u8")
        #expect(m.contentSteering?.serverURI.absoluteString == "http://example.com/steering?video=00012")
        #expect(m.contentSteering?.pathwayID == "CDN-A")
        #expect(m.variants.map(\.pathwayID) == ["CDN-A", "CDN-A", "CDN-B", "CDN-B"])
    }

    @Test func variantWithIFrames() throws {
        let m = try fixtureMultivariant(dir + "variant-playlist-with-iframe-playlists.m3u8")
        #expect(m.variants.count == 5)
        #expect(m.iFrameStreams.count == 4)
        let f = try #require(m.iFrameStreams.first)
        #expect(f.bandwidthBps == 151288)
        #expect(f.resolution == Resolution(width: 624, height: 352))
        #expect(f.codecs == ["avc1.4d001f"])
        #expect(f.uri.lastPathComponent == "video-800k-iframes.m3u8")
        #expect(f.attributes["PROGRAM-ID"] == "1")
        #expect(m.iFrameStreams.last?.bandwidthBps == 38775)
        #expect(m.variants.contains { $0.codecs == ["avc1.4d001f", "mp4a.40.5"] })
    }
}

struct GrafovFixtureTests {
    @Test func closedCaptionsNone() throws {
        let m = try fixtureMultivariant("grafov-m3u8/master-with-closed-captions-eq-none.m3u8")
        #expect(m.variants.count == 3)
        #expect(m.variants.allSatisfy { $0.closedCaptionsNone && $0.codecs == ["avc1"] })
        #expect(m.renditions.count == 5)
    }

    @Test func hlsv7() throws {
        let m = try fixtureMultivariant("grafov-m3u8/master-with-hlsv7.m3u8")
        #expect(!m.variants.isEmpty)
        #expect(m.variants.contains { $0.videoRange == "PQ" })
        #expect(m.variants.contains { $0.hdcpLevel != nil })
    }

    @Test func wowzaChunklist_522Segments() throws {
        let m = try fixtureMedia("grafov-m3u8/wowza-vod-chunklist.m3u8")
        #expect(m.segments.count == 522)
        #expect(m.segments.allSatisfy { $0.uri.query?.hasPrefix("wowzasessionid=") == true })
        #expect(m.endList)
    }

    @Test func truncatedCueOutPlaylist_refusedAtLastEXTINF_butBodyMatchesWhenCompleted() throws {
        var text = String(decoding: try Fixtures.data("grafov-m3u8/media-playlist-with-cue-out-in-without-oatcls.m3u8"), as: UTF8.self)
        let e = playlistError { () throws(PlaylistError) in try PlaylistParser.parse(text, baseURL: testBase) }
        #expect(e?.kind == .missingURI)
        text += "\nlast.ts\n"
        let m = try media(text)
        #expect(m.segments.allSatisfy { $0.title == "no desc" })
        #expect(m.unknownTags.contains { $0.line.hasPrefix("#EXT-X-CUE-OUT") })
        // `#USP-X-TIMESTAMP-MAP` does not start with `#EXT`: a comment (RFC 8216 §4.1), not a tag.
        #expect(!m.unknownTags.contains { $0.line.hasPrefix("#USP-X-TIMESTAMP-MAP") })
    }
}
