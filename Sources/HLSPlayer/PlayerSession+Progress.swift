// PlayerSession: the progress guarantee — the trickle rule for the in-flight request
// (docs/startup-cap.md §4b). The decision is an HLSCore value (TrickleClassifier); this file
// feeds it on the monitor and performs what it says.

import Foundation
import HLSCore
import HLSNet

extension PlayerSession {
    // MARK: - The trickle rule (monitor)

    /// Judges the in-flight request by its projected completion when the byte-progress rules
    /// (wedge, over-selection) had nothing to do; returns the request's snapshot and the verdict
    /// to perform, or nil. Called with `lock` held.
    func judgeTrickle(_ f: InFlightRequest, at now: MonotonicInstant, bufferSeconds: Double,
                      wedgeWindowSeconds: Double) -> (TrickleSnapshot, TrickleAssessment)? {
        let duration: Double
        switch f.purpose {
        case .segment: duration = f.segmentDurationSeconds ?? 0
        case .mediaPlaylist, .multivariantPlaylist: duration = 0
        case .initSection, .key, .steeringManifest: return nil
        }
        let rule = configuration.trickle
        let window = rule.rateWindowSeconds(wedgeWindowSeconds: wedgeWindowSeconds)
        inFlight?.rateWindow.add(bytes: f.bytes, at: now, keepSeconds: window)
        let recent = inFlight?.rateWindow.rateBps(windowSeconds: window)
        let sinceFirst = f.firstByteAt.map { now.seconds(since: $0) } ?? 0
        let average: Double? = f.bytes > 0 && sinceFirst > 0 ? Double(f.bytes) * 8 / sinceFirst : nil
        let elapsed = now.seconds(since: f.startedAt)
        let waited: Double
        switch timeline.phase {
        case .playing, .ended: waited = 0
        case .startingUp: waited = elapsed
        case .stalled: waited = min(elapsed, timeline.stallStartedAt.map { max(0, now.seconds(since: $0)) } ?? elapsed)
        }
        // A lower rung helps a variant's segment only: not a pinned variant, an audio rendition or a playlist.
        let lower = f.purpose == .segment && f.track == nil && configuration.pinnedVariantIndex == nil
            && f.rungBitrateBps.map { rung in variants.contains { Double($0.bandwidthBps) < rung } } == true
        let snapshot = TrickleSnapshot(
            bytesReceived: f.bytes, bytesExpected: f.expectedBytes, rungBitrateBps: f.rungBitrateBps, segmentDurationSeconds: duration,
            elapsedSeconds: elapsed, secondsSinceLastByte: now.seconds(since: f.lastByteAt), averageRateBps: average,
            recentRateBps: recent, rateWindowSeconds: window, forwardBufferSeconds: bufferSeconds, waitedSeconds: waited,
            lowerRungAvailable: lower, reRequestsSoFar: f.trickleReRequests, wedgeWindowSeconds: wedgeWindowSeconds)
        let assessment = rule.classify(snapshot)
        switch assessment.verdict {
        case .healthy:
            // A wait over the budget with nothing lower is logged once per request, so the log says why the player waits.
            guard assessment.reason == .overBudgetWithinPatience, !f.trickleWaitLogged else { return nil }
            inFlight?.trickleWaitLogged = true
            return (snapshot, assessment)
        case .abandonLower:
            inFlight?.abort = .overSelected
        case .reRequest:
            inFlight?.abort = .trickleReRequest
        case .fail:
            var what = f.purpose == .segment ? "segment \(f.mediaSequence.map(String.init) ?? "?")" : f.purpose.rawValue
            if let track = f.track { what += " (\(track))" }
            inFlight?.abort = .trickleFailed(
                "\(what) \(f.url) trickled: \(assessment.summary); still too slow after \(f.trickleReRequests) fresh-connection re-request\(f.trickleReRequests == 1 ? "" : "s") and nothing lower to go to")
        }
        f.token.cancel()
        return (snapshot, assessment)
    }

    /// Logs a trickle judgement and performs its side effects on the cap (the abort itself is the loader's).
    func performTrickle(requestID: Int, purpose: RequestPurpose, url: String, snapshot: TrickleSnapshot,
                        assessment: TrickleAssessment, at now: MonotonicInstant) {
        recorder.record(.trickle(TrickleRecord(requestID: requestID, purpose: purpose.rawValue, url: url,
                                               snapshot: snapshot, assessment: assessment)))
        switch assessment.verdict {
        case .abandonLower:
            // As an over-selection: cap below the abandoned rung at what is arriving, and decide again.
            let rate = assessment.rateBps ?? 0
            let cap = rate * configuration.byteProgress.downshiftSafetyFactor
            abandonForLowerRung(rungBitrateBps: snapshot.rungBitrateBps ?? 0, suggestedCapBps: cap,
                                bytesReceived: snapshot.bytesReceived, elapsedSeconds: snapshot.elapsedSeconds,
                                measuredBps: rate > 0 ? rate : nil,
                                ratio: rate > 0 ? (snapshot.rungBitrateBps ?? 0) / rate : 0, at: now)
        case .reRequest:
            lock.withLock { freshConnectionNext = true }
        case .healthy, .fail:
            break
        }
    }
}
