import LinkCrypto
import WireProtocol
import XCTest

final class CryptoTests: XCTestCase {
    /// RFC 4231, test case 2.
    func testHMACSHA256MatchesRFC4231() {
        let code = HMACSHA256.authenticationCode(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        XCTAssertEqual(code, Fixtures.bytes("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"))
    }

    /// Python: `hmac.new(b"", b"", hashlib.sha256).hexdigest()`.
    func testHMACSHA256WithAnEmptyKeyAndMessage() {
        XCTAssertEqual(
            HMACSHA256.authenticationCode(key: [], message: []),
            Fixtures.bytes("b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"))
    }

    func testPairingProofMatchesAnIndependentlyComputedVector() {
        let proof = PairingProof.compute(
            key: Fixtures.pairingKey, senderRole: .phone,
            senderNonce: Fixtures.phoneNonce, receiverNonce: Fixtures.watchNonce)
        XCTAssertEqual(proof, Fixtures.phoneProof)
        XCTAssertEqual(proof.count, LinkProtocol.proofLength)
    }

    func testPairingProofVerifies() {
        XCTAssertTrue(
            PairingProof.verify(
                Fixtures.phoneProof, key: Fixtures.pairingKey, senderRole: .phone,
                senderNonce: Fixtures.phoneNonce, receiverNonce: Fixtures.watchNonce))
        XCTAssertTrue(
            PairingProof.verify(
                Fixtures.watchProof, key: Fixtures.pairingKey, senderRole: .watch,
                senderNonce: Fixtures.watchNonce, receiverNonce: Fixtures.phoneNonce))
    }

    func testPairingProofRejectsAWrongKey() {
        var wrongKey = Fixtures.pairingKey
        wrongKey[31] ^= 0x01
        XCTAssertFalse(
            PairingProof.verify(
                Fixtures.phoneProof, key: wrongKey, senderRole: .phone,
                senderNonce: Fixtures.phoneNonce, receiverNonce: Fixtures.watchNonce))
    }

    func testPairingProofIsBoundToRoleAndNonces() {
        let key = Fixtures.pairingKey
        XCTAssertFalse(
            PairingProof.verify(
                Fixtures.phoneProof, key: key, senderRole: .watch,
                senderNonce: Fixtures.phoneNonce, receiverNonce: Fixtures.watchNonce),
            "a proof must not verify for the other role")
        XCTAssertFalse(
            PairingProof.verify(
                Fixtures.phoneProof, key: key, senderRole: .phone,
                senderNonce: Fixtures.watchNonce, receiverNonce: Fixtures.phoneNonce),
            "a proof must not verify with the nonces swapped")
        XCTAssertFalse(
            PairingProof.verify(
                Array(Fixtures.phoneProof.dropLast()), key: key, senderRole: .phone,
                senderNonce: Fixtures.phoneNonce, receiverNonce: Fixtures.watchNonce),
            "a short proof must not verify")
        XCTAssertFalse(
            PairingProof.verify(
                [], key: key, senderRole: .phone,
                senderNonce: Fixtures.phoneNonce, receiverNonce: Fixtures.watchNonce))
    }

    func testSecureRandomGivesFreshBytesOfTheRequestedLength() {
        XCTAssertEqual(SecureRandom.bytes(0), [])
        let first = SecureRandom.bytes(LinkProtocol.nonceLength)
        let second = SecureRandom.bytes(LinkProtocol.nonceLength)
        XCTAssertEqual(first.count, 32)
        XCTAssertNotEqual(first, second)
    }

    // MARK: P-256 ECDH

    /// Computed with the OpenSSL command line: `openssl pkeyutl -derive -inkey a.pem -peerkey
    /// b.pub` for two keys of `openssl ecparam -name prime256v1 -genkey`; the points as
    /// `openssl ec -text` prints them (`-conv_form compressed` for the compressed one).
    private static let scalarA = Fixtures.bytes("9a1928237fe1eba1683e09d935da903fe3efe37afad944f6127f5a4f515b8623")
    private static let publicA = Fixtures.bytes(
        "0469f79e70ef1ac4d256874b5669958c1b2e9b99b9c963e9a4dc4dca236546674f0de6b75fc74e3e0acb16d808ed92e86a12af66acd7b7306bb6b31e487ff160dc")
    private static let publicB = Fixtures.bytes(
        "0487db854a55b602d15625b5fcdf3f37a8904f94fd015b355e36d8c2172ade61572f91f6857ef55745fce547b990158d2c818495348fbf7c281271ba1ee79fd6b9")
    private static let compressedB = Fixtures.bytes("0387db854a55b602d15625b5fcdf3f37a8904f94fd015b355e36d8c2172ade6157")
    private static let sharedAB = Fixtures.bytes("a83de4c399134b55413f62cfc688041a195319a517db42a5f965cb5682705bae")

    func testECDHMatchesTheOpenSSLCommandLine() throws {
        let a = try P256PrivateKey(scalar: Self.scalarA)
        XCTAssertEqual(a.publicKey.uncompressedRepresentation, Self.publicA, "the public point is d·G")
        XCTAssertEqual(try a.sharedSecret(with: P256PublicKey(sec1: Self.publicB)), Self.sharedAB)
        XCTAssertEqual(try a.sharedSecret(with: P256PublicKey(sec1: Self.compressedB)), Self.sharedAB)
        XCTAssertEqual(try a.sharedSecret(with: P256PublicKey(sec1: Self.compressedB)).count, 32)
        // A scalar written as a signed number (a leading zero byte) is the same key.
        XCTAssertEqual(try P256PrivateKey(scalar: [0] + Self.scalarA).publicKey.uncompressedRepresentation, Self.publicA)
    }

    func testPublicKeysConvertBetweenTheirEncodings() throws {
        let b = try P256PublicKey(sec1: Self.compressedB)
        XCTAssertEqual(b.uncompressedRepresentation, Self.publicB)
        XCTAssertEqual(try P256PublicKey(sec1: Self.publicB).compressedRepresentation, Self.compressedB)
        XCTAssertEqual(b.coordinates.x, Array(Self.publicB[1..<33]))
        XCTAssertEqual(b.coordinates.y, Array(Self.publicB[33...]))
    }

    func testTwoFreshKeyPairsAgree() throws {
        let device = try P256PrivateKey(), server = try P256PrivateKey()
        let deviceSide = try device.sharedSecret(with: P256PublicKey(sec1: server.publicKey.uncompressedRepresentation))
        let serverSide = try server.sharedSecret(with: P256PublicKey(sec1: device.publicKey.compressedRepresentation))
        XCTAssertEqual(deviceSide, serverSide)
        XCTAssertNotEqual(deviceSide, try device.sharedSecret(with: P256PrivateKey().publicKey))
    }

    func testKeysThatAreNotOnTheCurveAreRefused() {
        var offCurve = Self.publicB
        offCurve[64] ^= 0x01
        XCTAssertThrowsError(try P256PublicKey(sec1: offCurve)) { XCTAssertTrue("\($0)".contains("not a point on the curve"), "\($0)") }
        XCTAssertThrowsError(try P256PublicKey(sec1: Array(Self.publicB.dropLast()))) { XCTAssertTrue("\($0)".contains("33 or 65 bytes, got 64"), "\($0)") }
        XCTAssertThrowsError(try P256PublicKey(sec1: [0x05] + Array(Self.publicB.dropFirst())))
        XCTAssertThrowsError(try P256PublicKey(sec1: [0x00] + [UInt8](repeating: 0, count: 32)))
        XCTAssertThrowsError(try P256PrivateKey(scalar: [0, 0])) { XCTAssertTrue("\($0)".contains("0 significant bytes"), "\($0)") }
        XCTAssertThrowsError(try P256PrivateKey(scalar: [UInt8](repeating: 0xFF, count: 32)), "n ≤ d is refused")
        XCTAssertThrowsError(try P256PrivateKey(scalar: [1] + [UInt8](repeating: 0, count: 32)), "33 significant bytes")
    }
}
