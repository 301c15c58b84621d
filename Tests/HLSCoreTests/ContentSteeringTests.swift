// Content steering: the manifest parser (every field, every error), pathway
// cloning, the reload URL and schedule, and the pathway choice in virtual time.

import Foundation
import Testing
@testable import HLSCore

let steeringURL = URL(string: "http://example.com/path/steering.json")!

func steering(_ json: String) throws -> SteeringManifest {
    try SteeringManifest.parse(Data(json.utf8), manifestURL: steeringURL)
}

@Suite struct SteeringManifestTests {
    func rejected(_ json: String) -> SteeringManifestError? {
        do { _ = try SteeringManifest.parse(Data(json.utf8), manifestURL: steeringURL); return nil } catch { return error }
    }

    @Test func sample_steeringJSON() throws {
        // Samples/make-variants.sh writes this as redundant/steering.json.
        let m = try steering("{\n  \"VERSION\": 1,\n  \"TTL\": 4,\n  \"PATHWAY-PRIORITY\": [\"b\", \"a\"]\n}\n")
        #expect(m.version == 1)
        #expect(m.ttlSeconds == 4)
        #expect(m.reloadURI == nil)
        #expect(m.pathwayPriority == ["b", "a"])
        #expect(m.pathwayClones.isEmpty)
        #expect(m.warnings.isEmpty)
    }

