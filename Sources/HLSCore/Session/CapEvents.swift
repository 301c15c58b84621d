// Session-log payloads for the startup/recovery cap, the sample verdicts,
// byte-progress checks and live resync. Each carries the decision and the
// inputs it was made from, so "why did it start on that rung" and "why did
// it take that long" can be answered from the log alone. The SessionEvent
// cases that wrap them are added by the runtime integration; see
// docs/startup-cap.md for the field meanings.

import Foundation

/// The estimate-availability gate at session start.
public struct GateDecisionRecord: Sendable, Equatable, Codable {
    /// "warm", "cold" or "recovery".
    public var gate: String
    public var coldReason: ColdReason?
    public var recoveryReason: RecoveryReason?
    /// What the store said: "fresh", "expired", "network-changed", "absent"; nil when it was unreadable or ignored.
    public var lookup: String?
    public var networkKey: NetworkKey?
    /// The record consulted, if any.
    public var record: EstimateRecord?
    /// Its age at lookup, seconds (wall clock).
    public var recordAgeSeconds: Double?
    public var ttlSeconds: Double
    public var minimumSampleCount: Int
    public var mode: StartupCapMode

    public init(
        gate: EstimateGate, lookup: EstimateLookup?, networkKey: NetworkKey?, mode: StartupCapMode,
        configuration: EstimateStoreConfiguration = .init()
    ) {
        self.gate = gate.kind
        switch gate {
        case .cold(let r): coldReason = r
        case .recovery(let r, _): recoveryReason = r
        case .warm: break
        }
        self.lookup = lookup?.kind
        self.networkKey = networkKey
        switch lookup {
        case .fresh(let r, let age), .expired(let r, let age):
            record = r
            recordAgeSeconds = age
        case .networkChanged(let r):
            record = r
        case .absent, .none:
            break
        }
        ttlSeconds = configuration.ttlSeconds
        minimumSampleCount = configuration.minimumSampleCount
        self.mode = mode
    }
}

/// Why the cap changed.
public enum CapReason: String, Sendable, Equatable, Codable {
    /// Warm start: a fresh estimate exists, no cap.
    case warmEstimate = "warm-estimate"
    /// `--startup-cap off`: no cap.
    case policyOff = "policy-off"
    /// Cold start: probe at the lowest eligible rung or preferredPeakBitRate.
    case coldProbe = "cold-probe"
    /// `--startup-cap first-variant`: the lowest rung until the first frame.
    case firstVariantProbe = "first-variant-probe"
    /// First frame: the probe cap is released to what fresh delivery has earned (nil: everything).
    case releasedOnFirstFrame = "released-on-first-frame"
    /// Fresh network-limited samples earned a higher rung.
    case earnedStep = "earned-step"
    /// A failure made the estimate suspect: re-probe low.
    case recoveryProbe = "recovery-probe"
    /// Fresh delivery on the new connection confirmed the pre-failure estimate.
    case recoveryConfirmed = "recovery-confirmed"
    /// An in-flight request was over-selected: downshift by capping.
    case overSelectionDownshift = "over-selection-downshift"
    /// The ramp ended: the forward buffer held `rampReleaseBufferSeconds`.
    case releasedOnHealthyBuffer = "released-on-healthy-buffer"
}

/// One cap change, with its inputs.
public struct CapChangeRecord: Sendable, Equatable, Codable {
    /// The new cap, bits per second (nil: no cap). Applied as SelectionSnapshot.peakBitrateCapBps.
    public var capBps: Int?
    public var previousCapBps: Int?
    public var reason: CapReason
    public var phase: StartupCapPhase
    /// The capacity the fresh samples support: the lowest of the streak, bits per second.
    public var supportBps: Double?
    /// The fresh network-limited samples behind the decision, bits per second, oldest first.
    public var samplesBps: [Double]
    /// The demoted pre-failure estimate, bits per second.
    public var priorBps: Double?
    /// Over-selection ratio behind a downshift.
    public var overSelectionRatio: Double?
    public init(
        capBps: Int?, previousCapBps: Int?, reason: CapReason, phase: StartupCapPhase, supportBps: Double? = nil,
        samplesBps: [Double] = [], priorBps: Double? = nil, overSelectionRatio: Double? = nil
    ) {
        self.capBps = capBps
        self.previousCapBps = previousCapBps
        self.reason = reason
        self.phase = phase
        self.supportBps = supportBps
        self.samplesBps = samplesBps
        self.priorBps = priorBps
        self.overSelectionRatio = overSelectionRatio
    }
}

public enum EstimatorSeedReason: String, Sendable, Equatable, Codable {
    /// Warm start: the stored estimate seeds the estimator.
    case warmStart = "warm-start"
    /// Recovery: the estimator is reset and the pre-failure estimate kept only as a light prior.
    case recoveryPrior = "recovery-prior"
}

