import Dispatch
import Foundation
import LinkJSON

/// The PowerAuth SDK object of one instance on the watch: whether the iPhone app's instance
/// has an activation, and the tokens the iPhone app handed over, kept by the watch (watchd)
/// beyond the app's process.
///
/// Its `instanceId` must be the iOS app's instance (by default the iOS app's bundle
/// identifier), or the two never meet. The watch SDK offers no shared instance: keep the object
/// yourself.
open class PowerAuthWatchSDK: NSObject, PowerAuthSessionStatusProvider, @unchecked Sendable {
    /// The device's PowerAuth state of this process (watchd's `pa.*` ops).
    package static let device = PowerAuthDevice(framework: "PowerAuth2ForWatch")

    private let instanceConfiguration: PowerAuthConfiguration
    private let device = PowerAuthWatchSDK.device

    /// The token store, whose tokens come from the iPhone app.
    public let tokenStore: any PowerAuthTokenStore

    /// An SDK object; nil when the configuration lacks a value.
    public init?(configuration: PowerAuthConfiguration) {
        guard configuration.validate(), let copy = configuration.copy() as? PowerAuthConfiguration else { return nil }
        instanceConfiguration = copy
        let store = DeviceTokenStore(
            side: .watch, instanceId: copy.instanceId, device: PowerAuthWatchSDK.device,
            channel: PowerAuthWCSessionManager.sharedInstance.channel)
        tokenStore = store
        super.init()
        store.statusProvider = self
        device.register(copy.instanceId)
    }

    deinit {
        device.release(instanceConfiguration.instanceId)
    }

    /// A copy of the configuration the object was made with.
    public var configuration: PowerAuthConfiguration {
        instanceConfiguration.copy() as? PowerAuthConfiguration ?? instanceConfiguration
    }

    private var instanceId: String { instanceConfiguration.instanceId }

    /// The activation the watch knows of for this instance, from the last status the iPhone
    /// app sent.
    public var activationIdentifier: String? {
        device.fact("pa.activation.get", ["instanceId": .string(instanceId)], fallback: nil) { $0["activationIdentifier"]?.stringValue }
    }

    /// Whether the iPhone app's instance had an activation when it last said so.
    @discardableResult
    public func hasValidActivation() -> Bool { activationIdentifier != nil }

    /// Never: activations are created on the iPhone.
    @discardableResult
    public func canStartActivation() -> Bool { false }

    @discardableResult
    public func hasPendingActivation() -> Bool { false }

    @discardableResult
    public func hasProtocolUpgradeAvailable() -> Bool { false }

    @discardableResult
    public func hasPendingProtocolUpgrade() -> Bool { false }

    // MARK: Status synchronization

    /// Asks the iPhone app for the instance's status, lazily: a message while the iPhone is
    /// reachable, else a userInfo; its answer arrives the same way and updates
    /// ``hasValidActivation()``. False when the session is not activated.
    @discardableResult
    public func updateActivationStatus() -> Bool {
        PowerAuthWCSessionManager.sharedInstance.channel.requestLazily("get_session", instanceId: instanceId)
    }

    /// Asks the iPhone app for the status with a message it must answer; the iPhone must be
    /// reachable. `completion` runs on the main queue with the activation id (nil when the
    /// iPhone has none), or the error of the exchange.
    public func updateActivationStatus(completion: @escaping (String?, Error?) -> Void) {
        PowerAuthWCSessionManager.sharedInstance.channel.request("get_session", instanceId: instanceId) { result in
            switch result {
            case .success(let answer): completion(answer["activationIdentifier"]?.stringValue, nil)
            case .failure(let error): completion(nil, error)
            }
        }
    }
}
