import Foundation
import HLSCore
import HLSOrigin
import HLSReport
import Testing
import TestSupport

/// Headless Chromium (Debian's `chromium`, installed by Tools/install-deps.sh).
enum Chromium {
    static func path() throws -> String {
        for candidate in ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
        where FileManager.default.isExecutableFile(atPath: candidate) {
            return candidate
        }
        throw TestSetupError("chromium is not installed: run Tools/install-deps.sh (apt-get install chromium)")
    }

    /// Runs chromium headless with `arguments` + the page; stdout, or a failure after `timeoutSeconds`.
    @discardableResult
    static func run(_ arguments: [String], page: URL, timeoutSeconds: Double = 60) throws -> String {
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: profile) }
        let result = try runProcess(
            URL(fileURLWithPath: try path()),
            [
                "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
                "--user-data-dir=\(profile.path)"
            ] + arguments + [page.absoluteString],
            timeoutSeconds: timeoutSeconds, timeoutSignal: SIGKILL, label: "chromium")
        guard result.status == 0 else {
            throw TestSetupError("chromium exited \(result.status): \(result.stderr.suffix(2000))")
        }
        return result.stdout
    }
}

/// Width and height from a PNG's IHDR, or nil when `data` is not a PNG.
func pngSize(_ data: Data) -> (width: Int, height: Int)? {
    let bytes = [UInt8](data.prefix(24))
    guard bytes.count == 24, bytes[0..<8] == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A],
        bytes[12..<16] == [0x49, 0x48, 0x44, 0x52]
    else { return nil }
    func be32(_ i: Int) -> Int { bytes[i..<i + 4].reduce(0) { $0 << 8 | Int($1) } }
    return (be32(16), be32(20))
}

