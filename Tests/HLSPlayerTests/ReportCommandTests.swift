// `hlsplay report` end to end. Uses TestSupport (Repo, runProcess, withOrigin, TestSetupError,
// SeriesElement), Support.swift (runHlsplay) and, from ReportRenderTests.swift, Chromium.

import Foundation
import HLSOrigin
import Testing
import TestSupport

/// `hlsplay report` as a user runs it: the real binary, a real session log.
@Suite(.serialized, .tags(.realTime)) struct ReportCommandTests {
    func hlsplay(_ args: [String], timeoutSeconds: Double = 60) throws -> ProcessResult {
        try runProcess(Repo.hlsplay, args, timeoutSeconds: timeoutSeconds, label: "hlsplay report")
    }

    func tempDir() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-report-cmd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test func report_realLog_writesAPageChromiumRenders() throws {
        let samples = try Repo.requireSamples("short-2s")
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("session.jsonl")
        let run = try withOrigin(samples) { base in
            try runHlsplay([
                base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
                "--predictor", "threshold", "--duration", "4", "--log", log.path
            ])
        }
        #expect(run.status == 0, "stderr: \(run.stderr)")
        let page = dir.appendingPathComponent("out.html")
        let result = try hlsplay(["report", log.path, "--html", page.path, "--title", "short <run>"])
        #expect(result.status == 0, "stderr: \(result.stderr)")
        let html = try String(contentsOf: page, encoding: .utf8)
        #expect(html.contains("<title>short &lt;run&gt;</title>"))
        // runHlsplay parses only its own log; this one is ours, so count here.
        let bufferSamples = try String(contentsOf: log, encoding: .utf8).split(separator: "\n").filter { $0.contains("\"type\":\"buffer.sample\"") }
        #expect(!bufferSamples.isEmpty)
        #expect(SeriesElement(html, "buffer")?.points == bufferSamples.count)
        let dom = try Chromium.run(["--dump-dom"], page: page)
        for name in ["buffer", "bitrate", "estimate", "risk", "policy"] {
            #expect(SeriesElement(dom, name)?.isMissing == false, "\(name)")
        }
        // '-' writes the page to stdout.
        let stdout = try hlsplay(["report", log.path, "--html", "-"])
        #expect(stdout.status == 0 && stdout.stdout.hasPrefix("<!DOCTYPE html>"))
    }

    @Test func report_usageErrors_exit64_namingTheWord() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let log = dir.appendingPathComponent("s.jsonl")
        try Data("{\"type\":\"header\",\"schema\":\"hlsplay.session-log\",\"schemaVersion\":1}\n".utf8).write(to: log)
        let out = dir.appendingPathComponent("o.html").path
        let cases: [([String], String)] = [
            (["report", log.path, "--html", out, "--bogus"], "--bogus"),
            (["report", log.path, "--html"], "--html"),
            (["report", log.path], "--html"),
            (["report", "--html", out], "SESSION.jsonl"),
            (["report", "-", log.path, "-", "--html", out], "'-' (standard input) given twice"),
            (["report", log.path, "--html", out, "--title"], "--title")
        ]
        for (args, word) in cases {
            let r = try hlsplay(args)
            #expect(r.status == 64, "\(args): \(r.status)")
            #expect(r.stderr.contains(word), "\(args): \(r.stderr)")
        }
        #expect(try hlsplay(["report", "--help"]).status == 0)
    }

    @Test func report_unreadableOrInvalidLog_oneLineError_nonZero() throws {
        let dir = try tempDir()
        defer { try? FileManager.default.removeItem(at: dir) }
        let out = dir.appendingPathComponent("o.html")
        let missing = try hlsplay(["report", dir.appendingPathComponent("nope.jsonl").path, "--html", out.path])
        #expect(missing.status != 0 && missing.status != 64)
        #expect(missing.stderr.contains("nope.jsonl"))
        #expect(missing.stderr.split(separator: "\n").count == 1, "\(missing.stderr)")
        let garbage = dir.appendingPathComponent("garbage.jsonl")
        try Data("this is not a session log\n".utf8).write(to: garbage)
        let invalid = try hlsplay(["report", garbage.path, "--html", out.path])
        #expect(invalid.status != 0)
        #expect(invalid.stderr.contains("not a session log"))
        #expect(invalid.stderr.split(separator: "\n").count == 1, "\(invalid.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path), "no page for an invalid log")
        // Several logs: the one that is missing or not valid is named, with the same exit status, and nothing is written.
        let good = dir.appendingPathComponent("good.jsonl")
        try Data("{\"type\":\"header\",\"schema\":\"hlsplay.session-log\",\"schemaVersion\":1}\n".utf8).write(to: good)
        let secondMissing = try hlsplay(["report", good.path, dir.appendingPathComponent("gone.jsonl").path, "--html", out.path])
        #expect(secondMissing.status == missing.status)
        #expect(secondMissing.stderr.contains("gone.jsonl") && !secondMissing.stderr.contains("good.jsonl"), "\(secondMissing.stderr)")
        let secondInvalid = try hlsplay(["report", good.path, garbage.path, "--html", out.path])
        #expect(secondInvalid.status == invalid.status)
        #expect(secondInvalid.stderr.contains("'\(garbage.path)' is not a session log"), "\(secondInvalid.stderr)")
        #expect(!FileManager.default.fileExists(atPath: out.path))
        // A link rate that is not a trace, an origin log with no shaped request: named, exit 65, no page.
        let badLink = try hlsplay(["report", good.path, "--link", garbage.path, "--html", out.path])
        #expect(badLink.status == 65 && badLink.stderr.contains("'\(garbage.path)' is not a usable trace"), "\(badLink.stderr)")
        let unshaped = dir.appendingPathComponent("origin.jsonl")
        try Data("{\"accepted\":0.1,\"method\":\"GET\",\"path\":\"/m.m3u8\",\"status\":200,\"shaping\":\"none\"}\n".utf8).write(to: unshaped)
        let noRate = try hlsplay(["report", good.path, "--origin-log", unshaped.path, "--html", out.path])
        #expect(noRate.status == 65 && noRate.stderr.contains("origin.jsonl"), "\(noRate.stderr)")
        #expect(try hlsplay(["report", good.path, "--link", garbage.path, "--origin-log", unshaped.path, "--html", out.path]).status == 64)
        #expect(!FileManager.default.fileExists(atPath: out.path))
        let both = try hlsplay(["report", good.path, good.path, "--html", out.path])
        #expect(both.status == 0, "\(both.stderr)")
        #expect(try String(contentsOf: out, encoding: .utf8).components(separatedBy: "<section class=\"session\"").count == 3)
    }
}
