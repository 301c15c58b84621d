// PlayerSession: the estimate-aware startup/recovery cap and byte progress (docs/startup-cap.md).

import Foundation
import HLSCore
import HLSMedia
import HLSNet

// MARK: - Startup/recovery cap (docs/startup-cap.md)

extension PlayerSession {
    /// The estimate when it is measured; nil while it is still the default.
    func measuredEstimate() -> Double? {
        lock.withLock { core.estimator.hasEstimate ? core.estimator.estimateBps : nil }
    }

    /// Classifies the estimate-availability gate from the store and starts the cap controller.
    func startGate() {
        let host = configuration.url.host ?? "local"
        let key = NetworkKey(originHost: host, localNetwork: EstimateStoreFile.localNetworkIdentity(forHost: host))
        let path = configuration.estimateStorePath ?? EstimateStoreFile.defaultPath
        let (snapshot, problem) = EstimateStoreFile.load(path: path)
        if let problem {
            recorder.record(.error(ErrorRecord(fatal: false, category: "estimate-store", message: "\(problem); starting cold")))
            warn("estimate store: \(problem); starting cold")
        }
        let lookup = snapshot?.lookup(key, nowWallSeconds: Date().timeIntervalSince1970, configuration: configuration.estimateStore)
        let gate = EstimateGate.classify(lookup, forcedCold: configuration.forceCold, configuration: configuration.estimateStore)
        lock.withLock {
            networkKey = key
            storeSnapshot = snapshot
        }
        let rungs = ladder()
        perform(
            lock.withLock {
                core.gateClassified(
                    gate, lookup: lookup, networkKey: key, estimateStore: configuration.estimateStore, ladder: rungs, at: clock.now())
            })
    }

    /// Performs what the session core asked for, in order (outside the lock: the recorder has its own).
    func perform(_ actions: [SessionCoreAction]) {
        for action in actions {
            switch action {
            case .record(let event):
                recorder.record(event)
            case .reconnectNext:
                lock.withLock { freshConnectionNext = true }
            }
        }
    }

    /// Feeds the cap controller and performs what it returns.
    func capEvent(_ event: StartupCapEvent) {
        perform(lock.withLock { core.cap(event) })
    }

    /// Judges whether a segment's throughput sample is network-limited, logs the verdict, and tells the cap.
    func classifySample(
        requestID: Int, response: HTTPResponse, transferSeconds: Double,
        segment: (durationSeconds: Double, rungBitrateBps: Double?, isLiveEdge: Bool), startedAt: MonotonicInstant
    ) {
        let observation = TransferObservation(
            bytes: response.body.count, transferSeconds: transferSeconds, firstByteSeconds: response.timings.firstByteSeconds,
            rttSeconds: response.tcpInfo?.rttSeconds, readPauseSeconds: 0, isLiveEdgeSegment: segment.isLiveEdge,
            mediaBitrateBps: segment.rungBitrateBps, tcpAppLimited: nil)
        perform(
            lock.withLock {
                core.segmentTransferred(requestID: requestID, observation: observation, startedAt: startedAt, endedAt: response.finishedAt)
            })
    }

    /// The monitor's decisions after its buffer sample (SessionCore.monitorDecisions): the byte-progress and
    /// trickle rules on the request in flight — cut here when judged —, the cap's tick, and while playing the
    /// predictor and controller. Runs on the monitor, never on the loader.
    func monitorDecisions(at now: MonotonicInstant, bufferSeconds: Double, phase: PlaybackPhase) {
        // The machine's readings are files of the kernel's: read outside the lock, and only when the predictor runs.
        let predicting = phase == .playing && lock.withLock { core.runsPolicy }
        let (cpu, thermal) = predicting ? (hostSignals.cpuPressureAvg10Percent(), hostSignals.thermalMaxCelsius()) : (nil, nil)
        let actions: [SessionCoreAction] = lock.withLock {
            let (judgement, actions) = core.monitorDecisions(
                bufferSeconds: bufferSeconds, phase: phase, inFlight: inFlight.map { monitored($0, at: now, bufferSeconds: bufferSeconds) },
                currentRungBps: currentRungBps, at: now, sessionStart: sessionStart
            ) { deviceReadings(cpuPressureAvg10Percent: cpu, thermalMaxCelsius: thermal) }
            if let cancel = judgement?.cancel, let f = inFlight {
                inFlight?.abort = InFlightRequest.Abort(cancel, failure: judgement?.failure)
                f.token.cancel()
            }
            return actions
        }
        perform(actions)
    }

    /// Under `lock`: the request in flight as the monitor's rules see it. Segments get every rule; playlists the
    /// wedge and trickle rules (no duration, no rung: never over-selected); keys, init sections and steering
    /// manifests none, nor a request already being cut.
    func monitored(_ f: InFlightRequest, at now: MonotonicInstant, bufferSeconds: Double) -> MonitoredRequest {
        let duration: Double?
        switch f.info.purpose {
        case .segment: duration = f.segmentDurationSeconds
        case .mediaPlaylist, .multivariantPlaylist: duration = 0
        case .initSection, .key, .steeringManifest: duration = nil
        }
        let sinceFirst = f.firstByteAt.map { now.seconds(since: $0) } ?? 0
        let throughput: Double? = f.bytes > 0 && sinceFirst > 0 ? Double(f.bytes) * 8 / sinceFirst : nil
        let progress = InFlightSnapshot(
            bytesReceived: f.bytes, bytesExpected: f.expectedBytes, secondsSinceLastByte: f.idleSeconds(at: now),
            elapsedSeconds: f.elapsedSeconds(at: now), rttSeconds: core.lastRTTSeconds, segmentDurationSeconds: duration ?? 0,
            rungBitrateBps: f.info.rungBitrateBps ?? 0, measuredThroughputBps: throughput, forwardBufferSeconds: bufferSeconds)
        return MonitoredRequest(request: f.info, progress: progress, judged: f.abort == nil && duration != nil)
    }

    /// Stores the session's final estimate for the next start on this network.
    func saveEstimate() {
        let (key, snapshot, estimate, samples) = lock.withLock {
            (networkKey, storeSnapshot, core.estimator.hasEstimate ? core.estimator.estimateBps : nil, core.networkLimitedSamples)
        }
        guard let key, let estimate, samples > 0 else { return }
        let record = EstimateRecord(networkKey: key, valueBps: estimate, sampleCount: samples, measuredAt: Date().timeIntervalSince1970)
        // Re-read the file so sessions that ran meanwhile are not overwritten.
        let path = configuration.estimateStorePath ?? EstimateStoreFile.defaultPath
        let current = EstimateStoreFile.load(path: path).snapshot ?? snapshot ?? EstimateStoreSnapshot()
        if let problem = EstimateStoreFile.save(current.updating(with: record), path: path) {
            recorder.record(.error(ErrorRecord(fatal: false, category: "estimate-store", message: problem)))
            warn("estimate store: \(problem); this session's estimate is not kept for the next start")
        }
    }
}
