import Foundation
import LinkCrypto
import LinkJSON

/// Provider authentication tokens for APNs, as a provider server makes them: ES256 JWTs
/// (header `{"alg": "ES256", "kid"}`, claims `{"iss", "iat"}`, the signature as JOSE's raw
/// `R‖S`) signed with an APNs key (a `.p8` PEM), each kept and reused until it is
/// ``renewalInterval`` old. APNs refuses a provider that switches tokens more often than every
/// 20 minutes (429 `TooManyProviderTokenUpdates`) and a token over an hour old (403
/// `ExpiredProviderToken`), so the interval lies between.
public final class APNsProviderTokens: @unchecked Sendable {
    /// The 10-character id of the signing key (`kid`).
    public let keyId: String
    /// The team id (`iss`).
    public let teamId: String
    /// How old a token may get before the next one is signed (default 40 minutes).
    public let renewalInterval: TimeInterval

    private let key: P256PrivateKey
    private let lock = NSLock()
    private var current: (text: String, issuedAt: Date)?
    private var signed = 0

    /// Tokens signed with the P-256 key of `privateKeyPEM` (PKCS#8 or SEC1) under `keyId`,
    /// for `teamId`.
    ///
    /// - Throws: ``WatchLinkTestingError`` when the PEM is not a P-256 private key, or the
    ///   interval is not between 20 and 60 minutes.
    public init(privateKeyPEM: String, keyId: String, teamId: String, renewalInterval: TimeInterval = 40 * 60) throws {
        guard (20 * 60...60 * 60).contains(renewalInterval) else {
            throw WatchLinkTestingError("renewalInterval must be 20 to 60 minutes, as APNs asks; got \(renewalInterval) s")
        }
        do {
            key = try P256PrivateKey(pem: privateKeyPEM)
        } catch {
            throw WatchLinkTestingError("the APNs key \(keyId) is not a P-256 private key PEM: \(error)")
        }
        self.keyId = keyId
        self.teamId = teamId
        self.renewalInterval = renewalInterval
    }

    /// The token to send at `now`: the current one, or a new one once it is
    /// ``renewalInterval`` old.
    public func token(at now: Date = Date()) throws -> String {
        lock.lock()
        defer { lock.unlock() }
        if let current, now.timeIntervalSince(current.issuedAt) < renewalInterval { return current.text }
        let text = try Self.sign(key: key, keyId: keyId, teamId: teamId, issuedAt: Int64(now.timeIntervalSince1970))
        current = (text, now)
        signed += 1
        return text
    }

    /// How many tokens have been signed so far.
    public var signedCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return signed
    }

    /// A JWT for `teamId` issued at `issuedAt` (seconds since 1970), signed with `key`.
    static func sign(key: P256PrivateKey, keyId: String, teamId: String, issuedAt: Int64) throws -> String {
        let header = JSON.serialize(["alg": "ES256", "kid": .string(keyId)])
        let claims = JSON.serialize(["iss": .string(teamId), "iat": .int(issuedAt)])
        let signingInput = Base64URL.encode(Array(header.utf8)) + "." + Base64URL.encode(Array(claims.utf8))
        let der = try key.sign(Array(signingInput.utf8))
        guard let raw = ECDSASignature.raw(fromDER: der) else {
            throw WatchLinkTestingError("OpenSSL made a signature that is not DER ECDSA: \(der.count) bytes")
        }
        return signingInput + "." + Base64URL.encode(raw)
    }
}
