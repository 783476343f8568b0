import LinkControl
import LinkJSON
import LinkCrypto

/// A provider authentication token: a JWT with header `{"alg": "ES256", "kid"}` and claims
/// `{"iss", "iat"}`, as APNs takes it in `authorization: bearer <token>`.
public struct ProviderToken: Sendable, Hashable {
    /// The whole token as sent.
    public let text: String
    /// `kid`: the 10-character id of the signing key.
    public let keyId: String
    /// `iss`: the team id.
    public let issuer: String
    /// `iat`: when the token was made, in seconds since 1970.
    public let issuedAt: Int64
    /// `header.claims`, the bytes the signature covers.
    public let signingInput: [UInt8]
    /// The signature as sent (raw `R‖S` or DER).
    public let signature: [UInt8]

    /// Why a token could not be read.
    public enum ParseError: Error, Equatable, Sendable {
        case notThreeParts, badBase64, headerNotJSON, claimsNotJSON, algorithmNotES256, missingKeyId, missingIssuer, missingIssuedAt
    }

    /// Reads a token; checks its shape, not its signature.
    public static func parse(_ text: String) -> Result<ProviderToken, ParseError> {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[1].isEmpty, !parts[2].isEmpty else { return .failure(.notThreeParts) }
        guard let headerBytes = Base64URL.decode(parts[0]), let claimBytes = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2])
        else { return .failure(.badBase64) }
        guard let header = try? JSON.parse(headerBytes), header.objectValue != nil else { return .failure(.headerNotJSON) }
        guard let claims = try? JSON.parse(claimBytes), claims.objectValue != nil else { return .failure(.claimsNotJSON) }
        guard header["alg"]?.stringValue == "ES256" else { return .failure(.algorithmNotES256) }
        guard let keyId = header["kid"]?.stringValue, !keyId.isEmpty else { return .failure(.missingKeyId) }
        guard let issuer = claims["iss"]?.stringValue, !issuer.isEmpty else { return .failure(.missingIssuer) }
        guard let issuedAt = numericDate(claims["iat"]) else { return .failure(.missingIssuedAt) }
        return .success(
            ProviderToken(
                text: text, keyId: keyId, issuer: issuer, issuedAt: issuedAt,
                signingInput: Array(parts[0].utf8) + [UInt8(ascii: ".")] + Array(parts[1].utf8),
                signature: signature))
    }

    /// `iat` as RFC 7519 NumericDate: seconds since 1970, "possibly with a fraction"; the
    /// whole seconds count. `apns2`, `pyapns-client` and `gobiko.apns` send `time.time()`
    /// (`1796105501.4953103`); some libraries send a string of digits, which APNs takes too.
    static func numericDate(_ value: JSONValue?) -> Int64? {
        guard let value else { return nil }
        if let seconds = value.intValue { return seconds }
        if let seconds = value.doubleValue {
            guard seconds.isFinite, seconds >= 0, seconds < 1e15 else { return nil }
            return Int64(seconds.rounded(.down))
        }
        if let text = value.stringValue, !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
            return Int64(text)
        }
        return nil
    }
}
