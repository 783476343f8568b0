import Foundation
import LinkCrypto
import PowerAuthServer
import XCTest

/// Every case of the SDK's published vectors (`../shared/reference/powerauth-test-vectors/`),
/// through the code the emulated server and the emulated SDK use.
final class ReferenceVectorTests: XCTestCase {
    func testComputeDerivedKeys() throws {
        let cases = try PowerAuthVectors.cases("compute-derived-keys.json")
        XCTAssertEqual(cases.count, 20, "20 master secrets, five keys each")
        for (index, item) in cases.enumerated() {
            let keys = SignatureKeys(masterSecret: PowerAuthVectors.bytes(item.input["masterSecretKey"]))
            XCTAssertEqual(keys.possession, PowerAuthVectors.bytes(item.output["signaturePossessionKey"]), "case \(index)")
            XCTAssertEqual(keys.knowledge, PowerAuthVectors.bytes(item.output["signatureKnowledgeKey"]), "case \(index)")
            XCTAssertEqual(keys.biometry, PowerAuthVectors.bytes(item.output["signatureBiometryKey"]), "case \(index)")
            XCTAssertEqual(keys.transport, PowerAuthVectors.bytes(item.output["transportKey"]), "case \(index)")
            XCTAssertEqual(keys.vault, PowerAuthVectors.bytes(item.output["vaultEncryptionKey"]), "case \(index)")
        }
    }

    /// `compute-master-secret-key.json`: "(devicePrivateKey, serverPublicKey) => masterSecretKey
    /// <= (serverPrivateKey, devicePublicKey)", the ECDH of the key exchange from both ends.
    func testComputeMasterSecretKeyFromBothEnds() throws {
        let cases = try PowerAuthVectors.cases("compute-master-secret-key.json")
        XCTAssertGreaterThan(cases.count, 0)
        for (index, item) in cases.enumerated() {
            let device = try P256PrivateKey(scalar: PowerAuthVectors.bytes(item.input["devicePrivateKey"]))
            let server = try P256PrivateKey(scalar: PowerAuthVectors.bytes(item.input["serverPrivateKey"]))
            let devicePublic = try P256PublicKey(sec1: PowerAuthVectors.bytes(item.input["devicePublicKey"]))
            let serverPublic = try P256PublicKey(sec1: PowerAuthVectors.bytes(item.input["serverPublicKey"]))
            XCTAssertEqual(device.publicKey.uncompressedRepresentation, devicePublic.uncompressedRepresentation, "case \(index)")
            XCTAssertEqual(server.publicKey.uncompressedRepresentation, serverPublic.uncompressedRepresentation, "case \(index)")
            let expected = PowerAuthVectors.bytes(item.output["masterSecretKey"])
            XCTAssertEqual(try ActivationKeyExchange.masterSecret(privateKey: device, publicKey: serverPublic), expected, "case \(index)")
            XCTAssertEqual(try ActivationKeyExchange.masterSecret(privateKey: server, publicKey: devicePublic), expected, "case \(index)")
        }
    }

    func testActivationStatusBlobIV() throws {
        let cases = try PowerAuthVectors.cases("activation-status-blob-iv.json")
        XCTAssertEqual(cases.count, 32)
        for (index, item) in cases.enumerated() {
            let iv = PowerAuthKDF.statusIV(
                transportKey: PowerAuthVectors.bytes(item.input["transportKey"]),
                challenge: PowerAuthVectors.bytes(item.input["challenge"]),
                nonce: PowerAuthVectors.bytes(item.input["nonce"]))
            XCTAssertEqual(iv, PowerAuthVectors.bytes(item.output["iv"]), "case \(index)")
        }
    }

