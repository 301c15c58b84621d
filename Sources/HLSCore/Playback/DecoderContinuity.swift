// When the decode loop keeps a track's decoder across a segment boundary, when
// it opens a new one, and where a new one starts. Pure: the decode loop passes
// what it knows about the packet and the open decoder, and performs the answer.
//
// Segments need not begin with an independent frame (RFC 8216bis §4.4.2.1:
// without EXT-X-INDEPENDENT-SEGMENTS a segment may start mid-GOP, and Apple's
// mediafilesegmenter writes such streams). Their first frames reference the
// previous segment's, so within one variant and one discontinuity sequence the
// decoder, and the parameter sets it has seen, must carry over. A new decoder
// is opened only where the bitstream may change: at a variant switch, at a
// discontinuity, or at a real change of format; a new video decoder is fed
// from the next independent frame, as frames before it cannot be decoded.

/// What one decoder decodes: a track of one variant within one discontinuity sequence.
public struct DecoderEpoch: Sendable, Equatable, Codable {
    public var variantIndex: Int
    public var discontinuitySequence: Int
    public init(variantIndex: Int, discontinuitySequence: Int) {
        self.variantIndex = variantIndex
        self.discontinuitySequence = discontinuitySequence
    }
}

/// Why a new decoder was opened.
public enum DecoderOpenReason: String, Sendable, Equatable, Codable {
    /// The track's first decoder of the session.
    case start
    /// The packet belongs to another variant than the open (or last) decoder.
    case variantSwitch = "variant-switch"
    /// The packet belongs to another discontinuity sequence (new timestamps, maybe new parameters).
    case discontinuity
    /// Same variant and discontinuity sequence, but a format the open decoder cannot take
    /// (another codec, other known dimensions or audio layout, another configuration record).
    case formatChange = "format-change"
}

public enum DecoderContinuity {
    /// A new video decoder skips packets until an independent (key) frame; a stream
    /// that flags none within this much media time is decoded from the packet at
    /// hand instead, so a demuxer that sets no keyframe flags cannot silence the
    /// video. Seconds of media time.
    public static let maximumKeyframeWaitSeconds = 10.0

    /// Whether the packet needs a new decoder, and why; nil: the open decoder carries on.
    /// - Parameters:
    ///   - open: what the track's open decoder decodes (nil: none is open).
    ///   - last: what the track's last decoder decoded (nil: none yet this session).
    ///   - packet: the packet's variant and discontinuity sequence.
    ///   - formatCompatible: whether the open decoder can take the packet's codec parameters
    ///     (unknown dimensions or sample rates, as a probe of a segment that starts mid-GOP
    ///     reports them, count as compatible).
    public static func openReason(
        open: DecoderEpoch?, last: DecoderEpoch?, packet: DecoderEpoch,
        formatCompatible: Bool
    ) -> DecoderOpenReason? {
        if let open, open == packet { return formatCompatible ? nil : .formatChange }
        guard let previous = open ?? last else { return .start }
        if previous.variantIndex == packet.variantIndex, previous.discontinuitySequence != packet.discontinuitySequence {
            return .discontinuity
        }
        // Another variant; or back on the same one, whose decoder closed when the variant's
        // track moved to a variant without this kind (video, at a switch to an audio-only variant).
        return .variantSwitch
    }

    /// Whether a new decoder starts at this packet: audio at once (every audio frame is
    /// independent); video at an independent frame, or after `maximumKeyframeWaitSeconds`
    /// of skipped media.
    public static func startsHere(isVideo: Bool, isKeyframe: Bool, skippedSeconds: Double) -> Bool {
        !isVideo || isKeyframe || skippedSeconds >= maximumKeyframeWaitSeconds
    }
}
