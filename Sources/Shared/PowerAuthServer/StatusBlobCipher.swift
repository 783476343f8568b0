import LinkCrypto

/// Encrypts and decrypts the status blob under the activation's transport key, with the IV
/// derived from the request's challenge and the response's nonce.
public enum StatusBlobCipher {
    public static func encrypt(_ blob: StatusBlob, transportKey: [UInt8], challenge: [UInt8], nonce: [UInt8]) throws(StatusBlobError) -> [UInt8] {
        let iv = PowerAuthKDF.statusIV(transportKey: transportKey, challenge: challenge, nonce: nonce)
        do {
            return try AES128.encryptCBC(blob.encoded(), key: transportKey, iv: iv)
        } catch {
            throw StatusBlobError(error)
        }
    }

    /// Decrypts and reads the blob with the client's rejection rules.
    public static func decrypt(_ encrypted: [UInt8], transportKey: [UInt8], challenge: [UInt8], nonce: [UInt8]) throws(StatusBlobError) -> StatusBlob {
        guard encrypted.count == StatusBlob.byteCount else { throw .wrongLength(encrypted.count) }
        let iv = PowerAuthKDF.statusIV(transportKey: transportKey, challenge: challenge, nonce: nonce)
        let plain: [UInt8]
        do {
            plain = try AES128.decryptCBC(encrypted, key: transportKey, iv: iv)
        } catch {
            throw StatusBlobError(error)
        }
        return try StatusBlob.decode(plain)
    }
}
