import Foundation

/// The object that receives a ``WCSession``'s news: activation, reachability, messages,
/// transfers. Every method is called on the session's background serial queue.
///
/// Every method has a default implementation, so a delegate written for iOS or for watchOS
/// compiles as it is. A delegate without `session(_:didReceiveMessage:replyHandler:)` (or its
/// Data form) declines messages that want a reply: their sender gets
/// ``WCError/Code/deliveryFailed``, as on a device.
public protocol WCSessionDelegate: NSObjectProtocol {
    /// Activation finished: `activationState` is the session's state now; `error` says why it
    /// failed.
    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?)
    /// The session became inactive: the phone is switching to another watch (iOS).
    func sessionDidBecomeInactive(_ session: WCSession)
    /// The session is deactivated after a watch switch: call ``WCSession/activate()`` again (iOS).
    func sessionDidDeactivate(_ session: WCSession)
    /// ``WCSession/isPaired``, ``WCSession/isWatchAppInstalled``,
    /// ``WCSession/isComplicationEnabled`` or ``WCSession/watchDirectoryURL`` changed (iOS).
    func sessionWatchStateDidChange(_ session: WCSession)
    /// ``WCSession/isCompanionAppInstalled`` changed (watchOS).
    func sessionCompanionAppInstalledDidChange(_ session: WCSession)
    /// ``WCSession/isReachable`` changed.
    func sessionReachabilityDidChange(_ session: WCSession)
    /// A message whose sender wants no reply.
    func session(_ session: WCSession, didReceiveMessage message: [String: Any])
    /// A message whose sender waits for a reply: call `replyHandler` once.
    func session(_ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void)
    /// A data message whose sender wants no reply.
    func session(_ session: WCSession, didReceiveMessageData messageData: Data)
    /// A data message whose sender waits for a reply: call `replyHandler` once.
    func session(_ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void)
    /// The counterpart's newest application context.
    func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any])
    /// A userInfo dictionary the counterpart transferred.
    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any])
    /// A userInfo transfer of this app finished: delivered, or failed with `error`.
    func session(_ session: WCSession, didFinish userInfoTransfer: WCSessionUserInfoTransfer, error: (any Error)?)
    /// A file the counterpart transferred. Move it out of its location before returning to
    /// keep it: it is removed when this method returns.
    func session(_ session: WCSession, didReceive file: WCSessionFile)
    /// A file transfer of this app finished: delivered, or failed with `error`.
    func session(_ session: WCSession, didFinish fileTransfer: WCSessionFileTransfer, error: (any Error)?)
}

/// What a delegate that lacks a method gets: nothing happens, except that a message wanting
/// a reply is declined (its sender gets 7014 `deliveryFailed`).
extension WCSessionDelegate {
    /// Does nothing.
    public func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: (any Error)?) {}
    /// Does nothing.
    public func sessionDidBecomeInactive(_ session: WCSession) {}
    /// Does nothing.
    public func sessionDidDeactivate(_ session: WCSession) {}
    /// Does nothing.
    public func sessionWatchStateDidChange(_ session: WCSession) {}
    /// Does nothing.
    public func sessionCompanionAppInstalledDidChange(_ session: WCSession) {}
    /// Does nothing.
    public func sessionReachabilityDidChange(_ session: WCSession) {}

    /// Drops the message: the delegate has no method for it.
    public func session(_ session: WCSession, didReceiveMessage message: [String: Any]) {
        session.delegateLacksMethod()
    }

    /// Declines the message: the delegate has no reply handler for it.
    public func session(_ session: WCSession, didReceiveMessage message: [String: Any], replyHandler: @escaping ([String: Any]) -> Void) {
        session.delegateLacksMethod()
    }

    /// Drops the message: the delegate has no method for it.
    public func session(_ session: WCSession, didReceiveMessageData messageData: Data) {
        session.delegateLacksMethod()
    }

    /// Declines the message: the delegate has no reply handler for it.
    public func session(_ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void) {
        session.delegateLacksMethod()
    }

    /// Does nothing.
    public func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {}
    /// Does nothing.
    public func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any]) {}
    /// Does nothing.
    public func session(_ session: WCSession, didFinish userInfoTransfer: WCSessionUserInfoTransfer, error: (any Error)?) {}
    /// Does nothing.
    public func session(_ session: WCSession, didReceive file: WCSessionFile) {}
    /// Does nothing.
    public func session(_ session: WCSession, didFinish fileTransfer: WCSessionFileTransfer, error: (any Error)?) {}
}
