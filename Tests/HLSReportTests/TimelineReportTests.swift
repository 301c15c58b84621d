import Foundation
import HLSReport
import Testing
import TestSupport

/// A hand-written log over 10 s: known series sizes, two stalls (one still open), hostile text.
enum HandLog {
    static let hostileURL = "http://example.test/<script>alert('x')</script>?a=\"b\"&c=1"
    static let hostileMessage = "<img src=x onerror=alert(1)> & \"quoted\""

    static func json(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static var header: String {
        json(["type": "header", "schema": "hlsplay.session-log", "schemaVersion": 1, "url": hostileURL, "hlsplayVersion": "0.1.0"])
    }

    static var events: [String] {
        [
            json(["t": 0.2, "type": "cap.change", "capBps": 1_000_000, "reason": "cold-probe"]),
            json(["t": 0.8, "type": "request.end", "requestID": 1, "purpose": "segment", "ok": true, "throughputBps": 5_000_000]),
            json(["t": 0.9, "type": "request.end", "requestID": 2, "purpose": "media-playlist", "ok": false, "errorKind": "http"]),
            json(["t": 1.0, "type": "buffer.sample", "phase": "startingUp", "bufferSeconds": 0, "estimateBps": 4_000_000]),
            json(["t": 1.0, "type": "segment.buffered", "variantIndex": 0, "bandwidthBps": 1_000_000, "startSeconds": 0, "durationSeconds": 2]),
            json(["t": 1.5, "type": "frame.first", "timeToFirstFrameSeconds": 1.5, "variantIndex": 0]),
            json(["t": 1.5, "type": "cap.change", "previousCapBps": 1_000_000, "reason": "released-on-first-frame"]),
            json(["t": 2.0, "type": "buffer.sample", "phase": "playing", "bufferSeconds": 2, "estimateBps": 4_500_000]),
            json(["t": 2.0, "type": "risk.sample", "risk": 0.2, "policy": "lowLatency", "predictor": "threshold"]),
            json(["t": 2.9, "type": "request.end", "requestID": 3, "purpose": "segment", "ok": true, "throughputBps": 4_000_000]),
            json(["t": 3.0, "type": "buffer.sample", "phase": "playing", "bufferSeconds": 3]),
            json(["t": 3.0, "type": "segment.buffered", "variantIndex": 1, "bandwidthBps": 2_000_000, "startSeconds": 2, "durationSeconds": 2]),
            json(["t": 3.0, "type": "risk.sample", "risk": 0.9, "policy": "lowLatency", "predictor": "threshold"]),
            json(["t": 3.5, "type": "policy.change", "atSeconds": 3.5, "from": "lowLatency", "to": "defensiveDownshift", "risk": 0.9]),
            json(["t": 4.0, "type": "buffer.sample", "phase": "playing", "bufferSeconds": 1, "estimateBps": 3_000_000]),
            json(["t": 4.0, "type": "risk.sample", "risk": 0.7, "policy": "defensiveDownshift", "predictor": "threshold"]),
            json(["t": 5.0, "type": "stall.start", "atSeconds": 4.9, "positionSeconds": 4]),
            json(["t": 6.0, "type": "request.byteProgress", "requestID": 4, "assessment": ["verdict": "wedged"]]),
            json(["t": 7.5, "type": "stall.end", "atSeconds": 7.4, "stallSeconds": 2.5, "positionSeconds": 4]),
            json(["t": 8.0, "type": "error", "fatal": false, "category": "network", "message": hostileMessage, "url": hostileURL]),
            json(["t": 9.0, "type": "something.new", "whatever": 1]),
            json(["t": 9.5, "type": "stall.start", "atSeconds": 9.5, "positionSeconds": 6]),
            json(["t": 10.0, "type": "buffer.sample", "phase": "stalled", "bufferSeconds": 0, "estimateBps": 2_000_000])
        ]
    }

    static var summary: String {
        json([
            "type": "summary", "url": hostileURL, "exitReason": "durationReached", "timeToFirstFrameSeconds": 1.5,
            "stallCount": 2, "stallSeconds": 3.0, "averageBitrateBps": 1_500_000,
            "timeToPlaybackStartSeconds": 2.5, "startupWaitSeconds": 1.0,
            "qoe": ["playedChunks": 4, "rebufferRatio": 0.25, "linearQoE": -3.5, "linearQoEPerChunk": -0.875]
        ])
    }

    static var whole: String { ([header] + events + [summary]).joined(separator: "\n") + "\n" }
}

@Suite struct TimelineReportTests {
    @Test func timeScale_niceEnd_andStep() {
        let ten = TimelineReport.TimeScale(lastSeconds: 10)
        #expect(ten.endSeconds == 10 && ten.stepSeconds == 1)
        let odd = TimelineReport.TimeScale(lastSeconds: 23.3)
        #expect(odd.endSeconds == 25 && odd.stepSeconds == 5)
        #expect(TimelineReport.TimeScale(lastSeconds: 0).endSeconds > 0)
        #expect(ten.x(0) == TimelineReport.plotLeft)
        #expect(ten.x(10) == TimelineReport.plotLeft + TimelineReport.plotWidth)
        #expect(ten.x(99) == TimelineReport.plotLeft + TimelineReport.plotWidth, "clamped")
    }

