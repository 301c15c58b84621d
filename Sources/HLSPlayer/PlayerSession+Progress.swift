// PlayerSession: the progress guarantee — the trickle rule for the in-flight request and the
// no-progress watchdog (docs/startup-cap.md §4b, docs/session-log.md). Both decisions are
// HLSCore values (TrickleClassifier, NoProgressWatchdog); this file feeds them on the monitor
// and performs what they say.

import Foundation
import HLSCore
import HLSNet

/// A dictionary that keeps only its newest `limit` keys (by first insertion).
struct RecentEntries<Value> {
    let limit: Int
    private var values: [String: Value] = [:]
    private var order: [String] = []

    init(limit: Int) { self.limit = max(1, limit) }

    subscript(key: String) -> Value? { values[key] }

    mutating func set(_ value: Value, for key: String) {
        guard values.updateValue(value, forKey: key) == nil else { return }
        order.append(key)
        if order.count > limit {
            // Drop the oldest quarter at once, so trimming is rare.
            let drop = order.count - limit + limit / 4
            for old in order.prefix(drop) { values[old] = nil }
            order.removeFirst(drop)
        }
    }

    var count: Int { values.count }
}

extension PlayerSession {
    // MARK: - Progress accounting (loader side)

    /// Body bytes that arrived for a request (`totalBytes` so far): media counts what is beyond the
    /// bytes already received for the same resource (a segment downloaded again is not new media);
    /// a playlist or steering manifest counts on the first load of its URL only — a reload counts
    /// when it completes changed (notePlaylistBody).
    func noteBodyBytes(totalBytes: Int, chunkBytes: Int, purpose: RequestPurpose, url: URL, range: String?) {
        switch purpose {
        case .segment, .initSection, .key:
            let key = url.absoluteString + (range.map { " bytes=\($0)" } ?? "")
            let before = mediaBytesReceived[key] ?? 0
            guard totalBytes > before else { return }
            mediaBytesReceived.set(totalBytes, for: key)
            lock.withLock { progressBytes += totalBytes - before }
        case .multivariantPlaylist, .mediaPlaylist, .steeringManifest:
            if playlistBodyHashes[url.absoluteString] == nil { lock.withLock { progressBytes += chunkBytes } }
        }
    }

    /// A playlist (or steering manifest) response completed: a reload whose body changed is progress.
    func notePlaylistBody(_ body: Data, purpose: RequestPurpose, url: URL) {
        guard purpose == .multivariantPlaylist || purpose == .mediaPlaylist || purpose == .steeringManifest else { return }
        let key = url.absoluteString
        let hash = body.hashValue
        if let previous = playlistBodyHashes[key], previous != hash {
            lock.withLock { progressBytes += body.count }
        }
        playlistBodyHashes.set(hash, for: key)
    }

    // MARK: - The no-progress watchdog (monitor)

    /// Feeds the watchdog; when it fires, logs its inputs and the fatal error and ends the session.
    func checkProgress(at now: MonotonicInstant, sample: BufferSample) {
        let timedOut: NoProgressRecord? = lock.withLock {
            guard
                case .timedOut(var record) = progressWatchdog.observe(
                    positionSeconds: sample.positionSeconds, bufferedEndSeconds: core.timeline.bufferedEndSeconds,
                    downloadedBytes: progressBytes, at: now)
            else { return nil }
            record.phase = sample.phase
            record.bufferSeconds = sample.bufferSeconds
            record.inFlight = inFlight.map { f in
                var what = f.purpose.rawValue
                if let msn = f.mediaSequence { what += " \(msn)" }
                if let track = f.track { what += " (\(track))" }
                return String(format: "%@ %@: %d bytes, last byte %.1f s ago", what, f.url, f.bytes, f.idleSeconds(at: now))
            }
            return record
        }
        guard let fired = timedOut else { return }
        recorder.record(.noProgress(fired))
        var message = String(
            format:
                "no progress for %.1f s (--no-progress-timeout %g): no new media bytes or changed playlists arrived (%d bytes counted) and the media clock did not move through new media (at %.3f s; new media ends at %.3f s); phase %@, buffer %.1f s",
            fired.secondsWithoutProgress, fired.timeoutSeconds, fired.downloadedBytes, fired.positionSeconds,
            fired.newMediaEndSeconds, fired.phase?.rawValue ?? "?", fired.bufferSeconds ?? 0)
        if fired.positionSeconds > fired.newMediaEndSeconds + NoProgressWatchdog.positionToleranceSeconds {
            message += "; the clock has been playing media downloaded again, not new media"
        }
        message += fired.inFlight.map { "; in flight: \($0)" } ?? "; nothing in flight"
        recorder.record(
            .error(
                ErrorRecord(
                    fatal: true, category: SessionFailure.Category.noProgress.rawValue, message: message,
                    url: shown(configuration.url))))
        requestStop(reason: .error, error: message, category: .noProgress)
    }