    func testActivationStatusBlobData() throws {
        let cases = try PowerAuthVectors.cases("activation-status-blob-data.json")
        XCTAssertEqual(cases.count, 8)
        for (index, item) in cases.enumerated() {
            let transportKey = PowerAuthVectors.bytes(item.input["transportKey"])
            let blob = try StatusBlobCipher.decrypt(
                PowerAuthVectors.bytes(item.input["encryptedStatusBlob"]),
                transportKey: transportKey,
                challenge: PowerAuthVectors.bytes(item.input["challenge"]),
                nonce: PowerAuthVectors.bytes(item.input["nonce"]))
            let out = item.output
            XCTAssertEqual(String(blob.state.rawValue), out["activationStatus"], "case \(index)")
            XCTAssertEqual(String(blob.currentVersion), out["currentVersion"], "case \(index)")
            XCTAssertEqual(String(blob.upgradeVersion), out["upgradeVersion"], "case \(index)")
            XCTAssertEqual(String(blob.failCount), out["failedAttempts"], "case \(index)")
            XCTAssertEqual(String(blob.maxFailCount), out["maxFailedAttempts"], "case \(index)")
            XCTAssertEqual(String(blob.lookAhead), out["ctrLookAhead"], "case \(index)")
            XCTAssertEqual(String(blob.counterByte), out["ctrByte"], "case \(index)")
            XCTAssertEqual(blob.counterDataHash, PowerAuthVectors.bytes(out["ctrDataHash"]), "case \(index)")
            let (distance, _) = CounterSynchronization.hashDistance(
                from: PowerAuthVectors.bytes(item.input["ctrData"]),
                to: blob.counterDataHash, transportKey: transportKey,
                maximumIterations: Int(blob.lookAhead))
            XCTAssertEqual(String(distance ?? -1), out["counterDistance"], "case \(index)")
        }
    }

    func testOnlineSignaturesV31() throws {
        let cases = try PowerAuthVectors.cases("signatures-v31.json")
        XCTAssertEqual(cases.count, 300)
        for (index, item) in cases.enumerated() {
            let (keys, factor, counterData, data) = try signatureInput(item.input)
            let signature = PowerAuthSignature.compute(
                keys: keys, factor: factor, counterData: counterData, data: data,
                format: .base64)
            XCTAssertEqual(signature, item.output["signature"], "case \(index) (\(factor.rawValue))")
        }
    }

    func testOfflineSignatures() throws {
        let cases = try PowerAuthVectors.cases("signatures-offline.json")
        XCTAssertEqual(cases.count, 200)
        var lengths = Set<Int>()
        for (index, item) in cases.enumerated() {
            let (keys, factor, counterData, data) = try signatureInput(item.input)
            let length = try XCTUnwrap(Int(item.input["signatureComponentLength"] ?? ""), "case \(index)")
            lengths.insert(length)
            let signature = PowerAuthSignature.compute(
                keys: keys, factor: factor, counterData: counterData, data: data,
                format: .decimal(componentLength: length))
            XCTAssertEqual(signature, item.output["signature"], "case \(index) (\(factor.rawValue), \(length) digits)")
        }
        XCTAssertEqual(lengths, Set(4...8), "the vectors cover every component length")
    }

    /// The vectors give the three signature keys directly; `SignatureKeys` is built from a
    /// master secret, so the given keys replace the derived ones.
    private func signatureInput(_ input: [String: String]) throws -> (SignatureKeys, SignatureFactor, [UInt8], [UInt8]) {
        var keys = SignatureKeys(masterSecret: [UInt8](repeating: 0, count: 16))
        keys.possession = PowerAuthVectors.bytes(input["signaturePossessionKey"])
        keys.knowledge = PowerAuthVectors.bytes(input["signatureKnowledgeKey"])
        keys.biometry = PowerAuthVectors.bytes(input["signatureBiometryKey"])
        let factor = try XCTUnwrap(SignatureFactor(rawValue: input["signatureType"] ?? ""), "signatureType \(input["signatureType"] ?? "")")
        return (keys, factor, PowerAuthVectors.bytes(input["counterData"]), PowerAuthVectors.bytes(input["data"]))
    }
}
