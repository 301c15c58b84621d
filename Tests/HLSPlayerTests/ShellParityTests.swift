import Foundation
import HLSCore
import HLSOrigin
import Testing
import TestSupport

@testable import HLSPlayer

/// Parity of the two shells: the same scripted link and ladder through the real `PlayerSession` (its threads and
/// FFmpeg demux, on a DiscreteEventClock, over the scripted loader) and through `VirtualSession` (virtual time over
/// the simulated link) give the same decisions — the variant of every segment request, the abandons, the cap's
/// moves, the stalls — exactly.
@Suite(.serialized) struct ShellParityTests {
    /// Body bytes per progress callback of the scripted loader here. VirtualSession reads a transfer's bytes at the
    /// instant it looks (continuously); the real shell knows what the last progress callback said, as with libcurl,
    /// which reports each socket read. At 16 KB (the scripted loader's default) a callback comes every 0.5 s at
    /// 250 kbit/s, and the in-flight rules of every `--abr` reference rule then abandoned one to three monitor ticks
    /// earlier in the real shell than in the virtual one (the same decisions, later instants; MPC's also differed in
    /// one rung). At 1 KB (32 ms at 250 kbit/s, well inside a 0.25 s tick) every case here agrees to the millisecond.
    static let progressChunkBytes = 1024

    /// The decisions both shells log, without what only one of them has (URL spellings, demux and decode records).
    struct Decisions: Equatable, CustomStringConvertible {
        /// Each segment request: variant and media sequence number.
        var segmentRequests: [String] = []
        /// Each request cut short or failed, with why (the session's own end included).
        var abandons: [String] = []
        /// Each cap.change: the cap and why.
        var capChanges: [String] = []
        /// Each request.trickle: the trickle rule's verdict and reason.
        var trickle: [String] = []
        /// Each policy.change of the policy controller: from, to and why.
        var policyChanges: [String] = []
        /// The errorMessage of each request cut short or failed: one rule writes it for both shells (CutShort).
        var cutMessages: [String] = []
        /// Each playback.threshold: which threshold the stream lowered, from what to what.
        var thresholds: [String] = []
        var stallCount = 0
        /// The same with their times, for the message when they differ.
        var timed: [String] = []
        var description: String {
            "segments \(segmentRequests)\nabandons \(abandons)\ncap \(capChanges)\ntrickle \(trickle)\npolicy \(policyChanges)\ncut messages \(cutMessages)\nthresholds \(thresholds)\nstalls \(stallCount)"
        }
        static func == (a: Self, b: Self) -> Bool {
            (a.segmentRequests, a.abandons, a.capChanges, a.trickle, a.stallCount)
                == (b.segmentRequests, b.abandons, b.capChanges, b.trickle, b.stallCount)
                && (a.policyChanges, a.cutMessages, a.thresholds) == (b.policyChanges, b.cutMessages, b.thresholds)
        }
    }

    static func decisions(_ log: [[String: Any]]) -> Decisions {
        var d = Decisions()
        for e in log {
            let t = String(format: "%.3f", e["t"] as? Double ?? -1)
            switch e["type"] as? String {
            case "playback.threshold":
                let line = "\(e["threshold"] as? String ?? "?") \(e["requestedSeconds"] ?? "?")→\(e["clampedSeconds"] ?? "?")"
                d.thresholds.append(line)
                d.timed.append("\(t) threshold \(line)")
            case "request.start" where e["purpose"] as? String == "segment":
                let line = "v\(e["variantIndex"] as? Int ?? -1)/\(e["mediaSequence"] as? Int ?? -1)"
                d.segmentRequests.append(line)
                d.timed.append("\(t) request \(line)")
            case "request.end" where e["ok"] as? Bool == false:
                // Cut short by the session (why; its own end too: both shells log a request in flight then by one
                // rule, CutShort.sessionStopped), a wedged playlist asked for again, or failed (how).
                var why = e["cancelReason"] as? String ?? e["errorKind"] as? String ?? "?"
                if (e["errorMessage"] as? String)?.hasSuffix("re-requested") == true { why = "wedge-re-request" }
                d.abandons.append(why)
                d.cutMessages.append(e["errorMessage"] as? String ?? "?")
                d.timed.append("\(t) end \(why)")
            case "cap.change":
                let line = "\(e["capBps"].map { "\($0)" } ?? "none") \(e["reason"] as? String ?? "?")"
                d.capChanges.append(line)
                d.timed.append("\(t) cap \(line)")
            case "request.trickle":
                let assessment = e["assessment"] as? [String: Any]
                let line = "\(assessment?["verdict"] as? String ?? "?") \(assessment?["reason"] as? String ?? "?")"
                d.trickle.append(line)
                d.timed.append("\(t) trickle \(line)")
            case "policy.change":
                let line = "\(e["from"] ?? "?")→\(e["to"] ?? "?") \(e["reason"] ?? "?")"
                d.policyChanges.append(line)
                d.timed.append("\(t) policy \(line)")
            case "stall.start":
                d.stallCount += 1
                d.timed.append("\(t) stall")
            default: break
            }
        }
        return d
    }

