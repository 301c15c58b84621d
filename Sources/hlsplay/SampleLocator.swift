import Foundation

/// Finds the embedded default: the sample ladder built by Samples/make-all.sh. The lookup order,
/// documented in docs/install.md and hlsplay(1):
///  1. `$HLSPLAY_SAMPLES` (a folder with master.m3u8);
///  2. the installed layout: `../share/hlsplay/samples/ladder-2s` from the folder of the executable,
///     symbolic links resolved (`make install` copies the ladder there when it is built);
///  3. a source checkout: `Samples/build/ladder-2s` under the current directory, then under the
///     executable's folder and each of its five parents.
enum SampleLocator {
    static let ladderPath = "Samples/build/ladder-2s"
    /// Where `make install` puts the ladder, under PREFIX.
    static let installedLadderPath = "share/hlsplay/samples/ladder-2s"
    /// How many parents of the executable's folder a source checkout is looked for in.
    static let checkoutSearchDepth = 5

    static func defaultLadder() -> URL? {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["HLSPLAY_SAMPLES"], fm.fileExists(atPath: env + "/master.m3u8") {
            return URL(fileURLWithPath: env)
        }
        var candidates: [URL] = []
        let exe = Bundle.main.executableURL?.resolvingSymlinksInPath()
        if let exe {
            candidates.append(
                exe.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent(installedLadderPath))
        }
        var checkouts = [URL(fileURLWithPath: fm.currentDirectoryPath)]
        if var dir = exe?.deletingLastPathComponent() {
            for _ in 0...checkoutSearchDepth {
                checkouts.append(dir)
                dir = dir.deletingLastPathComponent()
            }
        }
        candidates += checkouts.map { $0.appendingPathComponent(ladderPath) }
        return candidates.first { fm.fileExists(atPath: $0.appendingPathComponent("master.m3u8").path) }
    }
}
