// PlayerSession: the decode thread, paced by the media clock, and its watchdog.

import Foundation
import HLSCore
import HLSMedia
import HLSNet

extension PlayerSession {
    // MARK: - Decode

    func decodeMain() {
        var decoders: [TrackKind: (decoder: TrackDecoder, variantIndex: Int, discontinuity: Int, parameters: CodecParameters)] = [:]
        var firstFrameSeen = false
        var drained = false
        var injectedHangDone = false
        while true {
            let packet = buffer.take(timeoutSeconds: 0.05) { [self] p in
                if !firstFrameSeen { return true }
                let now = clock.now()
                let (position, phase) = lock.withLock { (timeline.positionSeconds(at: now), timeline.phase) }
                guard phase == .playing || phase == .stalled || phase == .startingUp else { return false }
                return p.decodeSeconds <= position + Self.decodeLookaheadSeconds
            }
            if isStopping { break }
            guard let item = packet else {
                // End of stream and nothing left: flush the frames the decoders still hold.
                if !drained, firstFrameSeen, lock.withLock({ timeline.endOfStream }), buffer.count == 0 {
                    drained = true
                    for (_, entry) in decoders {
                        do {
                            count(try entry.decoder.drain(), offset: 0, variantIndex: entry.variantIndex, checkLate: false)
                        } catch {
                            decodeError("draining the \(entry.decoder.codecName) decoder: \(error)")
                        }
                    }
                }
                continue
            }
            guard item.packet.kind == .video || item.packet.kind == .audio else { continue }
            var entry = decoders[item.packet.kind]
            // A new variant, a discontinuity or a new codec configuration record (a changed EXT-X-MAP)
            // resets the decoder (after draining what it holds).
            if entry == nil || entry!.variantIndex != item.variantIndex || entry!.discontinuity != item.discontinuitySequence
                || !entry!.parameters.sameFormat(as: item.packet.parameters) {
                if let old = entry {
                    // Variant switch: the old decoder's delayed frames are still shown.
                    do {
                        count(try old.decoder.drain(), offset: item.timelineOffsetSeconds, variantIndex: old.variantIndex, checkLate: true)
                    } catch {
                        decodeError("draining the \(old.decoder.codecName) decoder at a switch: \(error)")
                    }
                }
                do {
                    entry = (try TrackDecoder(parameters: item.packet.parameters, threadCount: configuration.decodeThreadCount), item.variantIndex,
                             item.discontinuitySequence, item.packet.parameters)
                    decoders[item.packet.kind] = entry
                } catch {
                    decodeError("cannot open a \(item.packet.kind.rawValue) decoder: \(error)")
                    continue
                }
            }
            let frames: [DecodedFrame]
            let decodeStarted = clock.now()
            defer {
                let busy = clock.now().seconds(since: decodeStarted)
                let media = item.packet.kind == .video ? (item.packet.durationSeconds ?? 0) : 0
                lock.withLock {
                    decodeBusySeconds += busy
                    decodedMediaSeconds += media
                    lastDecodeProgressAt = clock.now()
                    decodeHangReported = false
                }
            }
            if let hang = Self.injectedDecodeHangSeconds, !injectedHangDone, firstFrameSeen {
                injectedHangDone = true
                Thread.sleep(forTimeInterval: hang)
            }
            do {
                frames = try entry!.decoder.decode(item.packet)
            } catch {
                decodeError("segment \(item.mediaSequence): \(error)")
                continue
            }
            count(frames, offset: item.timelineOffsetSeconds, variantIndex: item.variantIndex, checkLate: true)
            if item.packet.kind == .video, frames.contains(where: { $0.kind == .video }),
               lock.withLock({ resyncFromSequence.map { item.mediaSequence >= $0 } ?? false }) {
                liveEvent(.frameDecoded(at: clock.now()))
            }
        }

        /// Counts decoded frames; the first video frame is the session's first frame.
        func count(_ frames: [DecodedFrame], offset: Double, variantIndex: Int, checkLate: Bool) {
            var video = 0, audio = 0, late = 0
            let startPosition = frames.isEmpty ? 0 : lock.withLock { timeline.startPositionSeconds }
            for frame in frames {
                switch frame.kind {
                case .video:
                    video += 1
                    if let pts = frame.ptsSeconds, pts + offset < startPosition - Self.preciseStartToleranceSeconds {
                        // Before an EXT-X-START PRECISE=YES position: decoded for its references, never presented.
                        continue
                    }
                    if !firstFrameSeen {
                        firstFrameSeen = true
                        markFirstFrame(width: frame.width, height: frame.height, pts: frame.ptsSeconds.map { $0 + offset }, variantIndex: variantIndex)
                    } else if checkLate, let pts = frame.ptsSeconds {
                        let now = clock.now()
                        let position = lock.withLock { timeline.positionSeconds(at: now) }
                        if pts + offset < position - Self.lateFrameToleranceSeconds { late += 1 }
                    }
                case .audio:
                    audio += 1
                default:
                    break
                }
            }
            if video + audio + late > 0 {
                lock.withLock {
                    decodeStats.videoFrames += video
                    decodeStats.audioFrames += audio
                    decodeStats.lateVideoFrames += late
                }
            }
        }
    }

