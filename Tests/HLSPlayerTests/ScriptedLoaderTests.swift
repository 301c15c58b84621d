import Foundation
import HLSCore
import HLSNet
import Testing
import TestSupport

@testable import HLSPlayer

/// The real `PlayerSession` — its loader, monitor and decode threads, FFmpeg demux and decode — playing through a
/// scripted loader (the `RequestLoading` seam) instead of libcurl: no socket is opened, and the link is a script.
@Suite(.serialized, .tags(.realTime)) struct ScriptedLoaderTests {
    /// Plays the sample ladder (30 s of media) over a link that drops from 8 to 0.8 Mbit/s after 3 s, while most of
    /// it is still to load.
    @Test func realSession_playsTheLadderThroughAScriptedLoader_withoutSockets() throws {
        let samples = try Repo.requireSamples("ladder-2s")
        let loader = ScriptedLoader(root: samples, link: PiecewiseLink(pieces: [(0, 8_000_000), (3, 800_000)], delaySeconds: 0.01))
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-scripted-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var configuration = PlayerConfiguration(url: URL(string: "http://\(ScriptedLoader.host)/master.m3u8")!)
        configuration.durationLimitSeconds = 24
        // Its own estimate store: a cold start every run, and nothing left in the user's cache.
        configuration.estimateStorePath = dir.appendingPathComponent("estimates.json").path
        let logPath = dir.appendingPathComponent("session.jsonl").path
        let session = try PlayerSession(configuration: configuration, logPath: logPath, harPath: nil, statusLine: false, loader: loader)
        let summary = session.run()

        #expect(summary.exitReason == .durationReached, "summary: \(summary.exitReason) \(summary.error ?? "")")
        #expect(summary.decodedVideoFrames >= 10 * 25, "decoded \(summary.decodedVideoFrames) frames: FFmpeg decoded what the loader served")
        let events = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        func all(_ type: String) -> [[String: Any]] { events.filter { $0["type"] as? String == type } }
        // Every request the session logged went through the loader, and nothing else did.
        let served = loader.requested
        let started = all("request.start").compactMap { $0["url"] as? String }
        #expect(started == served, "the log's requests are the loader's: \(started.count) vs \(served.count)")
        #expect(started.allSatisfy { $0.hasPrefix("http://\(ScriptedLoader.host)/") })
        #expect(all("request.end").allSatisfy { $0["errorKind"] as? String != "nameResolution" }, "no request reached libcurl")
        // The script is what the estimator measured — fast first, then the drop — and the rungs followed it down.
        let decisions: [(t: Double, variant: Int, estimateBps: Double)] = all("abr.decision").compactMap { e in
            guard let t = e["t"] as? Double, let v = (e["decision"] as? [String: Any])?["variantIndex"] as? Int,
                let estimate = (e["inputs"] as? [String: Any])?["estimateBps"] as? Double
            else { return nil }
            return (t, v, estimate)
        }
        print("scripted link, decisions (t, variant, estimate): \(decisions)")
        let beforeDrop = decisions.filter { $0.t < 3 }, afterDrop = decisions.filter { $0.t > 5 }
        let peak = try #require(beforeDrop.map(\.variant).max(), "decisions before the drop")
        let last = try #require(afterDrop.last, "a decision after the drop: \(decisions)")
        let peakEstimate = beforeDrop.map(\.estimateBps).max() ?? 0
        #expect(peakEstimate > 3_000_000, "the 8 Mbit/s part measured: \(decisions)")
        #expect(last.estimateBps < peakEstimate / 2, "the 0.8 Mbit/s part measured (the estimate smooths): \(decisions)")
        #expect(peak >= 1 && last.variant < peak, "down from rung \(peak) after the drop: \(decisions)")
        #expect(summary.segmentsBuffered >= 5)
    }
}

