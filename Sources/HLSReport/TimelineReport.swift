import Foundation
import HLSCore

/// Renders an `hlsplay.session-log` (JSON Lines, see docs/session-log.md) as
/// one self-contained HTML page: inline CSS and a hand-made inline SVG, no
/// scripts, nothing fetched. Pure: text in, text out — no I/O, no clock.
///
/// Over session time (x, seconds) the page stacks five lanes sharing one
/// time axis:
/// - events: first frame, cap changes, wedge/over-selection marks, errors;
/// - requests: a waterfall, one bar per request attempt from `request.start`
///   to `request.end`, lighter until its first byte
///   (`timings.firstByteSeconds`), coloured by `purpose`, outlined in red
///   when it failed or was cut short (`aborted`, `cancelReason`), labelled
///   with the variant of a segment;
/// - buffer: the forward buffer (`buffer.sample.bufferSeconds`);
/// - bitrate (log scale): the BANDWIDTH of each buffered segment, stepped at
///   the time it was buffered (`segment.buffered`), the throughput estimate
///   (`buffer.sample.estimateBps`), per-request throughput dots
///   (`request.end.throughputBps`) and the startup/recovery cap (`cap.change`);
/// - risk: `risk.sample.risk` (0–1) over a strip coloured by the policy in
///   force (`risk.sample.policy`, `policy.change`).
/// Stalls (`stall.start.atSeconds` … `stall.end.atSeconds`, or to the end of
/// the log when still open) are shaded across every lane.
///
/// A log written by `hlsplay simulate` (its header has a `simulation`
/// object) says so in the page title, in a banner naming the link (trace)
/// and the ladder, and across the timeline; a real session's page never does.
///
/// Hover readouts are SVG `<title>` elements (the browser's own tooltips, no
/// script): each request bar, mark, throughput dot and policy band has its
/// own, and under them the plot is cut into narrow time columns whose readout
/// gives, at that instant, the buffer, variant bitrate, estimate, link rate,
/// risk and policy, requests in flight and any stall. Zoom is CSS only: radio
/// buttons above the timeline widen it to 2× or 4× inside a scrolling box
/// (`:has()`), so the page still runs no script and fetches nothing.
///
/// Every series element carries `data-series` (and `id="series-NAME"`) and
/// `data-points` (how many log values it draws). A series the log does not
/// have is drawn as the text "not in this log" with `data-missing="true"`,
/// never invented.
public enum TimelineReport {
    /// The log could not be read as a session log.
    public struct InvalidLog: Error, CustomStringConvertible, Equatable, Sendable {
        public var description: String
        /// The `Session.name` of the log that is not valid (on a page of several sessions).
        public var sessionName: String?
        public init(_ description: String, sessionName: String? = nil) {
            self.description = description
            self.sessionName = sessionName
        }
    }

    /// One session log for `render(sessions:)`: `name` (e.g. the file name) heads its section;
    /// `linkRate`, when known, is drawn on its bitrate lane.
    public struct Session: Sendable {
        public var name: String
        public var log: String
        public var linkRate: LinkRate?
        public init(name: String, log: String, linkRate: LinkRate? = nil) {
            self.name = name
            self.log = log
            self.linkRate = linkRate
        }
    }

    /// The link's real rate over time, from a throughput trace or an origin's request log: a step
    /// function, each step's rate held until the next one (the last to the end of the session, or of
    /// the loop). Drawn on the bitrate lane beside what the player measured and chose.
    public struct LinkRate: Sendable, Equatable {
        public struct Step: Sendable, Equatable {
            public var atSeconds: Double
            public var bitsPerSecond: Double
            public init(atSeconds: Double, bitsPerSecond: Double) {
                self.atSeconds = atSeconds
                self.bitsPerSecond = bitsPerSecond
            }
        }

        /// How the steps' clock maps onto session time.
        public enum Clock: Sendable, Equatable {
            /// Step times are session seconds (a trace replayed from the session's start, as
            /// `hlsplay simulate` and an origin started just before the session do).
            case sessionStart
            /// The steps' clock reads `atSeconds` when the session's first request arrives (an
            /// origin's request log: seconds since the server started; its first request line
            /// is the session's first `request.start`).
            case firstRequest(atSeconds: Double)
        }

        /// Names the source in the legend and readouts (e.g. the trace's file name).
        public var label: String
        public var steps: [Step]
        /// A trace loops: the steps repeat every `loopSeconds` (nil: they do not).
        public var loopSeconds: Double?
        public var clock: Clock

        public init(label: String, steps: [Step], loopSeconds: Double? = nil, clock: Clock = .sessionStart) {
            self.label = label
            self.steps = steps
            self.loopSeconds = loopSeconds
            self.clock = clock
        }

        /// The steps on session time over `[0, endSeconds]`: shifted by `offsetSeconds` (added to each
        /// step time), looped, and cut to the interval; the step in force at 0 starts at 0.
        public func sessionSteps(offsetSeconds: Double, endSeconds: Double) -> [Step] {
            let sorted = steps.filter { $0.atSeconds.isFinite && $0.bitsPerSecond.isFinite && $0.bitsPerSecond >= 0 }
                .sorted { $0.atSeconds < $1.atSeconds }
            guard !sorted.isEmpty, endSeconds.isFinite, endSeconds >= 0 else { return [] }
            var out: [Step] = []
            var inForce: Step?
            func add(_ t: Double, _ bps: Double) {
                if t <= 0 {
                    inForce = Step(atSeconds: 0, bitsPerSecond: bps)
                } else if t <= endSeconds {
                    if let f = inForce {
                        out.append(f)
                        inForce = nil
                    }
                    if out.last?.bitsPerSecond != bps { out.append(Step(atSeconds: t, bitsPerSecond: bps)) }
                }
            }
            if let loop = loopSeconds, loop > 0 {
                // The first loop that reaches session time 0, then on to the end (bounded: at most
                // 100 000 steps drawn).
                let first = sorted[0].atSeconds + offsetSeconds
                var k = ((0 - first) / loop).rounded(.down) - 1
                var drawn = 0
                while drawn < 100_000 {
                    let base = offsetSeconds + k * loop
                    if base + sorted[0].atSeconds > endSeconds { break }
                    for step in sorted { add(base + step.atSeconds, step.bitsPerSecond); drawn += 1 }
                    k += 1
                }
            } else {
                for step in sorted { add(step.atSeconds + offsetSeconds, step.bitsPerSecond) }
            }
            if let f = inForce { out.insert(f, at: 0) }
            return out
        }
    }

    /// The series names used in `data-series`, in legend order.
    public static let seriesNames = [
        "buffer", "bitrate", "estimate", "throughput", "cap", "risk", "policy", "stalls",
        "first-frame", "cap-changes", "byte-progress", "errors", "requests"
    ]

    /// The waterfall's colour for each request `purpose` (the playlists share one).
    public static let purposeColors: [(purpose: String, label: String, color: String)] = [
        ("playlist", "playlist", "#4c78a8"), ("segment", "segment", "#54a24b"), ("init-section", "init section", "#b279a2"),
        ("key", "key", "#e0a800"), ("other", "other", "#9a9a9a")
    ]

    /// The waterfall group of a request `purpose`: `playlist` for the multivariant, media and steering playlists.
    public static func purposeGroup(_ purpose: String?) -> String {
        switch purpose {
        case "multivariant-playlist", "media-playlist", "steering-manifest": return "playlist"
        case "segment", "init-section", "key": return purpose!
        default: return "other"
        }
    }

    /// SVG geometry: the plot area spans x ∈ [plotLeft, plotLeft + plotWidth].
    public static let svgWidth = 1200.0
    public static let plotLeft = 80.0
    public static let plotWidth = 1080.0
    /// The hover readout columns are this wide (SVG units): 270 across the plot.
    public static let readoutColumnWidth = 4.0
    /// The zoom levels the page offers (CSS widths of the timeline, × its natural width).
    public static let zoomLevels = [1, 2, 4]

