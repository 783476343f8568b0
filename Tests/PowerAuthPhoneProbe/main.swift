import Foundation
import PowerAuth2
import ProbeSupport

// An iOS app process for the PowerAuth app-side tests, written only against PowerAuth2 and
// WatchConnectivity as their guides document them: its WCSessionDelegate hands every message
// and userInfo to PowerAuthWCSessionManager, as the guide's SessionManager does. It reads
// commands from standard input (one JSON object a line, run on the main queue) and writes what
// happened to standard output (one JSON object a line); completions arrive on the main queue,
// which dispatchMain() runs.
//
//   --instance ID            the PowerAuthSDK instance (default io.watchlink.example)
//   --no-forward             a delegate that hands nothing to PowerAuth: it answers every
//                            message with empty data, as the guide's fallback branch does
//
// Launched by phoned (app.install), with no commands:
//   --startup sdkFirst       creates its PowerAuthSDK, then activates WCSession (the guide's order)
//   --startup activateFirst  activates WCSession, and creates the PowerAuthSDK only after the
//                            first PowerAuth packet reached its delegate (the order the guide warns of)

let instanceId = option("--instance") ?? "io.watchlink.example"
let forwards = !CommandLine.arguments.contains("--no-forward")

/// The app's state, touched on the main queue and, for the SDK's creation after a packet, on
/// the delegate's queue.
final class App: @unchecked Sendable {
    private let lock = NSLock()
    private var object: PowerAuthSDK?
    var createsSDKAfterPacket = false

    var sdk: PowerAuthSDK? { lock.withLock { object } }

    func makeSDK() {
        let configuration = PowerAuthConfiguration(
            instanceId: instanceId, baseEndpointUrl: "https://localhost:8080/demo-server",
            configuration: "ARDDj6EB6iAUtNm...KKEcBxbnH9bMk8Ju3K1wmjbA==")
        let made = PowerAuthSDK(configuration: configuration)
        lock.withLock { object = made }
        emit(["cb": "sdkCreated", "instanceId": instanceId, "ok": made != nil])
    }

    func packetArrived() {
        guard createsSDKAfterPacket else { return }
        createsSDKAfterPacket = false
        makeSDK()
    }
}

let app = App()

final class Delegate: NSObject, WCSessionDelegate {
    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {
        emit(["cb": "activationDidComplete", "state": activationState.rawValue, "error": describe(error)])
    }
    func sessionDidBecomeInactive(_ session: WCSession) {}
    func sessionDidDeactivate(_ session: WCSession) {}

    func session(_ session: WCSession, didReceiveMessageData messageData: Data) {
        let processed = forwards && PowerAuthWCSessionManager.sharedInstance.processReceivedMessageData(messageData, replyHandler: nil)
        emit(["cb": "didReceiveMessageData", "processed": processed])
        app.packetArrived()
    }

    func session(_ session: WCSession, didReceiveMessageData messageData: Data, replyHandler: @escaping (Data) -> Void) {
        let processed = forwards && PowerAuthWCSessionManager.sharedInstance.processReceivedMessageData(messageData, replyHandler: replyHandler)
        if !processed { replyHandler(Data()) }
        emit(["cb": "didReceiveMessageDataWithReply", "processed": processed])
        app.packetArrived()
    }

    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any] = [:]) {
        let processed = forwards && PowerAuthWCSessionManager.sharedInstance.processReceivedUserInfo(userInfo)
        emit(["cb": "didReceiveUserInfo", "processed": processed])
        app.packetArrived()
    }
}

let delegate = Delegate()

@MainActor
func activateSession() {
    WCSession.default.delegate = delegate
    WCSession.default.activate()
}

/// The guide's activation status code, each branch a line (and `removeActivationLocal()` where
/// the guide calls it).
@MainActor
func fetchStatus(_ sdk: PowerAuthSDK) {
    guard sdk.hasValidActivation() else {
        emit(["cb": "status", "branch": "noActivation"])
        return
    }
    sdk.fetchActivationStatus { status, error in
        guard let status else {
            emit(["cb": "status", "branch": "error", "error": describe(error)])
            return
        }
        var line: [String: Any] = [
            "cb": "status", "failCount": status.failCount, "maxFailCount": status.maxFailCount,
            "remainingAttempts": status.remainingAttempts,
            "isProtocolUpgradeAvailable": status.isProtocolUpgradeAvailable,
        ]
        switch status.state {
        case .pendingCommit:
            line["branch"] = "pendingCommit"
        case .active:
            line["branch"] = "active"
        case .blocked:
            line["branch"] = "blocked"
        case .removed:
            line["branch"] = "removed"
            sdk.removeActivationLocal()
        case .deadlock:
            line["branch"] = "deadlock"
            sdk.removeActivationLocal()
        default:
            line["branch"] = "unknown"
        }
        if let customObject = status.customObject { line["customObject"] = customObject }
        if let unblockTime = status.blockExpirationTime {
            line["remainingBlockTime"] = unblockTime.timeIntervalSince1970 - sdk.timeSynchronizationService.currentTime()
        }
        line["hasValidActivationAfter"] = sdk.hasValidActivation()
        emit(line)
    }
}

func authentication(_ name: String?) -> PowerAuthAuthentication {
    switch name {
    case "possession_knowledge": return .possessionWithPassword(password: "1234")
    case "possession_biometry": return .possessionWithBiometry()
    default: return .possession()
    }
}

