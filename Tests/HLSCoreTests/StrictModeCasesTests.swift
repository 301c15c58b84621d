// hls-parser's 235 strict-mode pass/fail cases (kuu-hls-parser/strict-mode-cases.json).
// We compute our verdict on each; where it differs from hls-parser's strict
// verdict the case must be in `knownDifferences` with the reason, so any
// change in either direction is noticed.

import Foundation
import Testing
@testable import HLSCore

struct StrictModeCasesTests {
    static let versionRule = "version compatibility is not enforced: players play streams whose EXT-X-VERSION is too low"
    static let publishingRule = "server-side publishing rule a client cannot act on: accepted silently"
    static let groupRule = "rendition-group consistency across tags is a warning, not fatal: a variant is still playable"
    static let stricterSyntax = "we are stricter: malformed attribute syntax is fatal"

    /// `"<case id> [<hls-parser verdict>]"` → why our verdict differs from hls-parser strict mode.
    /// (The id alone is not unique: `#EXT-X-DATERANGE_02#1` appears twice, as pass and as fail, with the same text.)
    static let knownDifferences: [String: String] = [
        "#EXTINF_02#2 [fail]": versionRule,
        "#EXT-X-BYTERANGE_04#1 [fail]": versionRule,
        "#EXT-X-KEY_05#1 [fail]": versionRule,
        "#EXT-X-MAP_03#1 [fail]": versionRule,
        "#EXT-X-MAP_04#1 [fail]": versionRule,
        "#EXT-X-I-FRAMES-ONLY_01#1 [fail]": versionRule,
        "#EXT-X-SKIP_03#2 [fail]": versionRule,
        "#EXT-X-VERSION_02#2 [fail]": versionRule,
        "#EXT-X-VERSION_03#2 [fail]": versionRule,
        "#EXT-X-VERSION_04#2 [fail]": versionRule,
        "#EXT-X-VERSION_05#2 [fail]": versionRule,
        "#EXT-X-VERSION_06#2 [fail]": versionRule,
        "#EXT-X-VERSION_07#2 [fail]": versionRule,
        "#EXT-X-VERSION_08#2 [fail]": versionRule,
        "#EXT-X-VERSION_09#2 [fail]": versionRule,
        "#EXT-X-VERSION_10#2 [fail]": versionRule,
        "#EXT-X-VERSION_11#2 [fail]": versionRule,
        "#EXT-X-KEY_03#1 [fail]": "METHOD=NONE with other attributes is a warning: python-m3u8's own fixture writes METHOD=NONE,URI=\"\"",
        "#EXT-X-TARGETDURATION_01#2 [fail]": "EXTINF rounding above TARGETDURATION is a warning: hls.js accepts 1000000 s vs 1 s; encoders overshoot",
        "#EXT-X-PART-INF_01#2 [fail]": "EXT-X-PART without EXT-X-PART-INF is a warning: hls.js accepts it; whole segments still play",
        "#EXT-X-DATERANGE_02#1 [fail]":
            "the same text is also case #EXT-X-DATERANGE_02#1 [pass] (START-DATE optional in the draft): we follow the pass",
        "#EXT-X-DATERANGE_09#1 [fail]": publishingRule + " (overlapping DATERANGEs of one CLASS)",
        "#EXT-X-DATERANGE_12#1 [fail]": publishingRule + " (DATERANGE without PROGRAM-DATE-TIME)",
        "#EXT-X-TAG_02#1 [fail]": publishingRule + " (EXT-X-GAP before parts with no segment yet)",
        "#EXT-X-PART-INF_03#2 [fail]": publishingRule + " (part longer than PART-TARGET)",
        "#EXT-X-PART-INF_04#2 [fail]": publishingRule + " (part shorter than 85% of PART-TARGET)",
        "#EXT-X-PART_01#2 [fail]": publishingRule + " (MAP after the first part of its parent segment)",
        "#EXT-X-PART_01#4 [fail]": publishingRule + " (DISCONTINUITY after the first part of its parent segment)",
        "#EXT-X-PART_01#6 [fail]": publishingRule + " (KEY after the first part of its parent segment)",
        "#EXT-X-PART_02#2 [fail]": publishingRule + " (parts older than 3 target durations kept)",
        "#EXT-X-PRELOAD-HINT_06#2 [fail]": publishingRule + " (no PRELOAD-HINT in a live LL playlist)",
        "#EXT-X-PRELOAD-HINT_07#2 [fail]": publishingRule + " (two PRELOAD-HINTs of one TYPE)",
        "#EXT-X-PRELOAD-HINT_07#4 [fail]": publishingRule + " (two PRELOAD-HINTs of one TYPE)",
        "#EXT-X-RENDITION-REPORT_02#2 [fail]": publishingRule + " (absolute RENDITION-REPORT URI resolves fine)",
        "#EXT-X-SERVER-CONTROL_01#2 [fail]": publishingRule + " (CAN-BLOCK-RELOAD missing)",
        "#EXT-X-SERVER-CONTROL_03#2 [fail]": publishingRule + " (CAN-SKIP-UNTIL < 6 x target)",
        "#EXT-X-SERVER-CONTROL_05#2 [fail]": publishingRule + " (HOLD-BACK < 3 x target)",
        "#EXT-X-SERVER-CONTROL_06#2 [fail]": publishingRule + " (PART-HOLD-BACK missing)",
        "#EXT-X-SERVER-CONTROL_07#2 [fail]": publishingRule + " (PART-HOLD-BACK < PART-TARGET)",
        "#EXT-X-SESSION-DATA_03#1 [fail]": publishingRule + " (duplicate SESSION-DATA)",
        "#EXT-X-SESSION-KEY_02#1 [fail]": publishingRule + " (duplicate SESSION-KEY)",
        "#EXT-X-STREAM-INF_10#1 [fail]": publishingRule + " (SCORE on only some variants is a SHOULD)",
        "#EXT-X-STREAM-INF_11#1 [fail]": "ALLOWED-CPC content is not validated (kept raw in attributes)",
        "#EXT-X-STREAM-INF_12#1 [fail]": "unknown enumerated VIDEO-RANGE is kept for forward compatibility",
        "#EXT-X-MEDIA_08#1 [fail]": groupRule,
        "#EXT-X-MEDIA_09#1 [fail]": groupRule,
        "#EXT-X-STREAM-INF_04#1 [fail]": groupRule,
        "#EXT-X-STREAM-INF_05#1 [fail]": groupRule,
        "#EXT-X-STREAM-INF_06#1 [fail]": groupRule,
        "#EXT-X-STREAM-INF_07#1 [fail]": groupRule,
        "#EXT-X-STREAM-INF_07-02#1 [fail]": groupRule,
        "#EXT-X-MEDIA_04#2 [pass]": stricterSyntax + " (`DEFAULT=YES\"` has a stray quote)",
        "#EXT-X-MEDIA_05#2 [pass]": stricterSyntax + " (`DEFAULT=YES\"` has a stray quote)",
        "#EXT-X-I-FRAME-STREAM-INF_01#2 [pass]": stricterSyntax + " (URI must be a quoted-string)"
    ]

