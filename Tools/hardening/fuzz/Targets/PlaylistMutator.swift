// Structure-aware mutations for the playlist targets (LLVMFuzzerCustomMutator). libFuzzer's byte
// mutations rarely turn "6" into "9223372036854775807" or grow a playlist a second segment, and
// the dictionary only holds words up to 64 bytes, so the numbers where arithmetic breaks (Int64.max
// with more than one segment, a byte range near the end of Int64, 400 digits that a Double reads
// as infinity) were out of reach: 15 minutes of the earlier run found none of the crashes issue
// "Hostile input, round two" lists. These mutations work on lines and numbers:
//   - replace a number in the text with a boundary value (0, -1, 2^31, 2^53±1, Int64.max±1,
//     UInt64.max, 10^6 s, 10^11, 309 and 400 digits, a subnormal, NaN, inf);
//   - insert a tag line that carries numbers into arithmetic (MEDIA-SEQUENCE, BYTERANGE with and
//     without offset, PART byte ranges, SKIP, BITRATE, durations, hold-backs, RESOLUTION, …);
//   - duplicate a line or a segment (EXTINF + URI), delete or swap lines;
//   - (request path) repeat the playlist as a reload with its numbers moved on;
//   - otherwise libFuzzer's own mutation (LLVMFuzzerMutate).
// Deterministic for a given seed, as libFuzzer requires.

import CLibFuzzer

struct SplitMix64 {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(next() % UInt64(n)) }
    mutating func pick<T>(_ a: [T]) -> T { a[below(a.count)] }
}

enum PlaylistMutator {
    /// The separator between the playlists of one request-path input (a reload).
    static let reloadSeparator = "#--reload"

    static let boundaryNumbers: [String] = [
        "0", "1", "-1", "2", "-0", "0.5", "6", "10",
        "2147483647", "2147483648", "4294967295", "4294967296",
        "9007199254740990", "9007199254740991", "9007199254740992",
        "9223372036854775806", "9223372036854775807", "9223372036854775808", "18446744073709551615",
        "99999999999999999999999",
        "86400", "1000000", "1000000.001", "10000000000", "100000000000", "100000000000.0", "8640000000",
        "1" + String(repeating: "0", count: 308), "1" + String(repeating: "0", count: 400),
        "0." + String(repeating: "0", count: 299) + "1", "0.000001",
        "NaN", "inf", "1e308",
    ]

    /// `{N}` becomes a boundary number.
    static let templates: [String] = [
        "#EXT-X-MEDIA-SEQUENCE:{N}",
        "#EXT-X-DISCONTINUITY-SEQUENCE:{N}",
        "#EXT-X-DISCONTINUITY\n#EXTINF:2,\nseg-d.ts",
        "#EXTINF:{N},\nseg-n.ts",
        "#EXTINF:2,\nseg-a.ts\n#EXTINF:2,\nseg-b.ts",
        "#EXT-X-BYTERANGE:{N}@{N}\n#EXTINF:2,\nseg-r.ts",
        "#EXT-X-BYTERANGE:{N}\n#EXTINF:2,\nseg-r.ts",
        "#EXTINF:2,\n#EXT-X-BYTERANGE:{N}\nseg-r.ts",
        "#EXT-X-TARGETDURATION:{N}",
        "#EXT-X-BITRATE:{N}",
        "#EXT-X-SKIP:SKIPPED-SEGMENTS={N}",
        "#EXT-X-PART-INF:PART-TARGET={N}",
        "#EXT-X-PART:DURATION={N},URI=\"p.mp4\",INDEPENDENT=YES",
        "#EXT-X-PART:DURATION=1,URI=\"p.mp4\",BYTERANGE=\"{N}@{N}\"",
        "#EXT-X-PART:DURATION=1,URI=\"p.mp4\",BYTERANGE=\"{N}\"",
        "#EXT-X-PRELOAD-HINT:TYPE=PART,URI=\"p.mp4\",BYTERANGE-START={N},BYTERANGE-LENGTH={N}",
        "#EXT-X-SERVER-CONTROL:CAN-BLOCK-RELOAD=YES,CAN-SKIP-UNTIL={N},HOLD-BACK={N},PART-HOLD-BACK={N}",
        "#EXT-X-START:TIME-OFFSET={N},PRECISE=YES",
        "#EXT-X-START:TIME-OFFSET=-{N}",
        "#EXT-X-MAP:URI=\"i.mp4\",BYTERANGE=\"{N}@{N}\"",
        "#EXT-X-STREAM-INF:BANDWIDTH={N},AVERAGE-BANDWIDTH={N},RESOLUTION={N}x{N},FRAME-RATE={N}\nv.m3u8",
        "#EXT-X-RENDITION-REPORT:URI=\"r.m3u8\",LAST-MSN={N},LAST-PART={N}",
        "#EXT-X-DATERANGE:ID=\"d{N}\",START-DATE=\"2024-01-01T00:00:00Z\",DURATION={N},PLANNED-DURATION={N}",
        "#EXT-X-PROGRAM-DATE-TIME:9999-12-31T23:59:59.999Z",
        "#EXT-X-KEY:METHOD=AES-128,URI=\"k\",IV=0x{N}",
        "#EXT-X-ENDLIST",
    ]