@MainActor
func run(_ command: [String: Any]) {
    let name = command["name"] as? String ?? "MyToken"
    let completion = command["mode"] as? String == "completion"
    guard
        command["cmd"] as? String == "sdk" || command["cmd"] as? String == "activate" || command["cmd"] as? String == "exit"
            || app.sdk != nil
    else {
        emit(["cb": "noSDK", "command": command])
        return
    }
    switch command["cmd"] as? String ?? "" {
    case "sdk":
        app.makeSDK()
    case "activate":
        activateSession()
    case "state":
        let sdk = app.sdk!
        emit([
            "cb": "state", "hasValidActivation": sdk.hasValidActivation(), "hasPendingActivation": sdk.hasPendingActivation(),
            "canStartActivation": sdk.canStartActivation(), "activationIdentifier": sdk.activationIdentifier ?? NSNull(),
            "activationFingerprint": sdk.activationFingerprint ?? NSNull(),
        ])
    case "createActivation":
        // The guide's "Activation via Activation Code", its guard leaving with a line.
        let deviceName = "Petr's iPhone 7"
        let activationCode = command["code"] as? String ?? "VVVVV-VVVVV-VVVVV-VTFVA"
        guard let activation = try? PowerAuthActivation(activationCode: activationCode, name: deviceName) else {
            emit(["cb": "createActivation", "fingerprint": NSNull(), "error": ["code": -1, "message": "Activation code is invalid"]])
            return
        }
        app.sdk!.createActivation(activation) { (result, error) in
            emit(["cb": "createActivation", "fingerprint": result?.activationFingerprint ?? NSNull(), "error": describe(error)])
        }
    case "persist":
        do {
            try app.sdk!.persistActivation(withPassword: "1234")
            emit(["cb": "persist", "error": NSNull()])
        } catch {
            emit(["cb": "persist", "error": describe(error)])
        }
    case "sendStatus":
        if completion {
            app.sdk!.sendActivationStatusToWatch { error in emit(["cb": "sendStatus", "error": describe(error)]) }
        } else {
            emit(["cb": "sendStatus", "issued": app.sdk!.sendActivationStatusToWatch()])
        }
    case "requestToken":
        let synchronous =
            app.sdk!.tokenStore.requestAccessToken(withName: name, authentication: authentication(command["factors"] as? String)) { token, error in
                emit([
                    "cb": "requestToken", "name": token?.tokenName ?? NSNull(), "tokenIdentifier": token?.tokenIdentifier ?? NSNull(),
                    "error": describe(error),
                ])
            } == nil
        emit(["cb": "requestTokenReturned", "synchronous": synchronous])
    case "sendToken", "removeTokenFromWatch":
        guard let token = app.sdk!.tokenStore.localToken(withName: name) else {
            emit(["cb": command["cmd"] as! String, "error": "no local token"])
            return
        }
        let cmd = command["cmd"] as! String
        if completion {
            let done: (Error?) -> Void = { error in emit(["cb": cmd, "error": describe(error)]) }
            if cmd == "sendToken" { token.sendToWatch(completion: done) } else { token.removeFromWatch(completion: done) }
        } else {
            emit(["cb": cmd, "issued": cmd == "sendToken" ? token.sendToWatch() : token.removeFromWatch()])
        }
    case "removeTokenFromServer":
        app.sdk!.tokenStore.removeAccessToken(withName: name) { removed, error in
            emit(["cb": "removeTokenFromServer", "removed": removed, "error": describe(error)])
        }
    case "header":
        emit(["cb": "header", "value": app.sdk!.tokenStore.localToken(withName: name)?.generateHeader()?.value ?? NSNull()])
    case "fetchStatus":
        fetchStatus(app.sdk!)
    case "session":
        let session = WCSession.default
        emit([
            "cb": "session", "isPaired": session.isPaired, "isWatchAppInstalled": session.isWatchAppInstalled,
            "isReachable": session.isReachable, "hasValidSession": PowerAuthWCSessionManager.sharedInstance.validSession != nil,
        ])
    case "removeActivation":
        // The guide's "Removal via Signed Request", with the factors the command names.
        let auth = authentication(command["factors"] as? String ?? "possession_knowledge")
        app.sdk!.removeActivation(with: auth) { (error) in
            emit([
                "cb": "removeActivation", "error": describe(error), "hasValidActivationAfter": app.sdk!.hasValidActivation(),
                "tokens": app.sdk!.tokenStore.hasLocalToken(withName: name),
            ])
        }
    case "removeActivationLocal":
        app.sdk!.removeActivationLocal()
        emit([
            "cb": "removedLocally", "hasValidActivation": app.sdk!.hasValidActivation(),
            "tokens": app.sdk!.tokenStore.hasLocalToken(withName: name),
        ])
    case "exit":
        exit(0)
    default:
        emit(["cb": "unknownCommand", "command": command])
    }
}

emit([
    "cb": "launched", "pid": Int(ProcessInfo.processInfo.processIdentifier),
    "reason": ProcessInfo.processInfo.environment["WATCHLINK_LAUNCH_REASON"] ?? NSNull(),
])
switch option("--startup") {
case "sdkFirst":
    app.makeSDK()
    activateSession()
case "activateFirst":
    app.createsSDKAfterPacket = true
    activateSession()
default:
    break
}
readCommands(run)
dispatchMain()
