// The hostile corpus (Tools/hardening/hostile/cases, schema in Tools/hardening/hostile/README.md): every case folder is
// served over loopback and played by the RELEASE binary — what users run, built with -O, where a
// trap is the same SIGILL as in debug — and must end with one of its documented exit codes, a
// valid session log whose last line is the summary, a peak RSS under its bound, and none of the
// planted secrets in any output. `hlsplay check` runs on the case's playlist too when the case
// asks. `HOSTILE_HLSPLAY=/path/to/hlsplay` runs the corpus against another binary (an older
// build, to see what it did before).

import Foundation
import HLSOrigin
import Testing
import TestSupport

/// One case folder's `case.json`.
struct HostileCase: Sendable {
    static let keys: Set<String> = [
        "about", "play", "args", "exit", "summaryError", "check", "checkExit", "checkOutput",
        "generate", "maxRSSMiB", "maxSeconds"
    ]
    /// The exit codes a hostile input may end with (README "Exit status"): played, malformed
    /// playlist or media, network failure, no progress. 70 (internal error) and a signal are bugs.
    static let documentedExits: Set<Int32> = [0, 65, 69, 75]
    /// Peak resident memory of one hlsplay process when the case names no bound, MiB: a release
    /// session of a small stream peaks near 60 MiB on the CI machine; three times that is a leak or
    /// a bomb, not noise.
    static let defaultMaxRSSMiB = 200.0
    /// Wall time of one run when the case names none, seconds (generous: the CI machine is shared).
    static let defaultMaxSeconds = 120.0

    var name: String
    var about: String
    var play: String?
    var args: [String]
    var exit: Set<Int32>
    var summaryError: [String]
    var check: String?
    var checkExit: Set<Int32>
    var checkOutput: [String]
    /// Files to make before serving: a recipe name (`HostileCorpus.recipes`) or ffmpeg's arguments,
    /// the output file appended (a case needs no code for its own media).
    var generate: [String: Generate]
    enum Generate: Sendable { case recipe(String), ffmpeg([String]) }
    var maxRSSMiB: Double
    var maxSeconds: Double

    init(name: String, json: Data) throws {
        guard let o = try JSONSerialization.jsonObject(with: json) as? [String: Any] else {
            throw TestSetupError("\(name)/case.json is not a JSON object")
        }
        let unknown = Set(o.keys).subtracting(Self.keys)
        guard unknown.isEmpty else { throw TestSetupError("\(name)/case.json: unknown keys \(unknown.sorted()) (known: \(Self.keys.sorted()))") }
        func strings(_ key: String) -> [String] { o[key] as? [String] ?? [] }
        func codes(_ key: String) -> Set<Int32> { Set((o[key] as? [Int] ?? []).map(Int32.init)) }
        self.name = name
        guard let about = o["about"] as? String else { throw TestSetupError("\(name)/case.json: \"about\" is required") }
        self.about = about
        play = o["play"] as? String
        args = strings("args")
        exit = codes("exit")
        summaryError = strings("summaryError")
        check = o["check"] as? String
        checkExit = codes("checkExit")
        checkOutput = strings("checkOutput")
        var generate: [String: Generate] = [:]
        for (file, value) in o["generate"] as? [String: Any] ?? [:] {
            if let recipe = value as? String {
                generate[file] = .recipe(recipe)
            } else if let arguments = value as? [String], !arguments.isEmpty {
                generate[file] = .ffmpeg(arguments)
            } else {
                throw TestSetupError("\(name)/case.json: \"generate\" \(file): a recipe name or a non-empty array of ffmpeg arguments")
            }
        }
        self.generate = generate
        maxRSSMiB = (o["maxRSSMiB"] as? Double) ?? Self.defaultMaxRSSMiB
        maxSeconds = (o["maxSeconds"] as? Double) ?? Self.defaultMaxSeconds
        guard play != nil || check != nil else { throw TestSetupError("\(name)/case.json: neither \"play\" nor \"check\"") }
        if play != nil {
            guard !exit.isEmpty, exit.isSubset(of: Self.documentedExits) else {
                throw TestSetupError("\(name)/case.json: \"exit\" must be a non-empty subset of the documented \(Self.documentedExits.sorted())")
            }
        }
        if check != nil {
            guard !checkExit.isEmpty, checkExit.isSubset(of: [0, 65]) else {
                throw TestSetupError("\(name)/case.json: \"checkExit\" must be a non-empty subset of [0, 65]")
            }
        }
    }
}

enum HostileCorpus {
    static let root = Repo.root.appendingPathComponent("Tools/hardening/hostile/cases")

