/// What an administrator (or the server itself) does to an activation record.
public enum ServerAction: Hashable, Sendable {
    case commit
    case block
    case unblock
    case remove
    case failAttempt
    case succeedAttempt
    /// Blocked until server time `until` (Unix ms); it then becomes active again by itself.
    case temporaryBlock(until: Int64)
    /// The server's counter moves `steps` codes ahead (as after restoring the client from a backup).
    case advanceCounter(steps: Int)

    public var name: String {
        switch self {
        case .commit: return "commit"
        case .block: return "block"
        case .unblock: return "unblock"
        case .remove: return "remove"
        case .failAttempt: return "failAttempt"
        case .succeedAttempt: return "succeedAttempt"
        case .temporaryBlock: return "temporaryBlock"
        case .advanceCounter: return "advanceCounter"
        }
    }
}
