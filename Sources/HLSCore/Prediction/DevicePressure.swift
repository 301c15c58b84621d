// Device pressure on Linux, standing in for a phone's thermal state:
// pure parsers for the text of /proc/pressure/cpu (PSI) and of a sysfs
// thermal zone's `temp`, and the decode-lag ratio. Reading the files is the
// runtime's job; a file that does not exist is a missing feature (nil).

import Foundation

/// One line of a PSI file: `some avg10=1.10 avg60=1.70 avg300=17.83 total=459104600`.
public struct PressureStallLine: Sendable, Equatable, Codable {
    /// Share of wall time, percent, over the last 10 / 60 / 300 s in which some
    /// (or all, for `full`) runnable tasks were stalled.
    public var avg10Percent: Double
    public var avg60Percent: Double
    public var avg300Percent: Double
    /// Total stall time since boot, microseconds.
    public var totalMicroseconds: UInt64

    public init(avg10Percent: Double, avg60Percent: Double, avg300Percent: Double, totalMicroseconds: UInt64) {
        self.avg10Percent = avg10Percent
        self.avg60Percent = avg60Percent
        self.avg300Percent = avg300Percent
        self.totalMicroseconds = totalMicroseconds
    }
}

/// Parsed Pressure Stall Information (Documentation/accounting/psi.rst).
public struct PressureStallInfo: Sendable, Equatable, Codable {
    public var some: PressureStallLine
    /// Absent in /proc/pressure/cpu on kernels before 5.13.
    public var full: PressureStallLine?

    public enum ParseError: Error, Sendable, Equatable {
        /// No `some` line.
        case missingSomeLine
        /// A line whose field is missing or not a number (1-based line number, field name).
        case malformedField(line: Int, field: String)
    }

    public init(some: PressureStallLine, full: PressureStallLine? = nil) {
        self.some = some
        self.full = full
    }

    /// Parses the text of a PSI file. Unknown lines and unknown `key=value`
    /// fields are ignored (the format may grow); the four known fields are required.
    public static func parse(_ text: String) throws(ParseError) -> PressureStallInfo {
        var some: PressureStallLine?
        var full: PressureStallLine?
        for (offset, rawLine) in text.split(whereSeparator: \.isNewline).enumerated() {
            let words = rawLine.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard let kind = words.first, kind == "some" || kind == "full" else { continue }
            var fields: [Substring: Substring] = [:]
            for word in words.dropFirst() {
                guard let eq = word.firstIndex(of: "=") else { continue }
                fields[word[..<eq]] = word[word.index(after: eq)...]
            }
            func number(_ name: String) throws(ParseError) -> Double {
                guard let text = fields[Substring(name)], let v = Double(text), v.isFinite, v >= 0 else {
                    throw .malformedField(line: offset + 1, field: name)
                }
                return v
            }
            guard let totalText = fields["total"], let total = UInt64(totalText) else {
                throw .malformedField(line: offset + 1, field: "total")
            }
            let line = PressureStallLine(
                avg10Percent: try number("avg10"), avg60Percent: try number("avg60"),
                avg300Percent: try number("avg300"), totalMicroseconds: total)
            if kind == "some" { some = line } else { full = line }
        }
        guard let some else { throw .missingSomeLine }
        return PressureStallInfo(some: some, full: full)
    }
}

public enum ThermalZoneReading {
    /// Parses the text of /sys/class/thermal/thermal_zone*/temp (millidegrees
    /// Celsius, one integer) into degrees Celsius; nil when it is not a number.
    public static func celsius(fromSysfsText text: String) -> Double? {
        guard let milli = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }
        return Double(milli) / 1000
    }

    /// The highest of several zone readings (nil when there are none).
    public static func maxCelsius(_ readings: [Double?]) -> Double? {
        readings.compactMap { $0 }.max()
    }
}

public enum DecodeLag {
    /// Decode lag: wall-clock seconds spent decoding ÷ media seconds decoded.
    /// nil when no media time has been decoded (the ratio is undefined, not 0).
    public static func ratio(decodeSeconds: Double, mediaSeconds: Double) -> Double? {
        guard mediaSeconds > 0, decodeSeconds >= 0, decodeSeconds.isFinite, mediaSeconds.isFinite else { return nil }
        return decodeSeconds / mediaSeconds
    }
}