    /// One mutation of `data` (at most `maxSize` bytes); nil: leave it to LLVMFuzzerMutate.
    static func mutate(_ data: [UInt8], maxSize: Int, rng: inout SplitMix64, reloads: Bool) -> [UInt8]? {
        var lines = data.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        func number() -> [UInt8] { Array(rng.pick(boundaryNumbers).utf8) }
        func fill(_ template: String) -> [[UInt8]] {
            var out: [UInt8] = []
            var rest = Array(template.utf8)[...]
            let marker = Array("{N}".utf8)
            while !rest.isEmpty {
                if rest.starts(with: marker) { out += number(); rest = rest.dropFirst(3) } else { out.append(rest.removeFirst()) }
            }
            return out.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
        }
        switch rng.below(reloads ? 12 : 10) {
        case 0, 1, 2:
            // A number in the text (a digit run, with its sign and fraction) becomes a boundary value.
            var runs: [Range<Int>] = []
            var i = 0
            while i < data.count {
                if data[i] >= 0x30 && data[i] <= 0x39 {
                    var start = i
                    if start > 0 && data[start - 1] == UInt8(ascii: "-") { start -= 1 }
                    while i < data.count && ((data[i] >= 0x30 && data[i] <= 0x39) || data[i] == UInt8(ascii: ".")) { i += 1 }
                    runs.append(start..<i)
                } else {
                    i += 1
                }
            }
            guard !runs.isEmpty else { return nil }
            let run = rng.pick(runs)
            return Array(data[..<run.lowerBound]) + number() + Array(data[run.upperBound...])
        case 3, 4:
            let at = lines.isEmpty ? 0 : 1 + rng.below(lines.count)
            lines.insert(contentsOf: fill(rng.pick(templates)), at: min(at, lines.count))
        case 5:
            // Duplicate a line, or a segment (an EXTINF and its URI): "more than one segment".
            guard !lines.isEmpty else { return nil }
            let k = rng.below(lines.count)
            let pair = lines[k].starts(with: Array("#EXTINF".utf8)) && k + 1 < lines.count
            lines.insert(contentsOf: pair ? [lines[k], lines[k + 1]] : [lines[k]], at: pair ? k + 2 : k + 1)
        case 6:
            guard lines.count > 1 else { return nil }
            lines.remove(at: 1 + rng.below(lines.count - 1))
        case 7:
            guard lines.count > 2 else { return nil }
            let a = 1 + rng.below(lines.count - 1), b = 1 + rng.below(lines.count - 1)
            lines.swapAt(a, b)
        case 10, 11:
            // A reload: the playlist again (its last chunk), with one more segment, after the separator.
            let separator = Array(reloadSeparator.utf8)
            let last = lines.lastIndex(of: separator).map { Array(lines[($0 + 1)...]) } ?? lines
            lines += [separator] + last + fill("#EXTINF:2,\nseg-next.ts")
        default:
            return nil
        }
        return Array(lines.joined(separator: [0x0A]))
    }
}

/// The body of LLVMFuzzerCustomMutator for a playlist target.
func playlistCustomMutate(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32, reloads: Bool) -> Int {
    var rng = SplitMix64(state: UInt64(seed) &* 0x2545_F491_4F6C_DD1D &+ UInt64(size))
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    if let out = PlaylistMutator.mutate(input, maxSize: maxSize, rng: &rng, reloads: reloads), !out.isEmpty, out.count <= maxSize, out != input {
        out.withUnsafeBufferPointer { data.update(from: $0.baseAddress!, count: out.count) }
        return out.count
    }
    return LLVMFuzzerMutate(data, size, maxSize)
}
