// PlayerSession: the stall-risk predictor and the playback policy controller (docs/stall-prediction.md).

import Foundation
import HLSCore
import HLSMedia
import HLSNet

// MARK: - Stall-risk prediction and playback policy (docs/stall-prediction.md)

extension PlayerSession {
    /// Loads the chosen predictor; a model that cannot be loaded falls back to the heuristic, logged.
    func setUpPredictor() {
        let (chosen, problem) = SessionDecisions.makePredictor(configuration, defaultModelPath: ModelLocator.defaultModelPath)
        predictor = chosen
        if let problem {
            recorder.record(.error(ErrorRecord(fatal: false, category: "predictor", message: problem)))
        }
    }

    /// Starts the policy controller once the ladder is known.
    func startPolicyController() {
        guard predictor != nil else { return }
        let (made, problem) = SessionDecisions.makePolicyController(configuration, ladderBitratesBps: videoLadderBitratesBps())
        if let problem {
            recorder.record(.error(ErrorRecord(fatal: false, category: "policy", message: problem)))
        }
        guard let controller = made else { return }
        lock.withLock {
            policyController = controller
            applyKnobs(controller.knobs)
        }
        logThresholdClamps()
    }

    /// Applies a policy's knobs (under the lock). A value the user set on the command line wins.
    func applyKnobs(_ knobs: PolicyKnobs) {
        policyKnobs = knobs
        knobs.apply(to: &timeline, resumeSetByUser: configuration.resumeBufferSetByUser, startupSetByUser: configuration.startupBufferSetByUser,
                    configuredStartupSeconds: configuration.playback.startupBufferSeconds, gatesStart: policyGatesStart)
    }

    /// The forward-buffer target in force (under the lock): the user's
    /// preferredForwardBufferDuration, else the policy's, else automatic —
    /// never below the startup and resume thresholds.
    func forwardBufferTarget() -> Double {
        configuration.forwardBufferTargetSeconds(policySeconds: policyKnobs?.preferredForwardBufferDurationSeconds,
                                                 startupSeconds: timeline.configuration.startupBufferSeconds,
                                                 resumeSeconds: timeline.configuration.resumeBufferSeconds)
    }

    /// One predictor + controller step on the monitor: features → risk → policy.
    func evaluatePolicy(at now: MonotonicInstant, bufferSeconds: Double, phase: PlaybackPhase, atSegmentLanding: Bool = false) {
        // A stall is the buffer running dry while playing: on the monitor, the
        // controller runs only then. Before the first start it also runs once per
        // segment that lands, with the buffer that segment makes, to judge the start.
        guard let predictor, phase == .playing || atSegmentLanding && phase == .startingUp else { return }
        let cpu = DeviceProbe.cpuPressureAvg10Percent()
        let thermal = DeviceProbe.thermalMaxCelsius()
        let features: StallFeatures? = lock.withLock {
            guard policyController != nil else { return nil }
            let segmentInFlight = inFlight.flatMap { $0.purpose == .segment ? $0 : nil }
            let busyDelta = decodeBusySeconds - lastDecodeSample.busy
            let mediaDelta = decodedMediaSeconds - lastDecodeSample.media
            lastDecodeSample = (decodeBusySeconds, decodedMediaSeconds)
            return StallFeatures.atTick(
                bufferSeconds: bufferSeconds, estimator: estimator, ladderBitratesBps: variants.map(\.bandwidthBps),
                currentRungBps: currentVariant.flatMap { i in variants.first { $0.index == i } }?.bandwidthBps,
                inFlight: segmentInFlight.map { f in
                    StallFeatures.InFlight(bytesReceived: f.bytes, bytesExpected: f.expectedBytes,
                                           elapsedSeconds: now.seconds(since: f.startedAt),
                                           secondsSinceLastByte: now.seconds(since: f.lastByteAt))
                },
                firstByteSeconds: lastFirstByteSeconds, rttSeconds: lastRTTSeconds,
                cpuPressureAvg10Percent: cpu,
                decodeLagRatio: DecodeLag.ratio(decodeSeconds: busyDelta, mediaSeconds: mediaDelta),
                thermalMaxCelsius: thermal)
        }
        guard let features else { return }
        var risk: Double?
        var failure: String?
        do {
            risk = try predictor.stallProbability(features)
        } catch {
            failure = String(describing: error)
        }
        // The controller runs on session time, so its change records read as seconds since start.
        let sessionNow = MonotonicInstant(seconds: now.seconds(since: sessionStart))
        let (actions, policy) = lock.withLock { () -> ([PolicyAction], PlaybackPolicy) in
            guard var controller = policyController else { return ([], .lowLatency) }
            let actions = controller.update(risk: risk, failure: failure, features: features, at: sessionNow)
            policyController = controller
            for case .changePolicy(let change) in actions { applyKnobs(change.knobs) }
            return (actions, controller.policy)
        }
        recorder.record(.stallRisk(StallRiskSample(predictor: predictor.predictorName, risk: risk, horizonSeconds: predictor.horizonSeconds,
                                                    policy: policy, phase: phase, features: features)))
        for action in actions {
            switch action {
            case .changePolicy(let change): recorder.record(.policyChange(change))
            case .predictorFailed(let failure): recorder.record(.predictorFailed(failure))
            case .predictorRecovered(let recovery): recorder.record(.predictorRecovered(recovery))
            }
        }
        // A policy's thresholds may be more than the stream can hold: logged when lowered.
        if actions.contains(where: { if case .changePolicy = $0 { true } else { false } }) { logThresholdClamps() }
    }
}

/// Finds the shipped stall model.
enum ModelLocator {
    static let modelFile = "models/stall-logistic-v2.json"

    static func defaultModelPath() -> String? {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["HLSPLAY_MODEL"], fm.fileExists(atPath: env) { return env }
        var candidates = [URL(fileURLWithPath: fm.currentDirectoryPath)]
        if let exe = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            var dir = exe.deletingLastPathComponent()
            for _ in 0..<6 {
                candidates.append(dir)
                dir = dir.deletingLastPathComponent()
            }
        }
        return candidates.map { $0.appendingPathComponent(modelFile).path }.first { fm.fileExists(atPath: $0) }
    }
}
