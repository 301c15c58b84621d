import Foundation

/// The folder a media-making script writes, built once into the temporary folder under a name made from the
/// script's own bytes: later runs (and other test processes) reuse it, and a changed script builds a new one. It is
/// built beside its final name and renamed into place, so runs in parallel never see half of it.
/// - Parameters:
///   - script: the bash script; it is run as `bash SCRIPT OUT_DIR ARGUMENTS...`.
///   - arguments: after the output folder (e.g. the cases to make).
///   - directoryPrefix: the folder's name before the digest, e.g. `hlsplay-corpus`.
public func scriptOutputBuiltOnce(
    script: URL, arguments: [String] = [], directoryPrefix: String,
    timeoutSeconds: Double
) throws -> URL {
    let bytes = try Data(contentsOf: script)
    // FNV-1a of the script: a stable name across processes (Hasher is seeded per process).
    let digest = bytes.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x100_0000_01b3 }
    let tmp = FileManager.default.temporaryDirectory
    let dir = tmp.appendingPathComponent("\(directoryPrefix)-\(String(digest, radix: 16))")
    if FileManager.default.fileExists(atPath: dir.path) { return dir }
    let building = tmp.appendingPathComponent("\(directoryPrefix)-building-\(UUID().uuidString)")
    let made = try runProcess(
        URL(fileURLWithPath: "/bin/bash"), [script.path, building.path] + arguments,
        standardInput: .nullDevice, timeoutSeconds: timeoutSeconds)
    guard made.status == 0 else {
        try? FileManager.default.removeItem(at: building)
        throw TestSetupError("\(script.lastPathComponent) failed (\(made.status)): \(made.stderr.suffix(800))")
    }
    do {
        try FileManager.default.moveItem(at: building, to: dir)
    } catch {
        // Another run got there first: use its folder.
        try? FileManager.default.removeItem(at: building)
        guard FileManager.default.fileExists(atPath: dir.path) else { throw error }
    }
    return dir
}
