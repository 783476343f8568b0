/// The SDK's time synchronisation service: it learns the difference between the server's clock
/// and the local one from samples taken around server requests. All times are Unix milliseconds.
public struct TimeSynchronization: Hashable, Sendable {
    /// A sample whose round trip took longer than this is discarded.
    public static let maximumRoundTripMilliseconds: Int64 = 16_000
    /// A new adjustment closer than this to the current one…
    public static let keepThresholdMilliseconds: Int64 = 2_000
    /// …made within this time of the last adjustment keeps the current one.
    public static let keepWindowMilliseconds: Int64 = 10_000

    /// What a sample did.
    public enum Outcome: Hashable, Sendable {
        case adjusted(adjustment: Int64)
        case kept(adjustment: Int64)
        case discarded(roundTrip: Int64)
    }

    /// Server time minus local time, once synchronised.
    public private(set) var adjustment: Int64?
    /// Local time of the last change of `adjustment`.
    public private(set) var adjustedAt: Int64?

    public init() {}

    public var isSynchronized: Bool { adjustment != nil }

    /// Processes a server timestamp received in a response: `sentAt` and `receivedAt` are local
    /// times around the request. The server is taken to have answered half-way through.
    @discardableResult
    public mutating func processSample(serverTime: Int64, sentAt: Int64, receivedAt: Int64) -> Outcome {
        let roundTrip = receivedAt - sentAt
        guard roundTrip >= 0, roundTrip <= Self.maximumRoundTripMilliseconds else { return .discarded(roundTrip: roundTrip) }
        let candidate = serverTime + roundTrip / 2 - receivedAt
        if let adjustment, let adjustedAt, abs(candidate - adjustment) < Self.keepThresholdMilliseconds,
           receivedAt - adjustedAt <= Self.keepWindowMilliseconds {
            return .kept(adjustment: adjustment)
        }
        adjustment = candidate
        adjustedAt = receivedAt
        return .adjusted(adjustment: candidate)
    }

    /// The synchronised time now: local time plus the adjustment (local time when not synchronised).
    public func currentTime(localTime: Int64) -> Int64 { localTime + (adjustment ?? 0) }

    public mutating func reset() {
        adjustment = nil
        adjustedAt = nil
    }
}