    func decodeError(_ message: String) {
        let log = lock.withLock {
            decodeStats.decodeErrors += 1
            loggedDecodeErrors += 1
            return loggedDecodeErrors <= Self.maxLoggedDecodeErrors
        }
        if log { recorder.record(.error(ErrorRecord(fatal: false, category: "decode", message: message))) }
    }

    func ffmpegMessage(level: Int32, message: String) {
        let log = lock.withLock {
            loggedDecodeErrors += 1
            return loggedDecodeErrors <= Self.maxLoggedDecodeErrors
        }
        if log {
            recorder.record(.error(ErrorRecord(fatal: false, category: "ffmpeg", message: message.trimmingCharacters(in: .whitespacesAndNewlines))))
        }
    }

    func markFirstFrame(width: Int?, height: Int?, pts: Double?, variantIndex: Int) {
        let now = clock.now()
        let (record, actions): (FirstFrame?, [PlaybackAction]) = lock.withLock {
            guard !timeline.firstFrameDecoded else { return (nil, []) }
            let at = secondsSinceStart(now)
            breakdown.firstFrameAtSeconds = at
            if let last = breakdown.firstSegmentLastByteAtSeconds, let first = breakdown.firstSegmentFirstByteAtSeconds {
                breakdown.firstSegmentFirstByteSeconds = first - (breakdown.mediaPlaylistAtSeconds ?? 0)
                breakdown.firstSegmentLastByteSeconds = last - first
            }
            breakdown.firstFrameDecodeSeconds = at - (breakdown.demuxedAtSeconds ?? at)
            let actions = timeline.markFirstFrameDecoded(at: now)
            return (FirstFrame(timeToFirstFrameSeconds: at, variantIndex: variantIndex, width: width, height: height, ptsSeconds: pts, breakdown: breakdown), actions)
        }
        if let record {
            recorder.record(.firstFrame(record))
            capEvent(.firstFrame(at: now))
        }
        self.record(actions)
    }
}

// MARK: - Decode watchdog

extension PlayerSession {
    /// On the monitor: a decode loop that has not finished a packet for the
    /// hang threshold while playing, with a packet due, is reported (once per episode).
    func checkDecodeHang(at now: MonotonicInstant, phase: PlaybackPhase) {
        guard configuration.decode, phase == .playing else { return }
        let due = buffer.nextDecodeSeconds
        let report: (idle: Double, position: Double)? = lock.withLock {
            guard !decodeHangReported, let last = lastDecodeProgressAt else { return nil }
            let idle = now.seconds(since: last)
            let position = timeline.positionSeconds(at: now)
            guard idle >= Self.decodeHangThresholdSeconds, let due, due <= position else { return nil }
            decodeHangReported = true
            return (idle, position)
        }
        guard let report else { return }
        recorder.record(.error(ErrorRecord(fatal: false, category: "decode-hang",
            message: String(format: "no packet decoded for %.2f s while playing at %.2f s with packets due", report.idle, report.position))))
    }
}
