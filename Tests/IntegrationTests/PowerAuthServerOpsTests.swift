import Foundation
import LinkClient
import LinkControl
import LinkCrypto
import LinkJSON
import PowerAuthServer
import XCTest

/// The key exchange and the server's ops for a client and a backend of the test's own
/// (docs/powerauth.md, "The key exchange"; docs/control-protocol.md, the emulated server):
/// the test makes its own keys and signatures with LinkCrypto and the published constructions.
final class PowerAuthServerOpsTests: DaemonTestCase {
    private func phone() throws -> ControlClient {
        let p = try client(try daemon("phoned").startAndWait())
        _ = try p.call("pa.instance.add", ["instanceId": "main"])
        return p
    }

    private func bytes(_ value: JSONValue?, file: StaticString = #filePath, line: UInt = #line) throws -> [UInt8] {
        Array(try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(value?.stringValue, file: file, line: line)), file: file, line: line))
    }

    private func base64(_ bytes: [UInt8]) -> JSONValue { .string(Data(bytes).base64EncodedString()) }

    /// powerauth-crypto `docs/Activation-via-Activation-Code.md`, "Activation Commit", as both
    /// implementations compute it: SHA-256 of the x coordinates (no leading zero bytes) around
    /// the activation id; the last four bytes, sign bit cleared, modulo 10^8.
    private func fingerprint(device: [UInt8], server: [UInt8], activationId: String) throws -> String {
        let x = { (key: [UInt8]) in Array(try P256PublicKey(sec1: key).coordinates.x.drop { $0 == 0 }) }
        let hash = SHA256.hash(try x(device) + Array(activationId.utf8) + (try x(server)))
        let number = hash.suffix(4).reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
        return String(format: "%08u", number % 100_000_000)
    }

    /// An outside client sends its own public key, computes the master secret from the
    /// server's answer, and ends with the server's: the secret `pa.server.secrets` reveals, the
    /// keys derived from it (`KDF(master, 1…3, 1000, 2000)`, the construction the published
    /// `compute-derived-keys` vectors check), a signature the server accepts, a status blob it
    /// decrypts; the fingerprint is the construction's for the keys `pa.server.get` shows.
    func testAClientOfItsOwnEndsWithTheServersMasterSecret() throws {
        let p = try phone()
        let device = try P256PrivateKey()
        let devicePublicKey = device.publicKey.compressedRepresentation
        let answer = try p.call("pa.server.activationPrepare", ["devicePublicKey": base64(devicePublicKey)])
        XCTAssertEqual(Set(answer.keys), ["activationId", "serverPublicKey", "ctrData"], "what the server answers the device")
        let activationId = try XCTUnwrap(answer["activationId"]?.stringValue)
        let serverPublicKey = try bytes(answer["serverPublicKey"])
        XCTAssertEqual(serverPublicKey.count, 65)
        let masterSecret = PowerAuthKDF.reduce(try device.sharedSecret(with: P256PublicKey(sec1: serverPublicKey)))

        let secrets = try p.call("pa.server.secrets", ["activationId": .string(activationId)])
        XCTAssertEqual(try bytes(secrets["masterSecretKey"]), masterSecret)
        let keys = SignatureKeys(masterSecret: masterSecret)
        XCTAssertEqual(try bytes(secrets["signaturePossessionKey"]), PowerAuthKDF.derive(masterSecret, index: 1))
        XCTAssertEqual(try bytes(secrets["signatureKnowledgeKey"]), keys.knowledge)
        XCTAssertEqual(try bytes(secrets["signatureBiometryKey"]), keys.biometry)
        XCTAssertEqual(try bytes(secrets["transportKey"]), PowerAuthKDF.derive(masterSecret, index: 1000))
        XCTAssertEqual(try bytes(secrets["vaultEncryptionKey"]), keys.vault)

        let record = try p.call("pa.server.get", ["activationId": .string(activationId)])
        XCTAssertEqual(record["state"], "pendingCommit")
        XCTAssertEqual(try bytes(record["devicePublicKey"]), devicePublicKey)
        XCTAssertEqual(try bytes(record["serverPublicKey"]), serverPublicKey)
        XCTAssertEqual(try bytes(record["ctrData"]), try bytes(answer["ctrData"]))
        XCTAssertEqual(
            record["devicePublicKeyFingerprint"]?.stringValue,
            try fingerprint(device: devicePublicKey, server: serverPublicKey, activationId: activationId))

        // The status endpoint, for the client's challenge.
        let challenge = SecureRandom.bytes(16)
        let status = try p.call("pa.server.status", ["activationId": .string(activationId), "challenge": base64(challenge)])
        XCTAssertEqual(status["activationId"], .string(activationId))
        let blob = try StatusBlobCipher.decrypt(
            try bytes(status["encryptedStatusBlob"]), transportKey: keys.transport, challenge: challenge, nonce: try bytes(status["nonce"]))
        XCTAssertEqual(blob.state, .pendingCommit)
        XCTAssertEqual(blob.counterDataHash, PowerAuthKDF.counterDataHash(transportKey: keys.transport, counterData: try bytes(answer["ctrData"])))

        // Committed, a signature with the client's keys and counter.
        _ = try p.call("pa.server.activation", ["activationId": .string(activationId), "action": "commit"])
        let data = "POST&L3BheW1lbnQvY3JlYXRl&AAECAwQFBgcICQoLDA0ODw==&e30=&c2VjcmV0"
        let signature = PowerAuthSignature.compute(
            keys: keys, factor: .possessionKnowledge, counterData: try bytes(answer["ctrData"]), data: Array(data.utf8), format: .base64)
        let verified = try p.call(
            "pa.server.verifySignature",
            [
                "activationId": .string(activationId), "data": .string(data), "signature": .string(signature),
                "signatureType": "possession_knowledge", "online": true,
            ])
        XCTAssertEqual(
            verified,
            [
                "signatureValid": true, "activationId": .string(activationId), "activationStatus": "ACTIVE", "remainingAttempts": 5,
                "signatureType": "POSSESSION_KNOWLEDGE",
            ])
        XCTAssertEqual(try p.call("pa.server.get", ["activationId": .string(activationId)])["counter"], 1)
    }

    /// WatchLink's own client makes the same exchange: its fingerprint is the construction's
    /// for the keys the server shows, and its signatures are made with the keys of the master
    /// secret the server reveals.
    func testTheDevicesActivationFingerprintIsTheProtocols() throws {
        let p = try phone()
        let created = try p.call("pa.activation.create", ["instanceId": "main", "commit": true])
        let activationId = try XCTUnwrap(created["activationId"]?.stringValue)
        XCTAssertEqual(activationId, activationId.lowercased())
        let record = try p.call("pa.server.get", ["activationId": .string(activationId)])
        let devicePublicKey = try bytes(record["devicePublicKey"])
        XCTAssertEqual(devicePublicKey.count, 33, "the SDK sends its key compressed")
        let expected = try fingerprint(device: devicePublicKey, server: try bytes(record["serverPublicKey"]), activationId: activationId)
        XCTAssertEqual(created["activationFingerprint"]?.stringValue, expected)
        XCTAssertEqual(record["devicePublicKeyFingerprint"]?.stringValue, expected)
        XCTAssertEqual(try p.call("pa.activation.get", ["instanceId": "main"])["activationFingerprint"]?.stringValue, expected)

        let keys = SignatureKeys(masterSecret: try bytes(try p.call("pa.server.secrets", ["activationId": .string(activationId)])["masterSecretKey"]))
        let signed = try p.call("pa.sign", ["instanceId": "main", "online": true, "data": "hello", "signatureType": "possession_biometry"])
        XCTAssertEqual(signed["valid"], true)
        XCTAssertEqual(
            signed["signature"]?.stringValue,
            PowerAuthSignature.compute(
                keys: keys, factor: .possessionBiometry, counterData: try bytes(record["ctrData"]), data: Array("hello".utf8), format: .base64))
    }

    /// `verifySignature` as a backend sees it: the remaining attempts count down with invalid
    /// knowledge signatures and the record blocks at none; a possession-only one counts
    /// nothing; a blocked record is not checked; an unknown activation is removed.
    func testVerifySignatureCountsFailuresAndBlocks() throws {
        let p = try phone()
        let masterSecret = Array(UInt8(0)..<16)
        let imported = try p.call(
            "pa.server.import", ["activationId": "backend", "masterSecret": base64(masterSecret), "ctrData": base64(Array(16..<32)), "maxFailCount": 3])
        XCTAssertEqual(imported["state"], "active")
        func verify(_ signature: String, _ type: String, online: Bool = true, length: Int64? = nil) throws -> JSONObject {
            var args: JSONObject = [
                "activationId": "backend", "data": "data", "signature": .string(signature), "signatureType": .string(type), "online": .bool(online),
            ]
            if let length { args["componentLength"] = .int(length) }
            return try p.call("pa.server.verifySignature", args)
        }
        XCTAssertEqual(try verify("AAAAAAAAAAAAAAAAAAAAAA==", "possession")["remainingAttempts"], 3, "possession counts nothing")
        XCTAssertEqual(try verify("1234-5678", "possession_knowledge", online: false, length: 4)["remainingAttempts"], 2)
        XCTAssertEqual(try verify("x", "possession_biometry")["remainingAttempts"], 1)
        let last = try verify("x", "possession_knowledge_biometry")
        XCTAssertEqual(last["remainingAttempts"], 0)
        XCTAssertEqual(last["activationStatus"], "BLOCKED")
        XCTAssertEqual(last["signatureValid"], false)
        let keys = SignatureKeys(masterSecret: masterSecret)
        let right = PowerAuthSignature.compute(
            keys: keys, factor: .possession, counterData: Array(16..<32), data: Array("data".utf8), format: .base64)
        XCTAssertEqual(try verify(right, "possession"), ["signatureValid": false, "activationId": "backend", "activationStatus": "BLOCKED"])
        _ = try p.call("pa.server.activation", ["activationId": "backend", "action": "unblock"])
        XCTAssertEqual(try verify(right, "possession")["signatureValid"], true, "unblocked, the expected counter value")
        XCTAssertEqual(
            try p.call(
                "pa.server.verifySignature",
                ["activationId": "no-such", "data": "", "signature": "x", "signatureType": "possession", "online": true]),
            ["signatureValid": false, "activationId": "no-such", "activationStatus": "REMOVED"])
        let unknownStatus = try p.call("pa.server.status", ["activationId": "no-such", "challenge": base64(Array(0..<16))])
        XCTAssertEqual(try bytes(unknownStatus["encryptedStatusBlob"]).count, 32)
        XCTAssertEqual(try bytes(unknownStatus["nonce"]).count, 16)
    }

    /// `pa.activation.remove` (`removeActivation(with:)`): a request lost on the network or
    /// signed with possession alone changes nothing on the server (the client's counter moved);
    /// one signed with two factors removes the record, then the device's activation and tokens.
    func testTheSignedRemovalRemovesOnTheServerThenOnTheDevice() throws {
        let p = try phone()
        let instance: JSONObject = ["instanceId": "main"]
        assertControlError("PowerAuthErrorDomain", 6) { try p.call("pa.activation.remove", ["instanceId": "main", "signatureType": "possession_knowledge"]) }
        _ = try p.call("pa.activation.create", ["instanceId": "main", "pending": true])
        assertControlError("PowerAuthErrorDomain", 7) { try p.call("pa.activation.remove", ["instanceId": "main", "signatureType": "possession_knowledge"]) }
        _ = try p.call("pa.activation.persist", instance)
        let activationId = try XCTUnwrap(try p.call("pa.activation.get", instance)["activationIdentifier"]?.stringValue)
        let record: JSONObject = ["activationId": .string(activationId)]
        _ = try p.call("pa.server.activation", ["activationId": .string(activationId), "action": "commit"])
        _ = try p.call("pa.token.create", ["instanceId": "main", "name": "t"])

        _ = try p.call("pa.network.set", ["up": false])
        assertControlError("PowerAuthErrorDomain", 1) { try p.call("pa.activation.remove", ["instanceId": "main", "signatureType": "possession_knowledge"]) }
        _ = try p.call("pa.network.set", ["up": true])
        assertControlError("PowerAuthErrorDomain", 1) { try p.call("pa.activation.remove", ["instanceId": "main", "signatureType": "possession"]) }
        XCTAssertEqual(try p.call("pa.server.get", record)["state"], "active")
        XCTAssertEqual(try p.call("pa.server.get", record)["counter"], 1, "only the token's signature reached the server")
        XCTAssertEqual(try p.call("pa.activation.get", instance)["hasValidActivation"], true)

        XCTAssertEqual(try p.call("pa.activation.remove", ["instanceId": "main", "signatureType": "possession_biometry"]), ["removed": true])
        let server = try p.call("pa.server.get", record)
        XCTAssertEqual(server["state"], "removed")
        XCTAssertEqual(server["counter"], 4, "the two signatures that never reached it skipped")
        XCTAssertEqual(try p.call("pa.activation.get", instance)["hasValidActivation"], false)
        XCTAssertEqual(try p.call("pa.token.list", instance)["tokens"], [])
        assertControlError("control", 3) { try p.call("pa.activation.remove", ["instanceId": "main", "signatureType": "pin"]) }
    }

    func testBadInputIsRefusedNamingWhatWasWrong() throws {
        let p = try phone()
        func refused(_ op: String, _ args: JSONObject, _ text: String, line: UInt = #line) {
            XCTAssertThrowsError(try p.call(op, args), line: line) { error in
                let error = error as? ControlError
                XCTAssertEqual(error?.name, "invalidArgument", "\(String(describing: error))", line: line)
                XCTAssertTrue(error?.message.contains(text) == true, "\(String(describing: error?.message)) lacks \(text)", line: line)
            }
        }
        var offCurve = try P256PrivateKey().publicKey.uncompressedRepresentation
        offCurve[64] ^= 1
        refused("pa.server.activationPrepare", ["devicePublicKey": "%%%"], "argument 'devicePublicKey' is not base64")
        refused("pa.server.activationPrepare", ["devicePublicKey": base64(offCurve)], "devicePublicKey is not a P-256 public key")
        refused("pa.server.activationPrepare", ["devicePublicKey": base64([2, 3])], "33 or 65 bytes, got 2")
        refused("pa.server.status", ["activationId": "x", "challenge": base64([1, 2, 3])], "argument 'challenge' must be base64 of 16 bytes, got 3")
        refused("pa.server.status", ["activationId": "", "challenge": base64(Array(0..<16))], "argument 'activationId' must not be empty")
        let verify: JSONObject = ["activationId": "x", "data": "", "signature": "x", "signatureType": "password", "online": true]
        refused("pa.server.verifySignature", verify, "argument 'signatureType' must be one of possession, knowledge")
        var online = verify
        online["signatureType"] = "possession"
        online["componentLength"] = 6
        refused("pa.server.verifySignature", online, "'componentLength' applies to offline signatures only")
        online["online"] = false
        online["componentLength"] = 9
        refused("pa.server.verifySignature", online, "componentLength")
        let secret = base64(Array(0..<16))
        refused("pa.server.import", [:], "missing argument 'masterSecret', or 'signaturePossessionKey'")
        refused("pa.server.import", ["masterSecret": secret, "transportKey": secret], "'transportKey' and 'masterSecret' exclude each other")
        refused("pa.server.import", ["masterSecret": base64([1])], "argument 'masterSecret' must be base64 of 16 bytes, got 1")
        refused("pa.server.import", ["masterSecret": secret, "state": "deadlock"], "argument 'state' must be one of created")
        refused("pa.server.import", ["masterSecret": secret, "lookAhead": 65], "lookAhead")
        _ = try p.call("pa.server.import", ["activationId": "twice", "masterSecret": secret])
        refused("pa.server.import", ["activationId": "twice", "masterSecret": secret], "the server already has an activation 'twice'")
    }
}
