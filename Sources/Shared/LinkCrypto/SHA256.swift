import CCrypto

/// SHA-256 through OpenSSL's EVP interface.
public enum SHA256 {
    public static func hash(_ data: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: SHA256Digest.byteCount)
        var length: UInt32 = 0
        let ok = data.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, EVP_sha256(), nil)
            }
        }
        precondition(ok == 1 && length == SHA256Digest.byteCount, "SHA-256 failed in OpenSSL: \(OpenSSLErrorQueue.describeAndClear())")
        return digest
    }
}
