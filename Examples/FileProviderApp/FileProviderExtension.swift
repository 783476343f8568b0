import FileProvider
import PushKit

/// The File Provider extension, registering for pushes in its `init()` as Apple's page shows.
final class FileProviderExtension: NSFileProviderExtension, PKPushRegistryDelegate {
    var pushRegistry: PKPushRegistry!
    /// When set, fetching changes fails as if the domain's server could not be reached.
    var serverIsUnreachable = false

    override init() {
        super.init()
        pushRegistry = PKPushRegistry(queue: nil)
        pushRegistry.delegate = self
        pushRegistry.desiredPushTypes = [.fileProvider]
    }

    var name: String { domain?.identifier.rawValue ?? "(default)" }

    func pushRegistry(_ registry: PKPushRegistry, didUpdate credentials: PKPushCredentials, forType type: PKPushType) {
        say("extension \(name): token \(credentials.token.map { String(format: "%02x", $0) }.joined())")
    }

    func pushRegistry(
        _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
        completion: @escaping () -> Void
    ) {
        say("extension \(name): push \(describe(payload))")
        completion()
    }

    func pushRegistry(_ registry: PKPushRegistry, didInvalidatePushTokenFor type: PKPushType) {
        say("extension \(name): invalidated \(type.rawValue)")
    }
}

/// What the emulated system calls when an enumerator of the extension's domain is signalled:
/// on a device it would enumerate the container's changes; here the extension "fetches" them
/// and reports how that went.
extension FileProviderExtension: WatchLinkSignalReceiver {
    func didSignalEnumerator(
        for containerItemIdentifier: NSFileProviderItemIdentifier, in domain: NSFileProviderDomainIdentifier?,
        completionHandler: @escaping @Sendable ((any Error)?) -> Void
    ) {
        say("extension \(name): signalled \(containerItemIdentifier.rawValue)")
        completionHandler(serverIsUnreachable ? NSFileProviderError(.serverUnreachable) : nil)
    }
}
