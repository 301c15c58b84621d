// The forward buffer: demuxed packets ahead of the media clock, in decode
// order, each mapped onto the session's media timeline. The loader appends
// whole segments; the decode loop takes packets as the clock reaches them.

import Foundation
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
}

final class ForwardBuffer: @unchecked Sendable {
    private let condition = NSCondition()
    /// Taken slots are set to nil at once so their packet memory is freed as
    /// soon as the decoder is done with it; the array is compacted now and then.
    private var packets: [BufferedPacket?] = []
    private var head = 0
    private var closed = false

    /// Appends one segment's packets and wakes the decode loop.
    func append(_ newPackets: [BufferedPacket]) {
        condition.lock()
        if head > 1024 && head * 2 > packets.count {
            packets.removeFirst(head)
            head = 0
        }
        packets.append(contentsOf: newPackets)
        condition.broadcast()
        condition.unlock()
    }

    /// Packets not yet taken.
    var count: Int {
        condition.lock()
        defer { condition.unlock() }
        return packets.count - head
    }

    /// Waits up to `timeoutSeconds` for a packet that `isDue` accepts, and takes it.
    /// Returns nil on timeout or when closed.
    func take(timeoutSeconds: Double, isDue: (BufferedPacket) -> Bool) -> BufferedPacket? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeoutSeconds)
        while !closed {
            if head < packets.count, let p = packets[head], isDue(p) {
                packets[head] = nil
                head += 1
                return p
            }
            if !condition.wait(until: deadline) { break }
        }
        return nil
    }

    /// The next packet's decode time, if any.
    var nextDecodeSeconds: Double? {
        condition.lock()
        defer { condition.unlock() }
        return head < packets.count ? packets[head]?.decodeSeconds : nil
    }

    /// Drops the packets the clock has passed (demux-only sessions have no
    /// decoder to take them). Returns how many were dropped.
    @discardableResult
    func discard(decodedBefore seconds: Double) -> Int {
        condition.lock()
        defer { condition.unlock() }
        var dropped = 0
        while head < packets.count, let p = packets[head], p.decodeSeconds < seconds {
            packets[head] = nil
            head += 1
            dropped += 1
        }
        if head > 1024 && head * 2 > packets.count {
            packets.removeFirst(head)
            head = 0
        }
        return dropped
    }

    /// Drops every packet not yet taken (a seek). Returns how many were dropped.
    @discardableResult
    func discardAll() -> Int {
        condition.lock()
        defer { condition.unlock() }
        let dropped = packets.count - head
        packets.removeAll()
        head = 0
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
        packets.removeAll()
        head = 0
        condition.broadcast()
        condition.unlock()
    }
}
