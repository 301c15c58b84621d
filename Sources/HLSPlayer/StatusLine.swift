// The one line hlsplay redraws on stderr while a session plays (`--status`, on by default when stderr
// is a terminal). Pure: what to show from the monitor's sample and the session's counts, and the bytes
// that redraw it on a capable terminal or on a dumb one (TERM=dumb: no escape sequences).

import Foundation
import HLSCore

struct StatusLine: Sendable, Equatable {
    /// The in-flight request shows as silent once no byte came for this long, seconds: the estimate
    /// shown is then the last measured one, not the link's rate now (a collapsed link delivers no sample).
    static let silentAfterSeconds = 1.0

    var phase: PlaybackPhase
    var positionSeconds: Double
    var bufferSeconds: Double
    var stalls: Int
    var stallSeconds: Double
    var retries: Int
    var variantIndex: Int?
    var resolution: Resolution?
    var variantBandwidthBps: Int?
    var estimateBps: Double
    /// The request in flight: bytes so far, bytes expected (when known), seconds since its last byte.
    var inFlightBytes: Int?
    var inFlightExpectedBytes: Int?
    var inFlightIdleSeconds: Double?
    var liveLatencySeconds: Double?

    /// The phase as a user reads it.
    static func phaseName(_ phase: PlaybackPhase) -> String {
        switch phase {
        case .startingUp: "starting"
        case .playing: "playing"
        case .stalled: "STALLED"
        case .ended: "ended"
        }
    }

    var text: String {
        var parts = [
            Self.phaseName(phase),
            String(format: "pos %.1fs", positionSeconds),
            String(format: "buf %.1fs", bufferSeconds)
        ]
        if let liveLatencySeconds { parts.append(String(format: "latency %.1fs", liveLatencySeconds)) }
        parts.append(stalls == 0 ? "no stall" : String(format: "%d stall%@ %.1fs", stalls, stalls == 1 ? "" : "s", stallSeconds))
        let res = resolution.map { "\($0.width)x\($0.height)" } ?? "-"
        parts.append(
            String(
                format: "v%@ %@ %.2f Mbps", variantIndex.map(String.init) ?? "-", res,
                Double(variantBandwidthBps ?? 0) / 1e6))
        parts.append(String(format: "est %.2f Mbps", estimateBps / 1e6))
        if let bytes = inFlightBytes {
            var request = "req \(Self.kilobytes(bytes))"
            if let expected = inFlightExpectedBytes, expected > 0 {
                request += String(format: "/%@ (%.0f%%)", Self.kilobytes(expected), 100 * Double(bytes) / Double(expected))
            }
            if let idle = inFlightIdleSeconds, idle >= Self.silentAfterSeconds {
                request += String(format: ", silent %.1fs", idle)
            }
            parts.append(request)
        }
        if retries > 0 { parts.append("\(retries) retr\(retries == 1 ? "y" : "ies")") }
        return parts.joined(separator: "  ")
    }

    static func kilobytes(_ bytes: Int) -> String {
        bytes >= 1_000_000 ? String(format: "%.1f MB", Double(bytes) / 1e6) : String(format: "%d kB", bytes / 1000)
    }

    /// The bytes that replace the previous status line (`previousLength` characters) with `text`: carriage
    /// return and erase-to-end-of-line where the terminal has them, else carriage return and the text
    /// padded with spaces over the longer previous line (a dumb terminal shows escape sequences as text).
    static func redraw(_ text: String, previousLength: Int, dumbTerminal: Bool) -> String {
        guard dumbTerminal else { return "\r\u{1B}[K" + text }
        return "\r" + text + String(repeating: " ", count: max(0, previousLength - text.count))
    }

    /// The bytes that clear the status line before a message or at the end.
    static func clear(previousLength: Int, dumbTerminal: Bool) -> String {
        dumbTerminal ? "\r" + String(repeating: " ", count: previousLength) + "\r" : "\r\u{1B}[K"
    }

    /// Whether the terminal is one that shows escape sequences as text (`TERM` is `dumb`, or unset).
    static func isDumbTerminal(_ environment: [String: String]) -> Bool {
        guard let term = environment["TERM"], !term.isEmpty else { return true }
        return term == "dumb"
    }
}