/// The same real `PlayerSession` — loader, monitor and decode threads, FFmpeg demux and decode — on a
/// `DiscreteEventClock`: every wait of the session and of the scripted link is the clock's, so the ladder plays in
/// virtual time, as fast as the threads run, and in one order of their steps that every run repeats.
@Suite(.serialized) struct DiscreteEventSessionTests {
    /// What a session decided, in order, read from its log: the requests (URL and time), the ABR decisions, the
    /// abandons, the cap's moves, the stalls — and every event's type and time.
    struct Decisions: Equatable, CustomStringConvertible {
        var requests: [String] = []
        var abrDecisions: [String] = []
        var abandons: [String] = []
        var capChanges: [String] = []
        var stalls: [Double] = []
        var events: [String] = []
        var description: String {
            "requests \(requests)\nabr \(abrDecisions)\nabandons \(abandons)\ncap \(capChanges)\nstalls \(stalls)"
        }
    }

    struct Played {
        var summary: SessionSummary
        var decisions: Decisions
        var log: [[String: Any]]
        var wallSeconds: Double
        var loader: ScriptedLoader
    }

    static func t(_ e: [String: Any]) -> String { String(format: "%.6f", e["t"] as? Double ?? -1) }

    static func decisions(_ log: [[String: Any]]) -> Decisions {
        var d = Decisions()
        for e in log {
            guard let type = e["type"] as? String, type != "header", type != "summary" else { continue }
            // FFmpeg's log callback is one per process (PlayerSession.routeFFmpegLog): in a test process that decodes
            // other streams in parallel, their warnings reach whichever session installed the sink last. They are not
            // this session's events.
            if type == "error", e["category"] as? String == "ffmpeg" { continue }
            d.events.append("\(type)@\(t(e))")
            switch type {
            case "request.start": d.requests.append("\(t(e)) \(e["url"] as? String ?? "?")")
            case "abr.decision":
                let v = (e["decision"] as? [String: Any])?["variantIndex"] as? Int ?? -1
                d.abrDecisions.append("\(t(e)) v\(v)")
            case "request.end":
                // A request the session cut short (wedged, over-selected, the ABR rule's, the trickle rule's), or a
                // wedged playlist asked for again; not one cut by the session's own end.
                if let reason = e["cancelReason"] as? String, reason != "session-stopping" {
                    d.abandons.append("\(t(e)) \(reason)")
                } else if (e["errorMessage"] as? String)?.hasSuffix("re-requested") == true {
                    d.abandons.append("\(t(e)) wedge-re-request")
                }
            case "cap.change": d.capChanges.append("\(t(e)) \(e["capBps"].map { "\($0)" } ?? "none") \(e["reason"] as? String ?? "?")")
            case "stall.start": d.stalls.append(e["t"] as? Double ?? -1)
            default: break
            }
        }
        return d
    }

