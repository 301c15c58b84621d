// libFuzzer target: raw bytes -> PlaylistParser.parse(data:baseURL:).
// The parser decides Multivariant vs Media from the content, so one target covers
// both paths; the seed corpus holds both kinds. The first byte (when it is not '#')
// never matters to a real playlist, so no input steering is done: bytes go in as-is.
// Errors are the expected outcome for most inputs; only crashes (a Swift trap on an
// overflow or a bad conversion included: -O keeps those checks), hangs, leaks and
// runaway memory are findings. Mutations are structure-aware (PlaylistMutator.swift).

import Foundation
import HLSCore

private let base = URL(string: "https://fuzz.example/path/to/playlist.m3u8?token=x")!
private let parentVariables = ["P": "parent-value", "Q": "q"]
/// Small limits so the fuzzer also reaches every PlaylistLimits check (the defaults are far
/// above -max_len).
private let tight = PlaylistLimits(maxBytes: 8192, maxLineLength: 256, maxVariants: 4, maxSegments: 8,
                                   maxRenditions: 4, maxAttributes: 6, maxPartialSegments: 8,
                                   maxVariables: 3, maxDateRanges: 3)

@_cdecl("LLVMFuzzerTestOneInput")
public func playlistFuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Data(bytes: data, count: size)
    do {
        // Odd sizes also pass parent variables so EXT-X-DEFINE:IMPORT= paths resolve;
        // half of the sizes parse with tight limits.
        let playlist = try PlaylistParser.parse(data: bytes, baseURL: base,
                                                parentVariables: size % 2 == 1 ? parentVariables : [:],
                                                limits: size % 4 >= 2 ? tight : .default)
        // Touch the result so nothing is optimised away (both kinds).
        switch playlist {
        case .multivariant(let m): if m.variants.count == -1 { print(m) }
        case .media(let m): if m.segments.count == -1 { print(m) }
        }
    } catch {
        _ = error.message.utf8.count
    }
    return 0
}

@_cdecl("LLVMFuzzerCustomMutator")
public func playlistFuzzCustomMutator(_ data: UnsafeMutablePointer<UInt8>, _ size: Int, _ maxSize: Int, _ seed: UInt32) -> Int {
    playlistCustomMutate(data, size, maxSize, seed, reloads: false)
}
