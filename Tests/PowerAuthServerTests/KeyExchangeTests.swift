import Foundation
import LinkCrypto
import LinkStore
@testable import PowerAuthServer
import TestSupport
import XCTest

/// The key exchange of an activation (powerauth-crypto `docs/Activation-via-Activation-Code.md`)
/// and the records it makes; the published ECDH vectors are in `ReferenceVectorTests`.
final class KeyExchangeTests: ServerTestCase {
    /// Computed with Python's `cryptography` package (`ec.derive_private_key`, `exchange(ec.ECDH())`)
    /// and `hashlib`, following the construction of `ActivationKeyExchange`: the master secret is
    /// the shared secret's halves XORed; the fingerprint the last four bytes of
    /// SHA-256(x(device) ‖ id ‖ x(server)) as an 8-digit decimal. The second device key's x
    /// coordinate starts with a zero byte, which the fingerprint leaves out.
    private static let vectors:
        [(device: String, server: String, id: String, devicePublic: String, serverPublic: String, master: String, fingerprint: String)] = [
            (
                "1d2c3b4a5968778695a4b3c2d1e0f0e1d2c3b4a5968778695a4b3c2d1e0f01",
                "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f1", "c502cad1-2109-45d1-9bae-26b729c0cc3b",
                "02812c3cd285e586ef2704a89de7e58a3318bd3b09775bb32cec88cb6c7091794b",
                "04c60d9f6eb051696e7a4102112d703621b5ced180c334811600a755db943c61db61f1d4cfb528df51af0f60b03ca8afe50400ee4417e45a222358afcbd4311848",
                "67da3ce92f91c714cbfadd7891ced956", "57694950"
            ),
            (
                "017b", "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f1", "6ae8cd16-67a7-4840-8d37-33d9aab6ea51",
                "02005543894af3d00ed7d740abdbd75c96b06877b787db5f70eea78b90a8d7c00a",
                "04c60d9f6eb051696e7a4102112d703621b5ced180c334811600a755db943c61db61f1d4cfb528df51af0f60b03ca8afe50400ee4417e45a222358afcbd4311848",
                "50d3e520f67200d6b9ffb0077d79be90", "53651037"
            ),
        ]

    func testMasterSecretAndFingerprintMatchIndependentVectors() throws {
        for vector in Self.vectors {
            let device = try P256PrivateKey(scalar: bytes(fromHex: vector.device))
            let server = try P256PrivateKey(scalar: bytes(fromHex: vector.server))
            XCTAssertEqual(device.publicKey.compressedRepresentation, bytes(fromHex: vector.devicePublic))
            XCTAssertEqual(server.publicKey.uncompressedRepresentation, bytes(fromHex: vector.serverPublic))
            XCTAssertEqual(try ActivationKeyExchange.masterSecret(privateKey: device, publicKey: server.publicKey), bytes(fromHex: vector.master))
            XCTAssertEqual(try ActivationKeyExchange.masterSecret(privateKey: server, publicKey: device.publicKey), bytes(fromHex: vector.master))
            XCTAssertEqual(
                ActivationKeyExchange.fingerprint(devicePublicKey: device.publicKey, serverPublicKey: server.publicKey, activationId: vector.id),
                vector.fingerprint)
            XCTAssertEqual(
                ActivationKeyExchange.fingerprint(
                    devicePublicKey: bytes(fromHex: vector.devicePublic), serverPublicKey: bytes(fromHex: vector.serverPublic),
                    activationId: vector.id),
                vector.fingerprint, "the same from the SEC1 bytes, compressed or not")
        }
        XCTAssertEqual(bytes(fromHex: Self.vectors[1].devicePublic)[1], 0, "the second vector's x starts with a zero byte")
        XCTAssertNil(
            ActivationKeyExchange.fingerprint(devicePublicKey: [2, 3], serverPublicKey: bytes(fromHex: Self.vectors[0].serverPublic), activationId: "x"))
    }