    /// Plays `Samples/build/ladder-2s` over `link` on a fresh DiscreteEventClock (`liveWindowSegments`: as a live
    /// stream, `ScriptedLoader`'s window).
    static func play(
        link: any SimulatedLink, liveWindowSegments: Int? = nil, configure: (inout PlayerConfiguration) -> Void = { _ in }
    ) throws -> Played {
        let samples = try Repo.requireSamples("ladder-2s")
        let clock = DiscreteEventClock()
        let loader = ScriptedLoader(root: samples, link: link, clock: clock, liveWindowSegments: liveWindowSegments)
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hlsplay-discrete-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        var configuration = PlayerConfiguration(url: URL(string: "http://\(ScriptedLoader.host)/master.m3u8")!)
        configuration.estimateStorePath = dir.appendingPathComponent("estimates.json").path
        configure(&configuration)
        let logPath = dir.appendingPathComponent("session.jsonl").path
        let session = try PlayerSession(
            configuration: configuration, logPath: logPath, harPath: nil, statusLine: false, loader: loader, clock: clock)
        let wallStart = Date()
        let summary = session.run()
        let wall = Date().timeIntervalSince(wallStart)
        let log = try String(contentsOfFile: logPath, encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        return Played(summary: summary, decisions: decisions(log), log: log, wallSeconds: wall, loader: loader)
    }

    /// The link of the real-time test: 8 Mbit/s, then 0.8 Mbit/s from 3 s on.
    static let dropLink = PiecewiseLink(pieces: [(0, 8_000_000), (3, 800_000)], delaySeconds: 0.01)

    /// The whole ladder (30 s of media) with its drop, decoded: virtual time, the same decisions on every run.
    @Test func realSession_onADiscreteEventClock_playsInVirtualTime_andRepeatsItsDecisionsExactly() throws {
        let first = try Self.play(link: Self.dropLink)
        let second = try Self.play(link: Self.dropLink)
        print("discrete-event session: \(first.summary.sessionSeconds) s of session in \(first.wallSeconds) s wall; \(first.decisions)")

        #expect(first.summary.exitReason == .completed, "\(first.summary.exitReason) \(first.summary.error ?? "")")
        #expect(first.summary.playedSeconds >= 29, "the whole ladder played: \(first.summary.playedSeconds) s")
        #expect(first.summary.decodedVideoFrames >= 29 * 24, "FFmpeg decoded it all: \(first.summary.decodedVideoFrames) frames")
        // The session's time is the link's: over 2 MB at 0.8 Mbit/s after the drop takes far longer than 30 s.
        #expect(first.summary.sessionSeconds >= 30, "session \(first.summary.sessionSeconds) s")
        // Virtual time: no wait sleeps in wall time, so the session takes far less than its own length (a wall-time
        // wait anywhere on the path makes it at least as long; the margin is wide for a loaded machine).
        #expect(first.wallSeconds < first.summary.sessionSeconds / 2, "\(first.wallSeconds) s wall for \(first.summary.sessionSeconds) s")
        let served = first.loader.requested
        let started = first.log.filter { $0["type"] as? String == "request.start" }.compactMap { $0["url"] as? String }
        #expect(started == served, "every request went through the scripted loader")
        // Down from the top after the drop, as on the real-time link.
        let variants = first.decisions.abrDecisions.compactMap { $0.split(separator: "v").last.flatMap { Int($0) } }
        #expect((variants.max() ?? 0) >= 1 && variants.last ?? 99 < variants.max() ?? 0, "\(first.decisions.abrDecisions)")

        // Exactly the same run twice: every decision and every event at the same virtual instant.
        #expect(first.decisions == second.decisions, "first:\n\(first.decisions)\nsecond:\n\(second.decisions)")
        #expect(first.decisions.events == second.decisions.events)
        #expect(first.summary.sessionSeconds == second.summary.sessionSeconds)
        #expect(first.summary.stallCount == second.summary.stallCount)
    }
    /// The live loop and its loader core (`LiveLoaderCore`) in virtual time: the ladder served as a live window of 6
    /// segments that grows to its end, over the link with the drop.
    @Test func liveSession_onADiscreteEventClock_followsTheWindowToItsEnd_andRepeatsItsDecisionsExactly() throws {
        let first = try Self.play(link: Self.dropLink, liveWindowSegments: 6)
        let second = try Self.play(link: Self.dropLink, liveWindowSegments: 6)
        print("discrete-event live session: \(first.summary.sessionSeconds) s of session in \(first.wallSeconds) s wall; \(first.decisions)")
        #expect(first.summary.exitReason == .completed, "\(first.summary.exitReason) \(first.summary.error ?? "")")
        #expect(first.summary.isLive == true)
        #expect(first.wallSeconds < first.summary.sessionSeconds / 2, "\(first.wallSeconds) s wall for \(first.summary.sessionSeconds) s")
        // Live: the variant's playlist was reloaded while the window grew, until it ended.
        let mediaLoads = first.log.filter { $0["type"] as? String == "playlist.loaded" && $0["kind"] as? String == "media" }
        #expect(mediaLoads.count >= 5, "\(mediaLoads.count) media playlist loads")
        #expect(mediaLoads.first?["endList"] as? Bool == false && mediaLoads.last?["endList"] as? Bool == true)
        // From the live start point (three target durations from the end: segment 3 of 0…5) to the last segment,
        // each once and in order, whichever variant loaded it.
        let buffered = first.log.filter { $0["type"] as? String == "segment.buffered" }.compactMap { $0["mediaSequence"] as? Int }
        #expect(buffered == Array(3...14), "\(buffered)")
        // Exactly the same run twice.
        #expect(first.decisions == second.decisions, "first:\n\(first.decisions)\nsecond:\n\(second.decisions)")
        #expect(first.decisions.events == second.decisions.events)
    }
    /// A link that carries nothing from 4.6 to 14 s.
    static let collapseLink = PiecewiseLink(pieces: [(0, 8_000_000), (4.6, 0), (14, 8_000_000)], delaySeconds: 0.01)

    /// The live loader's cuts and the live resync in virtual time: the link carries nothing for 9.4 s of a live
    /// window of 6 segments, from the middle of a top-rung segment on.
    @Test func liveSession_linkCollapse_inVirtualTime_cutsAndRecoversTheSameWayEachRun() throws {
        let first = try Self.play(link: Self.collapseLink, liveWindowSegments: 6)
        let second = try Self.play(link: Self.collapseLink, liveWindowSegments: 6)
        print("discrete-event live collapse: \(first.summary.sessionSeconds) s in \(first.wallSeconds) s wall; \(first.decisions)")
        #expect(first.summary.exitReason == .completed, "\(first.summary.exitReason) \(first.summary.error ?? "")")
        let log = first.log
        func events(_ type: String) -> [[String: Any]] { log.filter { $0["type"] as? String == type } }
        let segmentStarts = events("request.start").filter { $0["purpose"] as? String == "segment" }

        // The segment in flight when the link died is abandoned as over-selected (LiveLoaderCore.transferCancelled),
        // and the next turn decides again for the same segment, on a lower rung.
        let cut = try #require(events("request.end").first { $0["cancelReason"] as? String == "over-selected" })
        let cutID = try #require(cut["requestID"] as? Int)
        let cutStart = try #require(segmentStarts.first { $0["requestID"] as? Int == cutID })
        let next = try #require(segmentStarts.first { ($0["requestID"] as? Int ?? 0) > cutID })
        #expect(next["mediaSequence"] as? Int == cutStart["mediaSequence"] as? Int, "the same segment again")
        #expect((next["variantIndex"] as? Int ?? 99) < (cutStart["variantIndex"] as? Int ?? -1), "on a lower rung")

        // The stall outlasts the live resync's deadline: the loader seeks forward to the live start point
        // (LiveLoaderCore.resyncDecided, moved(to:)), and loading goes on from there.
        let steps = events("live.resync")
        let seek = try #require(steps.first { $0["action"] as? String == "seeked" }, "\(steps)")
        #expect(seek["trigger"] as? String == "long-stall")
        #expect(steps.contains { $0["action"] as? String == "resolved" })
        let to = try #require(seek["toMediaSequence"] as? Int)
        let buffered = events("segment.buffered").compactMap { $0["mediaSequence"] as? Int }
        let seekAt = seek["t"] as? Double ?? .infinity
        let afterSeek = events("segment.buffered").filter { ($0["t"] as? Double ?? 0) > seekAt }.compactMap { $0["mediaSequence"] as? Int }
        #expect(afterSeek.first == to, "\(afterSeek)")
        #expect(buffered == buffered.sorted() && Set(buffered).count == buffered.count, "each segment once, in order: \(buffered)")
        #expect(buffered.last == 14, "to the end of the stream: \(buffered)")

        // Exactly the same run twice.
        #expect(first.decisions == second.decisions, "first:\n\(first.decisions)\nsecond:\n\(second.decisions)")
        #expect(first.decisions.events == second.decisions.events)
    }
}
