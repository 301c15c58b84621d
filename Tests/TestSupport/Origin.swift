// Starting the loopback origin for a test: in process (OriginServer), or the real hls-origin binary.

import Foundation
import HLSOrigin

/// An origin serving `root` on an ephemeral loopback port for the body's duration.
public func withOrigin<T>(_ root: URL, faults: [FaultRule] = [], _ body: (URL) throws -> T) throws -> T {
    var config = OriginConfiguration()
    config.faults = faults
    // Test folders link sample segments in from Samples/build, outside the folder served.
    config.followSymlinks = true
    let server = OriginServer(root: root, configuration: config)
    try server.start(port: 0)
    defer { server.stop() }
    return try body(server.baseURL)
}

/// An origin with a full configuration on an ephemeral loopback port for the body's duration.
/// It follows symbolic links, as `withOrigin(_:faults:)` does: test folders link sample segments in
/// from Samples/build, outside the folder served.
public func withOrigin<T>(_ root: URL, configuration: OriginConfiguration, _ body: (OriginServer) throws -> T) throws -> T {
    var configuration = configuration
    configuration.followSymlinks = true
    let server = OriginServer(root: root, configuration: configuration)
    try server.start(port: 0)
    defer { server.stop() }
    return try body(server)
}

/// An origin (as `withOrigin(_:configuration:_:)`) that writes its request log to a temporary file: the body's
/// result and the origin's request lines, in arrival order — the ground truth of what a client sent.
public func withLoggedOrigin<T>(
    _ root: URL, configuration: OriginConfiguration = OriginConfiguration(), _ body: (OriginServer) throws -> T
) throws -> (T, [RequestLogEntry]) {
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("origin-\(UUID().uuidString).jsonl")
    defer { try? FileManager.default.removeItem(at: log) }
    var configuration = configuration
    configuration.requestLogURL = log
    let result = try withOrigin(root, configuration: configuration, body)
    return (result, try readRequestLog(log))
}

/// The request lines of an origin's request log, in arrival order (connection lines, which carry a `type`, skipped;
/// a missing file is no requests).
public func readRequestLog(_ url: URL) throws -> [RequestLogEntry] {
    guard FileManager.default.fileExists(atPath: url.path) else { return [] }
    let text = try String(contentsOf: url, encoding: .utf8)
    let decoder = JSONDecoder()
    return try text.split(separator: "\n").filter { !$0.contains("\"type\":") }
        .map { try decoder.decode(RequestLogEntry.self, from: Data($0.utf8)) }
        .sorted { $0.accepted < $1.accepted }
}

/// The hls-origin binary, or a TestSetupError that says how to build it.
public func requireOriginBinary() throws -> URL {
    let url = Repo.hlsOrigin
    guard FileManager.default.isExecutableFile(atPath: url.path) else {
        throw TestSetupError("build it first: swift build --product hls-origin (missing \(url.path))")
    }
    return url
}

/// The prefix of hls-origin's first stdout line; the port and a slash follow.
public let originListeningPrefix = "listening on http://127.0.0.1:"

/// Launches the hls-origin binary with `args` (stderr discarded) and returns it with the port from
/// its first stdout line. The caller ends the process.
public func launchOrigin(_ args: [String]) throws -> (Process, UInt16) {
    let process = Process()
    process.executableURL = try requireOriginBinary()
    process.arguments = args
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    try process.run()
    let first = readFirstLine(out.fileHandleForReading)
    guard first.hasPrefix(originListeningPrefix), let port = UInt16(first.dropFirst(originListeningPrefix.count).dropLast()) else {
        process.terminate()
        process.waitUntilExit()
        throw TestSetupError("no listening line from hls-origin, got \(first)")
    }
    return (process, port)
}

/// Runs the hls-origin binary with `args` to its end (a usage error, `--help`): status and output.
public func runOriginToExit(_ args: [String], timeoutSeconds: Double = 60) throws -> ProcessResult {
    try runProcess(try requireOriginBinary(), args, timeoutSeconds: timeoutSeconds)
}
