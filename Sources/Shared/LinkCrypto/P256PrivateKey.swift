import CCrypto

/// A P-256 key pair: the APNs provider keys of `push.keys.create` (and a provider that signs
/// with one), the keys of the endpoint's certificate authority.
public final class P256PrivateKey {
    /// The OpenSSL key (`EVP_PKEY *`), owned by this object.
    package let key: OpaquePointer

    /// A fresh random key.
    public init() throws {
        guard let key = wl_p256_generate() else { throw OpenSSLError("generating a P-256 key") }
        self.key = key
    }

    /// Reads a PKCS#8 (`BEGIN PRIVATE KEY`) or SEC1 (`BEGIN EC PRIVATE KEY`) PEM.
    public init(pem: String) throws {
        guard let key = MemoryBIO.withReading(pem, { PEM_read_bio_PrivateKey($0, nil, nil, nil) }) ?? nil else {
            throw OpenSSLError("reading the private key PEM")
        }
        guard wl_is_p256(key) == 1 else {
            EVP_PKEY_free(key)
            throw OpenSSLError("the private key is not an EC key on P-256")
        }
        self.key = key
    }

    deinit { EVP_PKEY_free(key) }

    /// The key as a PKCS#8 PEM (`-----BEGIN PRIVATE KEY-----`), the form of an APNs `.p8` file.
    public var pkcs8PEM: String {
        MemoryBIO.writing { PEM_write_bio_PrivateKey($0, key, nil, nil, 0, nil, nil) } ?? ""
    }

    /// The public half as a `-----BEGIN PUBLIC KEY-----` PEM.
    public var publicKeyPEM: String {
        MemoryBIO.writing { PEM_write_bio_PUBKEY($0, key) } ?? ""
    }

    /// A DER ECDSA / SHA-256 signature of `message`.
    public func sign(_ message: [UInt8]) throws -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw OpenSSLError("EVP_MD_CTX_new") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else { throw OpenSSLError("EVP_DigestSignInit") }
        var length = 0
        guard message.withUnsafeBufferPointer({ EVP_DigestSign(context, nil, &length, $0.baseAddress, $0.count) }) == 1 else {
            throw OpenSSLError("EVP_DigestSign")
        }
        var signature = [UInt8](repeating: 0, count: length)
        let ok = signature.withUnsafeMutableBufferPointer { sig in
            message.withUnsafeBufferPointer { EVP_DigestSign(context, sig.baseAddress, &length, $0.baseAddress, $0.count) }
        }
        guard ok == 1 else { throw OpenSSLError("EVP_DigestSign") }
        return Array(signature.prefix(length))
    }
}
