// Plays a stream other packagers made through hls-origin with the real binary, and holds the
// result against what ffmpeg decodes from the same URL (`ffmpeg -i URL -f framecrc -`):
// exit status, decoded frames per kind (within one segment's frames), no decode errors where
// ffmpeg has none, and a bounded wall time. Shared by ThirdPartyStreamTests and CorpusStreamTests.

import Foundation
import HLSCore
import HLSOrigin
import Testing
import TestSupport

/// One stream to play, and how its reference is made.
struct StreamCase: Sendable {
    /// The folder (third-party) or corpus item.
    var name: String
    /// The entry playlist, relative to the served folder.
    var entry: String
    /// The whole stream's media duration, seconds.
    var mediaSeconds: Double
    /// The longest segment, seconds: the frame-count tolerance is this much media.
    var segmentSeconds: Double
    /// Play this much media (`--duration`) to keep the suite's wall time down; nil: to the end.
    /// The reference is then ffmpeg's first `playSeconds` of output (`-t`).
    var playSeconds: Double? = nil
    var reference: Reference = .sameURL()
    /// Serve the folder as a live stream (hls-origin's sliding window over the VOD).
    var live: LiveConfiguration? = nil

    enum Reference: Sendable {
        /// ffmpeg on the URL hlsplay plays, with these input options (e.g. `-extension_picky 0`).
        case sameURL(inputOptions: [String] = [])
        /// ffmpeg fails on the URL (I-frame-only playlists): the sum, over the media playlist's
        /// segments, of what it decodes from each one's bytes behind its Media Initialization Section.
        case perSegment(mediaPlaylist: String)
    }

    /// Media seconds the run plays.
    var playedSeconds: Double { playSeconds ?? mediaSeconds }
    /// The wall-time bound: the media played, and a generous allowance for startup and the end on
    /// a loaded machine (20 s, or the media's own length when longer). A session that does not end
    /// by then is stopped and the test fails with "did not finish".
    var wallBoundSeconds: Double { playedSeconds + max(20, playedSeconds) }
}

/// Every frame count hlsplay decoded vs the reference, for the failure messages and the run log.
struct StreamComparison: CustomStringConvertible {
    var hlsplayVideo: Int, hlsplayAudio: Int, ffmpegVideo: Int, ffmpegAudio: Int
    var description: String { "hlsplay v\(hlsplayVideo) a\(hlsplayAudio), ffmpeg v\(ffmpegVideo) a\(ffmpegAudio)" }
}

/// Plays `stream` from `root` and checks it; `knownIssue` (a defect being fixed elsewhere) turns
/// its failures into known issues, and its passing into a failure that says the entry can go.
func playAndCompare(_ stream: StreamCase, root: URL, knownIssue: String?) {
    guard let knownIssue else {
        do { try checkPlayback(stream, root: root) } catch { Issue.record(error) }
        return
    }
    withKnownIssue(Comment(rawValue: knownIssue)) {
        try checkPlayback(stream, root: root)
    }
}

private func checkPlayback(_ stream: StreamCase, root: URL) throws {
    var configuration = OriginConfiguration()
    configuration.live = stream.live
    try withOrigin(root, configuration: configuration) { server in
        let url = server.baseURL.appendingPathComponent(stream.entry).absoluteString
        let run = try runHlsplay(
            [url, "--headless", "--json"] + (stream.playSeconds.map { ["--duration", String($0)] } ?? []),
            timeoutSeconds: stream.wallBoundSeconds)
        let reference = try makeReference(stream, url: url, root: root)
        let summary = run.summary ?? [:]
        let comparison = StreamComparison(
            hlsplayVideo: summary["decodedVideoFrames"] as? Int ?? -1,
            hlsplayAudio: summary["decodedAudioFrames"] as? Int ?? -1,
            ffmpegVideo: reference.videoFrames, ffmpegAudio: reference.audioFrames)
        print(
            "\(stream.name): exit \(run.status), \(comparison), session \(summary["sessionSeconds"] ?? "-") s, TTFF \(summary["timeToFirstFrameSeconds"] ?? "-") s"
        )

        #expect(run.status == 0, "\(stream.name): exit \(run.status); stderr: \(run.stderr.suffix(600))")
        expectValidLog(run)
        #expect(
            summary["exitReason"] as? String == (stream.playSeconds == nil ? "completed" : "durationReached"),
            "\(stream.name): exitReason \(summary["exitReason"] ?? "-"), error \(summary["error"] ?? "-")")
        // Within one segment's frames. A run cut by --duration is compared with ffmpeg's first
        // seconds, which line up to the frame: there at most 2 s (a long segment would otherwise
        // allow most of the run), plus the 0.25 s the decoder runs ahead of the media clock.
        let toleranceSeconds = stream.playSeconds == nil ? stream.segmentSeconds : min(stream.segmentSeconds, 2) + 0.25
        for (kind, mine, theirs) in [
            ("video", comparison.hlsplayVideo, reference.videoFrames),
            ("audio", comparison.hlsplayAudio, reference.audioFrames)
        ] {
            let perSecond = Double(theirs) / stream.playedSeconds
            let tolerance = theirs == 0 ? 0 : Int((perSecond * toleranceSeconds).rounded(.up)) + 1
            #expect(
                abs(mine - theirs) <= tolerance,
                "\(stream.name): \(kind) frames \(mine), ffmpeg \(theirs) (tolerance \(tolerance): one segment's frames); \(comparison)")
        }
        if reference.status == 0 && reference.stderrTail.isEmpty {
            #expect(summary["decodeErrors"] as? Int == 0, "\(stream.name): \(summary["decodeErrors"] ?? "-") decode errors where ffmpeg had none")
        }
        let session = summary["sessionSeconds"] as? Double ?? .infinity
        #expect(session <= stream.wallBoundSeconds, "\(stream.name): the session took \(session) s for \(stream.playedSeconds) s of media")
    }
}

private func makeReference(_ stream: StreamCase, url: String, root: URL) throws -> FFmpegReference {
    switch stream.reference {
    case .sameURL(let inputOptions):
        return try ffmpegFrameCounts(
            url, inputOptions: inputOptions,
            outputOptions: stream.playSeconds.map { ["-t", String($0)] } ?? [])
    case .perSegment(let mediaPlaylist):
        let file = root.appendingPathComponent(mediaPlaylist)
        guard case .media(let playlist) = try PlaylistParser.parse(data: Data(contentsOf: file), baseURL: file) else {
            throw TestSetupError("\(mediaPlaylist) is not a media playlist")
        }
        var total = FFmpegReference(status: 0, videoFrames: 0, audioFrames: 0, stderrTail: "")
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-ref-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        for segment in playlist.segments {
            var bytes = Data()
            if let map = segment.initializationSection { bytes += try slice(map.uri, map.byteRange) }
            bytes += try slice(segment.uri, segment.byteRange)
            try bytes.write(to: scratch)
            let one = try ffmpegFrameCounts(scratch.path)
            total.videoFrames += one.videoFrames
            total.audioFrames += one.audioFrames
            if one.status != 0 { total.status = one.status }
        }
        return total
    }
}

/// A local file's bytes, or the byte range of them.
private func slice(_ url: URL, _ range: ByteRange?) throws -> Data {
    let data = try Data(contentsOf: url)
    guard let range, let offset = range.offset else { return data }
    return data.subdata(in: offset..<min(data.count, offset + range.length))
}
