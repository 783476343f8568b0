/// A request the emulated server refuses.
public enum ServerError: Error, Hashable, Sendable, CustomStringConvertible {
    case unknownActivation(String)
    /// The action does not apply to an activation in this state.
    case invalidState(action: String, state: ServerActivationState)
    case invalidValue(String)

    public var description: String {
        switch self {
        case .unknownActivation(let id): return "the server has no activation '\(id)'"
        case .invalidState(let action, let state): return "'\(action)' does not apply to an activation in state \(state.name)"
        case .invalidValue(let message): return message
        }
    }
}
