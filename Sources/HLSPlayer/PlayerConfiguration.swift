import Foundation
import HLSCore

/// The hlsplay version, written into every session log header.
public let hlsplayVersion = ProjectVersion.string

/// Which stall-risk predictor feeds the playback policy controller.
public enum PredictorChoice: String, Sendable, Codable, CaseIterable {
    /// The seed article's formula (buffer, bitrate pressure, device pressure).
    case heuristic
    /// "Buffer below 2 s".
    case threshold
    /// The learned logistic model (models/stall-logistic-v2.json); the default.
    case model
    /// No prediction, no policy controller.
    case off
}

/// Everything a session is configured with. Knob names follow AVFoundation
/// where one exists, so results carry over to iOS.
public struct PlayerConfiguration: Sendable, Encodable {
    /// The multivariant or media playlist to play.
    public var url: URL
    /// Stop after this much media has played, seconds (nil: VOD to the end, live until interrupted).
    public var durationLimitSeconds: Double?
    /// AVPlayerItem.preferredForwardBufferDuration: keep fetching while the
    /// forward buffer is below this, seconds. 0 = the policy's, else automatic
    /// (`SessionCore.automaticForwardBufferSeconds`).
    public var preferredForwardBufferDurationSeconds: Double = 0
    /// AVPlayerItem.preferredPeakBitRate: variants whose BANDWIDTH exceeds this are not chosen, bits per second (nil = no cap).
    public var preferredPeakBitRateBps: Int?
    /// Play this variant (index into the multivariant playlist) whatever the estimate.
    public var pinnedVariantIndex: Int?
    /// `--audio-lang`: the preferred LANGUAGE of an alternate audio rendition (RFC 5646 tag or its primary subtag).
    public var audioLanguage: String?
    public var playback = PlaybackConfiguration()
    public var estimator = BandwidthEstimator.Configuration()
    public var selector = VariantSelector()
    /// Period of the wall-clock monitor, seconds.
    public var monitorIntervalSeconds: Double = 0.25
    /// Decode video and audio (false: demux only).
    public var decode = true
    /// Decoder threads per track (0 = FFmpeg's choice). One is the default:
    /// real-time playback of a 1080p H.264 rung needs a fraction of a core,
    /// and each extra frame thread costs a set of frame buffers and a frame of
    /// latency.
    public var decodeThreadCount = 1
    /// The most decoder threads per track `--decode-threads` accepts: FFmpeg's own cap on the
    /// threads it picks for 0. Each frame thread holds a picture in flight besides the
    /// reference frames, so a decoder's memory is about (references + threads + 2) pictures:
    /// at the 8K limit (53 MB a picture, 8-bit 4:2:0) 16 threads are up to 1.8 GB. Count.
    public static let maxDecodeThreadCount = 16
    /// Verify TLS certificates.
    public var verifyTLS = true
    /// `--cacert`: the PEM file of the certificate authorities trusted for TLS instead of the
    /// system's bundle; nil: the system's.
    public var caCertificateFile: String?
    /// Stall timeout for a request: no byte for this long aborts it, seconds.
    public var requestStallTimeoutSeconds: Double = 10
    /// First-byte timeout for a request, seconds (hls.js uses 10 s).
    public var firstByteTimeoutSeconds: Double = 10
    /// The estimate-aware startup/recovery cap (docs/startup-cap.md): `auto`
    /// (the gate: warm → no cap, cold or recovery → probe low), `off`, or
    /// `firstVariant` (AVFoundation's startsOnFirstEligibleVariant).
    public var startupCap = StartupCapConfiguration()
    /// Ignore the estimate store (a true cold start).
    public var forceCold = false
    /// The estimate store file; nil = the user's cache directory.
    public var estimateStorePath: String?
    /// The store's TTL and minimum sample count.
    public var estimateStore = EstimateStoreConfiguration()
    /// Which throughput samples count as network-limited.
    public var networkLimit = NetworkLimitClassifier()
    /// The wall-clock wedge / over-selection rules for the in-flight request.
    public var byteProgress = ByteProgressClassifier()
    /// The trickle rule for the in-flight request: bytes flowing too slowly to ever be useful (docs/startup-cap.md §4b).
    public var trickle = TrickleClassifier()
    /// `--no-progress-timeout`: the session ends with an error when neither the media clock nor the
    /// downloaded bytes moved for this long, seconds; nil = off (NoProgressWatchdog).
    public var noProgressTimeoutSeconds: Double? = NoProgressWatchdog.defaultTimeoutSeconds
    /// What a wedged request gets and how often a segment may be abandoned (WedgeRules):
    /// `reDecideBelowBufferSegments` (segment durations), `maxPlaylistReRequests` and
    /// `maxAbandonmentsPerSegment` (counts). The same rules in a real and a simulated session.
    public var wedge = WedgeRules()
    /// The session loop's tunables (SessionTunables): `loaderPollSeconds`, `recentSegmentThroughputCount`
    /// (count), `noFrameAtEndSeconds`, `decodeHangThresholdSeconds`. The same values in a real and a
    /// simulated session.
    public var session = SessionTunables()
    /// The retry policies for playlists and for media (RetryPolicy): attempts, backoff, Retry-After.
    public var retry = RetryPolicies()
    /// The stall-risk predictor driving the playback policy controller (`off`: no controller, the
    /// default: on unseen networks the controller showed no QoE gain, docs/stall-prediction.md).
    public var predictor: PredictorChoice = .off
    /// `--abr`: the adaptation rule (`AbrRuleName.default`, hlsplay-mpc; docs/abr.md).
    public var abr: AbrRuleName = .default
    /// `--mpc-reserve`: hlsplay-mpc's buffer reserve, seconds (nil: none; docs/abr.md). Only hlsplay-mpc reads it.
    public var mpcReserveSeconds: Double? = RiskAwareMPC.defaultReserveSeconds
    /// The model file for `.model`; nil = models/stall-logistic-v2.json found beside the package or via HLSPLAY_MODEL.
    public var modelPath: String?
    /// Thresholds, cooldown, dwell and knobs of the playback policies.
    public var policy = PolicyController.Configuration()
    /// True when the user set the resume threshold, which then wins over the policy's knob.
    public var resumeBufferSetByUser = false
    /// True when the user set the startup threshold, which the policy then leaves alone.
    public var startupBufferSetByUser = false
    /// Send CMCD (CTA-5004) with every request: as a query parameter or as headers; nil = off.
    public var cmcd: CMCDMode?
    /// Redact query values and userinfo from every URL in the log, HAR and messages.
    public var redactURLs = true
    /// `--header`, `--cookie`, `--referer`: headers added to every request, or to one host's (UserHeader). Their
    /// values are never written out: the header records name, host and length, and outputs redact them by name.
    public var requestHeaders: [UserHeader] = []
    /// `--user-agent` (nil: hlsplay/VERSION).
    public var userAgent: String?
    /// `--proxy`: every request through this proxy (nil: libcurl's http_proxy/https_proxy/no_proxy variables).
    public var proxy: String?
    /// Byte-progress records are written at most this often per request, seconds.
    public var progressLogIntervalSeconds: Double = 0.1
    /// `--max-resolution`: the largest picture decoded, in either orientation (ResolutionLimit);
    /// rungs whose RESOLUTION is above it are not chosen, media above it ends the session
    /// with a media error. nil: FFmpeg's own limits only.
    public var maxResolution: ResolutionLimit? = .default8K
    /// `--max-buffer-bytes`: the forward buffer's byte bound — no further segment is fetched
    /// while the packets held and the next segment would exceed it (ForwardBufferRule), bytes.
    /// nil: bounded in seconds only.
    public var maxForwardBufferBytes: Int? = PlayerConfiguration.defaultMaxForwardBufferBytes
    /// `--allow-any-local-file`: a top-level playlist given as a path may name local files
    /// outside its own directory (LocalFileScope). Off: it may not.
    public var allowAnyLocalFile = false

