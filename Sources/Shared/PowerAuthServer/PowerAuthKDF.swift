import LinkCrypto
import WireProtocol

/// The key derivations of PowerAuth protocol 3, as the SDK's `ProtocolUtils.cpp` and the
/// server's `KeyDerivationUtils` compute them.
public enum PowerAuthKDF {
    /// `KDF(key, index)`: AES-128 (one block, zero IV) of eight zero bytes followed by `index`
    /// as a big-endian 64-bit number (`DeriveSecretKey`; the server's
    /// `ByteBuffer.allocate(16).putLong(0).putLong(index)`).
    public static func derive(_ key: [UInt8], index: UInt64) -> [UInt8] {
        var block = [UInt8](repeating: 0, count: 16)
        for i in 0..<8 { block[8 + i] = UInt8(truncatingIfNeeded: index >> (56 - 8 * UInt64(i))) }
        do { return try AES128.encryptBlock(block, key: key) } catch {
            preconditionFailure("KDF.derive needs a 16-byte key: \(error)")
        }
    }

    /// `KDF_INTERNAL(key, data)`: HMAC-SHA256 of `data` under `key`, its two 16-byte halves
    /// XORed (`DeriveSecretKeyFromIndex`).
    public static func deriveInternal(_ key: [UInt8], data: [UInt8]) -> [UInt8] {
        reduce(HMACSHA256.authenticationCode(key: key, message: data))
    }

    /// 32 bytes to 16, the first half XORed with the second (`ReduceSharedSecret`,
    /// the server's `convert32Bto16B`).
    public static func reduce(_ bytes: [UInt8]) -> [UInt8] {
        precondition(bytes.count == 32, "only 32 bytes are reduced, got \(bytes.count)")
        return (0..<16).map { bytes[$0] ^ bytes[$0 + 16] }
    }

    /// `STATUS_IV = KDF_INTERNAL(KDF(KEY_TRANSPORT, 3000), STATUS_CHALLENGE ‖ STATUS_NONCE)`.
    public static func statusIV(transportKey: [UInt8], challenge: [UInt8], nonce: [UInt8]) -> [UInt8] {
        deriveInternal(derive(transportKey, index: 3000), data: challenge + nonce)
    }

    /// `CTR_DATA_HASH = KDF_INTERNAL(KDF(KEY_TRANSPORT, 4000), CTR_DATA)`.
    public static func counterDataHash(transportKey: [UInt8], counterData: [UInt8]) -> [UInt8] {
        deriveInternal(derive(transportKey, index: 4000), data: counterData)
    }
}
