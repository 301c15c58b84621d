// PlayerSession: one segment from request to forward buffer (keys, init sections, decryption, demux, placement on the media timeline).

import Foundation
import HLSCore
import HLSMedia
import HLSNet

extension PlayerSession {
    /// Fetches, decrypts and demuxes one segment (or one LL-HLS part, `part`
    /// set, placed at `placeAt`) into the forward buffer.
    ///
    /// `handsCutsToLoader`, `continuing`, `firstAttempt`: the media request's, as `fetch` takes them (a main-track
    /// segment, sequenced by a loader core).
    func fetchAndBuffer(
        _ segment: MediaSegment, variantIndex: Int, live: Bool, isNewest: Bool,
        part: Int? = nil, placeAt: Double? = nil, handsCutsToLoader: Bool = false, continuing: Bool = false, firstAttempt: Int = 1
    ) throws -> Loaded<Void> {
        guard let variant = variants.first(where: { $0.index == variantIndex }),
            var start = placeAt ?? segmentStart(variantIndex: variantIndex, mediaSequence: segment.mediaSequence)
        else {
            throw SessionFailure(
                category: .internalError, message: "segment \(segment.mediaSequence) of variant \(variantIndex) is not on the core.timeline",
                url: shown(segment.uri))
        }
        if segment.gap {
            // EXT-X-GAP: nothing to fetch; the media clock plays through the gap
            // (no stall), as a player shows the last frame over missing media.
            recorder.record(
                .segmentSkipped(
                    SegmentSkipped(
                        variantIndex: variantIndex, mediaSequence: segment.mediaSequence, durationSeconds: segment.durationSeconds,
                        reason: "EXT-X-GAP")))
            let now = clock.now()
            let actions = lock.withLock { core.timeline.appendBuffered(upTo: start + segment.durationSeconds, at: now) }
            record(actions)
            return .loaded(())
        }
        let keyLoaded = try segmentKey(segment, variantIndex: variantIndex)
        guard case .loaded(let aes) = keyLoaded else { return keyLoaded.passedOn()! }
        let initLoaded = try initSection(for: segment, key: aes, variantIndex: variantIndex, cache: &initCache, track: nil)
        guard case .loaded(let initData) = initLoaded else { return initLoaded.passedOn()! }
        let rungBps = Double(variant.bandwidthBps > 0 ? variant.bandwidthBps : 0)
        let loaded = try fetch(
            segment.uri, purpose: .segment, variantIndex: variantIndex, mediaSequence: segment.mediaSequence,
            byteRange: segment.byteRange, policy: configuration.retry.segment,
            segment: (segment.durationSeconds, rungBps > 0 ? rungBps : nil, live && isNewest),
            isPart: part != nil, handsCutsToLoader: handsCutsToLoader, continuing: continuing, firstAttempt: firstAttempt)
        guard case .loaded(let response) = loaded else { return loaded.passedOn()! }

        var body = response.body
        if let aes {
            body = try decrypt(
                body, key: aes.key, iv: aes.iv ?? SegmentDecryptor.iv(forMediaSequence: segment.mediaSequence),
                what: "segment \(segment.mediaSequence)", url: segment.uri)
        }
        let demuxStarted = clock.now()
        let result: DemuxResult
        do {
            // The codec parameters found in the variant's previous segment are reused instead
            // of FFmpeg decoding the first frames of every segment again to find them (packets
            // and timestamps are the same). A segment that begins mid-GOP has no decodable
            // frame for such a probe to find its dimensions in.
            var parameters = CodecParameterSource.probe
            if let known = lastDemuxedTracks, known.variantIndex == variantIndex,
                !configuration.decode || known.discontinuitySequence == segment.discontinuitySequence
            {
                parameters = .reusing(known.tracks)
            }
            result = try SegmentDemuxer.demux(
                segment: body, initializationSection: initData,
                hint: Self.containerHint(for: segment, body: body, initializationSection: initData),
                codecParameters: parameters, pictureLimit: pictureLimit)
            lastDemuxedTracks = (variantIndex, segment.discontinuitySequence, result.tracks)
        } catch .pictureAboveLimit(let width, let height, _) {
            // The parameter sets claim pictures above --max-resolution: refused before the probe decoded any.
            if let limit = configuration.maxResolution {
                throw refuseResolution(
                    ResolutionLimitRecord(
                        action: .refused, source: .container, variantIndex: variantIndex,
                        width: width, height: height, limit: limit, mediaSequence: segment.mediaSequence),
                    url: segment.uri)
            }
            return .loaded(())
        } catch {
            recorder.record(
                .error(
                    ErrorRecord(
                        fatal: false, category: "media", message: "segment \(segment.mediaSequence) could not be demuxed: \(error); skipped",
                        url: shown(segment.uri))))
            recorder.record(
                .segmentSkipped(
                    SegmentSkipped(
                        variantIndex: variantIndex, mediaSequence: segment.mediaSequence, durationSeconds: segment.durationSeconds,
                        reason: "demux failed: \(error)")))
            return .loaded(())
        }
        let demuxEnded = clock.now()
        let demuxSeconds = demuxEnded.seconds(since: demuxStarted)
        // Pictures above --max-resolution are refused here, before a decoder allocates them.
        if let limit = configuration.maxResolution,
            let track = result.tracks.first(where: { $0.kind == .video && !limit.admits(width: $0.width, height: $0.height) })
        {
            throw refuseResolution(
                ResolutionLimitRecord(
                    action: .refused, source: .container, variantIndex: variantIndex,
                    width: track.width, height: track.height, limit: limit,
                    mediaSequence: segment.mediaSequence, codec: track.codecName),
                url: segment.uri)
        }

        // Place the segment's packets on the media timeline: its earliest video
        // timestamp (else audio) lands on the segment's playlist start.
        let bufferedEndBefore = lock.withLock { core.tracks.mainEndSeconds }
        if live && placeAt == nil && abs(start - bufferedEndBefore) > 0.5 && firstSegmentFetched {
            // A jump in the live window or a resync to the edge: keep the clock continuous.
            start = bufferedEndBefore
        }
        let video = result.packets.filter { $0.kind == .video }
        let reference = (video.isEmpty ? result.packets : video).compactMap { $0.ptsSeconds ?? $0.dtsSeconds }.min() ?? 0
        let offset = start - reference
        // With an alternate audio rendition, the variant's own audio (if muxed in) is not played.
        let kept = audio == nil ? result.packets : result.packets.filter { $0.kind != .audio }
        // Without video (an audio-only stream or variant) the first decoded audio frame starts playback.
        lastMainSegmentHadVideo = !video.isEmpty
        let buffered = kept.map { p in
            BufferedPacket(
                packet: p, decodeSeconds: (p.dtsSeconds ?? p.ptsSeconds ?? reference) + offset,
                presentationSeconds: (p.ptsSeconds ?? p.dtsSeconds ?? reference) + offset,
                timelineOffsetSeconds: offset, variantIndex: variantIndex, mediaSequence: segment.mediaSequence,
                discontinuitySequence: segment.discontinuitySequence, segmentHasVideo: !video.isEmpty)
        }
        if let date = segment.programDateTime {
            lock.withLock { programDateAnchor = (start, date) }
        }
        // Before the packets reach the decoder, which reports the first frame with this breakdown (the first segment's only).
        let (lastByteAt, demuxedAt) = (secondsSinceStart(response.finishedAt), secondsSinceStart(demuxEnded))
        lock.withLock { core.segmentDemuxed(lastByteAtSeconds: lastByteAt, demuxedAtSeconds: demuxedAt, demuxSeconds: demuxSeconds) }
        buffer.append(buffered)
        lastSegmentPacketBytes = kept.reduce(0) { $0 + $1.size }
        let end = start + segment.durationSeconds
        // Landed (SessionCore.segmentLanded): before the first start the controller judges the start (a risky start
        // waits for the policy's resume threshold instead of the startup one); the main track reaches `end`.
        let landing = SegmentLanding(variantIndex: variantIndex, bandwidthBps: variant.bandwidthBps, startSeconds: start, endSeconds: end)
        // The machine's readings are files of the kernel's: read outside the lock, and only when the start is judged.
        let judgesStart = lock.withLock { core.timeline.phase == .startingUp && core.runsPolicy }
        let (cpu, thermal) = judgesStart ? (hostSignals.cpuPressureAvg10Percent(), hostSignals.thermalMaxCelsius()) : (nil, nil)
        let now = clock.now()
        let (landed, ahead) = lock.withLock {
            let landed = core.segmentLanded(landing, currentRungBps: currentRungBps, at: now, sessionStart: sessionStart) {
                deviceReadings(cpuPressureAvg10Percent: cpu, thermalMaxCelsius: thermal)
            }
            return (landed, core.timeline.bufferSeconds(at: now))
        }
        perform(landed.policy)
        record(landed.clock)
        perform(landed.buffered)
        bufferedSegments.append((segment.mediaSequence, start, offset, segment.discontinuitySequence))
        if bufferedSegments.count > Self.bufferedSegmentsKept { bufferedSegments.removeFirst(bufferedSegments.count - Self.bufferedSegmentsKept) }
        let indicated =
            variant.bandwidthBps > 0
            ? variant.bandwidthBps
            : (segment.durationSeconds > 0 ? Int(saturating: Double(response.body.count) * 8 / segment.durationSeconds) : 0)
        var bufferedRecord = SegmentBuffered(
            variantIndex: variantIndex, bandwidthBps: indicated, mediaSequence: segment.mediaSequence,
            startSeconds: start, durationSeconds: segment.durationSeconds, bytes: response.body.count,
            videoPackets: video.count, audioPackets: kept.count - video.count,
            corruptPackets: result.corruptPacketCount, demuxSeconds: demuxSeconds,
            bufferedEndSeconds: end, bufferSeconds: ahead)
        bufferedRecord.timelineOffsetSeconds = offset
        bufferedRecord.part = part
        bufferedRecord.startsWithKeyframe = result.startsWithKeyframe
        recorder.record(.segmentBuffered(bufferedRecord))
        for warning in result.warnings.prefix(5) {
            recorder.record(
                .error(ErrorRecord(fatal: false, category: "media", message: "segment \(segment.mediaSequence): \(warning)", url: shown(segment.uri)))
            )
        }
        logDemuxMessages(result, mediaSequence: segment.mediaSequence, url: segment.uri)
        if !configuration.decode, !kept.isEmpty {
            // Demux only: the first demuxed packets stand in for the first frames: a video packet,
            // or an audio packet of a segment without video.
            for kind in [TrackKind.video, .audio] where !demuxedFirstKinds.contains(kind) {
                guard let first = kept.first(where: { $0.kind == kind }) else { continue }
                demuxedFirstKinds.insert(kind)
                recorder.record(
                    .trackFirstFrame(
                        TrackFirstFrame(
                            kind: kind.rawValue, timeToFirstFrameSeconds: secondsSinceStart(clock.now()), variantIndex: variantIndex,
                            codec: first.parameters.codecName, width: kind == .video ? variant.resolution?.width : nil,
                            height: kind == .video ? variant.resolution?.height : nil)))
            }
            markFirstFrame(
                kind: video.isEmpty ? "audio" : "video", width: video.isEmpty ? nil : variant.resolution?.width,
                height: video.isEmpty ? nil : variant.resolution?.height, pts: nil, variantIndex: variantIndex)
            if live, lock.withLock({ resyncFromSequence.map { segment.mediaSequence >= $0 } ?? false }) {
                liveEvent(.frameDecoded(at: clock.now()))
            }
        }
        return .loaded(())
    }

