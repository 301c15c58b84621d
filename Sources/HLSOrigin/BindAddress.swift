import Glibc

/// An IP address literal the origin can listen on: IPv4 (`127.0.0.1`, `0.0.0.0`) or IPv6 (`::1`, `::`, also
/// written in brackets, `[::1]`). Host names are refused: the origin binds what it is told, never what a
/// resolver answers.
public struct BindAddress: Sendable, Equatable, CustomStringConvertible {
    /// `AF_INET` or `AF_INET6`.
    public let family: Int32
    /// The literal as given, brackets removed.
    public let literal: String
    private let v4: in_addr
    private let v6: in6_addr

    /// nil if `text` is not an IPv4 or IPv6 address literal.
    public init?(_ text: String) {
        var literal = text
        if literal.hasPrefix("["), literal.hasSuffix("]"), literal.count > 2 {
            literal = String(literal.dropFirst().dropLast())
        }
        var v4 = in_addr()
        var v6 = in6_addr()
        if !text.hasPrefix("["), inet_pton(AF_INET, literal, &v4) == 1 {
            family = AF_INET
        } else if inet_pton(AF_INET6, literal, &v6) == 1 {
            family = AF_INET6
        } else {
            return nil
        }
        self.literal = literal
        self.v4 = v4
        self.v6 = v6
    }

    public static func == (a: BindAddress, b: BindAddress) -> Bool { a.family == b.family && a.literal == b.literal }

    public var description: String { literal }

    /// How the address is written as a URL's host: IPv6 in brackets (RFC 3986 §3.2.2).
    public var urlHost: String { family == AF_INET6 ? "[\(literal)]" : literal }

    /// Size of the socket address `socketAddress(port:)` fills in.
    var socketAddressLength: socklen_t {
        socklen_t(family == AF_INET6 ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
    }

    /// The socket address for this address and `port`, in a `sockaddr_storage`.
    func socketAddress(port: UInt16) -> sockaddr_storage {
        var storage = sockaddr_storage()
        withUnsafeMutablePointer(to: &storage) { pointer in
            if family == AF_INET6 {
                pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    $0.pointee.sin6_family = sa_family_t(AF_INET6)
                    $0.pointee.sin6_port = port.bigEndian
                    $0.pointee.sin6_addr = v6
                }
            } else {
                pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                    $0.pointee.sin_family = sa_family_t(AF_INET)
                    $0.pointee.sin_port = port.bigEndian
                    $0.pointee.sin_addr = v4
                }
            }
        }
        return storage
    }

    /// The port of an IPv4 or IPv6 socket address.
    static func port(of storage: sockaddr_storage) -> UInt16 {
        var storage = storage
        return withUnsafePointer(to: &storage) { pointer in
            if Int32(pointer.pointee.ss_family) == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) }
        }
    }
}
