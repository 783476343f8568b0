import Foundation
import LinkCrypto
import PowerAuthServer
import XCTest

/// The server's MAC tokens: the header as the PowerAuth integration libraries read it
/// (`PowerAuthHttpHeader`'s pattern, `PowerAuthTokenHttpHeaderValidator`'s checks in order) and
/// `validateToken` as the server's `TokenBehavior` runs it (timestamp window, lookup, status,
/// replay, digest), each rule at its boundary.
final class ServerTokenTests: ServerTestCase {
    private let now: Int64 = 1_800_000_000_000

    private let tokenId = "0b6a8f8e-1d2c-4e5f-9a0b-1c2d3e4f5a6b"
    private let digest = Data(repeating: 7, count: 32).base64EncodedString()
    private let nonce = Data(repeating: 9, count: 16).base64EncodedString()

    private func header(
        version: String = "3.3", tokenId: String? = nil, digest: String? = nil, nonce: String? = nil,
        timestamp: String = "1800000000000"
    ) -> String {
        "PowerAuth version=\"\(version)\", token_id=\"\(tokenId ?? self.tokenId)\", token_digest=\"\(digest ?? self.digest)\", nonce=\"\(nonce ?? self.nonce)\", timestamp=\"\(timestamp)\""
    }

    private func refusal(_ value: String) -> String? {
        do {
            _ = try TokenHeaderFields.parse(value)
            return nil
        } catch {
            return error.name
        }
    }

    func testTheHeaderIsReadInAnyOrderQuotedOrNot() throws {
        let fields = try TokenHeaderFields.parse(header())
        XCTAssertEqual(fields.tokenId, tokenId)
        XCTAssertEqual(fields.digest, Array(repeating: 7, count: 32))
        XCTAssertEqual(fields.nonce, Array(repeating: 9, count: 16))
        XCTAssertEqual(fields.timestamp, 1_800_000_000_000)
        XCTAssertEqual(fields.version, "3.3")
        let reordered =
            "  PowerAuth timestamp=1800000000000 nonce=\"\(nonce)\" token_id=\"\(tokenId.uppercased())\",  version=\"3.1\", token_digest=\"\(digest)\"  "
        let other = try TokenHeaderFields.parse(reordered)
        XCTAssertEqual(other.tokenId, tokenId, "read lowercased")
        XCTAssertEqual(other.version, "3.1")
        XCTAssertEqual(other.timestamp, 1_800_000_000_000)
        // As the pattern reads it, an unquoted value runs to the next whitespace, comma included.
        XCTAssertEqual(
            refusal("PowerAuth timestamp=1800000000000, nonce=\"\(nonce)\", token_id=\"\(tokenId)\", version=\"3.3\", token_digest=\"\(digest)\""),
            "POWER_AUTH_TOKEN_TIMESTAMP_INVALID")
    }

    func testEachFieldIsCheckedInTheValidatorsOrder() {
        XCTAssertEqual(refusal("Bearer abc"), "POWER_AUTH_TOKEN_ID_EMPTY", "without the prefix nothing is read")
        XCTAssertEqual(refusal(header(tokenId: "not-a-uuid", digest: "x")), "POWER_AUTH_TOKEN_ID_INVALID", "token_id first")
        XCTAssertEqual(refusal(header(tokenId: "0b6a8f8e-1d2c-6e5f-9a0b-1c2d3e4f5a6b")), "POWER_AUTH_TOKEN_ID_INVALID", "version digit 1-5")
        XCTAssertEqual(refusal(header(tokenId: "0b6a8f8e-1d2c-4e5f-ca0b-1c2d3e4f5a6b")), "POWER_AUTH_TOKEN_ID_INVALID", "variant 8, 9, a, b")
        XCTAssertEqual(refusal(header(digest: Data(count: 31).base64EncodedString())), "POWER_AUTH_TOKEN_DIGEST_INVALID")
        XCTAssertEqual(refusal(header(nonce: "!!!!")), "POWER_AUTH_TOKEN_NONCE_INVALID")
        XCTAssertEqual(refusal(header(nonce: Data(count: 17).base64EncodedString())), "POWER_AUTH_TOKEN_NONCE_INVALID")
        XCTAssertEqual(refusal(header(timestamp: "12345678")), "POWER_AUTH_TOKEN_TIMESTAMP_INVALID", "8 digits")
        XCTAssertNil(refusal(header(timestamp: "123456789")), "9 digits")
        XCTAssertNil(refusal(header(timestamp: "123456789012345")), "15 digits")
        XCTAssertEqual(refusal(header(timestamp: "1234567890123456")), "POWER_AUTH_TOKEN_TIMESTAMP_INVALID", "16 digits")
        XCTAssertEqual(refusal(header(timestamp: "-123456789")), "POWER_AUTH_TOKEN_TIMESTAMP_INVALID")
        XCTAssertEqual(refusal(header(version: "3.4")), "POWER_AUTH_TOKEN_VERSION_INVALID")
        XCTAssertEqual(
            refusal("PowerAuth token_id=\"\(tokenId)\", token_digest=\"\(digest)\", nonce=\"\(nonce)\", timestamp=\"1800000000000\""),
            "POWER_AUTH_TOKEN_VERSION_EMPTY")
    }

