// A picture limit keeps FFmpeg from allocating the pictures a hostile parameter set claims: the
// demuxer reads the parameter sets with FFmpeg's parsers before its probe decodes anything, and a
// decoder refuses a size above the limit in get_format, before it allocates. The media comes from
// Tools/hardening/hostile/make-media.sh (5.8 KB segments whose SPS claims 16000x16000; see its header).

import Foundation
import Testing
import TestSupport
@testable import HLSMedia

@Suite(.serialized) struct PictureLimitTests {
    /// The three SPS bombs, built once per version of the script into the temporary folder.
    static let media: Result<URL, any Error> = Result {
        try scriptOutputBuiltOnce(
            script: Repo.root.appendingPathComponent("Tools/hardening/hostile/make-media.sh"),
            arguments: ["sps-bomb", "sps-bomb-cropped", "sps-bomb-midstream"],
            directoryPrefix: "hlsplay-sps-bombs", timeoutSeconds: 600)
    }

    static func segment(_ path: String) throws -> Data {
        _ = try Fixtures.get() // FFmpeg's log routed away from the test output
        return try Data(contentsOf: media.get().appendingPathComponent(path))
    }

    /// 8K, as the player's default `--max-resolution` (DCI 8192x4320, either orientation).
    static let eightK = PictureLimit(longSide: 8192, shortSide: 4320) { w, h in max(w, h) <= 8192 && min(w, h) <= 4320 }

    @Test func ffmpegBound_leavesRoomForAlignment() {
        #expect(Self.eightK.ffmpegMaxPixels == (8192 + 64) * (4320 + 64))
        #expect(Self.eightK.admits(width: 7680, height: 4320, codedWidth: 7680, codedHeight: 4320))
        #expect(Self.eightK.admits(width: 1920, height: 1080, codedWidth: 1920, codedHeight: 1088))
        // A cropping window cannot hide the coded size.
        #expect(!Self.eightK.admits(width: 64, height: 64, codedWidth: 16000, codedHeight: 16000))
    }

    @Test func demux_spsClaiming16000x16000_refusedBeforeTheProbe() throws {
        let bytes = try Self.segment("sps-bomb/seg0.ts")
        #expect(throws: MediaError.pictureAboveLimit(width: 16000, height: 16000, limit: "8192x4320")) {
            try SegmentDemuxer.demux(segment: bytes, hint: .mpegTS, pictureLimit: Self.eightK)
        }
    }

    /// The container (the parser's display size) says 64x64; the coded size is 16000x16000.
    @Test func demux_croppedBomb_codedSizeRefused() throws {
        let bytes = try Self.segment("sps-bomb-cropped/seg0.ts")
        #expect(throws: MediaError.pictureAboveLimit(width: 16000, height: 16000, limit: "8192x4320")) {
            try SegmentDemuxer.demux(segment: bytes, hint: .mpegTS, pictureLimit: Self.eightK)
        }
    }

    /// The bomb after a good segment, its codec parameters reused (no probe): the decoder decodes
    /// the good frames, then refuses the new SPS in get_format — with one thread and with frame threads.
    @Test(arguments: [1, 0])
    func decoder_newSPSAboveTheLimit_refused(threads: Int) throws {
        let good = try SegmentDemuxer.demux(segment: try Self.segment("sps-bomb-midstream/seg0.ts"), hint: .mpegTS, pictureLimit: Self.eightK)
        let bomb = try SegmentDemuxer.demux(
            segment: try Self.segment("sps-bomb-midstream/seg1.ts"), hint: .mpegTS,
            codecParameters: .reusing(good.tracks), pictureLimit: Self.eightK)
        let track = try #require(good.track(.video))
        #expect(track.width == 64 && track.height == 64)
        let decoder = try TrackDecoder(parameters: track, threadCount: threads, pictureLimit: Self.eightK)
        var frames = 0
        for packet in good.packets(of: .video) { frames += try decoder.decode(packet).count }
        var refusal: MediaError?
        for packet in bomb.packets(of: .video) {
            do { frames += try decoder.decode(packet).count } catch { refusal = error; break }
        }
        if refusal == nil {
            do { frames += try decoder.drain().count } catch { refusal = error }
        }
        #expect(refusal == .pictureAboveLimit(width: 16000, height: 16000, limit: "8192x4320"))
        #expect(frames >= 1, "the good segment's frames came out first")
    }

    @Test func decoder_parametersAboveTheLimit_refusedAtOpen() throws {
        let good = try SegmentDemuxer.demux(segment: try Self.segment("sps-bomb-midstream/seg0.ts"), hint: .mpegTS)
        let track = try #require(good.track(.video))
        let tiny = PictureLimit(longSide: 32, shortSide: 32) { w, h in max(w, h) <= 32 && min(w, h) <= 32 }
        #expect(throws: MediaError.pictureAboveLimit(width: 64, height: 64, limit: "32x32")) {
            try TrackDecoder(parameters: track, pictureLimit: tiny)
        }
        // No limit, or one it fits: it opens and decodes.
        let decoder = try TrackDecoder(parameters: track, pictureLimit: Self.eightK)
        var frames = 0
        for packet in good.packets(of: .video) { frames += try decoder.decode(packet).count }
        frames += try decoder.drain().count
        #expect(frames == 25)
    }
}
