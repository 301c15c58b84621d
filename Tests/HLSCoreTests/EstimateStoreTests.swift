import Foundation
import Testing
@testable import HLSCore

/// The store model and the estimate-availability gate. Wall-clock times are
/// plain seconds since 1970, passed in.
@Suite struct EstimateStoreTests {
    let home = NetworkKey(originHost: "cdn.example", localNetwork: "eth0/192.168.1.1")
    let cafe = NetworkKey(originHost: "cdn.example", localNetwork: "wlan0/10.0.0.1")
    let t0 = 1_800_000_000.0

    func record(_ key: NetworkKey, bps: Double = 8e6, samples: Int = 5, at: Double) -> EstimateRecord {
        EstimateRecord(networkKey: key, valueBps: bps, sampleCount: samples, measuredAt: at)
    }

    @Test func lookup_emptyStore_absent() {
        #expect(EstimateStoreSnapshot().lookup(home, nowWallSeconds: t0) == .absent)
    }

    @Test func lookup_justUnderTTL_fresh() {
        let s = EstimateStoreSnapshot(records: [record(home, at: t0)])
        #expect(s.lookup(home, nowWallSeconds: t0 + 359.999).kind == "fresh")
    }

    @Test func lookup_atTTL_expired() {
        let s = EstimateStoreSnapshot(records: [record(home, at: t0)])
        #expect(s.lookup(home, nowWallSeconds: t0 + 360) == .expired(record(home, at: t0), ageSeconds: 360))
    }

    @Test func lookup_futureDated_justUnderTolerance_fresh_atTolerance_expired() {
        let s = EstimateStoreSnapshot(records: [record(home, at: t0)])
        #expect(s.lookup(home, nowWallSeconds: t0 - 60).kind == "fresh")
        #expect(s.lookup(home, nowWallSeconds: t0 - 60.001).kind == "expired")
    }

    @Test func lookup_otherNetworkOnly_networkChanged() {
        let s = EstimateStoreSnapshot(records: [record(cafe, at: t0)])
        #expect(s.lookup(home, nowWallSeconds: t0 + 1) == .networkChanged(previous: record(cafe, at: t0)))
    }

    @Test func lookup_otherOriginOnly_absent() {
        let s = EstimateStoreSnapshot(records: [record(NetworkKey(originHost: "other.example", localNetwork: home.localNetwork), at: t0)])
        #expect(s.lookup(home, nowWallSeconds: t0 + 1) == .absent)
    }

    @Test func networkKey_hostIsCaseInsensitive() {
        #expect(NetworkKey(originHost: "CDN.Example", localNetwork: "x") == NetworkKey(originHost: "cdn.example", localNetwork: "x"))
    }

    @Test func updating_replacesSameKey_keepsOthers_dropsOldestBeyondMaximum() {
        var config = EstimateStoreConfiguration()
        config.maximumRecords = 2
        var s = EstimateStoreSnapshot()
        s = s.updating(with: record(home, bps: 1e6, at: t0), configuration: config)
        s = s.updating(with: record(home, bps: 2e6, at: t0 + 10), configuration: config)
        #expect(s.records.count == 1)
        #expect(s.records[0].valueBps == 2e6)
        s = s.updating(with: record(cafe, at: t0 + 20), configuration: config)
        let third = NetworkKey(originHost: "third.example", localNetwork: "x")
        s = s.updating(with: record(third, at: t0 + 30), configuration: config)
        #expect(s.records.map(\.networkKey) == [third, cafe])
    }

    @Test func updating_rejectsNonFiniteOrEmptyRecords() {
        let s = EstimateStoreSnapshot()
        #expect(s.updating(with: record(home, bps: .nan, at: t0)).records.isEmpty)
        #expect(s.updating(with: record(home, bps: 0, at: t0)).records.isEmpty)
        #expect(s.updating(with: record(home, samples: 0, at: t0)).records.isEmpty)
    }

    @Test func encodeDecode_roundTrips_versionedDocument() throws {
        let s = EstimateStoreSnapshot(records: [record(home, at: t0), record(cafe, bps: 3e6, samples: 2, at: t0 + 5)])
        let data = s.encoded()
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"schema\" : \"hlsplay.estimate-store\""))
        #expect(text.contains("\"version\" : 1"))
        #expect(try EstimateStoreSnapshot.decode(data) == s)
    }

    @Test func decode_garbage_malformed() {
        #expect(throws: EstimateStoreError.self) { try EstimateStoreSnapshot.decode(Data("not json".utf8)) }
        #expect(throws: EstimateStoreError.malformed("schema is not hlsplay.estimate-store")) {
            try EstimateStoreSnapshot.decode(Data(#"{"schema":"other","version":1,"records":[]}"#.utf8))
        }
    }

    @Test func decode_newerVersion_unsupported() {
        #expect(throws: EstimateStoreError.unsupportedVersion(2)) {
            try EstimateStoreSnapshot.decode(Data(#"{"schema":"hlsplay.estimate-store","version":2,"records":[]}"#.utf8))
        }
    }

    // MARK: The gate

    @Test func gate_fresh_warm() {
        let r = record(home, at: t0)
        #expect(EstimateGate.classify(.fresh(r, ageSeconds: 10)) == .warm(r))
    }

    @Test func gate_forcedCold_winsOverFresh() {
        #expect(EstimateGate.classify(.fresh(record(home, at: t0), ageSeconds: 10), forcedCold: true) == .cold(.forced))
    }

    @Test func gate_eachColdReason() {
        let r = record(home, at: t0)
        #expect(EstimateGate.classify(.absent) == .cold(.noEstimate))
        #expect(EstimateGate.classify(.expired(r, ageSeconds: 400)) == .cold(.expired))
        #expect(EstimateGate.classify(.networkChanged(previous: r)) == .cold(.networkChanged))
        #expect(EstimateGate.classify(nil) == .cold(.storeUnreadable))
    }

    @Test func gate_sampleCount_justUnderMinimum_cold_atMinimum_warm() {
        let under = record(home, samples: 1, at: t0)
        let at = record(home, samples: 2, at: t0)
        #expect(EstimateGate.classify(.fresh(under, ageSeconds: 1)) == .cold(.tooFewSamples))
        #expect(EstimateGate.classify(.fresh(at, ageSeconds: 1)) == .warm(at))
    }

    @Test func gate_storeLookupAtTTLBoundary_endToEnd() {
        let s = EstimateStoreSnapshot(records: [record(home, at: t0)])
        #expect(EstimateGate.classify(s.lookup(home, nowWallSeconds: t0 + 359.9)).kind == "warm")
        #expect(EstimateGate.classify(s.lookup(home, nowWallSeconds: t0 + 360)) == .cold(.expired))
    }

    @Test func gateRecord_carriesLookupAndAge() throws {
        let r = record(home, at: t0)
        let g = GateDecisionRecord(gate: .cold(.expired), lookup: .expired(r, ageSeconds: 400), networkKey: home, mode: .auto)
        #expect(g.gate == "cold")
        #expect(g.coldReason == .expired)
        #expect(g.lookup == "expired")
        #expect(g.recordAgeSeconds == 400)
        #expect(g.ttlSeconds == 360)
        let line = SessionLogEncoder().line(g)
        #expect(line.contains("\"coldReason\":\"expired\""))
    }
}
