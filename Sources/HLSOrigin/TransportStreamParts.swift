import Foundation

/// How one MPEG-TS media segment is cut into LL-HLS Partial Segments.
///
/// Parts are cut at 188-byte packet boundaries, at the start of a video PES packet (a frame), so that no PES
/// packet is split: FFmpeg's MPEG-TS muxer writes every PES packet's TS packets contiguously (checked while
/// planning; a segment whose PES packets interleave gets no plan). Part 0 is the segment's first bytes; every
/// later part is prefixed with a copy of the segment's PAT and PMT packets (continuity counters renumbered), so a
/// demuxer that sees one part alone still finds the program. The low-latency version of the segment is the
/// concatenation of its parts (the VOD file plus two packets per later part).
///
/// Part boundaries are chosen greedily on the video decode timestamps: each part ends at the last frame start
/// that keeps it within `partTargetSeconds` (+ one `boundaryToleranceSeconds`), so no part exceeds the target
/// unless a single frame does.
public struct SegmentPartPlan: Sendable, Equatable {
    public struct Part: Sendable, Equatable {
        /// Bytes of the VOD segment file this part carries (after the PSI prefix for parts after the first).
        public var fileRange: Range<Int>
        /// Offset of the part's start within the segment, seconds (video decode time).
        public var startSeconds: Double
        public var durationSeconds: Double
        /// The part starts with a random-access (key) frame.
        public var independent: Bool
        public var endSeconds: Double { startSeconds + durationSeconds }
    }

    public let parts: [Part]
    /// PAT + PMT packets, prepended to every part after the first (continuity counters set per part).
    let psiPackets: [UInt8]

    static let packetBytes = 188
    /// Slack when comparing a frame start with a part boundary (timestamps are 90 kHz ticks).
    public static let boundaryToleranceSeconds = 0.001

    public var longestPartSeconds: Double { parts.map(\.durationSeconds).max() ?? 0 }

    /// The bytes of part `index`, given the VOD segment file's bytes.
    public func bytes(ofPart index: Int, segment: [UInt8]) -> [UInt8] {
        let part = parts[index]
        var out: [UInt8] = []
        if index > 0 {
            out.reserveCapacity(psiPackets.count + part.fileRange.count)
            var psi = psiPackets
            var p = 0
            while p + Self.packetBytes <= psi.count {
                // Continuity counter: the copy in part j follows the original by j.
                let cc = (psi[p + 3] & 0x0F &+ UInt8(index & 0x0F)) & 0x0F
                psi[p + 3] = (psi[p + 3] & 0xF0) | cc
                p += Self.packetBytes
            }
            out += psi
        }
        out += segment[part.fileRange]
        return out
    }

    /// The low-latency segment: the concatenation of all parts.
    public func segmentBytes(segment: [UInt8]) -> [UInt8] {
        parts.indices.reduce(into: [UInt8]()) { $0 += bytes(ofPart: $1, segment: segment) }
    }

