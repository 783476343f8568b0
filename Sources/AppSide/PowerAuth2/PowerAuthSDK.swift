import Dispatch
import Foundation
import LinkJSON
import WatchLinkClient

/// The PowerAuth SDK object of one instance: its activation, tokens, status and time, kept by
/// the device (phoned) beyond the app's process, as the keychain keeps them on an iPhone.
///
/// ```swift
/// let configuration = PowerAuthConfiguration(instanceId: "com.example.app",
///     baseEndpointUrl: "https://localhost:8080/demo-server", configuration: "ARDDj6EB6iAUtNm...")
/// guard let powerAuthSDK = PowerAuthSDK(configuration: configuration) else { return }
/// ```
///
/// Create the objects before activating `WCSession`: a packet for an instance that has no
/// object in the process when it arrives is lost, as the SDK's guide warns. Completions run on
/// the main queue.
open class PowerAuthSDK: NSObject, PowerAuthSessionStatusProvider, @unchecked Sendable {
    /// The device's PowerAuth state of this process (phoned's `pa.*` ops).
    package static let device = PowerAuthDevice(framework: "PowerAuth2")

    private let instanceConfiguration: PowerAuthConfiguration
    private let device = PowerAuthSDK.device
    private let lock = NSLock()
    private var lastStatus: PowerAuthActivationStatus?

    /// The token store of this instance.
    public let tokenStore: any PowerAuthTokenStore
    /// The time synchronised with the server, for this instance.
    public let timeSynchronizationService: any PowerAuthTimeSynchronizationService

    /// An SDK object; nil when the configuration lacks a value (`PowerAuthConfiguration.validate()`).
    public init?(configuration: PowerAuthConfiguration) {
        guard configuration.validate(), let copy = configuration.copy() as? PowerAuthConfiguration else { return nil }
        instanceConfiguration = copy
        let instanceId = copy.instanceId
        let device = PowerAuthSDK.device
        let store = DeviceTokenStore(
            side: .phone, instanceId: instanceId, device: device,
            channel: PowerAuthWCSessionManager.sharedInstance.channel)
        tokenStore = store
        timeSynchronizationService = DeviceTimeSynchronization(instanceId: instanceId, device: device)
        super.init()
        store.statusProvider = self
        device.register(instanceId)
    }

    deinit {
        device.release(instanceConfiguration.instanceId)
    }

    private static let shared = Locked<PowerAuthSDK?>(nil)

    /// Creates the shared instance.
    public static func initSharedInstance(_ configuration: PowerAuthConfiguration) {
        shared.withLock { $0 = PowerAuthSDK(configuration: configuration) }
    }

    /// The shared instance (``initSharedInstance(_:)`` first).
    @discardableResult
    public static func sharedInstance() -> PowerAuthSDK {
        guard let instance = shared.current else {
            fatalError("PowerAuthSDK.sharedInstance(): call PowerAuthSDK.initSharedInstance(_:) with a valid configuration first")
        }
        return instance
    }

    /// A copy of the configuration the object was made with.
    public var configuration: PowerAuthConfiguration {
        instanceConfiguration.copy() as? PowerAuthConfiguration ?? instanceConfiguration
    }

    private var instanceId: String { instanceConfiguration.instanceId }
    private var instance: JSONObject { ["instanceId": .string(instanceId)] }

    // MARK: Activation state

    private func activation() -> JSONObject? {
        switch device.call("pa.activation.get", instance) {
        case .success(let answer): return answer
        case .failure(let error):
            device.log("instance '\(instanceId)': \(error.localizedDescription)")
            return nil
        }
    }

    @discardableResult
    public func hasValidActivation() -> Bool { activation()?["hasValidActivation"]?.boolValue ?? false }

    @discardableResult
    public func hasPendingActivation() -> Bool { activation()?["hasPendingActivation"]?.boolValue ?? false }

    @discardableResult
    public func canStartActivation() -> Bool {
        guard let state = activation() else { return false }
        return state["hasValidActivation"]?.boolValue == false && state["hasPendingActivation"]?.boolValue == false
    }

    /// Never: the protocol upgrade is not emulated (the status reports `isProtocolUpgradeAvailable`).
    @discardableResult
    public func hasProtocolUpgradeAvailable() -> Bool { false }

    @discardableResult
    public func hasPendingProtocolUpgrade() -> Bool { false }

    public var activationIdentifier: String? { activation()?["activationIdentifier"]?.stringValue }

    /// The activation's fingerprint, nil without a valid activation (a stand-in, see docs/powerauth.md).
    public var activationFingerprint: String? { activation()?["activationFingerprint"]?.stringValue }

    /// The status the last ``fetchActivationStatus(callback:)`` got.
    public var lastFetchedActivationStatus: PowerAuthActivationStatus? { lock.withLock { lastStatus } }

    // MARK: Creating an activation

