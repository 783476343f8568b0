/// A Unix socket path that cannot be used, and why.
public struct SocketPathError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong with the path.
    public enum Reason: Equatable, Sendable {
        /// The path does not fit in `sockaddr_un`; it is never truncated.
        case tooLong(length: Int, limit: Int)
        /// A daemon accepted a connection on the path.
        case alreadyListening
        /// Something other than a socket exists at the path.
        case notASocket(kind: String)
        /// The path is empty or contains a NUL byte.
        case invalid
    }

    /// The path as given.
    public let path: String
    /// What is wrong with it.
    public let reason: Reason

    public init(path: String, reason: Reason) {
        self.path = path
        self.reason = reason
    }

    public var description: String {
        switch reason {
        case .tooLong(let length, let limit):
            return "socket path is \(length) bytes long, over the limit of \(limit) bytes on this platform: \(path)"
        case .alreadyListening:
            return "another daemon is already listening on \(path)"
        case .notASocket(let kind):
            return "\(path) exists and is not a socket (\(kind)); remove it or choose another path"
        case .invalid:
            return "invalid socket path \"\(path)\": it must be non-empty and contain no NUL byte"
        }
    }
}
