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
        recorder.record(
            .capGate(
                GateDecisionRecord(
                    gate: gate, lookup: lookup, networkKey: key, mode: configuration.startupCap.mode,
                    configuration: configuration.estimateStore)))
        // The probe and the ramp step through the video rungs: a cold start probes the lowest video
        // rung, not an audio-only fallback below it.
        capEvent(.sessionStarted(gate: gate, ladder: AudioOnlyRungs.videoRungs(ladder()), at: clock.now()))
    }

    /// Performs what the session core asked for, in order (outside the lock: the recorder has its own).
    func perform(_ actions: [SessionCoreAction]) {
        for action in actions {
            switch action {
            case .record(let event):
                recorder.record(event)
            case .reconnectNext:
                lock.withLock { freshConnectionNext = true }
            case .policyChanged:
                // A policy's thresholds may be more than the stream can hold: logged when lowered.
                logThresholdClamps()
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

    /// What the monitor found about the in-flight request.
    enum InFlightFinding {
        case byteProgress(InFlightSnapshot, InFlightJudgement, requestID: Int)
        case trickle(TrickleSnapshot, TrickleAssessment, requestID: Int, purpose: RequestPurpose, url: String)
    }

    /// The wall-clock byte-progress check of the in-flight segment request:
    /// wedged → abort and re-request on a fresh connection; over-selected →
    /// abandon and lower the cap; abandoned by the reference rule (BOLA-E) →
    /// abandon, re-request at its rung; otherwise the trickle rule (+Progress) judges
    /// its projected completion. Runs on the monitor, never on the loader.
    func checkInFlight(at now: MonotonicInstant, bufferSeconds: Double) {
        let found: InFlightFinding? = lock.withLock {
            // Segments get both rules; playlists the wedge rule only (no duration, no rung: never over-selected).
            guard let f = inFlight, f.abort == nil else { return nil }
            let duration: Double
            switch f.purpose {
            case .segment:
                guard let d = f.segmentDurationSeconds else { return nil }
                duration = d
            case .mediaPlaylist, .multivariantPlaylist:
                duration = 0
            case .initSection, .key, .steeringManifest:
                return nil
            }
            let sinceFirst = f.firstByteAt.map { now.seconds(since: $0) } ?? 0
            let throughput: Double? = f.bytes > 0 && sinceFirst > 0 ? Double(f.bytes) * 8 / sinceFirst : nil
            let snapshot = InFlightSnapshot(
                bytesReceived: f.bytes, bytesExpected: f.expectedBytes, secondsSinceLastByte: f.idleSeconds(at: now),
                elapsedSeconds: f.elapsedSeconds(at: now), rttSeconds: core.lastRTTSeconds, segmentDurationSeconds: duration,
                rungBitrateBps: f.rungBitrateBps ?? 0, measuredThroughputBps: throughput, forwardBufferSeconds: bufferSeconds)
            let judgement = core.judgeInFlight(snapshot)
            if let cancel = judgement.cancel {
                inFlight?.abort =
                    switch cancel {
                    case .wedged: .wedged
                    case .overSelected: .overSelected
                    case .abrAbandoned: .abrAbandoned
                    }
                f.token.cancel()
                return .byteProgress(snapshot, judgement, requestID: f.requestID)
            }
            let assessment = judgement.assessment
            return judgeTrickle(f, at: now, bufferSeconds: bufferSeconds, wedgeWindowSeconds: assessment.wedgeWindowSeconds)
                .map { .trickle($0.0, $0.1, requestID: f.requestID, purpose: f.purpose, url: f.url) }
        }
        switch found {
        case nil:
            return
        case let .trickle(snapshot, assessment, requestID, purpose, url):
            performTrickle(requestID: requestID, purpose: purpose, url: url, snapshot: snapshot, assessment: assessment, at: now)
        case let .byteProgress(snapshot, judgement, requestID):
            perform(lock.withLock { core.inFlightCancelled(requestID: requestID, snapshot: snapshot, judgement: judgement, at: now) })
        }
    }

    /// After abandoning a fetch for a lower rung (over-selected, or trickling over its budget):
    /// the abandoned transfer is evidence too — its throughput so far goes to the estimator — and
    /// the choice is capped below the abandoned rung until delivery earns it back.
    func abandonForLowerRung(
        rungBitrateBps: Double, suggestedCapBps cap: Double, bytesReceived: Int, elapsedSeconds: Double?,
        measuredBps: Double?, ratio: Double, at now: MonotonicInstant
    ) {
        perform(
            lock.withLock {
                core.abandonedForLowerRung(
                    rungBitrateBps: rungBitrateBps, suggestedCapBps: cap, bytesReceived: bytesReceived,
                    elapsedSeconds: elapsedSeconds, measuredBps: measuredBps, ratio: ratio, at: now)
            })
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
