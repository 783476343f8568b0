#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkSystem

/// Where a store's files live: the file system, for the few calls ``StoreFile`` makes on its
/// own (through ``FileProbe``), and the SQLite VFS its connections open through.
///
/// The daemons use the system's (``Syscall`` and SQLite's default VFS). The simulator binds
/// another, an in-memory file system and a VFS registered on it, around a store's opening
/// with `StoreStorage.$current.withValue(_:operation:)`; a connection keeps the VFS it was
/// opened with.
package struct StoreStorage: Sendable {
    /// The file calls of ``FileProbe``.
    package var files: any StoreFileSystem
    /// The name of a registered VFS (`sqlite3_vfs_register`), or nil for SQLite's default.
    package var vfsName: String?

    package init(files: any StoreFileSystem, vfsName: String?) {
        self.files = files
        self.vfsName = vfsName
    }

    /// The system's file system and SQLite's default VFS.
    package static let system = StoreStorage(files: SystemStoreFileSystem(), vfsName: nil)

    /// The storage stores open on in this task (or thread).
    @TaskLocal package static var current: StoreStorage = .system
}

/// The file calls ``FileProbe`` makes, with the semantics of the system calls of their names.
package protocol StoreFileSystem: Sendable {
    /// `lstat(2)`: nil when nothing is at `path`.
    func lstat(_ path: String) throws(SystemError) -> FileInfo?
    /// `open(2)` without `O_CREAT`.
    func open(_ path: String, _ flags: Int32) throws(SystemError) -> Int32
    func close(_ fd: Int32)
    /// `read(2)` on a descriptor `open` returned.
    func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, path: String) throws(SystemError) -> Int
    /// `fsync(2)`: of a file, its data; of a directory, its entries.
    func fsync(_ fd: Int32, path: String) throws(SystemError)
    func chmod(_ path: String, _ mode: mode_t) throws(SystemError)
    func unlink(_ path: String) throws(SystemError)
    func rename(_ from: String, _ to: String) throws(SystemError)
}

/// ``StoreFileSystem`` on the system's calls (``Syscall``).
package struct SystemStoreFileSystem: StoreFileSystem {
    package init() {}
    package func lstat(_ path: String) throws(SystemError) -> FileInfo? { try Syscall.lstat(path) }
    package func open(_ path: String, _ flags: Int32) throws(SystemError) -> Int32 { try Syscall.open(path, flags) }
    package func close(_ fd: Int32) { Syscall.close(fd) }
    package func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, path: String) throws(SystemError) -> Int {
        try Syscall.readBlocking(fd, buffer, count, path: path)
    }
    package func fsync(_ fd: Int32, path: String) throws(SystemError) { try Syscall.fsync(fd, path: path) }
    package func chmod(_ path: String, _ mode: mode_t) throws(SystemError) { try Syscall.chmod(path, mode) }
    package func unlink(_ path: String) throws(SystemError) { try Syscall.unlink(path) }
    package func rename(_ from: String, _ to: String) throws(SystemError) { try Syscall.rename(from, to) }
}
