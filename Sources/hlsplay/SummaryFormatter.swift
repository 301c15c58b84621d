import Foundation
import HLSCore

/// The human summary printed at the end of a session (main.swift prints it through
/// OutgoingText.terminalLines: redacted, each line escaped).
enum SummaryFormatter {
    static func human(_ s: SessionSummary) -> String {
        // Sub-10 ms steps (loopback) in milliseconds, so they do not print as 0.000 s.
        func sec(_ v: Double?) -> String {
            v.map { $0 < 0.01 ? String(format: "%.2f ms", $0 * 1000) : String(format: "%.3f s", $0) } ?? "-"
        }
        func mbps(_ v: Double?) -> String { v.map { String(format: "%.2f Mbps", $0 / 1e6) } ?? "-" }
        func mb(_ bytes: Int) -> String { String(format: "%.2f MB", Double(bytes) / 1e6) }
        let b = s.startup
        var lines: [String] = []
        let kind = s.isLive.map { $0 ? "live" : "VOD" } ?? "unknown"
        // The URL and the error come from the network (an error body, a Location): no control
        // character of theirs may act on the terminal or break the summary into lines.
        let url = TerminalText.escaped(s.url), error = s.error.map(TerminalText.escaped)
        let trickPlay = s.iFramesOnly == true ? ", I-frame-only: trick-play content, each I-frame shown for its EXTINF" : ""
        lines.append("hlsplay: \(url) (\(kind)\(trickPlay)) — \(s.exitReason.rawValue)\(error.map { ": \($0)" } ?? "")")
        lines.append("  time to first frame      \(sec(s.timeToFirstFrameSeconds))")
        lines.append("    multivariant playlist  \(sec(b.multivariantPlaylistSeconds))")
        lines.append("    media playlist         \(sec(b.mediaPlaylistSeconds))")
        lines.append("    first segment 1st byte \(sec(b.firstSegmentFirstByteSeconds))")
        lines.append("    first segment transfer \(sec(b.firstSegmentLastByteSeconds))")
        lines.append("    demux                  \(sec(b.demuxSeconds))")
        lines.append("    first frame decode     \(sec(b.firstFrameDecodeSeconds))")
        // The wait for the start buffer after the first frame (none: it was there with the first frame).
        let wait =
            s.startupWaitSeconds.map { $0 < 0.0005 ? ", with the first frame" : ", \(sec($0)) after the first frame (waiting for the start buffer)" }
            ?? ""
        lines.append("  playback start           \(s.timeToPlaybackStartSeconds.map { sec($0) } ?? "never")\(wait)")
        lines.append(
            "  first video, first audio \(s.timeToFirstVideoSeconds.map { sec($0) } ?? "none"), \(s.timeToFirstAudioSeconds.map { sec($0) } ?? "none")"
        )
        lines.append("  stalls                   \(s.stallCount) (\(String(format: "%.3f", s.stallSeconds)) s)")
        lines.append("  played                   \(String(format: "%.2f", s.playedSeconds)) s in \(String(format: "%.2f", s.sessionSeconds)) s")
        lines.append(
            "  bitrate                  average \(mbps(s.averageBitrateBps)), last \(mbps(s.lastBitrateBps.map(Double.init))), \(s.variantSwitches) switch\(s.variantSwitches == 1 ? "" : "es")"
        )
        if let q = s.qoe {
            lines.append(contentsOf: qoeLines(q, mbps: mbps))
        }
        lines.append("  estimate at end          \(mbps(s.finalEstimateBps))")
        if let latency = s.liveLatencySeconds {
            lines.append(
                "  live latency             \(String(format: "%.2f", latency)) s at the end, \(String(format: "%.2f", s.averageLiveLatencySeconds ?? latency)) s on average"
            )
        }
        lines.append("  requests                 \(s.requests) (\(s.failedRequests) failed, \(s.retries) retried), \(mb(s.bytes))")
        lines.append("  segments                 \(s.segmentsBuffered) buffered, \(s.segmentsSkipped) skipped")
        if let episodes = s.byteBoundEpisodes {
            lines.append(
                "  byte bound               held loading \(episodes) time\(episodes == 1 ? "" : "s") (\(String(format: "%.1f", s.byteBoundSeconds ?? 0)) s): --max-buffer-bytes"
            )
        }
        lines.append(
            "  frames                   \(s.decodedVideoFrames) video (\(s.lateVideoFrames) late), \(s.decodedAudioFrames) audio, \(s.decodeErrors) decode errors"
        )
        return lines.joined(separator: "\n")
    }

