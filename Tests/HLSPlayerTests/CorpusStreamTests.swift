// A small corpus in the style of other packagers, built at test time by Tools/corpus/make-corpus.sh
// with the ffmpeg CLI (a few seconds of media per item, a few seconds to build), every item played
// through hls-origin by the real binary and held against ffmpeg's decode of the same URL
// (StreamPlayback.swift). One test per item, named after it; the script's header lists the items.

import Foundation
import HLSCore
import HLSOrigin
import Testing
import TestSupport

@Suite(.serialized, .tags(.realTime)) struct CorpusStreamTests {
    /// Items that fail today because of a known defect, with the defect (none now). A test in
    /// this list records its failures as known issues; once it passes, Swift Testing reports that
    /// the known issue did not occur: remove its entry then.
    static let knownIssues: [String: String] = [:]

    /// The corpus, built once into the temporary folder and kept there under a name made from the
    /// script's own bytes: later runs reuse it, and a changed script builds a new one. It is built
    /// beside its final name and renamed into place, so runs in parallel never see half of it.
    static let corpus: Result<URL, any Error> = Result {
        _ = try requireFFmpeg()
        return try scriptOutputBuiltOnce(
            script: Repo.root.appendingPathComponent("Tools/corpus/make-corpus.sh"),
            directoryPrefix: "hlsplay-corpus", timeoutSeconds: 180)
    }

    /// A case whose media and longest segment durations are read from the item's media playlist.
    func item(
        _ name: String, entry: String = "prog.m3u8", mediaPlaylist: String = "prog.m3u8", playSeconds: Double? = nil,
        reference: StreamCase.Reference = .sameURL(), live: LiveConfiguration? = nil
    ) throws -> (StreamCase, URL) {
        guard FileManager.default.isExecutableFile(atPath: Repo.hlsplay.path) else {
            throw TestSetupError("\(Repo.hlsplay.path) is missing: run `swift build` first (Tools/test.sh does)")
        }
        let dir = try Self.corpus.get().appendingPathComponent(name)
        let file = dir.appendingPathComponent(mediaPlaylist)
        guard case .media(let playlist) = try PlaylistParser.parse(data: Data(contentsOf: file), baseURL: file) else {
            throw TestSetupError("\(name)/\(mediaPlaylist) is not a media playlist")
        }
        let stream = StreamCase(
            name: name, entry: entry, mediaSeconds: playlist.totalDurationSeconds,
            segmentSeconds: playlist.segments.map(\.durationSeconds).max() ?? 0,
            playSeconds: playSeconds, reference: reference, live: live)
        return (stream, dir)
    }

    func play(_ made: (StreamCase, URL)) {
        playAndCompare(made.0, root: made.1, knownIssue: Self.knownIssues[made.0.name])
    }

    // Audio only, played to the end (a few seconds each): they must start, and end.

    @Test func packedAAC_adtsSegments() throws { play(try item("packed-aac")) }

    @Test func packedMP3_mp3Segments() throws { play(try item("packed-mp3")) }

    @Test func packedAC3_ac3Segments() throws { play(try item("packed-ac3")) }

    /// `.ec3`, as Apple names E-AC-3 segments: ffmpeg reads them only when not picky about the extension.
    @Test func packedEAC3_ec3Segments() throws {
        play(try item("packed-eac3", reference: .sameURL(inputOptions: ["-extension_picky", "0"])))
    }

    @Test func tsMP3_mp3InMPEGTS() throws { play(try item("ts-mp3")) }

    // Video.

    /// A 4 s GOP cut into 1 s segments, without EXT-X-INDEPENDENT-SEGMENTS: every frame ffmpeg decodes
    /// from the same URL, the ones after each mid-GOP cut included.
    @Test func midGOP_longGOPCutEverySecond() throws { play(try item("mid-gop")) }

    /// 0.25 s CMAF segments served live with a four-segment (1 s) window, EXT-X-TARGETDURATION:0 as
    /// ffmpeg writes it: played for 6 s beside ffmpeg's first 6 s of the same live URL. The counts
    /// may differ by the window (where each starts in it), not one 0.25 s segment.
    @Test func cmafLive_quarterSecondSegmentsShortWindow() throws {
        var made = try item("cmaf-live", playSeconds: 6, live: LiveConfiguration(windowSegments: 4))
        made.0.segmentSeconds = 1
        play(made)
    }

    /// ffmpeg's HLS demuxer does not read I-frame playlists: the reference is each I-frame's byte range
    /// decoded behind the PAT/PMT of EXT-X-MAP (one frame each).
    @Test func iFrameOnly_byteRangePerIFrameInTS() throws {
        play(
            try item(
                "iframe-only", entry: "iframes.m3u8", mediaPlaylist: "iframes.m3u8",
                reference: .perSegment(mediaPlaylist: "iframes.m3u8")))
    }

    /// Blanks in the multivariant and media playlists (`#EXT-X-VERSION: 3`, `BANDWIDTH = 600000 ,`,
    /// `#EXTINF: 1.000000 ,`, trailing blanks): played, with the parser's warnings in the log.
    @Test func whitespace_blanksInBothPlaylists() throws {
        let made = try item("whitespace", entry: "master.m3u8")
        play(made)
        // The warnings say what was tolerated, with the rule (docs/playlist-parsing.md, "Whitespace").
        let run = try withOrigin(made.1) { base in
            try runHlsplay([base.appendingPathComponent("master.m3u8").absoluteString, "--headless", "--json", "--duration", "1"])
        }
        let warnings = run.events("playlist.loaded").flatMap { $0["warnings"] as? [String] ?? [] }
        #expect(warnings.contains { $0.contains("#EXT-X-VERSION") && $0.contains("RFC 8216 §4.1") }, "\(warnings)")
        #expect(warnings.contains { $0.contains("EXT-X-STREAM-INF attribute list") && $0.contains("RFC 8216 §4.2") }, "\(warnings)")
        #expect(warnings.contains { $0.contains("EXTINF duration") }, "\(warnings)")
    }
}
