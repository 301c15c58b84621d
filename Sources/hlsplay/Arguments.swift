// Hand-made command-line parsing on the grammar every command shares (HLSCore's
// OptionWords and OptionValue: `--opt value` or `--opt=value`, durations such as
// 2.5, 2s, 500ms): match words to options, validate values, then run. A usage
// error (HLSCore's UsageError) names the word at fault and exits 64 (EX_USAGE).

import Foundation
import HLSCore
import HLSPlayer

struct Arguments {
    /// The largest value a seconds option takes (about 31.7 years): far beyond any session, and
    /// small enough that nanoseconds of it fit the timers' Int64 (a larger one trapped in Dispatch).
    static let maxOptionSeconds = 1e9

    var url: String?
    var headless = false
    var durationSeconds: Double?
    var json = false
    var logPath: String?
    var harPath: String?
    var forwardBufferSeconds: Double?
    var peakBitRateBps: Int?
    var variantIndex: Int?
    var audioLanguage: String?
    var startupBufferSeconds: Double?
    var resumeBufferSeconds: Double?
    var monitorIntervalSeconds: Double?
    var decodeThreads: Int?
    var firstByteTimeoutSeconds: Double?
    var stallTimeoutSeconds: Double?
    /// `--no-progress-timeout`: nil = the default; 0 = off.
    var noProgressTimeoutSeconds: Double?
    var startupCap: String?
    /// `--cap-release-buffer`: nil = the default; 0 = off (the ramp ends only when earned).
    var capReleaseBufferSeconds: Double?
    /// `--mpc-reserve`: nil = the default (`RiskAwareMPC.defaultReserveSeconds`); 0 = off.
    var mpcReserveSeconds: Double?
    var cold = false
    var estimateStorePath: String?
    var thenURL: String?
    var predictor: String?
    var abr: String?
    var modelPath: String?
    var policy: PolicyController.Configuration?
    var cmcd: String?
    var noRedact = false
    var sessions = 1
    var rampSeconds = 0.0
    var noDecode = false
    var insecure = false
    /// `--cacert`: the CA certificates (PEM) that verify TLS peers instead of the system's.
    var caCertificateFile: String?
    var headers: [UserHeader] = []
    var userAgent: String?
    var proxy: String?
    var status: Bool?
    /// `--max-resolution`: nil = the default; .some(nil) = none.
    var maxResolution: ResolutionLimit??
    /// `--max-buffer-bytes`: nil = the default; 0 = none.
    var maxBufferBytes: Int?
    var allowAnyLocalFile = false
    var help = false
    var version = false

