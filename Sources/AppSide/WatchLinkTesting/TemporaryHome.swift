import LinkSystem

/// A short temporary directory under /tmp (a Unix socket path has at most 108 bytes), removed
/// by ``remove()``.
public final class TemporaryHome: @unchecked Sendable {
    /// The directory, `/tmp/wl-XXXXXX`.
    public let path: String

    /// Makes a new directory, private to this user (mode 0700).
    public init() {
        do {
            path = try FileSystem.makeTemporaryDirectory(prefix: "wl-")
        } catch {
            preconditionFailure("cannot make a temporary directory in /tmp: \(error)")
        }
    }

    /// Removes the directory and everything in it.
    public func remove() {
        try? FileSystem.removeRecursively(path)
    }
}
