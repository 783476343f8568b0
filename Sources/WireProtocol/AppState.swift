/// Whether the app on a device runs, and how.
public enum AppState: UInt8, Sendable, Hashable, CaseIterable {
    case notRunning = 0
    case background = 1
    case foreground = 2

    /// The name of the state, e.g. `"foreground"`.
    public var name: String {
        switch self {
        case .notRunning: return "notRunning"
        case .background: return "background"
        case .foreground: return "foreground"
        }
    }

    /// Creates a state from its name, e.g. `"background"`.
    public init?(name: String) {
        guard let state = Self.allCases.first(where: { $0.name == name }) else { return nil }
        self = state
    }
}