    /// The forward buffer's default byte bound: 256 MiB — as much as one segment may weigh
    /// (`maxBodyBytes`), about 3 minutes of a 12 Mbit/s 4K rung (more than the 30 s target),
    /// 11 s of the 46 MB-per-2-s segments that took RSS to 876 MB under the seconds target
    /// alone. Bytes.
    public static let defaultMaxForwardBufferBytes = 256 << 20

    /// The target with no playback policy in force.
    public var forwardBufferTargetSeconds: Double {
        SessionCore.forwardBufferTargetSeconds(
            preferredSeconds: preferredForwardBufferDurationSeconds, policySeconds: nil, startupSeconds: playback.startupBufferSeconds,
            resumeSeconds: playback.resumeBufferSeconds)
    }

    public init(url: URL) { self.url = url }

    /// The decision rules and tunables the session core reads (the same for a real and a simulated session).
    public var core: SessionCore.Configuration {
        var c = SessionCore.Configuration(
            playback: playback, estimator: estimator, startupCap: startupCap, networkLimit: networkLimit,
            byteProgress: byteProgress, selector: selector, pinnedVariantIndex: pinnedVariantIndex,
            recentSegmentThroughputCount: session.recentSegmentThroughputCount,
            userPeakBitrateBps: preferredPeakBitRateBps, resumeBufferSetByUser: resumeBufferSetByUser,
            startupBufferSetByUser: startupBufferSetByUser)
        c.abr = abr
        c.mpcReserveSeconds = mpcReserveSeconds
        c.trickle = trickle
        c.preferredForwardBufferDurationSeconds = preferredForwardBufferDurationSeconds
        c.durationLimitSeconds = durationLimitSeconds
        return c
    }

