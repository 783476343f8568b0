import Foundation
import WatchConnectivity

/// The watchOS half of PowerAuth's watch synchronisation: the watch app's `WCSessionDelegate`
/// hands it every message and userInfo, and it takes the ones that are PowerAuth's. On the
/// watch one service serves every instance, whether or not the app created its
/// `PowerAuthWatchSDK` yet, as the SDK's `PA2WatchSynchronizationService` does.
public final class PowerAuthWCSessionManager: NSObject, @unchecked Sendable {
    /// The process's manager.
    public static let sharedInstance = PowerAuthWCSessionManager()

    package let channel = WatchPacketChannel(device: PowerAuthWatchSDK.device, isPhone: false)

    private override init() {}

    /// The default session while it is activated; nil otherwise.
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
