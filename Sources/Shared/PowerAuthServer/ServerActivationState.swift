/// The state of an activation record on the PowerAuth server, as the status blob's STATUS byte.
public enum ServerActivationState: UInt8, Sendable, CaseIterable {
    case created = 1
    case pendingCommit = 2
    case active = 3
    case blocked = 4
    case removed = 5

    /// The SDK's name of the state (`PowerAuthActivationState`).
    public var name: String {
        switch self {
        case .created: return "created"
        case .pendingCommit: return "pendingCommit"
        case .active: return "active"
        case .blocked: return "blocked"
        case .removed: return "removed"
        }
    }

    /// The server's name of the state (`ActivationStatus`), as its responses carry it.
    public var serverName: String {
        switch self {
        case .created: return "CREATED"
        case .pendingCommit: return "PENDING_COMMIT"
        case .active: return "ACTIVE"
        case .blocked: return "BLOCKED"
        case .removed: return "REMOVED"
        }
    }
}
