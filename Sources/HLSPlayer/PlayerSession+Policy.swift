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
        lock.withLock { core.predictor = chosen }
        if let problem {
            recorder.record(.error(ErrorRecord(fatal: false, category: "predictor", message: problem)))
        }
    }

    /// Starts the policy controller once the ladder is known.
    func startPolicyController() {
        guard lock.withLock({ core.predictor != nil }) else { return }
        let (made, problem) = SessionDecisions.makePolicyController(configuration, ladderBitratesBps: videoLadderBitratesBps())
        if let problem {
            recorder.record(.error(ErrorRecord(fatal: false, category: "policy", message: problem)))
        }
        guard let controller = made else { return }
        lock.withLock { core.policyControllerStarted(controller) }
        logThresholdClamps()
    }

    /// The forward-buffer target in force (under the lock): the user's
    /// preferredForwardBufferDuration, else the policy's, else automatic —
    /// never below the startup and resume thresholds.
    func forwardBufferTarget() -> Double {
        configuration.forwardBufferTargetSeconds(
            policySeconds: core.policyKnobs?.preferredForwardBufferDurationSeconds,
            startupSeconds: core.timeline.configuration.startupBufferSeconds,
            resumeSeconds: core.timeline.configuration.resumeBufferSeconds)
    }

    /// One predictor + controller step on the monitor: features → risk → policy (SessionCore.policyStep).
    func evaluatePolicy(at now: MonotonicInstant, bufferSeconds: Double, phase: PlaybackPhase, atSegmentLanding: Bool = false) {
        // A stall is the buffer running dry while playing: on the monitor, the
        // controller runs only then. Before the first start it also runs once per
        // segment that lands, with the buffer that segment makes, to judge the start.
        guard phase == .playing || atSegmentLanding && phase == .startingUp,
            lock.withLock({ core.predictor != nil && core.policyController != nil })
        else { return }
        let cpu = DeviceProbe.cpuPressureAvg10Percent()
        let thermal = DeviceProbe.thermalMaxCelsius()
        // The controller runs on session time, so its change records read as seconds since start.
        let sessionNow = MonotonicInstant(seconds: now.seconds(since: sessionStart))
        perform(
            lock.withLock {
                let segmentInFlight = inFlight.flatMap { $0.purpose == .segment ? $0 : nil }
                let busyDelta = decodeBusySeconds - lastDecodeSample.busy
                let mediaDelta = decodedMediaSeconds - lastDecodeSample.media
                lastDecodeSample = (decodeBusySeconds, decodedMediaSeconds)
                return core.policyStep(
                    bufferSeconds: bufferSeconds, phase: phase, atSegmentLanding: atSegmentLanding,
                    currentRungBps: core.currentVariant.flatMap { i in variants.first { $0.index == i } }?.bandwidthBps,
                    inFlight: segmentInFlight.map { f in
                        StallFeatures.InFlight(
                            bytesReceived: f.bytes, bytesExpected: f.expectedBytes,
                            elapsedSeconds: f.elapsedSeconds(at: now),
                            secondsSinceLastByte: f.idleSeconds(at: now))
                    },
                    device: DeviceReadings(
                        cpuPressureAvg10Percent: cpu,
                        decodeLagRatio: DecodeLag.ratio(decodeSeconds: busyDelta, mediaSeconds: mediaDelta),
                        thermalMaxCelsius: thermal),
                    at: sessionNow)
            })
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
