// Device pressure on Linux, standing in for a phone's thermal state: CPU
// pressure (PSI, /proc/pressure/cpu) and thermal zones. A source the kernel
// does not have is reported as missing (nil), never faked. Parsing is pure
// (HLSCore DevicePressure); this file only reads the files.

import Foundation
import HLSCore

/// Where a real session reads the host's pressure signals for the stall features: the seam that lets a test run
/// the real session's threads with no host readings, as the virtual session has none (ShellParityTests).
public protocol HostSignalReading: Sendable {
    /// PSI "some avg10" for the CPU, percent; nil when there is no reading.
    func cpuPressureAvg10Percent() -> Double?
    /// The hottest thermal zone, °C; nil when there is no reading.
    func thermalMaxCelsius() -> Double?
}

/// The host's own readings: /proc/pressure/cpu and /sys/class/thermal (DeviceProbe). The default.
public struct HostSignals: HostSignalReading {
    public init() {}
    public func cpuPressureAvg10Percent() -> Double? { DeviceProbe.cpuPressureAvg10Percent() }
    public func thermalMaxCelsius() -> Double? { DeviceProbe.thermalMaxCelsius() }
}

/// No host readings, as in a virtual session: the stall features' CPU pressure and thermal state stay missing.
public struct NoHostSignals: HostSignalReading {
    public init() {}
    public func cpuPressureAvg10Percent() -> Double? { nil }
    public func thermalMaxCelsius() -> Double? { nil }
}

enum DeviceProbe {
    /// PSI "some avg10" for the CPU, percent; nil when the kernel has no PSI.
    /// A reading younger than `cpuPressureReuseSeconds` is shared by every session
    /// of the process instead of each monitor tick reading the file again.
    static func cpuPressureAvg10Percent() -> Double? {
        pressureCache.value(maximumAgeSeconds: cpuPressureReuseSeconds) {
            guard let text = try? String(contentsOfFile: "/proc/pressure/cpu", encoding: .utf8) else { return nil }
            return (try? PressureStallInfo.parse(text))?.some.avg10Percent
        }
    }

    /// How long one PSI reading is reused, seconds. The kernel recomputes the
    /// averages every 2 s, so a younger reading is as fresh as a new one.
    static let cpuPressureReuseSeconds = 0.5
    private static let pressureCache = ReadingCache()

    /// The thermal zones' files, found once.
    static let thermalZonePaths: [String] = {
        let base = "/sys/class/thermal"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        return names.filter { $0.hasPrefix("thermal_zone") }.sorted().map { "\(base)/\($0)/temp" }
    }()

    /// The hottest thermal zone, °C; nil when there is none.
    static func thermalMaxCelsius() -> Double? {
        guard !thermalZonePaths.isEmpty else { return nil }
        return ThermalZoneReading.maxCelsius(
            thermalZonePaths.map { path in
                (try? String(contentsOfFile: path, encoding: .utf8)).flatMap(ThermalZoneReading.celsius(fromSysfsText:))
            })
    }
}

/// The last reading of a device file and when it was taken (monotonic), shared
/// between threads.
final class ReadingCache: @unchecked Sendable {
    private let lock = NSLock()
    private var readAtNanoseconds: UInt64?
    private var reading: Double?

    /// The cached reading while it is younger than `maximumAgeSeconds`, else a fresh one from `read`.
    func value(maximumAgeSeconds: Double, read: () -> Double?) -> Double? {
        lock.withLock {
            let now = DispatchTime.now().uptimeNanoseconds
            if let at = readAtNanoseconds, Double(now &- at) / 1e9 < maximumAgeSeconds { return reading }
            reading = read()
            readAtNanoseconds = now
            return reading
        }
    }
}
