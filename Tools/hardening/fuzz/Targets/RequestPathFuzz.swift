// libFuzzer target: the player's playlist-to-request path, in virtual time. The input is a
// sequence of playlists separated by "#--reload" lines: the first load and each reload of one
// stream. Each goes the way PlayerSession takes it, through the pure HLSCore decisions only:
//   parse → (a delta update) LowLatencyRules.merge into the previous → SegmentTimeline.update →
//   start point (live hold-back, EXT-X-START, LL-HLS part hold-back) → what to load next
//   (LowLatencyRules.nextLoad, the next blocking reload and its URL) → every segment's, part's
//   and map's byte range as an HTTP Range → the request-rate bound admitting each request →
//   CMCD and the trickle rule's expected bytes → the no-progress watchdog → the reload delay,
//   by which the virtual clock moves on.
// Swift's overflow and conversion checks stay on under -O (only -Ounchecked drops them), so an
// arithmetic that overflows on a playlist's numbers is a crash here, as it is in hlsplay.

import Foundation
import HLSCore

private let base = URL(string: "https://fuzz.example/live/index.m3u8?token=x")!
/// More than a few reloads only repeats work: each is parsed in full.
private let maxPlaylists = 12
/// Requests per reload the path is followed for (a VOD lists up to maxSegments).
private let maxRequestsPerLoad = 48

