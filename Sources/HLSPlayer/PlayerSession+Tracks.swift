// PlayerSession: the variant's track and an alternate audio rendition's (forward-buffer queues, audio playlist and segments).

import Foundation
import HLSCore
import HLSMedia
import HLSNet

extension PlayerSession {
    // MARK: - Tracks: the variant's and an alternate audio rendition

    /// The demuxer a segment needs: what its first bytes (or its EXT-X-MAP's) say
    /// (`ContainerHint.sniff`); when they say nothing known, EXT-X-MAP means fMP4, a
    /// packed-audio extension raw audio, other MP4 extensions a probe, anything else MPEG-TS.
    /// The bytes come first: names lie (`.ec3`, `.eac3`, `.aac` for an MPEG-TS file ...).
    static func containerHint(for segment: MediaSegment, body: Data, initializationSection: Data?) -> ContainerHint {
        if let sniffed = ContainerHint.sniff(segment: body, initializationSection: initializationSection) { return sniffed }
        if segment.initializationSection != nil { return .fragmentedMP4 }
        switch segment.uri.pathExtension.lowercased() {
        case "aac", "adts": return .packedAudioADTS
        case "mp3": return .packedMP3
        case "ac3": return .packedAC3
        case "ec3", "eac3": return .packedEAC3
        case "m4a", "m4s", "mp4": return .probe
        default: return .mpegTS
        }
    }

    /// One track's media now reaches `end` (SessionCore.trackExtended: the timeline gets the minimum of the
    /// tracks). Returns the buffer ahead.
    @discardableResult
    func extendBuffered(_ track: BufferTrack, to end: Double) -> Double {
        let now = clock.now()
        let (actions, ahead) = lock.withLock { (core.trackExtended(track, to: end, at: now), core.timeline.bufferSeconds(at: now)) }
        record(actions)
        return ahead
    }

    /// A track has no more media (VOD); when every track has ended, so has the stream (SessionCore.trackEnded).
    func endTrack(_ track: BufferTrack) {
        let now = clock.now()
        record(lock.withLock { core.trackEnded(track, at: now) })
    }

    /// Picks the audio for the variant's AUDIO group with AudioRenditionSelector
    /// (`--audio-lang`, DEFAULT, AUTOSELECT in the system language, first), and
    /// logs the choice with the candidates. A rendition without URI is muxed
    /// into the variant: nothing more to load.
    func chooseAudioRendition(forVariant variantIndex: Int) {
        guard let mv = multivariant, variantIndex >= 0, variantIndex < mv.variants.count,
            let group = mv.variants[variantIndex].audioGroup
        else { return }
        let preferences = AudioPreferences(
            requestedLanguage: configuration.audioLanguage,
            systemLanguage: AudioPreferences.languageTag(
                fromPOSIXLocale: ProcessInfo.processInfo.environment["LC_ALL"]
                    ?? ProcessInfo.processInfo.environment["LC_MESSAGES"] ?? ProcessInfo.processInfo.environment["LANG"]))
        let members = mv.renditions.filter { $0.type == .audio && $0.groupID == group }
        let candidates = members.map { "\($0.name) (\($0.language ?? "und"))\($0.uri == nil ? " muxed" : "")" }
        do {
            let choice = try AudioRenditionSelector.select(for: mv.variants[variantIndex], renditions: mv.renditions, preferences: preferences)
            var url: URL?
            if case .renditionPlaylist(let u) = choice.source { url = u }
            recorder.record(
                .audioRendition(
                    AudioRenditionRecord(
                        groupID: group, name: choice.rendition?.name, language: choice.rendition?.language, url: url.map(shown),
                        reason: choice.reason.rawValue, detail: choice.detail, requestedLanguageUnmatched: choice.requestedLanguageUnmatched,
                        candidates: candidates)))
            if let rendition = choice.rendition, let url { audio = AudioTrack(rendition: rendition, uri: url) }
        } catch {
            recorder.record(.error(ErrorRecord(fatal: false, category: "playlist", message: "\(error); playing the variant's own audio", url: nil)))
        }
    }

