import CCrypto

/// Cryptographically secure random bytes from OpenSSL's `RAND_bytes`.
public enum SecureRandom {
    /// `count` random bytes. A failure of the system's random source stops the process:
    /// nothing that needs a nonce or a key can continue safely without one.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0 && count <= Int(Int32.max), "cannot generate \(count) random bytes")
        var bytes = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return bytes }
        let status = bytes.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        guard status == 1 else {
            fatalError("RAND_bytes failed: \(OpenSSLErrorQueue.describeAndClear())")
        }
        return bytes
    }
}
