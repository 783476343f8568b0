import PowerAuthServer

/// The SDK's persistent signing state of an activation (`PersistentData`): the master secret
/// agreed with the server (the keys derive from it), the hash-based counter `CTR_DATA`, and
/// the counter byte `CTR_BYTE` that lets the client tell how far it is ahead.
public struct ClientCounter: Hashable, Sendable {
    public let masterSecret: [UInt8]
    public let keys: SignatureKeys
    public var counterData: [UInt8]
    /// The low byte of the client's signature count; nil until learned (activations of
    /// protocol 3.1 start with 0, as the server does).
    public var counterByte: UInt8?

    public init(masterSecret: [UInt8], counterData: [UInt8], counterByte: UInt8?) {
        self.masterSecret = masterSecret
        keys = SignatureKeys(masterSecret: masterSecret)
        self.counterData = counterData
        self.counterByte = counterByte
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
