// The estimate-availability gate and the model of the persistent estimate store.
//
// A startup decides its cap from one question: is there a trustworthy
// throughput estimate for this origin on this network? The store keeps one
// record per (origin host, local network); the runtime reads and writes the
// file, this file only models, (de)serializes and classifies. Times in a
// record are wall-clock seconds since 1970 (the store outlives the process,
// so a monotonic clock cannot date it); they are passed in, never read.
// Policy and thresholds: docs/startup-cap.md.

import Foundation

/// Which network an estimate was measured on: the origin host and an opaque
/// identity of the local network (e.g. default-route interface + gateway
/// address, as the runtime chooses to describe it).
public struct NetworkKey: Sendable, Hashable, Codable, CustomStringConvertible {
    public var originHost: String
    public var localNetwork: String
    public init(originHost: String, localNetwork: String) {
        self.originHost = originHost.lowercased()
        self.localNetwork = localNetwork
    }
    public var description: String { "\(originHost)@\(localNetwork)" }
}

/// One stored estimate.
public struct EstimateRecord: Sendable, Equatable, Codable {
    public var networkKey: NetworkKey
    /// The estimate, bits per second.
    public var valueBps: Double
    /// How many accepted (network-limited) samples it was built from.
    public var sampleCount: Int
    /// When it was measured: wall-clock seconds since 1970-01-01 UTC.
    public var measuredAt: Double
    public init(networkKey: NetworkKey, valueBps: Double, sampleCount: Int, measuredAt: Double) {
        self.networkKey = networkKey
        self.valueBps = valueBps
        self.sampleCount = sampleCount
        self.measuredAt = measuredAt
    }
}

/// Tunables of the store and the gate.
public struct EstimateStoreConfiguration: Sendable, Equatable, Codable {
    /// A record younger than this is fresh; at this age and older it is
    /// expired. Seconds. dash.js trusts its cached last bitrate for 6 min;
    /// the same order here (networks change faster than that rarely).
    public var ttlSeconds: Double = 360
    /// A record dated more than this into the future (the wall clock was set
    /// back) is treated as expired, seconds. Small skew is tolerated.
    public var futureToleranceSeconds: Double = 60
    /// A fresh record built from fewer samples than this does not make a warm
    /// start (one sample can be a fluke). Count.
    public var minimumSampleCount: Int = 2
    /// At most this many records are kept; the oldest are dropped. Count.
    public var maximumRecords: Int = 64
    public init() {}
}

/// What the store says about a key at an instant.
public enum EstimateLookup: Sendable, Equatable {
    /// A record for this origin on this network, younger than the TTL.
    case fresh(EstimateRecord, ageSeconds: Double)
    /// A record for this origin on this network, as old as the TTL or older
    /// (or dated implausibly far into the future).
    case expired(EstimateRecord, ageSeconds: Double)
    /// No record for this origin on this network, but one for this origin on
    /// another network: the local network changed.
    case networkChanged(previous: EstimateRecord)
    /// Nothing for this origin.
    case absent

    public var kind: String {
        switch self {
        case .fresh: "fresh"
        case .expired: "expired"
        case .networkChanged: "network-changed"
        case .absent: "absent"
        }
    }
}

public enum EstimateStoreError: Error, Equatable, Sendable {
    /// The file is not a store document (not JSON, wrong schema name).
    case malformed(String)
    /// A store written by a newer hlsplay.
    case unsupportedVersion(Int)
}

/// The whole store as one versioned JSON document.
public struct EstimateStoreSnapshot: Sendable, Equatable, Codable {
    public static let schemaName = "hlsplay.estimate-store"
    public static let schemaVersion = 1

    public var schema: String
    public var version: Int
    public var records: [EstimateRecord]

    public init(records: [EstimateRecord] = []) {
        schema = Self.schemaName
        version = Self.schemaVersion
        self.records = records
    }

