#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The system calls ``StoreFile`` makes on its own, each retried on `EINTR`.
enum FileProbe {
    enum Kind: Equatable {
        case missing
        case regularFile(size: Int64)
        case other(String)
    }

    /// What `path` names, without following a symbolic link.
    static func kind(of path: String) throws(StoreFileError) -> Kind {
        var info = stat()
        while lstat(path, &info) != 0 {
            let code = errno
            if code == EINTR { continue }
            if code == ENOENT { return .missing }
            throw .inaccessible(path: path, operation: "lstat", errno: code)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .regularFile(size: Int64(info.st_size))
        case S_IFLNK: return .other("symbolic link")
        case S_IFDIR: return .other("directory")
        case S_IFIFO: return .other("FIFO")
        case S_IFSOCK: return .other("socket")
        case S_IFCHR: return .other("character device")
        case S_IFBLK: return .other("block device")
        default: return .other("file of unknown type")
        }
    }

    /// Up to `count` bytes from the start of the file at `path`.
    static func prefix(of path: String, count: Int) throws(StoreFileError) -> [UInt8] {
        let fd = try retrying(path, "open") { open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW) }
        defer { close(fd) }
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
        defer { buffer.deallocate() }
        var filled = 0
        while filled < count {
            let got = try retrying(path, "read") { read(fd, buffer.baseAddress! + filled, count - filled) }
            if got == 0 { break }
            filled += got
        }
        return Array(buffer.prefix(filled))
    }

    private static func retrying<T: FixedWidthInteger>(
        _ path: String, _ operation: String, _ call: () -> T
    ) throws(StoreFileError) -> T {
        while true {
            let result = call()
            if result != -1 { return result }
            let code = errno
            if code != EINTR {
                throw .inaccessible(path: path, operation: operation, errno: code)
            }
        }
    }

    static func remove(_ path: String) {
        unlink(path)
    }

    /// Makes `scratch` private and durable, then renames it to `path` and syncs the directory.
    static func publish(_ scratch: String, as path: String) throws(StoreFileError) {
        chmod(scratch, 0o600)
        let fd = open(scratch, O_RDONLY | O_CLOEXEC)
        if fd >= 0 {
            fsync(fd)
            close(fd)
        }
        guard rename(scratch, path) == 0 else {
            let code = errno
            unlink(scratch)
            throw .inaccessible(path: path, operation: "rename", errno: code)
        }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let directoryFD = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            fsync(directoryFD)
            close(directoryFD)
        }
    }
}
