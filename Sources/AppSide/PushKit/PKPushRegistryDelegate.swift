import Foundation

/// The object a ``PKPushRegistry`` tells of tokens, pushes and invalidated tokens, on the
/// registry's queue.
///
/// Every method has a default implementation. `pushRegistry(_:didUpdate:for:)` is Apple's
/// required method; `pushRegistry(_:didUpdate:forType:)` is its Swift 3 name, which Apple's
/// File Provider page still shows: implement either. Without the Objective-C runtime a
/// registry cannot ask whether a delegate implements an optional method, so the defaults do
/// what a device does for a missing one: nothing (and call a push's completion handler).
public protocol PKPushRegistryDelegate: NSObjectProtocol {
    /// The device has a token for `type`: send `pushCredentials.token` to your server.
    func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType)
    /// `pushRegistry(_:didUpdate:for:)` under its Swift 3 name, as Apple's File Provider page
    /// writes it; called by the default implementation of that method.
    func pushRegistry(_ registry: PKPushRegistry, didUpdate credentials: PKPushCredentials, forType type: PKPushType)
    /// A push for `type` arrived; call `completion` when done with it. (A delegate may declare
    /// `completion` with or without `@Sendable`, as older and newer SDKs do.)
    func pushRegistry(
        _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
        completion: @escaping @Sendable () -> Void)
    /// A push for `type` arrived (Apple deprecated it in iOS 11 for the method with a
    /// completion handler, whose default implementation calls this one).
    func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType)
    /// The token for `type` is no longer valid (APNs answers it with 410): tell your server.
    func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType)
}

extension PKPushRegistryDelegate {
    /// Calls `pushRegistry(_:didUpdate:forType:)`.
    public func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {
        pushRegistry(registry, didUpdate: pushCredentials, forType: type)
    }

    /// Does nothing.
    public func pushRegistry(_ registry: PKPushRegistry, didUpdate credentials: PKPushCredentials, forType type: PKPushType) {}

    /// Calls `pushRegistry(_:didReceiveIncomingPushWith:for:)`, then `completion`.
    public func pushRegistry(
        _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
        completion: @escaping @Sendable () -> Void
    ) {
        pushRegistry(registry, didReceiveIncomingPushWith: payload, for: type)
        completion()
    }

    /// Does nothing.
    public func pushRegistry(_ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType) {}

    /// Does nothing.
    public func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {}
}
