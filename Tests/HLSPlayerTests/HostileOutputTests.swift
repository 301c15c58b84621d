import Foundation
import Glibc
import Testing
import TestSupport

/// What leaves the process when the network is hostile, through the real binary: no planted
/// secret (userinfo, query tokens, a refused redirect's target, a token in an error body) in
/// stdout, stderr, the session log, the HAR or `hlsplay report --html`; no raw control
/// character from the network on a terminal (stderr, the human summary) nor in a file.
@Suite struct HostileOutputTests {
    /// Every planted secret; none may appear in any output.
    static let secrets = [
        "alice-user", "pa55w0rd-SECRET", "QTOKEN-SECRET", "LOCATION-SECRET", "LOCUSER-SECRET",
        "BODY-SECRET", "FRAGMENT-SECRET"
    ]

    /// An error body a hostile server sends: SGR colours, BEL, an OSC window-title sequence, a
    /// carriage return that would overwrite the line, a C1 CSI (U+009B) and a URL with a token.
    static let hostileBody =
        "denied \u{1B}[31mRED\u{1B}[0m \u{07}\u{1B}]0;pwned-title\u{07} \roverwritten "
        + "http://cdn.example/k?key=BODY-SECRET&v=1 \u{9B}2J end"

    /// A refused redirect: to ftp://, with credentials and a token in the target.
    static let refusedLocation = "ftp://LOCUSER-SECRET:x@127.0.0.1/stolen?sig=LOCATION-SECRET&user=bob#FRAGMENT-SECRET"

    static func hostileServer() -> ScriptedHTTPServer {
        ScriptedHTTPServer { path in
            if path.hasPrefix("/redirect") {
                return "HTTP/1.1 302 Found\r\nLocation: \(refusedLocation)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            }
            let body = hostileBody
            return "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        }
    }

    /// Everything one run wrote, and the report page of its log.
    struct Outputs {
        var run: Run
        var harText: String
        var html: String
        var all: [(name: String, text: String)] {
            [
                ("stdout", run.stdout), ("stderr", run.stderr), ("log", run.rawLogLines.joined(separator: "\n")),
                ("HAR", harText), ("report", html)
            ]
        }
    }

    /// Runs hlsplay with a log and a HAR, then `hlsplay report` on the log; keeps the files' raw text.
    func play(_ url: String, _ extra: [String]) throws -> Outputs {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-hostile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("s.jsonl").path, har = dir.appendingPathComponent("s.har").path
        let process = try runProcess(
            Repo.hlsplay, [url, "--headless", "--cold", "--log", log, "--har", har] + extra, environment: environmentWithFreshCache(),
            timeoutSeconds: 60)
        let rawLines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        let run = Run(
            status: process.status, stdout: process.stdout, stderr: process.stderr,
            logLines: rawLines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] },
            rawLogLines: rawLines, har: nil)
        let harText = (try? String(contentsOfFile: har, encoding: .utf8)) ?? ""
        let html = dir.appendingPathComponent("s.html").path
        let report = try runProcess(Repo.hlsplay, ["report", log, "--html", html], environment: environmentWithFreshCache(), timeoutSeconds: 60)
        #expect(report.status == 0, "report: \(report.stderr)")
        return Outputs(run: run, harText: harText, html: (try? String(contentsOfFile: html, encoding: .utf8)) ?? "")
    }

    /// Control characters that must never reach an output raw: C0 but newline, DEL, C1.
    static func rawControls(_ text: String) -> [String] {
        text.unicodeScalars.filter { s in (s.value < 0x20 && s != "\n") || s.value == 0x7F || (0x80...0x9F).contains(s.value) }
            .map { String(format: "U+%04X", $0.value) }
    }