    /// Creates an activation on the server; it is pending until ``persistActivation(with:)``.
    @discardableResult
    public func createActivation(
        _ activation: PowerAuthActivation,
        callback: @escaping (PowerAuthActivationResult?, Error?) -> Void
    ) -> PowerAuthOperationTask? {
        guard canStartActivation() else {
            callback(nil, PowerAuthErrorCode.invalidActivationState.error())
            return nil
        }
        let task = CancellableTask()
        device.send("pa.activation.create", ["instanceId": .string(instanceId), "pending": true]) { result in
            DispatchQueue.main.asyncCompletion {
                guard !task.isCancelled else { return }
                switch result {
                case .success(let answer):
                    callback(PowerAuthActivationResult(activationFingerprint: answer["activationFingerprint"]?.stringValue ?? ""), nil)
                case .failure(let error):
                    callback(nil, error)
                }
            }
        }
        return task
    }

    /// Creates an activation from an activation code.
    @discardableResult
    public func createActivation(
        withName name: String?, activationCode: String,
        callback: @escaping (PowerAuthActivationResult?, Error?) -> Void
    ) -> PowerAuthOperationTask? {
        do {
            return createActivation(try PowerAuthActivation(activationCode: activationCode, name: name), callback: callback)
        } catch {
            callback(nil, error)
            return nil
        }
    }

    /// Creates an activation from an activation code, with extra attributes.
    @discardableResult
    public func createActivation(
        withName name: String?, activationCode: String, extras: String?,
        callback: @escaping (PowerAuthActivationResult?, Error?) -> Void
    ) -> PowerAuthOperationTask? {
        do {
            return createActivation(
                try PowerAuthActivation(activationCode: activationCode, name: name).with(extras: extras),
                callback: callback)
        } catch {
            callback(nil, error)
            return nil
        }
    }

    /// Makes the pending activation the instance's (its tokens start anew).
    /// - Throws: `PowerAuthErrorCode.invalidActivationState` without a pending activation.
    public func persistActivation(with authentication: PowerAuthAuthentication) throws {
        if case .failure(let error) = device.call("pa.activation.persist", instance) { throw error }
    }

    /// ``persistActivation(with:)`` with possession and `password`.
    public func persistActivation(withPassword password: String) throws {
        try persistActivation(with: .persistWithPassword(password: password))
    }

    // MARK: Status

    /// Asks the server for the activation's status; the callback runs on the main queue.
    /// Without a valid activation it runs at once with `PowerAuthErrorCode.missingActivation`
    /// (`PowerAuthErrorCode.activationPending` while one is pending).
    @discardableResult
    public func fetchActivationStatus(callback: @escaping (PowerAuthActivationStatus?, Error?) -> Void) -> PowerAuthOperationTask? {
        guard let state = activation(), state["hasValidActivation"]?.boolValue == true else {
            let pending = activation()?["hasPendingActivation"]?.boolValue == true
            callback(nil, pending ? PowerAuthErrorCode.activationPending.error() : PowerAuthErrorCode.missingActivation.error())
            return nil
        }
        let task = CancellableTask()
        device.send("pa.status.fetch", instance) { [weak self] result in
            DispatchQueue.main.asyncCompletion {
                guard !task.isCancelled else { return }
                switch result {
                case .success(let answer):
                    guard let status = PowerAuthActivationStatus(json: answer) else {
                        return callback(nil, PowerAuthErrorCode.invalidActivationData.error())
                    }
                    self?.lock.withLock { self?.lastStatus = status }
                    callback(status, nil)
                case .failure(let error):
                    callback(nil, error)
                }
            }
        }
        return task
    }

    // MARK: Removing

    /// Removes the activation on the server with a request signed with `authentication`
    /// (`/pa/v3/activation/remove`, which takes two or three factors), then from the device as
    /// ``removeActivationLocal()`` does. The callback runs on the main queue: nil once the
    /// server removed it; else the error (`PowerAuthErrorCode.networkError` when the request is
    /// lost or the server refuses the signature, `.missingActivation` without an activation),
    /// and the activation stays.
    @discardableResult
    public func removeActivation(
        with authentication: PowerAuthAuthentication,
        callback: @escaping (Error?) -> Void
    ) -> PowerAuthOperationTask? {
        let task = CancellableTask()
        let args: JSONObject = ["instanceId": .string(instanceId), "signatureType": .string(authentication.signatureType)]
        device.send("pa.activation.remove", args) { [weak self] result in
            DispatchQueue.main.asyncCompletion {
                guard !task.isCancelled else { return }
                switch result {
                case .success:
                    self?.lock.withLock { self?.lastStatus = nil }
                    callback(nil)
                case .failure(let error):
                    callback(error)
                }
            }
        }
        return task
    }

    /// Removes the activation, its tokens and counter from the device, not from the server.
    /// The watch is not told: send the status next (``sendActivationStatusToWatch()``).
    public func removeActivationLocal() {
        if case .failure(let error) = device.call("pa.activation.removeLocal", instance) {
            device.log("removeActivationLocal(): \(error.localizedDescription)")
        }
        lock.withLock { lastStatus = nil }
    }

    package var sdkInstanceId: String { instanceId }
}
