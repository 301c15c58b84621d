// The network and the stream a VirtualSession plays: a trace-driven
// bottleneck (the same fluid FIFO hls-origin's TraceShaper paces real
// responses with) and a ladder described by its playlists and the byte size
// of every segment. Pure value types; no clock, no I/O (loading a ladder
// from a folder is the one exception, kept at the bottom).

import Foundation
import HLSCore

/// A bottleneck link in virtual time (seconds since the session started).
public protocol SimulatedLink: Sendable {
    /// Bytes the link can deliver between 0 and `t`.
    func capacityBytes(until t: Double) -> Double
    /// Earliest time by which the link has delivered `bytes` since 0; nil: never.
    func time(whenCapacityReaches bytes: Double) -> Double?
    /// The delay before a response's first byte is sent, seconds (the origin's trace latency).
    func firstByteDelaySeconds(at t: Double) -> Double
}

/// One response on the link: the bytes reserved for it and when they arrive.
struct SimulatedTransfer: Sendable, Equatable {
    /// When the request was sent.
    var startedAt: Double
    /// Capacity (bytes since 0) reserved before this response.
    var baseBytes: Double
    /// Header plus body bytes.
    var totalBytes: Int
    var bodyBytes: Int
    /// When the first byte arrives.
    var firstByteAt: Double
    /// When the last byte arrives (infinity: the link never delivers it).
    var completesAt: Double

    /// Bytes (headers included) received by `t`.
    func bytesReceived(at t: Double, link: any SimulatedLink) -> Int {
        guard t >= firstByteAt else { return 0 }
        guard t < completesAt else { return totalBytes }
        return Int(min(Double(totalBytes), max(0, link.capacityBytes(until: t) - baseBytes)))
    }

    /// Body bytes received by `t` (what libcurl's progress reports).
    func bodyBytesReceived(at t: Double, link: any SimulatedLink) -> Int {
        max(0, bytesReceived(at: t, link: link) - (totalBytes - bodyBytes))
    }

    /// When the bytes received by `t` had all arrived (the last byte so far).
    func lastByteAt(at t: Double, link: any SimulatedLink) -> Double {
        let received = bytesReceived(at: t, link: link)
        guard received > 0 else { return startedAt }
        return min(t, max(firstByteAt, link.time(whenCapacityReaches: baseBytes + Double(received)) ?? t))
    }
}

/// The link as one origin's responses share it: first-come first-served,
/// capacity unused while the link is idle is lost (as TraceShaper banks only
/// `newResponseSlackSeconds` of it for a new response).
struct SimulatedConnection: Sendable {
    let link: any SimulatedLink
    /// Link capacity a new response may use from before it starts, seconds (TraceShaper.newResponseSlackSeconds).
    static let newResponseSlackSeconds = 0.002
    /// Bytes of an HTTP/1.1 response header from hls-origin (status line, Content-Type/Length, Connection).
    static let responseHeaderBytes = 160
    private var reservedBytes = 0.0

    init(link: any SimulatedLink) { self.link = link }

    mutating func start(at t: Double, bodyBytes: Int) -> SimulatedTransfer {
        let sendAt = t + link.firstByteDelaySeconds(at: t)
        reservedBytes = max(reservedBytes, link.capacityBytes(until: max(0, sendAt - Self.newResponseSlackSeconds)))
        let base = reservedBytes
        let total = Self.responseHeaderBytes + bodyBytes
        reservedBytes += Double(total)
        let firstByte = link.time(whenCapacityReaches: base + 1).map { max(sendAt, $0) } ?? .infinity
        let completes = link.time(whenCapacityReaches: reservedBytes).map { max(firstByte, $0) } ?? .infinity
        return SimulatedTransfer(
            startedAt: t, baseBytes: base, totalBytes: total, bodyBytes: bodyBytes,
            firstByteAt: firstByte, completesAt: completes)
    }

    /// The client gave up on `transfer` at `t`: the origin stops sending, so the link is free after what was sent.
    mutating func cancel(_ transfer: SimulatedTransfer, at t: Double) {
        let sent = Double(transfer.bytesReceived(at: t, link: link))
        reservedBytes = min(reservedBytes, transfer.baseBytes + sent)
    }
}

