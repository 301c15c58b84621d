// The one place peak-bitrate caps are combined. A rung is eligible only when
// its BANDWIDTH is at or below every cap in force, so the caps combine as
// their minimum: no cap can raise or release another. The real and the
// virtual session both give the selector `effectiveBps`, take a decision
// again when it moved while a media playlist loaded, and announce it as
// CMCD's top bitrate — all through this type.

/// Every peak-bitrate cap a session may have in force, bits per second (nil: that cap is not set).
public struct PeakBitrateCaps: Sendable, Equatable {
    /// The user's AVPlayerItem.preferredPeakBitRate (`--peak-bitrate`).
    public var userBps: Int?
    /// The playback policy's cap (`PolicyKnobs.peakBitrateCapBps`, the defensive downshift).
    public var policyBps: Int?
    /// The over-selection cap (`OverSelectionCap`): set when an over-selected request is
    /// abandoned, lifted as fresh delivery earns rungs back.
    public var overSelectionBps: Int?
    /// The startup/recovery cap (`StartupCapController.capBps`).
    public var startupBps: Int?

    public init(userBps: Int? = nil, policyBps: Int? = nil, overSelectionBps: Int? = nil, startupBps: Int? = nil) {
        self.userBps = userBps
        self.policyBps = policyBps
        self.overSelectionBps = overSelectionBps
        self.startupBps = startupBps
    }

    /// The cap in force — the lowest of the caps set — bits per second; nil: none.
    /// What `SelectionSnapshot.peakBitrateCapBps` is given and what a decision was taken under.
    public var effectiveBps: Int? {
        Self.lowest([userBps, policyBps, overSelectionBps, startupBps])
    }

    /// Whether a rung of `bandwidthBps` is within every cap in force.
    public func admits(_ bandwidthBps: Int) -> Bool {
        effectiveBps.map { bandwidthBps <= $0 } ?? true
    }

    /// The lowest of the caps given, bits per second; nil when none is set. The combining rule itself.
    public static func lowest(_ capsBps: [Int?]) -> Int? {
        capsBps.compactMap { $0 }.min()
    }
}
