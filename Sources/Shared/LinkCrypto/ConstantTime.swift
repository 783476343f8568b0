import CCrypto

/// Comparisons whose time does not depend on where the inputs differ.
public enum ConstantTime {
    /// Whether `a` and `b` hold the same bytes, compared with OpenSSL's `CRYPTO_memcmp`. Only
    /// the lengths are compared in variable time.
    public static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        return a.withUnsafeBytes { aBytes in
            b.withUnsafeBytes { bBytes in
                CRYPTO_memcmp(aBytes.baseAddress, bBytes.baseAddress, a.count) == 0
            }
        }
    }
}
