import Testing
@testable import HLSOrigin

/// The pure admission rule: which waiting connection gives its place up, and when a new one is refused.
@Suite struct ConnectionAdmissionTests {
    typealias Occupant = ConnectionAdmission.Occupant

    static func waiting(_ id: Int, since: Double, requests: Int = 0, from address: String = "10.0.0.1") -> Occupant {
        Occupant(id: id, address: address, waitingSince: since, requestsReceived: requests)
    }

    static func busy(_ id: Int, from address: String = "10.0.0.1") -> Occupant {
        Occupant(id: id, address: address, waitingSince: nil, requestsReceived: 1)
    }

    @Test func fits_justUnderEachLimit_notAtIt() {
        let rule = ConnectionAdmission(maxConnections: 4, maxConnectionsPerAddress: 2)
        #expect(rule.fits(open: 3, openFromAddress: 1))
        #expect(!rule.fits(open: 4, openFromAddress: 0))
        #expect(!rule.fits(open: 1, openFromAddress: 2))
        #expect(ConnectionAdmission(maxConnections: 4, maxConnectionsPerAddress: nil).fits(open: 3, openFromAddress: 3))
    }

    @Test func underTheLimits_admitsWithoutClosingAnything() {
        let rule = ConnectionAdmission(maxConnections: 3, maxConnectionsPerAddress: nil)
        #expect(rule.decide(address: "10.0.0.1", occupants: [Self.busy(0), Self.waiting(1, since: 1)]) == .admit(evicting: []))
    }

    @Test func tableFull_closesTheConnectionWaitingLongest() {
        let rule = ConnectionAdmission(maxConnections: 3, maxConnectionsPerAddress: nil)
        let open = [Self.waiting(0, since: 5), Self.busy(1), Self.waiting(2, since: 2)]
        #expect(rule.decide(address: "10.0.0.9", occupants: open) == .admit(evicting: [.init(id: 2, limit: .maxConnections)]))
    }

    /// A kept-alive connection that waited longer still outlives one that never sent a whole request.
    @Test func tableFull_closesANeverRequestedConnectionBeforeAKeptAliveOne() {
        let rule = ConnectionAdmission(maxConnections: 2, maxConnectionsPerAddress: nil)
        let open = [Self.waiting(0, since: 1, requests: 3), Self.waiting(1, since: 9, requests: 0)]
        #expect(rule.decide(address: "10.0.0.1", occupants: open) == .admit(evicting: [.init(id: 1, limit: .maxConnections)]))
        // Equal waits: the older connection goes.
        #expect(ConnectionAdmission.firstToGiveUp([Self.waiting(7, since: 4), Self.waiting(3, since: 4)])?.id == 3)
    }

    @Test func tableFullOfBusyConnections_refusesTheNewOne() {
        let rule = ConnectionAdmission(maxConnections: 2, maxConnectionsPerAddress: nil)
        #expect(rule.decide(address: "10.0.0.1", occupants: [Self.busy(0), Self.busy(1)]) == .refuse(limit: .maxConnections))
    }

    /// The per-address limit takes its victim from the same address, even when another address waited longer.
    @Test func perAddressLimit_closesThatAddresssOwnWaitingConnection() {
        let rule = ConnectionAdmission(maxConnections: 10, maxConnectionsPerAddress: 2)
        let open = [Self.waiting(0, since: 1, from: "10.0.0.2"), Self.waiting(1, since: 5), Self.busy(2)]
        #expect(
            rule.decide(address: "10.0.0.1", occupants: open)
                == .admit(evicting: [.init(id: 1, limit: .maxConnectionsPerAddress)]))
        // Another address still fits.
        #expect(rule.decide(address: "10.0.0.3", occupants: open) == .admit(evicting: []))
    }

    /// One address whose connections are all busy cannot take the others' places: refused although the table has room.
    @Test func perAddressLimitAllBusy_refusedWhileTheTableHasRoom() {
        let rule = ConnectionAdmission(maxConnections: 10, maxConnectionsPerAddress: 2)
        let open = [Self.busy(0), Self.busy(1), Self.waiting(2, since: 0, from: "10.0.0.2")]
        #expect(rule.decide(address: "10.0.0.1", occupants: open) == .refuse(limit: .maxConnectionsPerAddress))
    }

    /// A per-address eviction that also brings the table under its limit closes one connection, not two.
    @Test func bothLimitsReached_oneEvictionFromTheAddressServesBoth() {
        let rule = ConnectionAdmission(maxConnections: 3, maxConnectionsPerAddress: 2)
        let open = [Self.waiting(0, since: 0, from: "10.0.0.2"), Self.waiting(1, since: 4), Self.waiting(2, since: 6)]
        #expect(
            rule.decide(address: "10.0.0.1", occupants: open)
                == .admit(evicting: [.init(id: 1, limit: .maxConnectionsPerAddress)]))
    }
}
