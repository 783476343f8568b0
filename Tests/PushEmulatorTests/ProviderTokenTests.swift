import Foundation
import XCTest
@testable import PushEmulator
import LinkCrypto

/// Makes provider tokens with a key of its own, signatures raw `R‖S` or DER.
struct TokenMaker {
    let key: P256PrivateKey
    let keyId: String
    let teamId: String

    init(keyId: String = "KEY0000001", teamId: String = "TEAM123456") throws {
        key = try P256PrivateKey()
        self.keyId = keyId
        self.teamId = teamId
    }

    func token(iat: Int64, der: Bool = false, header: String? = nil, claims: String? = nil) throws -> String {
        let h = Base64URL.encode(Array((header ?? #"{"alg":"ES256","kid":"\#(keyId)"}"#).utf8))
        let c = Base64URL.encode(Array((claims ?? #"{"iss":"\#(teamId)","iat":\#(iat)}"#).utf8))
        let signature = try key.sign(Array("\(h).\(c)".utf8))
        return "\(h).\(c).\(Base64URL.encode(der ? signature : try Self.raw(fromDER: signature)))"
    }

    /// DER `SEQUENCE { r, s }` → 64-byte `R‖S`.
    static func raw(fromDER der: [UInt8]) throws -> [UInt8] {
        try XCTUnwrap(ECDSASignature.raw(fromDER: der))
    }

    func authenticator(interval: Int64 = 0) throws -> ProviderAuthenticator {
        let authenticator = ProviderAuthenticator(teamId: teamId)
        authenticator.updateIntervalSeconds = interval
        authenticator.addKey(id: keyId, try P256PublicKey(pem: key.publicKeyPEM))
        return authenticator
    }
}

final class ProviderTokenTests: XCTestCase {
    let now: Int64 = 1_800_000_000

    // MARK: Vectors from outside WatchLink

    /// RFC 7515 appendix A.3: the ES256 JWS example. Its public key (the JWK's x and y, written
    /// as a PEM by Python's `cryptography`) verifies its signature, given as raw `R‖S`.
    func testVerifiesTheES256ExampleOfRFC7515() throws {
        let publicKey = try P256PublicKey(
            pem: """
                -----BEGIN PUBLIC KEY-----
                MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEf83OJ3D2xF1Bg8vub9tLe1gHMzV7
                6e8Tus9uPHvRVEXH8UTNG72bfocs3+257rn0s2ldbqkLJK2KRiMohYjlrQ==
                -----END PUBLIC KEY-----

                """)
        let signingInput =
            "eyJhbGciOiJFUzI1NiJ9"
            + ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
        let raw = try XCTUnwrap(
            Base64URL.decode(
                "DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q"))
        XCTAssertEqual(raw.count, 64)
        let der = try XCTUnwrap(ECDSASignature.der(fromRaw: raw))
        XCTAssertTrue(publicKey.verify(signature: der, message: Array(signingInput.utf8)))
        var tampered = Array(signingInput.utf8)
        tampered[tampered.count - 1] ^= 1
        XCTAssertFalse(publicKey.verify(signature: der, message: tampered), "a changed message fails")
        var flipped = raw
        flipped[63] ^= 1
        XCTAssertFalse(publicKey.verify(signature: try XCTUnwrap(ECDSASignature.der(fromRaw: flipped)), message: Array(signingInput.utf8)))
    }

    /// A provider token made by PyJWT 2.15.1 (`jwt.encode({"iss": "TEAM123456", "iat": 1800000000},
    /// key, algorithm="ES256", headers={"kid": "PYJWTKEY01"})`) with a key from `cryptography`.
    static let pyJWTPublicKey = """
        -----BEGIN PUBLIC KEY-----
        MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE1sN/HyDL901+6zfd5+IQ2AKxbqJe
        EhrrBGma/qnwy8EY7DqDpoy/94ovW7HNHkhxqzsPbsCCCS4VIJXvyLfi2A==
        -----END PUBLIC KEY-----

        """
    static let pyJWTToken =
        "eyJhbGciOiJFUzI1NiIsImtpZCI6IlBZSldUS0VZMDEiLCJ0eXAiOiJKV1QifQ"
        + ".eyJpc3MiOiJURUFNMTIzNDU2IiwiaWF0IjoxODAwMDAwMDAwfQ"
        + ".55eErV6bay8hy3xNSet5oxfTaVgK4km4S87o7DrRp63_TtSFGaa_4LCI7heEFRvcTnnTVeubwbmDdzwYEFkavA"

    func testAcceptsAProviderTokenMadeByPyJWT() throws {
        let token = try ProviderToken.parse(Self.pyJWTToken).get()
        XCTAssertEqual(token.keyId, "PYJWTKEY01")
        XCTAssertEqual(token.issuer, "TEAM123456")
        XCTAssertEqual(token.issuedAt, 1_800_000_000)
        let authenticator = ProviderAuthenticator(teamId: "TEAM123456")
        authenticator.updateIntervalSeconds = 0
        authenticator.addKey(id: "PYJWTKEY01", try P256PublicKey(pem: Self.pyJWTPublicKey))
        XCTAssertNil(authenticator.check(authorization: "bearer " + Self.pyJWTToken, now: now))
        XCTAssertEqual(authenticator.check(authorization: "bearer " + Self.pyJWTToken, now: now + 3601), .expiredProviderToken)
        var parts = Self.pyJWTToken.split(separator: ".").map(String.init)
        parts[2] = (parts[2].hasPrefix("A") ? "B" : "A") + parts[2].dropFirst()
        XCTAssertEqual(
            authenticator.check(authorization: "bearer " + parts.joined(separator: "."), now: now), .invalidProviderToken,
            "a changed signature fails")
        let otherTeam = ProviderAuthenticator(teamId: "OTHERTEAM1")
        otherTeam.updateIntervalSeconds = 0
        otherTeam.addKey(id: "PYJWTKEY01", try P256PublicKey(pem: Self.pyJWTPublicKey))
        XCTAssertEqual(otherTeam.check(authorization: "bearer " + Self.pyJWTToken, now: now), .invalidProviderToken)
    }

    // MARK: Tokens made here (parsing and the rules, with signatures checked above)

    func testParsesHeaderAndClaims() throws {
        let maker = try TokenMaker()
        let token = try ProviderToken.parse(maker.token(iat: now)).get()
        XCTAssertEqual(token.keyId, "KEY0000001")
        XCTAssertEqual(token.issuer, "TEAM123456")
        XCTAssertEqual(token.issuedAt, now)
        XCTAssertEqual(token.signature.count, 64)
    }

    func testRefusesMalformedTokens() throws {
        let maker = try TokenMaker()
        XCTAssertEqual(ProviderToken.parse("a.b"), .failure(.notThreeParts))
        XCTAssertEqual(ProviderToken.parse("a..c"), .failure(.notThreeParts))
        XCTAssertEqual(ProviderToken.parse("a*.b.c"), .failure(.badBase64))
        XCTAssertEqual(ProviderToken.parse(try maker.token(iat: now, header: #"{"alg":"HS256","kid":"K"}"#)), .failure(.algorithmNotES256))
        XCTAssertEqual(ProviderToken.parse(try maker.token(iat: now, header: #"{"alg":"ES256"}"#)), .failure(.missingKeyId))
        XCTAssertEqual(ProviderToken.parse(try maker.token(iat: now, claims: #"{"iat":1}"#)), .failure(.missingIssuer))
        XCTAssertEqual(ProviderToken.parse(try maker.token(iat: now, claims: #"{"iss":"T"}"#)), .failure(.missingIssuedAt))
        XCTAssertEqual(ProviderToken.parse(try maker.token(iat: now, header: "[1]")), .failure(.headerNotJSON))
    }

    func testIssuedAtAsAStringOfDigits() throws {
        let maker = try TokenMaker()
        let token = try ProviderToken.parse(maker.token(iat: 0, claims: #"{"iss":"T","iat":"1800000000"}"#)).get()
        XCTAssertEqual(token.issuedAt, 1_800_000_000)
    }

    func testVerifiesRawAndDERSignatures() throws {
        let maker = try TokenMaker()
        for der in [false, true] {
            let authenticator = try maker.authenticator()
            XCTAssertNil(authenticator.check(authorization: "bearer " + (try maker.token(iat: now, der: der)), now: now), "der: \(der)")
        }
    }

    func testRefusesAForeignSignature() throws {
        let maker = try TokenMaker()
        let impostor = try TokenMaker()
        let authenticator = try maker.authenticator()
        XCTAssertEqual(authenticator.check(authorization: "bearer " + (try impostor.token(iat: now)), now: now), .invalidProviderToken)
        XCTAssertEqual(authenticator.check(authorization: "bearer " + (try impostor.token(iat: now, der: true)), now: now), .invalidProviderToken)
    }

    func testAuthorizationReasons() throws {
        let maker = try TokenMaker()
        let authenticator = try maker.authenticator()
        XCTAssertEqual(authenticator.check(authorization: nil, now: now), .missingProviderToken)
        XCTAssertEqual(authenticator.check(authorization: "", now: now), .missingProviderToken)
        XCTAssertEqual(authenticator.check(authorization: "basic abc", now: now), .invalidProviderToken)
        XCTAssertEqual(authenticator.check(authorization: "bearer garbage", now: now), .invalidProviderToken)
        XCTAssertEqual(authenticator.check(authorization: "bearer " + (try maker.token(iat: now - 3601)), now: now), .expiredProviderToken)
        XCTAssertNil(authenticator.check(authorization: "Bearer " + (try maker.token(iat: now - 3599)), now: now))
        let otherTeam = try TokenMaker(keyId: maker.keyId, teamId: "OTHERTEAM1")
        authenticator.addKey(id: maker.keyId, try P256PublicKey(pem: otherTeam.key.publicKeyPEM))
        XCTAssertEqual(authenticator.check(authorization: "bearer " + (try otherTeam.token(iat: now)), now: now), .invalidProviderToken)
        let unknownKey = try TokenMaker(keyId: "UNKNOWNKEY")
        XCTAssertEqual(authenticator.check(authorization: "bearer " + (try unknownKey.token(iat: now)), now: now), .invalidProviderToken)
    }

    func testTokenUpdateRule() throws {
        let maker = try TokenMaker()
        let authenticator = try maker.authenticator(interval: 1200)
        let first = "bearer " + (try maker.token(iat: now)), second = "bearer " + (try maker.token(iat: now + 1))
        var connection = ProviderSession()
        XCTAssertNil(authenticator.check(authorization: first, session: &connection, now: now))
        XCTAssertNil(authenticator.check(authorization: first, session: &connection, now: now + 5))
        XCTAssertEqual(authenticator.check(authorization: second, session: &connection, now: now + 1199), .tooManyProviderTokenUpdates)
        XCTAssertEqual(
            authenticator.check(authorization: first, session: &connection, now: now + 1199), .tooManyProviderTokenUpdates,
            "the connection is unusable until enough time has passed, whatever token it uses")
        XCTAssertNil(authenticator.check(authorization: second, session: &connection, now: now + 1200))
        XCTAssertEqual(authenticator.check(authorization: first, session: &connection, now: now + 1300), .tooManyProviderTokenUpdates)
        var other = ProviderSession()
        XCTAssertNil(
            authenticator.check(authorization: first, session: &other, now: now + 1300),
            "the rule is the connection's: another connection may use any token")
    }

    /// What ships, unchanged: Apple's "Establishing a token-based connection to APNs":
    /// "Refresh your token no more than once every 20 minutes and no less than once every 60
    /// minutes"; a token older than an hour is `ExpiredProviderToken`.
    func testTheShippedTokenRulesAreTwentyMinutesAndAnHour() throws {
        let maker = try TokenMaker()
        func shipped() throws -> ProviderAuthenticator {
            let authenticator = ProviderAuthenticator(teamId: maker.teamId)
            authenticator.addKey(id: maker.keyId, try P256PublicKey(pem: maker.key.publicKeyPEM))
            return authenticator
        }
        func bearer(iat: Int64) throws -> String { "bearer " + (try maker.token(iat: iat)) }
        let authenticator = try shipped()
        var connection = ProviderSession()
        XCTAssertNil(authenticator.check(authorization: try bearer(iat: now), session: &connection, now: now))
        XCTAssertEqual(
            authenticator.check(authorization: try bearer(iat: now + 1), session: &connection, now: now + 1_199),
            .tooManyProviderTokenUpdates, "a new token 19 min 59 s after the last")
        XCTAssertNil(authenticator.check(authorization: try bearer(iat: now + 1), session: &connection, now: now + 1_200), "20 minutes after it")

        XCTAssertNil(try shipped().check(authorization: try bearer(iat: now - 3_600), now: now), "an hour old")
        XCTAssertEqual(try shipped().check(authorization: try bearer(iat: now - 3_601), now: now), .expiredProviderToken)
        XCTAssertNil(try shipped().check(authorization: try bearer(iat: now + 3_600), now: now), "an hour ahead")
        XCTAssertEqual(try shipped().check(authorization: try bearer(iat: now + 3_601), now: now), .invalidProviderToken)
    }

    func testSignatureEncodings() {
        let raw = [UInt8](repeating: 0x80, count: 32) + [UInt8](repeating: 0, count: 31) + [1]
        let der = ECDSASignature.der(fromRaw: raw)!
        XCTAssertEqual(der[0], 0x30)
        XCTAssertEqual(Array(der[2..<5]), [0x02, 33, 0x00])
        XCTAssertEqual(Array(der.suffix(3)), [0x02, 1, 1])
        XCTAssertTrue(ECDSASignature.isDER(der))
        XCTAssertNil(ECDSASignature.der(fromRaw: [1, 2, 3]))
        XCTAssertFalse(ECDSASignature.isDER(Array(der.dropLast())))
        XCTAssertFalse(ECDSASignature.isDER([0x30, 6, 0x02, 1, 0x80, 0x02, 1, 1]))  // negative r
        XCTAssertFalse(ECDSASignature.isDER([0x30, 7, 0x02, 2, 0x00, 0x01, 0x02, 1, 1]))  // non-minimal r
        XCTAssertNil(ECDSASignature.normalized([0x31] + [UInt8](repeating: 0, count: 69)))
    }

    func testBase64URL() {
        XCTAssertEqual(Base64URL.encode([0xfb, 0xff]), "-_8")
        XCTAssertEqual(Base64URL.decode("-_8"), [0xfb, 0xff])
        XCTAssertNil(Base64URL.decode("a=="))
        XCTAssertNil(Base64URL.decode("abcde"))
    }

    func testKeysRoundTripThroughPEM() throws {
        let key = try P256PrivateKey()
        XCTAssertTrue(key.pkcs8PEM.hasPrefix("-----BEGIN PRIVATE KEY-----"))
        let again = try P256PrivateKey(pem: key.pkcs8PEM)
        XCTAssertEqual(again.publicKeyPEM, key.publicKeyPEM)
        let message = Array("hello".utf8)
        XCTAssertTrue(try P256PublicKey(pem: key.publicKeyPEM).verify(signature: key.sign(message), message: message))
        XCTAssertThrowsError(try P256PublicKey(pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")) {
            XCTAssertEqual(($0 as? OpenSSLError)?.operation, "reading the public key PEM", "\($0)")
        }
    }
}
