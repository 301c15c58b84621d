// `hlsplay simulate LADDER --trace FILE [options]`: one session in virtual
// time (HLSPlayer's VirtualSession) — the player's decision code against a
// trace-driven link and the ladder's real segment sizes, with the link model
// hls-origin uses to replay the same trace.

import Foundation
import HLSCore
import HLSOrigin
import HLSPlayer

enum SimulateCommand {
    static let usage = """
        usage: hlsplay simulate LADDER --trace FILE [--trace-format F] [--rtt SECONDS]
                                [--log FILE] [--json] [player options]

        Plays a VOD ladder in virtual time: the estimator, variant selector,
        startup/recovery cap, byte-progress rules, media clock, stall predictor and
        policy controller of a real session, against the throughput trace looped
        on one link (as 'hls-origin --trace' serves it) and the ladder's real
        segment sizes. Demux-only semantics: a segment plays once its last byte is
        in. Writes the same session log as a real session (its header carries
        "simulation"), many times faster than real time.

        LADDER is a folder with master.m3u8, or a multivariant playlist file.

          --trace FILE          throughput trace, looped from session start
          --trace-format F      mahimahi | pensieve | sabre (default: detect)
          --rtt SECONDS         first-byte delay of every response (default: the
                                trace's latency_ms where it has one, else 0)

        player options (as for a real session): --duration, --log, --json,
        --predictor, --model, --abr, --forward-buffer, --startup-buffer, --resume-buffer,
        --peak-bitrate, --variant, --startup-cap, --cap-release-buffer, --mpc-reserve,
        --monitor-interval.
        A simulated session always starts cold (there is no estimate store).

        exit status: 0 played; 64 usage error; 65 invalid ladder or trace;
        66 unreadable ladder or trace; 69 the session ended in an error;
        73 cannot create the log.
        """

    /// Options of a real session that mean nothing in virtual time.
    static let refused: Set<String> = [
        "--then", "--sessions", "--ramp", "--har", "--cmcd", "--audio-lang", "--insecure", "-k", "--cacert",
        "--estimate-store", "--cold", "--no-decode", "--decode-threads", "--first-byte-timeout",
        "--stall-timeout", "--status", "--no-status", "--no-redact", "--headless"
    ]

    static func run(_ argv: [String]) -> Int32 {
        func usageError(_ message: String) -> Int32 {
            Console.error("hlsplay simulate: \(message)", text: StandardStreams.outgoing)
            Console.error("Try 'hlsplay simulate --help'.", text: StandardStreams.outgoing)
            return 64
        }
        var tracePath: String?
        var traceFormat: TraceFormat?
        var rttSeconds: Double?
        var rest: [String] = []
        var words = OptionWords(argv)
        do {
            while let word = try words.next() {
                switch word {
                case "-h", "--help":
                    StandardStreams.print(usage)
                    return 0
                case "--trace":
                    tracePath = try words.value(for: word)
                case "--trace-format":
                    let value = try words.value(for: word)
                    guard let f = TraceFormat(rawValue: value.lowercased()) else {
                        return usageError("--trace-format: '\(value)' is not one of \(TraceFormat.allCases.map(\.rawValue).joined(separator: ", "))")
                    }
                    traceFormat = f
                case "--rtt":
                    let value = try words.value(for: word)
                    guard let v = OptionValue.seconds(value), v <= Arguments.maxOptionSeconds else {
                        return usageError("--rtt: '\(value)' is not a duration ≥ 0 and ≤ 1e9 s (e.g. 0.05, 50ms)")
                    }
                    rttSeconds = v
                default:
                    if words.isOption(word) && refused.contains(word) { return usageError("'\(word)' does not apply to a simulated session") }
                    // An operand after `--` that looks like an option stays an operand for the player's parser.
                    if !words.isOption(word), word.hasPrefix("-"), word != "-", !rest.contains("--") { rest.append("--") }
                    // Everything else is the player's (values included, as separate words or after `=`).
                    rest.append(words.passOn())
                }
            }
        } catch {
            return usageError(error.message)
        }
        let arguments: Arguments
        do {
            arguments = try Arguments.parse(rest)
        } catch {
            return usageError(error.message)
        }
        guard let ladderPath = arguments.url else { return usageError("missing the ladder (a folder with master.m3u8)") }
        guard let tracePath else { return usageError("missing '--trace FILE'") }

        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: ladderPath, isDirectory: &isDirectory) else {
            return failure("cannot read '\(ladderPath)': no such file or folder", status: 66)
        }
        let folder = isDirectory.boolValue ? URL(fileURLWithPath: ladderPath) : URL(fileURLWithPath: ladderPath).deletingLastPathComponent()
        let multivariant = isDirectory.boolValue ? "master.m3u8" : URL(fileURLWithPath: ladderPath).lastPathComponent
        let ladder: SimulatedLadder
        do {
            ladder = try SimulatedLadder.load(folder: folder, multivariant: multivariant)
        } catch {
            return failure("\(error)", status: 65)
        }
        guard FileManager.default.fileExists(atPath: tracePath) else {
            return failure("cannot read '\(tracePath)': no such file", status: 66)
        }
        let trace: ThroughputTrace
        do {
            trace = try ThroughputTrace.load(contentsOf: URL(fileURLWithPath: tracePath), format: traceFormat)
        } catch {
            return failure("'\(tracePath)' is not a usable trace: \(error)", status: 65)
        }
        let link = ScheduleLink(schedule: LinkSchedule(trace: trace), rttSeconds: rttSeconds)
        var configuration = arguments.configuration(for: folder.appendingPathComponent(multivariant))
        configuration.decode = false
        configuration.forceCold = true
        let linkDescription =
            "trace=\(trace.name) mean=\(Int(trace.meanBitsPerSecond))bps"
            + (rttSeconds.map { " rtt=\($0)s" } ?? " rtt=trace latency")
        let session: VirtualSession
        do {
            session = try VirtualSession(
                configuration: configuration, ladder: ladder, link: link, linkDescription: linkDescription,
                logPath: arguments.logPath)
        } catch {
            return failure("\(error)", status: 73)
        }
        let summary = session.run()
        guard StandardStreams.printSummary(summary, json: arguments.json, logOnStandardOutput: arguments.logPath == "-") else {
            return StandardStreams.outputFailedStatus
        }
        if summary.exitReason == .error {
            return failure("error: \(summary.error ?? "unknown error")", status: 69)
        }
        return 0
    }

    private static func failure(_ message: String, status: Int32) -> Int32 {
        Console.error("hlsplay simulate: \(message)", text: StandardStreams.outgoing)
        return status
    }
}

/// hls-origin's link (a looped trace on one FIFO bottleneck) for the simulator:
/// the same LinkSchedule arithmetic, and the same first-byte delay rule
/// (a fixed RTT if given, else the trace's own latency).
struct ScheduleLink: SimulatedLink {
    let schedule: LinkSchedule
    let rttSeconds: Double?

    func capacityBytes(until t: Double) -> Double { schedule.capacityBytes(until: t) }
    func time(whenCapacityReaches bytes: Double) -> Double? { schedule.time(whenCapacityReaches: bytes) }
    func firstByteDelaySeconds(at t: Double) -> Double {
        if let rttSeconds, rttSeconds > 0 { return rttSeconds }
        return schedule.trace.piece(at: t).latencySeconds ?? 0
    }
}
