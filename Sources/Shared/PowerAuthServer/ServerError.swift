/// A request the emulated server refuses.
public enum ServerError: Error, Hashable, Sendable, CustomStringConvertible {
    case unknownActivation(String)
    /// The action does not apply to an activation in this state.
    case invalidState(action: String, state: ServerActivationState)
    case invalidValue(String)
    /// Refused with one of the real server's errors (`ERR0030` `TOKEN_TIMESTAMP_TOO_OLD`, ...).
    case rejected(code: Int, name: String, message: String)

    public var description: String {
        switch self {
        case .unknownActivation(let id): return "the server has no activation '\(id)'"
        case .invalidState(let action, let state): return "'\(action)' does not apply to an activation in state \(state.name)"
        case .invalidValue(let message): return message
        case .rejected(let code, let name, let message): return "ERR\(String(repeating: "0", count: max(0, 4 - String(code).count)))\(code) \(name): \(message)"
        }
    }
}
