#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkSystem

/// The file calls ``StoreFile`` makes on its own (through ``Syscall``), with failures named
/// as ``StoreFileError``s.
enum FileProbe {
    enum Kind: Equatable {
        case missing
        case regularFile(size: Int64)
        case other(String)
    }

    /// What `path` names, without following a symbolic link.
    static func kind(of path: String) throws(StoreFileError) -> Kind {
        let found: FileInfo?
        do {
            found = try Syscall.lstat(path)
        } catch {
            throw inaccessible(path, error)
        }
        guard let info = found else { return .missing }
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
        do {
            let fd = try Syscall.open(path, O_RDONLY | O_NOFOLLOW)
            defer { Syscall.close(fd) }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
            defer { buffer.deallocate() }
            var filled = 0
            while filled < count {
                let got = try Syscall.readBlocking(fd, buffer.baseAddress! + filled, count - filled, path: path)
                if got == 0 { break }
                filled += got
            }
            return Array(buffer.prefix(filled))
        } catch {
            throw inaccessible(path, error)
        }
    }

    private static func inaccessible(_ path: String, _ error: SystemError) -> StoreFileError {
        .inaccessible(path: path, operation: error.operation, errno: error.errno.rawValue)
    }

    static func remove(_ path: String) {
        try? Syscall.unlink(path)
    }

    /// Makes `scratch` private and durable, then renames it to `path` and syncs the directory.
    /// A failed sync is an error (the new file, or its name, may not survive a power cut):
    /// before the rename, `scratch` is removed and `path` never appears.
    static func publish(
        _ scratch: String, as path: String,
        sync: (Int32, String) throws(SystemError) -> Void = { fd, path throws(SystemError) in try Syscall.fsync(fd, path: path) }
    ) throws(StoreFileError) {
        try? Syscall.chmod(scratch, 0o600)
        do {
            let fd = try Syscall.open(scratch, O_RDONLY)
            defer { Syscall.close(fd) }
            try sync(fd, scratch)
        } catch {
            remove(scratch)
            throw .inaccessible(path: scratch, operation: error.operation, errno: error.errno.rawValue)
        }
        do {
            try Syscall.rename(scratch, path)
        } catch {
            remove(scratch)
            throw .inaccessible(path: path, operation: "rename", errno: error.errno.rawValue)
        }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let directoryPath = directory.isEmpty ? "/" : directory
        do {
            let directoryFD = try Syscall.open(directoryPath, O_RDONLY | O_DIRECTORY)
            defer { Syscall.close(directoryFD) }
            try sync(directoryFD, directoryPath)
        } catch {
            throw .inaccessible(path: directoryPath, operation: error.operation, errno: error.errno.rawValue)
        }
    }
}
