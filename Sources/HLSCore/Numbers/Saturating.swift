// Conversions that cannot trap. Swift traps (SIGILL, exit 132) when a Double
// that is NaN, infinite or outside the integer type's range is converted with
// `Int(_:)`, and when integer arithmetic overflows. Values that come from the
// network (playlist numbers, media timestamps, header values) or from a file
// (`hlsplay report`'s log) go through these instead: the result is clamped to
// the type's range and NaN becomes 0. The playlist parser keeps its numbers far
// inside the ranges (`PlaylistRanges`), so clamping never changes a value a
// valid playlist produces; it only keeps a broken one from ending the process.

extension FixedWidthInteger {
    /// `value` rounded toward zero and clamped to `Self.min ... Self.max`; NaN is 0.
    /// Round first (`.rounded()`, `.rounded(.up)`) where another rounding is wanted.
    public init(saturating value: Double) {
        if value.isNaN {
            self = 0
        } else if value >= Double(Self.max) {
            // Double(Int64.max) is 2^63, one above the largest Int64: the comparison is exact.
            self = Self.max
        } else if value <= Double(Self.min) {
            self = Self.min
        } else {
            self = Self(value)
        }
    }

    /// `self + other`, clamped to the type's range instead of trapping.
    public func saturatingAdd(_ other: Self) -> Self {
        let (sum, overflow) = addingReportingOverflow(other)
        guard overflow else { return sum }
        return other < 0 ? Self.min : Self.max
    }

    /// `self × other`, clamped to the type's range instead of trapping.
    public func saturatingMultiply(_ other: Self) -> Self {
        let (product, overflow) = multipliedReportingOverflow(by: other)
        guard overflow else { return product }
        return (self < 0) == (other < 0) ? Self.max : Self.min
    }
}
