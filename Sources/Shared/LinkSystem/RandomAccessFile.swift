#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSystem

/// An open file read and written at explicit offsets (`pread`/`pwrite`) or from its current
/// position, for the file transfers. Every call retries on `EINTR` and throws a
/// ``SystemError`` naming the path. The descriptor is closed by ``close()`` or when the
/// value goes away.
public final class RandomAccessFile {
    /// How to open a file.
    public enum Mode: Sendable {
        /// Read only. A FIFO or device does not block the open; check ``isRegularFile``.
        case read
        /// Read and write, creating the file (mode 0600) when it is missing.
        case readWrite
        /// Write a new file (mode 0600); an existing one is an error (`EEXIST`).
        case createNew
    }

    public let path: String
    public private(set) var fd: Int32

    /// Opens `path`.
    public init(path: String, mode: Mode) throws(SystemError) {
        self.path = path
        switch mode {
        case .read: fd = try Syscall.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY)
        case .readWrite: fd = try Syscall.open(path, O_RDWR | O_CREAT | O_NOFOLLOW, 0o600)
        case .createNew: fd = try Syscall.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o600)
        }
    }

    deinit {
        close()
    }

    /// Closes the descriptor; later calls fail with `EBADF`.
    public func close() {
        guard fd >= 0 else { return }
        Syscall.close(fd)
        fd = -1
    }

    /// Whether the open file is a regular file (not a directory, FIFO, socket or device).
    public var isRegularFile: Bool {
        get throws(SystemError) { wl_s_isreg(try Syscall.fstat(fd, path: path).st_mode) != 0 }
    }

    /// The file's size now.
    public func size() throws(SystemError) -> UInt64 {
        UInt64(max(0, try Syscall.fstat(fd, path: path).st_size))
    }

    /// Reads from the current position into `buffer`: the count read, 0 at the end.
    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return 0 }
        return try Syscall.readBlocking(fd, base, buffer.count, path: path)
    }

    /// Fills `buffer` from `offset` on, stopping early only at the end of the file: the count read.
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(SystemError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let position = off_t(offset) + off_t(done)
            let fd = self.fd
            let count = buffer.count - done
            let n = try Syscall.pread(fd, base + done, count, Int64(position), path: path)
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Writes all of `bytes` at `offset`.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(SystemError) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let position = off_t(offset) + off_t(done)
            let fd = self.fd
            let count = bytes.count - done
            done += try Syscall.pwrite(fd, base + done, count, Int64(position), path: path)
        }
    }

    /// Writes all of `bytes` at the current position.
    public func write(_ bytes: UnsafeRawBufferPointer) throws(SystemError) {
        try Syscall.writeAll(fd, bytes, path: path)
    }

    /// Sets the file's length to `length`, dropping or zero-filling its end.
    public func truncate(to length: UInt64) throws(SystemError) {
        try Syscall.ftruncate(fd, Int64(length), path: path)
    }

    /// Makes the file's data durable (`fdatasync` on Linux, `fsync` elsewhere).
    public func synchronizeData() throws(SystemError) {
        #if os(Linux)
        let fd = self.fd
        _ = try Syscall.retrying("fdatasync", path: path) { system_fdatasync(fd) }
        #else
        try Syscall.fsync(fd, path: path)
        #endif
    }

    /// Makes the file's data and metadata durable (`fsync`).
    public func synchronize() throws(SystemError) {
        try Syscall.fsync(fd, path: path)
    }
}

@available(*, unavailable)
extension RandomAccessFile: Sendable {}

extension FileSystem {
    /// Renames `from` to `to`, replacing what is at `to`.
    public static func rename(_ from: String, to: String) throws(SystemError) {
        try Syscall.rename(from, to)
    }

    /// Deletes the file at `path`; `false` when there was none.
    @discardableResult
    public static func removeFile(_ path: String) throws(SystemError) -> Bool {
        do {
            try Syscall.unlink(path)
            return true
        } catch {
            if error.errno == .noSuchFileOrDirectory { return false }
            throw error
        }
    }

    /// Makes the entries of directory `path` durable (after a file was created, renamed or
    /// removed in it).
    public static func synchronizeDirectory(_ path: String) throws(SystemError) {
        let fd = try Syscall.open(path, O_RDONLY | O_DIRECTORY)
        defer { Syscall.close(fd) }
        try Syscall.fsync(fd, path: path)
    }

    /// The size of the regular file at `path`; nil when there is none.
    public static func regularFileSize(_ path: String) -> UInt64? {
        guard let info = try? Syscall.lstat(path), wl_s_isreg(info.st_mode) != 0 else { return nil }
        return UInt64(max(0, info.st_size))
    }
}

extension Errno {
    /// Whether the error means the disk, a quota or a file-size limit is full.
    public var isNoSpace: Bool {
        self == .noSpace || rawValue == EFBIG || rawValue == EDQUOT
    }
}