    static let usage = """
        usage: hlsplay [URL] --headless [options]
               hlsplay check [--json] URL|FILE... (validate a stream or parse playlists; 'hlsplay check --help')
               hlsplay report LOG... --html OUT.html (timeline page of session logs; 'hlsplay report --help')
               hlsplay simulate LADDER --trace FILE (one session in virtual time; see 'hlsplay simulate --help')

        Plays an HLS stream headlessly and reports the truth about startup and stalls.
        With no URL, plays the embedded sample ladder from a loopback origin that
        hlsplay starts itself.

        options (each as '--opt value' or '--opt=value'; '--' ends them; SECONDS may
        carry a unit: 2.5, 2s, 500ms, 1.5min; RATE: 3000000, 3000k, 3m, 3mbit):
          --headless                 run without video output (the only mode)
          --duration SECONDS         stop after this much media has played
          --json                     print the summary as one JSON object on stdout
          --log FILE                 write the JSON Lines session log to FILE (- : standard
                                     output; the summary then goes to stderr)
          --har FILE                 write the requests as HAR 1.2 to FILE
          --forward-buffer SECONDS   preferredForwardBufferDuration (0 = automatic, 30 s;
                                     never below the resume buffer)
          --peak-bitrate RATE        preferredPeakBitRate, e.g. 3000000, 3000k, 3m
          --variant INDEX            always play this variant of the multivariant playlist
          --audio-lang LANG          prefer the alternate audio rendition with this LANGUAGE
                                     (e.g. fr; default: the group's DEFAULT=YES rendition)
          --startup-buffer SECONDS   buffer needed to start playing (default 2)
          --resume-buffer SECONDS    buffer needed to resume after a stall (default 4)
          --monitor-interval SECONDS period of the wall-clock monitor (default 0.25)
          --decode-threads N         decoder threads per track, at most 16 (default 1; 0 = FFmpeg's
                                     choice); each thread holds a picture of its own
          --max-resolution WxH|none  the largest picture decoded, either orientation (default
                                     8192x4320): rungs whose RESOLUTION is larger are not chosen;
                                     media that is larger ends the session (exit 65)
          --max-buffer-bytes SIZE|none  stop loading ahead while the buffered packets would
                                     exceed SIZE, e.g. 256m (default; k, m, g: KiB, MiB, GiB);
                                     never below the start/resume buffer
          --allow-any-local-file     a playlist given as a path may name local files outside
                                     its own directory (default: refused, exit 65)
          --first-byte-timeout SECONDS  a request with no response byte by then is retried (default 10)
          --stall-timeout SECONDS    a request with no new byte for this long is retried (default 10)
          --no-progress-timeout SECONDS|off  end the session (exit 75) when no new media
                                     arrives or plays for this long: neither new bytes nor the
                                     media clock move (default 60; 0 or off: never)
          --startup-cap MODE         auto (default: no cap when a fresh estimate is stored,
                                     else probe the lowest rung and ramp on evidence),
                                     off, or first-variant (startsOnFirstEligibleVariant)
          --cap-release-buffer SECONDS|off  the startup cap's ramp ends once the forward
                                     buffer holds this much media (default 20; off: only
                                     when deliveries earn each rung)
          --cold                     ignore the estimate store: a true cold start
          --estimate-store FILE      the estimate store (default ~/.cache/hlsplay/estimates.json)
          --then URL2                afterwards play URL2 in the same process (a channel
                                     change, warm); its log goes to FILE-2.jsonl / -2.har
          --predictor NAME           stall-risk predictor for the playback policy controller:
                                     off (the default: no controller), model
                                     (models/stall-logistic-v2.json), heuristic, or
                                     threshold (buffer < 2 s)
          --model FILE               the stall model file for --predictor model (implies it)
          --abr NAME                 adaptation rule: hlsplay-mpc (the default: MPC with a
                                     sustain floor, priced with the stall predictor's
                                     risk when --predictor is on), hlsplay (the first
                                     rule), throughput, bola, bola-e, dynamic, mpc,
                                     robust-mpc, or hlsplay-mpc-no-risk (the default
                                     without the risk: an ablation); the caps still
                                     bind (docs/abr.md)
          --mpc-reserve SECONDS|off  hlsplay-mpc's buffer reserve: a plan ending below
                                     min(buffer, reserve) pays for the shortfall, and the
                                     sustain floor spends no buffer below it (default 10;
                                     off: none)
          --policy FILE              the policy controller's thresholds, cooldown, dwell and
                                     knobs as JSON (any subset; docs/stall-prediction.md)
          --cmcd query|header        send CMCD (CTA-5004) with every request
          --sessions N               run N independent sessions in this process and print
                                     an aggregate summary (logs go to FILE-1 ... FILE-N)
          --ramp SECONDS             stagger the sessions' starts over this long
          --no-decode                demux only, no decoding (load generation); the first
                                     demuxed video packet stands in for the first frame
          --no-redact                write URLs whole (default: credentials, query values and
                                     fragments of every URL are replaced by REDACTED in the
                                     log, HAR, summary and messages, wherever they appear)
          --header 'NAME: VALUE'     add a header to every request ('HOST/NAME: VALUE': only to
                                     HOST's); repeatable. Values are never logged (REDACTED)
          --cookie 'A=1; B=2'        send these cookies (a Cookie header; 'HOST/A=1': to HOST only)
          --user-agent TEXT          the User-Agent (default hlsplay/VERSION)
          --referer URL              send a Referer header
          --proxy URL                every request through this proxy (http://host:3128,
                                     socks5h://host:1080); default: libcurl's http_proxy,
                                     https_proxy and no_proxy environment variables
          --cacert FILE              verify TLS peers with the CA certificates (PEM) in FILE
                                     instead of the system's (a private CA, as curl --cacert)
          -k, --insecure             do not verify TLS certificates and host names
          --status / --no-status     force the live status line on stderr on or off
                                     (default: on when stderr is a terminal)
          --version                  print the version and exit
          --help                     print this help and exit

        exit status: 0 played to the end or for --duration; 64 usage error;
        65 malformed playlist or media; 66 an input file cannot be read (check,
        report, simulate); 69 network failure; 70 internal error; 73 cannot create
        an output file; 74 an output was lost (a log or HAR write failed, or stdout
        is closed or its reader went away); 75 no progress for
        --no-progress-timeout; 130 interrupted (SIGINT); 143 terminated (SIGTERM).
        Both signals still write the log and summary.
        """