    /// The zoom control: radio buttons; the CSS in the page's head widens every `.plot` for the one checked.
    static func zoomControl() -> String {
        var out = "<div class=\"zoom\" id=\"zoom\">zoom "
        for level in zoomLevels {
            out +=
                "<label><input type=\"radio\" name=\"zoom\" id=\"zoom-\(level)\" value=\"\(level)\"\(level == 1 ? " checked" : "")>\(level)×</label> "
        }
        return out + "<span>(wider than the window: scroll the timeline sideways; hover anywhere for the values at that time)</span></div>\n"
    }
    /// The shared time axis: `[0, endSeconds]` onto the plot width, with
    /// ticks every `stepSeconds` (1, 2 or 5 × 10ⁿ, about ten of them).
    public struct TimeScale: Equatable, Sendable {
        public let endSeconds: Double
        public let stepSeconds: Double

        /// The axis for a log whose last instant is `lastSeconds`.
        public init(lastSeconds: Double) {
            let last = lastSeconds.isFinite && lastSeconds > 0 ? lastSeconds : 1
            let step = niceStep(last / 10)
            stepSeconds = step
            endSeconds = max(step, (last / step).rounded(.up) * step)
        }

        /// The SVG x coordinate of session time `t` (clamped to the axis).
        public func x(_ t: Double) -> Double {
            plotLeft + min(max(t, 0), endSeconds) / endSeconds * plotWidth
        }
    }

    /// The page for `sessionLog` (the whole text of a `.jsonl` file).
    /// `title` replaces the default title ("hlsplay session").
    /// Throws `InvalidLog` when the text is empty or does not start with a
    /// session-log header; a log cut short (no summary, a partial last line)
    /// and unknown event types are shown as such, not rejected.
    public static func render(sessionLog: String, title: String? = nil) throws -> String {
        try render(sessions: [Session(name: "", log: sessionLog)], title: title)
    }

    /// One page for several sessions, one section each, in the order given: every section on the same
    /// time axis (the longest session's), the same bitrate scale and the same buffer scale, so the
    /// sections can be compared by eye; each headed by its name, URL (or simulated link) and key figures.
    /// One session gives the page of `render(sessionLog:)`. Throws `InvalidLog` naming the session
    /// (`sessionName`) of the first log that is not valid.
    public static func render(sessions: [Session], title: String? = nil) throws -> String {
        let logs = try sessions.map { session in
            do { return try ParsedLog(session.log) } catch var error as InvalidLog {
                error.sessionName = session.name
                throw error
            }
        }
        guard logs.count > 1 else {
            guard let log = logs.first else { throw InvalidLog("no session log given") }
            return Renderer(log: log, title: title, linkRate: sessions[0].linkRate).page()
        }
        var renderers = zip(logs, sessions).map { Renderer(log: $0, title: nil, linkRate: $1.linkRate) }
        let scale = TimeScale(lastSeconds: renderers.map(\.lastT).max() ?? 0)
        let rates = renderers.flatMap { $0.bitrateValues }
        let decades = rates.min().flatMap { lo in rates.max().map { hi in bitrateDecades(lo: lo, hi: hi) } }
        let bufferMax = renderers.compactMap { $0.buffer.map(\.v).max() }.max()
        for i in renderers.indices {
            renderers[i].scale = scale
            renderers[i].sharedBitrateDecades = decades
            renderers[i].sharedBufferMax = bufferMax
        }
        return comparisonPage(zip(sessions, renderers).map { ($0.name, $1) }, title: title, scale: scale)
    }

    /// The log10 range of the bitrate lane for rates in `lo…hi`: whole decades, at most six.
    static func bitrateDecades(lo: Double, hi: Double) -> (Double, Double) {
        var d0 = log10(max(lo, 1e-9)).rounded(.down), d1 = log10(max(hi, 1e-9)).rounded(.up)
        if d1 <= d0 { d1 = d0 + 1 }
        if d1 - d0 > 6 { d0 = d1 - 6 } // a stray tiny sample must not squash the rest
        return (d0, d1)
    }

    fileprivate static func comparisonPage(_ sections: [(name: String, renderer: Renderer)], title: String?, scale: TimeScale) -> String {
        let simulated = sections.filter { $0.renderer.simulation != nil }.count
        let pageTitle = title ?? "hlsplay: \(sections.count) sessions"
        var html = Renderer.head(title: pageTitle + (simulated > 0 ? " (\(simulated) simulated)" : ""))
        html += "<h1>\(escapeHTML(pageTitle))</h1>\n"
        html +=
            "<div class=\"compare-note\" id=\"compare-note\" data-sessions=\"\(sections.count)\">\(sections.count) sessions, one section each, "
            + String(format: "on the same time axis (0–%g s)", scale.endSeconds)
            + ", bitrate and buffer scales.\(simulated > 0 ? " \(simulated) of them simulated (marked)." : "")</div>\n"
        html += zoomControl()
        html += "<div class=\"sessions\">\n"
        for (i, section) in sections.enumerated() {
            let r = section.renderer
            let n = i + 1
            html +=
                "<section class=\"session\" id=\"session-\(n)\" data-session=\"\(n)\" data-scale-end=\"\(coordinate(scale.endSeconds))\" data-scale-step=\"\(coordinate(scale.stepSeconds))\"\(r.simulation != nil ? " data-simulated=\"true\"" : "")>\n"
            html += "<h2>\(r.simulation != nil ? "Simulated: " : "")\(n). \(escapeHTML(section.name))</h2>\n"
            html += "<div class=\"key-figures\" id=\"s\(n)-key-figures\">\(r.keyFigures())</div>\n"
            // Ids stay unique on the page: each section's get its number.
            html += r.body().replacingOccurrences(of: " id=\"", with: " id=\"s\(n)-")
            html += "</section>\n"
        }
        html += "</div>\n</body>\n</html>\n"
        return html
    }

    /// Coordinates are written with one decimal, as here.
    public static func coordinate(_ v: Double) -> String { String(format: "%.1f", v) }

    /// `text` safe for HTML element content and quoted attribute values.
    public static func escapeHTML(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for ch in text.unicodeScalars {
            switch ch {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default:
                // Control characters other than tab/newline (C0, DEL, C1) are not valid in HTML text.
                if ch.value < 0x20 && ch != "\t" && ch != "\n" || (0x7F...0x9F).contains(ch.value) {
                    out += "\u{FFFD}"
                } else {
                    out.unicodeScalars.append(ch)
                }
            }
        }
        return out
    }
}

// MARK: - Reading the log

private let knownEventTypes: Set<String> = [
    "request.start", "request.progress", "request.end", "request.retry", "playlist.loaded", "abr.decision", "abr.switch",
    "segment.buffered", "segment.skipped", "buffer.sample", "frame.first", "playback.started", "stall.start", "stall.end",
    "playback.ended", "decode.stats", "error", "cap.gate", "cap.change", "cap.seed", "cap.reconnect", "cap.note",
    "sample.verdict", "request.byteProgress", "risk.sample", "policy.change", "predictor.failed", "predictor.recovered"
]

private func number(_ value: Any?) -> Double? {
    switch value {
    case let d as Double: return d.isFinite ? d : nil
    case let i as Int: return Double(i)
    case let n as NSNumber: return n.doubleValue.isFinite ? n.doubleValue : nil
    default: return nil
    }
}

private func string(_ value: Any?) -> String? {
    switch value {
    case let s as String: return s
    case let n as NSNumber: return n.stringValue
    default: return nil
    }
}

private struct Event {
    var t: Double
    var type: String
    var fields: [String: Any]
    subscript(_ key: String) -> Any? { fields[key] }
}

private struct ParsedLog {
    var header: [String: Any]
    var events: [Event] = []
    var summary: [String: Any]?
    var partialLastLine = false
    var eventsWithoutTime = 0
    var unknownTypes: [String: Int] = [:]

