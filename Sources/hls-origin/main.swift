import Dispatch
import Foundation
import Glibc
import HLSOrigin

let usage = """
usage: hls-origin ROOT [--port N] [--rate RATE | --trace FILE [--trace-format F]] [--rtt DURATION]
                  [--faults FILE] [--fault-404 PATTERN] [--fault-503 PATTERN] [--black-hole PATTERN]
                  [--trickle PATTERN]
                  [--collapse AT:DURATION] [--stale-playlist AT:DURATION]
                  [--live [--window SEGMENTS] [--live-event] [--expire-at-once]] [--ll-hls [--part-target DURATION]]
                  [--max-connections N] [--max-connections-per-address N]
                  [--header-timeout DURATION] [--keep-alive-timeout DURATION] [--follow-symlinks]
                  [--log FILE] [--help]

Serves the folder ROOT over HTTP/1.1 on 127.0.0.1 (GET/HEAD, keep-alive, byte ranges).
  --port N            port to bind (0 = ephemeral, default)
  --rate RATE         constant link rate shared by all connections: 2mbit, 500kbit, 2000000 (bits/s)
  --trace FILE        replay a throughput trace (looped) on the shared link from server start:
                      Mahimahi (.down/.up), Pensieve cooked (time_s<TAB>Mbit/s), Sabre network JSON
  --trace-format F    mahimahi | pensieve | sabre (default: detect from extension and content)
  --rtt DURATION      delay before the first byte of each response: 50ms, 0.05s, 1s
                      (default: the trace's latency_ms if it has one, else 0)
  --faults FILE       JSON fault scenario (rules, linkCollapses, stalePlaylists; see docs/hls-origin.md)
  --fault-404 PAT     answer 404 to every request whose path matches PAT (glob or substring); repeatable
  --fault-503 PAT     answer 503 with Retry-After: 1 to matching requests; repeatable
  --black-hole PAT    accept matching requests and never answer; repeatable
  --trickle PAT       send matching bodies 188 bytes every 0.5 s (a body that trickles); repeatable
  --collapse AT:DUR   the link delivers nothing from AT for DUR (e.g. 20s:5s); repeatable
  --stale-playlist AT:DUR   (live) the live window stops advancing from AT for DUR; repeatable
  --live              serve VOD media playlists as live (sliding window on the wall clock, looping)
  --window SEGMENTS   live window length (default 6)
  --expire-at-once    (live) a segment answers 404 as soon as it leaves the window; by default it stays
                      available for its duration plus the window's, as RFC 8216 section 6.2.2 requires
  --live-event        live EVENT playlists (the window grows from the first segment)
  --ll-hls            Low-Latency HLS on top of --live (implies it): MPEG-TS segments cut into parts,
                      blocking playlist reload (_HLS_msn/_HLS_part), delta updates (_HLS_skip),
                      preload hints, rendition reports
  --part-target DUR   requested part duration for --ll-hls (default 0.5s)
  --max-connections N open connections at most (default 512). A new connection over the limit closes
                      the connection that has waited longest for a request head (one that never sent a
                      whole request first); if all are busy with responses, the new one is closed at once
  --max-connections-per-address N
                      open connections from one client IP address at most, by the same rule (default: no
                      limit but --max-connections; on loopback every client is 127.0.0.1)
  --header-timeout DUR
                      longest a client may take to send a request head, in total however slowly it
                      trickles in (default 10s; from the connection's opening for its first request);
                      then the connection is closed, after a 408 if part of a head came
  --keep-alive-timeout DUR
                      how long a kept-alive connection may idle between requests (default 60s)
  --follow-symlinks   serve files that symbolic links lead to outside ROOT (default: 403; links that
                      stay inside ROOT, and a ROOT that is itself a link, are followed either way)
  --log FILE          write a JSON Lines request log
  --help              show this help
The first line on stdout is `listening on http://127.0.0.1:PORT/`. Runs until SIGINT/SIGTERM.
"""

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("hls-origin: \(message)\n\(usage)\n".utf8))
    exit(64)
}