    static func parse(_ argv: [String]) throws(UsageError) -> Arguments {
        var a = Arguments()
        var words = OptionWords(argv)
        func value(for option: String) throws(UsageError) -> String {
            try words.value(for: option)
        }
        /// A duration (bounded by maxOptionSeconds); with `offAllowed`, also `off`, returned as 0 (which each such
        /// option reads as its own "off").
        func seconds(
            _ option: String, allowZero: Bool = true, offAllowed: Bool = false, example: String = "2.5, 2s, 500ms"
        ) throws(UsageError) -> Double {
            let word = try value(for: option)
            if offAllowed, word == "off" { return 0 }
            guard let v = OptionValue.seconds(word), v > 0 || (allowZero && v == 0), v <= Self.maxOptionSeconds else {
                throw UsageError(
                    message:
                        "\(option): '\(word)' is not a duration\(allowZero ? " ≥ 0" : " > 0") and ≤ 1e9 s (e.g. \(example))\(offAllowed ? " or 'off'" : "")"
                )
            }
            return v
        }
        while let word = try words.next() {
            switch word {
            case "--headless": a.headless = true
            case "--json": a.json = true
            case "--help", "-h": a.help = true
            case "--version": a.version = true
            case "--insecure", "-k": a.insecure = true
            case "--cacert":
                let w = try value(for: word)
                // Read now, so a typo is a usage error before anything runs, not a TLS failure later.
                guard let pem = FileManager.default.contents(atPath: w), !pem.isEmpty else {
                    throw UsageError(message: "--cacert: cannot read a CA certificate file at '\(w)'")
                }
                guard String(decoding: pem, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
                    throw UsageError(message: "--cacert: '\(w)' holds no PEM certificate (-----BEGIN CERTIFICATE-----)")
                }
                a.caCertificateFile = w
            case "--header":
                let w = try value(for: word)
                do {
                    a.headers.append(try UserHeader.parse(w))
                } catch {
                    throw UsageError(message: "--header: \(error.description)")
                }
            case "--cookie":
                let w = try value(for: word)
                guard let header = UserHeader.shorthand(.cookie, w) else {
                    throw UsageError(message: "--cookie: '\(w)' is not cookies 'NAME=VALUE; NAME2=VALUE2' (optionally 'HOST/NAME=VALUE')")
                }
                a.headers.append(header)
            case "--referer":
                let w = try value(for: word)
                guard let header = UserHeader.shorthand(.referer, w) else { throw UsageError(message: "--referer: '\(w)' is not a URL on one line") }
                a.headers.append(header)
            case "--user-agent":
                let w = try value(for: word)
                guard let header = UserHeader.shorthand(.userAgent, w) else {
                    throw UsageError(message: "--user-agent: '\(w)' is not a one-line User-Agent")
                }
                a.userAgent = header.value
            case "--proxy":
                let w = try value(for: word)
                guard !w.isEmpty, !w.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) else {
                    throw UsageError(message: "--proxy: '\(w)' is not a proxy URL (e.g. http://127.0.0.1:3128, socks5h://host:1080)")
                }
                a.proxy = w
            case "--cold": a.cold = true
            case "--no-redact": a.noRedact = true
            case "--no-decode": a.noDecode = true
            case "--allow-any-local-file": a.allowAnyLocalFile = true
            case "--max-resolution":
                let w = try value(for: word)
                if w == "none" {
                    a.maxResolution = .some(nil)
                } else {
                    guard let limit = ResolutionLimit(parsing: w) else {
                        throw UsageError(message: "--max-resolution: '\(w)' is not a resolution WxH (e.g. 3840x2160) or 'none'")
                    }
                    a.maxResolution = .some(limit)
                }
            case "--max-buffer-bytes":
                let w = try value(for: word)
                if w == "none" {
                    a.maxBufferBytes = 0
                } else {
                    guard let bytes = parseByteSize(w), bytes > 0 else {
                        throw UsageError(message: "--max-buffer-bytes: '\(w)' is not a size in bytes > 0 (e.g. 268435456, 256m, 1g) or 'none'")
                    }
                    a.maxBufferBytes = bytes
                }
            case "--ramp": a.rampSeconds = try seconds(word)
            case "--sessions":
                let w = try value(for: word)
                guard let n = Int(w), n >= 1, n <= 10_000 else { throw UsageError(message: "--sessions: '\(w)' is not a session count (1-10000)") }
                a.sessions = n
            case "--estimate-store": a.estimateStorePath = try value(for: word)
            case "--then": a.thenURL = try value(for: word)
            case "--model": a.modelPath = try value(for: word)
            case "--policy":
                let path = try value(for: word)
                do { a.policy = try PolicyController.Configuration.load(jsonFile: path) } catch {
                    throw UsageError(message: "--policy: \(error.description)")
                }
            case "--cmcd":
                let w = try value(for: word)
                guard ["query", "header"].contains(w) else { throw UsageError(message: "--cmcd: '\(w)' is not one of query, header") }
                a.cmcd = w
            case "--predictor":
                let w = try value(for: word)
                guard ["model", "heuristic", "threshold", "off"].contains(w) else {
                    throw UsageError(message: "--predictor: '\(w)' is not one of model, heuristic, threshold, off")
                }
                a.predictor = w
            case "--abr":
                let w = try value(for: word)
                guard AbrRuleName(rawValue: w) != nil else {
                    throw UsageError(
                        message: "--abr: '\(w)' is not one of \(AbrRuleName.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                a.abr = w
            case "--startup-cap":
                let w = try value(for: word)
                guard ["auto", "off", "first-variant"].contains(w) else {
                    throw UsageError(message: "--startup-cap: '\(w)' is not one of auto, off, first-variant")
                }
                a.startupCap = w
            case "--status": a.status = true
            case "--no-status": a.status = false
            case "--duration": a.durationSeconds = try seconds(word, allowZero: false)
            case "--log": a.logPath = try value(for: word)
            case "--har": a.harPath = try value(for: word)
            case "--forward-buffer": a.forwardBufferSeconds = try seconds(word)
            case "--startup-buffer": a.startupBufferSeconds = try seconds(word)
            case "--resume-buffer": a.resumeBufferSeconds = try seconds(word)
            case "--monitor-interval": a.monitorIntervalSeconds = try seconds(word, allowZero: false)
            case "--first-byte-timeout": a.firstByteTimeoutSeconds = try seconds(word, allowZero: false)
            case "--stall-timeout": a.stallTimeoutSeconds = try seconds(word, allowZero: false)
            case "--no-progress-timeout": a.noProgressTimeoutSeconds = try seconds(word, offAllowed: true, example: "60, 90s, 2min")
            case "--cap-release-buffer": a.capReleaseBufferSeconds = try seconds(word, allowZero: false, offAllowed: true, example: "20, 20s")
            case "--mpc-reserve": a.mpcReserveSeconds = try seconds(word, allowZero: false, offAllowed: true, example: "15, 15s")
            case "--peak-bitrate":
                let w = try value(for: word)
                guard let bps = parseRate(w), bps > 0 else {
                    throw UsageError(message: "--peak-bitrate: '\(w)' is not a bit rate (e.g. 3000000, 3000k, 3m)")
                }
                a.peakBitRateBps = bps
            case "--decode-threads":
                let w = try value(for: word)
                let most = PlayerConfiguration.maxDecodeThreadCount
                guard let v = Int(w), v >= 0, v <= most else {
                    throw UsageError(message: "--decode-threads: '\(w)' is not a thread count (0-\(most))")
                }
                a.decodeThreads = v
            case "--variant":
                let w = try value(for: word)
                guard let v = Int(w), v >= 0 else { throw UsageError(message: "--variant: '\(w)' is not a variant index (0, 1, ...)") }
                a.variantIndex = v
            case "--audio-lang":
                let w = try value(for: word)
                guard !w.isEmpty, w.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
                    throw UsageError(message: "--audio-lang: '\(w)' is not a language tag (e.g. en, fr, pt-BR)")
                }
                a.audioLanguage = w
            default:
                if words.isOption(word) {
                    throw UsageError(message: "unknown option '\(words.current)'")
                }
                if a.url != nil {
                    throw UsageError(message: "unexpected argument '\(word)' (the URL is already '\(a.url!)')")
                }
                a.url = word
            }
        }
        // The policy controller is off by default; a flag that only means something with it must not be dropped silently.
        if a.modelPath != nil {
            // A model file asks for the model.
            if a.predictor == nil { a.predictor = "model" }
            guard a.predictor == "model" else {
                throw UsageError(message: "--model FILE is the stall model of --predictor model; --predictor \(a.predictor!) takes none")
            }
        }
        if a.policy != nil, a.predictor == nil || a.predictor == "off" {
            let why = a.predictor == nil ? "by default" : "with --predictor off"
            throw UsageError(
                message: "--policy FILE tunes the policy controller, which is off \(why): add --predictor model (or heuristic, threshold)")
        }
        if a.logPath == "-" && (a.sessions > 1 || a.thenURL != nil) {
            throw UsageError(message: "--log -: standard output can take one session's log, and --sessions or --then makes several; name a file")
        }
        if a.harPath == "-" {
            throw UsageError(message: "--har -: the HAR is one JSON document written when the session ends; name a file")
        }
        return a
    }

