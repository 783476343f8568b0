#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import LinkControl

/// A transport problem of ``ControlClient``: the daemon answered nothing usable.
public enum ControlClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The socket path does not fit a `sockaddr_un`.
    case socketPathTooLong(path: String, limit: Int)
    /// `connect(2)` failed, typically because the daemon is not running.
    case cannotConnect(path: String, errno: Int32)
    /// Another system call failed.
    case systemCallFailed(call: String, errno: Int32)
    /// No answer within the time allowed.
    case timedOut(String)
    /// The connection is closed; the reason says by whom.
    case connectionClosed(String)
    /// The daemon sent something that is not a valid response or event.
    case invalidResponse(String)

    public var description: String {
        switch self {
        case .socketPathTooLong(let path, let limit):
            return "socket path is \(path.utf8.count) bytes, longer than the platform limit of \(limit): \(path)"
        case .cannotConnect(let path, let code):
            return "cannot connect to \(path): \(Self.errorText(code)) — is \(Self.daemonName(for: path)) running?"
        case .systemCallFailed(let call, let code):
            return "\(call) failed: \(Self.errorText(code))"
        case .timedOut(let what):
            return "timed out: \(what)"
        case .connectionClosed(let reason):
            return "connection closed: \(reason)"
        case .invalidResponse(let what):
            return "invalid response from the daemon: \(what)"
        }
    }

    static func errorText(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    private static func daemonName(for path: String) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        switch name {
        case WatchLinkHome.phoneControlSocketName: return "phoned"
        case WatchLinkHome.watchControlSocketName: return "watchd"
        default: return "the daemon"
        }
    }
}
