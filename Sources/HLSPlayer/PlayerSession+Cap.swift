// PlayerSession: the estimate-aware startup/recovery cap and byte progress (docs/startup-cap.md).

import Foundation
import HLSCore
import HLSMedia
import HLSNet

// MARK: - Startup/recovery cap (docs/startup-cap.md)

extension PlayerSession {
    /// The estimate when it is measured; nil while it is still the default.
    func measuredEstimate() -> Double? {
        lock.withLock { estimator.hasEstimate ? estimator.estimateBps : nil }
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
        recorder.record(.capGate(GateDecisionRecord(gate: gate, lookup: lookup, networkKey: key, mode: configuration.startupCap.mode,
                                                    configuration: configuration.estimateStore)))
        // The probe and the ramp step through the video rungs: a cold start probes the lowest video
        // rung, not an audio-only fallback below it.
        capEvent(.sessionStarted(gate: gate, ladder: AudioOnlyRungs.videoRungs(ladder()), at: clock.now()))
    }

    /// Feeds the cap controller and performs what it returns.
    func capEvent(_ event: StartupCapEvent) {
        let actions = lock.withLock { capController.event(event) }
        for action in actions {
            switch action {
            case .setPeakBitrateCap(let change):
                recorder.record(.capChange(change))
            case .seedEstimator(let seed):
                lock.withLock {
                    if seed.resetFirst { estimator.reset() }
                    if let bps = seed.bps { estimator.seed(estimateBps: bps, weightSeconds: seed.weightSeconds) }
                }
                recorder.record(.capEstimatorSeed(seed))
            case .reconnect(let reconnect):
                lock.withLock { freshConnectionNext = true }
                recorder.record(.capReconnect(reconnect))
            case .log(let note):
                recorder.record(.capNote(note))
            }
        }
    }

    /// Judges whether a segment's throughput sample is network-limited, logs the verdict, and tells the cap.
    func classifySample(requestID: Int, response: HTTPResponse, transferSeconds: Double,
                        segment: (durationSeconds: Double, rungBitrateBps: Double?, isLiveEdge: Bool), startedAt: MonotonicInstant) {
        let observation = TransferObservation(
            bytes: response.body.count, transferSeconds: transferSeconds, firstByteSeconds: response.timings.firstByteSeconds,
            rttSeconds: response.tcpInfo?.rttSeconds, readPauseSeconds: 0, isLiveEdgeSegment: segment.isLiveEdge,
            mediaBitrateBps: segment.rungBitrateBps, tcpAppLimited: nil)
        // Small segments fetched back to back are judged together (TransferCoalescer).
        let (classified, transfers, runStartedAt) = coalescer.observation(
            for: observation, startedAt: startedAt, endedAt: response.finishedAt, minimumBytes: configuration.networkLimit.minimumBytes)
        let verdict = configuration.networkLimit.classify(classified)
        let videoRungs = videoLadderBitratesBps()
        lock.withLock {
            if recentSegmentThroughput.add(bytes: response.body.count, transferSeconds: transferSeconds) {
                overSelectionCapBps = OverSelectionCap.afterRecentThroughput(
                    recentSegmentThroughput.lowestBps, current: overSelectionCapBps,
                    videoLadderBitratesBps: videoRungs, upSwitchSafetyFactor: configuration.selector.upSwitchSafetyFactor)
            }
        }
        if let evidence = verdict.evidenceBps {
            lock.withLock {
                networkLimitedSamples += 1
                // Fresh delivery earns back rungs above an over-selection cap, as far as it supports them.
                overSelectionCapBps = OverSelectionCap.afterEvidence(
                    evidence, current: overSelectionCapBps, ladderBitratesBps: variants.map(\.bandwidthBps),
                    upSwitchSafetyFactor: configuration.selector.upSwitchSafetyFactor)
            }
        }
        recorder.record(.sampleVerdict(SampleVerdictRecord(requestID: requestID, observation: classified, verdict: verdict, coalescedTransfers: transfers)))
        capEvent(.sample(CapSample(verdict: verdict, requestStartedAt: runStartedAt, completedAt: response.finishedAt)))
    }

    /// What the monitor found about the in-flight request.
    enum InFlightFinding {
        case byteProgress(InFlightSnapshot, ByteProgressAssessment, requestID: Int)
        case trickle(TrickleSnapshot, TrickleAssessment, requestID: Int, purpose: RequestPurpose, url: String)
    }

