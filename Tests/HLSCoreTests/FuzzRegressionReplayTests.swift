// Every input a fuzzer ever crashed on (Tools/hardening/fuzz/regressions/<target>/) and every playlist of the
// hostile corpus (Tools/hardening/hostile/cases/) goes through the parser again, in the debug build, whose
// overflow and conversion checks trap like the fuzz builds' and the release binary's. A request-path
// input (playlists separated by "#--reload" lines) is followed further, the way the player takes a
// reload: delta-update merge, timeline, the request-rate bound admitting each request, every byte
// range as a Range header, the next Media Sequence Number, the segment's end on the monotonic clock,
// CMCD and the reload delay. The test passes when
// nothing traps; a trap ends the test process (SIGILL), which fails the suite.
// Tools/hardening/fuzz/run.sh replays the same files through the instrumented fuzz targets (docs/hardening.md).

import Foundation
import Testing
import TestSupport
@testable import HLSCore

private enum FuzzRegressions {
    static let repo = Repo.root
    /// The separator between a playlist and its reload (Tools/hardening/fuzz/Targets/PlaylistMutator.swift).
    static let reloadSeparator = Data("\n#--reload\n".utf8)
    static let base = URL(string: "https://fuzz.example/live/index.m3u8?token=x")!

    /// The regular files under `relative` (recursively) whose name passes `keep`.
    static func files(_ relative: String, _ keep: (String) -> Bool = { !$0.hasPrefix(".") }) -> [URL] {
        let root = repo.appendingPathComponent(relative)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey]) else { return [] }
        return walker.compactMap { $0 as? URL }
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true && keep($0.lastPathComponent) }
            .sorted { $0.path < $1.path }
    }

    static func chunks(_ data: Data) -> [Data] {
        var out: [Data] = []
        var rest = data[...]
        while let r = rest.range(of: reloadSeparator) {
            out.append(Data(rest[..<r.lowerBound]))
            rest = rest[r.upperBound...]
        }
        out.append(Data(rest))
        return out
    }

    /// Parses each playlist of `data` and follows each Media Playlist through the arithmetic the
    /// player does with it. Returns how many parsed and how many were refused.
    static func replay(_ data: Data) -> (parsed: Int, refused: Int) {
        var parsed = 0, refused = 0
        var timeline = SegmentTimeline()
        var previous: MediaPlaylist?
        var now = MonotonicInstant(nanoseconds: 1_000_000_000)
        var requests = RequestRateBound()
        for chunk in chunks(data) {
            let playlist: Playlist
            do {
                playlist = try PlaylistParser.parse(data: chunk, baseURL: base)
            } catch {
                refused += 1
                continue
            }
            parsed += 1
            guard case .media(var media) = playlist else { continue }
            if media.skip != nil {
                guard let prev = previous, let merged = try? LowLatencyRules.merge(delta: media, into: prev) else { continue }
                media = merged
            }
            let changed: Bool
            switch timeline.update(with: media) {
            case .inSync(let n): changed = n > 0
            default: changed = true
            }
            let inputs = RequestRateInputs(playlist: media, forwardBufferTargetSeconds: 30)
            let segmentLimit = RequestRateRules.limit(for: .segment, inputs: inputs)
            _ = requests.admit(.playlist, limit: RequestRateRules.limit(for: .playlist, inputs: inputs), at: now)
            for segment in media.segments {
                now = max(now, requests.admit(.segment, limit: segmentLimit, at: now).startAt)
                _ = segment.byteRange?.httpRange
                _ = segment.initializationSection?.byteRange?.httpRange
                for part in segment.parts { _ = part.byteRange?.httpRange }
                _ = media.segmentIndex(ofMediaSequence: segment.mediaSequence + 1)
                let start = timeline.startSeconds(ofMediaSequence: segment.mediaSequence) ?? 0
                _ = now.advanced(bySeconds: segment.durationSeconds)
                _ = CMCDData.bufferLengthMs(seconds: start + segment.durationSeconds)
                _ = CMCDData.throughputKbps(bps: Double(segment.bitrateBps ?? 0))
            }
            for part in media.trailingParts { _ = part.byteRange?.httpRange }
            _ = LivePlaylistRules.startSegmentIndex(for: media)
            let target = LivePlaylistRules.targetDurationSeconds(for: media)
            now = now.advanced(bySeconds: LivePlaylistRules.reloadDelaySeconds(targetDurationSeconds: target, playlistChanged: changed))
            previous = media
        }
        return (parsed, refused)
    }
}

@Suite struct FuzzRegressionReplayTests {
    /// Each file a fuzz target crashed on, through the parser (and, for request-path inputs, the
    /// reload arithmetic). Before the numbers were range-checked each of them trapped (SIGILL).
    @Test func everyFuzzRegression_replaysWithoutATrap() {
        let files = FuzzRegressions.files("Tools/hardening/fuzz/regressions") { !$0.hasPrefix(".") && $0 != "README.md" }
        // The directory holds the crashes the fuzzers found (docs/hardening.md); none read is a broken path.
        #expect(files.count >= 4, "expected the fuzz regressions under \(FuzzRegressions.repo.path)/Tools/hardening/fuzz/regressions")
        for file in files {
            guard let data = try? Data(contentsOf: file) else { Issue.record("cannot read \(file.path)"); continue }
            let (parsed, refused) = FuzzRegressions.replay(data)
            #expect(parsed + refused >= 1, "\(file.lastPathComponent): nothing replayed")
        }
    }

    /// Each playlist of the hostile corpus through the same path (HostileCorpusTests plays them with
    /// the release binary; this runs them in the unit tests' debug build too).
    @Test func everyHostileCorpusPlaylist_replaysWithoutATrap() {
        let files = FuzzRegressions.files("Tools/hardening/hostile/cases") { $0.hasSuffix(".m3u8") }
        #expect(files.count >= 22, "expected the hostile corpus under \(FuzzRegressions.repo.path)/Tools/hardening/hostile/cases")
        var refused = 0
        for file in files {
            guard let data = try? Data(contentsOf: file) else { Issue.record("cannot read \(file.path)"); continue }
            refused += FuzzRegressions.replay(data).refused
        }
        // Most hostile numbers are refused with their line and rule; the at-the-bound ones parse.
        #expect(refused > 0 && refused < files.count, "\(refused) of \(files.count) refused")
    }
}
