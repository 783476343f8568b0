import Foundation
import LinkJSON

/// The state of an activation, as `fetchActivationStatus` reports it: an extensible type, as
/// the SDK's imported `NS_ENUM`, so that a `switch` over the states has a `default`.
public struct PowerAuthActivationState: RawRepresentable, Hashable, Sendable {
    public let rawValue: Int

    public init?(rawValue: Int) {
        self.rawValue = rawValue
    }

    private init(_ rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Created by an external channel; the key exchange has not happened (never reported to
    /// the mobile client).
    public static let created = PowerAuthActivationState(1)
    /// Waiting for the server's commit.
    public static let pendingCommit = PowerAuthActivationState(2)
    public static let active = PowerAuthActivationState(3)
    public static let blocked = PowerAuthActivationState(4)
    public static let removed = PowerAuthActivationState(5)
    /// The counter cannot be placed: the activation is technically blocked.
    public static let deadlock = PowerAuthActivationState(128)

    init?(name: String) {
        switch name {
        case "created": self = .created
        case "pendingCommit": self = .pendingCommit
        case "active": self = .active
        case "blocked": self = .blocked
        case "removed": self = .removed
        case "deadlock": self = .deadlock
        default: return nil
        }
    }
}

/// What the server said of the activation, with the SDK's rules applied.
public final class PowerAuthActivationStatus: NSObject, @unchecked Sendable {
    public let state: PowerAuthActivationState
    /// Failed attempts so far.
    public let failCount: UInt32
    /// Failed attempts that block the activation.
    public let maxFailCount: UInt32
    /// `maxFailCount - failCount` while active, else 0.
    public let remainingAttempts: UInt32
    /// The server's own data for the app, if it gave any.
    public let customObject: [String: NSObject]?
    /// Whether the activation can move to a newer protocol version.
    public let isProtocolUpgradeAvailable: Bool
    /// When a temporary block ends, in the server's time: compare it with the synchronised
    /// time (`timeSynchronizationService.currentTime()`).
    public let blockExpirationTime: Date?

    init?(json: JSONObject) {
        guard let name = json["state"]?.stringValue, let state = PowerAuthActivationState(name: name) else { return nil }
        self.state = state
        failCount = UInt32(clamping: json["failCount"]?.intValue ?? 0)
        maxFailCount = UInt32(clamping: json["maxFailCount"]?.intValue ?? 0)
        remainingAttempts = UInt32(clamping: json["remainingAttempts"]?.intValue ?? 0)
        customObject = json["customObject"]?.objectValue.map(FoundationJSON.dictionary)
        isProtocolUpgradeAvailable = json["isProtocolUpgradeAvailable"]?.boolValue ?? false
        blockExpirationTime = json["blockExpirationTime"]?.intValue.map { Date(timeIntervalSince1970: Double($0) / 1000) }
    }

    public override var description: String {
        "<PowerAuthActivationStatus state \(state.rawValue), fail \(failCount)/\(maxFailCount)>"
    }
}
