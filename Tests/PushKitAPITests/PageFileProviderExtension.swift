// swift-format-ignore-file
import FileProvider
import PushKit

// Apple's page "Using push notifications to signal changes", its File Provider extension
// snippets as the page writes them, joined into one class.

class FileProviderExtension: NSFileProviderExtension, PKPushRegistryDelegate {
    // ...

    var pushRegistry: PKPushRegistry!

    override init() {
        super.init()
        pushRegistry = PKPushRegistry(queue: nil)
        pushRegistry.delegate = self
        pushRegistry.desiredPushTypes = [.fileProvider]
    }

    func pushRegistry(
        _ registry: PKPushRegistry, 
        didUpdate credentials: PKPushCredentials, 
        forType type: PKPushType
    ) {
        let deviceToken = credentials.token
        // Send the device token to your server here.
    }

    func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {
    }
}
