import PowerAuthSync
import XCTest

/// The token header's digest against vectors computed independently with Python:
/// `base64.b64encode(hmac.new(secret, nonce + b"&" + ts.encode() [+ b"&" + version], sha256).digest())`.
final class PowerAuthTokenHeaderTests: XCTestCase {
    private let secret = Array<UInt8>(1...16)
    private let nonce = Array<UInt8>(0xA0...0xAF)

    func testDigestVersion31() {
        XCTAssertEqual(PowerAuthTokenHeader.digest(secret: secret, nonce: nonce, timestamp: "1700000000123", version: "3.1"),
                       "W604seqoZC1vje8OwpBZSsicWHq6kwHXbIf8sEHXR98=")
    }

    func testDigestVersion33IncludesTheVersion() {
        XCTAssertEqual(PowerAuthTokenHeader.digest(secret: secret, nonce: nonce, timestamp: "1700000000123", version: "3.3"),
                       "mw1S4j5ysfPKKMhOJ/cwvCDIGKziq7MLWjjQFX4cAD8=")
    }

    func testHeaderValue() {
        let value = PowerAuthTokenHeader.value(tokenIdentifier: "TOKEN-ID", secret: secret, nonce: nonce,
                                               timestampMilliseconds: 1_700_000_000_123, version: "3.1")
        XCTAssertEqual(value, #"PowerAuth token_id="TOKEN-ID", token_digest="W604seqoZC1vje8OwpBZSsicWHq6kwHXbIf8sEHXR98=", nonce="oKGio6SlpqeoqaqrrK2urw==", timestamp="1700000000123", version="3.1""#)
    }
}