    init(_ text: String) throws {
        let lines = text.split(omittingEmptySubsequences: true, whereSeparator: { $0 == "\n" || $0 == "\r\n" })
            .map { $0.hasSuffix("\r") ? String($0.dropLast()) : String($0) }
            .filter { !$0.allSatisfy { $0 == " " || $0 == "\t" || $0 == "\r" } }
        guard let first = lines.first else { throw TimelineReport.InvalidLog("the session log is empty") }
        func object(_ line: String) -> [String: Any]? {
            (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any]
        }
        guard let header = object(first), header["type"] as? String == "header" else {
            throw TimelineReport.InvalidLog("line 1 is not a session-log header (expected a JSON object with \"type\": \"header\")")
        }
        if let schema = header["schema"] as? String, schema != "hlsplay.session-log" {
            throw TimelineReport.InvalidLog("line 1 is a header of schema '\(schema)', not 'hlsplay.session-log'")
        }
        self.header = header
        for (index, line) in lines.enumerated().dropFirst() {
            guard let obj = object(line) else {
                // A crash loses at most the line in progress: tolerate only that one.
                if index == lines.count - 1 { partialLastLine = true; continue }
                throw TimelineReport.InvalidLog("line \(index + 1) is not a JSON object")
            }
            let type = obj["type"] as? String ?? ""
            if type == "summary" { summary = obj; continue }
            guard let t = number(obj["t"]) else { eventsWithoutTime += 1; continue }
            if !knownEventTypes.contains(type) { unknownTypes[type.isEmpty ? "(no type)" : type, default: 0] += 1 }
            events.append(Event(t: t, type: type, fields: obj))
        }
    }

    func events(_ type: String) -> [Event] { events.filter { $0.type == type } }
}

// MARK: - Series

private struct Point { var t: Double; var v: Double }

/// One request attempt of the waterfall.
private struct RequestBar {
    var id: String
    var start: Double
    var end: Double?
    /// Session time of its first byte (`request.end.timings.firstByteSeconds` after its start).
    var firstByte: Double?
    var purpose: String?
    var variant: Int?
    var mediaSequence: Int?
    var track: String?
    var attempt: Int?
    var ok: Bool?
    var aborted = false
    var cancelReason: String?
    var errorKind: String?
    var status: Int?
    var bytes: Double?
    var url: String?

    var failed: Bool { ok == false || aborted }
}

/// The request attempts in `log`: each `request.start` paired with the next `request.end` of its `requestID`
/// (still open at the end of the log when there is none); a `request.end` without a start (a log cut at its
/// head) begins `timings.totalSeconds` before it.
private func requestBars(_ log: ParsedLog) -> [RequestBar] {
    var bars: [RequestBar] = []
    var open: [String: [Int]] = [:]
    func int(_ v: Any?) -> Int? { number(v).map { Int(saturating: $0) } }
    for e in log.events where e.type == "request.start" || e.type == "request.end" {
        let id = string(e["requestID"]) ?? "?"
        if e.type == "request.start" {
            open[id, default: []].append(bars.count)
            bars.append(
                RequestBar(
                    id: id, start: e.t, purpose: e["purpose"] as? String, variant: int(e["variantIndex"]),
                    mediaSequence: int(e["mediaSequence"]), track: e["track"] as? String, attempt: int(e["attempt"]),
                    url: e["url"] as? String))
            continue
        }
        let timings = e["timings"] as? [String: Any]
        let index: Int
        if var queue = open[id], !queue.isEmpty {
            index = queue.removeFirst()
            open[id] = queue
        } else {
            let total = number(timings?["totalSeconds"]).map { max(0, $0) } ?? 0
            index = bars.count
            bars.append(RequestBar(id: id, start: max(0, e.t - total), purpose: e["purpose"] as? String, url: e["url"] as? String))
        }
        var bar = bars[index]
        bar.end = max(bar.start, e.t)
        if let first = number(timings?["firstByteSeconds"]), first >= 0 { bar.firstByte = min(bar.start + first, bar.end!) }
        bar.purpose = bar.purpose ?? e["purpose"] as? String
        bar.ok = e["ok"] as? Bool
        bar.aborted = (e["aborted"] as? Bool) == true
        bar.cancelReason = e["cancelReason"] as? String
        bar.errorKind = e["errorKind"] as? String
        bar.status = int(e["status"])
        bar.bytes = number(e["bytes"])
        bars[index] = bar
    }
    return bars
}

/// Rows for the waterfall: each bar goes in the first row free at its start (a small gap kept), so
/// concurrent requests (audio beside video, a playlist reload beside a segment) sit on separate rows.
private func packRows(_ bars: [RequestBar], lastSeconds: Double, gapSeconds: Double) -> (rows: [Int], count: Int) {
    var rowEnds: [Double] = []
    var rows: [Int] = []
    for bar in bars {
        let end = bar.end ?? lastSeconds
        if let free = rowEnds.firstIndex(where: { $0 + gapSeconds <= bar.start }) {
            rowEnds[free] = end
            rows.append(free)
        } else {
            rowEnds.append(end)
            rows.append(rowEnds.count - 1)
        }
    }
    return (rows, max(1, rowEnds.count))
}
private struct Interval { var start: Double; var end: Double; var open: Bool }
private struct Mark { var t: Double; var label: String }

private func niceStep(_ raw: Double) -> Double {
    guard raw > 0, raw.isFinite else { return 1 }
    let magnitude = pow(10, (log10(raw)).rounded(.down))
    for m in [1.0, 2, 5, 10] where m * magnitude >= raw { return m * magnitude }
    return 10 * magnitude
}

private func seconds(_ v: Double?) -> String {
    guard let v else { return "—" }
    return v < 10 ? String(format: "%.2f s", v) : String(format: "%.1f s", v)
}

private func bitrate(_ bps: Double?) -> String {
    guard let bps else { return "—" }
    if bps >= 1_000_000 { return String(format: bps >= 10_000_000 ? "%.0f Mb/s" : "%.2g Mb/s", bps / 1_000_000) }
    if bps >= 1_000 { return String(format: "%.0f kb/s", bps / 1_000) }
    return String(format: "%.0f b/s", bps)
}

private struct Renderer {
    let log: ParsedLog
    let title: String?

    // Lanes, top to bottom.
    // Sized so the whole page fits a 1400×1000 window.
    let eventsTop = 30.0, eventsHeight = 38.0
    let requestsTop = 96.0, requestsHeight = 84.0
    let bufferTop = 210.0, bufferHeight = 150.0
    let bitrateTop = 390.0, bitrateHeight = 190.0
    let riskTop = 610.0, riskHeight = 110.0
    let policyTop = 726.0, policyHeight = 16.0
    var axisY: Double { policyTop + policyHeight }
    var svgHeight: Double { axisY + 44 }

    let buffer: [Point]
    let segments: [Point]
    let estimate: [Point]
    let throughput: [Point]
    let caps: [(t: Double, cap: Double?)]
    let risk: [Point]
    let policies: [(start: Double, end: Double, policy: String)]
    let stalls: [Interval]
    let firstFrame: Mark?
    let capMarks: [Mark]
    let progressMarks: [Mark]
    let errors: [Mark]
    let requests: [RequestBar]
    /// The link's rate on session time (empty: none given).
    let link: [TimelineReport.LinkRate.Step]
    let linkLabel: String?
    var scale: TimelineReport.TimeScale
    let lastT: Double
    /// On a page of several sessions: the bitrate lane's log10 range and the buffer lane's largest value,
    /// the same in every section.
    var sharedBitrateDecades: (Double, Double)?
    var sharedBufferMax: Double?