    /// Loads the audio rendition's next segment when the audio track is behind the variant's (or the variant's has
    /// ended), as `AlternateAudioRules.nextStep` says. Returns true when it did something (loaded a playlist or a
    /// segment, skipped one, or ended the track).
    func loadAudioIfBehind() throws -> Bool {
        guard var track = audio, !lock.withLock({ core.tracks.audioEnded }) else { return false }
        defer { audio = track }
        let (mainEnd, audioEnd, mainEnded) = lock.withLock {
            (core.tracks.mainEndSeconds, core.tracks.audioEndSeconds ?? core.tracks.mainEndSeconds, core.tracks.mainEnded)
        }
        let now = clock.now()
        let (step, next) = AlternateAudioRules.nextStep(
            playlist: track.playlist, timeline: track.timeline, nextMediaSequence: track.nextMediaSequence, mainEndSeconds: mainEnd,
            audioEndSeconds: audioEnd, mainEnded: mainEnded,
            variantSegments: bufferedSegments.map {
                AlternateAudioRules.BufferedSegment(mediaSequence: $0.mediaSequence, startSeconds: $0.startSeconds)
            },
            secondsSinceReload: track.lastReloadAt.map { now.seconds(since: $0) })
        track.nextMediaSequence = next

        let segment: MediaSegment
        let start: Double
        switch step {
        case .wait:
            return false
        case .loadPlaylist:
            // The rendition's playlist: loaded once for VOD; for live, reloaded when the next segment is not in it yet.
            // A request cut for a live step ends the turn (true: the fetch loop performs the step).
            try reloadAudioPlaylist(&track)
            return true
        case .endTrack:
            endTrack(.alternateAudio)
            return true
        case .skipExpired(let msn):
            recorder.record(
                .segmentSkipped(
                    SegmentSkipped(
                        variantIndex: AudioTrack.packetVariantIndex, mediaSequence: msn, durationSeconds: 0,
                        reason: "audio segment \(msn) left the rendition's window before it was loaded"
                    ).withTrack("audio")))
            return true
        case .load(let index, let startSeconds):
            segment = track.playlist!.segments[index]
            start = startSeconds
        }

        // Fetch, decrypt, demux, and place it: with the variant's timestamp offset at the same moment when
        // there is one (shared MPEG-TS clock: exact A/V alignment), else anchored on its own start.
        do {
            guard
                let response = try fetch(
                    segment.uri, purpose: .segment, variantIndex: nil, mediaSequence: segment.mediaSequence,
                    byteRange: segment.byteRange, policy: configuration.retry.segment, segment: (segment.durationSeconds, nil, false),
                    track: "audio"
                ).value(unlessLiveStepDropped: "audio segment", url: shown(segment.uri)),
                case .loaded(let aes) = try segmentKey(segment, variantIndex: AudioTrack.packetVariantIndex)
            else { return true }
            var body = response.body
            if let aes {
                body = try decrypt(
                    body, key: aes.key, iv: aes.iv ?? SegmentDecryptor.iv(forMediaSequence: segment.mediaSequence),
                    what: "audio segment \(segment.mediaSequence)", url: segment.uri)
            }
            guard
                let initData = try initSection(for: segment, key: aes, variantIndex: nil, cache: &track.initCache, track: "audio")
                    .value(unlessLiveStepDropped: "audio initialization section", url: shown(segment.uri))
            else { return true }
            let demuxStarted = clock.now()
            let hint = Self.containerHint(for: segment, body: body, initializationSection: initData)
            let result = try SegmentDemuxer.demux(
                segment: body, initializationSection: initData, hint: hint,
                pictureLimit: pictureLimit)
            let demuxSeconds = clock.now().seconds(since: demuxStarted)
            let packets = result.packets.filter { $0.kind == .audio }
            let reference = packets.compactMap { $0.ptsSeconds ?? $0.dtsSeconds }.min() ?? 0
            // Packed audio (raw ADTS) has no transport timestamps of its own (without an ID3 PRIV
            // timestamp each file starts at 0): it goes on its playlist time.
            let packed = hint.isPackedAudio
            let aligned =
                packed ? nil : bufferedSegments.last { abs($0.startSeconds - start) < 0.05 && $0.discontinuity == segment.discontinuitySequence }
            let offset = aligned?.offsetSeconds ?? (start - reference)
            buffer.append(
                packets.map { p in
                    BufferedPacket(
                        packet: p, decodeSeconds: (p.dtsSeconds ?? p.ptsSeconds ?? reference) + offset,
                        presentationSeconds: (p.ptsSeconds ?? p.dtsSeconds ?? reference) + offset,
                        timelineOffsetSeconds: offset, variantIndex: AudioTrack.packetVariantIndex,
                        mediaSequence: segment.mediaSequence, discontinuitySequence: segment.discontinuitySequence,
                        segmentHasVideo: lastMainSegmentHadVideo)
                }, track: .alternateAudio)
            let end = start + segment.durationSeconds
            let ahead = extendBuffered(.alternateAudio, to: end)
            var record = SegmentBuffered(
                variantIndex: lock.withLock { core.currentVariant } ?? variants[0].index, bandwidthBps: 0, mediaSequence: segment.mediaSequence,
                startSeconds: start, durationSeconds: segment.durationSeconds, bytes: response.body.count,
                videoPackets: 0, audioPackets: packets.count, corruptPackets: result.corruptPacketCount, demuxSeconds: demuxSeconds,
                bufferedEndSeconds: end, bufferSeconds: ahead)
            record.track = "audio"
            record.timelineOffsetSeconds = offset
            recorder.record(.segmentBuffered(record))
            logDemuxMessages(result, mediaSequence: segment.mediaSequence, url: segment.uri, track: "audio")
        } catch let failure as SessionFailure {
            // A lost audio segment does not stop the video: it is skipped (silence), visibly.
            if isStopping { throw failure }
            recorder.record(
                .error(
                    ErrorRecord(
                        fatal: false, category: "audio",
                        message:
                            "audio segment \(segment.mediaSequence) of \"\(track.rendition.name)\": \(failure.message); skipped, video continues",
                        url: failure.url)))
            recorder.record(
                .segmentSkipped(
                    SegmentSkipped(
                        variantIndex: AudioTrack.packetVariantIndex, mediaSequence: segment.mediaSequence, durationSeconds: segment.durationSeconds,
                        reason: failure.message
                    ).withTrack("audio")))
            extendBuffered(.alternateAudio, to: start + segment.durationSeconds)
        } catch let error as MediaError {
            recorder.record(
                .segmentSkipped(
                    SegmentSkipped(
                        variantIndex: AudioTrack.packetVariantIndex, mediaSequence: segment.mediaSequence, durationSeconds: segment.durationSeconds,
                        reason: "demux failed: \(error)"
                    ).withTrack("audio")))
            extendBuffered(.alternateAudio, to: start + segment.durationSeconds)
        }
        if !track.playlist!.endList { track.nextMediaSequence = segment.mediaSequence + 1 }
        return true
    }