    /// The wall-clock byte-progress check of the in-flight segment request:
    /// wedged → abort and re-request on a fresh connection; over-selected →
    /// abandon and lower the cap; otherwise the trickle rule (+Progress) judges
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
                bytesReceived: f.bytes, bytesExpected: f.expectedBytes, secondsSinceLastByte: now.seconds(since: f.lastByteAt),
                elapsedSeconds: now.seconds(since: f.startedAt), rttSeconds: lastRTTSeconds, segmentDurationSeconds: duration,
                rungBitrateBps: f.rungBitrateBps ?? 0, measuredThroughputBps: throughput, forwardBufferSeconds: bufferSeconds)
            let assessment = configuration.byteProgress.classify(snapshot)
            switch assessment.remedy {
            case .none:
                break
            case .reRequestOnFreshConnection:
                inFlight?.abort = .wedged
                f.token.cancel()
                return .byteProgress(snapshot, assessment, requestID: f.requestID)
            case .abandonAndCap:
                // Abandoning pays only when there is a lower rung to go to; without one the trickle rule judges it.
                if let rung = f.rungBitrateBps, OverSelectionCap.abandons(rungBps: rung, ladderBitratesBps: variants.map(\.bandwidthBps)) {
                    inFlight?.abort = .overSelected
                    f.token.cancel()
                    return .byteProgress(snapshot, assessment, requestID: f.requestID)
                }
            }
            return judgeTrickle(f, at: now, bufferSeconds: bufferSeconds, wedgeWindowSeconds: assessment.wedgeWindowSeconds)
                .map { .trickle($0.0, $0.1, requestID: f.requestID, purpose: f.purpose, url: f.url) }
        }
        switch found {
        case nil:
            return
        case let .trickle(snapshot, assessment, requestID, purpose, url):
            performTrickle(requestID: requestID, purpose: purpose, url: url, snapshot: snapshot, assessment: assessment, at: now)
        case let .byteProgress(snapshot, assessment, requestID):
            recorder.record(.byteProgress(ByteProgressRecord(requestID: requestID, snapshot: snapshot, assessment: assessment)))
            switch assessment.remedy {
            case .reRequestOnFreshConnection:
                lock.withLock { freshConnectionNext = true }
                capEvent(.wedgeDetected(estimateBps: measuredEstimate(), at: now))
            case .abandonAndCap(let cap):
                abandonForLowerRung(rungBitrateBps: snapshot.rungBitrateBps, suggestedCapBps: cap, bytesReceived: snapshot.bytesReceived,
                                    elapsedSeconds: snapshot.measuredThroughputBps.map { _ in snapshot.elapsedSeconds },
                                    measuredBps: snapshot.measuredThroughputBps, ratio: assessment.overSelectionRatio ?? 0, at: now)
            case .none:
                break
            }
        }
    }

    /// After abandoning a fetch for a lower rung (over-selected, or trickling over its budget):
    /// the abandoned transfer is evidence too — its throughput so far goes to the estimator — and
    /// the choice is capped below the abandoned rung until delivery earns it back.
    func abandonForLowerRung(rungBitrateBps: Double, suggestedCapBps cap: Double, bytesReceived: Int, elapsedSeconds: Double?,
                             measuredBps: Double?, ratio: Double, at now: MonotonicInstant) {
        let partial = lock.withLock { () -> ThroughputSample? in
            overSelectionCapBps = OverSelectionCap.afterAbandoning(
                rungBitrateBps, suggestedCapBps: cap, current: overSelectionCapBps,
                ladderBitratesBps: variants.map(\.bandwidthBps))
            guard let elapsed = elapsedSeconds, bytesReceived > 0 else { return nil }
            return ThroughputSample(bytes: bytesReceived, transferSeconds: elapsed, firstByteSeconds: 0)
        }
        if let partial {
            let verdict = lock.withLock { estimator.add(partial) }
            recorder.record(.capNote(CapNote(kind: .overSelection, phase: lock.withLock { capController.phase },
                detail: String(format: "abandoned after %d bytes at %.0f bps (estimator: %@); choice capped at %d bps until delivery earns more",
                               partial.bytes, partial.throughputBps(minimumSeconds: 0.001), verdict.rawValue, lock.withLock { overSelectionCapBps ?? 0 }))))
        }
        capEvent(.overSelected(suggestedCapBps: cap, ratio: ratio, measuredBps: measuredBps, at: now))
    }

    /// Stores the session's final estimate for the next start on this network.
    func saveEstimate() {
        let (key, snapshot, estimate, samples) = lock.withLock {
            (networkKey, storeSnapshot, estimator.hasEstimate ? estimator.estimateBps : nil, networkLimitedSamples)
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
