import LinkCrypto
import PowerAuthServer

/// The SDK's side of the key exchange: what its `Session` holds after
/// `validateActivationResponse` (the activation data, `_ad`), until `completeActivation` (the
/// app's `persistActivation`) makes it the persistent data.
struct ClientActivation: Hashable, Sendable {
    var activationId: String
    var masterSecret: [UInt8]
    var counterData: [UInt8]
    /// The device's public key as the SDK exports it: compressed SEC1 (`ECC_ExportPublicKey`).
    var devicePublicKey: [UInt8]
    var serverPublicKey: [UInt8]
    var activationFingerprint: String

    /// `Session::validateActivationResponse`: checks the server's answer (`CTR_DATA` of 16
    /// bytes, a P-256 public key), agrees the master secret by ECDH with the device's private
    /// key and computes the fingerprint. A refused answer is error 5 `invalidActivationData`.
    init(deviceKey: P256PrivateKey, activationId: String, serverPublicKey: [UInt8], counterData: [UInt8]) throws {
        guard !activationId.isEmpty, counterData.count == HashCounter.byteCount else {
            throw PowerAuthError(code: 5, message: "the server's activation answer has no activation id or a CTR_DATA that is not 16 bytes")
                .controlError
        }
        let server: P256PublicKey
        do { server = try P256PublicKey(sec1: serverPublicKey) } catch {
            throw PowerAuthError(code: 5, message: "the server's public key is not valid: \(error)").controlError
        }
        let device = deviceKey.publicKey
        self.activationId = activationId
        self.counterData = counterData
        self.serverPublicKey = serverPublicKey
        devicePublicKey = device.compressedRepresentation
        masterSecret = try ActivationKeyExchange.masterSecret(privateKey: deviceKey, publicKey: server)
        activationFingerprint = ActivationKeyExchange.fingerprint(devicePublicKey: device, serverPublicKey: server, activationId: activationId)
    }

    /// `Session::completeActivation`: the persistent data of a protocol 3.1 activation, its
    /// counter byte 0.
    var counter: ClientCounter {
        ClientCounter(
            masterSecret: masterSecret, counterData: counterData, counterByte: 0, devicePublicKey: devicePublicKey,
            serverPublicKey: serverPublicKey)
    }
}
