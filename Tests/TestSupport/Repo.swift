// Where the package under test keeps its binaries, samples and data, and the error a test
// throws when something it needs (a binary, a sample ladder, a tool) is not there.

import Foundation

/// Paths of the package under test, found from this file (Tests/TestSupport/Repo.swift).
public enum Repo {
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    /// The debug hlsplay that `swift build` makes.
    public static var hlsplay: URL { root.appendingPathComponent(".build/debug/hlsplay") }
    /// The debug hls-origin that `swift build` makes.
    public static var hlsOrigin: URL { root.appendingPathComponent(".build/debug/hls-origin") }
    /// Shared test data beside the package (playlist fixtures, traces, third-party streams).
    public static var sharedData: URL { root.deletingLastPathComponent().appendingPathComponent("shared/data") }
    public static func samples(_ name: String) -> URL { root.appendingPathComponent("Samples/build/\(name)") }

    /// The sample ladder, or a test failure that says how to make it.
    public static func requireSamples(_ name: String) throws -> URL {
        let dir = samples(name)
        guard FileManager.default.fileExists(atPath: dir.appendingPathComponent("master.m3u8").path) else {
            throw TestSetupError("sample ladder \(dir.path) is missing: run Samples/make-all.sh (Tools/test.sh does)")
        }
        guard FileManager.default.isExecutableFile(atPath: hlsplay.path) else {
            throw TestSetupError("\(hlsplay.path) is missing: run `swift build` first (Tools/test.sh does)")
        }
        return dir
    }
}

/// Something a test needs is missing or broken (not a failed expectation about the code under test).
public struct TestSetupError: Error, CustomStringConvertible {
    public var description: String
    public init(_ d: String) { description = d }
}

/// The first executable `name` on PATH (then /usr/bin, /usr/local/bin), or nil.
public func findOnPath(_ name: String) -> URL? {
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    for dir in path.split(separator: ":").map(String.init) + ["/usr/bin", "/usr/local/bin"] {
        let url = URL(fileURLWithPath: dir).appendingPathComponent(name)
        if FileManager.default.isExecutableFile(atPath: url.path) { return url }
    }
    return nil
}