    @Test func everySeries_drawnWithTheLogsNumberOfPoints() throws {
        let html = try TimelineReport.render(sessionLog: HandLog.whole)
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        let buffer = try #require(SeriesElement(html, "buffer"))
        #expect(buffer.points == 5 && buffer.pathPairs == 5)
        let estimate = try #require(SeriesElement(html, "estimate"))
        #expect(estimate.points == 4 && estimate.pathPairs == 4, "the sample without estimateBps is not invented")
        let bitrate = try #require(SeriesElement(html, "bitrate"))
        #expect(bitrate.points == 2)
        #expect((bitrate.attribute("d") ?? "").filter { $0 == "V" }.count == 1, "one step for one rung change")
        let throughput = try #require(SeriesElement(html, "throughput"))
        #expect(throughput.points == 2 && throughput.children("circle").count == 2, "the failed request has no throughput dot")
        let risk = try #require(SeriesElement(html, "risk"))
        #expect(risk.points == 3 && risk.pathPairs == 3)
        let policy = try #require(SeriesElement(html, "policy"))
        let bands = policy.children("rect")
        #expect(bands.count == 2)
        #expect(bands.map { SeriesElement.attribute("data-policy", in: $0) } == ["lowLatency", "defensiveDownshift"])
        // lowLatency from the first risk sample (t=2) to the change at 3.5 s.
        let scale = TimelineReport.TimeScale(lastSeconds: 10)
        #expect(SeriesElement.attribute("x", in: bands[0]) == TimelineReport.coordinate(scale.x(2)))
        #expect(SeriesElement.attribute("width", in: bands[0]) == TimelineReport.coordinate(scale.x(3.5) - scale.x(2)))
        #expect(SeriesElement(html, "cap")?.points == 2)
        #expect(SeriesElement(html, "first-frame")?.points == 1)
        #expect(SeriesElement(html, "cap-changes")?.children("path").count == 2)
        #expect(SeriesElement(html, "byte-progress")?.children("path").count == 1)
        #expect(SeriesElement(html, "errors")?.children("path").count == 1)
        for name in TimelineReport.seriesNames {
            let element = try #require(SeriesElement(html, name), "series \(name)")
            #expect(!element.isMissing, "\(name) is in this log")
            #expect(html.contains("id=\"series-\(name)\""))
            #expect(html.contains("data-legend=\"\(name)\""))
        }
        #expect(html.contains("something.new ×1"), "unknown event types are listed, not dropped silently")
        #expect(!html.contains("<script"), "no scripts at all")
        #expect(!html.contains("http-equiv") && !html.contains(" src=\"http") && !html.contains("href=\"http"), "nothing fetched")
    }

