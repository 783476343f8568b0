import Foundation
import WatchConnectivity

/// The iOS half of PowerAuth's watch synchronisation: the app's `WCSessionDelegate` hands it
/// every message and userInfo, and it takes the ones that are PowerAuth's.
///
/// Packets are answered for the `PowerAuthSDK` objects that exist in the process when they
/// arrive (each registers itself in its initializer): one for an instance not created yet is
/// lost, as with the SDK; WatchLink shows the loss (`pa.messageDropped`, a trace `fault`).
public final class PowerAuthWCSessionManager: NSObject, @unchecked Sendable {
    /// The process's manager.
    public static let sharedInstance = PowerAuthWCSessionManager()

    package let channel = WatchPacketChannel(device: PowerAuthSDK.device, isPhone: true)

    private override init() {}

    /// The default session while it can carry packets: activated, paired, the watch app
    /// installed; nil otherwise.
    public var validSession: WCSession? { channel.validSession }

    /// Takes `data` when it is PowerAuth's (true), else leaves it to the app (false). Give the
    /// reply handler exactly when the delegate method has one: it is called before this
    /// returns.
    @discardableResult
    public func processReceivedMessageData(_ data: Data, replyHandler: ((Data) -> Void)?) -> Bool {
        channel.processReceivedMessageData(data, replyHandler: replyHandler)
    }

    /// Takes a userInfo that carries a PowerAuth packet (true), else leaves it to the app.
    @discardableResult
    public func processReceivedUserInfo(_ userInfo: [String: Any]) -> Bool {
        channel.processReceivedUserInfo(userInfo)
    }
}
