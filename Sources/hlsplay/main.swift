// hlsplay: a headless reference HLS player.

import Foundation
import HLSCore
import HLSOrigin
import HLSPlayer

signal(SIGPIPE, SIG_IGN)

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data("hlsplay: \(message)\n".utf8))
    exit(status)
}

let arguments: Arguments
do {
    arguments = try Arguments.parse(Array(CommandLine.arguments.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("hlsplay: \(error.message)\nTry 'hlsplay --help'.\n".utf8))
    exit(64)
}
if arguments.help {
    print(Arguments.usage)
    exit(0)
}
if arguments.version {
    print("hlsplay \(hlsplayVersion)")
    exit(0)
}

// The URL, or the embedded default: the sample ladder from a loopback origin.
var origin: OriginServer?
let url: URL
if let given = arguments.url {
    if given.contains("://") {
        guard let u = URL(string: given), let scheme = u.scheme?.lowercased(), ["http", "https", "file"].contains(scheme) else {
            fail("'\(given)' is not an http, https or file URL", status: 64)
        }
        url = u
    } else {
        guard FileManager.default.fileExists(atPath: given) else { fail("no such file '\(given)'", status: 64) }
        url = URL(fileURLWithPath: given)
    }
} else {
    guard let samples = SampleLocator.defaultLadder() else {
        fail("the embedded sample ladder is not built: run Samples/make-all.sh (or set HLSPLAY_SAMPLES)", status: 69)
    }
    let server = OriginServer(root: samples)
    do {
        _ = try server.start(port: 0)
    } catch {
        fail("cannot start the loopback origin: \(error)", status: 69)
    }
    origin = server
    url = server.baseURL.appendingPathComponent("master.m3u8")
    if !arguments.json {
        FileHandle.standardError.write(Data("hlsplay: no URL given; playing the embedded sample ladder from \(url.absoluteString)\n".utf8))
    }
}

var configuration = PlayerConfiguration(url: url)
configuration.durationLimitSeconds = arguments.durationSeconds
if let v = arguments.forwardBufferSeconds { configuration.preferredForwardBufferDurationSeconds = v }
configuration.preferredPeakBitRateBps = arguments.peakBitRateBps
configuration.pinnedVariantIndex = arguments.variantIndex
if let v = arguments.startupBufferSeconds { configuration.playback.startupBufferSeconds = v }
if let v = arguments.resumeBufferSeconds { configuration.playback.resumeBufferSeconds = v }
if let v = arguments.monitorIntervalSeconds { configuration.monitorIntervalSeconds = v }
if let v = arguments.decodeThreads { configuration.decodeThreadCount = v }
if let v = arguments.firstByteTimeoutSeconds { configuration.firstByteTimeoutSeconds = v }
if let v = arguments.stallTimeoutSeconds { configuration.requestStallTimeoutSeconds = v }
configuration.verifyTLS = !arguments.insecure

let statusLine = arguments.status ?? (isatty(STDERR_FILENO) == 1)
let session: PlayerSession
do {
    session = try PlayerSession(configuration: configuration, logPath: arguments.logPath, harPath: arguments.harPath, statusLine: statusLine)
} catch {
    fail("\(error)", status: 73)
}

// SIGINT/SIGTERM end the session cleanly (summary written); a second SIGINT exits at once.
signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)
let signalQueue = DispatchQueue(label: "hlsplay.signals")
nonisolated(unsafe) var interrupts = 0
let sigint = DispatchSource.makeSignalSource(signal: SIGINT, queue: signalQueue)
sigint.setEventHandler {
    interrupts += 1
    if interrupts > 1 { _exit(130) }
    session.stop(reason: .interrupted)
}
sigint.resume()
let sigterm = DispatchSource.makeSignalSource(signal: SIGTERM, queue: signalQueue)
sigterm.setEventHandler { session.stop(reason: .interrupted) }
sigterm.resume()

let summary = session.run()
origin?.stop()

if arguments.json {
    print(SessionLogEncoder().line(summary))
} else {
    print(SummaryFormatter.human(summary))
}

let status: Int32
switch summary.exitReason {
case .completed, .durationReached: status = 0
case .interrupted: status = 130
case .error:
    if !arguments.json || true {
        FileHandle.standardError.write(Data("hlsplay: error: \(summary.error ?? "unknown error")\n".utf8))
    }
    switch session.failureCategory {
    case "playlist", "media": status = 65
    case "network": status = 69
    default: status = 70
    }
}
if session.logWriteFailed {
    fail("writing the session log failed (disk full?)", status: 74)
}
exit(status)
