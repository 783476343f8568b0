import Foundation
import LinkJSON

/// A MAC token, which makes `X-PowerAuth-Token` headers. Get one from a ``PowerAuthTokenStore``.
///
/// Its secret stays with the device (the daemon): a header is made there, stamped with the
/// instance's synchronised time.
public final class PowerAuthToken: NSObject, NSCopying, @unchecked Sendable {
    /// The token's symbolic name (`"MyToken"`).
    public let tokenName: String
    /// The token's identifier on the PowerAuth server.
    public let tokenIdentifier: String
    /// The store it came from.
    public private(set) weak var tokenStore: (any PowerAuthTokenStore)?
    /// Whether it holds token data: always, for a token a store handed out.
    public let isValid: Bool
    package let instanceId: String

    package init(name: String, identifier: String, instanceId: String, store: (any PowerAuthTokenStore)?) {
        tokenName = name
        tokenIdentifier = identifier
        self.instanceId = instanceId
        tokenStore = store
        isValid = true
    }

    /// Whether it can make a header: it is valid and its store can still request tokens (the
    /// activation is there).
    public var canGenerateHeader: Bool { isValid && (tokenStore?.canRequestForAccessToken() ?? false) }

    /// A new header, or nil when none can be made (the token is gone, or no longer belongs to
    /// the activation).
    @discardableResult
    public func generateHeader() -> PowerAuthAuthorizationHttpHeader? {
        guard isValid, let store = tokenStore as? DeviceTokenStore else { return nil }
        return store.header(for: self)
    }

    /// Whether both are the same token of the same instance.
    @discardableResult
    public func isEqual(to token: PowerAuthToken) -> Bool {
        tokenName == token.tokenName && tokenIdentifier == token.tokenIdentifier && instanceId == token.instanceId
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? PowerAuthToken else { return false }
        return isEqual(to: other)
    }

    public override var hash: Int { tokenIdentifier.hashValue }

    @discardableResult
    public func copy(with zone: NSZone? = nil) -> Any {
        PowerAuthToken(name: tokenName, identifier: tokenIdentifier, instanceId: instanceId, store: tokenStore)
    }

    public override var description: String { "<PowerAuthToken \(tokenName): \(tokenIdentifier)>" }
}

/// The SDK's token store: tokens by name, kept on the device.
public protocol PowerAuthTokenStore: AnyObject {
    /// Whether tokens can be requested: the SDK object has a valid activation.
    @discardableResult
    func canRequestForAccessToken() -> Bool

    /// The token named `name`: the local one when there is one (the completion runs before this
    /// returns, and it returns nil), else one acquired (on iOS from the server, with the
    /// factors of `authentication`; on watchOS from the iPhone app), with a task that can be
    /// cancelled.
    @discardableResult
    func requestAccessToken(
        withName name: String, authentication: PowerAuthAuthentication,
        completion: @escaping (PowerAuthToken?, Error?) -> Void
    ) -> PowerAuthOperationTask?

    /// The same without an authentication: on watchOS the token comes from the iPhone app; on
    /// iOS this is always a wrong-parameter error.
    @discardableResult
    func requestAccessToken(withName name: String, completion: @escaping (PowerAuthToken?, Error?) -> Void) -> PowerAuthOperationTask?

    /// Removes the token from the server, then locally (the local one stays when the request
    /// fails). On watchOS always an invalid-token error.
    @discardableResult
    func removeAccessToken(withName name: String, completion: @escaping (Bool, Error?) -> Void) -> PowerAuthOperationTask?

    /// Removes the token locally only.
    func removeLocalToken(withName name: String)

    /// Removes every local token.
    func removeAllLocalTokens()

    /// Whether there is a local token named `name`.
    @discardableResult
    func hasLocalToken(withName name: String) -> Bool

    /// The local token named `name`, or nil.
    @discardableResult
    func localToken(withName name: String) -> PowerAuthToken?
}
