import Foundation

/// The configuration of an SDK object: its instance, the server's base URL and the
/// cryptographic configuration string.
///
/// WatchLink's emulated server has no real keys to check `configuration` against, so any
/// string is accepted, the documents' placeholder `ARDDj6EB6iAUtNm...` included. What ties the
/// phone's and the watch's objects together is `instanceId`, as with the SDK.
open class PowerAuthConfiguration: NSObject, NSCopying, @unchecked Sendable {
    /// The SDK object's instance: the key of its activation and tokens on the device, the same
    /// on the phone and the watch.
    public let instanceId: String
    /// The base URL of the PowerAuth Standard RESTful API (the part before `/pa/...`).
    public let baseEndpointUrl: String
    /// The cryptographic configuration string (`MOBILE_SDK_CONFIG`).
    public let configuration: String
    // swift-format-ignore: AlwaysUseLowerCamelCase
    /// The key of this instance's biometry key in the keychain.
    public var keychainKey_Biometry: String
    /// An encryption key of the app's, for the possession and biometry keys.
    public var externalEncryptionKey: Data?
    /// Whether the protocol upgrade is left to the app (iOS; the upgrade is not emulated).
    public var disableAutomaticProtocolUpgrade = false
    /// Digits of an offline signature's component (iOS).
    public var offlineSignatureComponentLength: UInt = 8

    public init(instanceId: String, baseEndpointUrl: String, configuration: String) {
        self.instanceId = instanceId
        self.baseEndpointUrl = baseEndpointUrl
        self.configuration = configuration
        keychainKey_Biometry = instanceId
        super.init()
    }

    /// Whether the required values are filled in.
    @discardableResult
    open func validate() -> Bool {
        !instanceId.isEmpty && !baseEndpointUrl.isEmpty && !configuration.isEmpty
    }

    @discardableResult
    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = PowerAuthConfiguration(instanceId: instanceId, baseEndpointUrl: baseEndpointUrl, configuration: configuration)
        copy.keychainKey_Biometry = keychainKey_Biometry
        copy.externalEncryptionKey = externalEncryptionKey
        copy.disableAutomaticProtocolUpgrade = disableAutomaticProtocolUpgrade
        copy.offlineSignatureComponentLength = offlineSignatureComponentLength
        return copy
    }
}
