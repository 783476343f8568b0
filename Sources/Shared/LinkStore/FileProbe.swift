#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkSystem

/// The file calls ``StoreFile`` makes on its own, on the file system of
/// ``StoreStorage/current`` (``Syscall`` for the daemons), with failures named as
/// ``StoreFileError``s.
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
            found = try StoreStorage.current.files.lstat(path)
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
        let files = StoreStorage.current.files
        do {
            let fd = try files.open(path, O_RDONLY | O_NOFOLLOW)
            defer { files.close(fd) }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: count, alignment: 1)
            defer { buffer.deallocate() }
            var filled = 0
            while filled < count {
                let got = try files.read(fd, buffer.baseAddress! + filled, count - filled, path: path)
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
        try? StoreStorage.current.files.unlink(path)
    }

    /// Makes `scratch` private and durable, then renames it to `path` and syncs the directory.
    /// A failed sync is an error (the new file, or its name, may not survive a power cut):
    /// before the rename, `scratch` is removed and `path` never appears.
    static func publish(
        _ scratch: String, as path: String,
        sync: (Int32, String) throws(SystemError) -> Void = { fd, path throws(SystemError) in
            try StoreStorage.current.files.fsync(fd, path: path)
        }
    ) throws(StoreFileError) {
        let files = StoreStorage.current.files
        try? files.chmod(scratch, 0o600)
        do {
            let fd = try files.open(scratch, O_RDONLY)
            defer { files.close(fd) }
            try sync(fd, scratch)
        } catch {
            remove(scratch)
            throw .inaccessible(path: scratch, operation: error.operation, errno: error.errno.rawValue)
        }
        do {
            try files.rename(scratch, path)
        } catch {
            remove(scratch)
            throw .inaccessible(path: path, operation: "rename", errno: error.errno.rawValue)
        }
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { String(path[..<$0]) } ?? "."
        let directoryPath = directory.isEmpty ? "/" : directory
        do {
            let directoryFD = try files.open(directoryPath, O_RDONLY | O_DIRECTORY)
            defer { files.close(directoryFD) }
            try sync(directoryFD, directoryPath)
        } catch {
            throw .inaccessible(path: directoryPath, operation: error.operation, errno: error.errno.rawValue)
        }
    }
}
