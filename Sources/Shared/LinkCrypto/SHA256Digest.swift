import CCrypto

/// SHA-256 (FIPS 180-4), fed incrementally, computed by OpenSSL's `EVP_Digest*` interface.
///
/// Memory does not grow with the input: feed a file in fixed-size pieces with
/// ``update(_:)-(UnsafeRawBufferPointer)`` and take the digest with ``finalize()``. A digest
/// belongs to one thread at a time.
public final class SHA256Digest {
    /// The length of a digest, in bytes.
    public static let byteCount = 32

    private let context: OpaquePointer
    /// The number of bytes fed so far.
    public private(set) var byteCountHashed: UInt64 = 0
    private var isFinalized = false

    public init() {
        guard let context = EVP_MD_CTX_new() else {
            fatalError("SHA-256: EVP_MD_CTX_new failed: \(OpenSSLErrorQueue.describeAndClear())")
        }
        guard EVP_DigestInit_ex(context, EVP_sha256(), nil) == 1 else {
            EVP_MD_CTX_free(context)
            fatalError("SHA-256: EVP_DigestInit_ex failed: \(OpenSSLErrorQueue.describeAndClear())")
        }
        self.context = context
    }

    deinit {
        EVP_MD_CTX_free(context)
    }

    /// Feeds `bytes`.
    public func update(_ bytes: UnsafeRawBufferPointer) {
        precondition(!isFinalized, "SHA256Digest.update after finalize")
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        guard EVP_DigestUpdate(context, base, bytes.count) == 1 else {
            fatalError("SHA-256: EVP_DigestUpdate failed: \(OpenSSLErrorQueue.describeAndClear())")
        }
        byteCountHashed += UInt64(bytes.count)
    }

    /// Feeds `bytes`.
    public func update(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { update($0) }
    }

    /// The digest of everything fed; the digest takes no more input afterwards.
    public func finalize() -> [UInt8] {
        precondition(!isFinalized, "SHA256Digest.finalize called twice")
        isFinalized = true
        var digest = [UInt8](repeating: 0, count: Self.byteCount)
        var length: UInt32 = 0
        let result = digest.withUnsafeMutableBufferPointer { EVP_DigestFinal_ex(context, $0.baseAddress, &length) }
        guard result == 1, length == UInt32(Self.byteCount) else {
            fatalError("SHA-256: EVP_DigestFinal_ex failed: \(OpenSSLErrorQueue.describeAndClear())")
        }
        return digest
    }

    /// The SHA-256 of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        let digest = SHA256Digest()
        digest.update(bytes)
        return digest.finalize()
    }
}

@available(*, unavailable)
extension SHA256Digest: Sendable {}
