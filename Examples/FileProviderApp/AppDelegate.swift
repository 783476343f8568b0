import PushKit

/// The app's delegate, registering for File Provider pushes as Apple's page "Using push
/// notifications to signal changes" shows (there in `application(_:didFinishLaunchingWithOptions:)`
/// of a `UIResponder`; here the process's launch calls it).
final class AppDelegate: NSObject, PKPushRegistryDelegate {
    var pushRegistry: PKPushRegistry!
    /// Where this app's "server" takes device tokens: a directory it reads `device-token` from.
    let serverInbox: String?

    init(serverInbox: String?) {
        self.serverInbox = serverInbox
        super.init()
    }

    func applicationDidFinishLaunching() {
        pushRegistry = PKPushRegistry(queue: nil)
        pushRegistry.delegate = self
        pushRegistry.desiredPushTypes = [.fileProvider]
    }

    func pushRegistry(_ registry: PKPushRegistry, didUpdate credentials: PKPushCredentials, forType type: PKPushType) {
        let deviceToken = credentials.token
        // Send the device token to your server here.
        let hex = deviceToken.map { String(format: "%02x", $0) }.joined()
        say("app: token \(hex)")
        guard let serverInbox else { return }
        do {
            try Data(hex.utf8).write(to: URL(fileURLWithPath: serverInbox).appendingPathComponent("device-token"), options: .atomic)
        } catch {
            say("app: cannot send the token to the server: \(error)")
        }
    }

    func pushRegistry(
        _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
        completion: @escaping () -> Void
    ) {
        say("app: push \(describe(payload))")
        completion()
    }

    func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {
        say("app: invalidated \(type.rawValue)")
    }
}

/// `<container-identifier> <domain>` of a File Provider push's payload.
func describe(_ payload: PKPushPayload) -> String {
    let container = payload.dictionaryPayload["container-identifier"] as? String ?? "?"
    let domain = payload.dictionaryPayload["domain"] as? String ?? "(default)"
    return "\(container) \(domain)"
}

/// One line on standard output, written at once (a test reads it while the app runs).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
