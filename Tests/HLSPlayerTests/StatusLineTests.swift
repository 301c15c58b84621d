// The status line: what it shows (stalls so far, retries, the request in flight and when it went
// silent, live latency, phases as users name them) and how it is redrawn on a dumb terminal.

import Foundation
import HLSCore
import Testing
import TestSupport

@testable import HLSPlayer

@Suite struct StatusLineTests {
    static let playing = StatusLine(
        phase: .playing, positionSeconds: 12.34, bufferSeconds: 8.1, stalls: 0, stallSeconds: 0, retries: 0, variantIndex: 2,
        resolution: Resolution(width: 1280, height: 720), variantBandwidthBps: 3_479_002, estimateBps: 6_100_000, inFlightBytes: nil,
        inFlightExpectedBytes: nil, inFlightIdleSeconds: nil, liveLatencySeconds: nil)

    @Test func playing_showsPositionBufferRungAndEstimate_noStallYet() {
        #expect(Self.playing.text == "playing  pos 12.3s  buf 8.1s  no stall  v2 1280x720 3.48 Mbps  est 6.10 Mbps")
    }

    @Test func stalledWithARetry_andASilentRequest_saysSo() {
        var s = Self.playing
        s.phase = .stalled
        s.stalls = 2
        s.stallSeconds = 3.25
        s.retries = 1
        s.inFlightBytes = 250_000
        s.inFlightExpectedBytes = 1_000_000
        s.inFlightIdleSeconds = 8.5
        let text = s.text
        #expect(text.hasPrefix("STALLED  "))
        #expect(text.contains("2 stalls 3.2s") || text.contains("2 stalls 3.3s"), "\(text)")
        #expect(text.contains("req 250 kB/1.0 MB (25%), silent 8.5s"), "the estimate shown is the last one: \(text)")
        #expect(text.hasSuffix("1 retry"), "\(text)")
    }

    @Test func flowingRequest_isNotSilent_liveShowsLatency() {
        var s = Self.playing
        s.inFlightBytes = 2_500_000
        s.inFlightIdleSeconds = 0.2
        s.liveLatencySeconds = 7.04
        s.phase = .startingUp
        #expect(s.text.hasPrefix("starting  "))
        #expect(s.text.contains("latency 7.0s"))
        #expect(s.text.contains("req 2.5 MB") && !s.text.contains("silent"), "\(s.text)")
    }

    @Test func dumbTerminal_noEscapeSequences_shorterLinePaddedOverTheLonger() {
        let redraw = StatusLine.redraw("short", previousLength: 9, dumbTerminal: true)
        #expect(redraw == "\rshort    ")
        #expect(!redraw.contains("\u{1B}"))
        #expect(StatusLine.clear(previousLength: 3, dumbTerminal: true) == "\r   \r")
        #expect(StatusLine.redraw("x", previousLength: 9, dumbTerminal: false) == "\r\u{1B}[Kx")
        #expect(StatusLine.isDumbTerminal(["TERM": "dumb"]))
        #expect(StatusLine.isDumbTerminal([:]))
        #expect(!StatusLine.isDumbTerminal(["TERM": "xterm-256color"]))
    }

    @Test(.tags(.realTime)) func underTermDumb_theBinaryWritesNoEscapeSequence_butDrawsTheStatus() throws {
        let master = try Repo.requireSamples("short-2s").appendingPathComponent("master.m3u8").path
        let dumb = try runHlsplay([master, "--headless", "--status", "--duration", "1.5"], timeoutSeconds: 60, environment: ["TERM": "dumb"])
        #expect(dumb.status == 0, "\(dumb.stderr)")
        #expect(dumb.stderr.contains("\rplaying  pos "), "the status line was drawn: \(dumb.stderr.debugDescription)")
        #expect(!dumb.stderr.contains("\u{1B}"), "no escape sequence under TERM=dumb: \(dumb.stderr.debugDescription)")
        let xterm = try runHlsplay([master, "--headless", "--status", "--duration", "1.5"], timeoutSeconds: 60, environment: ["TERM": "xterm"])
        #expect(xterm.stderr.contains("\u{1B}[K"), "a capable terminal gets erase-line: \(xterm.stderr.debugDescription)")
    }
}
