import WireProtocol

/// The key derivations of PowerAuth protocol 3 that the status check needs.
public enum PowerAuthKDF {
    /// `KDF.derive(key, index)`: AES-128 of one block holding the index as a big-endian
    /// 64-bit number in its first 8 bytes, zeros after.
    public static func derive(_ key: [UInt8], index: UInt64) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 { block[i] = UInt8(truncatingIfNeeded: index >> (56 - 8 * UInt64(i))) }
        do { return try AES128.encryptBlock(block, key: key) } catch {
            preconditionFailure("KDF.derive needs a 16-byte key: \(error)")
        }
    }

    /// `KDF_INTERNAL.derive(key, data)`: HMAC-SHA256, its two halves XORed into 16 bytes.
    public static func deriveInternal(_ key: [UInt8], data: [UInt8]) -> [UInt8] {
        let mac = HMACSHA256.authenticationCode(key: key, message: data)
        return (0..<16).map { mac[$0] ^ mac[$0 + 16] }
    }

    /// `STATUS_IV = KDF_INTERNAL(KDF(KEY_TRANSPORT, 3000), STATUS_CHALLENGE ‖ STATUS_NONCE)`.
    public static func statusIV(transportKey: [UInt8], challenge: [UInt8], nonce: [UInt8]) -> [UInt8] {
        deriveInternal(derive(transportKey, index: 3000), data: challenge + nonce)
    }

    /// `CTR_DATA_HASH = KDF_INTERNAL(KDF(KEY_TRANSPORT, 4000), CTR_DATA)`.
    public static func counterDataHash(transportKey: [UInt8], counterData: [UInt8]) -> [UInt8] {
        deriveInternal(derive(transportKey, index: 4000), data: counterData)
    }

    /// The possession signing key of the emulation: `KDF(KEY_TRANSPORT, 1)`.
    public static func signingKey(transportKey: [UInt8]) -> [UInt8] {
        derive(transportKey, index: 1)
    }
}