    @Test func reloadURI_resolvedAgainstTheManifest() throws {
        let m = try steering(#"{"VERSION":1,"TTL":300,"RELOAD-URI":"next.json?session=4","PATHWAY-PRIORITY":["CDN-A"]}"#)
        #expect(m.reloadURI?.absoluteString == "http://example.com/path/next.json?session=4")
        let abs = try steering(#"{"VERSION":1,"TTL":300,"RELOAD-URI":"https://s.example/m","PATHWAY-PRIORITY":["CDN-A"]}"#)
        #expect(abs.reloadURI?.absoluteString == "https://s.example/m")
    }

    @Test func fractionalTTL_andZero_accepted_negativeRejected() throws {
        #expect(try steering(#"{"VERSION":1,"TTL":0.5,"PATHWAY-PRIORITY":["a"]}"#).ttlSeconds == 0.5)
        #expect(try steering(#"{"VERSION":1,"TTL":0,"PATHWAY-PRIORITY":["a"]}"#).ttlSeconds == 0)
        #expect(
            rejected(#"{"VERSION":1,"TTL":-1,"PATHWAY-PRIORITY":["a"]}"#)?.description
                == "steering manifest invalid-value: TTL -1 is not a number of seconds ≥ 0")
    }

    @Test func version_mustBeOne() {
        #expect(
            rejected(#"{"VERSION":2,"TTL":1,"PATHWAY-PRIORITY":["a"]}"#)?.description
                == "steering manifest unsupported-version: VERSION 2 is not supported (only 1)")
        #expect(rejected(#"{"VERSION":1.5,"TTL":1,"PATHWAY-PRIORITY":["a"]}"#)?.kind == .unsupportedVersion)
        #expect(
            rejected(#"{"VERSION":true,"TTL":1,"PATHWAY-PRIORITY":["a"]}"#)?.description
                == "steering manifest wrong-type: VERSION is a boolean, not a number")
        #expect(rejected(#"{"VERSION":"1","TTL":1,"PATHWAY-PRIORITY":["a"]}"#)?.kind == .wrongType)
        #expect(
            rejected(#"{"TTL":1,"PATHWAY-PRIORITY":["a"]}"#)?.description
                == "steering manifest missing-field: VERSION is required")
    }

    @Test func requiredFields() {
        #expect(rejected(#"{"VERSION":1,"PATHWAY-PRIORITY":["a"]}"#)?.description == "steering manifest missing-field: TTL is required")
        #expect(rejected(#"{"VERSION":1,"TTL":1}"#)?.description == "steering manifest missing-field: PATHWAY-PRIORITY is required")
    }

    @Test func badJSON_andNotAnObject() {
        #expect(rejected(#"{"VERSION":1,"TTL":1,"#)?.kind == .notJSON)
        #expect(rejected("")?.kind == .notJSON)
        #expect(rejected(#"["a"]"#)?.description == "steering manifest not-an-object: the top level is an array, not an object")
    }

    @Test func pathwayPriority_rules() throws {
        #expect(
            rejected(#"{"VERSION":1,"TTL":1,"PATHWAY-PRIORITY":[]}"#)?.description
                == "steering manifest invalid-value: PATHWAY-PRIORITY is empty")
        #expect(rejected(#"{"VERSION":1,"TTL":1,"PATHWAY-PRIORITY":"a"}"#)?.kind == .wrongType)
        #expect(
            rejected(#"{"VERSION":1,"TTL":1,"PATHWAY-PRIORITY":["a",2]}"#)?.description
                == "steering manifest wrong-type: PATHWAY-PRIORITY[1] is a number, not a string")
        #expect(
            rejected(#"{"VERSION":1,"TTL":1,"PATHWAY-PRIORITY":["a b"]}"#)?.description
                == "steering manifest invalid-value: PATHWAY-PRIORITY[0] \"a b\" is not a Pathway ID ([a-zA-Z0-9._-]+)")
        let dup = try steering(#"{"VERSION":1,"TTL":1,"PATHWAY-PRIORITY":["CDN-B","CDN_A.1","CDN-B"],"X-NEW":1}"#)
        #expect(dup.pathwayPriority == ["CDN-B", "CDN_A.1"])
        #expect(dup.warnings == ["ignored unknown keys: X-NEW", "PATHWAY-PRIORITY lists \"CDN-B\" twice; the first place is kept"])
    }

    @Test func sizeLimit_atLimitParses_overFails() throws {
        let head = #"{"VERSION":1,"TTL":1,"PATHWAY-PRIORITY":["a"]}"#
        let pad = SteeringManifest.maxBytes - head.utf8.count
        #expect(try steering(head + String(repeating: " ", count: pad)).pathwayPriority == ["a"])
        #expect(rejected(head + String(repeating: " ", count: pad + 1))?.kind == .tooLarge)
    }

    @Test func pathwayClones_parsed() throws {
        let m = try steering(
            """
            {"VERSION":1,"TTL":300,"PATHWAY-PRIORITY":["CDN-A","CDN-B"],
             "PATHWAY-CLONES":[{"BASE-ID":"CDN-A","ID":"CDN-B",
               "URI-REPLACEMENT":{"HOST":"b.example.com:8443","PARAMS":{"token":"x1"},
                 "PER-VARIANT-URIS":{"v0":"https://other.example/v0.m3u8","v1":"v1b.m3u8"},
                 "PER-RENDITION-URIS":{"en":"en-b.m3u8"}}}]}
            """)
        let c = try #require(m.pathwayClones.first)
        #expect(c.baseID == "CDN-A")
        #expect(c.id == "CDN-B")
        #expect(c.host == "b.example.com:8443")
        #expect(c.params == ["token": "x1"])
        #expect(c.perVariantURIs["v0"]?.absoluteString == "https://other.example/v0.m3u8")
        #expect(c.perVariantURIs["v1"]?.absoluteString == "http://example.com/path/v1b.m3u8")
        #expect(c.perRenditionURIs["en"]?.absoluteString == "http://example.com/path/en-b.m3u8")
    }

    @Test func pathwayClones_errors() {
        let pre = #"{"VERSION":1,"TTL":1,"PATHWAY-PRIORITY":["a"],"PATHWAY-CLONES":"#
        #expect(rejected(pre + #"{}}"#)?.description == "steering manifest wrong-type: PATHWAY-CLONES is an object, not an array")
        #expect(
            rejected(pre + #"[{"ID":"b","URI-REPLACEMENT":{}}]}"#)?.description
                == "steering manifest missing-field: PATHWAY-CLONES[0].BASE-ID is required")
        #expect(
            rejected(pre + #"[{"BASE-ID":"a","ID":"b"}]}"#)?.description
                == "steering manifest missing-field: PATHWAY-CLONES[0].URI-REPLACEMENT is required")
        #expect(rejected(pre + #"[{"BASE-ID":"a","ID":"b c","URI-REPLACEMENT":{}}]}"#)?.kind == .invalidValue)
        #expect(
            rejected(pre + #"[{"BASE-ID":"a","ID":"b","URI-REPLACEMENT":{"HOST":"x/y"}}]}"#)?.description
                == "steering manifest invalid-value: PATHWAY-CLONES[0].URI-REPLACEMENT.HOST \"x/y\" is not a host name")
        #expect(
            rejected(pre + #"[{"BASE-ID":"a","ID":"b","URI-REPLACEMENT":{"PARAMS":{"k":1}}}]}"#)?.description
                == "steering manifest wrong-type: PATHWAY-CLONES[0].URI-REPLACEMENT.PARAMS[\"k\"] is a number, not a string")
    }
}

@Suite struct PathwayCloneTests {
    let master = """
        #EXTM3U
        #EXT-X-CONTENT-STEERING:SERVER-URI="steering.json",PATHWAY-ID="a"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=YES,URI="a/en.m3u8",STABLE-RENDITION-ID="en"
        #EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="French",LANGUAGE="fr",URI="a/fr.m3u8",STABLE-RENDITION-ID="fr"
        #EXT-X-MEDIA:TYPE=CLOSED-CAPTIONS,GROUP-ID="cc",NAME="CC1",INSTREAM-ID="CC1"
        #EXT-X-STREAM-INF:BANDWIDTH=1000000,RESOLUTION=640x360,CODECS="avc1.64001e,mp4a.40.2",AUDIO="aud",CLOSED-CAPTIONS="cc",PATHWAY-ID="a",STABLE-VARIANT-ID="v0"
        a/v0.m3u8?x=1
        #EXT-X-STREAM-INF:BANDWIDTH=2000000,RESOLUTION=1280x720,CODECS="avc1.64001f,mp4a.40.2",AUDIO="aud",PATHWAY-ID="a",STABLE-VARIANT-ID="v1"
        a/v1.m3u8

        """

    @Test func parser_readsSteeringAttributes() throws {
        let m = try multivariant(master)
        #expect(m.contentSteering == ContentSteering(serverURI: URL(string: "http://example.com/path/steering.json")!, pathwayID: "a"))
        #expect(m.variants.map(\.pathwayID) == ["a", "a"])
        #expect(m.variants.map(\.stableVariantID) == ["v0", "v1"])
        #expect(m.renditions.map(\.stableRenditionID) == ["en", "fr", nil])
    }

    @Test func clone_hostAndParams_andPerURIs() throws {
        let m = try steering(
            """
            {"VERSION":1,"TTL":10,"PATHWAY-PRIORITY":["b","a"],"PATHWAY-CLONES":[{"BASE-ID":"a","ID":"b",
              "URI-REPLACEMENT":{"HOST":"127.0.0.1:9000","PARAMS":{"cdn":"b","x":"2"},
                                 "PER-VARIANT-URIS":{"v1":"https://v.example/v1.m3u8"},"PER-RENDITION-URIS":{"fr":"fr-b.m3u8"}}}]}
            """)
        let r = m.applyingClones(to: try multivariant(master))
        #expect(r.added == ["b"])
        #expect(r.skipped.isEmpty)
        let v = r.playlist.variants
        #expect(v.count == 4)
        #expect(v[2].pathwayID == "b")
        #expect(v[2].uri.absoluteString == "http://127.0.0.1:9000/path/a/v0.m3u8?cdn=b&x=2")
        #expect(v[3].uri.absoluteString == "https://v.example/v1.m3u8")
        #expect(v[2].audioGroup == "aud@b")
        #expect(v[2].closedCaptionsGroup == "cc")
        #expect(v[2].stableVariantID == "v0")
        #expect(v[2].bandwidthBps == 1_000_000)
        let audio = r.playlist.renditions.filter { $0.groupID == "aud@b" }
        #expect(audio.map(\.name) == ["English", "French"])
        #expect(
            audio.map { $0.uri?.absoluteString } == [
                "http://127.0.0.1:9000/path/a/en.m3u8?cdn=b&x=2",
                "http://example.com/path/fr-b.m3u8"
            ])
        #expect(r.playlist.renditions.count == 5)
        // The clone is one more redundant copy of each rung, and its audio group resolves.
        #expect(FailoverTracker.redundantGroups(v) == [[0, 2], [1, 3]])
        let c = try AudioRenditionSelector.select(for: v[2], renditions: r.playlist.renditions, preferences: AudioPreferences())
        #expect(c.rendition?.groupID == "aud@b")
    }

    @Test func clone_existingID_orUnknownBase_skipped() throws {
        let m = try steering(
            #"{"VERSION":1,"TTL":10,"PATHWAY-PRIORITY":["a"],"PATHWAY-CLONES":[{"BASE-ID":"a","ID":"a","URI-REPLACEMENT":{}},{"BASE-ID":"z","ID":"c","URI-REPLACEMENT":{}}]}"#
        )
        let p = try multivariant(master)
        let r = m.applyingClones(to: p)
        #expect(r.added.isEmpty)
        #expect(r.skipped == ["clone \"a\": the pathway already exists", "clone \"c\": BASE-ID \"z\" has no variants"])
        #expect(r.playlist == p)
    }

    @Test func clone_ofAClone_inOneManifest() throws {
        let m = try steering(
            #"{"VERSION":1,"TTL":10,"PATHWAY-PRIORITY":["c"],"PATHWAY-CLONES":[{"BASE-ID":"a","ID":"b","URI-REPLACEMENT":{"HOST":"b.example"}},{"BASE-ID":"b","ID":"c","URI-REPLACEMENT":{"PARAMS":{"p":"c"}}}]}"#
        )
        let r = m.applyingClones(to: try multivariant(master))
        #expect(r.added == ["b", "c"])
        #expect(r.playlist.variants.count == 6)
        #expect(r.playlist.variants[4].uri.absoluteString == "http://b.example/path/a/v0.m3u8?x=1&p=c")
        #expect(r.playlist.variants[4].audioGroup == "aud@b@c")
        #expect(r.playlist.renditions.filter { $0.groupID == "aud@b@c" }.count == 2)
    }
}

@Suite struct ContentSteeringClientTests {
    func t(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: s) }
    let sampleJSON = "{\n  \"VERSION\": 1,\n  \"TTL\": 4,\n  \"PATHWAY-PRIORITY\": [\"b\", \"a\"]\n}\n"

    func client(_ text: String = redundantSteeringMaster, at start: Double = 0) throws -> (ContentSteeringClient, MultivariantPlaylist) {
        let p = try multivariant(text)
        return (try #require(ContentSteeringClient(playlist: p, at: t(start))), p)
    }

    @Test func noTag_noClient() throws {
        #expect(ContentSteeringClient(playlist: try multivariant(redundantMaster), at: t(0)) == nil)
    }

    @Test func initialPathway_fromTheTag_andFirstLoadDueAtOnce() throws {
        let (c, _) = try client(at: 5)
        #expect(c.currentPathway == "a")
        #expect(c.initialPathwayReason == "EXT-X-CONTENT-STEERING PATHWAY-ID=\"a\"")
        #expect(c.pathways == ["a", "b"])
        #expect(c.pathwayOrder == ["a", "b"])
        #expect(!c.isReloadDue(at: t(4.999)))
        #expect(c.isReloadDue(at: t(5)))
    }

    @Test func initialPathway_unknownInTag_firstVariants() throws {
        let text = redundantSteeringMaster.replacingOccurrences(
            of: #"SERVER-URI="steering.json",PATHWAY-ID="a""#,
            with: #"SERVER-URI="steering.json",PATHWAY-ID="zz""#)
        let (c, _) = try client(text)
        #expect(c.currentPathway == "a")
        #expect(c.initialPathwayReason == "EXT-X-CONTENT-STEERING PATHWAY-ID=\"zz\" names no variant's pathway; the first variant's")
    }

    @Test func requestURL_addsPathwayAndThroughput_replacingOldValues() throws {
        var (c, _) = try client()
        #expect(c.requestURL(throughputBps: nil).absoluteString == "http://example.com/path/steering.json?_HLS_pathway=a")
        #expect(
            c.requestURL(throughputBps: 5_123_456.6).absoluteString
                == "http://example.com/path/steering.json?_HLS_pathway=a&_HLS_throughput=5123457")
        let m = try steering(#"{"VERSION":1,"TTL":4,"RELOAD-URI":"s2.json?k=v&_HLS_pathway=old&_HLS_throughput=1","PATHWAY-PRIORITY":["b","a"]}"#)
        _ = c.manifestLoaded(m, playlist: try multivariant(redundantSteeringMaster), excludedPathways: [:], at: t(0))
        #expect(
            c.requestURL(throughputBps: 800).absoluteString
                == "http://example.com/path/s2.json?k=v&_HLS_pathway=b&_HLS_throughput=800")
    }

    @Test func sampleManifest_movesToB_andSchedulesAfterTTL() throws {
        var (c, p) = try client()
        let u = c.manifestLoaded(try steering(sampleJSON), playlist: p, excludedPathways: [:], at: t(1))
        #expect(u.playlist == p)
        #expect(
            u.actions == [
                .priorityUpdated(["b", "a"], ttlSeconds: 4),
                .reloadScheduled(at: t(5), reason: "TTL 4.0 s"),
                .pathwayChanged(from: "a", to: "b", reason: "first in PATHWAY-PRIORITY order")
            ])
        #expect(c.currentPathway == "b")
        #expect(c.pathwayOrder == ["b", "a"])
        #expect(!c.isReloadDue(at: t(4.999)))
        #expect(c.isReloadDue(at: t(5)))
    }

    @Test func ttlBelowMinimum_raised() throws {
        var (c, p) = try client()
        let u = c.manifestLoaded(try steering(#"{"VERSION":1,"TTL":0,"PATHWAY-PRIORITY":["a"]}"#), playlist: p, excludedPathways: [:], at: t(10))
        #expect(u.actions.contains(.reloadScheduled(at: t(11), reason: "TTL 0.0 s raised to the 1.0 s minimum")))
        #expect(!c.isReloadDue(at: t(10.999)))
        #expect(c.isReloadDue(at: t(11)))
    }

    @Test func excludedPathway_skipped_andRestoredWhenPenaltyEnds() throws {
        var (c, p) = try client()
        var f = FailoverTracker(variants: p.variants)
        _ = c.manifestLoaded(try steering(sampleJSON), playlist: p, excludedPathways: [:], at: t(0))
        #expect(c.currentPathway == "b")
        for _ in 0..<2 { _ = f.recordFailure(variantIndex: 2, error: LoadError(kind: .connect, url: "x", message: "refused"), at: t(1)) }
        let away = c.reevaluate(excludedPathways: f.excludedPathways(at: t(1)), at: t(1))
        #expect(away == [.pathwayChanged(from: "b", to: "a", reason: "first in PATHWAY-PRIORITY order not excluded (excluded: b)")])
        // The tracker agrees on the variant for each rung.
        #expect(f.choose(rungOf: 0, pathwayOrder: c.pathwayOrder, at: t(1)).variantIndex == 0)
        #expect(f.choose(rungOf: 1, pathwayOrder: c.pathwayOrder, at: t(1)).variantIndex == 1)
        // Just before the penalty ends: still a. At the end: back to b.
        #expect(c.reevaluate(excludedPathways: f.excludedPathways(at: t(60.999)), at: t(60.999)).isEmpty)
        let back = c.reevaluate(excludedPathways: f.excludedPathways(at: t(61)), at: t(61))
        #expect(back == [.pathwayChanged(from: "a", to: "b", reason: "first in PATHWAY-PRIORITY order")])
    }

    @Test func allPathwaysExcluded_soonestPenaltyEnd() throws {
        var (c, p) = try client()
        _ = c.manifestLoaded(try steering(sampleJSON), playlist: p, excludedPathways: [:], at: t(0))
        let a = c.reevaluate(excludedPathways: ["a": t(50), "b": t(70)], at: t(10))
        #expect(a == [.pathwayChanged(from: "b", to: "a", reason: "all pathways excluded; this one's penalty ends first")])
    }

    @Test func beforeFirstManifest_currentThenPlaylistOrder() throws {
        var (c, _) = try client()
        let a = c.reevaluate(excludedPathways: ["a": t(60)], at: t(1))
        #expect(a == [.pathwayChanged(from: "a", to: "b", reason: "first in initial pathway order not excluded (excluded: a)")])
    }

    @Test func priority_unknownPathwaysIgnored_unlistedLast() throws {
        var (c, p) = try client()
        _ = c.manifestLoaded(try steering(#"{"VERSION":1,"TTL":4,"PATHWAY-PRIORITY":["zz","b"]}"#), playlist: p, excludedPathways: [:], at: t(0))
        #expect(c.pathwayOrder == ["b", "a"])
        #expect(c.currentPathway == "b")
    }

    @Test func failures_410stops_429waits_othersRetryAfterTTL() throws {
        var (c, p) = try client()
        // No manifest yet: retry after the named constant.
        let e503 = LoadError(kind: .httpStatus, url: "x", httpStatus: 503, message: "unavailable")
        #expect(c.manifestFailed(e503, at: t(0)) == [.reloadScheduled(at: t(30), reason: "HTTP 503; no TTL yet, retry after 30.0 s")])
        _ = c.manifestLoaded(try steering(sampleJSON), playlist: p, excludedPathways: [:], at: t(30))
        let timeout = LoadError(kind: .transferTimeout, url: "x", message: "slow")
        #expect(c.manifestFailed(timeout, at: t(34)) == [.reloadScheduled(at: t(38), reason: "transferTimeout; retry after the last TTL 4.0 s")])
        let e429 = LoadError(kind: .httpStatus, url: "x", httpStatus: 429, retryAfterSeconds: 20, message: "slow down")
        #expect(c.manifestFailed(e429, at: t(38)) == [.reloadScheduled(at: t(58), reason: "HTTP 429, Retry-After 20.0 s")])
        let rejected = c.manifestRejected(SteeringManifestError(kind: .unsupportedVersion, message: "VERSION 2 is not supported (only 1)"), at: t(58))
        #expect(rejected.first == .manifestRejected(reason: "steering manifest unsupported-version: VERSION 2 is not supported (only 1)"))
        #expect(c.isReloadDue(at: t(62)))
        #expect(c.priority == ["b", "a"])
        let e410 = LoadError(kind: .httpStatus, url: "x", httpStatus: 410, message: "gone")
        #expect(c.manifestFailed(e410, at: t(62)) == [.reloadingStopped(reason: "HTTP 410 Gone from the steering server")])
        #expect(!c.isReloadDue(at: t(10_000)))
        // A manifest that was in flight still applies, without scheduling a reload.
        let late = c.manifestLoaded(try steering(sampleJSON), playlist: p, excludedPathways: [:], at: t(63))
        #expect(!late.actions.contains { if case .reloadScheduled = $0 { true } else { false } })
        #expect(c.currentPathway == "b")
    }

    @Test func clones_joinPathwaysAndTheTracker() throws {
        var (c, p) = try client()
        var f = FailoverTracker(variants: p.variants)
        let m = try steering(
            #"{"VERSION":1,"TTL":4,"PATHWAY-PRIORITY":["c","b","a"],"PATHWAY-CLONES":[{"BASE-ID":"b","ID":"c","URI-REPLACEMENT":{"HOST":"localhost"}}]}"#
        )
        let u = c.manifestLoaded(m, playlist: p, excludedPathways: [:], at: t(0))
        #expect(u.actions.first == .clonesApplied(added: ["c"], skipped: []))
        #expect(c.pathways == ["a", "b", "c"])
        #expect(c.currentPathway == "c")
        f.appendVariants(Array(u.playlist.variants.dropFirst(p.variants.count)))
        #expect(f.rungs == [[0, 2, 4], [1, 3, 5]])
        let choice = f.choose(rungOf: 0, pathwayOrder: c.pathwayOrder, at: t(0))
        #expect(choice.uri.absoluteString == "http://localhost/path/b/v0/prog.m3u8")
        #expect(choice.pathwayID == "c")
    }
}
