// Corrupt media under AddressSanitizer: feeds SegmentDemuxer + TrackDecoder thousands of
// seeded mutations of real sample segments and counts the outcomes. Built by
// Tools/hardening/asan/corrupt-media.sh with -sanitize=address (HLSMedia and the CFFmpeg shim are
// instrumented; the system FFmpeg libraries are not, but their heap use goes through
// ASan's malloc interceptors, so overflows into our buffers and leaks are still seen), and
// the shim's C inline functions with -fsanitize=undefined (UBSan stops the process).
//
//   corrupt-media --media DIR --count N [--start S] [--seed S] [--case K] [--results FILE]
//   corrupt-media --media DIR --case K --dump FILE     write case K's bytes (prints hint, init size)
//   corrupt-media --media DIR --file FILE --hint ts|fmp4|adts|probe   replay one file
//
// Every case must end in a thrown MediaError, or in a result that is flagged
// (corrupt packets, demux warnings, decode errors, FFmpeg error log lines), or clean.
// A crash ends the process (ASan report). --results appends "START index" before each case
// and "DONE index mutation outcome" after it, so the caller knows which case crashed and
// what came before; --case K replays exactly that case.

import CPlant
import Foundation
import HLSMedia

// MARK: arguments

var mediaDir = ""
var count = 300
var baseSeed: UInt64 = 1
var onlyCase: Int?
var statePath: String?
var plantLeak = false
var start = 0
var dumpPath: String?
var replayFile: String?
var replayHint = ContainerHint.mpegTS
var plantOverflow = false
var plantUB = false
var args = CommandLine.arguments.dropFirst()
while let a = args.popFirst() {
    switch a {
    case "--media": mediaDir = args.popFirst() ?? ""
    case "--count": count = Int(args.popFirst() ?? "") ?? count
    case "--seed": baseSeed = UInt64(args.popFirst() ?? "") ?? baseSeed
    case "--case": onlyCase = Int(args.popFirst() ?? "")
    case "--results": statePath = args.popFirst()
    case "--start": start = Int(args.popFirst() ?? "") ?? 0
    case "--dump": dumpPath = args.popFirst()
    case "--file": replayFile = args.popFirst()
    case "--hint":
        switch args.popFirst() {
        case "fmp4": replayHint = .fragmentedMP4
        case "adts": replayHint = .packedAudioADTS
        case "probe": replayHint = .probe
        default: replayHint = .mpegTS
        }
    // Self-tests proving the sanitizers are live in this build (see docs/hardening.md).
    case "--plant-leak": plantLeak = true
    case "--plant-overflow": plantOverflow = true
    case "--plant-ub": plantUB = true
    default: FileHandle.standardError.write(Data("unknown argument \(a)\n".utf8)); exit(2)
    }
}

/// SplitMix64, same as the tests' SeededGenerator.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

nonisolated(unsafe) var leakSink: [UnsafeMutableRawPointer] = []
@inline(never) func leakSome() {
    // Unreachable once the array is emptied: LeakSanitizer must report 100 x 4242 bytes at exit.
    // (Kept in a global first so the optimizer cannot delete the unused mallocs.)
    for _ in 0..<100 { leakSink.append(malloc(4242)!) }
    leakSink.removeAll()
}
if plantLeak { leakSome() }
if plantOverflow {
    let p = UnsafeMutablePointer<UInt8>.allocate(capacity: 16)
    p[Int(CommandLine.arguments.count) + 16] = 1  // heap-buffer-overflow: ASan must stop here
    p.deallocate()
}
if plantUB {
    // A shift by 32 + argc bits in a C inline function: UndefinedBehaviorSanitizer must stop here.
    print(hls_plant_shift(Int32(CommandLine.arguments.count) + 32))
}

// MARK: inputs

func load(_ path: String) -> [UInt8] {
    guard let d = FileManager.default.contents(atPath: "\(mediaDir)/\(path)") else {
        FileHandle.standardError.write(Data("missing \(mediaDir)/\(path)\n".utf8)); exit(2)
    }
    return [UInt8](d)
}
/// ts[rung][index]; rungs 0..3 (416x234 … 1920x1080), segments 0..3.
let ts: [[[UInt8]]] = (0..<4).map { r in (0..<4).map { i in load(String(format: "ts/v%d/seg_%05d.ts", r, i)) } }
let fmp4Init = load("fmp4/init.mp4")
let fmp4Segment = load("fmp4/seg_00000.m4s")
let plainMP4 = load("plain.mp4")
let adts = load("packed.aac")

// MARK: FFmpeg log: counted, not printed

final class LogCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var errors = 0
    func add() { lock.lock(); errors += 1; lock.unlock() }
    func take() -> Int { lock.lock(); defer { errors = 0; lock.unlock() }; return errors }
}
let logCounter = LogCounter()
/// CORRUPT_MEDIA_LOG=1 prints FFmpeg's error lines too (for replaying one case: an FFmpeg
/// assertion says what failed at AV_LOG_PANIC just before abort()).
let printLog = ProcessInfo.processInfo.environment["CORRUPT_MEDIA_LOG"] == "1"
FFmpegLog.install(minimumLevel: 16 /* AV_LOG_ERROR */) { level, text in
    logCounter.add()
    if printLog || level <= 0 /* AV_LOG_PANIC: an assertion, abort() follows */ {
        FileHandle.standardError.write(Data("ffmpeg[\(level)]: \(text)\n".utf8))
    }
}