    /// The decoders' picture limit (`--max-resolution`), as HLSMedia applies it; nil: none.
    var pictureLimit: PictureLimit? {
        configuration.maxResolution.map { limit in
            PictureLimit(longSide: limit.width, shortSide: limit.height) { limit.admits(width: $0, height: $1) }
        }
    }

    /// Logs a refusal of media above `--max-resolution` and returns the session's failure (a
    /// media error, exit 65): the stream's media is larger than it said, or than hlsplay decodes.
    func refuseResolution(_ record: ResolutionLimitRecord, url: URL?) -> SessionFailure {
        recorder.record(.resolutionLimit(record))
        let codec = record.codec.map { "\($0) " } ?? ""
        let segment = record.mediaSequence.map { " segment \($0)" } ?? ""
        let message =
            "variant \(record.variantIndex)\(segment): \(codec)pictures of \(record.width)x\(record.height) (from the \(record.source.rawValue)) "
            + "are above the resolution limit \(record.limit); refused before they were allocated (--max-resolution WxH or none sets the limit)"
        return SessionFailure(category: .media, message: message, url: url.map(shown))
    }

    /// What FFmpeg said while demuxing one segment, as one `error` event (category `ffmpeg`)
    /// with each distinct message and its count, within the FFmpeg message budget.
    func logDemuxMessages(_ result: DemuxResult, mediaSequence: Int, url: URL, track: String? = nil) {
        guard !result.ffmpegMessages.isEmpty else { return }
        let log = lock.withLock {
            loggedFFmpegMessages += 1
            return loggedFFmpegMessages <= Self.maxLoggedFFmpegMessages
        }
        guard log else { return }
        let what = (track.map { "\($0) " } ?? "") + "segment \(mediaSequence)"
        recorder.record(
            .error(
                ErrorRecord(
                    fatal: false, category: "ffmpeg",
                    message: "while demuxing \(what): " + result.ffmpegMessages.map(\.description).joined(separator: "; "), url: shown(url))))
    }