/// A VOD ladder as the player sees it over HTTP: playlists and segment sizes.
public struct SimulatedLadder: Sendable, Equatable {
    public struct Segment: Sendable, Equatable {
        public var durationSeconds: Double
        public var bytes: Int
        public init(durationSeconds: Double, bytes: Int) {
            self.durationSeconds = durationSeconds
            self.bytes = bytes
        }
    }

    public struct Variant: Sendable, Equatable {
        public var bandwidthBps: Int
        public var resolution: Resolution?
        public var playlistBytes: Int
        public var segments: [Segment]
        /// An audio-only fallback rung beside video rungs (AudioOnlyRungs), as the real session reads it.
        public var audioOnly: Bool
        public init(bandwidthBps: Int, resolution: Resolution?, playlistBytes: Int, segments: [Segment], audioOnly: Bool = false) {
            self.bandwidthBps = bandwidthBps
            self.resolution = resolution
            self.playlistBytes = playlistBytes
            self.segments = segments
            self.audioOnly = audioOnly
        }
    }

    public var name: String
    public var multivariantBytes: Int
    public var variants: [Variant]

    public init(name: String, multivariantBytes: Int, variants: [Variant]) {
        self.name = name
        self.multivariantBytes = multivariantBytes
        self.variants = variants
    }

    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads `master.m3u8` (or the given multivariant playlist) in `folder`,
    /// each variant's media playlist and the size of each segment file.
    /// Segments with byte ranges take the range's length.
    public static func load(folder: URL, multivariant: String = "master.m3u8") throws -> SimulatedLadder {
        func read(_ url: URL) throws -> Data {
            do { return try Data(contentsOf: url) } catch {
                throw LoadError(description: "cannot read \(url.path): \(error.localizedDescription)")
            }
        }
        let topURL = folder.appendingPathComponent(multivariant)
        let top = try read(topURL)
        guard case .multivariant(let mv) = try parse(top, url: topURL) else {
            throw LoadError(description: "\(topURL.path) is a media playlist; the simulator needs a multivariant playlist with a ladder")
        }
        var variants: [Variant] = []
        let audioOnly = AudioOnlyRungs.fallbackFlags(mv.variants)
        for (index, v) in mv.variants.enumerated() {
            guard v.uri.isFileURL else { throw LoadError(description: "variant \(v.uri) is not a file beside the playlist") }
            let data = try read(v.uri)
            guard case .media(let media) = try parse(data, url: v.uri) else {
                throw LoadError(description: "\(v.uri.path) is not a media playlist")
            }
            guard media.endList else { throw LoadError(description: "\(v.uri.path) is live; the simulator plays VOD ladders") }
            var segments: [Segment] = []
            for s in media.segments {
                let bytes: Int
                if let range = s.byteRange {
                    bytes = range.length
                } else {
                    guard let attributes = try? FileManager.default.attributesOfItem(atPath: s.uri.path),
                        let size = attributes[.size] as? NSNumber
                    else {
                        throw LoadError(description: "segment \(s.uri.path) is missing")
                    }
                    bytes = size.intValue
                }
                segments.append(Segment(durationSeconds: s.durationSeconds, bytes: bytes))
            }
            guard !segments.isEmpty else { throw LoadError(description: "\(v.uri.path) has no segments") }
            variants.append(
                Variant(
                    bandwidthBps: v.bandwidthBps, resolution: v.resolution, playlistBytes: data.count, segments: segments,
                    audioOnly: audioOnly[index]))
        }
        guard !variants.isEmpty else { throw LoadError(description: "\(topURL.path) lists no variants") }
        return SimulatedLadder(name: folder.lastPathComponent, multivariantBytes: top.count, variants: variants)
    }

    private static func parse(_ data: Data, url: URL) throws -> Playlist {
        do {
            return try PlaylistParser.parse(data: data, baseURL: url)
        } catch {
            throw LoadError(description: "\(url.path): \(error)")
        }
    }
}

// MARK: - What a virtual session reads off a transfer and a ladder

extension SimulatedTransfer {
    /// The finished transfer's timings and throughput sample, as libcurl would report them (no lookup, connect or TLS).
    var measured: (TimingsRecord, ThroughputSample) {
        let firstByte = firstByteAt - startedAt
        let total = completesAt - startedAt
        let timings = TimingsRecord(nameLookupSeconds: 0, connectSeconds: 0, tlsSeconds: 0, firstByteSeconds: firstByte, totalSeconds: total)
        return (timings, ThroughputSample(bytes: bodyBytes, transferSeconds: max(0, total - firstByte), firstByteSeconds: firstByte))
    }