// MARK: mutations

enum Mutation: String, CaseIterable {
    case bitFlips, truncate, garbageRun, zeroRange, dropRange, insertGarbage, tsHeaderDamage,
         splice, wrongContainer, pureGarbage, fmp4Damage, adtsDamage, initSectionDamage
}

struct Case {
    var mutation: Mutation
    var bytes: [UInt8]
    var initSection: [UInt8]?
    var hint: ContainerHint
    var threads: Int
}

func makeCase(_ index: Int) -> Case {
    var rng = SeededGenerator(seed: baseSeed &* 0x9E37_79B9 &+ UInt64(index) &* 0x1_0000_0001)
    let mutation = Mutation.allCases[index % Mutation.allCases.count]
    // Mostly the small rungs (fast to decode under ASan); the 720p/1080p rungs one case in eight.
    func pickTS() -> [UInt8] {
        let rung = Int.random(in: 0..<8, using: &rng) == 0 ? Int.random(in: 2...3, using: &rng) : Int.random(in: 0...1, using: &rng)
        return ts[rung][Int.random(in: 0..<4, using: &rng)]
    }
    func range(_ n: Int, maxLength: Int) -> Range<Int> {
        let start = Int.random(in: 0..<max(n, 1), using: &rng)
        return start..<min(n, start + Int.random(in: 1...maxLength, using: &rng))
    }
    func flip(_ b: inout [UInt8], _ times: Int) {
        guard !b.isEmpty else { return }
        for _ in 0..<times { b[Int.random(in: 0..<b.count, using: &rng)] ^= 1 << UInt8.random(in: 0..<8, using: &rng) }
    }
    func garbage(_ n: Int) -> [UInt8] { (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) } }
    let threads = index % 10 == 9 ? 2 : 1
    var bytes = pickTS()
    var initSection: [UInt8]? = nil
    var hint = ContainerHint.mpegTS
    switch mutation {
    case .bitFlips:
        flip(&bytes, Int.random(in: 1...2000, using: &rng))
    case .truncate:
        bytes.removeLast(Int.random(in: 0..<bytes.count, using: &rng))
    case .garbageRun:
        for i in range(bytes.count, maxLength: 30_000) { bytes[i] = UInt8.random(in: 0...255, using: &rng) }
    case .zeroRange:
        for i in range(bytes.count, maxLength: 60_000) { bytes[i] = 0 }
    case .dropRange:
        bytes.removeSubrange(range(bytes.count, maxLength: 10_000))
    case .insertGarbage:
        bytes.insert(contentsOf: garbage(Int.random(in: 1...5_000, using: &rng)), at: Int.random(in: 0...bytes.count, using: &rng))
    case .tsHeaderDamage:
        // Damage the 4-byte TS packet headers (sync byte, PID, continuity counter) of many packets.
        let packets = bytes.count / 188
        for _ in 0..<Int.random(in: 1...200, using: &rng) {
            let p = Int.random(in: 0..<packets, using: &rng) * 188
            bytes[p + Int.random(in: 0..<4, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
        }
    case .splice:
        // Head of one segment (any rung) + tail of another, cut anywhere (not on a 188 boundary).
        let other = pickTS()
        let cutA = Int.random(in: 0...bytes.count, using: &rng)
        let cutB = Int.random(in: 0...other.count, using: &rng)
        bytes = Array(bytes[..<cutA]) + Array(other[cutB...])
        if bytes.isEmpty { bytes = other }
    case .wrongContainer:
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: bytes = fmp4Segment; hint = .mpegTS                          // fMP4 fed as TS
        case 1: bytes = plainMP4; hint = .mpegTS                             // MP4 fed as TS
        case 2: hint = .packedAudioADTS                                      // TS fed as ADTS
        case 3: hint = .fragmentedMP4                                        // TS fed as fMP4
        case 4: bytes = adts; hint = .fragmentedMP4                          // ADTS fed as fMP4
        default: bytes = fmp4Segment; initSection = Array(bytes.prefix(188)); hint = .mpegTS  // TS head as init of fMP4
        }
        if Bool.random(using: &rng) { flip(&bytes, Int.random(in: 1...50, using: &rng)) }
    case .pureGarbage:
        bytes = garbage(Int.random(in: 1...200_000, using: &rng))
        if Bool.random(using: &rng) { bytes[0] = 0x47 }  // looks like TS at first glance
        hint = [ContainerHint.mpegTS, .fragmentedMP4, .packedAudioADTS, .probe][Int.random(in: 0..<4, using: &rng)]
    case .fmp4Damage:
        bytes = fmp4Segment; initSection = fmp4Init; hint = .fragmentedMP4
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: flip(&bytes, Int.random(in: 1...500, using: &rng))
        case 1: bytes.removeLast(Int.random(in: 0..<bytes.count, using: &rng))
        default: for i in range(bytes.count, maxLength: 20_000) { bytes[i] = UInt8.random(in: 0...255, using: &rng) }
        }
    case .adtsDamage:
        bytes = adts; hint = Bool.random(using: &rng) ? .packedAudioADTS : .probe
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: flip(&bytes, Int.random(in: 1...300, using: &rng))
        case 1: bytes.removeLast(Int.random(in: 0..<bytes.count, using: &rng))
        default: bytes.removeSubrange(range(bytes.count, maxLength: 2_000))
        }
    case .initSectionDamage:
        // Intact media segment, damaged EXT-X-MAP (box sizes, codec config), or a plain MP4 probed.
        bytes = fmp4Segment; var i = fmp4Init; hint = .fragmentedMP4
        switch Int.random(in: 0..<3, using: &rng) {
        case 0: flip(&i, Int.random(in: 1...40, using: &rng))
        case 1: i.removeLast(Int.random(in: 0..<i.count, using: &rng))
        default: bytes = plainMP4; hint = .probe; flip(&bytes, Int.random(in: 1...200, using: &rng)); i = []
        }
        initSection = i
    }
    return Case(mutation: mutation, bytes: bytes, initSection: initSection, hint: hint, threads: threads)
}

