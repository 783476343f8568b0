import LinkCrypto

/// The key exchange of a PowerAuth 3 activation (powerauth-crypto
/// `docs/Activation-via-Activation-Code.md`, "Key Exchange" and "Activation Commit"): the
/// device and the server each make a P-256 key pair, swap the public halves, and agree the
/// master secret by ECDH; the activation fingerprint lets the user compare both ends.
public enum ActivationKeyExchange {
    /// `KEY_MASTER_SECRET = convert32Bto16B(ECDH(private, public))`: the 32-byte shared secret
    /// reduced to 16 by XORing its halves. The SDK's `Session::validateActivationResponse`
    /// computes `ReduceSharedSecret(ECDH_SharedSecret(serverPublicKey, devicePrivateKey))`, the
    /// server `KeyGenerator.computeSharedKey(serverPrivateKey, devicePublicKey)`; both agree.
    public static func masterSecret(privateKey: P256PrivateKey, publicKey: P256PublicKey) throws -> [UInt8] {
        let shared = try privateKey.sharedSecret(with: publicKey)
        guard shared.count == 32 else {
            throw OpenSSLError(operation: "the ECDH key agreement", detail: "the shared secret has \(shared.count) bytes, not 32")
        }
        return PowerAuthKDF.reduce(shared)
    }

    /// The activation fingerprint of protocol 3: eight decimal digits of
    /// `SHA-256(x(KEY_DEVICE_PUBLIC) ‖ ACTIVATION_ID ‖ x(KEY_SERVER_PUBLIC))`, taken as an
    /// offline signature component is, from the hash's **last** four bytes (the SDK's
    /// `CalculateActivationFingerprint` with `CalculateDecimalizedSignature`, the server's
    /// `ECPublicKeyFingerprint.compute` with `getInt(hash.length - 4)`; the crypto
    /// documentation's pseudo-code writes `truncate(hash, 4)`). Each x coordinate is written
    /// without leading zero bytes (`BN_bn2bin`; Java's `BigInteger.toByteArray` without its
    /// sign byte), and the activation id as its UTF-8 bytes.
    public static func fingerprint(devicePublicKey: P256PublicKey, serverPublicKey: P256PublicKey, activationId: String) -> String {
        let data = significantBytes(devicePublicKey.coordinates.x) + Array(activationId.utf8) + significantBytes(serverPublicKey.coordinates.x)
        return PowerAuthSignature.decimalize(SHA256.hash(data), componentLength: 8)
    }

    /// ``fingerprint(devicePublicKey:serverPublicKey:activationId:)`` of two SEC1 points; nil
    /// when either is not a P-256 public key.
    public static func fingerprint(devicePublicKey: [UInt8], serverPublicKey: [UInt8], activationId: String) -> String? {
        guard let device = try? P256PublicKey(sec1: devicePublicKey), let server = try? P256PublicKey(sec1: serverPublicKey) else {
            return nil
        }
        return fingerprint(devicePublicKey: device, serverPublicKey: server, activationId: activationId)
    }

    /// A big-endian number without its leading zero bytes.
    static func significantBytes(_ bytes: [UInt8]) -> [UInt8] {
        Array(bytes.drop { $0 == 0 })
    }
}
