import Foundation
import Glibc
import HLSCore
import HLSOrigin

// First of all, before any thread starts: see blockStopSignals.
let stopSignals = blockStopSignals()

let usage = """
    usage: hls-origin ROOT [--bind ADDR] [--port N] [--rate RATE | --trace FILE [--trace-format F]] [--rtt DURATION]
                      [--faults FILE] [--fault-404 PATTERN] [--fault-503 PATTERN] [--black-hole PATTERN]
                      [--trickle PATTERN]
                      [--collapse AT:DURATION] [--stale-playlist AT:DURATION]
                      [--live [--window SEGMENTS] [--live-event] [--expire-at-once]] [--ll-hls [--part-target DURATION]]
                      [--max-connections N] [--max-connections-per-address N]
                      [--header-timeout DURATION] [--keep-alive-timeout DURATION] [--follow-symlinks]
                      [--log FILE] [--help] [--version]

    Serves the folder ROOT over HTTP/1.1 on 127.0.0.1 or --bind ADDR (GET/HEAD, keep-alive, byte ranges), with
    CORS headers and OPTIONS preflights answered so browser players on other origins can load from it.
    Every option takes its value as `--opt value` or `--opt=value`; `--` ends the options.
    Durations: 2.5 (seconds), 2s, 500ms, 250us, 1.5min, 1h. Rates: 2000000, 500k, 2m, 2mbit, 1.5mbps (bit/s).
      --bind ADDR         IP address literal to listen on (default 127.0.0.1): IPv4 or IPv6 (::1, [::1]);
                          0.0.0.0 or :: listens on every interface, so other machines can reach it
                          (host names are refused, not looked up)
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
      --log FILE          write a JSON Lines request log, one line per request with its header fields
                          (Cookie: names only; Authorization: scheme only)
      --help              show this help
      --version           print the version (the same as hlsplay's) and exit
    The first line on stdout is `listening on http://ADDR:PORT/` (an IPv6 ADDR in brackets). Runs until
    SIGINT/SIGTERM (exit 0). Exit 64: usage error; 66: unreadable trace or fault file; 1: cannot bind.
    """

/// What a usage error prints after its message: the synopsis's first lines, not the whole help.
let shortUsage = """
    usage: hls-origin ROOT [--bind ADDR] [--port N] [--rate RATE | --trace FILE] [--rtt DURATION] [--log FILE] ...
           hls-origin --help | --version
    Durations: 2.5, 2s, 500ms; rates: 2000000, 500k, 2mbit; --opt=value or --opt value.
    See 'hls-origin --help'.
    """

/// A usage error: the message naming the bad word, the short usage, exit 64 (EX_USAGE).
func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("hls-origin: \(message)\n\(shortUsage)\n".utf8))
    exit(64)
}

