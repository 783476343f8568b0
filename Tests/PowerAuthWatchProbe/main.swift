import PowerAuth2ForWatch
import ProbeSupport

// A watchOS app process for the PowerAuth app-side tests, written only against
// PowerAuth2ForWatch as its guide documents it (the module brings WatchConnectivity and
// Foundation): its WCSessionDelegate hands every message and userInfo to
// PowerAuthWCSessionManager, as the guide's SessionManager does. Commands come on standard
// input (one JSON object a line, run on the main queue); what happened goes to standard output
// (one JSON object a line); completions arrive on the main queue, which dispatchMain() runs.
//
//   --instance ID   the PowerAuthWatchSDK instance (default io.watchlink.example, the phone's)

final class Delegate: NSObject, WCSessionDelegate {
    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {
        emit([
            "cb": "activationDidComplete", "state": activationState.rawValue, "error": describe(error),
            "isReachable": session.isReachable,
        ])
    }

    func session(_ session: WCSession, didReceiveMessageData messageData: Data) {
        emit(["cb": "didReceiveMessageData", "processed": PowerAuthWCSessionManager.sharedInstance.processReceivedMessageData(messageData, replyHandler: nil)])
    }

    func session(_ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void) {
        let processed = PowerAuthWCSessionManager.sharedInstance.processReceivedMessageData(messageData, replyHandler: replyHandler)
        if !processed { replyHandler(Data()) }
        emit(["cb": "didReceiveMessageDataWithReply", "processed": processed])
    }

    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any] = [:]) {
        emit(["cb": "didReceiveUserInfo", "processed": PowerAuthWCSessionManager.sharedInstance.processReceivedUserInfo(userInfo)])
    }
}

let delegate = Delegate()
let configuration = PowerAuthConfiguration(
    instanceId: option("--instance") ?? "io.watchlink.example",
    baseEndpointUrl: "https://localhost:8080/demo-server",
    configuration: "ARDDj6EB6iAUtNm...KKEcBxbnH9bMk8Ju3K1wmjbA==")

/// The watch SDK object, made by the `sdk` command (main queue only).
final class App: @unchecked Sendable {
    var sdk: PowerAuthWatchSDK?
}

let app = App()

@MainActor
func run(_ command: [String: Any]) {
    let name = command["name"] as? String ?? "MyToken"
    switch command["cmd"] as? String ?? "" {
    case "sdk":
        app.sdk = PowerAuthWatchSDK(configuration: configuration)
        emit(["cb": "sdkCreated", "ok": app.sdk != nil])
    case "activate":
        WCSession.default.delegate = delegate
        WCSession.default.activate()
    case "exit":
        exit(0)
    default:
        guard let sdk = app.sdk else { return emit(["cb": "noSDK", "command": command]) }
        switch command["cmd"] as? String ?? "" {
        case "state":
            emit([
                "cb": "state", "hasValidActivation": sdk.hasValidActivation(), "activationIdentifier": sdk.activationIdentifier ?? NSNull(),
                "localTokens": ["MyToken", "Balance"].filter { sdk.tokenStore.hasLocalToken(withName: $0) },
            ])
        case "updateStatus":
            if command["mode"] as? String == "completion" {
                sdk.updateActivationStatus { activationId, error in
                    emit(["cb": "updateStatus", "activationId": activationId ?? NSNull(), "error": describe(error)])
                }
            } else {
                emit(["cb": "updateStatus", "issued": sdk.updateActivationStatus()])
            }
        case "requestToken":
            let synchronous =
                sdk.tokenStore.requestAccessToken(withName: name) { token, error in
                    emit([
                        "cb": "requestToken", "name": token?.tokenName ?? NSNull(), "tokenIdentifier": token?.tokenIdentifier ?? NSNull(),
                        "error": describe(error),
                    ])
                } == nil
            emit(["cb": "requestTokenReturned", "synchronous": synchronous])
        case "header":
            let token = sdk.tokenStore.localToken(withName: name)
            emit([
                "cb": "header", "canGenerateHeader": token?.canGenerateHeader ?? false,
                "value": token?.generateHeader()?.value ?? NSNull(),
            ])
        case "removeLocalToken":
            sdk.tokenStore.removeLocalToken(withName: name)
            emit(["cb": "removedLocally", "local": sdk.tokenStore.hasLocalToken(withName: name)])
        case "removeAccessToken":
            sdk.tokenStore.removeAccessToken(withName: name) { removed, error in
                emit(["cb": "removeAccessToken", "removed": removed, "error": describe(error)])
            }
        default:
            emit(["cb": "unknownCommand", "command": command])
        }
    }
}

emit(["cb": "launched", "pid": Int(ProcessInfo.processInfo.processIdentifier)])
readCommands(run)
dispatchMain()
