import Foundation
import Testing
import TestSupport

/// Output files that cannot take data, through the real binary: an unwritable or full
/// `--log`/`--har`/`--estimate-store` is a clear error before anything plays (exit 73, the
/// message names the path and the errno text), and a write that fails mid-session is reported
/// at once and in the exit status (74), with the log left as whole JSON lines.
@Suite struct OutputPathTests {
    func tempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-out-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A local file URL of the short ladder: no origin needed, the session would play at once.
    func playable() throws -> String {
        try Repo.requireSamples("short-2s").appendingPathComponent("master.m3u8").path
    }

    /// Expects the run refused to start: exit 73, nothing played, the path and the reason on stderr.
    func expectRefusedAtStart(_ run: Run, path: String, reason: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.status == 73, "exit status; stderr: \(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.stderr.contains(path), "the message names \(path): \(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.stderr.contains(reason), "the message says \(reason): \(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.stdout.isEmpty, "no session was played: \(run.stdout)", sourceLocation: sourceLocation)
    }

    @Test(.tags(.realTime)) func logDash_isStandardOutput_andTheSummaryGoesToStandardError() throws {
        let run = try runHlsplay([try playable(), "--headless", "--json", "--duration", "1", "--log", "-"], timeoutSeconds: 60)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let objects = lines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        #expect(objects.count == lines.count && lines.count > 2, "every stdout line is a log line: \(lines.prefix(3))")
        #expect(objects.first?["type"] as? String == "header")
        #expect(objects.last?["type"] as? String == "summary")
        #expect(objects.last?["exitReason"] as? String == "durationReached")
        // The summary is on stderr instead, and no file named "-" was written.
        #expect(run.stderr.contains("\"type\":\"summary\""), "stderr: \(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: "-"))
    }

    @Test func logDash_withSeveralSessions_orHarDash_isAUsageError() throws {
        for args in [["--log", "-", "--sessions", "2"], ["--log", "-", "--then", try playable()], ["--har", "-", "--log", "/dev/null"]] {
            let run = try runHlsplay([try playable(), "--headless"] + args, timeoutSeconds: 30)
            #expect(run.status == 64, "\(args): exit \(run.status), stderr: \(run.stderr)")
            #expect(run.stderr.contains(args.contains("--har") ? "--har -" : "--log -"), "\(args): \(run.stderr)")
            #expect(run.stdout.isEmpty)
        }
    }

    @Test func logOnAFullDevice_failsAtStart() throws {
        // /dev/full opens fine and fails every write with ENOSPC: the probe at open catches it.
        let run = try runHlsplay([try playable(), "--headless", "--json", "--log", "/dev/full"], timeoutSeconds: 30)
        expectRefusedAtStart(run, path: "/dev/full", reason: "No space left on device")
    }

    @Test func harOnAFullDevice_failsAtStart() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("s.jsonl").path
        let run = try runHlsplay([try playable(), "--headless", "--json", "--log", log, "--har", "/dev/full"], timeoutSeconds: 30)
        expectRefusedAtStart(run, path: "/dev/full", reason: "No space left on device")
    }

    @Test func logInAMissingDirectory_failsAtStart() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("missing/s.jsonl").path
        let run = try runHlsplay([try playable(), "--headless", "--json", "--log", log], timeoutSeconds: 30)
        expectRefusedAtStart(run, path: log, reason: "No such file or directory")
    }

    @Test func harInAMissingDirectory_failsAtStart() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let har = dir.appendingPathComponent("missing/s.har").path
        let run = try runHlsplay(
            [try playable(), "--headless", "--json", "--log", dir.appendingPathComponent("s.jsonl").path, "--har", har],
            timeoutSeconds: 30)
        expectRefusedAtStart(run, path: har, reason: "No such file or directory")
    }

    @Test func logInAReadOnlyDirectory_failsAtStart() throws {
        let dir = try tempDir()
        defer {
            chmod(dir.path, 0o755)
            try? FileManager.default.removeItem(at: dir)
        }
        // root ignores permission bits (CI runs as root), but not sysfs, which refuses new files.
        let log: String
        if geteuid() == 0 {
            log = "/sys/hlsplay-\(UUID().uuidString).jsonl"
        } else {
            #expect(chmod(dir.path, 0o555) == 0)
            log = dir.appendingPathComponent("s.jsonl").path
        }
        let run = try runHlsplay([try playable(), "--headless", "--json", "--log", log], timeoutSeconds: 30)
        expectRefusedAtStart(run, path: log, reason: "Permission denied")
        #expect(!FileManager.default.fileExists(atPath: log))
    }

    @Test func logPathIsADirectory_failsAtStart() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try runHlsplay([try playable(), "--headless", "--json", "--log", dir.path], timeoutSeconds: 30)
        expectRefusedAtStart(run, path: dir.path, reason: "Is a directory")
    }

    @Test func estimateStoreThatIsNotAFile_failsAtStart() throws {
        // The store is replaced by rename at the end; a directory (or a device) there can never take it.
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let run = try runHlsplay([try playable(), "--headless", "--json", "--estimate-store", dir.path], timeoutSeconds: 30)
        expectRefusedAtStart(run, path: dir.path, reason: "not a regular file")
    }

    /// The disk fills mid-session: a file-size limit (`ulimit -f`, 10 KiB; the whole log of this 3 s session
    /// is about 18 KiB, its header 3.3 KiB) lets the header and the first events through, then every write
    /// fails with EFBIG. The session still plays to its end;
    /// the failure is reported on stderr with the path and the errno text, the exit status is 74,
    /// and the log holds whole JSON lines only — as many as the message says.
    @Test(.tags(.realTime)) func logWriteFailsMidSession_reportedAndLogKeepsWholeLines() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("s.jsonl")
        let limitBlocks = 20 // dash's ulimit -f counts 512-byte blocks: 10 240 bytes
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", "ulimit -f \(limitBlocks) && exec \"$0\" \"$@\"", Repo.hlsplay.path,
            try playable(), "--headless", "--json", "--duration", "3", "--log", log.path
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CACHE_HOME"] = dir.appendingPathComponent("cache").path
        process.environment = environment
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let stderrData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let stderr = String(decoding: stderrData, as: UTF8.self)

        #expect(process.terminationStatus == 74, "stderr: \(stderr)")
        #expect(stderr.contains("writing the session log \(log.path) failed: File too large"), "stderr: \(stderr)")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: log.path)[.size] as? Int)
        #expect(size > 2_000 && size <= limitBlocks * 512, "log size \(size)")
        // Every line is a whole JSON object (the half-written one was cut off), header first, no summary.
        let text = try String(contentsOf: log, encoding: .utf8)
        #expect(text.hasSuffix("\n"))
        let lines = text.split(separator: "\n")
        for line in lines {
            #expect((try? JSONSerialization.jsonObject(with: Data(line.utf8))) is [String: Any], "not a JSON object: \(line.prefix(80))")
        }
        let first = try #require(lines.first.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(first["type"] as? String == "header")
        #expect(stderr.contains("it is incomplete after \(lines.count) lines"), "the message counts the lines kept (\(lines.count)): \(stderr)")
    }
}
