import PowerAuthServer

/// The SDK's persistent signing state of an activation (`PersistentData`): the master secret
/// agreed with the server (the keys derive from it), the hash-based counter `CTR_DATA`, the
/// counter byte `CTR_BYTE` that lets the client tell how far it is ahead, and the two public
/// keys of the key exchange, from which the SDK computes the activation fingerprint.
public struct ClientCounter: Hashable, Sendable {
    public let masterSecret: [UInt8]
    public let keys: SignatureKeys
    public var counterData: [UInt8]
    /// The low byte of the client's signature count; nil until learned (activations of
    /// protocol 3.1 start with 0, as the server does).
    public var counterByte: UInt8?
    /// `devicePublicKey` and `serverPublicKey` of `PersistentData` (SEC1); nil for an
    /// activation kept before WatchLink made the key exchange.
    public let devicePublicKey: [UInt8]?
    public let serverPublicKey: [UInt8]?

    public init(
        masterSecret: [UInt8], counterData: [UInt8], counterByte: UInt8?, devicePublicKey: [UInt8]? = nil,
        serverPublicKey: [UInt8]? = nil
    ) {
        self.masterSecret = masterSecret
        keys = SignatureKeys(masterSecret: masterSecret)
        self.counterData = counterData
        self.counterByte = counterByte
        self.devicePublicKey = devicePublicKey
        self.serverPublicKey = serverPublicKey
    }

    /// `Session::activationFingerprint`: the fingerprint of the two public keys and the
    /// activation id; nil without the keys.
    public func activationFingerprint(activationId: String) -> String? {
        guard let devicePublicKey, let serverPublicKey else { return nil }
        return ActivationKeyExchange.fingerprint(devicePublicKey: devicePublicKey, serverPublicKey: serverPublicKey, activationId: activationId)
    }

    /// Signs `data` with the current `CTR_DATA` and moves the counter on, as the SDK does for
    /// every signature whether or not the request reaches the server (`CalculateNextCounterValue`).
    /// Returns the signature and the counter data it used.
    public mutating func sign(
        _ data: [UInt8], factor: SignatureFactor,
        format: PowerAuthSignature.Format
    ) -> (signature: String, counterData: [UInt8]) {
        let used = counterData
        let signature = PowerAuthSignature.compute(keys: keys, factor: factor, counterData: used, data: data, format: format)
        counterData = HashCounter.next(used)
        if let counterByte { self.counterByte = counterByte &+ 1 }
        return (signature, used)
    }
}
