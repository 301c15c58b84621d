// PlayerSession: the progress guarantee — the no-progress watchdog and its progress accounting
// (docs/session-log.md). The decision is an HLSCore value (NoProgressWatchdog); this file feeds
// it on the monitor and performs what it says. The trickle rule for the in-flight request is the
// session core's (SessionCore.judgeInFlight, docs/startup-cap.md §4b), fed by checkInFlight.

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
                var what = f.info.purpose.rawValue
                if let msn = f.info.mediaSequence { what += " \(msn)" }
                if let track = f.info.track { what += " (\(track))" }
                return String(format: "%@ %@: %d bytes, last byte %.1f s ago", what, f.info.url, f.bytes, f.idleSeconds(at: now))
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
}
