/// Which end of the link a daemon plays.
public enum Role: UInt8, Sendable, Hashable, CaseIterable {
    /// The emulated iPhone (`phoned`).
    case phone = 1
    /// The emulated Apple Watch (`watchd`).
    case watch = 2

    /// The role the other end of the link must have.
    public var counterpart: Role {
        switch self {
        case .phone: return .watch
        case .watch: return .phone
        }
    }

    /// The lowercase name of the role: `"phone"` or `"watch"`.
    public var name: String {
        switch self {
        case .phone: return "phone"
        case .watch: return "watch"
        }
    }

    /// Creates a role from its name (`"phone"` or `"watch"`).
    public init?(name: String) {
        switch name {
        case "phone": self = .phone
        case "watch": self = .watch
        default: return nil
        }
    }
}