/// The timeline page of a real session (a link collapse: a stall, risk, policy
/// changes, cap changes), rendered by headless Chromium.
@Suite(.serialized, .tags(.realTime)) struct ReportRenderTests {
    /// A real session log: 8 Mbit/s, then nothing from 3 s to 11 s of server time;
    /// a 4 s forward buffer cannot ride that out, so playback stalls whatever the ABR chose.
    func collapsingSession() throws -> Run {
        let samples = try Repo.requireSamples("ladder-2s")
        var config = OriginConfiguration()
        config.rateBitsPerSecond = 8_000_000
        config.linkCollapses = [LinkCollapse(atSeconds: 3, durationSeconds: 8)]
        let server = OriginServer(root: samples, configuration: config)
        try server.start(port: 0)
        defer { server.stop() }
        return try runHlsplay([
            server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json",
            "--predictor", "threshold", "--forward-buffer", "4", "--duration", "14"
        ])
    }

    @Test func realSessionLog_rendersEverySeries_inHeadlessChromium() throws {
        _ = try Chromium.path() // fail early, with the fix, before the 25 s session
        let run = try collapsingSession()
        #expect(run.status == 0, "stderr: \(run.stderr)")
        expectValidLog(run)
        #expect(!run.events("stall.start").isEmpty, "the collapse stalls playback")

        let html = try TimelineReport.render(sessionLog: run.rawLogLines.joined(separator: "\n") + "\n", title: "collapse")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-report-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let page = dir.appendingPathComponent("report.html")
        try Data(html.utf8).write(to: page)

        // The DOM as Chromium parsed it: every series present, with the log's number of points.
        let dom = try Chromium.run(["--dump-dom"], page: page)
        #expect(dom.contains("<svg"), "chromium parsed the page: \(dom.prefix(300))")
        let expected: [String: Int] = [
            "buffer": run.events("buffer.sample").count,
            "bitrate": run.events("segment.buffered").count,
            "estimate": run.events("buffer.sample").filter { ($0["estimateBps"] as? Double ?? 0) > 0 }.count,
            "throughput": run.events("request.end").filter { ($0["throughputBps"] as? Double ?? 0) > 0 }.count,
            "risk": run.events("risk.sample").count,
            "stalls": run.events("stall.start").count,
            "cap": run.events("cap.change").count,
            "requests": run.events("request.start").count
        ]
        for (name, count) in expected.sorted(by: { $0.key < $1.key }) {
            let element = try #require(SeriesElement(dom, name), "series \(name) in the DOM")
            #expect(!element.isMissing, "\(name)")
            #expect(count > 0, "the real log has \(name)")
            #expect(element.points == count, "\(name): \(element.points ?? -1) drawn, \(count) in the log")
        }
        for name in ["buffer", "estimate", "risk"] {
            let pairs = try #require(SeriesElement(dom, name)).pathPairs
            #expect(pairs == expected[name], "\(name): the path has \(pairs) vertices")
        }
        let bitratePath = SeriesElement(dom, "bitrate")?.attribute("d") ?? ""
        #expect(bitratePath.hasPrefix("M") && bitratePath.count > 10, "bitrate path: \(bitratePath)")
        let policy = try #require(SeriesElement(dom, "policy"))
        #expect(!policy.isMissing && !policy.children("rect").isEmpty)
        #expect(policy.children("rect").contains { SeriesElement.attribute("data-policy", in: $0) == "defensiveDownshift" })
        // The waterfall: one bar per attempt, the same number as request.end; the collapse cuts some short.
        let bars = try #require(SeriesElement(dom, "requests")).children("rect").filter { SeriesElement.attribute("class", in: $0) == "request" }
        #expect(bars.count == run.events("request.end").count)
        #expect(bars.count == run.events("request.start").count)
        #expect(Set(bars.compactMap { SeriesElement.attribute("data-purpose", in: $0) }).isSuperset(of: ["multivariant-playlist", "segment"]))
        let stalls = try #require(SeriesElement(dom, "stalls")).children("rect")
        #expect(stalls.allSatisfy { Double(SeriesElement.attribute("width", in: $0) ?? "0") ?? 0 > 1 })
        #expect(dom.contains("id=\"figure-stalls\""))
        #expect(!dom.contains("id=\"truncated\""))

        // A screenshot: a PNG of the window size, far busier than a blank page's.
        let shot = dir.appendingPathComponent("report.png")
        try Chromium.run(["--screenshot=\(shot.path)", "--window-size=1400,1000", "--hide-scrollbars"], page: page)
        let png = try Data(contentsOf: shot)
        let size = try #require(pngSize(png), "not a PNG")
        #expect(size.width == 1400 && size.height == 1000)
        let blankPage = dir.appendingPathComponent("blank.html")
        try Data("<!DOCTYPE html><html><body></body></html>".utf8).write(to: blankPage)
        let blankShot = dir.appendingPathComponent("blank.png")
        try Chromium.run(["--screenshot=\(blankShot.path)", "--window-size=1400,1000", "--hide-scrollbars"], page: blankPage)
        let blank = try Data(contentsOf: blankShot)
        #expect(png.count > 5 * blank.count, "screenshot \(png.count) bytes vs a blank page's \(blank.count)")
        if let keep = ProcessInfo.processInfo.environment["HLSPLAY_REPORT_KEEP"] {
            try? FileManager.default.removeItem(atPath: keep + ".png")
            try? FileManager.default.copyItem(at: shot, to: URL(fileURLWithPath: keep + ".png"))
            try? FileManager.default.removeItem(atPath: keep + ".html")
            try? FileManager.default.copyItem(at: page, to: URL(fileURLWithPath: keep + ".html"))
        }
    }

    @Test func predictorOffLog_saysRiskIsNotInThisLog() throws {
        let samples = try Repo.requireSamples("short-2s")
        let run = try withOrigin(samples) { base in
            try runHlsplay([
                base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--predictor", "off", "--duration", "2"
            ])
        }
        #expect(run.status == 0)
        let html = try TimelineReport.render(sessionLog: run.rawLogLines.joined(separator: "\n"))
        #expect(SeriesElement(html, "risk")?.isMissing == true)
        #expect(SeriesElement(html, "policy")?.isMissing == true)
        #expect(SeriesElement(html, "buffer")?.points == run.events("buffer.sample").count)
        // Cut short: the same log without its summary.
        let cut = try TimelineReport.render(sessionLog: run.rawLogLines.dropLast().joined(separator: "\n"))
        #expect(cut.contains("id=\"truncated\""))
    }

    /// Screenshots of a real session's page and a simulated one's, kept as test artefacts
    /// (`$HLSPLAY_TEST_ARTEFACTS/report`, default `.build/test-artefacts/report`), each looked at as a
    /// person would: the size asked for, a drawn page (not blank), and the simulated banner's colour on the
    /// simulated page only.
    @Test func screenshots_realAndSimulatedPages_lookRight() throws {
        _ = try Chromium.path()
        let ladder = try Repo.requireSamples("ladder-2s")
        let trace = Repo.sharedData.appendingPathComponent("traces/sabre/3G_hsdpa_norway/report.2010-09-28_1407CEST.json")
        guard FileManager.default.fileExists(atPath: trace.path) else { throw TestSetupError("shared trace \(trace.path) is missing") }
        let artefacts = ReportArtefacts.directory()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-report-shots-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }

        // A real session against a shaped origin, and a simulated one on a real trace.
        let realLog = dir.appendingPathComponent("real.jsonl")
        let originLog = dir.appendingPathComponent("origin.jsonl")
        var config = OriginConfiguration()
        config.rateBitsPerSecond = 3_000_000
        config.requestLogURL = originLog
        let server = OriginServer(root: ladder, configuration: config)
        try server.start(port: 0)
        let real = try runHlsplay([
            server.baseURL.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--duration", "6", "--log",
            realLog.path
        ])
        server.stop()
        #expect(real.status == 0, "stderr: \(real.stderr)")
        let simLog = dir.appendingPathComponent("simulated.jsonl")
        let sim = try runHlsplay(["simulate", ladder.path, "--trace", trace.path, "--duration", "30", "--json", "--log", simLog.path], har: false)
        #expect(sim.status == 0, "stderr: \(sim.stderr)")

        var shots: [String: [UInt8]] = [:]
        for (name, log, extra) in [
            ("real", realLog, ReportArtefacts.realExtra(originLog)), ("simulated", simLog, ReportArtefacts.simulatedExtra(trace))
        ] {
            let page = artefacts.appendingPathComponent("\(name).html")
            let report = try runProcess(Repo.hlsplay, ["report", log.path, "--html", page.path] + extra, timeoutSeconds: 60, label: "hlsplay report")
            #expect(report.status == 0, "\(name): \(report.stderr)")
            let html = try String(contentsOf: page, encoding: .utf8)
            #expect(html.contains("id=\"simulated\"") == (name == "simulated"), "\(name): the simulated banner")
            let link = try #require(SeriesElement(html, "link"), "\(name): the link rate drawn")
            #expect((link.points ?? 0) >= 1, "\(name)")
            let shot = artefacts.appendingPathComponent("\(name).png")
            try? FileManager.default.removeItem(at: shot)
            try Chromium.run(["--screenshot=\(shot.path)", "--window-size=1400,1300", "--hide-scrollbars"], page: page)
            let size = try #require(pngSize(try Data(contentsOf: shot)), "\(name): not a PNG")
            #expect(size.width == 1400 && size.height == 1300, "\(name): \(size)")
            let rgb = try rgbPixels(shot, dir: dir)
            #expect(rgb.count == 1400 * 1300 * 3)
            shots[name] = rgb
        }
        for (name, rgb) in shots.sorted(by: { $0.key < $1.key }) {
            var nonWhite = 0
            var levels = Set<UInt8>()
            var purple = 0
            for i in stride(from: 0, to: rgb.count - 2, by: 3) {
                let r = rgb[i], g = rgb[i + 1], b = rgb[i + 2]
                if r < 240 || g < 240 || b < 240 { nonWhite += 1 }
                levels.insert(g)
                // The banner's #5b2a86, give or take antialiasing.
                if abs(Int(r) - 0x5b) < 12 && abs(Int(g) - 0x2a) < 12 && abs(Int(b) - 0x86) < 12 { purple += 1 }
            }
            let pixels = rgb.count / 3
            #expect(nonWhite > pixels / 20, "\(name): \(nonWhite) of \(pixels) pixels drawn: a blank page?")
            #expect(levels.count > 40, "\(name): \(levels.count) grey levels: not a drawn page")
            if name == "simulated" {
                #expect(purple > 20_000, "the simulated banner is prominent: \(purple) pixels")
            } else {
                #expect(purple < 200, "a real session shows no simulated banner: \(purple) pixels")
            }
        }
        // Zoom is CSS: the same page with 2× checked draws the timeline twice as wide (a different picture).
        let page = artefacts.appendingPathComponent("simulated.html")
        let zoomed = artefacts.appendingPathComponent("simulated-zoom2.html")
        let html = try String(contentsOf: page, encoding: .utf8)
        let checked2 = html.replacingOccurrences(of: " value=\"1\" checked>", with: " value=\"1\">")
            .replacingOccurrences(of: "id=\"zoom-2\" value=\"2\">", with: "id=\"zoom-2\" value=\"2\" checked>")
        #expect(checked2 != html)
        try Data(checked2.utf8).write(to: zoomed)
        let zoomShot = artefacts.appendingPathComponent("simulated-zoom2.png")
        try? FileManager.default.removeItem(at: zoomShot)
        try Chromium.run(["--screenshot=\(zoomShot.path)", "--window-size=1400,1300", "--hide-scrollbars"], page: zoomed)
        let zoomRGB = try rgbPixels(zoomShot, dir: dir)
        let plain = try #require(shots["simulated"])
        #expect(zoomRGB.count == plain.count)
        let differing = zip(zoomRGB, plain).filter { $0 != $1 }.count
        #expect(differing > plain.count / 10, "2× zoom changed \(differing) of \(plain.count) bytes")
    }

    /// The PNG's pixels as RGB bytes (decoded by the ffmpeg CLI).
    func rgbPixels(_ png: URL, dir: URL) throws -> [UInt8] {
        let raw = dir.appendingPathComponent(png.deletingPathExtension().lastPathComponent + ".rgb")
        let result = try runProcess(
            URL(fileURLWithPath: "/usr/bin/ffmpeg"), ["-v", "error", "-y", "-i", png.path, "-f", "rawvideo", "-pix_fmt", "rgb24", raw.path],
            timeoutSeconds: 60, label: "ffmpeg")
        guard result.status == 0 else { throw TestSetupError("ffmpeg could not decode \(png.path): \(result.stderr)") }
        return [UInt8](try Data(contentsOf: raw))
    }
}

/// Where the report screenshots are kept after the test (not deleted: they are for a person to look at).
enum ReportArtefacts {
    static func directory() -> URL {
        let base =
            ProcessInfo.processInfo.environment["HLSPLAY_TEST_ARTEFACTS"].map { URL(fileURLWithPath: $0) }
            ?? Repo.root.appendingPathComponent(".build/test-artefacts")
        let dir = base.appendingPathComponent("report")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// Extra `hlsplay report` words for the real page and the simulated one (the link overlays, once they exist).
    static func realExtra(_ originLog: URL) -> [String] { ["--origin-log", originLog.path] }
    static func simulatedExtra(_ trace: URL) -> [String] { ["--link", trace.path] }
}
