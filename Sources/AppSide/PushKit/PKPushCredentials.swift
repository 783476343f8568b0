import Foundation

/// The device token for one push type, as PushKit hands it to
/// `pushRegistry(_:didUpdate:for:)`: send ``token`` to your server, which puts it in the
/// path of its APNs requests (`/3/device/<token in hex>`).
open class PKPushCredentials: NSObject, @unchecked Sendable {
    /// The push type the token serves.
    open private(set) var type: PKPushType
    /// The device token: phoned's 32 random bytes.
    open private(set) var token: Data

    init(type: PKPushType, token: Data) {
        self.type = type
        self.token = token
        super.init()
    }

    /// `<PKPushCredentials type token-hex>`.
    open override var description: String {
        "<PKPushCredentials \(type.rawValue) \(token.map { String(format: "%02x", $0) }.joined())>"
    }
}
