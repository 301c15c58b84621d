import Foundation

/// Finds the embedded default: the sample ladder built by Samples/make-all.sh.
enum SampleLocator {
    static let ladderPath = "Samples/build/ladder-2s"

    static func defaultLadder() -> URL? {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["HLSPLAY_SAMPLES"], fm.fileExists(atPath: env + "/master.m3u8") {
            return URL(fileURLWithPath: env)
        }
        var candidates: [URL] = [URL(fileURLWithPath: fm.currentDirectoryPath)]
        if let exe = Bundle.main.executableURL?.resolvingSymlinksInPath() {
            var dir = exe.deletingLastPathComponent()
            for _ in 0..<6 {
                candidates.append(dir)
                dir = dir.deletingLastPathComponent()
            }
        }
        for base in candidates {
            let dir = base.appendingPathComponent(ladderPath)
            if fm.fileExists(atPath: dir.appendingPathComponent("master.m3u8").path) { return dir }
        }
        return nil
    }
}
