/// What a client makes of the server's counter data hash, compared with its own counter.
public enum CounterComparison: Hashable, Sendable {
    /// Both counters are the same.
    case inSync
    /// The client made `distance` codes the server has not seen, still well inside the window.
    case clientAhead(distance: Int)
    /// The client is ahead by more than half the look-ahead: it should send a code the server
    /// validates, so the server catches up before the window is exhausted.
    case synchronizationNeeded(distance: Int)
    /// The server is `distance` steps ahead; `counterData` is the server's value to adopt.
    case serverAhead(distance: Int, counterData: [UInt8])
    /// No code of this client can be validated any more.
    case deadlock

    /// Compares as the SDK does: the client looks for the server's hash among its current
    /// value and its `history` (previous values, oldest first) — a match `d` steps back means
    /// the client is ahead by `d`; then among its next `lookAhead` values — a match means the
    /// server is ahead. Ahead by more than the look-ahead, or no match at all, is a deadlock.
    public static func compare(counterData: [UInt8], history: [[UInt8]], serverHash: [UInt8], lookAhead: Int,
                               transportKey: [UInt8]) -> CounterComparison {
        func hash(_ value: [UInt8]) -> [UInt8] { PowerAuthKDF.counterDataHash(transportKey: transportKey, counterData: value) }
        if hash(counterData) == serverHash { return .inSync }
        for distance in 1...max(1, history.count) where distance <= history.count {
            if hash(history[history.count - distance]) == serverHash {
                if distance > lookAhead { return .deadlock }
                if distance > lookAhead / 2 { return .synchronizationNeeded(distance: distance) }
                return .clientAhead(distance: distance)
            }
        }
        var value = counterData
        for distance in 1...max(1, lookAhead) {
            value = HashCounter.next(value)
            if hash(value) == serverHash { return .serverAhead(distance: distance, counterData: value) }
        }
        return .deadlock
    }
}
