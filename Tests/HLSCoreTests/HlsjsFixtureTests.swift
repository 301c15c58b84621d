// Conformance against the hls.js M3U8Parser unit-test playlists
// (hlsjs/expectations.json, transcribed from hls.js's assertions).

import Foundation
import Testing
@testable import HLSCore

struct HlsjsFixtureTests {
    /// hls.js reports a playlistParsingError for these; we refuse them, with this kind.
    static let expectedErrors: [String: PlaylistError.Kind] = [
        "broken-syntax-master.m3u8": .missingHeader, // `#EXTM3U#EXTXSTREAMINF:…` on one line
        "define-duplicate-name.m3u8": .variableError,
        "define-import-missing.m3u8": .variableError,
        "define-undefined-reference.m3u8": .variableError,
        "define-reference-before-definition.m3u8": .variableError,
        "targetduration-twice.m3u8": .constraintViolation,
        "media-sequence-after-first-segment.m3u8": .constraintViolation
    ]

    static func load(_ name: String) throws -> (result: Result<Playlist, PlaylistError>, entry: [String: Any]) {
        let all = try Fixtures.json("hlsjs/expectations.json")
        let entry = try #require(all[name] as? [String: Any], "no expectation for \(name)")
        let baseText = try #require(entry["baseUrl"] as? String)
        let base = try #require(URL(string: baseText))
        let parent = (entry["parentVariables"] as? [String: String]) ?? [:]
        let data = try Fixtures.data("hlsjs/\(name)")
        do {
            return (.success(try PlaylistParser.parse(data: data, baseURL: base, parentVariables: parent)), entry)
        } catch {
            return (.failure(error), entry)
        }
    }

    static func media(_ name: String) throws -> MediaPlaylist {
        let r = try load(name).result
        guard case .success(.media(let m)) = r else { throw TestFailure("\(name): not a media playlist: \(r)") }
        return m
    }

    static func multivariant(_ name: String) throws -> MultivariantPlaylist {
        guard case .success(.multivariant(let m)) = try load(name).result else { throw TestFailure("\(name): not multivariant") }
        return m
    }

    /// Every file: we fail exactly where hls.js reports an error (7 of 17), with the kind above.
    @Test func errorVerdicts_agreeWithHlsjs() throws {
        let all = try Fixtures.json("hlsjs/expectations.json")
        var checked = 0
        for (name, value) in all where name.hasSuffix(".m3u8") {
            let entry = try #require(value as? [String: Any])
            let hlsjsError = entry["error"] as? String
            let (result, _) = try Self.load(name)
            switch result {
            case .success:
                #expect(hlsjsError == nil, "\(name): hls.js reports \(hlsjsError ?? "") but we parsed it")
            case .failure(let e):
                #expect(hlsjsError != nil, "\(name): we failed (\(e)) but hls.js did not")
                #expect(e.kind == Self.expectedErrors[name], "\(name): \(e)")
            }
            checked += 1
        }
        #expect(checked == 17)
    }

    @Test func byterangeWithoutOffset() throws {
        let m = try Self.media("byterange-without-offset.m3u8")
        #expect(m.segments.count == 3)
        let ranges = m.segments.map { [$0.byteRange!.offset!, $0.byteRange!.offset! + $0.byteRange!.length] }
        #expect(ranges == [[803136, 943196], [943196, 1039452], [1039452, 1182520]])
        #expect(m.segments[0].uri.absoluteString == "http://dummy.com/lo007ts")
        // EXTINF 1000000 > TARGETDURATION 1: accepted (hls.js too), with a warning each.
        #expect(m.warnings.count == 3)
    }