// MARK: run

/// LeakSanitizer check that does not exit; prints a report + SUMMARY when anything leaked so
/// far (cumulative). Run every 100 cases so a later crash cannot hide earlier leaks.
@_silgen_name("__lsan_do_recoverable_leak_check") func lsanRecoverableLeakCheck() -> Int32

enum Outcome { case thrown, flagged, clean }

func run(_ c: Case) -> Outcome {
    let result: DemuxResult
    do {
        result = try SegmentDemuxer.demux(segment: Data(c.bytes), initializationSection: c.initSection.map { Data($0) },
                                          hint: c.hint)
    } catch {
        _ = error.description
        _ = logCounter.take()
        return .thrown
    }
    var decodeErrors = 0
    var frames = 0
    for kind in [TrackKind.video, .audio] {
        guard let track = result.track(kind) else { continue }
        let decoder: TrackDecoder
        do { decoder = try TrackDecoder(parameters: track, threadCount: c.threads) } catch { decodeErrors += 1; continue }
        for packet in result.packets where packet.parameters === track {
            do { frames += try decoder.decode(packet).count } catch { decodeErrors += 1 }
        }
        do { frames += try decoder.drain().count } catch { decodeErrors += 1 }
    }
    let logged = logCounter.take()
    if result.corruptPacketCount > 0 || !result.warnings.isEmpty || decodeErrors > 0 || logged > 0 { return .flagged }
    return .clean
}

let state: FileHandle? = statePath.flatMap { p in
    if !FileManager.default.fileExists(atPath: p) { _ = FileManager.default.createFile(atPath: p, contents: nil) }
    let h = FileHandle(forWritingAtPath: p)
    _ = try? h?.seekToEnd()
    return h
}
var totals: [Outcome: Int] = [:]
var byMutation: [Mutation: [Outcome: Int]] = [:]
if let dumpPath, let onlyCase {
    let c = makeCase(onlyCase)
    _ = FileManager.default.createFile(atPath: dumpPath, contents: Data(c.bytes))
    print("case \(onlyCase): \(c.mutation.rawValue) hint \(c.hint) threads \(c.threads) bytes \(c.bytes.count) init \(c.initSection?.count ?? 0)")
    exit(0)
}
let started = Date()
if let replayFile {
    // In a function, so the input is freed before exit and LeakSanitizer does not count it.
    func replay(_ path: String) -> Int32 {
        guard let d = FileManager.default.contents(atPath: path) else { return 2 }
        let o = run(Case(mutation: .pureGarbage, bytes: [UInt8](d), initSection: nil, hint: replayHint, threads: 1))
        print("replay \(path): \(o)")
        return 0
    }
    exit(replay(replayFile))
}
let indices = onlyCase.map { [$0] } ?? Array(start..<max(start, count))
for index in indices {
    state?.write(Data("START \(index)\n".utf8))
    let c = makeCase(index)
    let outcome = run(c)
    state?.write(Data("DONE \(index) \(c.mutation.rawValue) \(outcome)\n".utf8))
    if index % 100 == 99 { _ = lsanRecoverableLeakCheck() }
    totals[outcome, default: 0] += 1
    byMutation[c.mutation, default: [:]][outcome, default: 0] += 1
}
let elapsed = Date().timeIntervalSince(started)
print("TOTAL \(indices.count) \(totals[.thrown] ?? 0) \(totals[.flagged] ?? 0) \(totals[.clean] ?? 0) \(String(format: "%.1f", elapsed))")
for m in Mutation.allCases {
    let o = byMutation[m] ?? [:]
    print("MUT \(m.rawValue) \(o[.thrown] ?? 0) \(o[.flagged] ?? 0) \(o[.clean] ?? 0)")
}
