import Foundation
import HLSCore

/// The human summary printed at the end of a session.
enum SummaryFormatter {
    static func human(_ s: SessionSummary) -> String {
        func sec(_ v: Double?) -> String { v.map { String(format: "%.3f s", $0) } ?? "-" }
        func mbps(_ v: Double?) -> String { v.map { String(format: "%.2f Mbps", $0 / 1e6) } ?? "-" }
        func mb(_ bytes: Int) -> String { String(format: "%.2f MB", Double(bytes) / 1e6) }
        let b = s.startup
        var lines: [String] = []
        let kind = s.isLive.map { $0 ? "live" : "VOD" } ?? "unknown"
        lines.append("hlsplay: \(s.url) (\(kind)) — \(s.exitReason.rawValue)\(s.error.map { ": \($0)" } ?? "")")
        lines.append("  time to first frame      \(sec(s.timeToFirstFrameSeconds))")
        lines.append("    multivariant playlist  \(sec(b.multivariantPlaylistSeconds))")
        lines.append("    media playlist         \(sec(b.mediaPlaylistSeconds))")
        lines.append("    first segment 1st byte \(sec(b.firstSegmentFirstByteSeconds))")
        lines.append("    first segment transfer \(sec(b.firstSegmentLastByteSeconds))")
        lines.append("    demux                  \(sec(b.demuxSeconds))")
        lines.append("    first frame decode     \(sec(b.firstFrameDecodeSeconds))")
        lines.append("  stalls                   \(s.stallCount) (\(String(format: "%.3f", s.stallSeconds)) s)")
        lines.append("  played                   \(String(format: "%.2f", s.playedSeconds)) s in \(String(format: "%.2f", s.sessionSeconds)) s")
        lines.append("  bitrate                  average \(mbps(s.averageBitrateBps)), last \(mbps(s.lastBitrateBps.map(Double.init))), \(s.variantSwitches) switch\(s.variantSwitches == 1 ? "" : "es")")
        lines.append("  estimate at end          \(mbps(s.finalEstimateBps))")
        lines.append("  requests                 \(s.requests) (\(s.failedRequests) failed, \(s.retries) retried), \(mb(s.bytes))")
        lines.append("  segments                 \(s.segmentsBuffered) buffered, \(s.segmentsSkipped) skipped")
        lines.append("  frames                   \(s.decodedVideoFrames) video (\(s.lateVideoFrames) late), \(s.decodedAudioFrames) audio, \(s.decodeErrors) decode errors")
        return lines.joined(separator: "\n")
    }
}
