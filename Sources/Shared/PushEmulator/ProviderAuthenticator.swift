import LinkCrypto
/// Checks the `authorization` header of APNs requests: the provider token's signature with a
/// known key of the configured team, its age, and how often the provider replaces it.
public final class ProviderAuthenticator {
    /// Tokens older than this are `ExpiredProviderToken` (APNs: one hour).
    public static let tokenLifetimeSeconds: Int64 = 3600
    /// APNs: "refresh your token no more than once every 20 minutes".
    public static let defaultUpdateIntervalSeconds: Int64 = 20 * 60

    /// The team id that `iss` must name.
    public var teamId: String
    /// A provider that switches to a new token sooner than this after the last switch gets
    /// `TooManyProviderTokenUpdates`; 0 turns the rule off.
    public var updateIntervalSeconds: Int64 = ProviderAuthenticator.defaultUpdateIntervalSeconds
    private(set) var keys: [String: P256PublicKey] = [:]

    private struct CurrentToken {
        var text: String
        var since: Int64
    }
    private var current: [String: CurrentToken] = [:]
    /// Tokens read and verified already, by their text: a provider sends the same token for
    /// up to an hour, so each distinct token is parsed and its signature checked once.
    private var verified: [String: ProviderToken] = [:]
    static let verifiedTokenCapacity = 1024
    /// The `authorization` header last seen, as bytes, with its verified token: a provider
    /// sends the same header on every request, which is then known by a comparison of bytes,
    /// without a String or a hash. Keys changing forget it.
    private var recentHeader: [UInt8] = []
    private var recentToken: ProviderToken?

    public init(teamId: String = "") {
        self.teamId = teamId
    }

    public var keyIds: [String] { keys.keys.sorted() }

    public func addKey(id: String, _ key: P256PublicKey) {
        keys[id] = key
        current[id] = nil
        verified.removeAll()
        recentToken = nil
    }

    public func removeKey(id: String) -> Bool {
        current[id] = nil
        verified.removeAll()
        recentToken = nil
        return keys.removeValue(forKey: id) != nil
    }

    /// `nil` when the request may go on, else the reason to refuse it.
    /// - Parameter now: the wall clock, in seconds since 1970.
    public func check(authorization: String?, now: Int64) -> APNsReason? {
        guard let authorization else { return check(authorizationBytes: nil, now: now) }
        var text = authorization
        return text.withUTF8 { check(authorizationBytes: $0, now: now) }
    }

    /// As ``check(authorization:now:)``, for the header's bytes as received.
    func check(authorizationBytes header: UnsafeBufferPointer<UInt8>?, now: Int64) -> APNsReason? {
        guard let header, !header.isEmpty else { return .missingProviderToken }
        if let recentToken, Bytes.equal(header, recentHeader) {
            return admit(recentToken, now: now)
        }
        let authorization = String(decoding: header, as: UTF8.self)
        let scheme = authorization.prefix(7)
        guard scheme.lowercased() == "bearer " else { return .invalidProviderToken }
        let text = String(authorization.dropFirst(7)).trimmingSpaces
        let token: ProviderToken
        if let seen = verified[text], keys[seen.keyId] != nil {
            token = seen
        } else {
            guard case .success(let parsed) = ProviderToken.parse(text) else { return .invalidProviderToken }
            guard let key = keys[parsed.keyId] else { return .invalidProviderToken }
            guard key.verify(signature: parsed.signature, message: parsed.signingInput) else { return .invalidProviderToken }
            if verified.count >= Self.verifiedTokenCapacity { verified.removeAll(keepingCapacity: true) }
            verified[text] = parsed
            token = parsed
        }
        recentHeader = Array(header)
        recentToken = token
        return admit(token, now: now)
    }

    /// The checks of a token whose signature is good: its team, its age, how often it changes.
    private func admit(_ token: ProviderToken, now: Int64) -> APNsReason? {
        guard !teamId.isEmpty, token.issuer == teamId else { return .invalidProviderToken }
        let known = current[token.keyId]
        if token.issuedAt > now + ProviderAuthenticator.tokenLifetimeSeconds { return .invalidProviderToken }
        if now - token.issuedAt > ProviderAuthenticator.tokenLifetimeSeconds { return .expiredProviderToken }
        if let known, known.text != token.text, updateIntervalSeconds > 0, now - known.since < updateIntervalSeconds {
            return .tooManyProviderTokenUpdates
        }
        if known?.text != token.text { current[token.keyId] = CurrentToken(text: token.text, since: now) }
        return nil
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}
