// The rules run over the sample media Samples/make-variants.sh builds
// (alt-audio, redundant, aes-rotate): the playlists parse, and the renditions,
// failover and steering choices come out as the samples intend. The samples
// are made by Samples/make-all.sh (Tools/test.sh runs it); when they are
// missing the tests fail with that instruction.

import Foundation
import Testing
import TestSupport
@testable import HLSCore

enum SampleVariants {
    static let root = Repo.samples("variants")

    static func url(_ path: String) throws -> URL {
        let u = root.appendingPathComponent(path)
        guard FileManager.default.fileExists(atPath: u.path) else {
            throw SampleMissing(description: "\(u.path) is missing: run Samples/make-all.sh (Tools/test.sh does)")
        }
        return u
    }

    static func playlist(_ path: String) throws -> Playlist {
        let u = try url(path)
        return try PlaylistParser.parse(data: try Data(contentsOf: u), baseURL: u)
    }

    static func multivariant(_ path: String) throws -> MultivariantPlaylist {
        guard case .multivariant(let m) = try playlist(path) else { throw SampleMissing(description: "\(path) is not multivariant") }
        return m
    }

    static func media(_ url: URL) throws -> MediaPlaylist {
        guard case .media(let m) = try PlaylistParser.parse(data: try Data(contentsOf: url), baseURL: url) else {
            throw SampleMissing(description: "\(url.path) is not a media playlist")
        }
        return m
    }
}

struct SampleMissing: Error, CustomStringConvertible { var description: String }

@Suite struct SampleVariantsRulesTests {
    func t(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: s) }

    @Test(arguments: ["alt-audio", "alt-audio-fmp4"])
    func altAudio_englishByDefault_frenchOnRequest_alignedWithVideo(folder: String) throws {
        let m = try SampleVariants.multivariant("\(folder)/master.m3u8")
        #expect(m.warnings.isEmpty)
        #expect(m.variants.count == 2)
        #expect(m.variants.allSatisfy { $0.audioGroup == "aud" })
        let en = try AudioRenditionSelector.select(for: m.variants[0], renditions: m.renditions, preferences: AudioPreferences())
        #expect(en.rendition?.language == "en")
        let fr = try AudioRenditionSelector.select(
            for: m.variants[1], renditions: m.renditions,
            preferences: AudioPreferences(requestedLanguage: "fr"))
        #expect(fr.rendition?.name == "Français")
        let video = try SampleVariants.media(m.variants[0].uri)
        for choice in [en, fr] {
            guard case .renditionPlaylist(let u) = choice.source else {
                Issue.record("\(choice.detail): expected a rendition playlist")
                continue
            }
            let audio = try SampleVariants.media(u)
            #expect(audio.segments.count == video.segments.count)
            #expect(abs(audio.totalDurationSeconds - video.totalDurationSeconds) < 0.05)
            for (a, v) in zip(audio.segments, video.segments) {
                #expect(abs(a.durationSeconds - v.durationSeconds) < 0.025, "within one AAC frame of the video's cut")
                #expect(FileManager.default.fileExists(atPath: a.uri.path))
                if folder == "alt-audio-fmp4" { #expect(a.initializationSection != nil) }
            }
        }
    }

    @Test func redundant_twoErrorsOnA_movesToB() throws {
        let m = try SampleVariants.multivariant("redundant/master.m3u8")
        var f = FailoverTracker(variants: m.variants)
        #expect(f.rungs == [[0, 2], [1, 3]])
        #expect(f.ladderVariantIndices == [0, 1])
        #expect(f.choose(rungOf: 0, at: t(0)).uri.path.hasSuffix("/redundant/a/v0/prog.m3u8"))
        let e = LoadError(kind: .httpStatus, url: "x", httpStatus: 503, message: "unavailable")
        for _ in 0..<2 { _ = f.recordFailure(variantIndex: 0, error: e, at: t(1)) }
        let c = f.choose(rungOf: 0, at: t(1))
        #expect(c.kind == .failover)
        #expect(c.uri.path.hasSuffix("/redundant/b/v0/prog.m3u8"))
    }

    @Test func steering_sampleManifestPrefersB() throws {
        let m = try SampleVariants.multivariant("redundant/steering.m3u8")
        var c = try #require(ContentSteeringClient(playlist: m, at: t(0)))
        #expect(c.currentPathway == "a")
        let jsonURL = try SampleVariants.url("redundant/steering.json")
        #expect(c.manifestURL == jsonURL)
        let manifest = try SteeringManifest.parse(try Data(contentsOf: jsonURL), manifestURL: jsonURL)
        _ = c.manifestLoaded(manifest, playlist: m, excludedPathways: [:], at: t(0))
        #expect(c.currentPathway == "b")
        var f = FailoverTracker(variants: m.variants)
        #expect(f.choose(rungOf: 1, pathwayOrder: c.pathwayOrder, at: t(0)).uri.path.hasSuffix("/redundant/b/v1/prog.m3u8"))
    }

    @Test func aesRotate_keysAndIVs() throws {
        guard case .media(let p) = try SampleVariants.playlist("aes-rotate/prog.m3u8") else {
            Issue.record("not a media playlist")
            return
        }
        #expect(p.segments.map(\.mediaSequence) == Array(10...17))
        let keyNames = p.segments.map { $0.key?.uri?.lastPathComponent ?? "clear" }
        #expect(keyNames == ["k1.key", "k1.key", "k2.key", "k2.key", "clear", "clear", "k3.key", "k3.key"])
        #expect(p.segments[0].key?.iv == [0x0f, 0x0e, 0x0d, 0x0c, 0x0b, 0x0a, 0x09, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01, 0x00])
        #expect(p.segments[1].key?.iv == p.segments[0].key?.iv)
        #expect(p.segments[2].key?.iv == nil)
        #expect(p.segments[6].key?.iv == Array(repeating: 0xa5, count: 16))
        #expect(p.segments.allSatisfy { $0.key == nil || $0.key?.method == .aes128 })
        for k in ["k1", "k2", "k3"] {
            #expect(try Data(contentsOf: SampleVariants.url("aes-rotate/\(k).key")).count == 16)
        }
        // Encrypted segments are whole AES blocks; clear ones start with the TS sync byte.
        for s in p.segments {
            let bytes = try Data(contentsOf: s.uri)
            if s.key == nil { #expect(bytes.first == 0x47) } else { #expect(bytes.count % 16 == 0) }
        }
    }
}