    /// What the byte-progress rules read of the transfer at `t` (what libcurl's progress tells the real session).
    func snapshot(
        at t: Double, link: any SimulatedLink, rttSeconds: Double?, segmentDurationSeconds: Double, rungBitrateBps: Double,
        forwardBufferSeconds: Double
    ) -> InFlightSnapshot {
        let body = bodyBytesReceived(at: t, link: link)
        let sinceFirst = t - firstByteAt
        return InFlightSnapshot(
            bytesReceived: body, bytesExpected: t >= firstByteAt ? bodyBytes : nil,
            secondsSinceLastByte: t - lastByteAt(at: t, link: link), elapsedSeconds: t - startedAt,
            rttSeconds: rttSeconds, segmentDurationSeconds: segmentDurationSeconds, rungBitrateBps: rungBitrateBps,
            measuredThroughputBps: body > 0 && sinceFirst > 0 ? Double(body) * 8 / sinceFirst : nil,
            forwardBufferSeconds: forwardBufferSeconds)
    }
}

extension SimulatedLadder {
    /// The rungs as the selector sees them.
    var rungs: [LadderRung] {
        variants.enumerated().map { i, v in
            LadderRung(
                variantIndex: i, bandwidthBps: v.bandwidthBps, width: v.resolution?.width, height: v.resolution?.height,
                audioOnly: v.audioOnly)
        }
    }

    /// Where segment `index` of variant `variant` starts and ends on the media timeline, seconds.
    func span(variant: Int, index: Int) -> (startSeconds: Double, endSeconds: Double) {
        let segments = variants[variant].segments
        let start = segments.prefix(index).reduce(0) { $0 + $1.durationSeconds }
        return (start, start + segments[index].durationSeconds)
    }

    /// The whole of variant `variant`, seconds.
    func durationSeconds(variant: Int) -> Double { variants[variant].segments.reduce(0) { $0 + $1.durationSeconds } }

    /// The rungs as the loader sees them.
    var loaderVariants: [LoaderCore.Variant] {
        variants.map { LoaderCore.Variant(bandwidthBps: $0.bandwidthBps, segmentDurationsSeconds: $0.segments.map(\.durationSeconds)) }
    }

    /// The URL a request's records show (the multivariant playlist's is the session's).
    func url(for work: LoaderCore.Work, _ sessionURL: URL) -> String {
        switch work {
        case .multivariant: sessionURL.absoluteString
        case .mediaPlaylist(let v, _, _): "v\(v)/prog.m3u8"
        case .segment(let v, let i): "v\(v)/segment-\(i)"
        }
    }

    /// A request's body bytes.
    func bytes(for work: LoaderCore.Work) -> Int {
        switch work {
        case .multivariant: multivariantBytes
        case .mediaPlaylist(let v, _, _): variants[v].playlistBytes
        case .segment(let v, let i): variants[v].segments[i].bytes
        }
    }

    /// The multivariant playlist's `playlist.loaded` (a simulated ladder's playlists carry no warnings).
    func multivariantLoaded(sessionURL: URL) -> PlaylistLoaded {
        PlaylistLoaded(url: sessionURL.absoluteString, kind: "multivariant", variants: variants.count, warnings: [])
    }

    /// The `segment.buffered` of segment `index` of variant `variant`, landed with `bufferSeconds` ahead of the media
    /// clock: demux only, so no packets are counted and demux takes no time.
    func buffered(variant v: Int, index i: Int, bufferSeconds: Double) -> SegmentBuffered {
        let (rung, (start, end)) = (variants[v], span(variant: v, index: i))
        return SegmentBuffered(
            variantIndex: v, bandwidthBps: rung.bandwidthBps, mediaSequence: i, startSeconds: start,
            durationSeconds: rung.segments[i].durationSeconds, bytes: rung.segments[i].bytes, videoPackets: 0, audioPackets: 0,
            corruptPackets: 0, demuxSeconds: 0, bufferedEndSeconds: end, bufferSeconds: bufferSeconds)
    }
}

// MARK: - A request of a virtual session on the link

