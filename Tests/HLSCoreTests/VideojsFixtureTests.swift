// Conformance against videojs/m3u8-parser's integration fixtures: every
// `expected/<name>.json` is compared field by field with our model, except
// where our policy deliberately differs (table below, asserted too).

import Foundation
import Testing
@testable import HLSCore

/// Fixtures where our verdict differs from video.js (which is lenient). Each
/// entry is asserted: the parse must fail with exactly this kind.
let videojsDeviations: [String: (kind: PlaylistError.Kind, reason: String)] = [
    "manifestNoExtM3u": (.missingHeader, "RFC 8216 §4.3.1.1: EXTM3U MUST be the first line; a file without it is not a playlist"),
    "invalidTargetDuration": (
        .invalidAttributeValue, "EXT-X-TARGETDURATION:NaN is not a decimal-integer; video.js drops the tag, we refuse the playlist"
    ),
    "byteRange": (
        .constraintViolation,
        "BYTERANGE without offset after a sub-range of a different URI: §4.3.2.2 says the client MUST fail; video.js continues the offset across resources"
    ),
    "llhls-byte-range": (
        .constraintViolation,
        "first segment has BYTERANGE `587500@` (empty offset, no previous sub-range): §4.3.2.2 MUST fail; video.js assumes offset 0"
    ),
    "llhls-delta-byte-range": (.missingURI, "an EXTINF directly followed by EXT-X-SKIP and another EXTINF has no URI (§4.3.2.1); video.js drops it")
]

struct VideojsFixtureTests {
    static let base = URL(string: "http://example.com/videojs/playlist.m3u8")!
    static let names = [
        "alternateAudio", "byteRange", "dateTime", "diff-init-key", "discontinuity", "encrypted", "fmp4",
        "iFramePlaylist", "invalidTargetDuration", "llhls-byte-range", "llhls-delta-byte-range", "llhls",
        "llhlsDelta", "manifestNoExtM3u", "master-fmp4", "master", "missingEndlist", "multipleAudioGroups"
    ]

    func url(_ s: Any?) -> URL? {
        guard let s = s as? String else { return nil }
        return URL(string: s, relativeTo: Self.base)?.absoluteURL
    }

    func num(_ v: Any?) -> Double? {
        if let n = v as? NSNumber { return n.doubleValue }
        if let s = v as? String { return Double(s) }
        return nil
    }

