import PushKit
import FileProvider

/// The app's File Provider pushes, as Apple's page "Using push notifications to signal changes"
/// has them: this file imports PushKit and FileProvider and nothing else.
public final class FileProviderPushes: NSObject, PKPushRegistryDelegate, @unchecked Sendable {
    private let registry: PKPushRegistry
    private let tokens: (Data) -> Void

    /// Registers for `fileProvider` pushes; `tokens` gets each device token.
    public init(queue: DispatchQueue, tokens: @escaping (Data) -> Void) {
        registry = PKPushRegistry(queue: queue)
        self.tokens = tokens
        super.init()
        registry.delegate = self
        registry.desiredPushTypes = [.fileProvider]
    }

    public func pushRegistry(_ registry: PKPushRegistry, didUpdate pushCredentials: PKPushCredentials, for type: PKPushType) {
        tokens(pushCredentials.token)
    }

    public func pushRegistry(
        _ registry: PKPushRegistry, didReceiveIncomingPushWith payload: PKPushPayload, for type: PKPushType,
        completion: @escaping @Sendable () -> Void
    ) {
        guard let container = payload.dictionaryPayload["container-identifier"] as? String else { return completion() }
        NSFileProviderManager.default.signalEnumerator(for: NSFileProviderItemIdentifier(rawValue: container)) { _ in
            completion()
        }
    }
}