/// One request of a virtual session on its link: what the loader asked for, its transfer, and what the session core
/// said of it; and the records and snapshots a real request gives (`request.start`, `request.end`, the in-flight
/// snapshot the byte-progress and trickle rules read, the stall features).
struct SimulatedRequest {
    var requestID: Int
    var work: LoaderCore.Work
    var transfer: SimulatedTransfer
    /// The request ID of the fetch's first request (a re-request or retry carries it: SessionCore's trickle rule).
    var fetchID: Int
    /// Why the session core cut it (nil: it runs to its last byte).
    var cancel: InFlightCancel?
    /// `trickleFailed`: why.
    var failure: String?

    /// The segment's duration and its rung's BANDWIDTH (nil for a playlist).
    func segment(_ ladder: SimulatedLadder) -> (durationSeconds: Double, rungBps: Double)? {
        work.segment.map { (ladder.variants[$0.variant].segments[$0.index].durationSeconds, Double(ladder.variants[$0.variant].bandwidthBps)) }
    }

    func start(attempt: Int, ladder: SimulatedLadder, sessionURL: URL) -> RequestStart {
        var start = RequestStart(requestID: requestID, url: ladder.url(for: work, sessionURL), purpose: work.purpose, attempt: attempt)
        if case .mediaPlaylist(let v, _, _) = work { start.variantIndex = v }
        if let s = work.segment { (start.variantIndex, start.mediaSequence) = (s.variant, s.index) }
        return start
    }

    /// The request as the monitor's rules see it at `t` (SessionCore.monitorDecisions): not judged once it is being cut.
    func monitored(
        at t: Double, link: any SimulatedLink, ladder: SimulatedLadder, rttSeconds: Double?, forwardBufferSeconds: Double, sessionURL: URL
    ) -> MonitoredRequest {
        MonitoredRequest(
            request: info(ladder: ladder, sessionURL: sessionURL),
            progress: snapshot(at: t, link: link, ladder: ladder, rttSeconds: rttSeconds, forwardBufferSeconds: forwardBufferSeconds),
            judged: cancel == nil)
    }

    /// What the session core's in-flight rules read at `t`.
    func info(ladder: SimulatedLadder, sessionURL: URL) -> InFlightRequestInfo {
        InFlightRequestInfo(
            requestID: requestID, fetchID: fetchID, purpose: work.purpose, url: ladder.url(for: work, sessionURL),
            mediaSequence: work.segment?.index, track: nil, rungBitrateBps: segment(ladder)?.rungBps)
    }

    func snapshot(
        at t: Double, link: any SimulatedLink, ladder: SimulatedLadder, rttSeconds: Double?, forwardBufferSeconds: Double
    )
        -> InFlightSnapshot
    {
        let segment = segment(ladder)
        return transfer.snapshot(
            at: t, link: link, rttSeconds: rttSeconds, segmentDurationSeconds: segment?.durationSeconds ?? 0,
            rungBitrateBps: segment?.rungBps ?? 0, forwardBufferSeconds: forwardBufferSeconds)
    }

    /// The `request.end` of a request that ran to its last byte: its timings, and the estimator's verdict on its sample.
    func finishedEnd(ladder: SimulatedLadder, sessionURL: URL, verdict: SampleVerdict?, throughputBps: Double?) -> RequestEnd {
        RequestEnd(
            requestID: requestID, url: ladder.url(for: work, sessionURL), purpose: work.purpose, status: 200, bytes: transfer.bodyBytes,
            ok: true, connectionReused: requestID > 1, timings: transfer.measured.0, throughputBps: throughputBps, sampleVerdict: verdict)
    }

    /// A finished segment's transfer as the network-limit classifier reads it (`rttSeconds`: the last TCP RTT).
    func observation(ladder: SimulatedLadder, rttSeconds: Double?) -> TransferObservation {
        let sample = transfer.measured.1
        return TransferObservation(
            bytes: sample.bytes, transferSeconds: sample.transferSeconds, firstByteSeconds: sample.firstByteSeconds,
            rttSeconds: rttSeconds, readPauseSeconds: 0, isLiveEdgeSegment: false, mediaBitrateBps: segment(ladder)?.rungBps,
            tcpAppLimited: nil)
    }

    /// The `request.end` of a request cut short at `t` (by the core's judgement, or by the session's end).
    func cutEnd(at t: Double, link: any SimulatedLink, ladder: SimulatedLadder, sessionURL: URL) -> RequestEnd {
        RequestEnd(
            requestID: requestID, url: ladder.url(for: work, sessionURL), purpose: work.purpose, status: nil,
            bytes: transfer.bodyBytesReceived(at: t, link: link), ok: false)
    }
}
