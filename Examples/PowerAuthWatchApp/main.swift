import PowerAuth2ForWatch

// The Apple Watch half of the PowerAuth example: written only against PowerAuth2ForWatch,
// around the SessionManager of the SDK's guide as written (SessionManager.swift). It runs
// against watchd (WATCHLINK_HOME, WATCHLINK_SIDE=watch).
//
// Once its session is activated it asks the iPhone for the activation status until the phone
// has an activation, waits for the token the phone sends ("MyToken"), asks the phone for the
// token it keeps ("Balance"), and prints a header of each, which the app's backend would pass
// to the PowerAuth server (`linkctl pa.server.validateToken header=…`). Then it exits.

/// One line on standard output, written at once (a test reads it while the app runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// The guide's SessionManager, told of the activation.
final class ExampleSessionManager: SessionManager {
    var onActivated: () -> Void = {}

    override func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {
        super.session(session, activationDidCompleteWith: activationState, error: error)
        if activationState == .activated { DispatchQueue.main.async { self.onActivated() } }
    }
}

/// The guide's controller set-up, with the phone's instance (the guide's
/// `Bundle.main.bundleIdentifier!` names the iOS app's bundle on a device).
final class BalanceController: WKInterfaceController {
    private lazy var powerAuthWatch: PowerAuthWatchSDK = {
        let config = PowerAuthConfiguration(
            instanceId: "io.watchlink.example",
            baseEndpointUrl: "https://localhost:8080/demo-server",
            configuration: "ARDDj6EB6iAUtNm...KKEcBxbnH9bMk8Ju3K1wmjbA==")
        return PowerAuthWatchSDK(configuration: config)!
    }()

    override func awake(withContext context: Any?) {
        super.awake(withContext: context)
        _ = powerAuthWatch  // the SDK object before the session
    }

    func sessionActivated() {
        say("watch: session activated")
        askForStatus()
    }

    private func askForStatus() {
        powerAuthWatch.updateActivationStatus { [self] activationId, error in
            guard let activationId else {
                if let error { say("watch: status not known yet: \(error.localizedDescription)") }
                DispatchQueue.main.asyncAfter(deadline: .now() + 0.2) { self.askForStatus() }
                return
            }
            say("watch: the iPhone has activation \(activationId)")
            waitForMyToken()
        }
    }

    /// "MyToken" is the one the phone sends; it becomes local when it arrives.
    private func waitForMyToken() {
        guard let token = powerAuthWatch.tokenStore.localToken(withName: "MyToken") else {
            DispatchQueue.main.asyncAfter(deadline: .now() + 0.2) { self.waitForMyToken() }
            return
        }
        printHeader(of: token)
        requestBalance()
    }

    /// "Balance" stays on the phone until the watch asks for it.
    private func requestBalance() {
        powerAuthWatch.tokenStore.requestAccessToken(withName: "Balance") { [self] token, error in
            guard let token else {
                say("watch: Balance not on the iPhone yet: \(error?.localizedDescription ?? "")")
                DispatchQueue.main.asyncAfter(deadline: .now() + 0.2) { self.requestBalance() }
                return
            }
            printHeader(of: token)
            exit(0)
        }
    }

    private func printHeader(of token: PowerAuthToken) {
        if let header = token.generateHeader() {
            say("watch: \(token.tokenName) \(header.key): \(header.value)")
        } else {
            say("watch: \(token.tokenName) makes no header")
        }
    }
}

let controller = BalanceController()
controller.awake(withContext: nil)
let sessionManager = ExampleSessionManager()
sessionManager.onActivated = { controller.sessionActivated() }
sessionManager.activateSession()
dispatchMain()
