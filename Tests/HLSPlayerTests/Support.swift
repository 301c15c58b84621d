import Foundation
import HLSOrigin
import Testing

/// Paths of the package under test, found from this file.
enum Repo {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static var hlsplay: URL { root.appendingPathComponent(".build/debug/hlsplay") }
    static func samples(_ name: String) -> URL { root.appendingPathComponent("Samples/build/\(name)") }

    /// The sample ladder, or a test failure that says how to make it.
    static func requireSamples(_ name: String) throws -> URL {
        let dir = samples(name)
        guard FileManager.default.fileExists(atPath: dir.appendingPathComponent("master.m3u8").path) else {
            throw TestSetupError("sample ladder \(dir.path) is missing: run Samples/make-all.sh (Tools/test.sh does)")
        }
        guard FileManager.default.isExecutableFile(atPath: hlsplay.path) else {
            throw TestSetupError("\(hlsplay.path) is missing: run `swift build` first (Tools/test.sh does)")
        }
        return dir
    }
}

struct TestSetupError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

/// A real hlsplay run: exit status, stdout, stderr, the session log and HAR.
struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
    var logLines: [[String: Any]]
    var rawLogLines: [String]
    var har: [String: Any]?
    /// The log of a `--then` session (FILE-2.jsonl), when there was one.
    var secondLogLines: [[String: Any]] = []
    /// The process's peak resident set size (VmHWM), as last read while it ran: polled every
    /// 50 ms, so growth in its last 50 ms may be missed. nil if it could not be read.
    var peakRSSBytes: Int?
    /// The signal that ended the process, if one did (then `status` is that signal's number).
    var terminationSignal: Int32?

    var summary: [String: Any]? { logLines.last.flatMap { $0["type"] as? String == "summary" ? $0 : nil } }
    func events(_ type: String) -> [[String: Any]] { logLines.filter { $0["type"] as? String == type } }
}

/// Runs the real binary with a log and a HAR in a fresh temp dir.
func runHlsplay(_ args: [String], interruptAfterSeconds: Double? = nil, interruptSignal: Int32 = SIGINT, timeoutSeconds: Double = 120,
                environment extra: [String: String] = [:], har writesHAR: Bool = true,
                executable: URL = Repo.hlsplay) throws -> Run {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let log = dir.appendingPathComponent("session.jsonl")
    let har = dir.appendingPathComponent("session.har")
    let process = Process()
    process.executableURL = executable
    // A test that names its own log keeps it (e.g. to read numbered logs of many sessions).
    // `hlsplay simulate` takes no --har (writesHAR false).
    process.arguments = args.contains("--log") ? args : args + ["--log", log.path] + (writesHAR ? ["--har", har.path] : [])
    // Each run gets its own cache directory, so the estimate store starts empty
    // (cold) unless a test passes --estimate-store, and no user file is touched.
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CACHE_HOME"] = dir.appendingPathComponent("cache").path
    environment.merge(extra) { $1 }
    process.environment = environment
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    // Read both pipes concurrently so neither fills up.
    final class Box: @unchecked Sendable { var data = Data() }
    let outBox = Box(), errBox = Box()
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) { outBox.data = out.fileHandleForReading.readDataToEndOfFile() }
    DispatchQueue.global().async(group: group) { errBox.data = err.fileHandleForReading.readDataToEndOfFile() }
    if let interruptAfterSeconds {
        Thread.sleep(forTimeInterval: interruptAfterSeconds)
        kill(process.processIdentifier, interruptSignal)
    }
    let deadline = Date().addingTimeInterval(timeoutSeconds)
    var peakRSS: Int?
    while process.isRunning && Date() < deadline {
        if let hwm = peakResidentBytes(pid: process.processIdentifier) { peakRSS = max(peakRSS ?? 0, hwm) }
        Thread.sleep(forTimeInterval: 0.05)
    }
    if process.isRunning {
        process.terminate()
        throw TestSetupError("hlsplay did not finish within \(timeoutSeconds) s")
    }
    process.waitUntilExit()
    group.wait()
    let rawLines = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    var parsed: [[String: Any]] = []
    for line in rawLines {
        guard let obj = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw TestSetupError("log line is not a JSON object: \(line)")
        }
        parsed.append(obj)
    }
    let harObject = (try? Data(contentsOf: har)).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    let second = ((try? String(contentsOf: dir.appendingPathComponent("session-2.jsonl"), encoding: .utf8)) ?? "")
        .split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    return Run(status: process.terminationStatus, stdout: String(decoding: outBox.data, as: UTF8.self),
               stderr: String(decoding: errBox.data, as: UTF8.self), logLines: parsed, rawLogLines: rawLines, har: harObject,
               secondLogLines: second, peakRSSBytes: peakRSS,
               terminationSignal: process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil)
}

/// A running process's peak resident set size so far (`VmHWM` in /proc/PID/status), bytes. The
/// process's own: exec gives it a fresh address space, whose high-water mark starts at zero (unlike
/// `ru_maxrss`, into which Linux carries the spawning process's mark when posix_spawn shares its memory).
func peakResidentBytes(pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
          let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
          let kB = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap({ Int($0) }) else { return nil }
    return kB * 1024
}

/// An origin serving `root` on an ephemeral loopback port for the test's duration.
func withOrigin<T>(_ root: URL, faults: [FaultRule] = [], _ body: (URL) throws -> T) throws -> T {
    var config = OriginConfiguration()
    config.faults = faults
    // Test folders link sample segments in from Samples/build, outside the folder served.
    config.followSymlinks = true
    let server = OriginServer(root: root, configuration: config)
    try server.start(port: 0)
    defer { server.stop() }
    return try body(server.baseURL)
}

/// The checks every session log must pass, whatever happened in the session.
func expectValidLog(_ run: Run, sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(run.logLines.first?["type"] as? String == "header", sourceLocation: sourceLocation)
    #expect(run.logLines.first?["schemaVersion"] as? Int == 1, sourceLocation: sourceLocation)
    #expect(run.summary != nil, "the last log line is the summary", sourceLocation: sourceLocation)
    var last = -1.0
    for line in run.logLines.dropFirst().dropLast() {
        guard let t = line["t"] as? Double else {
            Issue.record("event without t: \(line)", sourceLocation: sourceLocation)
            continue
        }
        #expect(t >= last, "t never decreases", sourceLocation: sourceLocation)
        last = t
    }
}