    /// Loads (or reloads) the alternate audio rendition's media playlist into `track`; a request cut for a live step
    /// leaves it as it was.
    private func reloadAudioPlaylist(_ track: inout AudioTrack) throws {
        guard
            let response = try fetch(
                track.uri, purpose: .mediaPlaylist, variantIndex: nil, mediaSequence: nil, byteRange: nil,
                policy: configuration.retry.playlist, track: "audio"
            ).value(unlessLiveStepDropped: "audio playlist", url: shown(track.uri))
        else { return }
        guard case .media(let media) = try parsePlaylist(response, parentVariables: multivariantVariables) else {
            throw SessionFailure(
                category: .playlist, message: "expected a media playlist for audio rendition \"\(track.rendition.name)\" at \(shown(track.uri))",
                url: shown(track.uri))
        }
        recorder.record(
            .playlistLoaded(
                PlaylistLoaded(
                    url: shown(response.effectiveURL), kind: "media", variantIndex: nil, segments: media.segments.count,
                    targetDurationSeconds: media.targetDurationSeconds, mediaSequence: media.mediaSequence, endList: media.endList,
                    changed: true, warnings: media.warnings.map(\.description))))
        track.playlist = media
        track.lastReloadAt = clock.now()
        if media.endList {
            track.timeline = SegmentTimeline()
            _ = track.timeline.update(with: media)
        }
    }
}