    static func readLog(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    /// Plays `ladder-2s` over `link` through both shells, demux only (VirtualSession does not decode).
    static func bothShells(
        link: any SimulatedLink, chunkBytes: Int = progressChunkBytes, configure: (inout PlayerConfiguration) -> Void = { _ in }
    ) throws -> (real: Decisions, virtual: Decisions, realSummary: SessionSummary, virtualSummary: SessionSummary) {
        let samples = try Repo.requireSamples("ladder-2s")
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-parity-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var configuration = PlayerConfiguration(url: URL(string: "http://\(ScriptedLoader.host)/master.m3u8")!)
        configuration.decode = false
        configuration.estimateStorePath = dir.appendingPathComponent("estimates.json").path
        configure(&configuration)

        let clock = DiscreteEventClock()
        let realLog = dir.appendingPathComponent("real.jsonl").path
        let real = try PlayerSession(
            configuration: configuration, logPath: realLog, harPath: nil, statusLine: false,
            loader: ScriptedLoader(root: samples, link: link, clock: clock, chunkBytes: chunkBytes), clock: clock,
            hostSignals: NoHostSignals())
        let realSummary = real.run()

        let virtualLog = dir.appendingPathComponent("virtual.jsonl").path
        let virtual = try VirtualSession(
            configuration: configuration, ladder: try SimulatedLadder.load(folder: samples), link: link, linkDescription: "parity",
            logPath: virtualLog)
        let virtualSummary = virtual.run()
        return (decisions(try readLog(realLog)), decisions(try readLog(virtualLog)), realSummary, virtualSummary)
    }

    /// Both shells over `link`: the same exit, the same decisions at the same instants. Returns the real shell's.
    @discardableResult
    static func expectParity(
        _ link: any SimulatedLink, chunkBytes: Int = progressChunkBytes, configure: (inout PlayerConfiguration) -> Void = { _ in },
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> (Decisions, SessionSummary) {
        let (real, virtual, realSummary, virtualSummary) = try bothShells(link: link, chunkBytes: chunkBytes, configure: configure)
        print("parity, real:\n\(real.timed)\nvirtual:\n\(virtual.timed)")
        #expect(realSummary.exitReason == virtualSummary.exitReason, sourceLocation: sourceLocation)
        #expect(real == virtual, "real:\n\(real)\nvirtual:\n\(virtual)", sourceLocation: sourceLocation)
        // And at the same instants, to the millisecond: both shells run on the same virtual time.
        #expect(real.timed == virtual.timed, sourceLocation: sourceLocation)
        #expect(realSummary.stallCount == virtualSummary.stallCount, sourceLocation: sourceLocation)
        return (real, realSummary)
    }

    /// 8 Mbit/s, then 0.8 Mbit/s from 3 s on: up the ladder, then down.
    @Test func dropLink_sameDecisionsInBothShells() throws {
        let (real, summary) = try Self.expectParity(PiecewiseLink(pieces: [(0, 8_000_000), (3, 800_000)], delaySeconds: 0.01))
        #expect(summary.exitReason == .completed)
        #expect(real.segmentRequests.count == 15 && Set(real.segmentRequests.map { $0.prefix(2) }).count >= 2, "up and down: \(real)")
    }

    /// Start and resume thresholds above the whole 30 s VOD: both shells lower them to what is left after the start
    /// (the real one always did; the virtual one since the core owns the ceiling), log it, and play to the end.
    @Test func thresholdsAboveTheVOD_loweredToItsLength_inBothShells() throws {
        let (real, summary) = try Self.expectParity(
            PiecewiseLink(pieces: [(0, 40_000_000)], delaySeconds: 0.01),
            configure: {
                $0.playback.startupBufferSeconds = 45
                $0.playback.resumeBufferSeconds = 45
                $0.startupBufferSetByUser = true
                $0.resumeBufferSetByUser = true
            })
        #expect(summary.exitReason == .completed)
        #expect(real.thresholds.count == 2 && real.thresholds.allSatisfy { $0.contains("45") }, "\(real.thresholds)")
    }

    /// The link goes dead at 0.5 s, while the first up-switch's playlist is on its way, for longer than the
    /// playlist's wedge re-requests and retries last: the wedge rules, then the playlist retry policy, in both.
    /// On the first rule (`--abr hlsplay`), whose up-switch puts a playlist in flight at 0.5 s on this link (the
    /// default rule's is over by 0.35 s: its dead link catches a segment, `deadLinkDuringASegment_…`).
    @Test func deadLinkDuringAPlaylist_sameDecisionsInBothShells() throws {
        let (real, summary) = try Self.expectParity(
            PiecewiseLink(pieces: [(0, 8_000_000), (0.5, 0), (40, 8_000_000)], delaySeconds: 0.01), configure: { $0.abr = .hlsplay })
        #expect(summary.exitReason == .completed)
        #expect(real.abandons.filter { $0 == "wedge-re-request" }.count == PlayerConfiguration(url: URL(string: "x:")!).wedge.maxPlaylistReRequests)
        #expect(real.abandons.count > real.abandons.filter { $0 == "wedge-re-request" }.count, "then the retry policy: \(real)")
    }

    /// The same, the link never back: the playlist retry policy runs out and the session ends in both.
    @Test func linkDeadForGoodDuringAPlaylist_sameDecisionsInBothShells() throws {
        let (real, summary) = try Self.expectParity(
            PiecewiseLink(pieces: [(0, 8_000_000), (0.5, 0)], delaySeconds: 0.01), configure: { $0.abr = .hlsplay })
        #expect(summary.exitReason == .error, "\(summary.exitReason): \(summary.error ?? "")")
        #expect(real.segmentRequests.count == 3)
    }

    /// The default rule on the same dead link: its jump to rung 2 is on its way at 0.5 s, so a segment is caught.
    /// The segment wedge rules (a fresh connection each window, at the bottom rung), then the media retry policy,
    /// in both shells; the link is back only after the retries ran out.
    @Test func deadLinkDuringASegment_sameDecisionsInBothShells() throws {
        let (real, summary) = try Self.expectParity(PiecewiseLink(pieces: [(0, 8_000_000), (0.5, 0), (40, 8_000_000)], delaySeconds: 0.01))
        #expect(summary.exitReason == .error, "\(summary.exitReason): \(summary.error ?? "")")
        #expect(real.abandons.filter { $0 == "wedged" }.count >= 2, "the wedge rule re-requested: \(real)")
        #expect(real.segmentRequests.contains { $0.hasPrefix("v2/") }, "the default rule's jump was the request caught: \(real)")
    }

    /// `--duration` reached with a segment in flight on a slow link: both shells cut it by one rule
    /// (CutShort.sessionStopped), at the same instant, and end the same way.
    @Test func durationReachedMidRequest_theCutIsTheSameInBothShells() throws {
        let (real, summary) = try Self.expectParity(
            PiecewiseLink(pieces: [(0, 8_000_000), (3, 1_000_000)], delaySeconds: 0.01), configure: { $0.durationLimitSeconds = 8 })
        #expect(summary.exitReason == .durationReached)
        #expect(real.abandons.last == "session-stopping", "a request was in flight at the end: \(real)")
        #expect(real.cutMessages.last == "cancelled: the session stopped")
    }

    /// 8 Mbit/s, then 0.25 Mbit/s from 3 s to 20 s, then 8 again: below the lowest rung for a while.
    @Test func deepDropLink_sameDecisionsInBothShells() throws {
        let (real, summary) = try Self.expectParity(PiecewiseLink(pieces: [(0, 8_000_000), (3, 250_000), (20, 8_000_000)], delaySeconds: 0.01))
        #expect(summary.exitReason == .completed)
        #expect(real.abandons.contains("over-selected") && real.stallCount >= 1, "an abandon and a stall to compare: \(real)")
    }

    /// The policy controller (off by default) in both shells: its risk samples, policy changes and knobs are the
    /// core's decisions, so a predictor that acts gives the same decisions in both, over the deep drop and a measured
    /// mobile trace. The real shell reads no host pressure here (NoHostSignals): with the host's, the heuristic's
    /// device penalty followed this machine's CPU pressure and moved its policy changes by up to 0.75 s.
    @Test(arguments: [PredictorChoice.model, .heuristic, .threshold])
    func policyController_sameDecisionsInBothShells(predictor: PredictorChoice) throws {
        let drop = PiecewiseLink(pieces: [(0, 8_000_000), (3, 250_000), (20, 8_000_000)], delaySeconds: 0.01)
        let (real, summary) = try Self.expectParity(drop) { $0.predictor = predictor }
        #expect(summary.predictor != nil, "\(predictor): the controller ran")
        #expect(!real.policyChanges.isEmpty, "\(predictor): a policy change to compare: \(real)")
        _ = try Self.expectParity(try Self.trace("pensieve/hsdpa_norway/norway_bus_1")) { $0.predictor = predictor }
    }

    /// Every ABR rule over the deep drop (BOLA-E's and DYNAMIC's own abandonment included).
    @Test(arguments: AbrRuleName.allCases.filter { $0 != .hlsplay })
    func everyAbrRule_deepDropLink_sameDecisionsInBothShells(rule: AbrRuleName) throws {
        let link = PiecewiseLink(pieces: [(0, 8_000_000), (3, 250_000), (20, 8_000_000)], delaySeconds: 0.01)
        let (real, _) = try Self.expectParity(link) { $0.abr = rule }
        #expect(real.segmentRequests.count >= 15, "\(rule): \(real)")
    }

    /// BOLA-E on `norway_car_7`: the real shell's BOLA-E kept planning with the 6 s default segment duration of
    /// its first decision (taken before any media playlist) for the whole session, where the virtual shell's knew
    /// the ladder's 2 s from the start; at 9.78 s its insufficient-buffer rule chose rung 0 for segment 10 on the
    /// same logged inputs on which the virtual shell chose rung 1. BOLA-E now plans with the duration known at
    /// each decision.
    @Test func bolaE_norwayCar7_sameDecisionsInBothShells() throws {
        let url = Repo.sharedData.appendingPathComponent("traces/pensieve/hsdpa_norway/norway_car_7")
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw TestSetupError("trace \(url.path) is missing: expected <repo>/../shared/data/traces (see its README.md)")
        }
        let link = TraceLink(schedule: LinkSchedule(trace: try ThroughputTrace.load(contentsOf: url)))
        let (real, _) = try Self.expectParity(link) { $0.abr = .bolaE }
        #expect(real.segmentRequests.contains("v1/10"), "\(real)")
    }

    static func trace(_ path: String) throws -> TraceLink {
        let url = Repo.sharedData.appendingPathComponent("traces/\(path)")
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw TestSetupError("trace \(url.path) is missing: expected <repo>/../shared/data/traces (see its README.md)")
        }
        return TraceLink(schedule: LinkSchedule(trace: try ThroughputTrace.load(contentsOf: url)))
    }

