// The failover penalty box in virtual time: the error threshold and the
// penalty length each tested just under and at, pathway order, all-excluded,
// restoration.

import Foundation
import Testing
@testable import HLSCore

/// The multivariant playlist Samples/make-variants.sh writes as redundant/steering.m3u8.
let redundantSteeringMaster = """
    #EXTM3U
    #EXT-X-VERSION:3
    #EXT-X-INDEPENDENT-SEGMENTS
    #EXT-X-CONTENT-STEERING:SERVER-URI="steering.json",PATHWAY-ID="a"
    #EXT-X-STREAM-INF:BANDWIDTH=623408,AVERAGE-BANDWIDTH=606300,RESOLUTION=416x234,FRAME-RATE=24.000,CODECS="avc1.64000d,mp4a.40.2",PATHWAY-ID="a",STABLE-VARIANT-ID="v0"
    a/v0/prog.m3u8
    #EXT-X-STREAM-INF:BANDWIDTH=1307728,AVERAGE-BANDWIDTH=1267120,RESOLUTION=640x360,FRAME-RATE=24.000,CODECS="avc1.64001e,mp4a.40.2",PATHWAY-ID="a",STABLE-VARIANT-ID="v1"
    a/v1/prog.m3u8
    #EXT-X-STREAM-INF:BANDWIDTH=623408,AVERAGE-BANDWIDTH=606300,RESOLUTION=416x234,FRAME-RATE=24.000,CODECS="avc1.64000d,mp4a.40.2",PATHWAY-ID="b",STABLE-VARIANT-ID="v0"
    b/v0/prog.m3u8
    #EXT-X-STREAM-INF:BANDWIDTH=1307728,AVERAGE-BANDWIDTH=1267120,RESOLUTION=640x360,FRAME-RATE=24.000,CODECS="avc1.64001e,mp4a.40.2",PATHWAY-ID="b",STABLE-VARIANT-ID="v1"
    b/v1/prog.m3u8

    """