    enum CodingKeys: String, CodingKey {
        case url, durationLimitSeconds, preferredForwardBufferDurationSeconds, preferredPeakBitRateBps,
            pinnedVariantIndex, audioLanguage, playback, estimator, selector, monitorIntervalSeconds, decode, decodeThreadCount, verifyTLS,
            startupCap, forceCold, estimateStorePath, estimateStore, networkLimit, byteProgress,
            wedge, session, retry, trickle, noProgressTimeoutSeconds,
            predictor, abr, mpcReserveSeconds, modelPath, policy, cmcd, redactURLs,
            requestStallTimeoutSeconds, firstByteTimeoutSeconds, progressLogIntervalSeconds, forwardBufferTargetSeconds,
            maxResolution, maxForwardBufferBytes, allowAnyLocalFile, requestHeaders, userAgent, proxy, caCertificateFile
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(redactURLs ? URLRedaction.redacted(url) : url.absoluteString, forKey: .url)
        try c.encode(redactURLs, forKey: .redactURLs)
        try c.encodeIfPresent(durationLimitSeconds, forKey: .durationLimitSeconds)
        try c.encode(preferredForwardBufferDurationSeconds, forKey: .preferredForwardBufferDurationSeconds)
        try c.encodeIfPresent(preferredPeakBitRateBps, forKey: .preferredPeakBitRateBps)
        try c.encodeIfPresent(pinnedVariantIndex, forKey: .pinnedVariantIndex)
        try c.encodeIfPresent(audioLanguage, forKey: .audioLanguage)
        try c.encode(playback, forKey: .playback)
        try c.encode(estimator, forKey: .estimator)
        try c.encode(selector, forKey: .selector)
        try c.encode(monitorIntervalSeconds, forKey: .monitorIntervalSeconds)
        try c.encode(decode, forKey: .decode)
        try c.encode(decodeThreadCount, forKey: .decodeThreadCount)
        try c.encode(verifyTLS, forKey: .verifyTLS)
        try c.encode(startupCap, forKey: .startupCap)
        try c.encode(forceCold, forKey: .forceCold)
        try c.encodeIfPresent(estimateStorePath, forKey: .estimateStorePath)
        try c.encode(estimateStore, forKey: .estimateStore)
        try c.encode(networkLimit, forKey: .networkLimit)
        try c.encode(byteProgress, forKey: .byteProgress)
        try c.encode(wedge, forKey: .wedge)
        try c.encode(session, forKey: .session)
        try c.encode(retry, forKey: .retry)
        try c.encode(trickle, forKey: .trickle)
        // 0 when off, as on the command line (the log never holds nulls).
        try c.encode(noProgressTimeoutSeconds ?? 0, forKey: .noProgressTimeoutSeconds)
        try c.encode(predictor, forKey: .predictor)
        try c.encode(abr, forKey: .abr)
        // 0 when off, as on the command line (the log never holds nulls).
        try c.encode(mpcReserveSeconds ?? 0, forKey: .mpcReserveSeconds)
        try c.encodeIfPresent(modelPath, forKey: .modelPath)
        try c.encode(policy, forKey: .policy)
        try c.encodeIfPresent(cmcd, forKey: .cmcd)
        try c.encode(requestStallTimeoutSeconds, forKey: .requestStallTimeoutSeconds)
        try c.encode(firstByteTimeoutSeconds, forKey: .firstByteTimeoutSeconds)
        try c.encode(progressLogIntervalSeconds, forKey: .progressLogIntervalSeconds)
        try c.encode(forwardBufferTargetSeconds, forKey: .forwardBufferTargetSeconds)
        // "none" and 0 when off, as on the command line (the log never holds nulls).
        try c.encode(maxResolution?.description ?? "none", forKey: .maxResolution)
        try c.encode(maxForwardBufferBytes ?? 0, forKey: .maxForwardBufferBytes)
        try c.encode(allowAnyLocalFile, forKey: .allowAnyLocalFile)
        // Each added header's name, host and length, never its value (UserHeader.encode).
        if !requestHeaders.isEmpty { try c.encode(requestHeaders, forKey: .requestHeaders) }
        try c.encodeIfPresent(userAgent, forKey: .userAgent)
        // A proxy URL's credentials are redacted like any URL's (the log line goes through OutgoingText).
        try c.encodeIfPresent(proxy, forKey: .proxy)
        try c.encodeIfPresent(caCertificateFile, forKey: .caCertificateFile)
    }
}