    @Test func stalls_rectanglesAtTheStallInstants_openOneRunsToTheEnd() throws {
        let html = try TimelineReport.render(sessionLog: HandLog.whole)
        let stalls = try #require(SeriesElement(html, "stalls"))
        let rects = stalls.children("rect")
        #expect(rects.count == 2 && stalls.points == 2)
        // 10 s onto 1080 px from x = 80: 108 px a second.
        #expect(SeriesElement.attribute("x", in: rects[0]) == "609.2") // 80 + 4.9 × 108
        #expect(SeriesElement.attribute("width", in: rects[0]) == "270.0") // (7.4 − 4.9) × 108
        #expect(SeriesElement.attribute("data-open", in: rects[0]) == nil)
        #expect(SeriesElement.attribute("x", in: rects[1]) == "1106.0") // 80 + 9.5 × 108
        #expect(SeriesElement.attribute("width", in: rects[1]) == "54.0") // to the end of the log, 10 s
        #expect(SeriesElement.attribute("data-open", in: rects[1]) == "true")
    }

    @Test func textFromTheLog_isEscaped() throws {
        let html = try TimelineReport.render(sessionLog: HandLog.whole, title: "A <b>title</b> & more")
        #expect(!html.contains("<script>alert"))
        #expect(!html.contains("<img src=x"))
        #expect(!html.contains("<b>title</b>"))
        #expect(html.contains("http://example.test/&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;?a=&quot;b&quot;&amp;c=1"))
        #expect(html.contains("&lt;img src=x onerror=alert(1)&gt; &amp; &quot;quoted&quot;"))
        #expect(html.contains("<title>A &lt;b&gt;title&lt;/b&gt; &amp; more</title>"))
        #expect(TimelineReport.escapeHTML("a\u{1}b") == "a\u{FFFD}b")
    }

    @Test func summaryFigures_inTheHeader() throws {
        let html = try TimelineReport.render(sessionLog: HandLog.whole)
        #expect(html.contains("id=\"figure-ttff\"><b>1.50 s</b>"))
        #expect(html.contains("id=\"figure-stalls\"><b>2</b>"))
        #expect(html.contains("id=\"figure-stall-seconds\"><b>3.00 s</b>"))
        #expect(html.contains("id=\"figure-average-bitrate\"><b>1.5 Mb/s</b>"))
        #expect(html.contains("id=\"figure-exit-reason\"><b>durationReached</b>"))
        #expect(html.contains("id=\"figure-playback-start\"><b>2.50 s</b><span>playback start, 1.00 s after the first frame</span>"))
        #expect(html.contains("id=\"figure-rebuffer-ratio\"><b>25.0 %</b>"))
        #expect(html.contains("id=\"figure-linear-qoe\"><b>-3.50</b><span>linear QoE, -0.88 per chunk</span>"))
        #expect(!html.contains("id=\"truncated\""))
    }

    @Test func truncatedLog_noSummaryAndAPartialLine_saysSo() throws {
        let cut = ([HandLog.header] + HandLog.events).joined(separator: "\n") + "\n{\"t\": 10.2, \"type\": \"buffer.sam"
        let html = try TimelineReport.render(sessionLog: cut)
        #expect(html.contains("id=\"truncated\""))
        #expect(html.contains("no summary line"))
        #expect(html.contains("last line of the log was incomplete"))
        #expect(SeriesElement(html, "buffer")?.points == 5)
        // Figures are counted from the events instead: two stalls, 2.5 s closed + 0.5 s open.
        #expect(html.contains("id=\"figure-stalls\"><b>2</b>"))
        #expect(html.contains("id=\"figure-stall-seconds\"><b>3.00 s</b>"))
        #expect(html.contains("id=\"figure-exit-reason\"><b>cut short</b>"))
        // Only the header: still a page, every series "not in this log".
        let bare = try TimelineReport.render(sessionLog: HandLog.header + "\n")
        for name in ["buffer", "bitrate", "estimate", "throughput", "risk", "policy"] {
            #expect(SeriesElement(bare, name)?.isMissing == true, "\(name)")
        }
    }

    @Test func missingSeries_shownAsNotInThisLog_neverFaked() throws {
        let noPredictor = HandLog.events.filter { !$0.contains("risk.sample") && !$0.contains("policy.change") }
        let html = try TimelineReport.render(sessionLog: ([HandLog.header] + noPredictor + [HandLog.summary]).joined(separator: "\n"))
        let risk = try #require(SeriesElement(html, "risk"))
        #expect(risk.isMissing && risk.points == 0)
        #expect(SeriesElement(html, "policy")?.isMissing == true)
        #expect(html.contains("stall risk (predictor off?): not in this log"))
        #expect(html.contains("data-legend=\"risk\" class=\"missing\""))
        #expect(SeriesElement(html, "buffer")?.isMissing == false)
    }

