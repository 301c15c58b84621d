import Foundation
import Testing
import TestSupport
@testable import HLSMedia

/// Inputs the corrupt-media run under AddressSanitizer found (docs/hardening.md,
/// finding 1): damaged or mislabelled AAC makes a frame with sample rate 0;
/// swr_init failed, the half-made resampler stayed, and the next convert or
/// drain hit an assertion inside libswresample that aborts the process.
@Suite struct ResamplerRegressionTests {
    /// Demuxes as packed ADTS and decodes and drains every audio track; errors are fine, an abort is not.
    func decodeAll(_ data: Data) {
        guard let result = try? SegmentDemuxer.demux(segment: data, hint: .packedAudioADTS) else { return }
        for track in result.tracks where track.kind == .audio {
            guard let decoder = try? TrackDecoder(parameters: track) else { continue }
            for packet in result.packets where packet.parameters === track {
                _ = try? decoder.decode(packet)
            }
            _ = try? decoder.drain()
        }
    }

    @Test func minimizedReproducer_doesNotAbort() throws {
        let data = try Data(contentsOf: Repo.root.appendingPathComponent("Tools/hardening/asan/regressions/swr-uninitialized-flush.adts"))
        decodeAll(data)
    }

    @Test func videoSegmentsFedAsADTS_doNotAbort() throws {
        for name in ["seg_00002.ts", "seg_00003.ts"] {
            let url = Repo.root.appendingPathComponent("Samples/build/short-2s/v3/\(name)")
            guard FileManager.default.fileExists(atPath: url.path) else {
                Issue.record("\(url.path) is missing: run Samples/make-all.sh")
                return
            }
            decodeAll(try Data(contentsOf: url))
        }
    }
}
