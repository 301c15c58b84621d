// The largest picture hlsplay decodes (`--max-resolution`). A decoder
// allocates its pictures from the dimensions the bitstream claims, before a
// single macroblock is decoded: a 5 KB segment whose sequence parameter set
// claims 16000x16000 made the H.264 decoder hold 1.3 GB (2.6 GB with frame
// threads). The limit is checked wherever dimensions become known, each time
// before anything of that size is allocated:
//
//   - a variant's RESOLUTION attribute: a rung above the limit is not chosen
//     (as AVPlayer's preferredMaximumResolution leaves rungs out), logged once;
//   - the demuxed codec parameters of each segment (the container header or,
//     for MPEG-TS, the parser's reading of the SPS);
//   - the decoder's own report when it parses a parameter set (get_format),
//     backed by FFmpeg's max_pixels, which refuses the allocation itself.
//
// Media above the limit (a rung that declared less, or nothing) ends the
// session with a media error (exit 65): the stream lied about itself, and a
// QA tool says so rather than hide it behind another rung.

import Foundation

/// A picture fits when it fits `width`×`height` in either orientation (a
/// portrait 4320x7680 fits an 8K limit). Unknown dimensions (0) are not
/// above the limit: the decoder checks them when it learns them.
public struct ResolutionLimit: Sendable, Equatable, Hashable, Codable, CustomStringConvertible {
    /// The longer side allowed, pixels.
    public var width: Int
    /// The shorter side allowed, pixels.
    public var height: Int

    /// Takes the sides in either order; both must be positive.
    public init?(width: Int, height: Int) {
        guard width > 0, height > 0, width.multipliedReportingOverflow(by: height).overflow == false else { return nil }
        self.width = max(width, height)
        self.height = min(width, height)
    }

    /// The default: 8K, DCI's 8192x4320 (so UHD-2's 7680x4320 fits too), 35,389,440 pixels.
    public static let default8K = ResolutionLimit(width: 8192, height: 4320)!

    /// Pixels of the largest picture allowed.
    public var maxPixels: Int { width * height }

    /// Whether a picture of these dimensions may be decoded (either orientation; 0 = unknown = yes).
    public func admits(width w: Int, height h: Int) -> Bool {
        guard w > 0, h > 0 else { return true }
        return max(w, h) <= width && min(w, h) <= height
    }

    /// "8192x4320".
    public var description: String { "\(width)x\(height)" }

    /// Parses "WxH" (either order, e.g. 3840x2160 or 2160x3840); nil if it is not one.
    public init?(parsing text: String) {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let w = Int(parts[0]), let h = Int(parts[1]) else { return nil }
        self.init(width: w, height: h)
    }

    /// Whether a rung's declared RESOLUTION leaves it out of the ladder: only a declared
    /// resolution above the limit does (no RESOLUTION: the media is checked when it arrives).
    public func excludes(_ resolution: Resolution?) -> Bool {
        guard let resolution else { return false }
        return !admits(width: resolution.width, height: resolution.height)
    }
}

/// A resolution-limit decision, logged as `resolution.limit`: a rung left out
/// because of its RESOLUTION, or media refused because of its dimensions.
public struct ResolutionLimitRecord: Sendable, Equatable, Codable {
    public enum Action: String, Sendable, Equatable, Codable {
        /// A variant's RESOLUTION is above the limit: it is not chosen (the session goes on).
        case variantExcluded = "variant-excluded"
        /// Media above the limit arrived: refused, before its pictures were allocated; the session ends.
        case refused
    }
    /// Where the dimensions came from.
    public enum Source: String, Sendable, Equatable, Codable {
        /// EXT-X-STREAM-INF RESOLUTION.
        case playlist
        /// The segment's demuxed codec parameters (container header, or the parser's reading of the SPS).
        case container
        /// The decoder, parsing a parameter set (a size the container did not say, or changed mid-stream).
        case decoder
    }
    public var action: Action
    public var source: Source
    public var variantIndex: Int
    public var width: Int
    public var height: Int
    /// The limit in force, "WxH", and its pixel count.
    public var limit: String
    public var maxPixels: Int
    /// The segment whose media was refused (not for `variant-excluded`).
    public var mediaSequence: Int?
    public var codec: String?

    public init(
        action: Action, source: Source, variantIndex: Int, width: Int, height: Int, limit: ResolutionLimit,
        mediaSequence: Int? = nil, codec: String? = nil
    ) {
        self.action = action
        self.source = source
        self.variantIndex = variantIndex
        self.width = width
        self.height = height
        self.limit = limit.description
        self.maxPixels = limit.maxPixels
        self.mediaSequence = mediaSequence
        self.codec = codec
    }
}
