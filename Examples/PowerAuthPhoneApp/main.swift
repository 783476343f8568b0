import Foundation
import PowerAuth2
import WatchConnectivity

// The iPhone half of the PowerAuth example: written only against PowerAuth2 and
// WatchConnectivity, around the SessionManager of the SDK's guide as written
// (SessionManager.swift). It runs against phoned (WATCHLINK_HOME, WATCHLINK_SIDE=phone).
//
// It follows the guide's startup order: the PowerAuthSDK object first, then the session. Once
// the session is activated it creates an activation with an activation code and persists it,
// then asks the server for the status until an operator commits the activation
// (`linkctl pa.server.activation activationId=… action=commit`). Then it sends the status to
// the watch, gets the token "MyToken" and sends it to the watch, and gets "Balance" (with the
// knowledge factor), which the watch app asks for. It keeps running to answer the watch:
// SessionManager hands the watch's requests to PowerAuthWCSessionManager.

/// One line on standard output, written at once (a test reads it while the app runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The guide's SessionManager, told of the activation (the guide's comment: "now you can use
/// WCSession for communication, send the status of the session to watch, etc...").
final class ExampleSessionManager: SessionManager {
    var onActivated: () -> Void = {}

    override func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {
        super.session(session, activationDidCompleteWith: activationState, error: error)
        if activationState == .activated { DispatchQueue.main.async { self.onActivated() } }
    }
}

final class PhoneApp {
    let powerAuthSDK: PowerAuthSDK
    let sessionManager = ExampleSessionManager()

    init(powerAuthSDK: PowerAuthSDK) {
        self.powerAuthSDK = powerAuthSDK
    }

    func start() {
        sessionManager.onActivated = { [self] in
            say("phone: session activated")
            if powerAuthSDK.hasValidActivation() { waitForCommit() } else { activate() }
        }
        _ = sessionManager.activateSession()
    }

    private func activate() {
        powerAuthSDK.createActivation(withName: "WatchLink example", activationCode: "VVVVV-VVVVV-VVVVV-VTFVA") { [self] result, error in
            guard let result else { return say("phone: createActivation failed: \(error.map { "\($0)" } ?? "")") }
            do {
                try powerAuthSDK.persistActivation(withPassword: "1234")
            } catch {
                return say("phone: persistActivation failed: \(error)")
            }
            say(
                "phone: activation \(powerAuthSDK.activationIdentifier ?? "?") persisted (fingerprint \(result.activationFingerprint)); waiting for the server's commit"
            )
            waitForCommit()
        }
    }

    private func waitForCommit() {
        powerAuthSDK.fetchActivationStatus { [self] status, error in
            guard let status, status.state == .active else {
                DispatchQueue.main.asyncAfter(deadline: .now() + 0.2) { self.waitForCommit() }
                return
            }
            say("phone: activation is active")
            shareWithTheWatch()
        }
    }

    private func shareWithTheWatch() {
        say(powerAuthSDK.sendActivationStatusToWatch() ? "phone: status sent to the watch" : "phone: the session cannot carry the status")
        let tokenStore = powerAuthSDK.tokenStore
        tokenStore.requestAccessToken(withName: "MyToken", authentication: .possession()) { token, error in
            guard let token else { return say("phone: MyToken failed: \(error.map { "\($0)" } ?? "")") }
            say(token.sendToWatch() ? "phone: token MyToken sent to the watch" : "phone: the session cannot carry MyToken")
        }
        tokenStore.requestAccessToken(withName: "Balance", authentication: .possessionWithPassword(password: "1234")) { token, error in
            guard token != nil else { return say("phone: Balance failed: \(error.map { "\($0)" } ?? "")") }
            say("phone: token Balance ready for the watch")
        }
    }
}

// The guide's order: every PowerAuthSDK object before WCSession is activated.
let configuration = PowerAuthConfiguration(
    instanceId: "io.watchlink.example", baseEndpointUrl: "https://localhost:8080/demo-server",
    configuration: "ARDDj6EB6iAUtNm...KKEcBxbnH9bMk8Ju3K1wmjbA==")
guard let powerAuthSDK = PowerAuthSDK(configuration: configuration) else { fatalError("invalid configuration") }
let phoneApp = PhoneApp(powerAuthSDK: powerAuthSDK)
phoneApp.start()
dispatchMain()