    init(log: ParsedLog, title: String?, linkRate: TimelineReport.LinkRate? = nil) {
        self.log = log
        self.title = title
        linkLabel = linkRate?.label
        buffer = log.events("buffer.sample").compactMap { e in number(e["bufferSeconds"]).map { Point(t: e.t, v: max(0, $0)) } }
        segments = log.events("segment.buffered").compactMap { e in number(e["bandwidthBps"]).map { Point(t: e.t, v: $0) } }
        estimate = log.events("buffer.sample").compactMap { e in number(e["estimateBps"]).flatMap { $0 > 0 ? Point(t: e.t, v: $0) : nil } }
        throughput = log.events("request.end").compactMap { e in number(e["throughputBps"]).flatMap { $0 > 0 ? Point(t: e.t, v: $0) : nil } }
        let capEvents = log.events("cap.change")
        caps = capEvents.map { (t: $0.t, cap: number($0["capBps"]).flatMap { $0 > 0 ? $0 : nil }) }
        risk = log.events("risk.sample").compactMap { e in number(e["risk"]).map { Point(t: e.t, v: min(1, max(0, $0))) } }

        let requests = requestBars(log)
        self.requests = requests
        var last = max(log.events.last?.t ?? 0, requests.compactMap(\.end).max() ?? 0)
        var stalls: [Interval] = []
        var openStart: Double?
        for e in log.events where e.type == "stall.start" || e.type == "stall.end" {
            let at = number(e["atSeconds"]) ?? e.t
            last = max(last, at)
            if e.type == "stall.start" {
                if let s = openStart { stalls.append(Interval(start: s, end: at, open: false)) }
                openStart = at
            } else if let s = openStart {
                stalls.append(Interval(start: s, end: max(s, at), open: false))
                openStart = nil
            }
        }
        if let s = openStart { stalls.append(Interval(start: s, end: max(s, last), open: true)) }
        self.stalls = stalls
        lastT = last
        if let linkRate {
            var offset = 0.0
            if case .firstRequest(let at) = linkRate.clock {
                offset = (requests.map(\.start).min() ?? 0) - at
            }
            link = linkRate.sessionSteps(offsetSeconds: offset, endSeconds: last)
        } else {
            link = []
        }
        scale = TimelineReport.TimeScale(lastSeconds: last)

        // The policy in force: each risk sample names it; a change switches it at its instant.
        var changes: [(t: Double, policy: String)] = []
        for e in log.events {
            if e.type == "risk.sample", let p = e["policy"] as? String { changes.append((e.t, p)) }
            if e.type == "policy.change", let p = e["to"] as? String { changes.append((number(e["atSeconds"]) ?? e.t, p)) }
        }
        changes.sort { $0.t < $1.t }
        var bands: [(start: Double, end: Double, policy: String)] = []
        for c in changes {
            if let lastBand = bands.last, lastBand.policy == c.policy { continue }
            if !bands.isEmpty { bands[bands.count - 1].end = c.t }
            bands.append((c.t, last, c.policy))
        }
        policies = bands.filter { $0.end > $0.start }

        firstFrame = log.events("frame.first").first.map { e in
            Mark(t: e.t, label: "first frame" + (number(e["timeToFirstFrameSeconds"]).map { String(format: " (TTFF %.2f s)", $0) } ?? ""))
        }
        capMarks = capEvents.map { e in
            Mark(
                t: e.t,
                label: "cap \(number(e["previousCapBps"]).map { bitrate($0) } ?? "none") → \(number(e["capBps"]).map { bitrate($0) } ?? "none")"
                    + ((e["reason"] as? String).map { " (\($0))" } ?? ""))
        }
        progressMarks = log.events("request.byteProgress").map { e in
            let verdict = (e["assessment"] as? [String: Any]).flatMap { $0["verdict"] as? String } ?? "?"
            return Mark(t: e.t, label: "byte progress: \(verdict)" + ((e["requestID"]).flatMap(string).map { " (request \($0))" } ?? ""))
        }
        errors = log.events("error").map { e in
            let fatal = (e["fatal"] as? Bool) == true ? "fatal " : ""
            return Mark(
                t: e.t,
                label: "\(fatal)\(e["category"] as? String ?? "error") error: \(e["message"] as? String ?? "")"
                    + ((e["url"] as? String).map { " — \($0)" } ?? ""))
        }
    }

    // MARK: Page

    func page() -> String {
        let pageTitle = (simulation == nil ? "" : "Simulated: ") + (title ?? "hlsplay session")
        return Self.head(title: pageTitle) + "<h1>\(esc(pageTitle))</h1>\n" + TimelineReport.zoomControl() + body() + "</body>\n</html>\n"
    }

    /// The URL, the simulated banner, figures, legend, timeline and notes of this session.
    func body() -> String {
        let url = (log.summary?["url"] as? String) ?? (log.header["url"] as? String)
        var html = "<div class=\"url\" id=\"url\">\(url.map(esc) ?? "(no URL in this log)")</div>\n"
        html += simulatedBanner()
        html += figures()
        html += legend()
        html += "<div class=\"plot\">\n" + svg() + "</div>\n"
        html += notes()
        return html
    }

    /// One line of the figures compared across sessions: playback start, stalls, average bitrate.
    func keyFigures() -> String {
        let s = log.summary
        let qoe = s?["qoe"] as? [String: Any]
        var parts: [String] = []
        let start = number(s?["timeToPlaybackStartSeconds"]) ?? number(s?["timeToFirstFrameSeconds"])
        parts.append("playback start <b>\(seconds(start))</b>")
        let count = number(s?["stallCount"]).map { Int(saturating: $0) } ?? (s == nil ? stalls.count : nil)
        let stalled = number(s?["stallSeconds"]) ?? (s == nil ? stalls.reduce(0) { $0 + ($1.end - $1.start) } : nil)
        parts.append("stalls <b>\(count.map(String.init) ?? "—")</b>" + (stalled.map { " (\(seconds($0)))" } ?? ""))
        let average = number(qoe?["averageDeclaredBitrateBps"]) ?? number(s?["averageBitrateBps"])
        parts.append("average bitrate <b>\(bitrate(average))</b>")
        if let ratio = number(qoe?["rebufferRatio"]) { parts.append(String(format: "rebuffer ratio <b>%.1f %%</b>", ratio * 100)) }
        if s == nil { parts.append("<i>cut short (no summary)</i>") }
        return parts.joined(separator: " · ")
    }