    @Test func riskLine_brokenAcrossAGapInSampling() throws {
        var lines = [HandLog.header]
        for i in 0..<4 { lines.append(HandLog.json(["t": 1 + Double(i) * 0.5, "type": "risk.sample", "risk": 0.5, "policy": "preload"])) }
        for i in 0..<3 { lines.append(HandLog.json(["t": 8 + Double(i) * 0.5, "type": "risk.sample", "risk": 0.1, "policy": "preload"])) }
        let html = try TimelineReport.render(sessionLog: lines.joined(separator: "\n"))
        let d = try #require(SeriesElement(html, "risk")?.attribute("d"))
        #expect(d.filter { $0 == "M" }.count == 2, "no straight line drawn across 6.5 s without samples: \(d)")
        #expect(SeriesElement(html, "risk")?.pathPairs == 7)
    }

    @Test func invalidInput_throwsAOneLineReason() {
        #expect(throws: TimelineReport.InvalidLog.self) { try TimelineReport.render(sessionLog: "") }
        #expect(throws: TimelineReport.InvalidLog.self) { try TimelineReport.render(sessionLog: "not json\n") }
        #expect(throws: TimelineReport.InvalidLog.self) { try TimelineReport.render(sessionLog: "{\"type\":\"buffer.sample\",\"t\":1}\n") }
        #expect(throws: TimelineReport.InvalidLog.self) {
            try TimelineReport.render(sessionLog: "{\"type\":\"header\",\"schema\":\"other\"}\n")
        }
        // Garbage in the middle is not a crash's partial last line.
        do {
            _ = try TimelineReport.render(sessionLog: HandLog.header + "\ngarbage\n" + HandLog.events[0] + "\n")
            Issue.record("garbage mid-log accepted")
        } catch {
            #expect("\(error)" == "line 2 is not a JSON object")
        }
    }

    /// A log with a waterfall: a playlist, an init section, two segments side by side (one cut short as
    /// wedged), a key that failed, a retry of the segment, and one request still open at the end.
    static func waterfallLog() -> String {
        let j = HandLog.json
        return [
            HandLog.header,
            j(["t": 0.0, "type": "request.start", "requestID": 1, "purpose": "multivariant-playlist", "url": "http://x/m.m3u8", "attempt": 1]),
            j([
                "t": 0.2, "type": "request.end", "requestID": 1, "purpose": "multivariant-playlist", "ok": true, "status": 200, "bytes": 900,
                "timings": ["firstByteSeconds": 0.1, "totalSeconds": 0.2]
            ]),
            j(["t": 0.3, "type": "request.start", "requestID": 2, "purpose": "init-section", "variantIndex": 1, "attempt": 1]),
            j(["t": 0.4, "type": "request.end", "requestID": 2, "purpose": "init-section", "ok": true, "timings": ["firstByteSeconds": 0.05]]),
            j(["t": 0.5, "type": "request.start", "requestID": 3, "purpose": "segment", "variantIndex": 2, "mediaSequence": 0, "attempt": 1]),
            j([
                "t": 0.6, "type": "request.start", "requestID": 4, "purpose": "segment", "variantIndex": 0, "mediaSequence": 0, "track": "audio",
                "attempt": 1
            ]),
            j(["t": 1.0, "type": "request.end", "requestID": 4, "purpose": "segment", "ok": true, "timings": ["firstByteSeconds": 0.1]]),
            j([
                "t": 2.5, "type": "request.end", "requestID": 3, "purpose": "segment", "ok": false, "aborted": true, "errorKind": "cancelled",
                "cancelReason": "wedged", "status": 200, "bytes": 1000, "timings": ["firstByteSeconds": 0.3]
            ]),
            j(["t": 2.5, "type": "request.start", "requestID": 3, "purpose": "segment", "variantIndex": 0, "mediaSequence": 0, "attempt": 2]),
            j(["t": 3.5, "type": "request.end", "requestID": 3, "purpose": "segment", "ok": true, "timings": ["firstByteSeconds": 0.2]]),
            j(["t": 3.6, "type": "request.start", "requestID": 5, "purpose": "key"]),
            j(["t": 3.7, "type": "request.end", "requestID": 5, "purpose": "key", "ok": false, "errorKind": "httpStatus", "status": 404]),
            j(["t": 4.0, "type": "request.start", "requestID": 6, "purpose": "media-playlist", "variantIndex": 0]),
            j(["t": 5.0, "type": "buffer.sample", "phase": "playing", "bufferSeconds": 1])
        ].joined(separator: "\n") + "\n"
    }

