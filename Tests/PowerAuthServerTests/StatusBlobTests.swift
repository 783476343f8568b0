import LinkCrypto
import PowerAuthServer
import XCTest

final class StatusBlobTests: XCTestCase {
    private let key: [UInt8] = Array(1...16)
    private let challenge: [UInt8] = Array(repeating: 0xA5, count: 16)
    private let nonce: [UInt8] = Array(0x30..<0x40)

    private func sample() -> StatusBlob {
        StatusBlob(
            state: .active, currentVersion: 3, upgradeVersion: 3, counterByte: 0x2A, failCount: 1, maxFailCount: 5,
            lookAhead: 20, counterDataHash: Array(0xF0...0xFF))
    }

    func testLayout() {
        let bytes = sample().encoded()
        XCTAssertEqual(bytes.count, 32)
        XCTAssertEqual(Array(bytes[0..<4]), [0xDE, 0xC0, 0xDE, 0xD1])
        XCTAssertEqual(Array(bytes[4..<7]), [3, 3, 3])
        XCTAssertEqual(Array(bytes[7..<12]), [0, 0, 0, 0, 0], "5 reserved bytes")
        var withReserved = sample()
        withReserved.reserved = [1, 2, 3, 4, 5]
        XCTAssertEqual(Array(withReserved.encoded()[7..<12]), [1, 2, 3, 4, 5])
        XCTAssertEqual(try StatusBlob.decode(withReserved.encoded()).reserved, [1, 2, 3, 4, 5])
        XCTAssertEqual(Array(bytes[12..<16]), [0x2A, 1, 5, 20])
        XCTAssertEqual(Array(bytes[16..<32]), Array(0xF0...0xFF))
        XCTAssertEqual(try StatusBlob.decode(bytes), sample())
    }

    func testEncryptionRoundTrip() throws {
        let encrypted = try StatusBlobCipher.encrypt(sample(), transportKey: key, challenge: challenge, nonce: nonce)
        XCTAssertEqual(encrypted.count, 32, "CBC without padding keeps 32 bytes")
        XCTAssertNotEqual(encrypted, sample().encoded())
        XCTAssertEqual(try StatusBlobCipher.decrypt(encrypted, transportKey: key, challenge: challenge, nonce: nonce), sample())
        let otherNonce = try StatusBlobCipher.encrypt(sample(), transportKey: key, challenge: challenge, nonce: Array(repeating: 0, count: 16))
        XCTAssertNotEqual(encrypted, otherNonce, "the IV depends on the nonce")
    }

    /// Decrypting the SDK's first status vector and encrypting what it holds gives the
    /// vector's bytes back: the blob and its encryption are the real ones both ways.
    func testEncryptionReproducesTheSDKVector() throws {
        let cases = try PowerAuthVectors.cases("activation-status-blob-data.json")
        let first = try XCTUnwrap(cases.first)
        let transportKey = PowerAuthVectors.bytes(first.input["transportKey"])
        let challenge = PowerAuthVectors.bytes(first.input["challenge"])
        let nonce = PowerAuthVectors.bytes(first.input["nonce"])
        let encrypted = PowerAuthVectors.bytes(first.input["encryptedStatusBlob"])
        let blob = try StatusBlobCipher.decrypt(encrypted, transportKey: transportKey, challenge: challenge, nonce: nonce)
        XCTAssertEqual(String(blob.state.rawValue), first.output["activationStatus"])
        XCTAssertEqual(String(blob.lookAhead), first.output["ctrLookAhead"])
        XCTAssertEqual(try StatusBlobCipher.encrypt(blob, transportKey: transportKey, challenge: challenge, nonce: nonce), encrypted)
    }