/// "2mbit", "500kbit", "2000000", "1.5mbps" → bits/s.
func parseRate(_ s: String) -> Double? {
    let lower = s.lowercased()
    let numberPart = lower.prefix { $0.isNumber || $0 == "." }
    let suffix = lower.dropFirst(numberPart.count)
    guard let value = Double(numberPart), value > 0 else { return nil }
    let scale: Double
    switch suffix {
    case "", "bit", "bps", "b/s": scale = 1
    case "k", "kbit", "kbps", "kb/s": scale = 1e3
    case "m", "mbit", "mbps", "mb/s": scale = 1e6
    case "g", "gbit", "gbps", "gb/s": scale = 1e9
    default: return nil
    }
    return value * scale
}

/// "50ms", "0.05s", "1s", "1" → seconds.
func parseDuration(_ s: String) -> Double? {
    let lower = s.lowercased()
    let numberPart = lower.prefix { $0.isNumber || $0 == "." }
    let suffix = lower.dropFirst(numberPart.count)
    guard let value = Double(numberPart), value >= 0 else { return nil }
    switch suffix {
    case "", "s": return value
    case "ms": return value / 1e3
    case "us": return value / 1e6
    default: return nil
    }
}

/// "20s:5s", "20:5", "1500ms:2s" → (at, duration) in seconds.
func parseWindow(_ s: String) -> (Double, Double)? {
    let parts = s.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, let at = parseDuration(String(parts[0])), let d = parseDuration(String(parts[1])), d > 0 else {
        return nil
    }
    return (at, d)
}

var root: String?
var tracePath: String?
var traceFormat: TraceFormat?
var scenario = FaultScenario()
var scenarioFiles: [String] = []
var live = false
var windowSegments = LiveConfiguration.defaultWindowSegments
var liveEvent = false
var expireAtOnce = false
var lowLatency = false
var partTargetSeconds = LowLatencyConfiguration.defaultPartTargetSeconds
var port: UInt16 = 0
var configuration = OriginConfiguration()
var args = CommandLine.arguments.dropFirst()
while let arg = args.popFirst() {
    func value() -> String {
        guard let v = args.popFirst() else { fail("\(arg) needs a value") }
        return v
    }
    switch arg {
    case "--help", "-h":
        print(usage)
        exit(0)
    case "--port":
        let v = value()
        guard let p = UInt16(v) else { fail("bad port \(v)") }
        port = p
    case "--rate":
        let v = value()
        guard let r = parseRate(v) else { fail("bad rate \(v)") }
        configuration.rateBitsPerSecond = r
    case "--rtt":
        let v = value()
        guard let d = parseDuration(v) else { fail("bad duration \(v)") }
        configuration.rttSeconds = d
    case "--faults":
        scenarioFiles.append(value())
    case "--trace":
        tracePath = value()
    case "--trace-format":
        let v = value()
        guard let f = TraceFormat(rawValue: v.lowercased()) else { fail("bad trace format \(v)") }
        traceFormat = f
    case "--fault-404":
        scenario.faults.append(FaultRule(pathPattern: value(), action: .status(code: 404, retryAfterSeconds: nil)))
    case "--fault-503":
        scenario.faults.append(FaultRule(pathPattern: value(), action: .status(code: 503, retryAfterSeconds: 1)))
    case "--black-hole":
        scenario.faults.append(FaultRule(pathPattern: value(), action: .blackHole))
    case "--trickle":
        scenario.faults.append(FaultRule(pathPattern: value(), action: .trickle(bytes: 188, everySeconds: 0.5)))
    case "--collapse":
        let v = value()
        guard let (at, d) = parseWindow(v) else { fail("bad window \(v) (want AT:DURATION)") }
        scenario.linkCollapses.append(LinkCollapse(atSeconds: at, durationSeconds: d))
    case "--stale-playlist":
        let v = value()
        guard let (at, d) = parseWindow(v) else { fail("bad window \(v) (want AT:DURATION)") }
        scenario.stalePlaylists.append(StalePlaylist(atSeconds: at, durationSeconds: d))
    case "--live":
        live = true
    case "--live-event":
        live = true
        liveEvent = true
    case "--ll-hls":
        live = true
        lowLatency = true
    case "--part-target":
        let v = value()
        guard let d = parseDuration(v), d > 0 else { fail("bad part target \(v)") }
        partTargetSeconds = d
    case "--expire-at-once":
        expireAtOnce = true
    case "--window":
        let v = value()
        guard let n = Int(v), n > 0 else { fail("bad window length \(v)") }
        windowSegments = n
    case "--max-connections":
        let v = value()
        guard let n = Int(v), n > 0 else { fail("bad connection count \(v)") }
        configuration.maxConnections = n
    case "--max-connections-per-address":
        let v = value()
        guard let n = Int(v), n > 0 else { fail("bad connection count \(v)") }
        configuration.maxConnectionsPerAddress = n
    case "--header-timeout":
        let v = value()
        guard let d = parseDuration(v), d > 0 else { fail("bad header timeout \(v)") }
        configuration.headerTimeoutSeconds = d
    case "--keep-alive-timeout":
        let v = value()
        guard let d = parseDuration(v), d > 0 else { fail("bad keep-alive timeout \(v)") }
        configuration.keepAliveIdleSeconds = d
    case "--follow-symlinks":
        configuration.followSymlinks = true
    case "--log":
        configuration.requestLogURL = URL(fileURLWithPath: value())
    default:
        if arg.hasPrefix("-") { fail("unknown option \(arg)") }
        if root != nil { fail("unexpected argument \(arg)") }
        root = arg
    }
}
guard let root else { fail("missing ROOT") }
var isDirectory: ObjCBool = false
guard FileManager.default.fileExists(atPath: root, isDirectory: &isDirectory), isDirectory.boolValue else {
    fail("ROOT is not a directory: \(root)")
}