    /// JSON with sorted keys (stable on disk, diffable).
    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        // Values are finite by construction (`updating` drops non-finite ones).
        return (try? encoder.encode(self)) ?? Data()
    }

    /// Decodes a store document. An unreadable store is an error the runtime
    /// turns into a cold start (reason `storeUnreadable`), never a crash.
    public static func decode(_ data: Data) throws -> EstimateStoreSnapshot {
        struct Header: Decodable { var schema: String?; var version: Int? }
        guard let header = try? JSONDecoder().decode(Header.self, from: data) else {
            throw EstimateStoreError.malformed("not a JSON object")
        }
        guard header.schema == schemaName else { throw EstimateStoreError.malformed("schema is not \(schemaName)") }
        guard let version = header.version else { throw EstimateStoreError.malformed("no version") }
        guard version <= schemaVersion else { throw EstimateStoreError.unsupportedVersion(version) }
        do {
            return try JSONDecoder().decode(EstimateStoreSnapshot.self, from: data)
        } catch {
            throw EstimateStoreError.malformed("records: \(error)")
        }
    }

    /// Classifies what the store knows about `key` at wall-clock `nowWallSeconds`.
    public func lookup(_ key: NetworkKey, nowWallSeconds: Double, configuration: EstimateStoreConfiguration = .init()) -> EstimateLookup {
        if let record = records.filter({ $0.networkKey == key }).max(by: { $0.measuredAt < $1.measuredAt }) {
            let age = nowWallSeconds - record.measuredAt
            if age < -configuration.futureToleranceSeconds || age >= configuration.ttlSeconds {
                return .expired(record, ageSeconds: age)
            }
            return .fresh(record, ageSeconds: age)
        }
        if let other = records.filter({ $0.networkKey.originHost == key.originHost }).max(by: { $0.measuredAt < $1.measuredAt }) {
            return .networkChanged(previous: other)
        }
        return .absent
    }

    /// The store with `record` replacing any record of the same key, oldest
    /// records dropped beyond `maximumRecords`. A record with a non-finite or
    /// non-positive value, or no samples, is not stored.
    public func updating(with record: EstimateRecord, configuration: EstimateStoreConfiguration = .init()) -> EstimateStoreSnapshot {
        guard record.valueBps.isFinite, record.valueBps > 0, record.measuredAt.isFinite, record.sampleCount > 0 else { return self }
        var next = self
        next.records.removeAll { $0.networkKey == record.networkKey }
        next.records.append(record)
        next.records.sort { ($0.measuredAt, $0.networkKey.description) > ($1.measuredAt, $1.networkKey.description) }
        if next.records.count > configuration.maximumRecords {
            next.records.removeLast(next.records.count - configuration.maximumRecords)
        }
        return next
    }
}

/// Why a start is cold.
public enum ColdReason: String, Sendable, Equatable, Codable {
    /// Nothing stored for this origin.
    case noEstimate = "no-estimate"
    /// The stored estimate is at or past the TTL.
    case expired
    /// Stored for this origin, but on another local network.
    case networkChanged = "network-changed"
    /// Fresh, but from too few samples.
    case tooFewSamples = "too-few-samples"
    /// `--cold`: the store is ignored.
    case forced
    /// The store file could not be read or decoded.
    case storeUnreadable = "store-unreadable"
}

/// Why the estimate became suspect mid-session.
public enum RecoveryReason: String, Sendable, Equatable, Codable {
    case stall
    case wedge
    case loadFailure = "load-failure"
    case liveResync = "live-resync"
    case restart
    /// An over-selected fetch before the first frame: proof that the estimate
    /// which chose the rung was wrong (docs/startup-cap.md, "Over-selection").
    case startupOverSelection = "startup-over-selection"
}

/// The estimate-availability gate.
public enum EstimateGate: Sendable, Equatable {
    /// A trustworthy estimate exists: no cap, the estimator starts from it.
    case warm(EstimateRecord)
    /// No trustworthy estimate: probe low.
    case cold(ColdReason)
    /// Playback failed; the estimate is suspect: re-probe low on a fresh connection.
    /// `priorBps` is the pre-failure estimate, demoted to a prior.
    case recovery(RecoveryReason, priorBps: Double?)

    public var kind: String {
        switch self {
        case .warm: "warm"
        case .cold: "cold"
        case .recovery: "recovery"
        }
    }

    /// The gate at session start, from the store lookup (nil when the store
    /// could not be read) and `--cold`.
    public static func classify(
        _ lookup: EstimateLookup?, forcedCold: Bool = false,
        configuration: EstimateStoreConfiguration = .init()
    ) -> EstimateGate {
        if forcedCold { return .cold(.forced) }
        guard let lookup else { return .cold(.storeUnreadable) }
        switch lookup {
        case .absent: return .cold(.noEstimate)
        case .expired: return .cold(.expired)
        case .networkChanged: return .cold(.networkChanged)
        case .fresh(let record, _):
            guard record.sampleCount >= configuration.minimumSampleCount else { return .cold(.tooFewSamples) }
            guard record.valueBps.isFinite, record.valueBps > 0 else { return .cold(.noEstimate) }
            return .warm(record)
        }
    }
}