    /// Every folder of the corpus that has a case.json, sorted.
    static var names: [String] {
        let all = (try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? []
        return all.filter { FileManager.default.fileExists(atPath: root.appendingPathComponent("\($0)/case.json").path) }.sorted()
    }

    /// The binary under test: `HOSTILE_HLSPLAY`, else `.build/release/hlsplay`, which must be newer than every source.
    static func binary() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["HOSTILE_HLSPLAY"] { return URL(fileURLWithPath: path) }
        let release = Repo.root.appendingPathComponent(".build/release/hlsplay")
        let build = "swift build -c release --product hlsplay (Tools/test.sh does)"
        guard let built = (try? FileManager.default.attributesOfItem(atPath: release.path))?[.modificationDate] as? Date else {
            throw TestSetupError("\(release.path) is missing: run `\(build)`")
        }
        let sources = Repo.root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: [.contentModificationDateKey])
        while let file = files?.nextObject() as? URL {
            if let modified = try? file.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate, modified > built {
                throw TestSetupError("\(release.path) is older than \(file.path): run `\(build)`")
            }
        }
        return release
    }

    /// Media the cases name in "generate", made once per test process with the ffmpeg CLI.
    static let recipes: [String: [String]] = [
        // 2 s of 160x90 H.264 (a keyframe each second) and AAC in MPEG-TS, about 60 KB.
        "ts-2s": FFmpegCLI.testVideo(seconds: 2, size: "160x90", fps: 25) + FFmpegCLI.tone(seconds: 2)
            + ["-c:v", "libx264", "-g", "25", "-pix_fmt", "yuv420p", "-c:a", "aac", "-b:a", "64k", "-f", "mpegts"]
    ]
    private static let madeLock = NSLock()
    nonisolated(unsafe) private static var made: [String: URL] = [:]

    static func media(_ recipe: String) throws -> URL {
        try madeLock.withLock {
            if let url = made[recipe] { return url }
            guard let arguments = recipes[recipe] else {
                throw TestSetupError("unknown media recipe \"\(recipe)\" (known: \(recipes.keys.sorted()))")
            }
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-media-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            try FFmpegCLI.run(arguments + ["\(recipe).media"], in: dir)
            let url = dir.appendingPathComponent("\(recipe).media")
            made[recipe] = url
            return url
        }
    }
}

/// A child process's end: its exit code (or the signal that killed it), peak RSS and wall time.
struct MeasuredRun {
    var exitCode: Int32?
    var signal: Int32?
    var maxRSSKiB: Int
    var seconds: Double
    var stdout: String
    var stderr: String
    var timedOut: Bool

    var outcome: String {
        if timedOut { return "timed out" }
        if let signal { return "killed by signal \(signal)" }
        return "exit \(exitCode ?? -1)"
    }
}

