import Foundation
import HLSOrigin
import Testing
import TestSupport

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
func runHlsplay(
    _ args: [String], interruptAfterSeconds: Double? = nil, interruptSignal: Int32 = SIGINT, timeoutSeconds: Double = 120,
    environment extra: [String: String] = [:], har writesHAR: Bool = true,
    executable: URL = Repo.hlsplay
) throws -> Run {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-test-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let log = dir.appendingPathComponent("session.jsonl")
    let har = dir.appendingPathComponent("session.har")
    // A test that names its own log keeps it (e.g. to read numbered logs of many sessions).
    // `hlsplay simulate` takes no --har (writesHAR false).
    let arguments =
        args.contains(where: { $0 == "--log" || $0.hasPrefix("--log=") }) ? args : args + ["--log", log.path] + (writesHAR ? ["--har", har.path] : [])
    // Each run gets its own cache directory, so the estimate store starts empty
    // (cold) unless a test passes --estimate-store, and no user file is touched.
    var environment = environmentWithFreshCache(dir.appendingPathComponent("cache"))
    environment.merge(extra) { $1 }
    var peakRSS: Int?
    let result = try runProcess(
        executable, arguments, environment: environment,
        interruptAfterSeconds: interruptAfterSeconds, interruptSignal: interruptSignal,
        timeoutSeconds: timeoutSeconds, label: "hlsplay"
    ) { pid in
        if let hwm = peakResidentBytes(pid: pid) { peakRSS = max(peakRSS ?? 0, hwm) }
    }
    let rawLines = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    var parsed: [[String: Any]] = []
    for line in rawLines {
        guard let obj = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
            throw TestSetupError("log line is not a JSON object: \(line)")
        }
        parsed.append(obj)
    }
    let harObject = (try? Data(contentsOf: har)).flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    // Every HAR a test makes is checked against HAR 1.2, whatever the test is about.
    expectValidHAR(at: har)
    let second = ((try? String(contentsOf: dir.appendingPathComponent("session-2.jsonl"), encoding: .utf8)) ?? "")
        .split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    return Run(
        status: result.status, stdout: result.stdout, stderr: result.stderr, logLines: parsed, rawLogLines: rawLines,
        har: harObject, secondLogLines: second, peakRSSBytes: peakRSS, terminationSignal: result.terminationSignal)
}

/// A running process's peak resident set size so far (`VmHWM` in /proc/PID/status), bytes. The
/// process's own: exec gives it a fresh address space, whose high-water mark starts at zero (unlike
/// `ru_maxrss`, into which Linux carries the spawning process's mark when posix_spawn shares its memory).
func peakResidentBytes(pid: Int32) -> Int? {
    guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kB = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first.flatMap({ Int($0) })
    else { return nil }
    return kB * 1024
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