    /// A token of an active activation and the header its secret makes at `timestamp`.
    private func token(version: String = "3.3", timestamp: Int64) throws -> (ServerToken, TokenHeaderFields) {
        let record = try activate(committed: true)
        let token = try server.createToken(for: record.activationId, signatureType: .possessionBiometry, now: now)
        let value = PowerAuthTokenHeader.value(
            tokenIdentifier: token.tokenId, secret: token.secret, nonce: SecureRandom.bytes(16),
            timestampMilliseconds: timestamp, version: version)
        return (token, try TokenHeaderFields.parse(value))
    }

    private func rejection(_ fields: TokenHeaderFields, at time: Int64? = nil) -> Int? {
        do {
            _ = try server.validateToken(fields, now: time ?? now)
            return nil
        } catch ServerError.rejected(let code, _, _) {
            return code
        } catch {
            return -1
        }
    }

    /// The server's shipped values, written out: two hours back, a minute ahead for 3.2 and 3.3
    /// (the replay check), half an hour ahead for 3.0 and 3.1.
    func testTheTimestampWindowIsTwoHoursBackAndHalfAnHourAhead() throws {
        XCTAssertNil(rejection(try token(timestamp: now - 7_200_000).1))
        XCTAssertEqual(rejection(try token(timestamp: now - 7_200_001).1), 30)
        XCTAssertNil(rejection(try token(timestamp: now + 60_000).1))
        XCTAssertEqual(rejection(try token(timestamp: now + 60_001).1), 24)
        XCTAssertNil(rejection(try token(version: "3.1", timestamp: now + 1_800_000).1))
        XCTAssertEqual(rejection(try token(version: "3.0", timestamp: now + 1_800_001).1), 44)
    }

    func testLookupStatusReplayAndDigest() throws {
        let (token, fields) = try token(timestamp: now)
        let valid = try server.validateToken(fields, now: now)
        XCTAssertTrue(valid.tokenValid)
        XCTAssertEqual(valid.activation?.activationId, token.activationId)
        XCTAssertEqual(valid.signatureType, .possessionBiometry)
        XCTAssertEqual(rejection(fields), 24, "the same nonce again")
        XCTAssertEqual(rejection(fields, at: now + 59_999), 24)
        XCTAssertTrue(
            try server.validateToken(fields, now: now + 60_000).tokenValid,
            "a nonce is remembered for a minute, as the server keeps its unique values")

        var wrong = fields
        wrong.nonce = Array(repeating: 1, count: 16)
        XCTAssertFalse(try server.validateToken(wrong, now: now).tokenValid, "the digest does not match another nonce")
        var unknown = fields
        unknown.tokenId = "0b6a8f8e-1d2c-4e5f-9a0b-1c2d3e4f5a6b"
        let none = try server.validateToken(unknown, now: now)
        XCTAssertFalse(none.tokenValid)
        XCTAssertNil(none.activation, "for an unknown token the server sets nothing else")
        XCTAssertNil(none.signatureType)

        try server.apply(.block, to: token.activationId, now: now)
        var again = fields
        again.nonce = Array(repeating: 2, count: 16)
        let blocked = try server.validateToken(again, now: now)
        XCTAssertFalse(blocked.tokenValid)
        XCTAssertEqual(blocked.activation?.state, .blocked)
        XCTAssertFalse(try server.validateToken(again, now: now).tokenValid, "no replay check for an activation that is not active")
    }

    func testTokensNeedAnActiveActivationAndAreRemovedOnlyByTheirs() throws {
        let pending = try activate(committed: false)
        XCTAssertThrowsError(try server.createToken(for: pending.activationId, signatureType: .possession, now: now)) {
            guard case ServerError.rejected(8, "ACTIVATION_INCORRECT_STATE", _)? = $0 as? ServerError else { return XCTFail("\($0)") }
        }
        let record = try activate(committed: true)
        let token = try server.createToken(for: record.activationId, signatureType: .possession, now: now)
        XCTAssertEqual(token.secret.count, 16)
        XCTAssertEqual(try server.tokens(of: record.activationId), [token])
        XCTAssertFalse(try server.removeToken(token.tokenId, activationId: pending.activationId), "another activation's")
        XCTAssertTrue(try server.removeToken(token.tokenId, activationId: record.activationId))
        XCTAssertFalse(try server.removeToken(token.tokenId, activationId: record.activationId), "already gone")
    }
}