/// "20s:5s", "20:5", "1500ms:2s" → (at, duration) in seconds.
func parseWindow(_ s: String) -> (Double, Double)? {
    let parts = s.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, let at = OptionValue.seconds(String(parts[0])), at >= 0,
        let d = OptionValue.seconds(String(parts[1])), d > 0
    else {
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

/// Reads the command line into the globals above; throws the first mistake.
@MainActor func parseArguments(_ argv: [String]) throws(UsageError) {
    var words = OptionWords(argv)
    /// A duration option's value in seconds: > 0, or ≥ 0 when `allowZero`.
    func seconds(_ option: String, allowZero: Bool = false) throws(UsageError) -> Double {
        let v = try words.value(for: option)
        guard let d = OptionValue.seconds(v), d > 0 || (allowZero && d == 0) else {
            throw UsageError(message: "\(option): '\(v)' is not a duration \(allowZero ? "≥" : ">") 0 s (e.g. 2.5, 2s, 500ms)")
        }
        return d
    }
    func count(_ option: String, what: String) throws(UsageError) -> Int {
        let v = try words.value(for: option)
        guard let n = Int(v), n > 0 else { throw UsageError(message: "\(option): '\(v)' is not \(what) (a whole number ≥ 1)") }
        return n
    }
    while let arg = try words.next() {
        switch arg {
        case "--help", "-h":
            print(usage)
            exit(0)
        case "--version":
            print("hls-origin \(ProjectVersion.string)")
            exit(0)
        case "--bind":
            let v = try words.value(for: arg)
            guard let address = BindAddress(v) else {
                throw UsageError(
                    message: "--bind: '\(v)' is not an IPv4 or IPv6 address literal (e.g. 127.0.0.1, ::1, 0.0.0.0); host names are not looked up")
            }
            configuration.bindAddress = address.literal
        case "--port":
            let v = try words.value(for: arg)
            guard let p = UInt16(v) else { throw UsageError(message: "--port: '\(v)' is not a port number (0-65535; 0 picks a free one)") }
            port = p
        case "--rate":
            let v = try words.value(for: arg)
            guard let r = OptionValue.bitsPerSecond(v), r > 0 else {
                throw UsageError(message: "--rate: '\(v)' is not a bit rate > 0 (e.g. 2000000, 500k, 2mbit, 1.5mbps)")
            }
            configuration.rateBitsPerSecond = r
        case "--rtt":
            configuration.rttSeconds = try seconds(arg, allowZero: true)
        case "--faults":
            scenarioFiles.append(try words.value(for: arg))
        case "--trace":
            tracePath = try words.value(for: arg)
        case "--trace-format":
            let v = try words.value(for: arg)
            guard let f = TraceFormat(rawValue: v.lowercased()) else {
                throw UsageError(message: "--trace-format: '\(v)' is not one of \(TraceFormat.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            traceFormat = f
        case "--fault-404":
            scenario.faults.append(FaultRule(pathPattern: try words.value(for: arg), action: .status(code: 404, retryAfterSeconds: nil)))
        case "--fault-503":
            scenario.faults.append(FaultRule(pathPattern: try words.value(for: arg), action: .status(code: 503, retryAfterSeconds: 1)))
        case "--black-hole":
            scenario.faults.append(FaultRule(pathPattern: try words.value(for: arg), action: .blackHole))
        case "--trickle":
            scenario.faults.append(FaultRule(pathPattern: try words.value(for: arg), action: .trickle(bytes: 188, everySeconds: 0.5)))
        case "--collapse", "--stale-playlist":
            let v = try words.value(for: arg)
            guard let (at, d) = parseWindow(v) else {
                throw UsageError(message: "\(arg): '\(v)' is not a window AT:DURATION (e.g. 20:5, 20s:500ms)")
            }
            if arg == "--collapse" {
                scenario.linkCollapses.append(LinkCollapse(atSeconds: at, durationSeconds: d))
            } else {
                scenario.stalePlaylists.append(StalePlaylist(atSeconds: at, durationSeconds: d))
            }
        case "--live":
            live = true
        case "--live-event":
            live = true
            liveEvent = true
        case "--ll-hls":
            live = true
            lowLatency = true
        case "--part-target":
            partTargetSeconds = try seconds(arg)
        case "--expire-at-once":
            expireAtOnce = true
        case "--window":
            windowSegments = try count(arg, what: "a window length in segments")
        case "--max-connections":
            configuration.maxConnections = try count(arg, what: "a connection count")
        case "--max-connections-per-address":
            configuration.maxConnectionsPerAddress = try count(arg, what: "a connection count")
        case "--header-timeout":
            configuration.headerTimeoutSeconds = try seconds(arg)
        case "--keep-alive-timeout":
            configuration.keepAliveIdleSeconds = try seconds(arg)
        case "--follow-symlinks":
            configuration.followSymlinks = true
        case "--log":
            configuration.requestLogURL = URL(fileURLWithPath: try words.value(for: arg))
        default:
            if words.isOption(arg) { throw UsageError(message: "unknown option '\(words.current)'") }
            if let root { throw UsageError(message: "unexpected argument '\(arg)' (ROOT is already '\(root)')") }
            root = arg
        }
    }
}

do {
    try parseArguments(Array(CommandLine.arguments.dropFirst()))
} catch {
    fail(error.message)
}
guard let root else { fail("missing ROOT (the folder to serve)") }
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
    configuration.live = LiveConfiguration(
        windowSegments: windowSegments, event: liveEvent,
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

/// SIGINT and SIGTERM blocked in this thread and so in every thread started after it: a signal that comes
/// before the main thread waits for it (the end of this file) stays pending instead of being lost or killing
/// the process.
nonisolated func blockStopSignals() -> sigset_t {
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGINT)
    sigaddset(&set, SIGTERM)
    let rc = pthread_sigmask(SIG_BLOCK, &set, nil)
    if rc != 0 { fail("cannot block SIGINT/SIGTERM: \(String(cString: strerror(rc)))") }
    return set
}

let server = OriginServer(root: URL(fileURLWithPath: root), configuration: configuration)
do {
    try server.start(port: port)
} catch {
    FileHandle.standardError.write(Data("hls-origin: \(error)\n".utf8))
    exit(1)
}
print("listening on \(server.baseURL.absoluteString)")
fflush(nil)

// The main thread waits for SIGINT/SIGTERM (blocked since the start, so one that came already is pending),
// then stops the server and exits 0. (Dispatch signal sources were used before, installed after the listening
// line with the signals ignored until then: a harness that stopped the origin as soon as it read that line
// could find it running long after, the signal lost.)
var waitedSignals = stopSignals
var receivedSignal: Int32 = 0
while sigwait(&waitedSignals, &receivedSignal) != 0 {}
server.stop()
exit(0)
