/// Readiness of a file descriptor, as asked for from and reported by a ``Poller``.
///
/// ``hangup`` and ``error`` are only ever reported; asking for them has no effect.
public struct PollEvents: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Data can be read, or the peer has closed its end (a read then returns 0).
    public static let readable = PollEvents(rawValue: 1 << 0)
    /// Data can be written without blocking.
    public static let writable = PollEvents(rawValue: 1 << 1)
    /// The peer hung up.
    public static let hangup = PollEvents(rawValue: 1 << 2)
    /// An error is pending on the descriptor, or the descriptor is invalid.
    public static let error = PollEvents(rawValue: 1 << 3)

    public var description: String {
        var names: [String] = []
        if contains(.readable) { names.append("readable") }
        if contains(.writable) { names.append("writable") }
        if contains(.hangup) { names.append("hangup") }
        if contains(.error) { names.append("error") }
        return "[" + names.joined(separator: ", ") + "]"
    }
}