    /// "268435456", "262144k", "256m", "0.25g" → bytes (k, m, g: powers of 1024); nil if not a size.
    static func parseByteSize(_ s: String) -> Int? { OptionValue.bytes(s) }

    /// "3000000", "3000k", "3m", "3mbit", "2.5M" → bits per second.
    static func parseRate(_ s: String) -> Int? {
        guard let bps = OptionValue.bitsPerSecond(s), bps < Double(Int.max) else { return nil }
        return Int(bps.rounded())
    }
}

extension Arguments {
    /// The session configuration these options ask for.
    func configuration(for url: URL) -> PlayerConfiguration {
        var configuration = PlayerConfiguration(url: url)
        configuration.durationLimitSeconds = durationSeconds
        if let v = forwardBufferSeconds { configuration.preferredForwardBufferDurationSeconds = v }
        configuration.preferredPeakBitRateBps = peakBitRateBps
        configuration.pinnedVariantIndex = variantIndex
        configuration.audioLanguage = audioLanguage
        if let v = startupBufferSeconds {
            configuration.playback.startupBufferSeconds = v
            configuration.startupBufferSetByUser = true
        }
        if let v = resumeBufferSeconds {
            configuration.playback.resumeBufferSeconds = v
            configuration.resumeBufferSetByUser = true
        }
        if let v = monitorIntervalSeconds { configuration.monitorIntervalSeconds = v }
        if let v = decodeThreads { configuration.decodeThreadCount = v }
        if let v = firstByteTimeoutSeconds { configuration.firstByteTimeoutSeconds = v }
        if let v = stallTimeoutSeconds { configuration.requestStallTimeoutSeconds = v }
        if let v = noProgressTimeoutSeconds { configuration.noProgressTimeoutSeconds = v > 0 ? v : nil }
        if let v = startupCap, let mode = StartupCapMode(rawValue: v) { configuration.startupCap.mode = mode }
        if let v = capReleaseBufferSeconds { configuration.startupCap.rampReleaseBufferSeconds = v > 0 ? v : nil }
        configuration.forceCold = cold
        configuration.requestHeaders = headers
        configuration.userAgent = userAgent
        configuration.proxy = proxy
        if let v = predictor, let choice = PredictorChoice(rawValue: v) { configuration.predictor = choice }
        if let v = abr, let rule = AbrRuleName(rawValue: v) { configuration.abr = rule }
        if let v = mpcReserveSeconds { configuration.mpcReserveSeconds = v > 0 ? v : nil }
        configuration.modelPath = modelPath
        if let policy { configuration.policy = policy }
        configuration.cmcd = cmcd.flatMap(CMCDMode.init(rawValue:))
        configuration.redactURLs = !noRedact
        configuration.decode = !noDecode
        configuration.estimateStorePath = estimateStorePath
        configuration.verifyTLS = !insecure
        configuration.caCertificateFile = caCertificateFile
        if let v = maxResolution { configuration.maxResolution = v }
        if let v = maxBufferBytes { configuration.maxForwardBufferBytes = v > 0 ? v : nil }
        configuration.allowAnyLocalFile = allowAnyLocalFile
        return configuration
    }
}
