#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A MAC token of the emulated server (`pa_token`): created for an activation by a signed
/// `/pa/v3/token/create`, validated by `validateToken`, removed by `/pa/v3/token/remove`.
public struct ServerToken: Hashable, Sendable {
    /// 16 random bytes, as the server's `TokenUtils.generateTokenSecret`.
    public static let secretLength = 16

    /// A lowercase UUID, as the server's `UUID.randomUUID().toString()`.
    public var tokenId: String
    public var activationId: String
    public var secret: [UInt8]
    /// The factors of the signature that created it (`signature_type`).
    public var signatureType: SignatureFactor
    /// Server time (Unix ms) of its creation.
    public var created: Int64

    public init(tokenId: String, activationId: String, secret: [UInt8], signatureType: SignatureFactor, created: Int64) {
        self.tokenId = tokenId
        self.activationId = activationId
        self.secret = secret
        self.signatureType = signatureType
        self.created = created
    }
}

/// The fields of an `X-PowerAuth-Token` header value, read as the PowerAuth integration
/// libraries read it (`PowerAuthTokenHttpHeader`) and checked as their validator checks them
/// (`PowerAuthTokenHttpHeaderValidator`), in the same order.
public struct TokenHeaderFields: Hashable, Sendable {
    public var tokenId: String
    public var digest: [UInt8]
    public var nonce: [UInt8]
    public var timestamp: Int64
    public var version: String

    /// Why a header value is refused: the integration's error name and what was wrong.
    public struct Refusal: Error, Hashable, Sendable, CustomStringConvertible {
        public var name: String
        public var message: String
        public var description: String { "\(name): \(message)" }
    }

    /// Reads `PowerAuth version="3.3", token_id="…", token_digest="…", nonce="…", timestamp="…"`
    /// (any order; the value must start with `PowerAuth `).
    public static func parse(_ value: String) throws(Refusal) -> TokenHeaderFields {
        let fields = pairs(value)
        func field(_ key: String, _ what: String) throws(Refusal) -> String {
            guard let text = fields[key], !text.isEmpty else {
                throw Refusal(name: "POWER_AUTH_TOKEN_\(what)_EMPTY", message: "the header has no \(key)")
            }
            return text
        }
        let tokenId = try field("token_id", "ID").lowercased()
        guard isUUID(tokenId) else {
            throw Refusal(name: "POWER_AUTH_TOKEN_ID_INVALID", message: "token_id '\(tokenId)' is not a UUID")
        }
        let digestText = try field("token_digest", "DIGEST")
        guard let digest = Data(base64Encoded: digestText).map(Array.init), digest.count == 32 else {
            throw Refusal(name: "POWER_AUTH_TOKEN_DIGEST_INVALID", message: "token_digest is not the base64 of 32 bytes")
        }
        let nonceText = try field("nonce", "NONCE")
        guard let nonce = Data(base64Encoded: nonceText).map(Array.init), nonce.count == 16 else {
            throw Refusal(name: "POWER_AUTH_TOKEN_NONCE_INVALID", message: "nonce is not the base64 of 16 bytes")
        }
        let timestampText = try field("timestamp", "TIMESTAMP")
        guard (9...15).contains(timestampText.utf8.count), timestampText.utf8.allSatisfy({ (0x30...0x39).contains($0) }),
            let timestamp = Int64(timestampText)
        else {
            throw Refusal(name: "POWER_AUTH_TOKEN_TIMESTAMP_INVALID", message: "timestamp '\(timestampText)' is not 9 to 15 digits")
        }
        let version = try field("version", "VERSION")
        guard PowerAuthTokenHeader.supportedVersions.contains(version) else {
            throw Refusal(
                name: "POWER_AUTH_TOKEN_VERSION_INVALID",
                message: "version '\(version)' is not one of \(PowerAuthTokenHeader.supportedVersions.joined(separator: ", "))")
        }
        return TokenHeaderFields(tokenId: tokenId, digest: digest, nonce: nonce, timestamp: timestamp, version: version)
    }

    /// `key="value"` and `key=value` pairs after the `PowerAuth ` prefix, as the pattern
    /// `(\w+)="*((?<=")[^"]+(?=")|([^\s]+)),*"*` of `PowerAuthHttpHeader` finds them; nothing
    /// without the prefix.
    static func pairs(_ value: String) -> [String: String] {
        var text = Substring(value.trimmingWhitespace())
        guard text.hasPrefix("PowerAuth ") else { return [:] }
        text = text.dropFirst("PowerAuth ".count)
        var result: [String: String] = [:]
        func isWord(_ c: Character) -> Bool { c.isASCII && (c.isLetter || c.isNumber || c == "_") }
        while let start = text.firstIndex(where: isWord) {
            text = text[start...]
            let key = String(text.prefix(while: isWord))
            text = text.dropFirst(key.count)
            guard text.first == "=" else { continue }
            text = text.dropFirst()
            let quoted = text.first == "\""
            while text.first == "\"" { text = text.dropFirst() }
            let content: Substring
            if quoted {
                content = text.prefix { $0 != "\"" }
                guard content.endIndex < text.endIndex else { break }  // no closing quote
            } else {
                content = text.prefix { !$0.isWhitespace }
            }
            text = text[content.endIndex...]
            if !content.isEmpty, result[key] == nil { result[key] = String(content) }
            while let first = text.first, first == "," || first == "\"" { text = text.dropFirst() }
        }
        return result
    }

    private static func isUUID(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            switch index {
            case 8, 13, 18, 23: guard byte == UInt8(ascii: "-") else { return false }
            case 14: guard (UInt8(ascii: "1")...UInt8(ascii: "5")).contains(byte) else { return false }
            case 19: guard [UInt8(ascii: "8"), UInt8(ascii: "9"), UInt8(ascii: "a"), UInt8(ascii: "b")].contains(byte) else { return false }
            default: guard (0x30...0x39).contains(byte) || (0x61...0x66).contains(byte) else { return false }
            }
        }
        return true
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> Substring {
        let start = firstIndex { !$0.isWhitespace } ?? endIndex
        let end = lastIndex { !$0.isWhitespace }.map { index(after: $0) } ?? start
        return self[start..<max(start, end)]
    }
}