    @Test func fixtureList_isComplete() throws {
        let dir = try Fixtures.requireDirectory().appendingPathComponent("videojs-m3u8-parser/expected")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasSuffix(".json") }
        #expect(Set(files.map { String($0.dropLast(5)) }) == Set(Self.names))
    }

    @Test(arguments: names)
    func matchesExpected(_ name: String) throws {
        let data = try Fixtures.data("videojs-m3u8-parser/\(name).m3u8")
        let expected = try Fixtures.json("videojs-m3u8-parser/expected/\(name).json")
        let result: Playlist
        do {
            result = try PlaylistParser.parse(data: data, baseURL: Self.base)
        } catch {
            let deviation = try #require(videojsDeviations[name], "\(name) failed but is not a known deviation: \(error)")
            #expect(error.kind == deviation.kind, "\(name): \(error)")
            return
        }
        #expect(videojsDeviations[name] == nil, "\(name) parsed but is listed as a deviation")
        switch result {
        case .media(let m): compareMedia(m, expected, name)
        case .multivariant(let m): compareMultivariant(m, expected, name)
        }
    }

    func compareByteRange(_ ours: ByteRange?, _ e: Any?, _ what: String) {
        if let e = e as? [String: Any] {
            #expect(ours?.length == (e["length"] as? Int), "\(what) length")
            #expect(ours?.offset == (e["offset"] as? Int), "\(what) offset")
        } else {
            #expect(ours == nil, "\(what) should have no byte range")
        }
    }

    func compareParts(_ ours: [PartialSegment], _ e: [[String: Any]], _ what: String) {
        #expect(ours.count == e.count, "\(what) part count")
        for (p, ep) in zip(ours, e) {
            #expect(p.uri == url(ep["uri"]), "\(what) part uri")
            #expect(abs(p.durationSeconds - (num(ep["duration"]) ?? -1)) < 1e-9, "\(what) part duration")
            #expect(p.independent == ((ep["independent"] as? Bool) ?? false), "\(what) part independent")
            #expect(p.gap == ((ep["gap"] as? Bool) ?? false), "\(what) part gap")
            if ep["byterange"] != nil { compareByteRange(p.byteRange, ep["byterange"], "\(what) part") }
        }
    }

    func compareMedia(_ m: MediaPlaylist, _ e: [String: Any], _ name: String) {
        if let t = num(e["targetDuration"]) { #expect(m.targetDurationSeconds == t, "\(name) targetDuration") }
        #expect(m.mediaSequence == ((e["mediaSequence"] as? Int) ?? 0), "\(name) mediaSequence")
        #expect(m.discontinuitySequence == ((e["discontinuitySequence"] as? Int) ?? 0), "\(name) discontinuitySequence")
        #expect(m.endList == ((e["endList"] as? Bool) ?? false), "\(name) endList")
        #expect(m.playlistType?.rawValue == (e["playlistType"] as? String), "\(name) playlistType")
        #expect(m.independentSegments == ((e["independentSegments"] as? Bool) ?? false), "\(name) independentSegments")
        if let v = e["version"] as? Int { #expect(m.version == v, "\(name) version") }
        let segs = (e["segments"] as? [[String: Any]]) ?? []
        #expect(m.segments.count == segs.count, "\(name) segment count")
        for (i, (s, es)) in zip(m.segments, segs).enumerated() {
            let w = "\(name) segment \(i)"
            #expect(s.uri == url(es["uri"]), "\(w) uri")
            #expect(abs(s.durationSeconds - (num(es["duration"]) ?? -1)) < 1e-9, "\(w) duration")
            compareByteRange(s.byteRange, es["byterange"], w)
            #expect(s.discontinuity == ((es["discontinuity"] as? Bool) ?? false), "\(w) discontinuity")
            // video.js `timeline` counts discontinuities from 0 (its discontinuitySequence is 0 in every fixture).
            #expect(s.discontinuitySequence == (es["timeline"] as? Int), "\(w) timeline")
            if let k = es["key"] as? [String: Any] {
                #expect(s.key?.method == .aes128 && (k["method"] as? String) == "AES-128", "\(w) key method")
                #expect(s.key?.uri == url(k["uri"]), "\(w) key uri")
                if let iv = k["iv"] as? [String: Any] {
                    var bytes: [UInt8] = []
                    for j in 0..<4 {
                        let word = UInt32((iv[String(j)] as? NSNumber)?.uint32Value ?? 0)
                        bytes += [UInt8(word >> 24), UInt8(word >> 16 & 0xFF), UInt8(word >> 8 & 0xFF), UInt8(word & 0xFF)]
                    }
                    #expect(s.key?.iv == bytes, "\(w) key iv")
                } else {
                    #expect(s.key?.iv == nil, "\(w) key iv absent")
                }
            } else {
                #expect(s.key == nil, "\(w) unencrypted")
            }
            if let map = es["map"] as? [String: Any] {
                #expect(s.initializationSection?.uri == url(map["uri"]), "\(w) map uri")
                compareByteRange(s.initializationSection?.byteRange, map["byterange"], "\(w) map")
            } else {
                #expect(s.initializationSection == nil, "\(w) no map")
            }
            if let pdt = num(es["programDateTime"]) {
                let ours = (s.programDateTime?.timeIntervalSince1970 ?? 0) * 1000
                #expect(abs(ours - pdt) < 1, "\(w) programDateTime \(ours) vs \(pdt)")
            }
            compareParts(s.parts, (es["parts"] as? [[String: Any]]) ?? [], w)
        }
        if let pre = e["preloadSegment"] as? [String: Any] {
            compareParts(m.trailingParts, (pre["parts"] as? [[String: Any]]) ?? [], "\(name) preload")
            let hints = (pre["preloadHints"] as? [[String: Any]]) ?? []
            #expect(m.preloadHints.map(\.type) == hints.map { $0["type"] as? String ?? "" }, "\(name) hint types")
            #expect(m.preloadHints.map(\.uri) == hints.compactMap { url($0["uri"]) }, "\(name) hint uris")
        } else {
            #expect(m.trailingParts.isEmpty && m.preloadHints.isEmpty, "\(name) no preload segment")
        }
        let reports = (e["renditionReports"] as? [[String: Any]]) ?? []
        #expect(m.renditionReports.map(\.uri) == reports.compactMap { url($0["uri"]) }, "\(name) rendition report uris")
        #expect(m.renditionReports.map(\.lastMediaSequence) == reports.map { $0["lastMsn"] as? Int }, "\(name) LAST-MSN")
        #expect(m.renditionReports.map(\.lastPart) == reports.map { $0["lastPart"] as? Int }, "\(name) LAST-PART")
        if let sc = e["serverControl"] as? [String: Any] {
            #expect(m.serverControl?.canBlockReload == ((sc["canBlockReload"] as? Bool) ?? false), "\(name) CAN-BLOCK-RELOAD")
            #expect(m.serverControl?.canSkipDateRanges == ((sc["canSkipDateranges"] as? Bool) ?? false), "\(name) CAN-SKIP-DATERANGES")
            #expect(m.serverControl?.canSkipUntilSeconds == num(sc["canSkipUntil"]), "\(name) CAN-SKIP-UNTIL")
            #expect(m.serverControl?.holdBackSeconds == num(sc["holdBack"]), "\(name) HOLD-BACK")
            #expect(m.serverControl?.partHoldBackSeconds == num(sc["partHoldBack"]), "\(name) PART-HOLD-BACK")
        } else {
            #expect(m.serverControl == nil, "\(name) no server control")
        }
        #expect(m.partTargetSeconds == num((e["partInf"] as? [String: Any])?["partTarget"]), "\(name) PART-TARGET")
        if let skip = e["skip"] as? [String: Any] {
            #expect(m.skip?.skippedSegments == (skip["skippedSegments"] as? Int), "\(name) SKIPPED-SEGMENTS")
            #expect(m.skip?.recentlyRemovedDateRanges == ((skip["recentlyRemovedDateranges"] as? [String]) ?? []), "\(name) removed dateranges")
            // Our segment numbering counts the skipped segments.
            #expect(m.segments.first?.mediaSequence == m.mediaSequence + (m.skip?.skippedSegments ?? 0))
        } else {
            #expect(m.skip == nil, "\(name) no skip")
        }
    }

    func compareMultivariant(_ m: MultivariantPlaylist, _ e: [String: Any], _ name: String) {
        let pls = (e["playlists"] as? [[String: Any]]) ?? []
        #expect(m.variants.count == pls.count, "\(name) variant count")
        for (i, (v, ep)) in zip(m.variants, pls).enumerated() {
            let w = "\(name) variant \(i)"
            let a = (ep["attributes"] as? [String: Any]) ?? [:]
            #expect(v.uri == url(ep["uri"]), "\(w) uri")
            #expect(Double(v.bandwidthBps) == num(a["BANDWIDTH"]), "\(w) BANDWIDTH")
            #expect(v.averageBandwidthBps.map(Double.init) == num(a["AVERAGE-BANDWIDTH"]), "\(w) AVERAGE-BANDWIDTH")
            let codecs = (a["CODECS"] as? String).map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } } ?? []
            #expect(v.codecs == codecs, "\(w) CODECS")
            if let r = a["RESOLUTION"] as? [String: Any] {
                #expect(v.resolution == Resolution(width: r["width"] as? Int ?? -1, height: r["height"] as? Int ?? -1), "\(w) RESOLUTION")
            } else {
                #expect(v.resolution == nil, "\(w) no RESOLUTION")
            }
            #expect(v.frameRate == num(a["FRAME-RATE"]), "\(w) FRAME-RATE")
            #expect(v.audioGroup == a["AUDIO"] as? String, "\(w) AUDIO")
            #expect(v.videoGroup == a["VIDEO"] as? String, "\(w) VIDEO")
            #expect(v.subtitlesGroup == a["SUBTITLES"] as? String, "\(w) SUBTITLES")
            if let cc = a["CLOSED-CAPTIONS"] as? String {
                #expect(cc == "NONE" ? v.closedCaptionsNone : v.closedCaptionsGroup == cc, "\(w) CLOSED-CAPTIONS")
            }
        }
        let groups = (e["mediaGroups"] as? [String: [String: [String: [String: Any]]]]) ?? [:]
        var expectedCount = 0
        for (type, byGroup) in groups {
            for (group, byName) in byGroup {
                for (rname, r) in byName {
                    expectedCount += 1
                    let w = "\(name) \(type)/\(group)/\(rname)"
                    guard let ours = m.renditions.first(where: { $0.type.rawValue == type && $0.groupID == group && $0.name == rname }) else {
                        Issue.record("\(w) missing")
                        continue
                    }
                    #expect(ours.language == r["language"] as? String, "\(w) LANGUAGE")
                    #expect(ours.isDefault == ((r["default"] as? Bool) ?? false), "\(w) DEFAULT")
                    #expect(ours.autoselect == ((r["autoselect"] as? Bool) ?? false), "\(w) AUTOSELECT")
                    #expect(ours.forced == ((r["forced"] as? Bool) ?? false), "\(w) FORCED")
                    #expect(ours.uri == url(r["uri"]), "\(w) URI")
                    #expect(ours.instreamID == r["instreamId"] as? String, "\(w) INSTREAM-ID")
                }
            }
        }
        #expect(m.renditions.count == expectedCount, "\(name) rendition count")
        let iframes = (e["iFramePlaylists"] as? [[String: Any]]) ?? []
        #expect(m.iFrameStreams.count == iframes.count, "\(name) I-frame count")
        for (f, ef) in zip(m.iFrameStreams, iframes) {
            #expect(f.uri == url(ef["uri"]), "\(name) I-frame uri")
            #expect(Double(f.bandwidthBps) == num((ef["attributes"] as? [String: Any])?["BANDWIDTH"]), "\(name) I-frame BANDWIDTH")
        }
    }
}