    /// Plans the parts of an MPEG-TS segment of `durationSeconds` (its EXTINF); nil if the bytes are not MPEG-TS
    /// that can be cut (no sync bytes, no PAT/PMT, no video PES, interleaved PES packets).
    public static func plan(segment bytes: [UInt8], durationSeconds: Double, partTargetSeconds: Double) -> SegmentPartPlan? {
        let n = packetBytes
        guard bytes.count >= n, bytes.count % n == 0, partTargetSeconds > 0, durationSeconds > 0 else { return nil }
        var pat: [UInt8]?
        var pmt: [UInt8]?
        var pmtPID: Int?
        var payloadPID: Int? // PID of the PES packet being written
        var videoStarts: [(offset: Int, dts: Int64, randomAccess: Bool)] = []
        var offset = 0
        while offset < bytes.count {
            guard bytes[offset] == 0x47 else { return nil }
            let pid = Int(bytes[offset + 1] & 0x1F) << 8 | Int(bytes[offset + 2])
            let unitStart = bytes[offset + 1] & 0x40 != 0
            let adaptation = (bytes[offset + 3] >> 4) & 0x3
            var payload = offset + 4
            var randomAccess = false
            if adaptation & 0x2 != 0 {
                let length = Int(bytes[offset + 4])
                if length > 0 { randomAccess = bytes[offset + 5] & 0x40 != 0 }
                payload = offset + 5 + length
            }
            let end = offset + n
            defer { offset = end }
            guard adaptation & 0x1 != 0, payload < end else { continue }
            if pid == 0 {
                if pat == nil {
                    pat = Array(bytes[offset..<end])
                    pmtPID = patProgramMapPID(bytes[payload..<end])
                }
                continue
            }
            if pid == pmtPID {
                if pmt == nil { pmt = Array(bytes[offset..<end]) }
                continue
            }
            if pid == 0x1FFF || pid < 0x20 { continue } // null packets, SDT and other tables
            if unitStart {
                payloadPID = pid
                if let (streamID, dts) = pesHeader(bytes[payload..<end]), (0xE0...0xEF).contains(streamID) {
                    videoStarts.append((offset, dts, randomAccess))
                }
            } else if payloadPID != pid {
                return nil // PES packets interleave: a cut at a PES start could split another stream's packet
            }
        }
        guard let pat, let pmt, let first = videoStarts.first else { return nil }

        // Greedy cuts on the video decode timeline; part 0 starts at byte 0.
        func seconds(_ dts: Int64) -> Double {
            var d = dts - first.dts
            if d < 0 { d += 1 << 33 } // 33-bit wrap
            return Double(d) / 90_000
        }
        let tolerance = boundaryToleranceSeconds
        var cuts: [(offset: Int, start: Double, randomAccess: Bool)] = [(0, 0, first.randomAccess)]
        var i = 1
        while durationSeconds - cuts.last!.start > partTargetSeconds + tolerance {
            let start = cuts.last!.start
            var chosen: Int?
            while i < videoStarts.count {
                let t = seconds(videoStarts[i].dts)
                if t <= start { i += 1; continue }
                if t - start <= partTargetSeconds + tolerance { chosen = i; i += 1; continue }
                break
            }
            if chosen == nil, i < videoStarts.count { chosen = i; i += 1 } // a frame longer than the target
            guard let c = chosen, seconds(videoStarts[c].dts) < durationSeconds - tolerance else { break }
            cuts.append((videoStarts[c].offset, seconds(videoStarts[c].dts), videoStarts[c].randomAccess))
        }
        var parts: [Part] = []
        for (k, cut) in cuts.enumerated() {
            let last = k + 1 == cuts.count
            let endOffset = last ? bytes.count : cuts[k + 1].offset
            let endSeconds = last ? durationSeconds : cuts[k + 1].start
            parts.append(
                Part(
                    fileRange: cut.offset..<endOffset, startSeconds: cut.start,
                    durationSeconds: endSeconds - cut.start, independent: cut.randomAccess))
        }
        return SegmentPartPlan(parts: parts, psiPackets: pat + pmt)
    }

    /// The PMT PID of the first program in a PAT packet's payload (pointer field first).
    static func patProgramMapPID(_ payload: ArraySlice<UInt8>) -> Int? {
        let p = Array(payload)
        guard let pointer = p.first.map(Int.init) else { return nil }
        let table = 1 + pointer
        guard p.count >= table + 8, p[table] == 0x00 else { return nil }
        let sectionLength = Int(p[table + 1] & 0x0F) << 8 | Int(p[table + 2])
        var e = table + 8
        let end = min(p.count, table + 3 + sectionLength - 4) // minus CRC
        while e + 4 <= end {
            let program = Int(p[e]) << 8 | Int(p[e + 1])
            let pid = Int(p[e + 2] & 0x1F) << 8 | Int(p[e + 3])
            if program != 0 { return pid }
            e += 4
        }
        return nil
    }

    /// Stream id and decode timestamp (DTS, else PTS) of a PES header; nil if the payload is not a PES start with one.
    static func pesHeader(_ payload: ArraySlice<UInt8>) -> (streamID: Int, dts: Int64)? {
        let p = Array(payload)
        guard p.count >= 14, p[0] == 0, p[1] == 0, p[2] == 1 else { return nil }
        let flags = p[7] >> 6
        func timestamp(_ o: Int) -> Int64 {
            Int64(p[o] >> 1 & 0x07) << 30 | Int64(p[o + 1]) << 22 | Int64(p[o + 2] >> 1) << 15
                | Int64(p[o + 3]) << 7 | Int64(p[o + 4] >> 1)
        }
        switch flags {
        case 0b11 where p.count >= 19: return (Int(p[3]), timestamp(14))
        case 0b10, 0b11: return (Int(p[3]), timestamp(9))
        default: return nil
        }
    }
}
