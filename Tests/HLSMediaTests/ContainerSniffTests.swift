import Foundation
import Testing
@testable import HLSMedia

/// The container of a segment from its first bytes, whatever its name says.
@Suite struct ContainerSniffTests {
    @Test func realSegments_tsFmp4AndPackedADTS() throws {
        let fixtures = try Fixtures.get()
        #expect(ContainerHint.sniff(segment: try fixtures.segment(rung: 0, index: 0)) == .mpegTS)
        #expect(
            ContainerHint.sniff(
                segment: try Data(contentsOf: fixtures.fmp4Segment),
                initializationSection: try Data(contentsOf: fixtures.fmp4Init)) == .fragmentedMP4)
        #expect(ContainerHint.sniff(segment: try Data(contentsOf: fixtures.fmp4Init)) == .fragmentedMP4)
        #expect(ContainerHint.sniff(segment: try Data(contentsOf: fixtures.packedAudio)) == .packedAudioADTS)
    }

    /// An MPEG-TS initialization section (PAT/PMT behind EXT-X-MAP) means MPEG-TS, not fMP4.
    @Test func tsInitializationSection_isMPEGTS() throws {
        let fixtures = try Fixtures.get()
        let ts = try fixtures.segment(rung: 0, index: 0)
        #expect(ContainerHint.sniff(segment: ts.dropFirst(376), initializationSection: ts.prefix(376)) == .mpegTS)
    }

    /// Packed audio frame headers, bare and behind an ID3v2 tag (Apple's timestamp PRIV frame).
    @Test func packedAudio_syncWords_withAndWithoutID3() {
        let adts: [UInt8] = [0xFF, 0xF1, 0x50, 0x80, 0x02, 0x1F, 0xFC]
        let mp3: [UInt8] = [0xFF, 0xFB, 0x90, 0x64, 0x00, 0x00]
        let ac3: [UInt8] = [0x0B, 0x77, 0x3A, 0x4C, 0x14, 0x40, 0x43] // bsid 8
        let eac3: [UInt8] = [0x0B, 0x77, 0x00, 0xBF, 0x34, 0x86, 0xFF] // bsid 16
        // ID3v2.4 header with a 10-byte body (syncsafe size 0x0A).
        let id3: [UInt8] = Array("ID3".utf8) + [4, 0, 0, 0, 0, 0, 0x0A] + [UInt8](repeating: 0, count: 10)
        for (header, hint) in [(adts, ContainerHint.packedAudioADTS), (mp3, .packedMP3), (ac3, .packedAC3), (eac3, .packedEAC3)] {
            #expect(ContainerHint.sniff(segment: Data(header + [UInt8](repeating: 0, count: 32))) == hint)
            #expect(ContainerHint.sniff(segment: Data(id3 + header + [UInt8](repeating: 0, count: 32))) == hint, "behind ID3: \(hint)")
            #expect(hint.isPackedAudio)
        }
    }

    @Test func unknownBytes_sayNothing() {
        #expect(ContainerHint.sniff(segment: Data("WEBVTT\n\n00:00.000 --> 00:01.000\nhello\n".utf8)) == nil)
        #expect(ContainerHint.sniff(segment: Data([0x47, 1, 2])) == nil, "too short to tell")
        #expect(ContainerHint.sniff(segment: Data()) == nil)
        #expect(!ContainerHint.mpegTS.isPackedAudio)
    }
}