    @Test func verdicts_agreeExceptKnownDifferences() throws {
        let root = try Fixtures.json("kuu-hls-parser/strict-mode-cases.json")
        let cases = try #require(root["cases"] as? [[String: Any]])
        #expect(cases.count == 235)
        var agree = 0
        var differences: [String: String] = [:]
        var passAgree = 0, failAgree = 0
        for c in cases {
            let id = try #require(c["id"] as? String)
            let text = try #require(c["text"] as? String)
            let expected = try #require(c["expect"] as? String)
            var ours = "pass"
            var detail = ""
            do {
                _ = try PlaylistParser.parse(text, baseURL: URL(string: "http://example.com/playlist.m3u8")!)
            } catch {
                ours = "fail"
                detail = error.description
            }
            if ours == expected {
                agree += 1
                if ours == "pass" { passAgree += 1 } else { failAgree += 1 }
            } else {
                differences["\(id) [\(expected)]"] = "hls-parser \(expected), we \(ours) \(detail)"
            }
        }
        print("strict-mode cases: agree \(agree)/\(cases.count) (pass \(passAgree)/129, fail \(failAgree)/106)")
        for (id, d) in differences.sorted(by: { $0.key < $1.key }) { print("  differs \(id): \(d)") }
        #expect(
            Set(differences.keys) == Set(Self.knownDifferences.keys),
            "unexpected: \(Set(differences.keys).subtracting(Self.knownDifferences.keys).sorted()), no longer differing: \(Set(Self.knownDifferences.keys).subtracting(differences.keys).sorted())"
        )
        #expect(agree >= 181)
    }

    /// The 8 strict-fail files: our verdict on each, asserted.
    @Test(arguments: [
        ("extm3u-not-first-line.m3u8", PlaylistError.Kind?.some(.missingHeader)),
        ("uri-without-extinf.m3u8", .missingRequiredTag),
        ("byterange-no-offset-different-resource.m3u8", .constraintViolation),
        ("extinf-exceeds-targetduration.m3u8", nil), // warning, see knownDifferences
        ("stream-inf-without-uri.m3u8", .missingURI),
        ("part-without-part-inf.m3u8", nil), // warning, see knownDifferences
        ("preload-hint-without-type.m3u8", .missingRequiredAttribute),
        ("skip-without-skipped-segments.m3u8", .missingRequiredAttribute)
    ])
    func strictFailFile(_ name: String, _ kind: PlaylistError.Kind?) throws {
        let data = try Fixtures.data("kuu-hls-parser/strict-fail/\(name)")
        let e = playlistError { () throws(PlaylistError) in try PlaylistParser.parse(data: data, baseURL: testBase) }
        #expect(e?.kind == kind, "\(name): \(e.map(\.description) ?? "parsed")")
        if let e { #expect(e.lineNumber > 0 && !e.rule.isEmpty) }
    }
}
