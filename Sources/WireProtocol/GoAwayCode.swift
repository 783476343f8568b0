/// Why a side ends the link, carried by a GOAWAY frame.
///
/// ``Frame/goAway(code:reason:)`` stores the raw `UInt16` so that a code from a newer peer
/// still decodes; interpret it with ``GoAwayCode/init(rawValue:)``.
public enum GoAwayCode: UInt16, Sendable, Hashable, CaseIterable {
    case protocolError = 1
    case frameTooLarge = 2
    case unknownFrameType = 3
    case malformedFrame = 4
    case authenticationFailed = 5
    case roleConflict = 6
    case versionMismatch = 7
    case alreadyConnected = 8
    case handshakeTimeout = 9
    case shuttingDown = 10
    case linkDisabled = 11

    /// The name of the code, e.g. `"authenticationFailed"`.
    public var name: String {
        switch self {
        case .protocolError: return "protocolError"
        case .frameTooLarge: return "frameTooLarge"
        case .unknownFrameType: return "unknownFrameType"
        case .malformedFrame: return "malformedFrame"
        case .authenticationFailed: return "authenticationFailed"
        case .roleConflict: return "roleConflict"
        case .versionMismatch: return "versionMismatch"
        case .alreadyConnected: return "alreadyConnected"
        case .handshakeTimeout: return "handshakeTimeout"
        case .shuttingDown: return "shuttingDown"
        case .linkDisabled: return "linkDisabled"
        }
    }

    /// The name of a raw code: the known name, or `"unknown(<raw>)"`.
    public static func name(ofRawValue rawValue: UInt16) -> String {
        GoAwayCode(rawValue: rawValue)?.name ?? "unknown(\(rawValue))"
    }
}
