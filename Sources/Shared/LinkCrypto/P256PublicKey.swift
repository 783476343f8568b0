import CCrypto

/// A P-256 public key that verifies ES256 signatures.
public final class P256PublicKey {
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

    /// Takes ownership of `key`, an `EVP_PKEY *` known to be on P-256.
    package init(taking key: OpaquePointer) {
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

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
