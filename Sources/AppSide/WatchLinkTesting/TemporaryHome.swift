import LinkSystem

/// A short temporary directory under /tmp (a Unix socket path has at most 108 bytes), removed
/// by ``remove()``.
public final class TemporaryHome: @unchecked Sendable {
    public let path: String

    public init() {
        do {
            path = try FileSystem.makeTemporaryDirectory(prefix: "wl-")
        } catch {
            preconditionFailure("cannot make a temporary directory in /tmp: \(error)")
        }
    }

    public func remove() {
        try? FileSystem.removeRecursively(path)
    }
}