/// A problem with a `--policy` file.
public struct PolicyFileError: Error, CustomStringConvertible {
    public var description: String
}

extension PolicyController.Configuration {
    /// Reads a policy file: a JSON object with any subset of the
    /// configuration's fields by name (the rest keep their defaults). An
    /// unknown field, a wrong type or values that break the controller's
    /// invariants are errors naming what is wrong.
    public static func load(jsonFile path: String) throws(PolicyFileError) -> PolicyController.Configuration {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw PolicyFileError(description: "cannot read \(path): \(error.localizedDescription)")
        }
        guard let given = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
            throw PolicyFileError(description: "\(path) is not a JSON object")
        }
        guard let defaultsData = try? JSONEncoder().encode(PolicyController.Configuration()),
            var merged = (try? JSONSerialization.jsonObject(with: defaultsData)) as? [String: Any]
        else {
            throw PolicyFileError(description: "internal: cannot encode the default policy")
        }
        let unknown = Set(given.keys).subtracting(merged.keys).sorted()
        guard unknown.isEmpty else {
            throw PolicyFileError(
                description:
                    "\(path): unknown field\(unknown.count == 1 ? "" : "s") \(unknown.joined(separator: ", ")) (known: \(merged.keys.sorted().joined(separator: ", ")))"
            )
        }
        merged.merge(given) { _, new in new }
        let configuration: PolicyController.Configuration
        do {
            configuration = try JSONDecoder().decode(PolicyController.Configuration.self, from: JSONSerialization.data(withJSONObject: merged))
        } catch {
            throw PolicyFileError(description: "\(path): \(error)")
        }
        do {
            return try configuration.validated()
        } catch {
            throw PolicyFileError(
                description:
                    "\(path): \(error == .thresholds ? "thresholds must lie in [0, 1] with exit < enter and preload's enter < downshift's enter" : "durations must be ≥ 0 and buffer knobs > 0")"
            )
        }
    }
}
