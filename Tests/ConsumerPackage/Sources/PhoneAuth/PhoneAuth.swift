import PowerAuth2
import WatchConnectivity

/// An app's PowerAuth code on the iPhone: its SDK object, made before the session is
/// activated, and what it tells the watch.
public final class PhoneAuth: NSObject, WCSessionDelegate {
    public let powerAuthSDK: PowerAuthSDK

    public init?(instanceId: String) {
        let configuration = PowerAuthConfiguration(
            instanceId: instanceId, baseEndpointUrl: "https://localhost:8080/demo-server",
            configuration: "ARDDj6EB6iAUtNm...KKEcBxbnH9bMk8Ju3K1wmjbA==")
        guard let sdk = PowerAuthSDK(configuration: configuration) else { return nil }
        powerAuthSDK = sdk
    }

    public func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {
        if activationState == .activated { powerAuthSDK.sendActivationStatusToWatch() }
    }

    public func sessionDidBecomeInactive(_ session: WCSession) {}
    public func sessionDidDeactivate(_ session: WCSession) {}

    public func session(_ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void) {
        if !PowerAuthWCSessionManager.sharedInstance.processReceivedMessageData(messageData, replyHandler: replyHandler) {
            replyHandler(Data())
        }
    }

    /// The status as the guide's switch reads it.
    public func refresh(_ done: @escaping (String) -> Void) {
        powerAuthSDK.fetchActivationStatus { status, error in
            switch status?.state {
            case .active?: done("active")
            case .blocked?: done("blocked")
            default: done(error.map { "error \(($0 as NSError).powerAuthErrorCode.rawValue)" } ?? "other")
            }
        }
    }
}