/// Seed (optionally after a reset) the bandwidth estimator.
public struct EstimatorSeedRecord: Sendable, Equatable, Codable {
    /// Discard the estimator's history before seeding.
    public var resetFirst: Bool
    /// Value to seed, bits per second (nil: reset only).
    public var bps: Double?
    /// Weight of the seed, seconds of transfer time (BandwidthEstimator.seed).
    public var weightSeconds: Double
    public var reason: EstimatorSeedReason
    public init(resetFirst: Bool, bps: Double?, weightSeconds: Double, reason: EstimatorSeedReason) {
        self.resetFirst = resetFirst
        self.bps = bps
        self.weightSeconds = weightSeconds
        self.reason = reason
    }
}

/// Close the current connection(s) and fetch the next request on a fresh one.
public struct ReconnectRecord: Sendable, Equatable, Codable {
    public var reason: RecoveryReason
    public var priorBps: Double?
    public init(reason: RecoveryReason, priorBps: Double?) {
        self.reason = reason
        self.priorBps = priorBps
    }
}

public enum CapNoteKind: String, Sendable, Equatable, Codable {
    case gate
    /// First frame, but too few fresh samples to raise the probe cap yet.
    case firstFrameCapHeld = "first-frame-cap-held"
    /// A sample from a request that began before the current probe started: not fresh.
    case staleSample = "stale-sample"
    /// A failure repeated while already recovering: the prior is kept, the connection renewed.
    case repeatedFailure = "repeated-failure"
    /// No fresh delivery confirmed the prior in time: it is dropped; the ramp goes on evidence only.
    case priorExpired = "prior-expired"
    /// The event is ignored in this mode.
    case ignoredByMode = "ignored-by-mode"
    /// The runtime abandoned an over-selected fetch: what it measured and the cap it set (any mode).
    case overSelection = "over-selection"
    /// Fresh delivery moved the over-selection cap (network-limited evidence lifted it, or the recent
    /// segments' slowest throughput set or lowered it for the audio-only fallback): from, to, and why.
    case overSelectionCapMoved = "over-selection-cap-moved"
}

/// A decision that does not change the cap, for the log.
public struct CapNote: Sendable, Equatable, Codable {
    public var kind: CapNoteKind
    public var phase: StartupCapPhase
    public var detail: String
    public init(kind: CapNoteKind, phase: StartupCapPhase, detail: String) {
        self.kind = kind
        self.phase = phase
        self.detail = detail
    }
}

/// A throughput sample's verdict, with its inputs.
public struct SampleVerdictRecord: Sendable, Equatable, Codable {
    public var requestID: Int?
    public var observation: TransferObservation
    public var verdict: NetworkLimitVerdict
    /// The fetch's rung bitrate ÷ its throughput (logged for every fetch).
    public var overSelectionRatio: Double?
    /// When the observation is a run of small back-to-back transfers taken
    /// together (TransferCoalescer): how many, this one included (absent: one).
    public var coalescedTransfers: Int?
    public init(requestID: Int?, observation: TransferObservation, verdict: NetworkLimitVerdict, coalescedTransfers: Int? = nil) {
        self.requestID = requestID
        self.observation = observation
        self.verdict = verdict
        self.overSelectionRatio = observation.overSelectionRatio
        self.coalescedTransfers = coalescedTransfers.flatMap { $0 > 1 ? $0 : nil }
    }
}

/// A byte-progress check that found something (wedged or over-selected), with its inputs.
public struct ByteProgressRecord: Sendable, Equatable, Codable {
    public var requestID: Int?
    public var snapshot: InFlightSnapshot
    public var assessment: ByteProgressAssessment
    public init(requestID: Int?, snapshot: InFlightSnapshot, assessment: ByteProgressAssessment) {
        self.requestID = requestID
        self.snapshot = snapshot
        self.assessment = assessment
    }
}

/// A trickle judgement that acted (abandon lower, re-request, fail) or started a wait over the
/// budget with nothing lower (`over-budget-within-patience`, once per request), with its inputs.
public struct TrickleRecord: Sendable, Equatable, Codable {
    public var requestID: Int?
    /// The request's purpose and URL (as logged in `request.start`).
    public var purpose: String
    public var url: String?
    public var snapshot: TrickleSnapshot
    public var assessment: TrickleAssessment
    public init(requestID: Int?, purpose: String, url: String?, snapshot: TrickleSnapshot, assessment: TrickleAssessment) {
        self.requestID = requestID
        self.purpose = purpose
        self.url = url
        self.snapshot = snapshot
        self.assessment = assessment
    }
}