    @Test func llhlsPartsPreloadRenditionReport() throws {
        let m = try Self.media("llhls-parts-preload-rendition-report.m3u8")
        #expect(
            m.serverControl
                == ServerControl(
                    canBlockReload: true, canSkipUntilSeconds: 24, canSkipDateRanges: false,
                    holdBackSeconds: nil, partHoldBackSeconds: 3.012))
        #expect(m.partTargetSeconds == 1.004)
        #expect(m.segments.count == 8)
        #expect(m.segments.map(\.parts.count) == [0, 0, 0, 0, 0, 0, 4, 4])
        #expect(m.segments[7].parts[3].gap)
        #expect(m.trailingParts.isEmpty)
        #expect(m.preloadHints.map(\.type) == ["PART"])
        #expect(m.preloadHints[0].uri.absoluteString == "http://dummy.url.com/lowLatencyHLS.php?segment=filePart1151234.1.ts")
        #expect(m.renditionReports.count == 2)
    }

    @Test func daterangeInterstitials() throws {
        let m = try Self.media("daterange-interstitials.m3u8")
        #expect(m.dateRanges.map(\.id) == ["pre", "mid1", "mid2", "post"])
        #expect(m.dateRanges.allSatisfy { $0.classID == "com.apple.hls.interstitial" })
        #expect(m.dateRanges[0].attributes["CUE"] == "PRE")
        #expect(m.dateRanges[1].attributes["CUE"] == "ONCE")
        #expect(m.dateRanges[3].attributes["CUE"] == "POST,ONCE")
        #expect(m.unknownTags.contains { $0.line.hasPrefix("#EXT-X-TIMESTAMP") })
    }

    @Test func fmp4DiscontinuitiesPDT() throws {
        let m = try Self.media("fmp4-discontinuities-pdt.m3u8")
        #expect(m.segments.count == 22)
        let ms = m.segments.map { Int(($0.programDateTime!.timeIntervalSince1970 * 1000).rounded()) }
        #expect(ms[17] == 1636514824000)
        for n in 17..<21 { #expect(ms[n + 1] == ms[n] + Int(m.segments[n].durationSeconds * 1000)) }
        #expect(m.segments[0].discontinuitySequence == 28141)
        #expect(m.segments[3].discontinuitySequence == 28142)
        #expect(m.segments[0].initializationSection?.uri.lastPathComponent == "init.mp4") // MAP between EXTINF and URI
        #expect(m.segments[17].initializationSection?.uri.lastPathComponent == "init_960719739.mp4")
    }

    @Test func clearEncClearEncMultikey() throws {
        let m = try Self.media("clear-enc-clear-enc-multikey.m3u8")
        #expect(m.segments.count == 8)
        #expect(m.segments.indices.filter { m.segments[$0].keys.isEmpty } == [0, 1, 4, 5])
        for i in [2, 3, 6, 7] {
            #expect(m.segments[i].keys.map(\.keyFormat) == ["com.apple.streamingkeydelivery", "urn:uuid:edef8ba9-79d6-4ace-a3c8-27dcd51d21ed"])
            #expect(m.segments[i].key?.method == .sampleAES)
        }
        #expect(m.segments[6].keys[0].uri?.absoluteString == "skd://b")
    }

    @Test func defineMultivariant() throws {
        let m = try Self.multivariant("define-multivariant.m3u8")
        #expect(m.variables == ["x": "1", "y": "2", "hello-var": "Hello there!"])
    }

    @Test func defineSubstitutionMultivariant() throws {
        let m = try Self.multivariant("define-substitution-multivariant.m3u8")
        #expect(m.variables["bar"] == "ok") // VALUE="{$foo}" is itself substituted
        #expect(m.sessionData.first { $0.dataID == "var-applied" }?.value == "hmm")
        let key = try #require(m.sessionKeys.first)
        #expect(key.keyFormat == "com.apple.streamingkeydelivery")
        #expect(key.keyFormatVersions == "1/2")
        #expect(key.iv == [UInt8](repeating: 0, count: 15) + [2]) // IV=0x0000000{$two}
        #expect(m.contentSteering == ContentSteering(serverURI: URL(string: "https://example.com/steering-manifest.json")!, pathwayID: "ok-CDN"))
        #expect(m.variants.map(\.attributes["NAME"]) == ["ok1", "ok2"])
        #expect(m.variants.map(\.uri.absoluteString) == ["https://example.com/sec/video/1.m3u8", "https://example.com/sec/avc1.64001f/2.m3u8"])
        #expect(m.variants.allSatisfy { $0.codecs.contains("avc1.64001f") })
        let audio = try #require(m.renditions.first)
        #expect(audio.groupID == "200k")
        #expect(audio.language == "eng")
        #expect(audio.uri?.absoluteString == "https://example.com/200k.m3u8")
    }

    @Test func defineImportMedia() throws {
        let m = try Self.media("define-import-media.m3u8")
        #expect(m.variables["mvpVariable"] == "ok")
        #expect(m.variables["p"] == "part-")
        #expect(m.targetDurationSeconds == 5)
        #expect(m.isLive)
        #expect(m.skip == SkipInfo(skippedSegments: 3, recentlyRemovedDateRanges: ["DrTag", "tdl", "drMeta", "foo"]))
        // hls.js counts 3 skipped placeholders + 4 segments = 7 and a total of 31 s; we keep
        // only listed segments and number them after the skipped ones.
        #expect(m.segments.count == 4)
        #expect(m.segments.map(\.mediaSequence) == [4, 5, 6, 7])
        #expect(m.totalDurationSeconds + Double(m.skip!.skippedSegments) * m.targetDurationSeconds == 31)
        let s = m.segments[0]
        #expect(s.title == "no desc {$mvpVariable}") // titles are not substituted
        #expect(s.uri.absoluteString == "http://example.com/hls/aok.mp4")
        #expect(
            s.initializationSection
                == MediaInitializationSection(
                    uri: URL(string: "http://example.com/hls/ok.mp4")!,
                    byteRange: ByteRange(length: 718, offset: 0)))
        let part = try #require(m.segments[3].parts.first)
        #expect(part.uri.absoluteString == "http://example.com/hls/part-4-1.mp4")
        #expect(part.byteRange == ByteRange(length: 718, offset: 0))
        let dr = try #require(m.dateRanges.first)
        #expect(dr.id == "drMeta")
        #expect(dr.attributes["X-CUSTOM"] == "ok!")
        #expect(dr.attributes["SCTE35-OUT"] == "0x20000000")
        #expect(dr.startDate == dr.endDate)
        #expect(s.key?.uri?.absoluteString == "skd://key-data")
        #expect(s.key?.method == .sampleAES)
        #expect(s.key?.keyFormat == "com.apple.streamingkeydelivery")
        #expect(s.key?.keyFormatVersions == "1/2")
        #expect(m.preloadHints.first?.uri.absoluteString == "http://example.com/hls/part-5.1.mp4")
        #expect(m.renditionReports.map(\.uri.absoluteString) == ["http://example.com/media0/ok.m3u8", "http://example.com/media2/ok.m3u8"])
        #expect(m.renditionReports[0].lastMediaSequence == 4)
        #expect(m.renditionReports[0].lastPart == 3)
        #expect(m.renditionReports[1].lastMediaSequence == nil)
    }

    @Test func defineQueryparamMultivariant() throws {
        let m = try Self.multivariant("define-queryparam-multivariant.m3u8")
        #expect(m.variables == ["foo": "bar", "token": "1234"])
        #expect(m.sessionData.first { $0.dataID == "var-applied" }?.value == "bar")
        #expect(
            m.variants.map(\.uri.absoluteString) == [
                "https://www.x.com/sec/video/1.m3u8?parent-token=1234",
                "https://www.x.com/sec/video/2.m3u8?parent-token=1234"
            ])
    }

    @Test func defineQueryparamMedia() throws {
        let m = try Self.media("define-queryparam-media.m3u8")
        #expect(m.variables == ["token": "1234", "parent-token": "1234", "extra": "yes"]) // foo not imported
        #expect(
            m.segments.map(\.uri.absoluteString) == [
                "https://www.x.com/sec/video/segment-1.mp4?pt=1234&t=1234&x=yes",
                "https://www.x.com/sec/video/segment-2.mp4?t=1234",
                "https://www.x.com/sec/video/segment-3.mp4?t=1234"
            ])
    }

    @Test func errorLinesAndRules() throws {
        guard case .failure(let e) = try Self.load("targetduration-twice.m3u8").result else { Issue.record("parsed"); return }
        #expect(e.rule.contains("§4.3.3.1"))
        guard case .failure(let e2) = try Self.load("define-reference-before-definition.m3u8").result else { Issue.record("parsed"); return }
        #expect(e2.message.contains("{$bar}"))
        #expect(e2.lineNumber > 0)
    }
}
