#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkJSON

/// One activation record of the emulated PowerAuth server.
public struct ServerActivation: Hashable, Sendable {
    public static let defaultMaxFailCount = 5
    public static let defaultLookAhead = 20

    public var activationId: String
    public var state: ServerActivationState
    public var failCount: Int
    public var maxFailCount: Int
    public var customObject: JSONObject?
    public var currentVersion: Int
    public var upgradeVersion: Int
    public var lookAhead: Int
    /// The numeric counter: how many signatures the server has accepted or skipped; its low byte is CTR_BYTE.
    public var counter: Int64
    /// The next CTR_DATA the server expects.
    public var counterData: [UInt8]
    /// `KEY_MASTER_SECRET`, agreed by the key exchange (``ActivationKeyExchange``); nil for a
    /// record imported with its keys only.
    public let masterSecret: [UInt8]?
    /// The keys derived from the master secret, as the SDK derives them (or imported as given).
    public let keys: SignatureKeys
    /// `KEY_DEVICE_PUBLIC` as the device sent it (SEC1; the SDK sends it compressed); nil for a
    /// record made without the key exchange.
    public let devicePublicKey: [UInt8]?
    /// `KEY_SERVER_PUBLIC` as the server answers it (uncompressed SEC1, as `KeyConvertor` writes
    /// it); nil for a record made without the key exchange.
    public let serverPublicKey: [UInt8]?
    /// Server time (Unix ms) when a temporary block ends; nil unless temporarily blocked.
    public var blockExpiration: Int64?

    /// A record whose keys derive from `masterSecret`.
    public init(
        activationId: String, state: ServerActivationState, masterSecret: [UInt8], counterData: [UInt8],
        devicePublicKey: [UInt8]? = nil, serverPublicKey: [UInt8]? = nil,
        failCount: Int = 0, maxFailCount: Int = defaultMaxFailCount, customObject: JSONObject? = nil,
        currentVersion: Int = 3, upgradeVersion: Int = 3, lookAhead: Int = defaultLookAhead,
        counter: Int64 = 0, blockExpiration: Int64? = nil
    ) {
        self.init(
            activationId: activationId, state: state, keys: SignatureKeys(masterSecret: masterSecret),
            masterSecret: masterSecret, counterData: counterData, devicePublicKey: devicePublicKey,
            serverPublicKey: serverPublicKey, failCount: failCount, maxFailCount: maxFailCount,
            customObject: customObject, currentVersion: currentVersion, upgradeVersion: upgradeVersion,
            lookAhead: lookAhead, counter: counter, blockExpiration: blockExpiration)
    }

    /// A record with `keys`, which derive from `masterSecret` when it is given.
    public init(
        activationId: String, state: ServerActivationState, keys: SignatureKeys, masterSecret: [UInt8]?,
        counterData: [UInt8], devicePublicKey: [UInt8]? = nil, serverPublicKey: [UInt8]? = nil,
        failCount: Int = 0, maxFailCount: Int = defaultMaxFailCount, customObject: JSONObject? = nil,
        currentVersion: Int = 3, upgradeVersion: Int = 3, lookAhead: Int = defaultLookAhead,
        counter: Int64 = 0, blockExpiration: Int64? = nil
    ) {
        self.activationId = activationId
        self.state = state
        self.masterSecret = masterSecret
        self.keys = keys
        self.devicePublicKey = devicePublicKey
        self.serverPublicKey = serverPublicKey
        self.counterData = counterData
        self.failCount = failCount
        self.maxFailCount = maxFailCount
        self.customObject = customObject
        self.currentVersion = currentVersion
        self.upgradeVersion = upgradeVersion
        self.lookAhead = lookAhead
        self.counter = counter
        self.blockExpiration = blockExpiration
    }

    public var transportKey: [UInt8] { keys.transport }

    /// The activation fingerprint of the two public keys (the server's
    /// `devicePublicKeyFingerprint`); nil for a record made without the key exchange.
    public var activationFingerprint: String? {
        guard let devicePublicKey, let serverPublicKey else { return nil }
        return ActivationKeyExchange.fingerprint(devicePublicKey: devicePublicKey, serverPublicKey: serverPublicKey, activationId: activationId)
    }

    /// The plain status blob of the record, with `reserved` in bytes 7…11.
    public func statusBlob(reserved: [UInt8]) -> StatusBlob {
        StatusBlob(
            state: state, currentVersion: UInt8(clamping: currentVersion), upgradeVersion: UInt8(clamping: upgradeVersion),
            counterByte: UInt8(truncatingIfNeeded: counter), failCount: UInt8(clamping: failCount),
            maxFailCount: UInt8(clamping: maxFailCount), lookAhead: UInt8(clamping: lookAhead),
            counterDataHash: PowerAuthKDF.counterDataHash(transportKey: keys.transport, counterData: counterData),
            reserved: reserved)
    }

    /// The record as `pa.server.get` shows it: no secret keys; the counter data and the public
    /// keys in base64.
    public var json: JSONObject {
        var object: JSONObject = [
            "activationId": .string(activationId), "state": .string(state.name),
            "failCount": .int(Int64(failCount)), "maxFailCount": .int(Int64(maxFailCount)),
            "currentVersion": .int(Int64(currentVersion)), "upgradeVersion": .int(Int64(upgradeVersion)),
            "lookAhead": .int(Int64(lookAhead)), "counter": .int(counter),
            "ctrData": .string(Data(counterData).base64EncodedString()),
        ]
        if let devicePublicKey { object["devicePublicKey"] = .string(Data(devicePublicKey).base64EncodedString()) }
        if let serverPublicKey { object["serverPublicKey"] = .string(Data(serverPublicKey).base64EncodedString()) }
        if let activationFingerprint { object["devicePublicKeyFingerprint"] = .string(activationFingerprint) }
        if let customObject { object["customObject"] = .object(customObject) }
        if let blockExpiration { object["blockExpirationTime"] = .int(blockExpiration) }
        return object
    }
}
