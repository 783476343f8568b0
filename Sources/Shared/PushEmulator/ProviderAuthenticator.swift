import LinkCrypto

/// What a token-based connection has shown of itself: APNs keeps the token rules per
/// connection ("APNs report an error if you use a new token more than once every 20 minutes on
/// the same connection"; "APNs relates a team ID ... to a connection on the first push").
public struct ProviderSession: Sendable, Equatable {
    /// The key of the connection's first token: a token of another key on it is
    /// `UnrelatedKeyIdInToken` ("To use this token, open a new connection").
    public internal(set) var boundKeyId: String?
    /// The token the connection uses now, and since when (its first, or its last change).
    var currentToken: String?
    var since: Int64 = 0
    /// After a change too soon, the connection "will be unusable until enough time has past":
    /// every request is `TooManyProviderTokenUpdates` until then.
    var unusableUntil: Int64?
    /// A request with a valid token was made: APNs lets the connection open more than one
    /// stream from then on.
    public internal(set) var isAuthenticated = false

    public init() {}
}

/// Checks the `authorization` header of APNs requests: the provider token's signature with a
/// known key of the configured team, its age, its key's environment, and, per connection
/// (``ProviderSession``), its key and how often the provider replaces it.
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
    /// The environment a key is restricted to; a key not here works in both (Apple's older
    /// team-scoped keys).
    private(set) var keyEnvironments: [String: APNsEnvironment] = [:]
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

    public func addKey(id: String, _ key: P256PublicKey, environment: APNsEnvironment? = nil) {
        keys[id] = key
        keyEnvironments[id] = environment
        verified.removeAll()
        recentToken = nil
    }

    public func environment(ofKey id: String) -> APNsEnvironment? { keyEnvironments[id] }

    public func removeKey(id: String) -> Bool {
        keyEnvironments[id] = nil
        verified.removeAll()
        recentToken = nil
        return keys.removeValue(forKey: id) != nil
    }

    /// `nil` when the request may go on, else the reason to refuse it.
    /// - Parameters:
    ///   - session: what the request's connection has shown so far; updated.
    ///   - environment: the environment of the endpoint the connection reached.
    ///   - now: the wall clock, in seconds since 1970.
    public func check(
        authorization: String?, session: inout ProviderSession, environment: APNsEnvironment = .development,
        now: Int64
    ) -> APNsReason? {
        guard let authorization else { return check(authorizationBytes: nil, session: &session, environment: environment, now: now) }
        var text = authorization
        return text.withUTF8 { check(authorizationBytes: $0, session: &session, environment: environment, now: now) }
    }

    /// As above, for a request on a connection of its own (tests and tools).
    public func check(authorization: String?, now: Int64) -> APNsReason? {
        var session = ProviderSession()
        return check(authorization: authorization, session: &session, now: now)
    }

    /// As ``check(authorization:session:environment:now:)``, for the header's bytes as received.
    func check(
        authorizationBytes header: UnsafeBufferPointer<UInt8>?, session: inout ProviderSession,
        environment: APNsEnvironment, now: Int64
    ) -> APNsReason? {
        guard let header, !header.isEmpty else { return .missingProviderToken }
        if let recentToken, Bytes.equal(header, recentHeader) {
            return admit(recentToken, session: &session, environment: environment, now: now)
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
        return admit(token, session: &session, environment: environment, now: now)
    }

    /// The checks of a token whose signature is good: its team, its age, its key's environment,
    /// then the connection's rules: one key, and a new token no sooner than the interval after
    /// the last.
    private func admit(
        _ token: ProviderToken, session: inout ProviderSession, environment: APNsEnvironment,
        now: Int64
    ) -> APNsReason? {
        guard !teamId.isEmpty, token.issuer == teamId else { return .invalidProviderToken }
        if token.issuedAt > now + ProviderAuthenticator.tokenLifetimeSeconds { return .invalidProviderToken }
        if now - token.issuedAt > ProviderAuthenticator.tokenLifetimeSeconds { return .expiredProviderToken }
        if let restricted = keyEnvironments[token.keyId], restricted != environment { return .badEnvironmentKeyIdInToken }
        if let bound = session.boundKeyId, bound != token.keyId { return .unrelatedKeyIdInToken }
        if let until = session.unusableUntil {
            if updateIntervalSeconds > 0, now < until { return .tooManyProviderTokenUpdates }
            session.unusableUntil = nil
        }
        if let current = session.currentToken {
            if current != token.text {
                if updateIntervalSeconds > 0, now - session.since < updateIntervalSeconds {
                    session.unusableUntil = session.since + updateIntervalSeconds
                    return .tooManyProviderTokenUpdates
                }
                session.currentToken = token.text
                session.since = now
            }
        } else {
            session.boundKeyId = token.keyId
            session.currentToken = token.text
            session.since = now
        }
        session.isAuthenticated = true
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
