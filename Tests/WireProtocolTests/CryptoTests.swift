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
}