    /// Body bytes per progress callback of the scripted loader for the trickle cases. These traces fall to 2–12
    /// kbit/s, where a 1 KB callback comes every 0.7–4 s: the real shell then saw silences the virtual one (which
    /// reads bytes continuously) did not — going quiet for the trickle rule's 1 s idle bound, wedged for the 3 s
    /// window — and judged on a first byte and rates up to a kilobyte late. At 128 bytes both shells agree.
    static let trickleChunkBytes = 128

    /// The trickle rule in both shells (SessionCore.judgeInFlight, docs/startup-cap.md §4b). The rule ran on
    /// PlayerSession's monitor alone, and a sweep of every trace with every rule differed between the shells on
    /// these two traces only (16 of 448 pairs): the virtual shell waited where the real one re-requested. Now it is
    /// the core's: on the 3G HSDPA report the first segment trickles past the rule's patience — re-requested on
    /// a fresh connection, then failed, the session ending — and on Verizon's EVDO drive a segment is waited for
    /// over its budget (logged), the same judgements at the same instants in both. On the EVDO drive the policy
    /// controller decides which: with it (`--predictor model`) the segment is waited for and the session completes;
    /// without it (the default) a stall is followed by a segment that trickles past the rule's patience,
    /// is re-requested and fails — again the same in both shells.
    @Test(
        arguments: ["mahimahi/Verizon-EVDO-driving.down", "sabre/3G_hsdpa_norway/report.2011-02-01_1000CET.json"],
        [AbrRuleName.hlsplay, .bolaE])
    func trickleRule_sameJudgementsInBothShells(trace path: String, rule: AbrRuleName) throws {
        for predictor in [PredictorChoice.model, .off] {
            let (real, summary) = try Self.expectParity(try Self.trace(path), chunkBytes: Self.trickleChunkBytes) {
                $0.abr = rule
                $0.predictor = predictor
            }
            if path.hasPrefix("sabre") {
                #expect(real.trickle == ["re-request over-patience", "fail over-patience"], "\(predictor): \(real)")
                #expect(real.abandons == ["trickle-re-request", "trickle-failed"], "\(predictor): \(real)")
                #expect(summary.exitReason == .error)
            } else if predictor == .model {
                #expect(real.trickle == ["healthy over-budget-within-patience"], "\(real)")
                #expect(summary.exitReason == .completed)
            } else {
                // Waited for over budget, then past the rule's patience: re-requested, and failed.
                #expect(real.trickle.first == "healthy over-budget-within-patience", "\(real)")
                #expect(real.trickle.contains("re-request over-patience") && real.trickle.last == "fail over-patience", "\(real)")
                #expect(real.abandons == ["trickle-re-request", "trickle-failed"], "\(real)")
                #expect(summary.exitReason == .error)
            }
        }
    }

