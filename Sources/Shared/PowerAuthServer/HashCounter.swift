import LinkCrypto

/// The hash-based counter of protocol 3.1: 16 bytes of CTR_DATA, each step SHA-256 of the
/// previous value reduced to 16 bytes by XORing its halves (`_NextCounterValue`, the server's
/// `HashBasedCounterUtils`).
public enum HashCounter {
    public static let byteCount = 16

    public static func next(_ counterData: [UInt8]) -> [UInt8] {
        PowerAuthKDF.reduce(SHA256.hash(counterData))
    }

    /// `counterData` moved `steps` times.
    public static func advance(_ counterData: [UInt8], by steps: Int) -> [UInt8] {
        var value = counterData
        for _ in 0..<max(0, steps) { value = next(value) }
        return value
    }
}
