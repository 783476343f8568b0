// swift-format-ignore-file
import PushKit

// Apple's page "Using push notifications to signal changes", its app delegate snippets as
// the page writes them, joined into one class. Only `@UIApplicationMain` is left out: it
// would make this class the test bundle's entry point.

class AppDelegate: UIResponder, UIApplicationDelegate, PKPushRegistryDelegate {
    // ...

    var pushRegistry: PKPushRegistry!

    func application(
        _ application: UIApplication, 
        didFinishLaunchingWithOptions launchOptions: [UIApplicationLaunchOptionsKey: Any]?
    ) -> Bool {
        pushRegistry = PKPushRegistry(queue: nil)
        pushRegistry.delegate = self
        pushRegistry.desiredPushTypes = [.fileProvider]
        return true
    }

    func pushRegistry(
        _ registry: PKPushRegistry, 
        didUpdate credentials: PKPushCredentials, 
        forType type: PKPushType
    ) {
        let deviceToken = credentials.token
        // Send the device token to your server here.
    }
}
