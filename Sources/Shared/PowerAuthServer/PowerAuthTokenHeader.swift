#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkCrypto

/// The `X-PowerAuth-Token` header computed from a token, as `PowerAuthToken.m` writes it and
/// the server's `TokenUtils` checks it.
public enum PowerAuthTokenHeader {
    public static let name = "X-PowerAuth-Token"
    /// The versions the server accepts; the SDK writes 3.3.
    public static let supportedVersions = ["3.0", "3.1", "3.2", "3.3"]
    public static let sdkVersion = "3.3"

    /// base64(HMAC-SHA256(secret, nonce ‖ `&` ‖ timestamp)) for 3.0 and 3.1; for 3.2 and 3.3
    /// the input is nonce ‖ `&` ‖ timestamp ‖ `&` ‖ version. `nonce` is the raw bytes,
    /// `timestamp` the decimal milliseconds in ASCII.
    public static func digest(secret: [UInt8], nonce: [UInt8], timestamp: String, version: String) -> String {
        var message = nonce + Array("&".utf8) + Array(timestamp.utf8)
        if version == "3.2" || version == "3.3" { message += Array("&".utf8) + Array(version.utf8) }
        return Data(HMACSHA256.authenticationCode(key: secret, message: message)).base64EncodedString()
    }

    /// `PowerAuth version="…", token_id="…", token_digest="…", nonce="…", timestamp="…"`.
    public static func value(
        tokenIdentifier: String, secret: [UInt8], nonce: [UInt8], timestampMilliseconds: Int64,
        version: String
    ) -> String {
        let timestamp = String(timestampMilliseconds)
        let digest = digest(secret: secret, nonce: nonce, timestamp: timestamp, version: version)
        let nonceText = Data(nonce).base64EncodedString()
        return
            "PowerAuth version=\"\(version)\", token_id=\"\(tokenIdentifier)\", token_digest=\"\(digest)\", nonce=\"\(nonceText)\", timestamp=\"\(timestamp)\""
    }
}
