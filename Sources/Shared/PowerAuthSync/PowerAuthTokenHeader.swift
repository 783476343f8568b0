#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import WireProtocol

/// The `X-PowerAuth-Token` header computed from a token.
public enum PowerAuthTokenHeader {
    public static let name = "X-PowerAuth-Token"
    public static let supportedVersions: Set<String> = ["3.1", "3.2", "3.3"]

    /// base64(HMAC-SHA256(secret, nonce ‖ "&" ‖ timestamp)), and for 3.3 `‖ "&" ‖ version` too;
    /// `nonce` is the raw bytes, `timestamp` the decimal milliseconds as ASCII.
    public static func digest(secret: [UInt8], nonce: [UInt8], timestamp: String, version: String) -> String {
        var message = nonce + Array("&".utf8) + Array(timestamp.utf8)
        if version == "3.3" { message += Array("&".utf8) + Array(version.utf8) }
        return Data(HMACSHA256.authenticationCode(key: secret, message: message)).base64EncodedString()
    }

    /// `PowerAuth token_id="…", token_digest="…", nonce="…", timestamp="…", version="…"`.
    public static func value(tokenIdentifier: String, secret: [UInt8], nonce: [UInt8], timestampMilliseconds: Int64,
                             version: String) -> String {
        let timestamp = String(timestampMilliseconds)
        let digest = digest(secret: secret, nonce: nonce, timestamp: timestamp, version: version)
        let nonceText = Data(nonce).base64EncodedString()
        return "PowerAuth token_id=\"\(tokenIdentifier)\", token_digest=\"\(digest)\", nonce=\"\(nonceText)\", timestamp=\"\(timestamp)\", version=\"\(version)\""
    }
}
