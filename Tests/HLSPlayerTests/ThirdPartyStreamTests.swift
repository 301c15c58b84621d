// Every stream in ../shared/data/thirdparty — the HLS test assets of the Shaka Player project
// (github.com/shaka-project/shaka-player, test/test/assets/, Apache License 2.0; see that folder's
// README.md) — played through hls-origin by the real binary and held against ffmpeg's decode of the
// same URL (StreamPlayback.swift): exit 0, the frames ffmpeg decodes (within one segment's), no
// decode errors where ffmpeg has none, a bounded wall time. One test per stream, named after it.
// Streams longer than about 20 s are played for 6 s (audio only: 4 s) with `--duration`, to keep
// the suite's wall time near three minutes; the reference is then ffmpeg's first seconds.

import Foundation
import Testing
import TestSupport

@Suite(.serialized, .tags(.realTime)) struct ThirdPartyStreamTests {
    /// Streams that fail today because of a known defect, with the defect (none now). A test in
    /// this list records its failures as known issues; once it passes, Swift Testing reports that
    /// the known issue did not occur: remove its entry then.
    static let knownIssues: [String: String] = [:]

    /// `<repo>/../shared/data/thirdparty`; a test failure (not a skip) when it is missing.
    static func folder() throws -> URL {
        let dir = Repo.sharedData.appendingPathComponent("thirdparty")
        guard FileManager.default.fileExists(atPath: dir.appendingPathComponent("README.md").path) else {
            throw TestSetupError("third-party streams not found at \(dir.path): expected <repo>/../shared/data/thirdparty (see its README.md)")
        }
        guard FileManager.default.isExecutableFile(atPath: Repo.hlsplay.path) else {
            throw TestSetupError("\(Repo.hlsplay.path) is missing: run `swift build` first (Tools/test.sh does)")
        }
        return dir
    }

    func play(_ stream: StreamCase) throws {
        let dir = try Self.folder().appendingPathComponent(stream.name)
        playAndCompare(stream, root: dir, knownIssue: Self.knownIssues[stream.name])
    }

    // Audio only.

    @Test func shakaTsAAC_aacOnlyMPEGTS() throws {
        try play(StreamCase(name: "shaka-ts-aac", entry: "playlist.m3u8", mediaSeconds: 31.912, segmentSeconds: 4, playSeconds: 4))
    }

    @Test func shakaApplePackedAAC_rawADTSSegments() throws {
        try play(StreamCase(name: "shaka-apple-packed-aac", entry: "manifest.m3u8", mediaSeconds: 39.985, segmentSeconds: 10.03, playSeconds: 4))
    }

    @Test func shakaWowzaPackedMP3_rawMP3Segments() throws {
        try play(StreamCase(name: "shaka-wowza-packed-mp3", entry: "playlist.m3u8", mediaSeconds: 40, segmentSeconds: 10, playSeconds: 4))
    }

    @Test func shakaWowzaTsMP3_mp3OnlyMPEGTS() throws {
        try play(StreamCase(name: "shaka-wowza-ts-mp3", entry: "manifest.m3u8", mediaSeconds: 40, segmentSeconds: 10, playSeconds: 4))
    }

    /// ffmpeg refuses the `.ec3` extension unless told not to be picky about it.
    @Test func shakaPackedEC3_rawEAC3Segments() throws {
        try play(
            StreamCase(
                name: "shaka-packed-ec3", entry: "prog_index.m3u8", mediaSeconds: 47.872, segmentSeconds: 5.984, playSeconds: 4,
                reference: .sameURL(inputOptions: ["-extension_picky", "0"])))
    }

    // Video.

    /// Written with `#EXT-X-VERSION: 10` (a blank after the colon), which once made the whole playlist
    /// fail with exit 65; its first and fifth segments are EXT-X-GAP (and absent): played to the end.
    @Test func shakaGap_gapsAndVersionWithABlank() throws {
        try play(StreamCase(name: "shaka-gap", entry: "playlist.m3u8", mediaSeconds: 32.032, segmentSeconds: 4.004))
    }

    /// ffmpeg fails on the playlist (exit 69): the reference is each I-frame segment decoded behind the init section.
    @Test func shakaIFrameOnly_iFramesOnlyFMP4() throws {
        try play(
            StreamCase(
                name: "shaka-iframe-only", entry: "media.m3u8", mediaSeconds: 4.004, segmentSeconds: 2.002,
                reference: .perSegment(mediaPlaylist: "media.m3u8")))
    }

    /// The 33-bit PTS wraps in the middle of the fifth segment (8-10 s): played past it.
    @Test func shakaTsRollover_ptsWrapsMidSegment() throws {
        try play(StreamCase(name: "shaka-ts-rollover", entry: "playlist.m3u8", mediaSeconds: 20, segmentSeconds: 2, playSeconds: 12))
    }

    @Test func shakaTextOffset_webVTTGroupAndDiscontinuity() throws {
        try play(StreamCase(name: "shaka-text-offset", entry: "index.m3u8", mediaSeconds: 8.5, segmentSeconds: 2))
    }

    @Test func shakaMultivideo_videoRenditionGroupsAndAlternateAudio() throws {
        try play(StreamCase(name: "shaka-multivideo", entry: "master.m3u8", mediaSeconds: 4, segmentSeconds: 4))
    }

    @Test func shakaSvtaFMP4_programDateTimeAndDateRanges() throws {
        try play(StreamCase(name: "shaka-svta-fmp4", entry: "main.m3u8", mediaSeconds: 20, segmentSeconds: 4, playSeconds: 6))
    }

    @Test func shakaFMP4Muxed_aacAndH264InOneFMP4() throws {
        try play(StreamCase(name: "shaka-fmp4-muxed", entry: "hls.m3u8", mediaSeconds: 1.001, segmentSeconds: 1.001))
    }

    @Test func shakaTsOpus_opusInMPEGTS() throws {
        try play(StreamCase(name: "shaka-ts-opus", entry: "playlist.m3u8", mediaSeconds: 19.136, segmentSeconds: 8, playSeconds: 6))
    }

    @Test func shakaTsH265_hevcInMPEGTS() throws {
        try play(StreamCase(name: "shaka-ts-h265", entry: "hevc.m3u8", mediaSeconds: 24, segmentSeconds: 12, playSeconds: 6))
    }

    @Test func shakaPackagerFMP4Byterange_mapAndSegmentByteRanges() throws {
        try play(StreamCase(name: "shaka-packager-fmp4-byterange", entry: "master.m3u8", mediaSeconds: 10.167, segmentSeconds: 10.167))
    }
}
