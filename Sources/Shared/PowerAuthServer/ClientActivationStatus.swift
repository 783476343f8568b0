import LinkJSON

/// What `fetchActivationStatus` gives the app, derived from the decrypted blob with the SDK's rules.
public struct ClientActivationStatus: Hashable, Sendable {
    /// `created`, `pendingCommit`, `active`, `blocked`, `removed` or `deadlock`.
    public var state: String
    public var failCount: Int
    public var maxFailCount: Int
    /// max − fail while active, else 0.
    public var remainingAttempts: Int
    public var customObject: JSONObject?
    /// Active, and current < upgrade ≤ 3.
    public var isProtocolUpgradeAvailable: Bool
    /// Unix milliseconds.
    public var blockExpirationTime: Int64?

    public static let maximumSupportedVersion: UInt8 = 3

    public init(blob: StatusBlob, deadlock: Bool, customObject: JSONObject?, blockExpirationTime: Int64?) {
        // Session.cpp: a counter the client cannot place is a deadlock, whatever the server says.
        state = deadlock ? "deadlock" : blob.state.name
        failCount = Int(blob.failCount)
        maxFailCount = Int(blob.maxFailCount)
        let active = blob.state == .active && !deadlock
        remainingAttempts = active ? max(0, Int(blob.maxFailCount) - Int(blob.failCount)) : 0
        self.customObject = customObject
        isProtocolUpgradeAvailable =
            active && blob.currentVersion < blob.upgradeVersion
            && blob.upgradeVersion <= Self.maximumSupportedVersion
        self.blockExpirationTime = blob.state == .blocked ? blockExpirationTime : nil
    }

    public var json: JSONObject {
        var object: JSONObject = [
            "state": .string(state), "failCount": .int(Int64(failCount)),
            "maxFailCount": .int(Int64(maxFailCount)), "remainingAttempts": .int(Int64(remainingAttempts)),
            "isProtocolUpgradeAvailable": .bool(isProtocolUpgradeAvailable),
        ]
        if let customObject { object["customObject"] = .object(customObject) }
        if let blockExpirationTime { object["blockExpirationTime"] = .int(blockExpirationTime) }
        return object
    }
}