    /// The segment's AES-128 key and IV (nil: clear) (RFC 8216 §5.2): fetched like a
    /// segment and cached, its bytes never logged. SAMPLE-AES and DRM key formats
    /// are a clear "not supported" error.
    func segmentKey(_ segment: MediaSegment, variantIndex: Int) throws -> Loaded<(key: [UInt8], iv: [UInt8]?)?> {
        guard let key = segment.key else { return .loaded(nil) }
        switch key.method {
        case .none:
            return .loaded(nil)
        case .aes128:
            guard let keyURI = key.uri else {
                throw SessionFailure(category: .playlist, message: "EXT-X-KEY METHOD=AES-128 without a URI", url: shown(segment.uri))
            }
            let loaded = try keyBytes(keyURI, variantIndex: variantIndex, mediaSequence: segment.mediaSequence)
            guard case .loaded(let bytes) = loaded else { return loaded.passedOn()! }
            return .loaded((bytes, key.iv))
        case .sampleAES, .sampleAESCTR, .other:
            let name: String
            switch key.method {
            case .sampleAES: name = "SAMPLE-AES"
            case .sampleAESCTR: name = "SAMPLE-AES-CTR"
            case .other(let raw): name = raw
            default: name = "?"
            }
            throw SessionFailure(
                category: .media,
                message:
                    "EXT-X-KEY METHOD=\(name) (KEYFORMAT \(key.keyFormat)) is not supported: hlsplay plays clear and AES-128 segments only, no sample encryption or DRM",
                url: shown(segment.uri))
        }
    }

