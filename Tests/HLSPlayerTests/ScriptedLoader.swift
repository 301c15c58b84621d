import Foundation
import HLSCore
import HLSNet

@testable import HLSPlayer

/// A `RequestLoading` that answers from files under `root` as if it were `http://scripted.invalid/`, over a scripted
/// link: the bytes of each response arrive when a `SimulatedLink` (the fluid FIFO bottleneck VirtualSession plays
/// over, responses first come first served, `SimulatedConnection`) has delivered them, the link's time being the
/// clock's seconds since the loader was made. Every wait is the clock's: on a `DiscreteEventClock` a transfer takes
/// virtual time only; on the system clock, real time. Progress comes in `chunkBytes` chunks at the instants the
/// link delivers them, the last with the last byte. It honours byte ranges and cancellation (a cancel wakes the
/// transfer at once, and the link stops carrying it), and answers a missing file with a 404. No socket.
///
/// With `liveWindowSegments`, the VOD media playlists under `root` are served as live streams: a media playlist
/// asked for at link time `t` lists the last `liveWindowSegments` of the segments published by then — that many at
/// the start, one more every target duration — without EXT-X-PLAYLIST-TYPE, and with EXT-X-ENDLIST once the last
/// segment is out.
final class ScriptedLoader: RequestLoading, @unchecked Sendable {
    static let host = "scripted.invalid"

    let root: URL
    let clock: any WaitingClock
    /// Body bytes per progress callback.
    let chunkBytes: Int
    /// Serve media playlists as a live window of this many segments (nil: as they are).
    let liveWindowSegments: Int?
    private let madeAt: MonotonicInstant
    private let lock = NSLock()
    private var connection: SimulatedConnection
    private var urls: [String] = []

    init(
        root: URL, link: any SimulatedLink, clock: any WaitingClock = SystemWaitingClock(), chunkBytes: Int = 16_384,
        liveWindowSegments: Int? = nil
    ) {
        self.root = root
        self.clock = clock
        self.chunkBytes = chunkBytes
        self.liveWindowSegments = liveWindowSegments
        connection = SimulatedConnection(link: link)
        madeAt = clock.now()
    }

    /// The URLs asked for, in order.
    var requested: [String] { lock.withLock { urls } }

    private var link: any SimulatedLink { connection.link }