    /// The `qoe` object's lines: played bitrate, rebuffering, played switches, time per rung, linear QoE.
    static func qoeLines(_ q: SessionQoE, mbps: (Double?) -> String) -> [String] {
        func fixed(_ v: Double?, _ digits: Int) -> String { v.map { String(format: "%.\(digits)f", $0) } ?? "-" }
        let switches =
            "\(q.playedSwitches) switch\(q.playedSwitches == 1 ? "" : "es") seen"
            + (q.meanSwitchMagnitudeBps.map { " (mean \(mbps($0)))" } ?? "")
        var lines = [
            "  played bitrate           declared \(mbps(q.averageDeclaredBitrateBps)), measured \(mbps(q.averageMeasuredBitrateBps)), \(switches)",
            "  rebuffering              ratio \(q.rebufferRatio.map { String(format: "%.2f %%", $0 * 100) } ?? "-"), \(fixed(q.stallsPerMinute, 2)) stalls per minute played"
        ]
        if !q.rungs.isEmpty {
            let rungs = q.rungs.map { "v\($0.variantIndex) (\(mbps(Double($0.bandwidthBps)))) \(String(format: "%.1f", $0.playedSeconds)) s" }
            lines.append("  time per rung            \(rungs.joined(separator: ", "))")
        }
        if let total = q.linearQoE {
            lines.append(
                "  linear QoE               \(fixed(total, 2)) over \(q.playedChunks) chunk\(q.playedChunks == 1 ? "" : "s") (\(fixed(q.linearQoEPerChunk, 3)) per chunk)"
                    + " = bitrate \(fixed(q.linearQoEBitrateSum, 2)) − rebuffer \(fixed(q.linearQoERebufferPenalty, 2)) (μ \(fixed(q.linearQoERebufferWeight, 2))) − switches \(fixed(q.linearQoESwitchPenalty, 2))"
            )
        } else {
            lines.append("  linear QoE               - (\(q.playedChunks == 0 ? "no chunk played" : "no declared bitrate"))")
        }
        return lines
    }

    static func aggregate(_ a: AggregateSummary) -> String {
        func sec(_ v: Double?) -> String { v.map { String(format: "%.3f s", $0) } ?? "-" }
        let reasons = a.exitReasons.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        return [
            "hlsplay: \(a.sessions) sessions — \(reasons)",
            "  time to first frame      p50 \(sec(a.timeToFirstFrameP50Seconds)), p90 \(sec(a.timeToFirstFrameP90Seconds)), p99 \(sec(a.timeToFirstFrameP99Seconds)), max \(sec(a.timeToFirstFrameMaxSeconds)); \(a.sessionsWithoutFirstFrame) without a frame",
            "  playback start           p50 \(sec(a.timeToPlaybackStartP50Seconds)), p90 \(sec(a.timeToPlaybackStartP90Seconds)), p99 \(sec(a.timeToPlaybackStartP99Seconds)), max \(sec(a.timeToPlaybackStartMaxSeconds)); \(a.sessionsWithoutPlaybackStart ?? 0) never started",
            "    after the first frame  p50 \(sec(a.startupWaitP50Seconds)), p90 \(sec(a.startupWaitP90Seconds)), max \(sec(a.startupWaitMaxSeconds))",
            "  stalls                   \(a.stallCount) in \(a.sessionsWithStalls) sessions (\(String(format: "%.3f", a.stallSeconds)) s)",
            "  played                   \(String(format: "%.1f", a.playedSeconds)) s in all, \(String(format: "%.1f", a.wallSeconds)) s wall",
            "  bitrate                  mean of averages \(String(format: "%.2f Mbps", a.meanAverageBitrateBps / 1e6))",
            "  QoE                      rebuffer ratio \(a.rebufferRatio.map { String(format: "%.2f %%", $0 * 100) } ?? "-"), mean linear QoE per chunk \(a.meanLinearQoEPerChunk.map { String(format: "%.3f", $0) } ?? "-")",
            "  requests                 \(a.requests) (\(a.failedRequests) failed), \(String(format: "%.1f", a.requestsPerSecond)) per second",
            "  bytes                    \(String(format: "%.2f MB", Double(a.bytes) / 1e6)), \(String(format: "%.2f Mbps", a.throughputBps / 1e6)) together"
        ].joined(separator: "\n")
    }
}
