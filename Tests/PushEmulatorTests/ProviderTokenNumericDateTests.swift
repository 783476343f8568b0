import LinkControl
@testable import PushEmulator
import XCTest

/// `iat` is an RFC 7519 NumericDate: integer seconds or seconds with a fraction.
final class ProviderTokenNumericDateTests: XCTestCase {
    /// base64url of `{"alg":"ES256","kid":"ABC123DEFG"}` and of claims with `iat` as given,
    /// written out by hand (no encoder of the module under test).
    private func token(claims: String) -> String {
        let header = "eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQzEyM0RFRkcifQ"
        var encoded = Data(claims.utf8).base64EncodedString()
        encoded = encoded.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while encoded.hasSuffix("=") { encoded.removeLast() }
        return "\(header).\(encoded).c2lnbmF0dXJl"
    }

    private func issuedAt(_ claims: String) -> Int64? {
        guard case .success(let parsed) = ProviderToken.parse(token(claims: claims)) else { return nil }
        return parsed.issuedAt
    }

    func testAFractionCountsItsWholeSeconds() {
        XCTAssertEqual(issuedAt(#"{"iss":"TEAM123456","iat":1796105501.4953103}"#), 1_796_105_501, "what apns2 sends")
        XCTAssertEqual(issuedAt(#"{"iss":"TEAM123456","iat":1796105501.9999}"#), 1_796_105_501)
        XCTAssertEqual(issuedAt(#"{"iss":"TEAM123456","iat":1796105501}"#), 1_796_105_501)
        XCTAssertEqual(issuedAt(#"{"iss":"TEAM123456","iat":1.7961055e9}"#), 1_796_105_500)
        XCTAssertEqual(issuedAt(#"{"iss":"TEAM123456","iat":"1796105501"}"#), 1_796_105_501)
    }

    func testWhatIsNoNumericDateIsRefused() {
        for claims in [
            #"{"iss":"TEAM123456","iat":-1.5}"#, #"{"iss":"TEAM123456","iat":"soon"}"#,
            #"{"iss":"TEAM123456","iat":"1.5"}"#, #"{"iss":"TEAM123456","iat":true}"#, #"{"iss":"TEAM123456"}"#,
            #"{"iss":"TEAM123456","iat":1e300}"#,
        ] {
            guard case .failure(let error) = ProviderToken.parse(token(claims: claims)) else { return XCTFail(claims) }
            XCTAssertEqual(error, .missingIssuedAt, claims)
        }
    }
}
