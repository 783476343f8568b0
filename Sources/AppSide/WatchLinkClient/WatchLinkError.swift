import LinkControl
import LinkJSON

/// Why a call of ``WatchLinkClient`` failed.
public enum WatchLinkError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The session refused or failed the operation, as `WCError` would (domain `WCErrorDomain`,
    /// codes 7001 to 7019, e.g. 7007 `notReachable`).
    case watchConnectivity(code: Int, name: String, message: String)
    /// The control protocol refused the request (domain `control`: 1 `badRequest`,
    /// 2 `unknownOp`, 3 `invalidArgument`, 4 `lineTooLong`, 5 `internalError`,
    /// 6 `shuttingDown`, 7 `busy`).
    case control(code: Int, name: String, message: String)
    /// An error of another domain, such as a feature's (`PowerAuthErrorDomain`).
    case other(domain: String, code: Int, name: String, message: String)
    /// The connection failed or is closed: the socket is missing or refused, the daemon went
    /// away, or the client was closed. The text names the socket and the system's error.
    case connection(String)
    /// The daemon answered something this client cannot read (a result without a field
    /// that its op always returns, for instance).
    case invalidResponse(String)

    /// The domain of WatchConnectivity's errors.
    public static let watchConnectivityDomain = "WCErrorDomain"

    /// The error that a response's error object stands for.
    public init(_ error: ControlError) {
        switch error.domain {
        case Self.watchConnectivityDomain:
            self = .watchConnectivity(code: error.code, name: error.name, message: error.message)
        case ControlError.controlDomain:
            self = .control(code: error.code, name: error.name, message: error.message)
        default:
            self = .other(domain: error.domain, code: error.code, name: error.name, message: error.message)
        }
    }

    /// Reads an error object (`{"domain", "code", "name", "message"}`), as responses and the
    /// `didFinish` events carry it; `nil` when it is not one.
    public init?(json: JSONValue) {
        guard let error = ControlError(json: json) else { return nil }
        self.init(error)
    }

    /// The error's domain: `WCErrorDomain`, `control`, another daemon domain, or `connection`
    /// and `response` for the client's own failures.
    public var domain: String {
        switch self {
        case .watchConnectivity: return Self.watchConnectivityDomain
        case .control: return ControlError.controlDomain
        case .other(let domain, _, _, _): return domain
        case .connection: return "connection"
        case .invalidResponse: return "response"
        }
    }

    /// The daemon's error code, `nil` for the client's own failures.
    public var code: Int? {
        switch self {
        case .watchConnectivity(let code, _, _), .control(let code, _, _), .other(_, let code, _, _): return code
        case .connection, .invalidResponse: return nil
        }
    }

    /// The error's name (`notReachable`, `invalidArgument`, ...), `nil` for the client's own failures.
    public var name: String? {
        switch self {
        case .watchConnectivity(_, let name, _), .control(_, let name, _), .other(_, _, let name, _): return name
        case .connection, .invalidResponse: return nil
        }
    }

    /// What went wrong, in words.
    public var message: String {
        switch self {
        case .watchConnectivity(_, _, let message), .control(_, _, let message), .other(_, _, _, let message): return message
        case .connection(let message), .invalidResponse(let message): return message
        }
    }

    /// `WCErrorDomain 7007 notReachable: ...`, `connection: ...`.
    public var description: String {
        switch self {
        case .watchConnectivity(let code, let name, let message), .control(let code, let name, let message):
            return "\(domain) \(code) \(name): \(message)"
        case .other(let domain, let code, let name, let message):
            return "\(domain) \(code) \(name): \(message)"
        case .connection(let message):
            return "connection: \(message)"
        case .invalidResponse(let message):
            return "invalid response: \(message)"
        }
    }
}
