/// A failed system call: what was called, on which path, and the `errno` it set.
///
/// Its description reads like `bind(/tmp/x/link.sock): Address already in use (EADDRINUSE)`.
public struct SystemError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The call that failed, such as `"bind"` or `"epoll_wait"`.
    public let operation: String
    /// The error number the call set.
    public let errno: Errno
    /// The file system path the call was about, when there is one.
    public let path: String?

    public init(operation: String, errno: Errno, path: String? = nil) {
        self.operation = operation
        self.errno = errno
        self.path = path
    }

    public var description: String {
        if let path {
            return "\(operation)(\(path)): \(errno)"
        }
        return "\(operation): \(errno)"
    }
}
