import Foundation

/// An authorization HTTP header: `X-PowerAuth-Authorization` for a signature,
/// `X-PowerAuth-Token` for a token's.
public final class PowerAuthAuthorizationHttpHeader: NSObject {
    /// The header's name.
    public let key: String
    /// The header's value, to be used in HTTP requests as is.
    public let value: String

    init(key: String, value: String) {
        self.key = key
        self.value = value
    }

    /// A header for a signature (`X-PowerAuth-Authorization`), nil without a value.
    @discardableResult
    public static func authorizationHeader(withValue value: String?) -> PowerAuthAuthorizationHttpHeader? {
        value.map { PowerAuthAuthorizationHttpHeader(key: "X-PowerAuth-Authorization", value: $0) }
    }

    /// A header for a token (`X-PowerAuth-Token`), nil without a value.
    @discardableResult
    public static func tokenHeader(withValue value: String?) -> PowerAuthAuthorizationHttpHeader? {
        value.map { PowerAuthAuthorizationHttpHeader(key: "X-PowerAuth-Token", value: $0) }
    }
}
