/// The activation state of a session, as `WCSessionActivationState`.
public enum ActivationState: UInt8, Sendable, Hashable, CaseIterable {
    case notActivated = 0
    case inactive = 1
    case activated = 2

    /// Apple's name of the state, e.g. `"notActivated"`.
    public var name: String {
        switch self {
        case .notActivated: return "notActivated"
        case .inactive: return "inactive"
        case .activated: return "activated"
        }
    }

    /// Creates a state from Apple's name of it, e.g. `"activated"`.
    public init?(name: String) {
        guard let state = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = state
    }
}
