/// How much a ``Logger`` writes: each level includes the ones before it.
public enum LogLevel: Int, Comparable, CaseIterable, Sendable, CustomStringConvertible {
    case error
    case warning
    case info
    case debug
    case trace

    /// Parses `error`, `warning` (or `warn`), `info`, `debug`, `trace`, in any case.
    public init?(name: String) {
        switch name.lowercased() {
        case "error": self = .error
        case "warning", "warn": self = .warning
        case "info": self = .info
        case "debug": self = .debug
        case "trace": self = .trace
        default: return nil
        }
    }

    /// The name as accepted by ``init(name:)``.
    public var name: String {
        switch self {
        case .error: return "error"
        case .warning: return "warning"
        case .info: return "info"
        case .debug: return "debug"
        case .trace: return "trace"
        }
    }

    /// The name as printed in log lines, at most five characters.
    var tag: String {
        self == .warning ? "warn" : name
    }

    public var description: String { name }

    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