    @Test func waterfall_oneBarPerRequestAttempt_colouredByPurpose_failuresMarked() throws {
        let html = try TimelineReport.render(sessionLog: Self.waterfallLog())
        let lane = try #require(SeriesElement(html, "requests"))
        #expect(!lane.isMissing)
        #expect(lane.points == 7, "7 attempts: request 3 twice")
        let bars = lane.children("rect").filter { SeriesElement.attribute("class", in: $0) == "request" }
        #expect(bars.count == 7)
        #expect(
            bars.map { SeriesElement.attribute("data-purpose", in: $0) ?? "" } == [
                "multivariant-playlist", "init-section", "segment", "segment", "segment", "key", "media-playlist"
            ])
        // The wedged first attempt of request 3 (its end comes after request 4's): aborted, with its reason.
        let wedged = bars[2]
        #expect(SeriesElement.attribute("data-request-id", in: wedged) == "3")
        #expect(SeriesElement.attribute("data-variant", in: wedged) == "2")
        #expect(SeriesElement.attribute("data-aborted", in: wedged) == "true")
        #expect(SeriesElement.attribute("data-cancel-reason", in: wedged) == "wedged")
        #expect(SeriesElement.attribute("data-first-byte", in: wedged) == "0.8")
        #expect(SeriesElement.attribute("data-aborted", in: bars[4]) == nil, "the retry succeeded")
        #expect(SeriesElement.attribute("data-failed", in: bars[5]) == "true", "the key's 404")
        #expect(SeriesElement.attribute("data-open", in: bars[6]) == "true", "no request.end: open to the end of the log")
        #expect(html.contains("cancelled: wedged"), "the hover readout names the reason")
        // Concurrent requests 3 and 4 sit on separate rows.
        #expect(SeriesElement.attribute("data-rows", in: lane.tag).flatMap(Int.init) ?? 0 >= 2)
        // A bar spans request.start → request.end on the shared axis: request 1 from 0 to 0.2 s of 5 s.
        let scale = TimelineReport.TimeScale(lastSeconds: 5)
        let rects = lane.children("rect")
        #expect(SeriesElement.attribute("x", in: rects[0]) == TimelineReport.coordinate(scale.x(0)))
        #expect(SeriesElement.attribute("width", in: rects[0]) == TimelineReport.coordinate(scale.x(0.2) - scale.x(0)))
        #expect(SeriesElement.attribute("class", in: rects[1]) == "request-body")
        #expect(SeriesElement.attribute("x", in: rects[1]) == TimelineReport.coordinate(scale.x(0.1)), "solid from the first byte")
        for p in ["playlist", "segment", "init-section", "key"] { #expect(html.contains("data-legend=\"purpose-\(p)\""), "\(p)") }
        // No requests: said so, not invented.
        let none = try TimelineReport.render(sessionLog: HandLog.header + "\n")
        #expect(SeriesElement(none, "requests")?.isMissing == true)
    }