    func expectClean(_ outputs: Outputs, sourceLocation: SourceLocation = #_sourceLocation) {
        for (name, text) in outputs.all {
            for secret in Self.secrets {
                #expect(!text.contains(secret), "\(name) holds \(secret):\n\(text.prefix(4000))", sourceLocation: sourceLocation)
            }
            let controls = Self.rawControls(text)
            #expect(
                controls.isEmpty, "\(name) holds raw control characters \(Set(controls).sorted()):\n\(text.prefix(4000))",
                sourceLocation: sourceLocation)
        }
        expectValidLog(outputs.run, sourceLocation: sourceLocation)
        #expect(!outputs.harText.isEmpty, "a HAR was written", sourceLocation: sourceLocation)
        #expect((try? JSONSerialization.jsonObject(with: Data(outputs.harText.utf8))) != nil, "the HAR is JSON", sourceLocation: sourceLocation)
        expectValidHAR(text: outputs.harText, sourceLocation: sourceLocation)
    }

    @Test(arguments: [false, true])
    func refusedRedirect_secretsInURLAndLocation_redactedInEveryOutput(json: Bool) throws {
        let server = Self.hostileServer()
        defer { server.stop() }
        let url = "http://alice-user:pa55w0rd-SECRET@127.0.0.1:\(server.port)/redirect/master.m3u8?token=QTOKEN-SECRET&v=2"
        let outputs = try play(url, json ? ["--json"] : [])
        #expect(outputs.run.status == 69, "stderr: \(outputs.run.stderr)")
        expectClean(outputs)
        // What is left is still useful: which parameters were sent, where the redirect went.
        #expect(outputs.run.stderr.contains("ftp://REDACTED@127.0.0.1/stolen?sig=REDACTED&user=REDACTED"), "\(outputs.run.stderr)")
        #expect(outputs.harText.contains("master.m3u8?token=REDACTED&v=REDACTED"))
        #expect(outputs.run.rawLogLines.joined().contains("http://REDACTED@127.0.0.1:\(server.port)/redirect/master.m3u8?token=REDACTED&v=REDACTED"))
    }

    @Test(arguments: [false, true])
    func errorBody_controlSequencesEscaped_tokenRedacted(json: Bool) throws {
        let server = Self.hostileServer()
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/master.m3u8?token=QTOKEN-SECRET"
        let outputs = try play(url, json ? ["--json"] : [])
        #expect(outputs.run.status == 69, "stderr: \(outputs.run.stderr)")
        expectClean(outputs)
        // The sequences are shown, not performed.
        #expect(outputs.run.stderr.contains(#"\e[31mRED\e[0m \a\e]0;pwned-title\a \roverwritten"#), "\(outputs.run.stderr)")
        if !json {
            #expect(outputs.run.stdout.contains(#"\e[31mRED"#), "\(outputs.run.stdout)")
        }
        #expect(outputs.run.stderr.contains("http://cdn.example/k?key=REDACTED&v=REDACTED"))
    }

    @Test func noRedact_keepsSecrets_stillEscapesControls() throws {
        let server = Self.hostileServer()
        defer { server.stop() }
        let url = "http://127.0.0.1:\(server.port)/master.m3u8?token=QTOKEN-SECRET"
        let run = try runHlsplay([url, "--headless", "--cold", "--no-redact"], timeoutSeconds: 60)
        #expect(run.status == 69)
        #expect(run.stderr.contains("QTOKEN-SECRET") && run.stderr.contains("BODY-SECRET"), "--no-redact shows them: \(run.stderr)")
        #expect(Self.rawControls(run.stderr).isEmpty, "\(run.stderr)")
        #expect(Self.rawControls(run.stdout).isEmpty, "\(run.stdout)")
    }
}

