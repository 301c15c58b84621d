// PlayerSession: the decode thread, paced by the media clock, and its watchdog.

import Foundation
import HLSCore
import HLSMedia
import HLSNet

extension PlayerSession {
    // MARK: - Decode

    /// A track's open decoder and what it decodes.
    struct OpenDecoder {
        var decoder: TrackDecoder
        var epoch: DecoderEpoch
        var parameters: CodecParameters
        /// The last packet's timestamp offset (for the frames a drain returns).
        var timelineOffsetSeconds: Double
        /// Whether its frames may start playback: video always; audio when the variant's
        /// segment at that moment has no video (as of its last packet).
        var startsPlayback: Bool
    }

    /// A track whose next decoder waits for an independent frame: why, and what was skipped.
    struct PendingDecoder {
        var reason: DecoderOpenReason
        var epoch: DecoderEpoch
        var skippedPackets = 0
        var firstSkippedSeconds: Double?
    }

    func decodeMain() {
        var decoders: [TrackKind: OpenDecoder] = [:]
        /// What each track's last decoder decoded (kept after it is closed, to tell a switch from a start).
        var lastEpochs: [TrackKind: DecoderEpoch] = [:]
        var pending: [TrackKind: PendingDecoder] = [:]
        /// The variant's current epoch (alternate audio has its own).
        var mainEpoch: DecoderEpoch?
        var firstFrameSeen = false
        /// Kinds whose first frame has been logged (track.firstFrame).
        var firstOfKind: Set<TrackKind> = []
        var drained = false
        var injectedHangDone = false
        let pictureLimit = self.pictureLimit

        /// Flushes a decoder's delayed frames into the counts (they are still shown) and closes it.
        func close(_ kind: TrackKind, checkLate: Bool, why: String) {
            guard let old = decoders.removeValue(forKey: kind) else { return }
            do {
                count(
                    try old.decoder.drain(), offset: old.timelineOffsetSeconds, variantIndex: old.epoch.variantIndex,
                    codec: old.decoder.codecName, startsPlayback: old.startsPlayback, checkLate: checkLate)
            } catch {
                decodeError("draining the \(old.decoder.codecName) decoder \(why): \(error)")
            }
        }

        while true {
            let packet = buffer.take(timeoutSeconds: 0.05) { [self] p in
                if !firstFrameSeen { return true }
                let now = clock.now()
                let (position, phase) = lock.withLock { (core.timeline.positionSeconds(at: now), core.timeline.phase) }
                guard phase == .playing || phase == .stalled || phase == .startingUp else { return false }
                return p.decodeSeconds <= position + Self.decodeLookaheadSeconds
            }
            if isStopping { break }
            guard let item = packet else {
                // End of stream and nothing left: flush the frames the decoders still hold (also
                // before a first frame: a short stream may end inside a decoder's reorder delay).
                if !drained, lock.withLock({ core.timeline.endOfStream }), buffer.count == 0 {
                    drained = true
                    for kind in Array(decoders.keys) { close(kind, checkLate: false, why: "at the end") }
                }
                continue
            }
            let kind = item.packet.kind
            guard kind == .video || kind == .audio else { continue }
            let epoch = DecoderEpoch(variantIndex: item.variantIndex, discontinuitySequence: item.discontinuitySequence)
            let isMain = item.variantIndex != AudioTrack.packetVariantIndex
            if isMain, mainEpoch != epoch {
                // A variant switch or a discontinuity ends every decoder of the variant's track,
                // also of a kind the new epoch may not carry (video, switching to an audio-only variant).
                for (k, open) in decoders where open.epoch.variantIndex != AudioTrack.packetVariantIndex && open.epoch != epoch {
                    close(k, checkLate: true, why: "at a switch")
                }
                mainEpoch = epoch
            }
            let open = decoders[kind]
            let compatible = open.map { $0.parameters.sameFormat(as: item.packet.parameters) } ?? false
            if let reason = DecoderContinuity.openReason(open: open?.epoch, last: lastEpochs[kind], packet: epoch, formatCompatible: compatible) {
                if open != nil { close(kind, checkLate: true, why: "at a format change") }
                var wait = pending[kind].flatMap { $0.epoch == epoch ? $0 : nil } ?? PendingDecoder(reason: reason, epoch: epoch)
                let skipped = wait.firstSkippedSeconds.map { item.decodeSeconds - $0 } ?? 0
                guard DecoderContinuity.startsHere(isVideo: kind == .video, isKeyframe: item.packet.isKeyframe, skippedSeconds: skipped) else {
                    // Not decodable before an independent frame: not fed to the new decoder.
                    wait.skippedPackets += 1
                    if wait.firstSkippedSeconds == nil { wait.firstSkippedSeconds = item.decodeSeconds }
                    pending[kind] = wait
                    lock.withLock { packetsAwaitingKeyframe += 1 }
                    continue
                }
                pending[kind] = nil
                // I-frame-only content has no reordering: each frame comes out as it is decoded, not
                // a reorder delay later (which would hold a short stream's every frame back).
                let lowDelay = kind == .video && lock.withLock { iFramesOnly }
                do {
                    let decoder = try TrackDecoder(
                        parameters: item.packet.parameters, threadCount: configuration.decodeThreadCount,
                        lowDelay: lowDelay, pictureLimit: pictureLimit)
                    decoders[kind] = OpenDecoder(
                        decoder: decoder, epoch: epoch, parameters: item.packet.parameters,
                        timelineOffsetSeconds: item.timelineOffsetSeconds, startsPlayback: true)
                    lastEpochs[kind] = epoch
                    recorder.record(
                        .decoderOpened(
                            DecoderOpened(
                                kind: kind.rawValue, codec: decoder.codecName, parameters: item.packet.parameters.description,
                                variantIndex: item.variantIndex, discontinuitySequence: item.discontinuitySequence,
                                mediaSequence: item.mediaSequence, reason: wait.reason, startSeconds: item.presentationSeconds,
                                skippedPackets: wait.skippedPackets, skippedSeconds: skipped,
                                startsAtKeyframe: kind != .video || item.packet.isKeyframe,
                                lowDelay: lowDelay ? true : nil)))
                    lock.withLock { packetsAwaitingKeyframe = 0 }
                } catch .pictureAboveLimit(let width, let height, _) {
                    refuseDecodedResolution(width: width, height: height, source: .container, item: item)
                    break
                } catch {
                    decodeError("cannot open a \(kind.rawValue) decoder: \(error)")
                    continue
                }
            }
            guard var entry = decoders[kind] else { continue }
            entry.timelineOffsetSeconds = item.timelineOffsetSeconds
            entry.startsPlayback = kind == .video || !item.segmentHasVideo
            decoders[kind] = entry
            let frames: [DecodedFrame]
            let decodeStarted = clock.now()
            defer {
                let busy = clock.now().seconds(since: decodeStarted)
                let media = kind == .video ? (item.packet.durationSeconds ?? 0) : 0
                let now = clock.now()
                lock.withLock { decodeWatch.decoded(busySeconds: busy, mediaSeconds: media, at: now) }
            }
            if let hang = Self.injectedDecodeHangSeconds, !injectedHangDone, firstFrameSeen {
                injectedHangDone = true
                clock.sleep(until: clock.now().advanced(bySeconds: hang))
            }
            do {
                frames = try entry.decoder.decode(item.packet)
            } catch .pictureAboveLimit(let width, let height, _) {
                refuseDecodedResolution(width: width, height: height, source: .decoder, item: item, codec: entry.decoder.codecName)
                break
            } catch {
                decodeError("segment \(item.mediaSequence): \(error)")
                continue
            }
            count(
                frames, offset: item.timelineOffsetSeconds, variantIndex: item.variantIndex, codec: entry.decoder.codecName,
                startsPlayback: entry.startsPlayback, checkLate: true)
            if entry.startsPlayback, !frames.isEmpty,
                lock.withLock({ resyncFromSequence.map { item.mediaSequence >= $0 } ?? false })
            {
                liveEvent(.frameDecoded(at: clock.now()))
            }
        }

        /// Counts decoded frames. The first presentable frame of each kind is logged; the first
        /// video frame, or the first audio frame where the variant carries no video
        /// (`startsPlayback`), is the session's first frame.
        func count(_ frames: [DecodedFrame], offset: Double, variantIndex: Int, codec: String, startsPlayback: Bool, checkLate: Bool) {
            var video = 0, audio = 0, late = 0
            let startPosition = frames.isEmpty ? 0 : lock.withLock { core.timeline.startPositionSeconds }
            for frame in frames where !frame.isResamplerFlush {
                switch frame.kind {
                case .video: video += 1
                case .audio: audio += 1
                case .other: continue
                }
                let pts = frame.ptsSeconds.map { $0 + offset }
                if let pts, pts < startPosition - Self.preciseStartToleranceSeconds {
                    // Before an EXT-X-START PRECISE=YES position: decoded for its references, never presented.
                    continue
                }
                if !firstOfKind.contains(frame.kind) {
                    firstOfKind.insert(frame.kind)
                    let at = secondsSinceStart(clock.now())
                    recorder.record(
                        .trackFirstFrame(
                            TrackFirstFrame(
                                kind: frame.kind.rawValue, timeToFirstFrameSeconds: at, variantIndex: variantIndex, codec: codec,
                                width: frame.kind == .video ? frame.width : nil, height: frame.kind == .video ? frame.height : nil, ptsSeconds: pts)))
                }
                if !firstFrameSeen {
                    if startsPlayback {
                        firstFrameSeen = true
                        markFirstFrame(
                            kind: frame.kind.rawValue, width: frame.kind == .video ? frame.width : nil,
                            height: frame.kind == .video ? frame.height : nil, pts: pts, variantIndex: variantIndex)
                    }
                } else if checkLate, frame.kind == .video, let pts {
                    let now = clock.now()
                    let position = lock.withLock { core.timeline.positionSeconds(at: now) }
                    if pts < position - Self.lateFrameToleranceSeconds { late += 1 }
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

    /// A decoder refused pictures above `--max-resolution` (found by the decoder in the
    /// bitstream, where the container said less or nothing): the session ends with a media error.
    func refuseDecodedResolution(width: Int, height: Int, source: ResolutionLimitRecord.Source, item: BufferedPacket, codec: String? = nil) {
        guard let limit = configuration.maxResolution, !isStopping else { return }
        let failure = refuseResolution(
            ResolutionLimitRecord(
                action: .refused, source: source, variantIndex: item.variantIndex,
                width: width, height: height, limit: limit,
                mediaSequence: item.mediaSequence, codec: codec ?? item.packet.parameters.codecName),
            url: nil)
        recorder.record(.error(ErrorRecord(fatal: true, category: failure.category.rawValue, message: failure.message, url: failure.url)))
        requestStop(reason: .error, error: failure.message, category: failure.category)
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
            loggedFFmpegMessages += 1
            return loggedFFmpegMessages <= Self.maxLoggedFFmpegMessages
        }
        if log {
            recorder.record(.error(ErrorRecord(fatal: false, category: "ffmpeg", message: message.trimmingCharacters(in: .whitespacesAndNewlines))))
        }
    }

    /// The first frame playback waits for (`kind` video, or audio for a variant without video).
    func markFirstFrame(kind: String, width: Int?, height: Int?, pts: Double?, variantIndex: Int) {
        let now = clock.now()
        let (actions, clockActions) = lock.withLock {
            core.firstFrame(
                at: now, sessionStart: sessionStart, variantIndex: variantIndex, kind: kind, width: width, height: height, ptsSeconds: pts)
        }
        perform(actions)
        record(clockActions)
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
            let position = core.timeline.positionSeconds(at: now)
            return decodeWatch.hang(
                at: now, positionSeconds: position, nextDueSeconds: due, thresholdSeconds: configuration.session.decodeHangThresholdSeconds
            ).map { ($0, position) }
        }
        guard let report else { return }
        recorder.record(
            .error(
                ErrorRecord(
                    fatal: false, category: "decode-hang",
                    message: String(format: "no packet decoded for %.2f s while playing at %.2f s with packets due", report.idle, report.position))))
    }
}