    /// The segment's Media Initialization Section (EXT-X-MAP), fetched once per
    /// URI and range: consecutive segments share `cache` until the map changes.
    func initSection(
        for segment: MediaSegment, key: (key: [UInt8], iv: [UInt8]?)?, variantIndex: Int?,
        cache: inout (map: MediaInitializationSection, data: Data)?, track: String?
    ) throws -> Loaded<Data?> {
        guard let map = segment.initializationSection else { return .loaded(nil) }
        if let cached = cache, cached.map == map { return .loaded(cached.data) }
        let loaded = try fetch(
            map.uri, purpose: .initSection, variantIndex: variantIndex, mediaSequence: segment.mediaSequence,
            byteRange: map.byteRange, policy: configuration.retry.segment, track: track)
        guard case .loaded(let response) = loaded else { return loaded.passedOn()! }
        var data = response.body
        if let key, let iv = key.iv {
            // An init section under an AES-128 key is encrypted with the key's explicit IV (RFC 8216 §4.3.2.5).
            data = try decrypt(data, key: key.key, iv: iv, what: "the initialization section", url: map.uri)
        }
        cache = (map, data)
        return .loaded(data)
    }

    /// The 16 key bytes behind a key URI, fetched once per URI.
    func keyBytes(_ uri: URL, variantIndex: Int, mediaSequence: Int) throws -> Loaded<[UInt8]> {
        if let cached = keyCache[uri] { return .loaded(cached) }
        guard
            let response = try fetch(
                uri, purpose: .key, variantIndex: variantIndex, mediaSequence: mediaSequence, byteRange: nil, policy: configuration.retry.segment
            ).value(unlessLiveStepDropped: "key", url: shown(uri))
        else { return .cancelled(.liveStepDropped) }
        guard response.body.count == 16 else {
            throw SessionFailure(category: .media, message: "AES-128 key \(shown(uri)) is \(response.body.count) bytes, not 16", url: shown(uri))
        }
        let bytes = [UInt8](response.body)
        keyCache[uri] = bytes
        return .loaded(bytes)
    }

    func decrypt(_ data: Data, key: [UInt8], iv: [UInt8], what: String, url: URL) throws -> Data {
        do {
            return try SegmentDecryptor.decryptAES128(data, key: key, iv: iv)
        } catch {
            throw SessionFailure(category: .media, message: "\(what) could not be decrypted: \(error)", url: shown(url))
        }
    }

    /// A URL as it goes into the log, HAR and messages: redacted unless --no-redact.
    func shown(_ url: URL) -> String {
        configuration.redactURLs ? URLRedaction.redacted(url) : url.absoluteString
    }

    /// Sleeps, waking early when the session stops or a live resync is asked for.
    func sleepUnlessStopping(_ seconds: Double) {
        let deadline = clock.now().advanced(bySeconds: seconds)
        while !lock.withLock({ stopping != nil || pendingLiveStep != nil }) {
            let left = deadline.seconds(since: clock.now())
            if left <= 0 { return }
            clock.sleep(until: clock.now().advanced(bySeconds: min(left, 0.05)))
        }
    }
}