if let tracePath {
    do {
        configuration.trace = try ThroughputTrace.load(contentsOf: URL(fileURLWithPath: tracePath), format: traceFormat)
    } catch {
        FileHandle.standardError.write(Data("hls-origin: cannot load trace \(tracePath): \(error)\n".utf8))
        exit(66)
    }
}
if live {
    configuration.live = LiveConfiguration(windowSegments: windowSegments, event: liveEvent,
                                           lowLatency: lowLatency ? LowLatencyConfiguration(partTargetSeconds: partTargetSeconds) : nil,
                                           keepsExpiredSegments: !expireAtOnce)
}
if !scenario.stalePlaylists.isEmpty && !live { fail("--stale-playlist needs --live") }
for file in scenarioFiles {
    do {
        try OriginServer.loadScenario(from: URL(fileURLWithPath: file)).apply(to: &configuration)
    } catch {
        FileHandle.standardError.write(Data("hls-origin: cannot load faults from \(file): \(error)\n".utf8))
        exit(66)
    }
}
scenario.apply(to: &configuration)

signal(SIGPIPE, SIG_IGN)
signal(SIGINT, SIG_IGN)
signal(SIGTERM, SIG_IGN)

let server = OriginServer(root: URL(fileURLWithPath: root), configuration: configuration)
do {
    try server.start(port: port)
} catch {
    FileHandle.standardError.write(Data("hls-origin: \(error)\n".utf8))
    exit(1)
}
print("listening on \(server.baseURL.absoluteString)")
fflush(nil)

/// Stops the server and exits 0 on SIGINT/SIGTERM. Nonisolated so the handler does not claim the main actor.
nonisolated func installSignalHandlers(stopping server: OriginServer) -> [any DispatchSourceSignal] {
    let signalQueue = DispatchQueue(label: "hls-origin.signals")
    return [SIGINT, SIGTERM].map { sig in
        let source = DispatchSource.makeSignalSource(signal: sig, queue: signalQueue)
        source.setEventHandler { @Sendable in
            server.stop()
            exit(0)
        }
        source.resume()
        return source
    }
}

let signalSources = installSignalHandlers(stopping: server)
withExtendedLifetime(signalSources) { dispatchMain() }
