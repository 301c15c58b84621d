// The forward buffer: demuxed packets ahead of the media clock, in decode
// order, each mapped onto the session's media timeline. The loader appends
// whole segments; the decode loop takes packets as the clock reaches them.

import Foundation
import HLSCore
import HLSMedia

/// A demuxed packet placed on the media timeline.
struct BufferedPacket: @unchecked Sendable {
    let packet: DemuxedPacket
    /// Decode time on the media timeline, seconds.
    let decodeSeconds: Double
    /// Presentation time on the media timeline, seconds.
    let presentationSeconds: Double
    /// Seconds to add to a stream timestamp of this segment to get media time.
    let timelineOffsetSeconds: Double
    let variantIndex: Int
    let mediaSequence: Int
    /// The segment's Discontinuity Sequence Number: a change means new timestamps and maybe new codec parameters.
    let discontinuitySequence: Int
    /// The variant's segment at this moment carries video. Without video (an audio-only
    /// stream or variant) the first decoded audio frame starts playback.
    var segmentHasVideo = true
}

final class ForwardBuffer: @unchecked Sendable {
    /// One track's packets in decode order. Taken slots are set to nil at once
    /// so their packet memory is freed as soon as the decoder is done with it;
    /// the array is compacted now and then.
    private struct Queue {
        var packets: [BufferedPacket?] = []
        var head = 0
        /// Payload bytes of the packets not yet taken.
        var bytes = 0
        var count: Int { packets.count - head }
        var first: BufferedPacket? { head < packets.count ? packets[head] : nil }
        mutating func compact() {
            if head > 1024 && head * 2 > packets.count {
                packets.removeFirst(head)
                head = 0
            }
        }
        mutating func append(contentsOf new: [BufferedPacket]) {
            packets.append(contentsOf: new)
            bytes += new.reduce(0) { $0 + $1.packet.size }
        }
        mutating func removeFirst() -> BufferedPacket? {
            guard head < packets.count else { return nil }
            let p = packets[head]
            packets[head] = nil
            head += 1
            bytes -= p?.packet.size ?? 0
            return p
        }
        mutating func removeAll() {
            packets.removeAll()
            head = 0
            bytes = 0
        }
    }

    /// Timed on the session's clock (the decode loop's wait for a due packet).
    private let condition: any ClockCondition
    private let clock: any WaitingClock
    private var main = Queue()
    private var alternateAudio = Queue()
    private var closed = false

    init(clock: any WaitingClock) {
        self.clock = clock
        condition = clock.makeCondition()
    }

    /// Appends one segment's packets to a track and wakes the decode loop.
    func append(_ newPackets: [BufferedPacket], track: BufferTrack = .main) {
        condition.lock()
        switch track {
        case .main:
            main.compact()
            main.append(contentsOf: newPackets)
        case .alternateAudio:
            alternateAudio.compact()
            alternateAudio.append(contentsOf: newPackets)
        }
        condition.broadcast()
        condition.unlock()
    }

    /// Payload bytes of the packets not yet taken (both tracks): what `--max-buffer-bytes` bounds.
    var bytes: Int {
        condition.lock()
        defer { condition.unlock() }
        return main.bytes + alternateAudio.bytes
    }

    /// Packets not yet taken.
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return main.count + alternateAudio.count
    }

    /// Waits up to `timeoutSeconds` for a packet that `isDue` accepts, and takes
    /// it: of the two tracks' next packets, the one with the earlier decode time.
    /// Returns nil on timeout or when closed.
    func take(timeoutSeconds: Double, isDue: (BufferedPacket) -> Bool) -> BufferedPacket? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = clock.now().advanced(bySeconds: timeoutSeconds)
        while !closed {
            let useAudio: Bool
            switch (main.first, alternateAudio.first) {
            case let (m?, a?): useAudio = a.decodeSeconds < m.decodeSeconds
            case (nil, _?): useAudio = true
            default: useAudio = false
            }
            if let p = useAudio ? alternateAudio.first : main.first, isDue(p) {
                return useAudio ? alternateAudio.removeFirst() : main.removeFirst()
            }
            if !condition.wait(until: deadline) { break }
        }
        return nil
    }

    /// The next packet's decode time (the earlier of the two tracks), if any.
    var nextDecodeSeconds: Double? {
        condition.lock()
        defer { condition.unlock() }
        return [main.first?.decodeSeconds, alternateAudio.first?.decodeSeconds].compactMap { $0 }.min()
    }

    /// Drops the packets the clock has passed (demux-only sessions have no
    /// decoder to take them). Returns how many were dropped.
    @discardableResult
    func discard(decodedBefore seconds: Double) -> Int {
        condition.lock()
        defer { condition.unlock() }
        var dropped = 0
        for track in [BufferTrack.main, .alternateAudio] {
            var q = track == .main ? main : alternateAudio
            while let p = q.first, p.decodeSeconds < seconds {
                _ = q.removeFirst()
                dropped += 1
            }
            q.compact()
            if track == .main { main = q } else { alternateAudio = q }
        }
        return dropped
    }

    /// Drops every packet not yet taken (a seek). Returns how many were dropped.
    @discardableResult
    func discardAll() -> Int {
        condition.lock()
        defer { condition.unlock() }
        let dropped = main.count + alternateAudio.count
        main.removeAll()
        alternateAudio.removeAll()
        return dropped
    }

    /// Wakes any waiter (e.g. the clock started) without adding packets.
    func poke() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        main.removeAll()
        alternateAudio.removeAll()
        condition.broadcast()
        condition.unlock()
    }
}
