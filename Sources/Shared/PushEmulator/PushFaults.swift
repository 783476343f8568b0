/// Faults the endpoint injects on request, as APNs mocks offer them.
public struct PushFaults: Sendable, Equatable {
    /// The next `remaining` requests are refused with this status and reason.
    public var rejection: (status: Int, reason: String, remaining: Int)?
    /// Every response waits this long.
    public var delayMilliseconds: Int64 = 0

    public init() {}

    /// The response to force on the next request, if any; counts it.
    public mutating func takeRejection() -> (status: Int, reason: String)? {
        guard let current = rejection, current.remaining > 0 else { return nil }
        rejection = current.remaining > 1 ? (current.status, current.reason, current.remaining - 1) : nil
        return (current.status, current.reason)
    }

    public static func == (lhs: PushFaults, rhs: PushFaults) -> Bool {
        lhs.delayMilliseconds == rhs.delayMilliseconds && lhs.rejection?.status == rhs.rejection?.status
            && lhs.rejection?.reason == rhs.rejection?.reason && lhs.rejection?.remaining == rhs.rejection?.remaining
    }
}