@_cdecl("LLVMFuzzerTestOneInput")
public func requestPathFuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    let separator = Array(("\n" + PlaylistMutator.reloadSeparator + "\n").utf8)
    var chunks: [Data] = []
    var start = 0
    var i = 0
    while i + separator.count <= bytes.count, chunks.count < maxPlaylists - 1 {
        if bytes[i] == separator[0], Array(bytes[i..<(i + separator.count)]) == separator {
            chunks.append(Data(bytes[start..<i]))
            i += separator.count
            start = i
        } else {
            i += 1
        }
    }
    chunks.append(Data(bytes[start...]))

    var now = MonotonicInstant(nanoseconds: 1_000_000_000)
    var timeline = SegmentTimeline()
    timeline.retainedHistorySegmentCount = 64
    var previous: MediaPlaylist?
    var requests = RequestRateBound()
    var watchdog = NoProgressWatchdog(timeoutSeconds: 60, startedAt: now)
    var loaded: LowLatencyPosition?
    var position = 0.0
    var downloadedBytes = 0
    var lastReloadAt: MonotonicInstant?
    let forwardBufferSeconds = size % 3 == 0 ? 0.5 : 30

    for chunk in chunks {
        let parsed: Playlist
        do { parsed = try PlaylistParser.parse(data: chunk, baseURL: base) } catch { continue }
        var playlist: MediaPlaylist
        switch parsed {
        case .multivariant(let m):
            // The ladder's numbers go where the session puts them: CMCD, the rung bit rates.
            for v in m.variants.prefix(16) {
                _ = CMCDData.kbps(v.bandwidthBps)
                _ = CMCDData.kbps(v.averageBandwidthBps ?? 0)
                if let r = v.resolution { _ = r.width.multipliedReportingOverflow(by: r.height) }
            }
            continue
        case .media(let m):
            playlist = m
        }
        if playlist.skip != nil {
            guard let prev = previous, let merged = try? LowLatencyRules.merge(delta: playlist, into: prev) else { continue }
            playlist = merged
        }
        let sync = timeline.update(with: playlist)
        let changed: Bool
        switch sync {
        case .inSync(let n): changed = n > 0
        default: changed = true
        }

        // Where to start, and the thresholds the window allows.
        var index = LivePlaylistRules.startSegmentIndex(for: playlist)
        if playlist.endList {
            index = LivePlaylistRules.vodStartPosition(for: playlist, start: playlist.start).segmentIndex
            _ = PlaybackThresholdCeiling.vod(remainingSeconds: playlist.totalDurationSeconds - LivePlaylistRules.vodStartSeconds(for: playlist, start: playlist.start))
        } else {
            _ = LivePlaylistRules.shortWindow(playlist)
            _ = PlaybackThresholdCeiling.live(playlist)
        }
        if let llStart = LowLatencyRules.startPosition(for: playlist), loaded == nil { loaded = llStart.position }

        // What to load next (LL-HLS) and the blocking reload.
        var partRanges: [ByteRange] = []
        if let l = loaded {
            switch LowLatencyRules.nextLoad(after: l, in: playlist) {
            case .part(let p, _), .preloadHint(let p, _): loaded = p
            case .segment(let msn, _): loaded = LowLatencyPosition(msn: msn)
            case .fellBehind(_, let first): loaded = LowLatencyPosition(msn: first)
            case .waitForReload: break
            }
        }
        let age = lastReloadAt.map { now.seconds(since: $0) } ?? 0
        if let reload = LowLatencyRules.nextReload(after: playlist, playlistAgeSeconds: age, deltaUpdates: size % 2 == 0) {
            _ = reload.url(playlistURL: base)
        }
        for hint in playlist.preloadHints {
            if let s = hint.byteRangeStart { partRanges.append(ByteRange(length: hint.byteRangeLength ?? 0, offset: s)) }
        }

        // Every request of the load: its Range header, the rate bound, CMCD, the trickle rule.
        let inputs = RequestRateInputs(playlist: playlist, forwardBufferTargetSeconds: forwardBufferSeconds)
        let segmentLimit = RequestRateRules.limit(for: .segment, inputs: inputs)
        let partLimit = RequestRateRules.limit(for: .part, inputs: inputs)
        let playlistLimit = RequestRateRules.limit(for: .playlist, inputs: inputs)
        _ = requests.admit(.playlist, limit: playlistLimit, at: now)
        let target = LivePlaylistRules.targetDurationSeconds(for: playlist)
        for segment in playlist.segments[min(index, playlist.segments.count)...].prefix(maxRequestsPerLoad) {
            let admission = requests.admit(.segment, limit: segmentLimit, at: now)
            now = max(now, admission.startAt)
            _ = segment.byteRange?.httpRange
            _ = segment.initializationSection?.byteRange?.httpRange
            for part in segment.parts.prefix(8) {
                _ = part.byteRange?.httpRange
                _ = requests.admit(.part, limit: partLimit, at: now)
            }
            let start = timeline.startSeconds(ofMediaSequence: segment.mediaSequence) ?? 0
            let rung = Double(segment.bitrateBps ?? 0)
            _ = CMCDData.bufferLengthMs(seconds: start + segment.durationSeconds - position)
            _ = CMCDData.throughputKbps(bps: rung)
            let snapshot = TrickleSnapshot(bytesReceived: 1, bytesExpected: nil, rungBitrateBps: rung > 0 ? rung : nil,
                                           segmentDurationSeconds: segment.durationSeconds, elapsedSeconds: 1, secondsSinceLastByte: 0.1,
                                           averageRateBps: 1e6, recentRateBps: nil, rateWindowSeconds: 7, forwardBufferSeconds: 0,
                                           waitedSeconds: 1, lowerRungAvailable: false, reRequestsSoFar: 0, wedgeWindowSeconds: 3.5)
            _ = TrickleClassifier().classify(snapshot)
            downloadedBytes = downloadedBytes &+ max(1, segment.byteRange?.length ?? 1) // harness bookkeeping, not the player's
            // The loader's next number, as PlayerSession computes it (the parser's range keeps it from overflowing).
            _ = playlist.segmentIndex(ofMediaSequence: segment.mediaSequence + 1)
            position = start
        }
        for part in playlist.trailingParts.prefix(8) { partRanges.append(contentsOf: part.byteRange.map { [$0] } ?? []) }
        for r in partRanges { _ = r.httpRange }
        _ = timeline.firstSegmentIndex(in: playlist, endingAfter: position, toleranceSeconds: 0.001)
        _ = watchdog.observe(positionSeconds: position, bufferedEndSeconds: timeline.endSeconds ?? 0, downloadedBytes: downloadedBytes, at: now)
        _ = segmentLimit.maximumRequests(inSeconds: target)

        // The next reload, in virtual time.
        let wait = playlist.partTargetSeconds != nil
            ? LowLatencyRules.reloadWaitSeconds(for: playlist, secondsSinceLastRequest: age, secondsSinceLastAnswer: age, lastAnswerAdvanced: changed)
            : LivePlaylistRules.reloadDelaySeconds(targetDurationSeconds: target, playlistChanged: changed)
        lastReloadAt = now
        now = now.advanced(bySeconds: wait)
        previous = playlist
    }
    _ = requests.finish(at: now)
    return 0
}

@_cdecl("LLVMFuzzerCustomMutator")
public func requestPathFuzzCustomMutator(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    playlistCustomMutate(data, size, maxSize, seed, reloads: true)
}