/// redundant/master.m3u8: the same without pathways.
let redundantMaster =
    redundantSteeringMaster
    .split(separator: "\n", omittingEmptySubsequences: false)
    .filter { !$0.hasPrefix("#EXT-X-CONTENT-STEERING") }
    .map { $0.replacingOccurrences(of: #",PATHWAY-ID="[ab]",STABLE-VARIANT-ID="v[01]""#, with: "", options: .regularExpression) }
    .joined(separator: "\n")

@Suite struct FailoverTrackerTests {
    func t(_ s: Double) -> MonotonicInstant { MonotonicInstant(seconds: s) }
    func http(_ status: Int) -> LoadError { LoadError(kind: .httpStatus, url: "x", httpStatus: status, message: "HTTP \(status)") }
    let timeout = LoadError(kind: .firstByteTimeout, url: "x", message: "no first byte")

    func tracker(_ text: String = redundantMaster, _ c: FailoverConfiguration = FailoverConfiguration()) throws -> FailoverTracker {
        FailoverTracker(variants: try multivariant(text).variants, configuration: c)
    }

    @Test func constants_asDocumented() {
        #expect(FailoverConfiguration.defaultErrorsBeforeFailover == 2)
        #expect(FailoverConfiguration.defaultPenaltySeconds == 60)
    }

    @Test func grouping_sameBandwidthResolutionCodecs_isOneRung() throws {
        let f = try tracker()
        #expect(f.rungs == [[0, 2], [1, 3]])
        #expect(f.ladderVariantIndices == [0, 1])
        #expect(f.redundantAlternatives(of: 2) == [0])
    }

    @Test func grouping_differentResolutionOrCodecs_areDifferentRungs() {
        let u = { (s: String) in URL(string: "http://o/\(s)")! }
        let v = [
            VariantStream(uri: u("a"), bandwidthBps: 1000, codecs: ["avc1.4d401f", "mp4a.40.2"], resolution: Resolution(width: 640, height: 360)),
            VariantStream(uri: u("b"), bandwidthBps: 1000, codecs: ["mp4a.40.2", "avc1.4d401f"], resolution: Resolution(width: 640, height: 360)),
            VariantStream(uri: u("c"), bandwidthBps: 1000, codecs: ["avc1.4d401f", "mp4a.40.2"], resolution: Resolution(width: 416, height: 234)),
            VariantStream(uri: u("d"), bandwidthBps: 1000, codecs: ["hvc1.1.6.L93.B0", "mp4a.40.2"], resolution: Resolution(width: 640, height: 360)),
            VariantStream(uri: u("e"), bandwidthBps: 1001, codecs: ["avc1.4d401f", "mp4a.40.2"], resolution: Resolution(width: 640, height: 360))
        ]
        #expect(FailoverTracker.redundantGroups(v) == [[0, 1], [2], [3], [4]])
    }

    @Test func threshold_oneError_stays_twoErrors_failsOver() throws {
        var f = try tracker()
        #expect(f.choose(rungOf: 0, at: t(0)).variantIndex == 0)
        let a1 = f.recordFailure(variantIndex: 0, error: http(503), at: t(1))
        #expect(a1 == [.errorCounted(uri: f.variants[0].uri, consecutiveErrors: 1, threshold: 2)])
        #expect(f.choose(rungOf: 0, at: t(1)).variantIndex == 0)
        let a2 = f.recordFailure(variantIndex: 0, error: http(503), at: t(2))
        #expect(a2 == [.excluded(.uri(f.variants[0].uri), until: t(62), reason: "2 consecutive errors (threshold 2), last HTTP 503")])
        let c = f.choose(rungOf: 0, at: t(2))
        #expect(c.variantIndex == 2)
        #expect(c.kind == .failover)
        #expect(c.changed)
        #expect(c.previousVariantIndex == 0)
        #expect(c.reason == "failover: /path/a/v0/prog.m3u8 [.] excluded for 60.0 s more (was /path/a/v0/prog.m3u8 [.])")
        // The other rung is untouched (no PATHWAY-ID: nothing but the URI is excluded).
        #expect(f.choose(rungOf: 1, at: t(2)).variantIndex == 1)
    }

    @Test func success_resetsTheConsecutiveCount() throws {
        var f = try tracker()
        _ = f.recordFailure(variantIndex: 0, error: timeout, at: t(1))
        f.recordSuccess(variantIndex: 0)
        let a = f.recordFailure(variantIndex: 0, error: timeout, at: t(2))
        #expect(a == [.errorCounted(uri: f.variants[0].uri, consecutiveErrors: 1, threshold: 2)])
        #expect(f.choose(rungOf: 0, at: t(2)).variantIndex == 0)
    }

    @Test func cancelled_doesNotCount() throws {
        var f = try tracker()
        let cancelled = LoadError(kind: .cancelled, url: "x", message: "abandoned")
        #expect(f.recordFailure(variantIndex: 0, error: cancelled, at: t(1)).isEmpty)
        #expect(f.recordFailure(variantIndex: 0, error: cancelled, at: t(2)).isEmpty)
        #expect(f.choose(rungOf: 0, at: t(2)).variantIndex == 0)
    }

    @Test func penalty_justBeforeEnd_excluded_atEnd_restored() throws {
        var f = try tracker()
        _ = f.recordFailure(variantIndex: 0, error: http(500), at: t(10))
        _ = f.recordFailure(variantIndex: 0, error: http(500), at: t(10))
        #expect(f.choose(rungOf: 0, at: t(69.999)).variantIndex == 2)
        let back = f.choose(rungOf: 0, at: t(70))
        #expect(back.variantIndex == 0)
        #expect(back.kind == .preferred)
        #expect(back.changed)
        #expect(back.actions == [.restored(.uri(f.variants[0].uri), at: t(70))])
        // Restored with a clean count: one new error does not exclude it again.
        #expect(f.recordFailure(variantIndex: 0, error: http(500), at: t(71)).count == 1)
        #expect(f.choose(rungOf: 0, at: t(71)).variantIndex == 0)
    }

    @Test func errorsWhileExcluded_doNotExtendThePenalty() throws {
        var f = try tracker()
        _ = f.recordFailure(variantIndex: 0, error: http(500), at: t(0))
        _ = f.recordFailure(variantIndex: 0, error: http(500), at: t(0))
        #expect(f.recordFailure(variantIndex: 0, error: http(500), at: t(30)).isEmpty)
        #expect(f.recordFailure(variantIndex: 0, error: http(500), at: t(31)).isEmpty)
        #expect(f.penaltyEnd(of: .uri(f.variants[0].uri), at: t(31)) == t(60))
    }

    @Test func allExcluded_usesThePenaltyThatEndsFirst() throws {
        var f = try tracker()
        for _ in 0..<2 { _ = f.recordFailure(variantIndex: 0, error: http(503), at: t(0)) }
        for _ in 0..<2 { _ = f.recordFailure(variantIndex: 2, error: http(503), at: t(5)) }
        let c = f.choose(rungOf: 2, at: t(6))
        #expect(c.variantIndex == 0)
        #expect(c.kind == .allExcluded)
        #expect(c.reason == "all 2 variants of the rung excluded; this one's penalty ends first (in 54.0 s)")
        // b's penalty ends first once a is excluded later.
        var g = try tracker()
        for _ in 0..<2 { _ = g.recordFailure(variantIndex: 2, error: http(503), at: t(0)) }
        for _ in 0..<2 { _ = g.recordFailure(variantIndex: 0, error: http(503), at: t(5)) }
        #expect(g.choose(rungOf: 0, at: t(6)).variantIndex == 2)
    }

    @Test func unchangedAnswer_isNotReportedAsChanged() throws {
        var f = try tracker()
        let first = f.choose(rungOf: 0, at: t(0))
        #expect(!first.changed)
        #expect(first.reason == "first of 2 redundant variants in playlist order")
        #expect(!f.choose(rungOf: 2, at: t(1)).changed)
    }

    // MARK: pathways

    @Test func pathway_failure_excludesTheWholePathway() throws {
        var f = try tracker(redundantSteeringMaster)
        _ = f.recordFailure(variantIndex: 0, error: timeout, at: t(0))
        let a = f.recordFailure(variantIndex: 0, error: timeout, at: t(1))
        #expect(a.count == 2)
        #expect(
            a.last
                == .excluded(
                    .pathway("a"), until: t(61),
                    reason: "variant /path/a/v0/prog.m3u8 on it excluded after 2 consecutive errors"))
        #expect(f.excludedPathways(at: t(1)) == ["a": t(61)])
        // The 360p rung moves too although a/v1 never failed.
        let c = f.choose(rungOf: 1, pathwayOrder: ["a", "b"], at: t(2))
        #expect(c.variantIndex == 3)
        #expect(c.pathwayID == "b")
        #expect(c.kind == .failover)
        #expect(f.excludedPathways(at: t(61)).isEmpty)
    }

    @Test func pathway_notExcluded_whenConfiguredOff() throws {
        var f = try tracker(redundantSteeringMaster, FailoverConfiguration(excludeWholePathway: false))
        for _ in 0..<2 { _ = f.recordFailure(variantIndex: 0, error: timeout, at: t(0)) }
        #expect(f.excludedPathways(at: t(0)).isEmpty)
        #expect(f.choose(rungOf: 1, pathwayOrder: ["a", "b"], at: t(0)).variantIndex == 1)
        #expect(f.choose(rungOf: 0, pathwayOrder: ["a", "b"], at: t(0)).variantIndex == 2)
    }

    @Test func pathwayOrder_decidesThePreferredMember() throws {
        var f = try tracker(redundantSteeringMaster)
        let b = f.choose(rungOf: 0, pathwayOrder: ["b", "a"], at: t(0))
        #expect(b.variantIndex == 2)
        #expect(b.kind == .preferred)
        #expect(b.reason == "first of 2 redundant variants in pathway order")
        #expect(f.choose(rungOf: 0, pathwayOrder: ["a", "b"], at: t(1)).variantIndex == 0)
    }

    @Test func pathwayOrder_unlistedPathwayOnlyAsLastResort() throws {
        var f = try tracker(redundantSteeringMaster)
        #expect(f.choose(rungOf: 0, pathwayOrder: ["b"], at: t(0)).variantIndex == 2)
        for _ in 0..<2 { _ = f.recordFailure(variantIndex: 2, error: http(404), at: t(1)) }
        let c = f.choose(rungOf: 0, pathwayOrder: ["b"], at: t(1))
        #expect(c.variantIndex == 0)
        #expect(c.kind == .failover)
    }

    @Test func singleVariantRung_staysEvenWhenExcluded() throws {
        var f = FailoverTracker(variants: [VariantStream(uri: URL(string: "http://o/only.m3u8")!, bandwidthBps: 1)])
        #expect(f.choose(rungOf: 0, at: t(0)).reason == "only variant of its rung")
        for _ in 0..<2 { _ = f.recordFailure(variantIndex: 0, error: http(503), at: t(0)) }
        let c = f.choose(rungOf: 0, at: t(1))
        #expect(c.variantIndex == 0)
        #expect(c.kind == .allExcluded)
    }

    @Test func actionsDescribe_withoutQueryValues() {
        let u = URL(string: "http://o/a/v0/prog.m3u8?token=secret")!
        let d = FailoverAction.excluded(.uri(u), until: t(5), reason: "r").description
        #expect(d == "URI http://o/a/v0/prog.m3u8?token=REDACTED excluded until 5.000000s: r")
        #expect(FailoverAction.restored(.pathway("b"), at: t(1)).description == "pathway \"b\" restored at 1.000000s: penalty over")
    }
}
