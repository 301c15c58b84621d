// The one way tests run a child process to its end: both pipes drained concurrently (so a
// chatty child never blocks on a full pipe), a deadline, and the child reaped whatever happens.

import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A finished process: exit status (or the number of the signal that ended it), output, wall seconds.
public struct ProcessResult: Sendable {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    public var wallSeconds: Double
    /// The signal that ended the process, if one did (then `status` is that signal's number).
    public var terminationSignal: Int32?
}

/// Grace, seconds, a child gets to exit after the timeout's signal before SIGKILL.
private let killGraceSeconds = 5.0
/// How often, seconds, the runner looks whether the child is still running (and calls `poll`).
private let pollIntervalSeconds = 0.05

/// Runs `executable` with `arguments` to its end. stdout and stderr are read concurrently into the
/// result; pass `standardOutput` to have stdout go there instead (then `stdout` is empty).
/// `interruptAfterSeconds` sends `interruptSignal` that long after the start; `poll` is called with
/// the pid every 50 ms while the child runs. `timeoutSeconds` (counted after any interrupt) on, the child gets `timeoutSignal`
/// (then SIGKILL if it lingers), is reaped, and a TestSetupError naming `label` is thrown.
public func runProcess(
    _ executable: URL, _ arguments: [String], environment: [String: String]? = nil,
    currentDirectory: URL? = nil, standardInput: FileHandle? = nil, standardOutput: Pipe? = nil,
    interruptAfterSeconds: Double? = nil, interruptSignal: Int32 = SIGINT,
    timeoutSeconds: Double = 120, timeoutSignal: Int32 = SIGTERM, label: String? = nil,
    poll: ((Int32) -> Void)? = nil
) throws -> ProcessResult {
    let process = Process()
    process.executableURL = executable
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let currentDirectory { process.currentDirectoryURL = currentDirectory }
    if let standardInput { process.standardInput = standardInput }
    let out = standardOutput ?? Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    let started = Date()
    try process.run()
    final class Box: @unchecked Sendable { var data = Data() }
    let outBox = Box(), errBox = Box()
    let group = DispatchGroup()
    if standardOutput == nil {
        DispatchQueue.global().async(group: group) { outBox.data = out.fileHandleForReading.readDataToEndOfFile() }
    }
    DispatchQueue.global().async(group: group) { errBox.data = err.fileHandleForReading.readDataToEndOfFile() }
    if let interruptAfterSeconds {
        Thread.sleep(forTimeInterval: interruptAfterSeconds)
        kill(process.processIdentifier, interruptSignal)
    }
    let deadline = Date().addingTimeInterval(timeoutSeconds)
    while process.isRunning && Date() < deadline {
        poll?(process.processIdentifier)
        Thread.sleep(forTimeInterval: pollIntervalSeconds)
    }
    if process.isRunning {
        kill(process.processIdentifier, timeoutSignal)
        let graceEnd = Date().addingTimeInterval(killGraceSeconds)
        while process.isRunning && Date() < graceEnd { Thread.sleep(forTimeInterval: pollIntervalSeconds) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        let name = label ?? ([executable.lastPathComponent] + arguments).joined(separator: " ")
        throw TestSetupError("\(name) did not finish within \(timeoutSeconds) s")
    }
    process.waitUntilExit()
    group.wait()
    return ProcessResult(
        status: process.terminationStatus, stdout: String(decoding: outBox.data, as: UTF8.self),
        stderr: String(decoding: errBox.data, as: UTF8.self), wallSeconds: Date().timeIntervalSince(started),
        terminationSignal: process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil)
}

/// Reads `handle` byte by byte up to and including the first newline (or its end), without the newline:
/// a server's first line, with nothing after it consumed.
public func readFirstLine(_ handle: FileHandle) -> String {
    var line: [UInt8] = []
    while line.last != 0x0A {
        let d = handle.readData(ofLength: 1)
        if d.isEmpty { break }
        line.append(contentsOf: d)
    }
    return String(decoding: line, as: UTF8.self).trimmingCharacters(in: .newlines)
}

/// This process's environment with `XDG_CACHE_HOME` at `cache` (a fresh temp folder by default), so a
/// child hlsplay starts with an empty estimate store and touches no user file.
public func environmentWithFreshCache(_ cache: URL? = nil) -> [String: String] {
    var environment = ProcessInfo.processInfo.environment
    environment["XDG_CACHE_HOME"] =
        (cache
        ?? FileManager.default.temporaryDirectory
        .appendingPathComponent("hlsplay-cache-\(UUID().uuidString)")).path
    return environment
}
