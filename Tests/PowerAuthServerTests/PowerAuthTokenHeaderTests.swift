import PowerAuthServer
import XCTest

/// The token header's digest against vectors computed independently with Python:
/// `base64.b64encode(hmac.new(secret, nonce + b"&" + ts.encode() [+ b"&" + version], sha256).digest())`,
/// the version appended for 3.2 and 3.3 as the server's `TokenUtils.computeTokenDigest` does.
final class PowerAuthTokenHeaderTests: XCTestCase {
    private let secret = [UInt8](1...16)
    private let nonce = [UInt8](0xA0...0xAF)

    func testDigestVersions30And31LeaveTheVersionOut() {
        for version in ["3.0", "3.1"] {
            XCTAssertEqual(
                PowerAuthTokenHeader.digest(secret: secret, nonce: nonce, timestamp: "1700000000123", version: version),
                "W604seqoZC1vje8OwpBZSsicWHq6kwHXbIf8sEHXR98=", version)
        }
    }

    func testDigestVersion32IncludesTheVersion() {
        XCTAssertEqual(
            PowerAuthTokenHeader.digest(secret: secret, nonce: nonce, timestamp: "1700000000123", version: "3.2"),
            "BzJ3gI9rtZVoTC4MXJwyIljxb1VI9RqJNyP2CLjT0tE=")
    }

    func testDigestVersion33IncludesTheVersion() {
        XCTAssertEqual(
            PowerAuthTokenHeader.digest(secret: secret, nonce: nonce, timestamp: "1700000000123", version: "3.3"),
            "mw1S4j5ysfPKKMhOJ/cwvCDIGKziq7MLWjjQFX4cAD8=")
    }

    /// `PowerAuthToken.m`'s order: version, token_id, token_digest, nonce, timestamp.
    func testHeaderValueInTheSDKsOrder() {
        let value = PowerAuthTokenHeader.value(
            tokenIdentifier: "TOKEN-ID", secret: secret, nonce: nonce,
            timestampMilliseconds: 1_700_000_000_123, version: "3.3")
        XCTAssertEqual(
            value,
            #"PowerAuth version="3.3", token_id="TOKEN-ID", token_digest="mw1S4j5ysfPKKMhOJ/cwvCDIGKziq7MLWjjQFX4cAD8=", nonce="oKGio6SlpqeoqaqrrK2urw==", timestamp="1700000000123""#
        )
        XCTAssertEqual(PowerAuthTokenHeader.sdkVersion, "3.3")
        XCTAssertEqual(PowerAuthTokenHeader.supportedVersions, ["3.0", "3.1", "3.2", "3.3"])
    }
}
