import Foundation
import HLSCore
import HLSNet
import Testing
import TestSupport

@testable import HLSPlayer

/// The real `PlayerSession` — its loader, monitor and decode threads, FFmpeg demux and decode — playing through a
/// scripted loader (the `RequestLoading` seam) instead of libcurl: no socket is opened, and the link is a script.
@Suite(.serialized, .tags(.realTime)) struct ScriptedLoaderTests {
    /// Plays the sample ladder (30 s of media) over a link that drops from 8 to 0.8 Mbit/s after 3 s, while most of
    /// it is still to load.
    @Test func realSession_playsTheLadderThroughAScriptedLoader_withoutSockets() throws {
        let samples = try Repo.requireSamples("ladder-2s")
        let loader = ScriptedLoader(root: samples, schedule: [(untilSeconds: 3, bps: 8_000_000), (untilSeconds: .infinity, bps: 800_000)])
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-scripted-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var configuration = PlayerConfiguration(url: URL(string: "http://\(ScriptedLoader.host)/master.m3u8")!)
        configuration.durationLimitSeconds = 24
        // Its own estimate store: a cold start every run, and nothing left in the user's cache.
        configuration.estimateStorePath = dir.appendingPathComponent("estimates.json").path
        let logPath = dir.appendingPathComponent("session.jsonl").path
        let session = try PlayerSession(configuration: configuration, logPath: logPath, harPath: nil, statusLine: false, loader: loader)
        let summary = session.run()

        #expect(summary.exitReason == .durationReached, "summary: \(summary.exitReason) \(summary.error ?? "")")
        #expect(summary.decodedVideoFrames >= 10 * 25, "decoded \(summary.decodedVideoFrames) frames: FFmpeg decoded what the loader served")
        let events = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        func all(_ type: String) -> [[String: Any]] { events.filter { $0["type"] as? String == type } }
        // Every request the session logged went through the loader, and nothing else did.
        let served = loader.requested
        let started = all("request.start").compactMap { $0["url"] as? String }
        #expect(started == served, "the log's requests are the loader's: \(started.count) vs \(served.count)")
        #expect(started.allSatisfy { $0.hasPrefix("http://\(ScriptedLoader.host)/") })
        #expect(all("request.end").allSatisfy { $0["errorKind"] as? String != "nameResolution" }, "no request reached libcurl")
        // The script is what the estimator measured — fast first, then the drop — and the rungs followed it down.
        let decisions: [(t: Double, variant: Int, estimateBps: Double)] = all("abr.decision").compactMap { e in
            guard let t = e["t"] as? Double, let v = (e["decision"] as? [String: Any])?["variantIndex"] as? Int,
                let estimate = (e["inputs"] as? [String: Any])?["estimateBps"] as? Double
            else { return nil }
            return (t, v, estimate)
        }
        print("scripted link, decisions (t, variant, estimate): \(decisions)")
        let beforeDrop = decisions.filter { $0.t < 3 }, afterDrop = decisions.filter { $0.t > 5 }
        let peak = try #require(beforeDrop.map(\.variant).max(), "decisions before the drop")
        let last = try #require(afterDrop.last, "a decision after the drop: \(decisions)")
        let peakEstimate = beforeDrop.map(\.estimateBps).max() ?? 0
        #expect(peakEstimate > 3_000_000, "the 8 Mbit/s part measured: \(decisions)")
        #expect(last.estimateBps < peakEstimate / 2, "the 0.8 Mbit/s part measured (the estimate smooths): \(decisions)")
        #expect(peak >= 1 && last.variant < peak, "down from rung \(peak) after the drop: \(decisions)")
        #expect(summary.segmentsBuffered >= 5)
    }
}

/// A `RequestLoading` that answers from files under `root` as if it were `http://scripted.invalid/`: each
/// response's first byte after `firstByteSeconds`, its body in `chunkBytes` chunks paced at the schedule's rate
/// for the time since the loader was made. It honours byte ranges and cancellation, and answers a missing file
/// with a 404. Real time, no sockets.
final class ScriptedLoader: RequestLoading, @unchecked Sendable {
    static let host = "scripted.invalid"
    /// The first-byte wait of every response, seconds.
    static let firstByteSeconds = 0.01
    /// Body bytes per progress callback.
    static let chunkBytes = 16_384

    let root: URL
    /// The link's rate, bits per second, until each time since the loader was made, seconds.
    let schedule: [(untilSeconds: Double, bps: Double)]
    private let clock = SystemMonotonicClock()
    private let madeAt: MonotonicInstant
    private let lock = NSLock()
    private var urls: [String] = []

    init(root: URL, schedule: [(untilSeconds: Double, bps: Double)]) {
        self.root = root
        self.schedule = schedule
        madeAt = clock.now()
    }

    /// The URLs asked for, in order.
    var requested: [String] { lock.withLock { urls } }

    private func rateBps(at instant: MonotonicInstant) -> Double {
        let t = instant.seconds(since: madeAt)
        return schedule.first { t < $0.untilSeconds }?.bps ?? schedule.last?.bps ?? 1_000_000
    }

    func fetch(
        _ request: HTTPRequest, cancellation: CancellationToken?, onProgress: ((ByteProgress) -> Void)?
    ) -> Result<HTTPResponse, LoadError> {
        let url = request.url.absoluteString
        lock.withLock { urls.append(url) }
        let startedAt = clock.now()
        guard request.url.host == Self.host, let data = FileManager.default.contents(atPath: root.appendingPathComponent(request.url.path).path)
        else {
            return .failure(LoadError(kind: .httpStatus, url: url, httpStatus: 404, message: "not in the script"))
        }
        var body = data
        if let range = request.byteRange {
            let lower = min(data.count, range.offset ?? 0)
            let upper = min(data.count, lower + range.length)
            body = data.subdata(in: lower..<upper)
        }
        Thread.sleep(forTimeInterval: Self.firstByteSeconds)
        let firstByte = clock.now().seconds(since: startedAt)
        var sent = 0
        while sent < body.count {
            if cancellation?.isCancelled == true {
                return .failure(LoadError(kind: .cancelled, url: url, bytesReceived: sent, message: "cancelled after \(sent) body bytes"))
            }
            let chunk = min(Self.chunkBytes, body.count - sent)
            Thread.sleep(forTimeInterval: Double(chunk) * 8 / rateBps(at: clock.now()))
            sent += chunk
            onProgress?(ByteProgress(at: clock.now(), chunkBytes: chunk, totalBytes: sent, expectedBytes: body.count))
        }
        let finishedAt = clock.now()
        return .success(
            HTTPResponse(
                statusCode: request.byteRange == nil ? 200 : 206, headers: ["content-length": "\(body.count)"], body: body,
                effectiveURL: request.url, redirectCount: 0, connectionReused: true,
                timings: RequestTimings(firstByteSeconds: firstByte, totalSeconds: finishedAt.seconds(since: startedAt)), tcpInfo: nil,
                startedAt: startedAt, finishedAt: finishedAt, contentLength: body.count))
    }
}