    /// The server's half with a client of the test's own: both ends hold the same master
    /// secret, the keys derived from it sign what the server accepts, and the fingerprint is
    /// the construction's for the keys the record shows.
    func testAClientOfItsOwnAgreesTheMasterSecretWithTheServer() throws {
        let device = try P256PrivateKey()
        let record = try server.prepareActivation(devicePublicKey: device.publicKey.uncompressedRepresentation, committed: true)
        XCTAssertEqual(record.state, .active)
        let serverPublic = try P256PublicKey(sec1: try XCTUnwrap(record.serverPublicKey))
        let masterSecret = PowerAuthKDF.reduce(try device.sharedSecret(with: serverPublic))
        XCTAssertEqual(record.masterSecret, masterSecret)
        let hash = SHA256.hash(
            Array(device.publicKey.coordinates.x.drop { $0 == 0 }) + Array(record.activationId.utf8)
                + Array(serverPublic.coordinates.x.drop { $0 == 0 }))
        let number = (UInt32(hash[28]) << 24 | UInt32(hash[29]) << 16 | UInt32(hash[30]) << 8 | UInt32(hash[31])) & 0x7FFF_FFFF
        XCTAssertEqual(record.activationFingerprint, String(format: "%08u", number % 100_000_000))
        XCTAssertEqual(record.json["devicePublicKeyFingerprint"]?.stringValue, record.activationFingerprint)
        let keys = SignatureKeys(masterSecret: masterSecret)
        let data = Array("POST&L3BheW1lbnQ=&AAAAAAAAAAAAAAAAAAAAAA==&e30=&c2VjcmV0".utf8)
        let signature = PowerAuthSignature.compute(
            keys: keys, factor: .possessionKnowledge, counterData: record.counterData, data: data, format: .base64)
        let verified = try server.verifySignature(
            record.activationId, signature: signature, factor: .possessionKnowledge, data: data, format: .base64, now: 0)
        XCTAssertTrue(verified.signatureValid)
        XCTAssertEqual(verified.remainingAttempts, 5)
        XCTAssertEqual(verified.signatureType, .possessionKnowledge)
    }

    func testADevicePublicKeyThatIsNotAPointIsRefused() throws {
        var key = try P256PrivateKey().publicKey.uncompressedRepresentation
        key[64] ^= 1
        XCTAssertThrowsError(try server.prepareActivation(devicePublicKey: key, committed: false)) {
            guard case .invalidValue(let message)? = $0 as? ServerError else { return XCTFail("\($0)") }
            XCTAssertTrue(message.hasPrefix("devicePublicKey is not a P-256 public key"), message)
        }
        XCTAssertThrowsError(try server.prepareActivation(devicePublicKey: Array(key.prefix(20)), committed: false))
        XCTAssertEqual(try server.activations(now: 0).count, 0, "a refused exchange leaves no record")
    }

    /// A record imported with its keys only keeps them (and no master secret) across a reopen;
    /// an activation id the server has is refused.
    func testImportedRecordsKeepTheirKeys() throws {
        let keys = SignatureKeys(
            possession: Array(repeating: 1, count: 16), knowledge: Array(repeating: 2, count: 16), biometry: Array(repeating: 3, count: 16),
            transport: Array(repeating: 4, count: 16), vault: Array(repeating: 5, count: 16))
        let record = ServerActivation(
            activationId: "imported", state: .blocked, keys: keys, masterSecret: nil, counterData: Array(0..<16), failCount: 7,
            maxFailCount: 9, currentVersion: 2, upgradeVersion: 3, lookAhead: 33, counter: 70_000)
        XCTAssertEqual(try server.importActivation(record), record)
        XCTAssertThrowsError(try server.importActivation(record)) {
            XCTAssertEqual($0 as? ServerError, .invalidValue("the server already has an activation 'imported'"))
        }
        store.close()
        store = try ServerStore(path: directory + "/server.db")
        server = EmulatedServer(store: store)
        let read = try server.activation("imported", now: 0)
        XCTAssertEqual(read, record)
        XCTAssertNil(read.masterSecret)
        XCTAssertNil(read.activationFingerprint)
        XCTAssertNil(read.json["devicePublicKey"])
    }

    /// A file of schema version 3 (records with a master secret and no public keys) opens with
    /// its records, which then have no fingerprint.
    func testAVersion3FileKeepsItsRecords() throws {
        store.close()
        let path = directory + "/v3.db"
        let version3 = StoreSchema(
            name: "WatchLink PowerAuth server", applicationID: ServerStore.applicationID,
            migrations: Array(ServerStore.schema.migrations.prefix { $0.version <= 3 }))
        let old = try StoreFile.open(path: path, schema: version3).database
        try old.run("INSERT INTO server_activations VALUES ('OLD', 3, 1, 5, NULL, 3, 3, 20, 4, zeroblob(16), zeroblob(16), NULL)")
        old.close()
        store = try ServerStore(path: path)
        server = EmulatedServer(store: store)
        let record = try server.activation("OLD", now: 0)
        XCTAssertEqual(record.masterSecret, Array(repeating: 0, count: 16))
        XCTAssertEqual(record.keys, SignatureKeys(masterSecret: Array(repeating: 0, count: 16)))
        XCTAssertEqual(record.counter, 4)
        XCTAssertEqual(record.failCount, 1)
        XCTAssertNil(record.activationFingerprint)
    }
}