    /// A VOD media playlist's text as a live window of `segments` segments at `seconds` into the stream (nil: not a
    /// media playlist).
    static func liveWindow(of text: String, segments window: Int, atSeconds seconds: Double) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        guard let first = lines.firstIndex(where: { $0.hasPrefix("#EXTINF") }) else { return nil }
        let targetSeconds = lines.first { $0.hasPrefix("#EXT-X-TARGETDURATION:") }.flatMap { Double($0.split(separator: ":")[1]) } ?? 2
        var listed: [(info: String, uri: String)] = []
        var info: String?
        for line in lines[first...] {
            if line.hasPrefix("#EXTINF") {
                info = line
            } else if !line.hasPrefix("#"), let i = info {
                listed.append((i, line))
                info = nil
            }
        }
        let published = min(listed.count, window + Int(seconds / targetSeconds))
        let start = max(0, published - window)
        var out = lines[..<first].filter { !$0.hasPrefix("#EXT-X-PLAYLIST-TYPE") && !$0.hasPrefix("#EXT-X-MEDIA-SEQUENCE") }
        out.append("#EXT-X-MEDIA-SEQUENCE:\(start)")
        for (i, u) in listed[start..<published] { out += [i, u] }
        if published == listed.count { out.append("#EXT-X-ENDLIST") }
        return out.joined(separator: "\n") + "\n"
    }
    private func linkSeconds(_ instant: MonotonicInstant) -> Double { instant.seconds(since: madeAt) }

    func fetch(
        _ request: HTTPRequest, cancellation: CancellationToken?, onProgress: ((ByteProgress) -> Void)?
    ) -> Result<HTTPResponse, LoadError> {
        let url = request.url.absoluteString
        let requestNumber = lock.withLock {
            urls.append(url)
            return urls.count
        }
        let startedAt = clock.now()
        guard request.url.host == Self.host, let data = FileManager.default.contents(atPath: root.appendingPathComponent(request.url.path).path)
        else {
            return .failure(LoadError(kind: .httpStatus, url: url, httpStatus: 404, message: "not in the script"))
        }
        var body = data
        if let window = liveWindowSegments, request.url.pathExtension == "m3u8", let text = String(data: data, encoding: .utf8),
            let live = Self.liveWindow(of: text, segments: window, atSeconds: linkSeconds(startedAt))
        {
            body = Data(live.utf8)
        }
        if let range = request.byteRange {
            let lower = min(data.count, range.offset ?? 0)
            let upper = min(data.count, lower + range.length)
            body = data.subdata(in: lower..<upper)
        }
        let transfer = lock.withLock { connection.start(at: linkSeconds(startedAt), bodyBytes: body.count) }
        let wake = clock.makeCondition()
        cancellation?.onCancel { wake.withLock { wake.broadcast() } }
        /// Waits until the link's time `t`; false when cancelled first.
        func waitUntil(_ t: Double) -> Bool {
            let deadline = t.isFinite ? madeAt.advanced(bySeconds: t) : nil
            return wake.withLock {
                while cancellation?.isCancelled != true {
                    if let deadline, clock.now() >= deadline { return true }
                    _ = wake.wait(until: deadline)
                }
                return false
            }
        }
        func cancelled(afterBodyBytes sent: Int) -> Result<HTTPResponse, LoadError> {
            lock.withLock { connection.cancel(transfer, at: linkSeconds(clock.now())) }
            return .failure(LoadError(kind: .cancelled, url: url, bytesReceived: sent, message: "cancelled after \(sent) body bytes"))
        }
        guard waitUntil(transfer.firstByteAt) else { return cancelled(afterBodyBytes: 0) }
        let headerBytes = Double(transfer.totalBytes - transfer.bodyBytes)
        var sent = 0
        while sent < body.count {
            let next = min(body.count, sent + chunkBytes)
            let arrives =
                next == body.count
                ? transfer.completesAt
                : max(transfer.firstByteAt, link.time(whenCapacityReaches: transfer.baseBytes + headerBytes + Double(next)) ?? .infinity)
            guard waitUntil(arrives) else { return cancelled(afterBodyBytes: sent) }
            onProgress?(ByteProgress(at: clock.now(), chunkBytes: next - sent, totalBytes: next, expectedBytes: body.count))
            sent = next
        }
        if body.isEmpty, !waitUntil(transfer.completesAt) { return cancelled(afterBodyBytes: 0) }
        let finishedAt = clock.now()
        return .success(
            HTTPResponse(
                statusCode: request.byteRange == nil ? 200 : 206, headers: ["content-length": "\(body.count)"], body: body,
                effectiveURL: request.url, redirectCount: 0, connectionReused: requestNumber > 1,
                // The link's own times, not differences of the clock's nanosecond instants: what VirtualSession
                // measures (SimulatedTransfer.measured), to the last bit.
                timings: RequestTimings(
                    firstByteSeconds: transfer.firstByteAt - transfer.startedAt, totalSeconds: transfer.completesAt - transfer.startedAt),
                // A loopback connection's TCP_INFO, as VirtualSession takes it (loopbackRTTSeconds).
                tcpInfo: TCPInfoSnapshot(
                    rttSeconds: VirtualSession.loopbackRTTSeconds, rttVarianceSeconds: 0, totalRetransmits: 0, congestionWindowSegments: 10,
                    deliveryRateBytesPerSecond: nil, deliveryRateAppLimited: nil),
                startedAt: startedAt, finishedAt: finishedAt, contentLength: body.count))
    }
}
