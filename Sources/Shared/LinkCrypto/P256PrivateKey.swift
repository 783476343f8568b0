import CCrypto

/// A P-256 key pair: the APNs provider keys of `push.keys.create` (and a provider that signs
/// with one), the keys of the endpoint's certificate authority, the device and server keys of a
/// PowerAuth activation (ECDH).
public final class P256PrivateKey {
    /// The OpenSSL key (`EVP_PKEY *`), owned by this object.
    package let key: OpaquePointer

    /// A fresh random key.
    public init() throws {
        guard let key = wl_p256_generate() else { throw OpenSSLError("generating a P-256 key") }
        self.key = key
    }

    /// The key pair of a private scalar: big-endian, at most 32 significant bytes (leading zero
    /// bytes, as a signed encoding writes them, are skipped), 1 ≤ d < n. The public point is
    /// computed.
    public init(scalar bytes: [UInt8]) throws {
        let significant = Array(bytes.drop { $0 == 0 })
        guard !significant.isEmpty, significant.count <= 32 else {
            throw OpenSSLError(
                operation: "reading a P-256 private key",
                detail: "the scalar has \(significant.count) significant bytes, not 1 to 32")
        }
        guard let key = significant.withUnsafeBufferPointer({ wl_p256_private_from_scalar($0.baseAddress, $0.count) }) else {
            throw OpenSSLError("reading a P-256 private key (the scalar is not below the group's order)")
        }
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

    /// The public half.
    public var publicKey: P256PublicKey {
        var x = [UInt8](repeating: 0, count: 32), y = [UInt8](repeating: 0, count: 32)
        let ok = x.withUnsafeMutableBufferPointer { xs in y.withUnsafeMutableBufferPointer { wl_p256_public_xy(key, xs.baseAddress, $0.baseAddress) } }
        precondition(ok == 1, "a P-256 key has a public point: \(OpenSSLErrorQueue.describeAndClear())")
        do { return try P256PublicKey(sec1: [0x04] + x + y) } catch {
            preconditionFailure("the key's own public point is on the curve: \(error)")
        }
    }

    /// The ECDH shared secret with `peer`: the x coordinate of d·Q, 32 bytes (OpenSSL's
    /// `EVP_PKEY_derive`, as the PowerAuth SDK's `ECDH_SharedSecret` and Java's `KeyAgreement`
    /// compute it).
    public func sharedSecret(with peer: P256PublicKey) throws -> [UInt8] {
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, key, nil) else { throw OpenSSLError("EVP_PKEY_CTX_new_from_pkey") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_derive_init(context) == 1, EVP_PKEY_derive_set_peer(context, peer.key) == 1 else {
            throw OpenSSLError("starting the ECDH key agreement")
        }
        var length = 0
        guard EVP_PKEY_derive(context, nil, &length) == 1 else { throw OpenSSLError("EVP_PKEY_derive") }
        var secret = [UInt8](repeating: 0, count: length)
        guard secret.withUnsafeMutableBufferPointer({ EVP_PKEY_derive(context, $0.baseAddress, &length) }) == 1 else {
            throw OpenSSLError("EVP_PKEY_derive")
        }
        return Array(secret.prefix(length))
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