    // MARK: - The trickle rule (monitor)

    /// Judges the in-flight request by its projected completion when the byte-progress rules
    /// (wedge, over-selection) had nothing to do; returns the request's snapshot and the verdict
    /// to perform, or nil. Called with `lock` held.
    func judgeTrickle(
        _ f: InFlightRequest, at now: MonotonicInstant, bufferSeconds: Double,
        wedgeWindowSeconds: Double
    ) -> (TrickleSnapshot, TrickleAssessment)? {
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
        let elapsed = f.elapsedSeconds(at: now)
        let waited: Double
        switch core.timeline.phase {
        case .playing, .ended: waited = 0
        case .startingUp: waited = elapsed
        case .stalled: waited = min(elapsed, core.timeline.stallStartedAt.map { max(0, now.seconds(since: $0)) } ?? elapsed)
        }
        // A lower rung helps a variant's segment only: not a pinned variant, an audio rendition or a playlist.
        let lower =
            f.purpose == .segment && f.track == nil && configuration.pinnedVariantIndex == nil
            && f.rungBitrateBps.map { rung in variants.contains { Double($0.bandwidthBps) < rung } } == true
        let snapshot = TrickleSnapshot(
            bytesReceived: f.bytes, bytesExpected: f.expectedBytes, rungBitrateBps: f.rungBitrateBps, segmentDurationSeconds: duration,
            elapsedSeconds: elapsed, secondsSinceLastByte: f.idleSeconds(at: now), averageRateBps: average,
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
            // A reference rule with its own abandonment (BOLA-E) is evaluated as published: hlsplay's
            // abandon-lower stands aside (SessionCore.judgeInFlight).
            if core.referenceRuleOwnsAbandonment { return nil }
            inFlight?.abort = .overSelected
        case .reRequest:
            inFlight?.abort = .trickleReRequest
        case .fail:
            var what = f.purpose == .segment ? "segment \(f.mediaSequence.map(String.init) ?? "?")" : f.purpose.rawValue
            if let track = f.track { what += " (\(track))" }
            inFlight?.abort = .trickleFailed(
                "\(what) \(f.url) trickled: \(assessment.summary); still too slow after \(f.trickleReRequests) fresh-connection re-request\(f.trickleReRequests == 1 ? "" : "s") and nothing lower to go to"
            )
        }
        f.token.cancel()
        return (snapshot, assessment)
    }

    /// Logs a trickle judgement and performs its side effects on the cap (the abort itself is the loader's).
    func performTrickle(
        requestID: Int, purpose: RequestPurpose, url: String, snapshot: TrickleSnapshot,
        assessment: TrickleAssessment, at now: MonotonicInstant
    ) {
        recorder.record(
            .trickle(
                TrickleRecord(
                    requestID: requestID, purpose: purpose.rawValue, url: url,
                    snapshot: snapshot, assessment: assessment)))
        switch assessment.verdict {
        case .abandonLower:
            // As an over-selection: cap below the abandoned rung at what is arriving, and decide again.
            let rate = assessment.rateBps ?? 0
            let cap = rate * configuration.byteProgress.downshiftSafetyFactor
            abandonForLowerRung(
                rungBitrateBps: snapshot.rungBitrateBps ?? 0, suggestedCapBps: cap,
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
