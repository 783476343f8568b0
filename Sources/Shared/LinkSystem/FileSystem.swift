#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem

/// File system helpers for daemon start-up. Errors name the path concerned.
public enum FileSystem {
    /// Creates `path` and its missing parents with mode 0700 (like `mkdir -p`). An existing
    /// directory must belong to the effective user; if its mode lets anyone else in, it is
    /// changed to 0700 and `true` is returned so the caller can warn. Each directory it creates
    /// is made durable (its parent is synced): a power cut would otherwise take it, with all
    /// that is later written and synced inside it.
    @discardableResult
    public static func ensurePrivateDirectory(_ path: String) throws -> Bool {
        guard !path.isEmpty else { throw FileSystemError(path: path, problem: "empty directory path") }
        if let info = try Syscall.stat(path) {
            return try makePrivate(path, info)
        }
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += component
            if let info = try Syscall.stat(prefix) {
                guard wl_s_isdir(info.st_mode) != 0 else {
                    throw FileSystemError(path: prefix, problem: "exists and is not a directory (\(kindName(info.st_mode)))")
                }
            } else {
                if let error = Syscall.mkdirIfMissing(prefix, 0o700) {
                    throw error
                }
                try syncDirectory(parentDirectory(of: prefix))
            }
            prefix += "/"
        }
        guard let info = try Syscall.stat(path) else {
            throw SystemError(operation: "mkdir", errno: .noSuchFileOrDirectory, path: path)
        }
        _ = try makePrivate(path, info)
        return false
    }

    /// ``ensurePrivateDirectory(_:)``, and `path` made durable in its parent (the parent is
    /// synced) even when it existed already: a directory found is not known to be durable (the
    /// process that made it may have been killed, or the parent's sync may have failed, between
    /// the `mkdir` and the sync), and a power cut takes it with everything synced inside it.
    /// A daemon's feature calls this for its directory at start, so that its files do not
    /// depend on another feature syncing the same parent later.
    @discardableResult
    public static func ensureDurableDirectory(_ path: String) throws -> Bool {
        let tightened = try ensurePrivateDirectory(path)
        try syncDirectory(parentDirectory(of: path))
        return tightened
    }

    private static func makePrivate(_ path: String, _ info: FileInfo) throws -> Bool {
        guard wl_s_isdir(info.st_mode) != 0 else {
            throw FileSystemError(path: path, problem: "exists and is not a directory (\(kindName(info.st_mode)))")
        }
        let me = system_geteuid()
        guard info.st_uid == me else {
            throw FileSystemError(path: path, problem: "is owned by uid \(info.st_uid), not by this user (uid \(me))")
        }
        if info.st_mode & 0o777 != 0o700 {
            try Syscall.chmod(path, 0o700)
            return info.st_mode & 0o077 != 0
        }
        return false
    }

    /// The whole content of the file at `path`.
    public static func readFile(_ path: String) throws -> [UInt8] {
        let fd = try Syscall.open(path, O_RDONLY)
        defer { Syscall.close(fd) }
        let info = try Syscall.fstat(fd, path: path)
        if wl_s_isdir(info.st_mode) != 0 {
            throw SystemError(operation: "read", errno: .isDirectory, path: path)
        }
        var bytes = [UInt8](repeating: 0, count: max(Int(info.st_size), 0) + 1)
        var count = 0
        while true {
            if count == bytes.count {
                bytes.append(contentsOf: repeatElement(0, count: bytes.count))
            }
            let offset = count
            let n = try bytes.withUnsafeMutableBytes { buffer in
                try Syscall.readBlocking(fd, buffer.baseAddress! + offset, buffer.count - offset, path: path)
            }
            if n == 0 { break }
            count += n
        }
        bytes.removeLast(bytes.count - count)
        return bytes
    }

    /// Replaces the file at `path` with `bytes` so that a reader sees the old or the new
    /// content, never a mix, even across a crash: a temporary file in the same directory is
    /// written and synced, renamed over `path`, and the directory is synced.
    public static func writeFileAtomically(_ path: String, _ bytes: [UInt8], mode: mode_t) throws {
        let directory = parentDirectory(of: path)
        let temporary = "\(path).tmp-\(system_getpid())"
        let fd = try Syscall.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, mode)
        do {
            try Syscall.fchmod(fd, mode, path: temporary)
            try bytes.withUnsafeBytes { buffer in try Syscall.writeAll(fd, buffer, path: temporary) }
            try Syscall.fsync(fd, path: temporary)
            Syscall.close(fd)
            try Syscall.rename(temporary, path)
        } catch {
            Syscall.close(fd)
            try? Syscall.unlink(temporary)
            throw error
        }
        try syncDirectory(directory)
    }

    /// Whether anything (a dangling symbolic link included) exists at `path`.
    public static func fileExists(_ path: String) -> Bool {
        (try? Syscall.lstat(path)) != nil
    }

    /// Whether a directory exists at `path` (following symbolic links).
    public static func directoryExists(_ path: String) -> Bool {
        guard let info = try? Syscall.stat(path) else { return false }
        return wl_s_isdir(info.st_mode) != 0
    }

    /// The permission bits of `path` (following symbolic links).
    public static func permissions(_ path: String) throws -> mode_t {
        guard let info = try Syscall.stat(path) else {
            throw SystemError(operation: "stat", errno: .noSuchFileOrDirectory, path: path)
        }
        return info.st_mode & 0o7777
    }

    /// Creates a new private directory `<parent>/<prefix>XXXXXX` (`mkdtemp`) and returns its path.
    public static func makeTemporaryDirectory(prefix: String = "wlrt-", in parent: String = "/tmp") throws -> String {
        var template = Array("\(parent)/\(prefix)XXXXXX".utf8CString)
        let result = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard result != nil else {
            throw SystemError(operation: "mkdtemp", errno: .current, path: "\(parent)/\(prefix)XXXXXX")
        }
        return template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Removes `path` and, for a directory, everything below it. Symbolic links are removed,
    /// not followed. Nothing at `path` is not an error.
    public static func removeRecursively(_ path: String) throws {
        guard let info = try Syscall.lstat(path) else { return }
        guard wl_s_isdir(info.st_mode) != 0 else {
            try Syscall.unlink(path)
            return
        }
        for name in try directoryEntries(path) {
            try removeRecursively(path.hasSuffix("/") ? path + name : path + "/" + name)
        }
        try Syscall.rmdir(path)
    }

    /// The names in directory `path`, without `.` and `..`.
    public static func directoryEntries(_ path: String) throws -> [String] {
        guard let directory = system_opendir(path) else {
            throw SystemError(operation: "opendir", errno: .current, path: path)
        }
        defer { system_closedir(directory) }
        var names: [String] = []
        while let name = system_readdir_name(directory) {
            if name != "." && name != ".." {
                names.append(name)
            }
        }
        return names
    }

    static func parentDirectory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        if slash == path.startIndex { return "/" }
        return String(path[path.startIndex..<slash])
    }

    private static func syncDirectory(_ path: String) throws {
        let fd = try Syscall.open(path, O_RDONLY | O_DIRECTORY)
        defer { Syscall.close(fd) }
        try Syscall.fsync(fd, path: path)
    }

    static func kindName(_ mode: mode_t) -> String {
        if wl_s_isdir(mode) != 0 { return "directory" }
        if wl_s_isreg(mode) != 0 { return "regular file" }
        if wl_s_issock(mode) != 0 { return "socket" }
        if wl_s_islnk(mode) != 0 { return "symbolic link" }
        return "special file"
    }
}
