import WireProtocol

/// The hash-based counter: 16 bytes of CTR_DATA, each step the first 16 bytes of SHA-256 of
/// the previous value; and the authentication code computed with it.
public enum HashCounter {
    public static let byteCount = 16

    public static func next(_ counterData: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(counterData).prefix(byteCount))
    }

    /// `counterData` moved `steps` times.
    public static func advance(_ counterData: [UInt8], by steps: Int) -> [UInt8] {
        var value = counterData
        for _ in 0..<max(0, steps) { value = next(value) }
        return value
    }

    /// An 8-digit authentication code: HMAC-SHA256(signing key, CTR_DATA ‖ data), dynamically
    /// truncated (RFC 4226 style) to a decimal number below 10^8.
    public static func authenticationCode(transportKey: [UInt8], counterData: [UInt8], data: [UInt8]) -> String {
        let mac = HMACSHA256.authenticationCode(key: PowerAuthKDF.signingKey(transportKey: transportKey), message: counterData + data)
        let offset = Int(mac[31] & 0x0F)
        let number = (UInt32(mac[offset] & 0x7F) << 24) | (UInt32(mac[offset + 1]) << 16) | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        let text = String(number % 100_000_000)
        return String(repeating: "0", count: 8 - text.count) + text
    }
}
