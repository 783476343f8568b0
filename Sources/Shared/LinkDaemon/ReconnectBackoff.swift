/// watchd's wait before it tries the link again: 25 ms, doubling up to 500 ms, back to the
/// start once a link is up.
struct ReconnectBackoff {
    static let initialMilliseconds: Int64 = 25
    static let maximumMilliseconds: Int64 = 500

    private var next = ReconnectBackoff.initialMilliseconds

    /// The wait before the next attempt; the one after it is twice as long, up to the cap.
    mutating func nextDelay() -> Int64 {
        let delay = next
        next = min(next * 2, Self.maximumMilliseconds)
        return delay
    }

    /// The next attempt waits as little as the first.
    mutating func reset() { next = Self.initialMilliseconds }

    /// The delay the next call of `nextDelay` returns (for logs).
    var upcoming: Int64 { next }
}