/// Runs `executable` with `arguments` through Tools/hardening/hostile/measure.py (a real fork and exec, reaped with
/// `wait4`), stdout and stderr to files in `dir`: its exit or signal, and its own peak RSS (ru_maxrss, KiB).
/// Not posix_spawn from here: glibc's shares this test process's memory until exec, and Linux carries that
/// memory's high-water mark into the child's ru_maxrss (measure.py says more).
func runMeasured(
    _ executable: URL, _ arguments: [String], environment: [String: String], in dir: URL,
    label: String, timeoutSeconds: Double
) throws -> MeasuredRun {
    let out = dir.appendingPathComponent("\(label).stdout"), err = dir.appendingPathComponent("\(label).stderr")
    let report = dir.appendingPathComponent("\(label).measure.json")
    let measure = Repo.root.appendingPathComponent("Tools/hardening/hostile/measure.py")
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, report.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let python = "/usr/bin/python3"
    let argv =
        ([
            python, measure.path, "--timeout", String(timeoutSeconds), "--stdout", out.path, "--stderr", err.path, "--",
            executable.path
        ] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { (argv + envp).forEach { free($0) } }
    var pid: pid_t = 0
    let rc = posix_spawn(&pid, python, &actions, nil, argv, envp)
    guard rc == 0 else { throw TestSetupError("posix_spawn \(python): \(String(cString: strerror(rc)))") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    guard let data = try? Data(contentsOf: report),
        let o = try JSONSerialization.jsonObject(with: data) as? [String: Any], let rss = o["maxRSSKiB"] as? Int
    else {
        throw TestSetupError("measure.py gave no report (status \(status)): \((try? String(contentsOf: report, encoding: .utf8)) ?? "")")
    }
    return MeasuredRun(
        exitCode: (o["exit"] as? Int).map(Int32.init), signal: (o["signal"] as? Int).map(Int32.init),
        maxRSSKiB: rss, seconds: o["seconds"] as? Double ?? 0,
        stdout: (try? String(contentsOf: out, encoding: .utf8)) ?? "",
        stderr: (try? String(contentsOf: err, encoding: .utf8)) ?? "", timedOut: o["timedOut"] as? Bool ?? false)
}

@Suite(.tags(.realTime)) struct HostileCorpusTests {
    @Test func theCorpusIsThere() {
        #expect(HostileCorpus.names.count >= 20, "Tools/hardening/hostile/cases holds the hostile corpus")
    }

    @Test(arguments: HostileCorpus.names)
    func hostileCase(_ name: String) throws {
        let caseDir = HostileCorpus.root.appendingPathComponent(name)
        let spec = try HostileCase(name: name, json: Data(contentsOf: caseDir.appendingPathComponent("case.json")))
        let binary = try HostileCorpus.binary()
        // The case folder, its media made, and the planted secret substituted, in a fresh temp dir.
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(name)-\(UUID().uuidString)")
        let served = work.appendingPathComponent("served")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        try FileManager.default.copyItem(at: caseDir, to: served)
        try? FileManager.default.removeItem(at: served.appendingPathComponent("case.json"))
        for (file, how) in spec.generate {
            switch how {
            case .recipe(let recipe):
                try FileManager.default.copyItem(at: try HostileCorpus.media(recipe), to: served.appendingPathComponent(file))
            case .ffmpeg(let arguments):
                try FFmpegCLI.run(arguments + [file], in: served)
            }
        }
        let secret = "hostile-secret-\(UUID().uuidString.prefix(8))"
        let textFiles = (try FileManager.default.contentsOfDirectory(atPath: served.path)).filter { $0.hasSuffix(".m3u8") || $0.hasSuffix(".json") }
        for file in textFiles {
            let url = served.appendingPathComponent(file)
            let text = try String(contentsOf: url, encoding: .utf8)
            try text.replacingOccurrences(of: "{{SECRET}}", with: secret).write(to: url, atomically: false, encoding: .utf8)
        }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CACHE_HOME"] = work.appendingPathComponent("cache").path
        environment["SWIFT_BACKTRACE"] = "enable=no" // a crash is reported by its signal; no backtrace in the outputs
        var outputs: [(String, String)] = []

        if let check = spec.check {
            let run = try runMeasured(
                binary, ["check", served.appendingPathComponent(check).path], environment: environment,
                in: work, label: "check", timeoutSeconds: spec.maxSeconds)
            #expect(
                run.exitCode.map(spec.checkExit.contains) == true,
                "\(name): hlsplay check ended with \(run.outcome), expected \(spec.checkExit.sorted()): \(run.stdout)\(run.stderr)")
            for text in spec.checkOutput { #expect(run.stdout.contains(text), "\(name): check output lacks \"\(text)\": \(run.stdout)") }
            outputs += [("check stdout", run.stdout), ("check stderr", run.stderr)]
        }

        if let play = spec.play {
            let log = work.appendingPathComponent("session.jsonl"), har = work.appendingPathComponent("session.har")
            var flags = ["--headless", "--json", "--log", log.path, "--har", har.path]
            if !spec.args.contains("--no-progress-timeout") { flags += ["--no-progress-timeout", "20"] }
            let run = try withOrigin(served) { base in
                // Credentials and a token in the URL too: none may leave the process unredacted.
                var components = URLComponents(url: base.appendingPathComponent(play), resolvingAgainstBaseURL: false)!
                components.user = "viewer"
                components.password = secret
                components.query = "token=\(secret)"
                return try runMeasured(
                    binary, [components.url!.absoluteString] + flags + spec.args, environment: environment,
                    in: work, label: "play", timeoutSeconds: spec.maxSeconds)
            }
            let rssMiB = Double(run.maxRSSKiB) / 1024
            #expect(
                run.exitCode.map(spec.exit.contains) == true,
                "\(name): \(run.outcome), expected \(spec.exit.sorted()); stderr: \(run.stderr.suffix(600))")
            #expect(!run.timedOut, "\(name): still running after \(spec.maxSeconds) s")
            #expect(rssMiB <= spec.maxRSSMiB, "\(name): peak RSS \(String(format: "%.1f", rssMiB)) MiB over \(spec.maxRSSMiB) MiB")
            // A valid log: JSON objects only, the header first, the summary last.
            let rawLog = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            let lines = rawLog.split(separator: "\n").map { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
            #expect(!lines.isEmpty && lines.allSatisfy { $0 != nil }, "\(name): the log is empty or has a line that is not a JSON object")
            #expect(lines.first??["type"] as? String == "header", "\(name): the log does not start with its header")
            let summary = lines.last ?? nil
            #expect(summary?["type"] as? String == "summary", "\(name): the log does not end with the summary (\(run.outcome))")
            let error = summary?["error"] as? String ?? ""
            for text in spec.summaryError { #expect(error.contains(text), "\(name): the summary's error lacks \"\(text)\": \(error)") }
            let harText = (try? String(contentsOf: har, encoding: .utf8)) ?? ""
            if !harText.isEmpty { expectValidHAR(text: harText) }
            outputs += [("stdout", run.stdout), ("stderr", run.stderr), ("log", rawLog), ("HAR", harText)]
            print("hostile \(name): \(run.outcome), peak RSS \(String(format: "%.1f", rssMiB)) MiB, \(String(format: "%.1f", run.seconds)) s")
        }
        for (what, text) in outputs {
            #expect(!text.contains(secret), "\(name): the planted secret is in the \(what)")
        }
    }
}