    func testAESMatchesTheFIPS197Vector() throws {
        // FIPS-197 appendix C.1: AES-128, one block (CBC with a zero IV is ECB for one block).
        let key: [UInt8] = Array(0x00...0x0F)
        let plain: [UInt8] = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xAA, 0xBB, 0xCC, 0xDD, 0xEE, 0xFF]
        let expected: [UInt8] = [0x69, 0xC4, 0xE0, 0xD8, 0x6A, 0x7B, 0x04, 0x30, 0xD8, 0xCD, 0xB7, 0x80, 0x70, 0xB4, 0xC5, 0x5A]
        XCTAssertEqual(try AES128.encryptBlock(plain, key: key), expected)
    }

    func testWrongKeyOrTamperingIsRejected() throws {
        var encrypted = try StatusBlobCipher.encrypt(sample(), transportKey: key, challenge: challenge, nonce: nonce)
        XCTAssertThrowsError(
            try StatusBlobCipher.decrypt(
                encrypted, transportKey: Array(repeating: 9, count: 16),
                challenge: challenge, nonce: nonce)
        ) { error in
            guard case .wrongMagic? = error as? StatusBlobError else { return XCTFail("expected wrongMagic, got \(error)") }
        }
        // A flipped bit in the first cipher block garbles the whole first plain block (magic,
        // state, versions): in CBC it cannot pass as a blob.
        encrypted[0] ^= 0x01
        XCTAssertThrowsError(try StatusBlobCipher.decrypt(encrypted, transportKey: key, challenge: challenge, nonce: nonce)) { error in
            guard case .wrongMagic? = error as? StatusBlobError else { return XCTFail("expected wrongMagic, got \(error)") }
        }
        XCTAssertThrowsError(try StatusBlobCipher.decrypt(Array(encrypted.prefix(16)), transportKey: key, challenge: challenge, nonce: nonce)) {
            XCTAssertEqual($0 as? StatusBlobError, .wrongLength(16))
        }
    }

    func testMagicVersionByteD1ThroughDFIsAccepted() throws {
        var bytes = sample().encoded()
        for version: UInt8 in [0xD1, 0xD7, 0xDF] {
            bytes[3] = version
            XCTAssertNoThrow(try StatusBlob.decode(bytes))
        }
        for version: UInt8 in [0xD0, 0xE0, 0x00] {
            bytes[3] = version
            XCTAssertThrowsError(try StatusBlob.decode(bytes)) { XCTAssertEqual($0 as? StatusBlobError, .wrongMagic([0xDE, 0xC0, 0xDE, version])) }
        }
        bytes = sample().encoded()
        bytes[0] = 0xDF
        XCTAssertThrowsError(try StatusBlob.decode(bytes)) { XCTAssertEqual($0 as? StatusBlobError, .wrongMagic([0xDF, 0xC0, 0xDE, 0xD1])) }
    }

    func testStateOutsideOneToFiveIsRejected() throws {
        var bytes = sample().encoded()
        for state: UInt8 in 1...5 {
            bytes[4] = state
            XCTAssertEqual(try StatusBlob.decode(bytes).state.rawValue, state)
        }
        for state: UInt8 in [0, 6, 0xFF] {
            bytes[4] = state
            XCTAssertThrowsError(try StatusBlob.decode(bytes)) { XCTAssertEqual($0 as? StatusBlobError, .unknownState(state)) }
        }
    }

    func testLookAheadZeroOrOver64IsRejected() throws {
        var bytes = sample().encoded()
        for value: UInt8 in [1, 64] {
            bytes[15] = value
            XCTAssertEqual(try StatusBlob.decode(bytes).lookAhead, value)
        }
        for value: UInt8 in [0, 65, 0xFF] {
            bytes[15] = value
            XCTAssertThrowsError(try StatusBlob.decode(bytes)) { XCTAssertEqual($0 as? StatusBlobError, .invalidLookAhead(value)) }
        }
    }

    func testWrongLengthIsRejected() {
        XCTAssertThrowsError(try StatusBlob.decode(Array(sample().encoded().prefix(31)))) { XCTAssertEqual($0 as? StatusBlobError, .wrongLength(31)) }
    }

    func testClientStatusRules() {
        var blob = sample()
        var status = ClientActivationStatus(blob: blob, deadlock: false, customObject: nil, blockExpirationTime: 5)
        XCTAssertEqual(status.state, "active")
        XCTAssertEqual(status.remainingAttempts, 4)
        XCTAssertNil(status.blockExpirationTime, "only a blocked activation has a block expiration")
        XCTAssertFalse(status.isProtocolUpgradeAvailable)
        blob.currentVersion = 2
        XCTAssertTrue(ClientActivationStatus(blob: blob, deadlock: false, customObject: nil, blockExpirationTime: nil).isProtocolUpgradeAvailable)
        blob.upgradeVersion = 4
        XCTAssertFalse(
            ClientActivationStatus(blob: blob, deadlock: false, customObject: nil, blockExpirationTime: nil).isProtocolUpgradeAvailable,
            "an upgrade beyond 3 is unknown to the SDK")
        blob.upgradeVersion = 3
        blob.state = .blocked
        status = ClientActivationStatus(blob: blob, deadlock: false, customObject: nil, blockExpirationTime: 5)
        XCTAssertEqual(status.remainingAttempts, 0)
        XCTAssertFalse(status.isProtocolUpgradeAvailable)
        XCTAssertEqual(status.blockExpirationTime, 5)
        blob.state = .active
        status = ClientActivationStatus(blob: blob, deadlock: true, customObject: nil, blockExpirationTime: nil)
        XCTAssertEqual(status.state, "deadlock")
        XCTAssertEqual(status.remainingAttempts, 0)
        blob.state = .removed
        XCTAssertEqual(
            ClientActivationStatus(blob: blob, deadlock: true, customObject: nil, blockExpirationTime: nil).state, "deadlock",
            "Session.cpp: an unplaceable counter is a deadlock even when the server says removed")
        XCTAssertEqual(ClientActivationStatus(blob: blob, deadlock: false, customObject: nil, blockExpirationTime: nil).state, "removed")
    }
}
