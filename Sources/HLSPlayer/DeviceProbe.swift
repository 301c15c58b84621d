// Device pressure on Linux, standing in for a phone's thermal state: CPU
// pressure (PSI, /proc/pressure/cpu) and thermal zones. A source the kernel
// does not have is reported as missing (nil), never faked. Parsing is pure
// (HLSCore DevicePressure); this file only reads the files.

import Foundation
import HLSCore

enum DeviceProbe {
    /// PSI "some avg10" for the CPU, percent; nil when the kernel has no PSI.
    static func cpuPressureAvg10Percent() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/pressure/cpu", encoding: .utf8) else { return nil }
        return (try? PressureStallInfo.parse(text))?.some.avg10Percent
    }

    /// The thermal zones' files, found once.
    static let thermalZonePaths: [String] = {
        let base = "/sys/class/thermal"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? []
        return names.filter { $0.hasPrefix("thermal_zone") }.sorted().map { "\(base)/\($0)/temp" }
    }()

    /// The hottest thermal zone, °C; nil when there is none.
    static func thermalMaxCelsius() -> Double? {
        guard !thermalZonePaths.isEmpty else { return nil }
        return ThermalZoneReading.maxCelsius(thermalZonePaths.map { path in
            (try? String(contentsOfFile: path, encoding: .utf8)).flatMap(ThermalZoneReading.celsius(fromSysfsText:))
        })
    }
}
