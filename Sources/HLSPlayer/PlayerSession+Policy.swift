// PlayerSession: the stall-risk predictor and the playback policy controller (docs/stall-prediction.md).

import Foundation
import HLSCore
import HLSMedia
import HLSNet

// MARK: - Stall-risk prediction and playback policy (docs/stall-prediction.md)

extension PlayerSession {
    /// Loads the chosen predictor; a model that cannot be loaded falls back to the heuristic, logged.
    func setUpPredictor() {
        let (chosen, problem) = SessionDecisions.makePredictor(configuration, defaultModelPath: ModelLocator.defaultModelPath)
        lock.withLock { core.predictor = chosen }
        if let problem {
            recorder.record(.error(ErrorRecord(fatal: false, category: "predictor", message: problem)))
        }
    }

    /// Starts the policy controller once the ladder is known.
    func startPolicyController() {
        let rungs = videoLadderBitratesBps()
        perform(lock.withLock { core.startPolicyController(configuration.policy, ladderBitratesBps: rungs) })
    }

    /// Under `lock`: the BANDWIDTH of the variant decided last.
    var currentRungBps: Int? { core.currentVariant.flatMap { i in variants.first { $0.index == i } }?.bandwidthBps }

    /// Under `lock`: what the predictor reads of the machine, with the decode lag since the last reading.
    func deviceReadings(cpuPressureAvg10Percent cpu: Double?, thermalMaxCelsius thermal: Double?) -> DeviceReadings {
        let lag = decodeWatch.lagSinceLastReading()
        return DeviceReadings(
            cpuPressureAvg10Percent: cpu, decodeLagRatio: DecodeLag.ratio(decodeSeconds: lag.busySeconds, mediaSeconds: lag.mediaSeconds),
            thermalMaxCelsius: thermal)
    }
}

/// Finds the shipped stall model (`--model FILE`, the configuration's `modelPath`, wins over all of this).
/// The lookup order, documented in docs/install.md and hlsplay(1):
///  1. `$HLSPLAY_MODEL` when set and not empty, as is (a missing file is then reported, not skipped);
///  2. the installed layout: `../share/hlsplay/models/…` from the folder of the executable, symbolic
///     links resolved (PREFIX/bin/hlsplay finds PREFIX/share/hlsplay/models/…, wherever PREFIX is);
///  3. a source checkout: `models/…` under the current directory, then under the executable's folder
///     and each of its six parents (.build/release/hlsplay finds the repository's models/);
///  4. the usual prefixes' share folders: /usr/local/share/hlsplay/models/…, then /usr/share/hlsplay/models/….
enum ModelLocator {
    static let modelFile = "models/stall-logistic-v2.json"
    /// Where an installation keeps its data, under PREFIX (`make install`).
    static let installedDataFolder = "share/hlsplay"
    /// The prefixes looked at last, when the executable sits outside any installation.
    static let systemPrefixes = ["/usr/local", "/usr"]
    /// How many parents of the executable's folder a source checkout is looked for in.
    static let checkoutSearchDepth = 6

    static func defaultModelPath() -> String? {
        let fm = FileManager.default
        let environment = ProcessInfo.processInfo.environment["HLSPLAY_MODEL"]
        if let environment, !environment.isEmpty { return environment }
        let candidates = candidatePaths(
            executable: Bundle.main.executableURL?.resolvingSymlinksInPath(),
            currentDirectory: URL(fileURLWithPath: fm.currentDirectoryPath))
        return candidates.first { fm.fileExists(atPath: $0) }
    }

    /// The paths tried, in order, after `$HLSPLAY_MODEL` (steps 2 to 4 above).
    static func candidatePaths(executable: URL?, currentDirectory: URL) -> [String] {
        var paths: [String] = []
        let exeFolder = executable?.deletingLastPathComponent()
        if let exeFolder {
            paths.append(
                exeFolder.deletingLastPathComponent().appendingPathComponent(installedDataFolder)
                    .appendingPathComponent(modelFile).path)
        }
        var checkouts = [currentDirectory]
        if var dir = exeFolder {
            for _ in 0...checkoutSearchDepth {
                checkouts.append(dir)
                dir = dir.deletingLastPathComponent()
            }
        }
        paths += checkouts.map { $0.appendingPathComponent(modelFile).path }
        paths += systemPrefixes.map { "\($0)/\(installedDataFolder)/\(modelFile)" }
        var seen = Set<String>()
        return paths.filter { seen.insert($0).inserted }
    }
}
