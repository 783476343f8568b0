/// The network between the app and the server: up or down, a latency, a share of requests that fail.
public struct EmulatedNetwork: Hashable, Sendable {
    public var isUp: Bool
    /// The round trip added to every request, split evenly between the two directions.
    public var latencyMilliseconds: Int64
    /// 0…1: the probability that a request fails.
    public var failRate: Double

    public init(isUp: Bool = true, latencyMilliseconds: Int64 = 0, failRate: Double = 0) {
        self.isUp = isUp
        self.latencyMilliseconds = latencyMilliseconds
        self.failRate = failRate
    }

    /// Whether a request gets through, given a uniform random number in 0..<1.
    public func delivers(random: Double) -> Bool {
        isUp && !(random < failRate)
    }
}
