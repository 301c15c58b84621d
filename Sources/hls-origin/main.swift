import Dispatch
import Foundation
import Glibc
import HLSOrigin

let usage = """
usage: hls-origin ROOT [--port N] [--rate RATE] [--rtt DURATION] [--faults FILE] [--log FILE] [--help]

Serves the folder ROOT over HTTP/1.1 on 127.0.0.1 (GET/HEAD, keep-alive, byte ranges).
  --port N          port to bind (0 = ephemeral, default)
  --rate RATE       constant link rate shared by all connections: 2mbit, 500kbit, 2000000 (bits/s)
  --rtt DURATION    delay before the first byte of each response: 50ms, 0.05s, 1s
  --faults FILE     JSON fault rules (see OriginServer.loadFaults)
  --log FILE        write a JSON Lines request log
  --help            show this help
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

var root: String?
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
        let v = value()
        do {
            configuration.faults = try OriginServer.loadFaults(from: URL(fileURLWithPath: v))
        } catch {
            FileHandle.standardError.write(Data("hls-origin: cannot load faults from \(v): \(error)\n".utf8))
            exit(66)
        }
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
