import CCrypto

/// A P-256 public key: it verifies ES256 signatures, and is the peer's half of an ECDH key
/// agreement (``P256PrivateKey/sharedSecret(with:)``).
public final class P256PublicKey {
    /// The length of a compressed SEC1 point: `02` or `03` (the parity of y), then x.
    public static let compressedByteCount = 33
    /// The length of an uncompressed SEC1 point: `04`, x, y.
    public static let uncompressedByteCount = 65

    /// The OpenSSL key (`EVP_PKEY *`), owned by this object.
    package let key: OpaquePointer

    /// Reads a `-----BEGIN PUBLIC KEY-----` PEM; refuses anything but an EC key on P-256.
    public init(pem: String) throws {
        guard let key = MemoryBIO.withReading(pem, { PEM_read_bio_PUBKEY($0, nil, nil, nil) }) ?? nil else {
            throw OpenSSLError("reading the public key PEM")
        }
        guard wl_is_p256(key) == 1 else {
            EVP_PKEY_free(key)
            throw OpenSSLError("the public key is not an EC key on P-256")
        }
        self.key = key
    }

    /// Reads a SEC1 point, compressed (33 bytes) or uncompressed (65 bytes); refuses any other
    /// length and a point that is not on the curve.
    public init(sec1 bytes: [UInt8]) throws {
        guard bytes.count == Self.compressedByteCount || bytes.count == Self.uncompressedByteCount else {
            throw OpenSSLError(
                operation: "reading a P-256 public key",
                detail: "a SEC1 point has 33 or 65 bytes, got \(bytes.count)")
        }
        guard let key = bytes.withUnsafeBufferPointer({ wl_p256_public_from_octets($0.baseAddress, $0.count) }) else {
            throw OpenSSLError("reading a P-256 public key (the bytes are not a point on the curve)")
        }
        self.key = key
    }

    /// Takes ownership of `key`, an `EVP_PKEY *` known to be on P-256.
    package init(taking key: OpaquePointer) {
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// The point's affine coordinates, 32 bytes each.
    public var coordinates: (x: [UInt8], y: [UInt8]) {
        var x = [UInt8](repeating: 0, count: 32), y = [UInt8](repeating: 0, count: 32)
        let ok = x.withUnsafeMutableBufferPointer { xs in y.withUnsafeMutableBufferPointer { wl_p256_public_xy(key, xs.baseAddress, $0.baseAddress) } }
        precondition(ok == 1, "a P-256 key has coordinates: \(OpenSSLErrorQueue.describeAndClear())")
        return (x, y)
    }

    /// The uncompressed SEC1 point: `04`, x, y (65 bytes).
    public var uncompressedRepresentation: [UInt8] {
        let (x, y) = coordinates
        return [0x04] + x + y
    }

    /// The compressed SEC1 point: `02` for an even y, `03` for an odd one, then x (33 bytes).
    public var compressedRepresentation: [UInt8] {
        let (x, y) = coordinates
        return [0x02 | (y[31] & 1)] + x
    }

    /// The key as a `-----BEGIN PUBLIC KEY-----` PEM.
    public var pem: String {
        MemoryBIO.writing { PEM_write_bio_PUBKEY($0, key) } ?? ""
    }

    /// Whether `signature` (raw `R‖S` or DER) is an ECDSA P-256 / SHA-256 signature of `message`.
    public func verify(signature: [UInt8], message: [UInt8]) -> Bool {
        guard let der = ECDSASignature.normalized(signature), let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1 else {
            ERR_clear_error()
            return false
        }
        let result = der.withUnsafeBufferPointer { sig in
            message.withUnsafeBufferPointer { tbs in
                EVP_DigestVerify(context, sig.baseAddress, sig.count, tbs.baseAddress, tbs.count)
            }
        }
        ERR_clear_error()
        return result == 1
    }
}