/// The summary is the point of a run: losing it (a closed stdout, a reader that went away) is
/// reported on stderr and in the exit status (74), never silent; and the signals that end a
/// session exit with their conventional codes, the log complete.
@Suite(.tags(.realTime)) struct LostOutputTests {
    func playable() throws -> String {
        try Repo.requireSamples("short-2s").appendingPathComponent("master.m3u8").path
    }

    func tempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-lost-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    func logLines(_ path: String) -> [[String: Any]] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n")
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }

    @Test(arguments: [true, false])
    func readerGone_summaryLost_reportedExit74(json: Bool) throws {
        // `hlsplay URL --json | true`: the pipe's read end is closed before the summary is written.
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("s.jsonl").path
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()
        let run = try runProcess(
            Repo.hlsplay, [try playable(), "--headless", "--duration", "1", "--log", log] + (json ? ["--json"] : []),
            environment: environmentWithFreshCache(), standardOutput: pipe, timeoutSeconds: 60)
        #expect(run.status == 74, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("standard output") && run.stderr.contains("Broken pipe"), "\(run.stderr)")
        let lines = logLines(log)
        #expect(lines.first?["type"] as? String == "header")
        #expect(lines.last?["type"] as? String == "summary", "the log is complete")
    }

    @Test func stdoutClosed_failsAtStart_noDescriptorReused() throws {
        // `hlsplay URL --json >&-`: without a check the log file would be opened on descriptor 1
        // and receive the summary a second time.
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("s.jsonl").path
        let run = try runProcess(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c", #"exec "$0" "$@" >&-"#, Repo.hlsplay.path,
                try playable(), "--headless", "--json", "--duration", "1", "--log", log
            ], environment: environmentWithFreshCache(), timeoutSeconds: 60)
        #expect(run.status == 74, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("standard output is closed"), "\(run.stderr)")
        let summaries = logLines(log).filter { $0["type"] as? String == "summary" }
        #expect(summaries.count <= 1, "the summary went into the log through a reused descriptor")
    }

    @Test func subcommandWithStdoutClosed_exit74() throws {
        let run = try runProcess(
            URL(fileURLWithPath: "/bin/sh"), ["-c", #"exec "$0" "$@" >&-"#, Repo.hlsplay.path, "check", try playable()],
            environment: environmentWithFreshCache(), timeoutSeconds: 60)
        #expect(run.status == 74, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("standard output"), "\(run.stderr)")
    }

    @Test func stderrClosed_errorStillEndsWithItsStatus() throws {
        // `hlsplay URL 2>&-` on a failing stream: the error message has nowhere to go, which must
        // not crash the process (FileHandle traps on a failed write) nor land in the log.
        let server = HostileOutputTests.hostileServer()
        defer { server.stop() }
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("s.jsonl").path
        let run = try runProcess(
            URL(fileURLWithPath: "/bin/sh"),
            [
                "-c", #"exec "$0" "$@" 2>&-"#, Repo.hlsplay.path,
                "http://127.0.0.1:\(server.port)/master.m3u8", "--headless", "--json", "--cold", "--log", log
            ], environment: environmentWithFreshCache(), timeoutSeconds: 60)
        #expect(run.status == 69, "a network failure, not a crash")
        let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(!text.isEmpty && text.split(separator: "\n").allSatisfy { $0.hasPrefix("{") }, "the log holds JSON lines only")
        #expect(logLines(log).last?["type"] as? String == "summary")
    }

    @Test func sigterm_exit143_logComplete() throws {
        let samples = try Repo.requireSamples("short-2s")
        let run = try withOrigin(samples) { base in
            try runHlsplay(
                [base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json"],
                interruptAfterSeconds: 2.5, interruptSignal: SIGTERM)
        }
        #expect(run.status == 143, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(run.summary?["exitReason"] as? String == "interrupted")
        #expect(run.stdout.contains("\"exitReason\":\"interrupted\""))
    }
}

/// Problems that do not stop a session but change what it measures are said on stderr, not
/// only in the log.
@Suite(.tags(.realTime)) struct SessionWarningTests {
    func playable() throws -> String {
        try Repo.requireSamples("short-2s").appendingPathComponent("master.m3u8").path
    }

    @Test func insecure_warnsOnStderr() throws {
        let run = try runHlsplay([try playable(), "--headless", "--json", "--duration", "1", "--insecure"], timeoutSeconds: 60)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("warning: --insecure"), "\(run.stderr)")
    }

    @Test func unreadableEstimateStore_warnsOnStderr() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-warn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let store = dir.appendingPathComponent("estimates.json")
        try Data("{not json \u{1B}[2J".utf8).write(to: store)
        let run = try runHlsplay([try playable(), "--headless", "--json", "--duration", "1", "--estimate-store", store.path], timeoutSeconds: 60)
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("warning: estimate store"), "\(run.stderr)")
        #expect(run.stderr.contains(store.path), "\(run.stderr)")
        #expect(HostileOutputTests.rawControls(run.stderr).isEmpty)
        #expect(run.events("error").contains { $0["category"] as? String == "estimate-store" }, "still in the log")
    }

    @Test func unwritableEstimateStore_warnsOnStderr() throws {
        // The store's directory is a regular file: writable at the start check, but no directory can be made there.
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-warn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let blocker = dir.appendingPathComponent("blocker")
        try Data().write(to: blocker)
        let store = blocker.appendingPathComponent("estimates.json").path
        let samples = try Repo.requireSamples("short-2s")
        let run = try withOrigin(samples) { base in
            try runHlsplay(
                [
                    base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--duration", "3",
                    "--estimate-store", store
                ], timeoutSeconds: 60)
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("warning: estimate store"), "\(run.stderr)")
        #expect(run.events("error").contains { $0["category"] as? String == "estimate-store" }, "still in the log")
    }
}

/// A tiny HTTP/1.1 server on 127.0.0.1 that answers every request with the raw response its
/// handler returns for the path, then closes the connection (hls-origin does not redirect or send
/// chosen error bodies).
final class ScriptedHTTPServer: @unchecked Sendable {
    let port: UInt16
    private let listenFD: Int32
    private let respond: @Sendable (String) -> String

    init(respond: @escaping @Sendable (String) -> String) {
        self.respond = respond
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        precondition(fd >= 0, "socket")
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        precondition(bound == 0 && listen(fd, 16) == 0, "bind/listen")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &addr) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) } }
        listenFD = fd
        port = UInt16(bigEndian: addr.sin_port)
        Thread.detachNewThread { [self] in
            defer { Glibc.close(listenFD) }
            while true {
                let client = accept(listenFD, nil, nil)
                if client < 0 { if errno == EINTR { continue } else { return } }
                Thread.detachNewThread { [self] in serve(client) }
            }
        }
    }

    func stop() { shutdown(listenFD, Int32(SHUT_RDWR)) }

    private func serve(_ fd: Int32) {
        defer { Glibc.close(fd) }
        var head = [UInt8]()
        var scratch = [UInt8](repeating: 0, count: 4096)
        while !head.ends(with: Array("\r\n\r\n".utf8)) {
            var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&pfd, 1, 5000) > 0 else { return }
            let n = recv(fd, &scratch, scratch.count, 0)
            if n <= 0 { return }
            head += scratch[0..<n]
            if head.count > 64 << 10 { return }
        }
        let requestLine = String(decoding: head.prefix { $0 != 0x0D }, as: UTF8.self).split(separator: " ")
        let path = requestLine.count > 1 ? String(requestLine[1]) : "/"
        let bytes = Array(respond(path).utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
        shutdown(fd, Int32(SHUT_WR))
    }
}

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