    @Test func simulatedLog_saysSoInTheTitleABannerAndTheTimeline_aRealOneNever() throws {
        let simulatedHeader = HandLog.json([
            "type": "header", "schema": "hlsplay.session-log", "schemaVersion": 1, "url": "file:///ladder/master.m3u8",
            "simulation": ["virtualTime": true, "ladder": "ladder-2s", "link": "trace=norway.json mean=1500000bps rtt=trace latency"]
        ])
        let simulated = try TimelineReport.render(sessionLog: ([simulatedHeader] + HandLog.events + [HandLog.summary]).joined(separator: "\n"))
        #expect(simulated.contains("<title>Simulated: hlsplay session</title>"))
        #expect(simulated.contains("<h1>Simulated: hlsplay session</h1>"))
        #expect(simulated.contains("id=\"simulated\""))
        #expect(simulated.contains("link <b>trace=norway.json mean=1500000bps rtt=trace latency</b>, ladder <b>ladder-2s</b>"))
        #expect(simulated.contains("class=\"simulated-mark\""))
        let real = try TimelineReport.render(sessionLog: HandLog.whole, title: "a real run")
        #expect(!real.contains("id=\"simulated\"") && !real.contains("simulated-mark"))
        #expect(!real.lowercased().contains("simulated"), "a real session's page never says simulated")
        #expect(real.contains("<title>a real run</title>"))
    }

    @Test func severalSessions_oneSectionEach_onTheSameScales() throws {
        // The hand log runs to 10 s, the waterfall log to 5 s: both sections on the 10 s axis.
        let html = try TimelineReport.render(sessions: [
            TimelineReport.Session(name: "a.jsonl", log: HandLog.whole),
            TimelineReport.Session(name: "b.jsonl", log: Self.waterfallLog())
        ])
        let sections = html.components(separatedBy: "<section ").dropFirst().map { "<section " + $0 }
        #expect(sections.count == 2)
        #expect(sections.map { SeriesElement.attribute("data-scale-end", in: $0) } == ["10.0", "10.0"])
        #expect(sections.map { SeriesElement.attribute("data-scale-step", in: $0) } == ["1.0", "1.0"])
        #expect(sections[0].contains("<h2>1. a.jsonl</h2>") && sections[1].contains("<h2>2. b.jsonl</h2>"))
        // The same instant is at the same x in both: the buffer sample at 5 s of the 5 s log.
        let scale = TimelineReport.TimeScale(lastSeconds: 10)
        let d = try #require(SeriesElement(sections[1], "buffer")?.attribute("d"))
        // … and on the same buffer scale: b's 1 s sample at a third of a's 3 s scale (alone it would be at the top).
        #expect(d == "M\(TimelineReport.coordinate(scale.x(5))),310.0", "\(d)")
        // Each section: its own series, counted from its own log; ids stay unique on the page.
        #expect(SeriesElement(sections[0], "buffer")?.points == 5)
        #expect(SeriesElement(sections[1], "buffer")?.points == 1)
        #expect(SeriesElement(sections[1], "requests")?.points == 7)
        #expect(sections[0].contains("id=\"s1-series-buffer\"") && sections[1].contains("id=\"s2-series-buffer\""))
        let ids = html.components(separatedBy: " id=\"").dropFirst().map { $0.prefix { $0 != "\"" } }
        #expect(Set(ids).count == ids.count, "duplicate ids")
        // Key figures in each heading: playback start, stalls, average bitrate.
        #expect(sections[0].contains("playback start <b>2.50 s</b>"))
        #expect(sections[0].contains("stalls <b>2</b> (3.00 s)"))
        #expect(sections[0].contains("average bitrate <b>1.5 Mb/s</b>"))
        #expect(sections[1].contains("cut short (no summary)"))
        // One invalid log: an error naming it.
        do {
            _ = try TimelineReport.render(sessions: [
                TimelineReport.Session(name: "a.jsonl", log: HandLog.whole), TimelineReport.Session(name: "bad.jsonl", log: "nonsense\n")
            ])
            Issue.record("an invalid log accepted")
        } catch let error as TimelineReport.InvalidLog {
            #expect(error.sessionName == "bad.jsonl")
        }
    }