    /// Measured mobile links (HSDPA, Norway; ../shared/data/traces, Pensieve's copy), looped as hls-origin loops
    /// them, with each piece's own latency before a response's first byte: three traces, hlsplay's rule and BOLA-E.
    @Test(arguments: ["norway_bus_1", "norway_car_12", "norway_bus_11"], [AbrRuleName.hlsplay, .bolaE])
    func measuredTraces_sameDecisionsInBothShells(trace name: String, rule: AbrRuleName) throws {
        let url = Repo.sharedData.appendingPathComponent("traces/pensieve/hsdpa_norway/\(name)")
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw TestSetupError("trace \(url.path) is missing: expected <repo>/../shared/data/traces (see its README.md)")
        }
        let link = TraceLink(schedule: LinkSchedule(trace: try ThroughputTrace.load(contentsOf: url)))
        let (real, _) = try Self.expectParity(link) { $0.abr = rule }
        #expect(real.segmentRequests.count >= 15, "\(name) \(rule): \(real)")
    }
}

/// A measured trace as hls-origin plays it (LinkSchedule: looped, one FIFO bottleneck), each piece's latency
/// before a response's first byte — as `hlsplay simulate --trace` models it.
struct TraceLink: SimulatedLink {
    let schedule: LinkSchedule
    func capacityBytes(until t: Double) -> Double { schedule.capacityBytes(until: t) }
    func time(whenCapacityReaches bytes: Double) -> Double? { schedule.time(whenCapacityReaches: bytes) }
    func firstByteDelaySeconds(at t: Double) -> Double { schedule.trace.piece(at: t).latencySeconds ?? 0 }
}
