import PowerAuth2ForWatch

/// An app's PowerAuth code on the watch, importing only PowerAuth2ForWatch: its controller, the
/// session's delegate and a header from the phone's token.
public final class WatchAuth: WKInterfaceController, WCSessionDelegate {
    private lazy var powerAuthWatch: PowerAuthWatchSDK? = {
        PowerAuthWatchSDK(
            configuration: PowerAuthConfiguration(
                instanceId: "com.example.app", baseEndpointUrl: "https://localhost:8080/demo-server",
                configuration: "ARDDj6EB6iAUtNm...KKEcBxbnH9bMk8Ju3K1wmjbA=="))
    }()

    public func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {
        if activationState == .activated { powerAuthWatch?.updateActivationStatus() }
    }

    public func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any] = [:]) {
        PowerAuthWCSessionManager.sharedInstance.processReceivedUserInfo(userInfo)
    }

    public func header(_ done: @escaping (String?) -> Void) {
        powerAuthWatch?.tokenStore.requestAccessToken(withName: "MyToken") { token, _ in
            done(token?.generateHeader()?.value)
        }
    }
}