    @Test func linkRate_drawnOnTheBitrateLane_loopedOrAlignedAtTheFirstRequest() throws {
        typealias Step = TimelineReport.LinkRate.Step
        // A 4 s trace looped over the 10 s hand log: 2 Mb/s for 3 s, then 500 kb/s for 1 s.
        let trace = TimelineReport.LinkRate(
            label: "t.json", steps: [Step(atSeconds: 0, bitsPerSecond: 2_000_000), Step(atSeconds: 3, bitsPerSecond: 500_000)],
            loopSeconds: 4)
        let looped = trace.sessionSteps(offsetSeconds: 0, endSeconds: 10)
        #expect(looped.map(\.atSeconds) == [0, 3, 4, 7, 8])
        #expect(looped.map(\.bitsPerSecond) == [2_000_000, 500_000, 2_000_000, 500_000, 2_000_000])
        let html = try TimelineReport.render(sessions: [TimelineReport.Session(name: "a", log: HandLog.whole, linkRate: trace)])
        let link = try #require(SeriesElement(html, "link"))
        #expect(link.points == 5)
        #expect((link.attribute("d") ?? "").filter { $0 == "V" }.count == 4, "a step per change")
        #expect(html.contains("data-legend=\"link\"><i") && html.contains("link rate (t.json)"))
        // No link given: no line, and the legend says it was not given.
        let without = try TimelineReport.render(sessionLog: HandLog.whole)
        #expect(SeriesElement(without, "link") == nil)
        #expect(without.contains("link rate: not given (--link TRACE or --origin-log FILE)"))
        // An origin log's clock: its first request (at 100 s) is the session's first request.start (at 0 s).
        let origin = TimelineReport.LinkRate(
            label: "origin", steps: [Step(atSeconds: 100, bitsPerSecond: 3_000_000), Step(atSeconds: 102.5, bitsPerSecond: 0)],
            clock: .firstRequest(atSeconds: 100))
        let aligned = try TimelineReport.render(sessions: [TimelineReport.Session(name: "w", log: Self.waterfallLog(), linkRate: origin)])
        let d = try #require(SeriesElement(aligned, "link")?.attribute("d"))
        let scale = TimelineReport.TimeScale(lastSeconds: 5)
        #expect(d.hasPrefix("M\(TimelineReport.coordinate(scale.x(0))) "), "the first step holds from the start: \(d)")
        #expect(d.contains("H\(TimelineReport.coordinate(scale.x(2.5)))V"), "the collapse at 102.5 s of the origin is 2.5 s of the session: \(d)")
    }

    @Test func hoverReadouts_giveEveryLanesValueAtThatInstant_andZoomIsCSS() throws {
        let html = try TimelineReport.render(sessionLog: HandLog.whole)
        // 270 columns of 4 units across the 10 s plot: 1/27 s each.
        #expect(html.components(separatedBy: "<rect class=\"readout\"").count - 1 == 270)
        // The column around 5.5 s: in the first stall, the last values before it.
        let marker = "data-t=\"5.5\""
        let range = try #require(html.range(of: marker) ?? html.range(of: "data-t=\"5.6\""))
        let title = html[range.upperBound...].components(separatedBy: "</title>")[0]
        #expect(title.contains("STALLED (4.90–7.40 s)"), "\(title)")
        #expect(title.contains("buffer 1.00 s"), "the 4 s sample: \(title)")
        #expect(title.contains("variant bitrate 2 Mb/s"), "\(title)")
        #expect(title.contains("estimate 3 Mb/s"), "\(title)")
        #expect(title.contains("risk 0.70") && title.contains("policy defensiveDownshift"), "\(title)")
        #expect(title.contains("cap none"), "released at 1.5 s: \(title)")
        // Zoom: radio buttons and CSS, no script.
        for level in TimelineReport.zoomLevels { #expect(html.contains("id=\"zoom-\(level)\"")) }
        #expect(html.contains("body:has(#zoom-4:checked) .plot svg"))
        #expect(!html.contains("<script"))
    }

    /// `hlsplay report` reads a log file the user hands in: a summary number of 1e300 trapped.
    @Test func timelineReport_hugeSummaryCounts_render() throws {
        let log =
            [
                #"{"type":"header","schema":"hlsplay.session-log","schemaVersion":1,"url":"http://x/","hlsplayVersion":"0.1.0"}"#,
                #"{"type":"summary","t":1,"stallCount":1e300,"variantSwitches":-1e300,"playedSeconds":1e300}"#
            ].joined(separator: "\n") + "\n"
        let html = try TimelineReport.render(sessionLog: log)
        #expect(html.contains("9223372036854775807"))
    }
}