    static func head(title pageTitle: String) -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <title>\(TimelineReport.escapeHTML(pageTitle))</title>
        <style>
        body { font: 14px/1.4 system-ui, -apple-system, "DejaVu Sans", sans-serif; margin: 16px 24px; color: #222; background: #fff; }
        h1 { font-size: 20px; margin: 0 0 4px; }
        .url { font-family: monospace; word-break: break-all; color: #333; margin-bottom: 10px; }
        .figures { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 8px 0 12px; }
        .figure b { display: block; font-size: 18px; }
        .figure span { color: #666; font-size: 12px; }
        .warning { background: #fff3cd; border: 1px solid #e0c36a; padding: 6px 10px; margin: 8px 0; }
        .legend { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 6px 0 4px; font-size: 13px; }
        .legend .missing { color: #999; }
        .swatch { display: inline-block; width: 18px; height: 10px; margin-right: 5px; vertical-align: middle; border-radius: 2px; }
        svg { display: block; max-width: 100%; height: auto; }
        svg text { font: 11px system-ui, "DejaVu Sans", sans-serif; fill: #444; }
        svg .lane-title { font-size: 13px; font-weight: 600; fill: #222; }
        svg .missing-text { font-size: 13px; fill: #999; font-style: italic; }
        .notes { color: #666; font-size: 12px; margin-top: 8px; }
        .zoom { font-size: 13px; margin: 4px 0; color: #444; }
        .zoom label { margin-right: 8px; }
        .zoom span { color: #888; }
        .plot { overflow-x: auto; }
        body:has(#zoom-2:checked) .plot svg { width: 2400px; max-width: none; }
        body:has(#zoom-4:checked) .plot svg { width: 4800px; max-width: none; }
        svg .readout { fill: transparent; }
        svg .readout:hover { fill: #000; fill-opacity: 0.06; }
        .compare-note { color: #444; margin: 4px 0 8px; }
        section.session { border-top: 3px solid #ccc; margin-top: 18px; padding-top: 6px; }
        section.session h2 { font-size: 17px; margin: 0 0 2px; word-break: break-all; }
        .key-figures { font-size: 15px; margin: 2px 0 4px; }
        @media (min-width: 2400px) { .sessions { display: grid; grid-template-columns: repeat(2, minmax(0, 1fr)); gap: 0 24px; } }
        </style>
        </head>
        <body>

        """
    }

    func esc(_ s: String) -> String { TimelineReport.escapeHTML(s) }

    /// Whether `hlsplay simulate` wrote the log: its header has a `simulation` object.
    var simulation: [String: Any]? { log.header["simulation"] as? [String: Any] }

    func simulatedBanner() -> String {
        guard let sim = simulation else { return "" }
        let link = sim["link"].flatMap(string).map { "link <b>\(esc($0))</b>" } ?? "link not named in the header"
        let ladder = sim["ladder"].flatMap(string).map { ", ladder <b>\(esc($0))</b>" } ?? ""
        return
            "<div class=\"simulated\" id=\"simulated\" data-simulated=\"true\" style=\"background:#5b2a86;color:#fff;font-size:16px;padding:8px 12px;margin:8px 0;border-radius:4px\">SIMULATED session (<code>hlsplay simulate</code>): "
            + "\(link)\(ladder). No real network, media or decoder; times are virtual seconds.</div>\n"
    }

    func figures() -> String {
        var out = ""
        let s = log.summary
        if s == nil {
            out +=
                "<div class=\"warning\" id=\"truncated\">This log has no summary line: the session was cut short "
                + "(the figures below are counted from the events that were written).</div>\n"
        }
        let ttff =
            number(s?["timeToFirstFrameSeconds"])
            ?? (s == nil ? log.events("frame.first").first.flatMap { number($0["timeToFirstFrameSeconds"]) } : nil)
        // The log is a file the user hands in: any number may be in it.
        let stallCount = number(s?["stallCount"]).map { Int(saturating: $0) } ?? (s == nil ? log.events("stall.start").count : nil)
        let stallSeconds =
            number(s?["stallSeconds"])
            ?? (s == nil ? stalls.reduce(0) { $0 + ($1.end - $1.start) } : nil)
        var items: [(String, String, String)] = [
            ("ttff", ttff.map { String(format: "%.2f s", $0) } ?? "—", "time to first frame"),
            ("stalls", stallCount.map(String.init) ?? "—", "stalls"),
            ("stall-seconds", stallSeconds.map { String(format: "%.2f s", $0) } ?? "—", "time stalled"),
            ("average-bitrate", bitrate(number(s?["averageBitrateBps"])), "average bitrate"),
            ("exit-reason", (s?["exitReason"] as? String).map(esc) ?? (s == nil ? "cut short" : "—"), "exit reason")
        ]
        if let start = number(s?["timeToPlaybackStartSeconds"]) {
            let wait = number(s?["startupWaitSeconds"]).map { String(format: ", %.2f s after the first frame", $0) } ?? ""
            items.insert(("playback-start", seconds(start), "playback start" + wait), at: 1)
        }
        if let played = number(s?["playedSeconds"]) { items.append(("played", seconds(played), "media played")) }
        if let session = number(s?["sessionSeconds"]) { items.append(("session", seconds(session), "session length")) }
        if let switches = number(s?["variantSwitches"]) { items.append(("switches", String(Int(saturating: switches)), "variant switches")) }
        if let predictor = s?["predictor"] as? String { items.append(("predictor", esc(predictor), "stall predictor")) }
        let qoe = s?["qoe"] as? [String: Any]
        if let ratio = number(qoe?["rebufferRatio"]) { items.append(("rebuffer-ratio", String(format: "%.1f %%", ratio * 100), "rebuffer ratio")) }
        if let score = number(qoe?["linearQoE"]) {
            let perChunk = number(qoe?["linearQoEPerChunk"]).map { String(format: ", %.2f per chunk", $0) } ?? ""
            items.append(("linear-qoe", String(format: "%.2f", score), "linear QoE" + perChunk))
        }
        out += "<div class=\"figures\">\n"
        for (id, value, label) in items {
            out += "<div class=\"figure\" id=\"figure-\(id)\"><b>\(value)</b><span>\(label)</span></div>\n"
        }
        out += "</div>\n"
        if let err = s?["error"] as? String { out += "<div class=\"warning\" id=\"session-error\">Session error: \(esc(err))</div>\n" }
        return out
    }

    static let colors: [String: String] = [
        "buffer": "#1f77b4", "bitrate": "#2ca02c", "estimate": "#ff7f0e", "throughput": "#9467bd", "cap": "#8c564b",
        "risk": "#d62728", "stalls": "#e45756", "first-frame": "#17becf", "cap-changes": "#8c564b",
        "byte-progress": "#bc5090", "errors": "#b00020", "requests": "#54a24b", "link": "#7f7f7f"
    ]
    static let policyColors: [String: String] = ["lowLatency": "#8fd19e", "preload": "#8ab6e8", "defensiveDownshift": "#f4b26a"]
    func policyColor(_ p: String) -> String { Self.policyColors[p] ?? "#cccccc" }

    /// What the legend says of a series with nothing to draw.
    static func missingNote(_ name: String) -> String {
        switch name {
        case "stalls": return ": none in this log"
        case "link": return ": not given (--link TRACE or --origin-log FILE)"
        default: return ": not in this log"
        }
    }

    func legend() -> String {
        let entries: [(String, String, Int)] = [
            ("buffer", "forward buffer (s)", buffer.count),
            ("bitrate", "variant bitrate (BANDWIDTH of each buffered segment, from when it was buffered)", segments.count),
            ("estimate", "throughput estimate", estimate.count),
            ("throughput", "per-request throughput (dots)", throughput.count),
            ("cap", "startup/recovery cap", caps.count),
            ("link", "link rate" + (linkLabel.map { " (\(esc($0)))" } ?? ""), link.count),
            ("risk", "stall risk (0–1)", risk.count),
            ("stalls", "stalls (shaded)", stalls.count),
            ("first-frame", "first frame", firstFrame == nil ? 0 : 1),
            ("cap-changes", "cap changes", capMarks.count),
            ("byte-progress", "wedge / over-selection", progressMarks.count),
            ("errors", "errors", errors.count),
            ("requests", "requests (bar: start → end, lighter until the first byte; red outline: failed or cut short)", requests.count)
        ]
        var out = "<div class=\"legend\" id=\"legend\">\n"
        for (name, label, count) in entries {
            let color = Self.colors[name] ?? "#999"
            let missing = count == 0
            out +=
                "<span data-legend=\"\(name)\"\(missing ? " class=\"missing\"" : "")><i class=\"swatch\" style=\"background:\(missing ? "#ddd" : color)\"></i>\(label)\(missing ? Self.missingNote(name) : "")</span>\n"
        }
        let groups = Set(requests.map { TimelineReport.purposeGroup($0.purpose) })
        for p in TimelineReport.purposeColors where groups.contains(p.purpose) {
            out += "<span data-legend=\"purpose-\(p.purpose)\"><i class=\"swatch\" style=\"background:\(p.color)\"></i>\(p.label)</span>\n"
        }
        if policies.isEmpty {
            out += "<span data-legend=\"policy\" class=\"missing\"><i class=\"swatch\" style=\"background:#ddd\"></i>policy: not in this log</span>\n"
        } else {
            var seen: [String] = []
            for p in policies where !seen.contains(p.policy) { seen.append(p.policy) }
            for p in seen {
                out += "<span data-legend=\"policy\"><i class=\"swatch\" style=\"background:\(policyColor(p))\"></i>policy \(esc(p))</span>\n"
            }
        }
        out += "</div>\n"
        return out
    }

    func notes() -> String {
        var lines: [String] = []
        if log.partialLastLine { lines.append("The last line of the log was incomplete and is left out.") }
        if log.eventsWithoutTime > 0 { lines.append("\(log.eventsWithoutTime) line(s) without a time <code>t</code> are left out.") }
        if !log.unknownTypes.isEmpty {
            let list = log.unknownTypes.sorted { $0.key < $1.key }.map { "\(esc($0.key)) ×\($0.value)" }.joined(separator: ", ")
            lines.append("Event types this report does not know (not drawn): \(list).")
        }
        if let v = number(log.header["schemaVersion"]), v != 1 {
            lines.append("Schema version \(esc(string(log.header["schemaVersion"]) ?? "?")); this report was written for version 1.")
        }
        var meta: [String] = ["\(log.events.count) events"]
        if let v = log.header["hlsplayVersion"] as? String { meta.append("hlsplay \(esc(v))") }
        if let s = log.header["startedAt"] as? String { meta.append("started \(esc(s))") }
        if let host = log.header["host"] as? [String: Any] {
            for key in ["hostname", "os", "ffmpeg", "libcurl"] { if let v = host[key].flatMap(string) { meta.append("\(key) \(esc(v))") } }
        }
        lines.append(meta.joined(separator: " · "))
        return "<div class=\"notes\" id=\"notes\">" + lines.map { "<div>\($0)</div>" }.joined() + "</div>\n"
    }

    // MARK: SVG

    func c(_ v: Double) -> String { TimelineReport.coordinate(v) }
    func x(_ t: Double) -> Double { scale.x(t) }
    var right: Double { TimelineReport.plotLeft + TimelineReport.plotWidth }

    func svg() -> String {
        var out =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"timeline\" width=\"\(c(TimelineReport.svgWidth))\" height=\"\(c(svgHeight))\" viewBox=\"0 0 \(c(TimelineReport.svgWidth)) \(c(svgHeight))\" role=\"img\" aria-label=\"session timeline\">\n"
        out += "<rect x=\"0\" y=\"0\" width=\"\(c(TimelineReport.svgWidth))\" height=\"\(c(svgHeight))\" fill=\"#fff\"/>\n"
        out += timeAxis()
        if simulation != nil {
            out +=
                "<text class=\"simulated-mark\" fill-opacity=\"0.10\" style=\"font-size:44px;font-weight:700;fill:#5b2a86\" x=\"\(c(TimelineReport.plotLeft + TimelineReport.plotWidth / 2))\" y=\"\(c(bufferTop + bufferHeight / 2 + 16))\" text-anchor=\"middle\" pointer-events=\"none\">SIMULATED</text>\n"
        }
        out += stallShading()
        out += readouts()
        out += eventsLane()
        out += requestsLane()
        out += bufferLane()
        out += bitrateLane()
        out += riskLane()
        out += "</svg>\n"
        return out
    }

    func laneFrame(title: String, top: Double, height: Double) -> String {
        "<text class=\"lane-title\" x=\"\(c(TimelineReport.plotLeft))\" y=\"\(c(top - 8))\">\(title)</text>\n"
            + "<rect x=\"\(c(TimelineReport.plotLeft))\" y=\"\(c(top))\" width=\"\(c(TimelineReport.plotWidth))\" height=\"\(c(height))\" fill=\"none\" stroke=\"#bbb\"/>\n"
    }

    func missing(_ name: String, _ label: String, top: Double, height: Double, dy: Double = 0) -> String {
        "<text class=\"missing-text\" id=\"series-\(name)\" data-series=\"\(name)\" data-points=\"0\" data-missing=\"true\" x=\"\(c(TimelineReport.plotLeft + TimelineReport.plotWidth / 2))\" y=\"\(c(top + height / 2 + dy))\" text-anchor=\"middle\">\(label): not in this log</text>\n"
    }

    func timeAxis() -> String {
        var out = "<g id=\"time-axis\" data-axis=\"time\">\n"
        var t = 0.0
        var i = 0
        while t <= scale.endSeconds + 1e-9 {
            let xv = x(t)
            out += "<line x1=\"\(c(xv))\" y1=\"\(c(eventsTop))\" x2=\"\(c(xv))\" y2=\"\(c(axisY + 5))\" stroke=\"#eee\"/>\n"
            let label = scale.stepSeconds < 1 ? String(format: "%.1f s", t) : String(format: "%.0f s", t)
            out += "<text x=\"\(c(xv))\" y=\"\(c(axisY + 18))\" text-anchor=\"middle\">\(label)</text>\n"
            i += 1
            t = Double(i) * scale.stepSeconds
        }
        out += "<line x1=\"\(c(TimelineReport.plotLeft))\" y1=\"\(c(axisY))\" x2=\"\(c(right))\" y2=\"\(c(axisY))\" stroke=\"#555\"/>\n"
        out +=
            "<text x=\"\(c(TimelineReport.plotLeft + TimelineReport.plotWidth / 2))\" y=\"\(c(axisY + 38))\" text-anchor=\"middle\">session time (seconds since start)</text>\n"
        out += "</g>\n"
        return out
    }

    func stallShading() -> String {
        guard !stalls.isEmpty else { return "" }
        var out =
            "<g id=\"series-stalls\" data-series=\"stalls\" data-points=\"\(stalls.count)\" fill=\"\(Self.colors["stalls"]!)\" fill-opacity=\"0.22\">\n"
        for s in stalls {
            let x0 = x(s.start), x1 = x(s.end)
            let label =
                String(format: "stall %.2f–%.2f s (%.2f s)", s.start, s.end, s.end - s.start) + (s.open ? ", still open at the end of the log" : "")
            out +=
                "<rect class=\"stall\" data-start=\"\(c(s.start))\" data-end=\"\(c(s.end))\"\(s.open ? " data-open=\"true\"" : "") x=\"\(c(x0))\" y=\"\(c(eventsTop))\" width=\"\(c(max(1, x1 - x0)))\" height=\"\(c(axisY - eventsTop))\"><title>\(label)</title></rect>\n"
        }
        out += "</g>\n"
        return out
    }

    /// The hover readout columns: at each column's middle instant, the last value of every series at or
    /// before it, across all lanes.
    func readouts() -> String {
        let width = TimelineReport.readoutColumnWidth
        let count = Int((TimelineReport.plotWidth / width).rounded(.down))
        let secondsPerUnit = scale.endSeconds / TimelineReport.plotWidth
        func last<T>(_ list: [T], _ time: (T) -> Double, atOrBefore t: Double) -> T? {
            var lo = 0, hi = list.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if time(list[mid]) <= t { lo = mid + 1 } else { hi = mid }
            }
            return lo > 0 ? list[lo - 1] : nil
        }
        var out = "<g id=\"readouts\" data-readouts=\"\(count)\">\n"
        for i in 0..<count {
            let x0 = TimelineReport.plotLeft + Double(i) * width
            let t = (Double(i) + 0.5) * width * secondsPerUnit
            guard t <= lastT + width * secondsPerUnit else { break }
            var lines = [String(format: "t = %.2f s", t)]
            if let s = stalls.first(where: { $0.start <= t && t <= $0.end }) {
                lines.append(String(format: "STALLED (%.2f–%.2f s", s.start, s.end) + (s.open ? ", still open)" : ")"))
            }
            if let b = last(buffer, { $0.t }, atOrBefore: t) { lines.append(String(format: "buffer %.2f s", b.v)) }
            if let v = last(segments, { $0.t }, atOrBefore: t) { lines.append("variant bitrate \(bitrate(v.v))") }
            if let e = last(estimate, { $0.t }, atOrBefore: t) { lines.append("estimate \(bitrate(e.v))") }
            if let l = last(link, { $0.atSeconds }, atOrBefore: t) { lines.append("link \(bitrate(l.bitsPerSecond))") }
            if let cap = last(caps, { $0.t }, atOrBefore: t) { lines.append("cap \(cap.cap.map { bitrate($0) } ?? "none")") }
            if let r = last(risk, { $0.t }, atOrBefore: t) { lines.append(String(format: "risk %.2f", r.v)) }
            if let p = policies.first(where: { $0.start <= t && t < $0.end }) { lines.append("policy \(p.policy)") }
            let inFlight = requests.filter { $0.start <= t && t <= ($0.end ?? lastT) }
            if !inFlight.isEmpty {
                let what = inFlight.map { $0.purpose ?? "?" }.joined(separator: ", ")
                lines.append("\(inFlight.count) request\(inFlight.count == 1 ? "" : "s") in flight (\(what))")
            }
            out +=
                "<rect class=\"readout\" data-t=\"\(c(t))\" x=\"\(c(x0))\" y=\"\(c(eventsTop))\" width=\"\(c(width))\" height=\"\(c(axisY - eventsTop))\"><title>\(esc(lines.joined(separator: "\n")))</title></rect>\n"
        }
        return out + "</g>\n"
    }

    func eventsLane() -> String {
        var out = laneFrame(title: "Events", top: eventsTop, height: eventsHeight)
        if stalls.isEmpty {
            out += missing("stalls", "stalls", top: eventsTop, height: eventsHeight, dy: -6).replacingOccurrences(
                of: "stalls: not in this log", with: "no stalls in this log")
        }
        let mid = eventsTop + eventsHeight / 2
        if let f = firstFrame {
            let xv = x(f.t)
            out +=
                "<g id=\"series-first-frame\" data-series=\"first-frame\" data-points=\"1\" stroke=\"\(Self.colors["first-frame"]!)\">"
                + "<line x1=\"\(c(xv))\" y1=\"\(c(eventsTop))\" x2=\"\(c(xv))\" y2=\"\(c(axisY))\" stroke-width=\"2\" stroke-dasharray=\"5 3\"><title>\(esc(f.label))</title></line>"
                + "<text x=\"\(c(xv + 4))\" y=\"\(c(eventsTop + eventsHeight - 5))\" stroke=\"none\">first frame</text></g>\n"
        }
        func marks(_ name: String, _ list: [Mark], dy: Double, shape: (Double, Double) -> String) -> String {
            guard !list.isEmpty else { return "" }
            var g = "<g id=\"series-\(name)\" data-series=\"\(name)\" data-points=\"\(list.count)\" fill=\"\(Self.colors[name]!)\">\n"
            for m in list { g += "<path d=\"\(shape(x(m.t), mid + dy))\"><title>\(esc(String(format: "%.2f s: ", m.t) + m.label))</title></path>\n" }
            return g + "</g>\n"
        }
        out += marks("cap-changes", capMarks, dy: -8) { x, y in "M\(c(x)) \(c(y - 5))L\(c(x + 5)) \(c(y))L\(c(x)) \(c(y + 5))L\(c(x - 5)) \(c(y))Z" }
        out += marks("byte-progress", progressMarks, dy: 8) { x, y in "M\(c(x)) \(c(y - 6))L\(c(x + 5)) \(c(y + 4))L\(c(x - 5)) \(c(y + 4))Z" }
        out += marks("errors", errors, dy: 0) { x, y in
            "M\(c(x - 5)) \(c(y - 5))L\(c(x + 5)) \(c(y + 5))M\(c(x + 5)) \(c(y - 5))L\(c(x - 5)) \(c(y + 5))"
        }
        .replacingOccurrences(
            of: "fill=\"\(Self.colors["errors"]!)\"", with: "fill=\"none\" stroke=\"\(Self.colors["errors"]!)\" stroke-width=\"2.5\"")
        // The lane's own labels for what is not there.
        var absent: [String] = []
        if firstFrame == nil { absent.append("first frame") }
        if capMarks.isEmpty { absent.append("cap changes") }
        if progressMarks.isEmpty { absent.append("wedge/over-selection") }
        if errors.isEmpty { absent.append("errors") }
        if !absent.isEmpty {
            out +=
                "<text class=\"missing-text\" x=\"\(c(right - 4))\" y=\"\(c(eventsTop + eventsHeight - 6))\" text-anchor=\"end\">not in this log: \(absent.joined(separator: ", "))</text>\n"
        }
        return out
    }

    func requestsLane() -> String {
        var out = laneFrame(title: "Requests (one bar per attempt)", top: requestsTop, height: requestsHeight)
        guard !requests.isEmpty else { return out + missing("requests", "requests", top: requestsTop, height: requestsHeight) }
        let (rows, rowCount) = packRows(requests, lastSeconds: lastT, gapSeconds: scale.endSeconds / TimelineReport.plotWidth * 2)
        let rowHeight = min(14, (requestsHeight - 4) / Double(rowCount))
        let barHeight = max(1, rowHeight - (rowHeight > 4 ? 2 : 0))
        let colors = Dictionary(uniqueKeysWithValues: TimelineReport.purposeColors.map { ($0.purpose, $0.color) })
        out += "<g id=\"series-requests\" data-series=\"requests\" data-points=\"\(requests.count)\" data-rows=\"\(rowCount)\">\n"
        for (bar, row) in zip(requests, rows) {
            let group = TimelineReport.purposeGroup(bar.purpose)
            let color = colors[group] ?? "#999"
            let x0 = x(bar.start), x1 = max(x(bar.end ?? lastT), x0 + 1.5)
            let y0 = requestsTop + 2 + Double(row) * rowHeight
            var attributes = "class=\"request\" data-request-id=\"\(esc(bar.id))\" data-purpose=\"\(esc(bar.purpose ?? "unknown"))\""
            if let v = bar.variant { attributes += " data-variant=\"\(v)\"" }
            if bar.end == nil { attributes += " data-open=\"true\"" }
            if bar.failed { attributes += " data-failed=\"true\"" }
            if bar.aborted { attributes += " data-aborted=\"true\"" }
            if let r = bar.cancelReason { attributes += " data-cancel-reason=\"\(esc(r))\"" }
            if let f = bar.firstByte { attributes += " data-first-byte=\"\(c(f))\"" }
            // The whole attempt, light while waiting for the first byte (it carries the hover readout) …
            out +=
                "<rect \(attributes) x=\"\(c(x0))\" y=\"\(c(y0))\" width=\"\(c(x1 - x0))\" height=\"\(c(barHeight))\" fill=\"\(color)\" fill-opacity=\"0.3\""
                + (bar.failed ? " stroke=\"\(Self.colors["errors"]!)\" stroke-width=\"1.5\"" : "")
                + "><title>\(esc(requestLabel(bar)))</title></rect>\n"
            // … and solid from the first byte to the end.
            let xFirst = bar.firstByte.map { min(max(x($0), x0), x1) } ?? (bar.end == nil || bar.failed ? x1 : x0)
            if x1 > xFirst {
                out +=
                    "<rect class=\"request-body\" pointer-events=\"none\" x=\"\(c(xFirst))\" y=\"\(c(y0))\" width=\"\(c(x1 - xFirst))\" height=\"\(c(barHeight))\" fill=\"\(color)\"/>\n"
            }
            if group == "segment", let v = bar.variant, x1 - x0 > 22, barHeight >= 9 {
                out += "<text pointer-events=\"none\" x=\"\(c(x0 + 3))\" y=\"\(c(y0 + barHeight - 2))\" font-size=\"9\">v\(v)</text>\n"
            }
        }
        out += "</g>\n"
        return out
    }

    /// The hover readout of one request: what, when, how it ended.
    func requestLabel(_ bar: RequestBar) -> String {
        var what = "request \(bar.id): \(bar.purpose ?? "unknown purpose")"
        if let v = bar.variant { what += ", variant \(v)" }
        if let s = bar.mediaSequence { what += ", media sequence \(s)" }
        if let t = bar.track { what += " (\(t))" }
        if let a = bar.attempt, a > 1 { what += ", attempt \(a)" }
        var lines = [what]
        if let end = bar.end {
            lines.append(String(format: "%.3f → %.3f s (%.3f s)", bar.start, end, end - bar.start))
        } else {
            lines.append(String(format: "%.3f s →, still open at the end of the log", bar.start))
        }
        if let f = bar.firstByte { lines.append(String(format: "first byte after %.3f s", f - bar.start)) }
        var outcome: [String] = []
        if let s = bar.status { outcome.append("HTTP \(s)") }
        if let b = bar.bytes { outcome.append(String(format: "%.0f bytes", b)) }
        if bar.aborted { outcome.append("aborted") } else if bar.ok == false { outcome.append("failed") }
        if let k = bar.errorKind { outcome.append(k) }
        if let r = bar.cancelReason { outcome.append("cancelled: \(r)") }
        if !outcome.isEmpty { lines.append(outcome.joined(separator: ", ")) }
        if let u = bar.url { lines.append(u) }
        return lines.joined(separator: "\n")
    }

    /// A line through `points` as an SVG path (`M x,y L x,y …`); the line is
    /// broken where the log has no samples for a while (more than three
    /// times the usual spacing, e.g. risk is not sampled during a stall)
    /// rather than drawn straight across the gap.
    func polyline(_ name: String, _ points: [Point], y: (Double) -> Double, width: Double = 2) -> String {
        let gaps = zip(points.dropFirst(), points).map { $0.t - $1.t }.sorted()
        let usual = gaps.isEmpty ? 0 : gaps[gaps.count / 2]
        let breakAfter = max(usual * 3, 0.5)
        var d = ""
        var previous: Double?
        for p in points {
            let command = previous.map { p.t - $0 > breakAfter } ?? true ? "M" : "L"
            d += "\(d.isEmpty ? "" : " ")\(command)\(c(x(p.t))),\(c(y(p.v)))"
            previous = p.t
        }
        return
            "<path id=\"series-\(name)\" data-series=\"\(name)\" data-points=\"\(points.count)\" fill=\"none\" stroke=\"\(Self.colors[name]!)\" stroke-width=\"\(c(width))\" stroke-linejoin=\"round\" d=\"\(d)\"/>\n"
    }

    func bufferLane() -> String {
        var out = laneFrame(title: "Forward buffer (seconds)", top: bufferTop, height: bufferHeight)
        guard !buffer.isEmpty else { return out + missing("buffer", "forward buffer", top: bufferTop, height: bufferHeight) }
        let maxV = sharedBufferMax ?? buffer.map(\.v).max() ?? 1
        let step = niceStep(max(maxV, 1) / 4)
        let top = max(step, (maxV / step).rounded(.up) * step)
        let y = { (v: Double) in self.bufferTop + self.bufferHeight - v / top * self.bufferHeight }
        var v = 0.0
        while v <= top + 1e-9 {
            out +=
                "<line x1=\"\(c(TimelineReport.plotLeft - 4))\" y1=\"\(c(y(v)))\" x2=\"\(c(right))\" y2=\"\(c(y(v)))\" stroke=\"#eee\"/>"
                + "<text x=\"\(c(TimelineReport.plotLeft - 7))\" y=\"\(c(y(v) + 4))\" text-anchor=\"end\">\(String(format: step < 1 ? "%.1f s" : "%.0f s", v))</text>\n"
            v += step
        }
        return out + polyline("buffer", buffer, y: y)
    }

    /// Every rate the bitrate lane draws (its scale covers them).
    var bitrateValues: [Double] {
        segments.map(\.v) + estimate.map(\.v) + throughput.map(\.v) + caps.compactMap(\.cap) + link.map(\.bitsPerSecond).filter { $0 > 0 }
    }

    func bitrateLane() -> String {
        var out = laneFrame(title: "Bitrate and throughput (bits per second, log scale)", top: bitrateTop, height: bitrateHeight)
        let values = bitrateValues
        guard let lo = values.min(), let hi = values.max() else {
            return out + missing("bitrate", "bitrate", top: bitrateTop, height: bitrateHeight, dy: -20)
                + missing("estimate", "throughput estimate", top: bitrateTop, height: bitrateHeight)
                + missing("throughput", "per-request throughput", top: bitrateTop, height: bitrateHeight, dy: 20)
                + missing("cap", "cap", top: bitrateTop, height: bitrateHeight, dy: 40)
        }
        let (d0, d1) = sharedBitrateDecades ?? TimelineReport.bitrateDecades(lo: lo, hi: hi)
        let y = { (v: Double) -> Double in
            let l = min(max(log10(max(v, 1e-9)), d0), d1)
            return self.bitrateTop + self.bitrateHeight - (l - d0) / (d1 - d0) * self.bitrateHeight
        }
        let multipliers: [Double] = d1 - d0 <= 2 ? [1, 2, 5] : [1]
        var decade = d0
        while decade <= d1 {
            for m in multipliers {
                let v = m * pow(10, decade)
                guard log10(v) <= d1 + 1e-9 else { continue }
                out +=
                    "<line x1=\"\(c(TimelineReport.plotLeft - 4))\" y1=\"\(c(y(v)))\" x2=\"\(c(right))\" y2=\"\(c(y(v)))\" stroke=\"\(m == 1 ? "#e4e4e4" : "#f3f3f3")\"/>"
                    + "<text x=\"\(c(TimelineReport.plotLeft - 7))\" y=\"\(c(y(v) + 4))\" text-anchor=\"end\">\(bitrate(v))</text>\n"
            }
            decade += 1
        }
        // The link's real rate, under the rest (a rate of 0, a collapsed link, at the bottom).
        if !link.isEmpty {
            var d = ""
            for (i, step) in link.enumerated() {
                let end = i + 1 < link.count ? link[i + 1].atSeconds : lastT
                d += (d.isEmpty ? "M\(c(x(step.atSeconds))) \(c(y(step.bitsPerSecond)))" : "V\(c(y(step.bitsPerSecond)))") + "H\(c(x(end)))"
            }
            out +=
                "<path id=\"series-link\" data-series=\"link\" data-points=\"\(link.count)\" fill=\"none\" stroke=\"\(Self.colors["link"]!)\" stroke-opacity=\"0.55\" stroke-width=\"4\" stroke-linejoin=\"round\" d=\"\(d)\"><title>\(esc("link rate: " + (linkLabel ?? "")))</title></path>\n"
        }
        // Variant bitrate: a step line, each segment's BANDWIDTH from the instant it was buffered to the next.
        if segments.isEmpty {
            out += missing("bitrate", "bitrate", top: bitrateTop, height: bitrateHeight, dy: -20)
        } else {
            var d = "M\(c(x(segments[0].t))) \(c(y(segments[0].v)))"
            for p in segments.dropFirst() { d += "H\(c(x(p.t)))V\(c(y(p.v)))" }
            d += "H\(c(x(lastT)))"
            out +=
                "<path id=\"series-bitrate\" data-series=\"bitrate\" data-points=\"\(segments.count)\" fill=\"none\" stroke=\"\(Self.colors["bitrate"]!)\" stroke-width=\"2.5\" d=\"\(d)\"/>\n"
        }
        if caps.isEmpty {
            out += missing("cap", "cap", top: bitrateTop, height: bitrateHeight, dy: 40)
        } else {
            var d = ""
            for (i, c0) in caps.enumerated() {
                guard let cap = c0.cap else { continue }
                let end = i + 1 < caps.count ? caps[i + 1].t : lastT
                d += "M\(c(x(c0.t))) \(c(y(cap)))H\(c(x(end)))"
            }
            out +=
                "<path id=\"series-cap\" data-series=\"cap\" data-points=\"\(caps.count)\" fill=\"none\" stroke=\"\(Self.colors["cap"]!)\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\" d=\"\(d)\"/>\n"
        }
        out +=
            estimate.isEmpty
            ? missing("estimate", "throughput estimate", top: bitrateTop, height: bitrateHeight) : polyline("estimate", estimate, y: y, width: 1.8)
        if throughput.isEmpty {
            out += missing("throughput", "per-request throughput", top: bitrateTop, height: bitrateHeight, dy: 20)
        } else {
            out +=
                "<g id=\"series-throughput\" data-series=\"throughput\" data-points=\"\(throughput.count)\" fill=\"\(Self.colors["throughput"]!)\" fill-opacity=\"0.75\">\n"
            for p in throughput {
                out +=
                    "<circle cx=\"\(c(x(p.t)))\" cy=\"\(c(y(p.v)))\" r=\"3\"><title>\(String(format: "%.2f s: ", p.t))\(bitrate(p.v))</title></circle>\n"
            }
            out += "</g>\n"
        }
        return out
    }

    func riskLane() -> String {
        var out = laneFrame(title: "Stall risk (probability, 0–1) and the policy in force", top: riskTop, height: riskHeight)
        let y = { (v: Double) in self.riskTop + self.riskHeight - v * self.riskHeight }
        for v in [0.0, 0.25, 0.5, 0.75, 1.0] {
            out +=
                "<line x1=\"\(c(TimelineReport.plotLeft - 4))\" y1=\"\(c(y(v)))\" x2=\"\(c(right))\" y2=\"\(c(y(v)))\" stroke=\"#eee\"/>"
                + "<text x=\"\(c(TimelineReport.plotLeft - 7))\" y=\"\(c(y(v) + 4))\" text-anchor=\"end\">\(String(format: "%.2g", v))</text>\n"
        }
        out += risk.isEmpty ? missing("risk", "stall risk (predictor off?)", top: riskTop, height: riskHeight) : polyline("risk", risk, y: y)
        out += "<text x=\"\(c(TimelineReport.plotLeft - 7))\" y=\"\(c(policyTop + 12))\" text-anchor=\"end\">policy</text>\n"
        if policies.isEmpty {
            out +=
                "<text class=\"missing-text\" id=\"series-policy\" data-series=\"policy\" data-points=\"0\" data-missing=\"true\" x=\"\(c(TimelineReport.plotLeft + 6))\" y=\"\(c(policyTop + 12))\">policy: not in this log</text>\n"
        } else {
            out += "<g id=\"series-policy\" data-series=\"policy\" data-points=\"\(policies.count)\">\n"
            for p in policies {
                let x0 = x(p.start), x1 = x(p.end)
                out +=
                    "<rect data-policy=\"\(esc(p.policy))\" x=\"\(c(x0))\" y=\"\(c(policyTop))\" width=\"\(c(max(1, x1 - x0)))\" height=\"\(c(policyHeight))\" fill=\"\(policyColor(p.policy))\"><title>\(esc(p.policy + String(format: " %.2f–%.2f s", p.start, p.end)))</title></rect>\n"
                if x1 - x0 > 70 {
                    out += "<text x=\"\(c(x0 + 4))\" y=\"\(c(policyTop + 12))\">\(esc(p.policy))</text>\n"
                }
            }
            out += "</g>\n"
        }
        return out
    }
}
