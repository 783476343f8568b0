import CCrypto

/// HMAC-SHA256 (RFC 2104) computed by OpenSSL's `EVP_MAC` interface.
public enum HMACSHA256 {
    /// The length of an authentication code, in bytes.
    public static let byteCount = 32

    /// The HMAC-SHA256 of `message` under `key`.
    public static func authenticationCode(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var code = [UInt8](repeating: 0, count: byteCount)
        var written = 0
        // OpenSSL treats a NULL key as "keep the previous key", so an empty key gets a real pointer.
        let keyStorage = key.isEmpty ? [0] : key
        let result = keyStorage.withUnsafeBytes { keyBytes in
            message.withUnsafeBufferPointer { messageBytes in
                code.withUnsafeMutableBufferPointer { codeBytes in
                    EVP_Q_mac(
                        nil, "HMAC", nil, "SHA256", nil,
                        keyBytes.baseAddress, key.count,
                        messageBytes.baseAddress, messageBytes.count,
                        codeBytes.baseAddress, codeBytes.count, &written)
                }
            }
        }
        guard result != nil, written == byteCount else {
            fatalError("HMAC-SHA256 failed in OpenSSL: \(OpenSSLErrorQueue.describeAndClear())")
        }
        return code
    }
}
