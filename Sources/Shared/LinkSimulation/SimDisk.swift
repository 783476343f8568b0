#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import LinkStore
import LinkSystem

/// The file system one node's store lives on in a world on SQLite: files and directory
/// entries in memory, each with the state that survives a power cut beside the state a
/// running system sees.
///
/// - A file's data reaches the disk only through an `fsync` of it that succeeds; a power cut
///   brings every file back to its data as of its last such `fsync` (empty if none).
/// - A directory entry (a file created, renamed, removed) reaches the disk only through an
///   `fsync` of its directory that succeeds (POSIX asks for it, `fsync(2)`: "an explicit
///   fsync() on a file descriptor for the directory is also needed"); a power cut brings the
///   entries back to those of the last one.
/// - A SIGKILL keeps everything; the process's locks and its WAL shared memory go with it.
/// - An `fsync` may fail (EIO, as `fault` decides): nothing of it reaches the disk.
///
/// ``FileProbe``'s calls come here through ``StoreFileSystem`` and SQLite's through the VFS
/// registered for this disk (``SimVFS``). One process of the node at a time uses it.
final class SimDisk: StoreFileSystem, @unchecked Sendable {
    /// What an `fsync` is of, for the fault that may fail it.
    enum SyncTarget {
        /// A main database file (opened by SQLite as one, or the same file by another name).
        case database
        /// A WAL, rollback journal or temporary file.
        case journal
        case directory
    }

    /// A file's bytes in pages (copied on write, so that a snapshot costs one reference a page).
    struct Data: Equatable {
        static let pageSize = 4096
        private(set) var pages: [[UInt8]] = []
        private(set) var size = 0

        /// Calls `body` with each page's part of `count` bytes from `offset`: the page, where
        /// in it the part starts, the bytes before the part, and its length.
        private static func forEachSpan(offset: Int, count: Int, _ body: (_ page: Int, _ within: Int, _ done: Int, _ length: Int) -> Void) {
            var done = 0
            while done < count {
                let position = offset + done
                let within = position % pageSize
                let length = min(count - done, pageSize - within)
                body(position / pageSize, within, done, length)
                done += length
            }
        }

        func read(into buffer: UnsafeMutableRawPointer, count: Int, at offset: Int) -> Int {
            let available = max(0, min(count, size - offset))
            Self.forEachSpan(offset: offset, count: available) { page, within, done, length in
                pages[page].withUnsafeBytes { source in
                    (buffer + done).copyMemory(from: source.baseAddress! + within, byteCount: length)
                }
            }
            return available
        }

        mutating func write(_ buffer: UnsafeRawPointer, count: Int, at offset: Int) {
            let end = offset + count
            while pages.count * Self.pageSize < end { pages.append([UInt8](repeating: 0, count: Self.pageSize)) }
            Self.forEachSpan(offset: offset, count: count) { page, within, done, length in
                pages[page].withUnsafeMutableBytes { target in
                    (target.baseAddress! + within).copyMemory(from: buffer + done, byteCount: length)
                }
            }
            size = max(size, end)
        }

        mutating func truncate(to newSize: Int) {
            if newSize < size {
                let kept = (newSize + Self.pageSize - 1) / Self.pageSize
                pages.removeLast(pages.count - kept)
                if newSize % Self.pageSize != 0 {
                    let within = newSize % Self.pageSize
                    pages[kept - 1].withUnsafeMutableBytes { page in
                        _ = (page.baseAddress! + within).initializeMemory(as: UInt8.self, repeating: 0, count: Self.pageSize - within)
                    }
                }
                size = newSize
            } else if newSize > size {
                while pages.count * Self.pageSize < newSize { pages.append([UInt8](repeating: 0, count: Self.pageSize)) }
                size = newSize
            }
        }

        /// The bytes from `offset` (for tests and traces).
        func bytes(from offset: Int = 0, count: Int) -> [UInt8] {
            var result = [UInt8](repeating: 0, count: max(0, min(count, size - offset)))
            result.withUnsafeMutableBytes { _ = read(into: $0.baseAddress!, count: $0.count, at: offset) }
            return result
        }
    }

    /// A file: what a running system reads, and what is on the disk.
    final class Inode {
        var data = Data()
        var durable = Data()
        /// Opened by SQLite as a main database (its `fsync`s are ``SyncTarget/database``).
        var isDatabase = false
        /// The locks of SQLite's connections on it, in this process.
        var shared = 0
        var reserved: ObjectIdentifier?
        var pending: ObjectIdentifier?
        var exclusive: ObjectIdentifier?
    }

    /// The WAL index of one database, in the memory of the process (SQLite's `-shm`), while a
    /// connection maps it.
    final class SharedMemory {
        var mappers = 0
        var regions: [UnsafeMutableRawPointer] = []
        var regionSize = 0
        var shared = [Int](repeating: 0, count: 8)
        var exclusive = [ObjectIdentifier?](repeating: nil, count: 8)

        deinit {
            for region in regions { region.deallocate() }
        }
    }

    /// The directories (made at the start, never removed).
    private let directories: Set<String>
    private(set) var entries: [String: Inode] = [:]
    private var durableEntries: [String: Inode] = [:]
    private var descriptors: [Int32: (path: String, inode: Inode?, offset: Int)] = [:]
    private var nextDescriptor: Int32 = 3
    /// WAL indexes by database file.
    var sharedMemory: [ObjectIdentifier: SharedMemory] = [:]
    /// Counts the processes that used the disk: a handle of an earlier one is dead.
    private(set) var process = 0
    /// Decides whether an `fsync` fails (EIO).
    var fault: (SyncTarget) -> Bool = { _ in false }
    /// Set while a commit is to die in its `fsync`: the next one of a WAL or journal fails.
    var failsNextJournalSync = false
    /// Bytes for SQLite's `xRandomness`, and the time for its `xCurrentTime` (Unix seconds).
    var randomBytes: (Int) -> [UInt8] = { [UInt8](repeating: 0, count: $0) }
    var now: () -> Double = { 0 }
    /// Sees every `fsync` that failed and every file that the last power cut changed.
    var trace: (String) -> Void = { _ in }
    /// Set by the last power cut: unsynced WAL frames were lost.
    private(set) var lostWALFrames = false
    /// The VFS registered for this disk.
    private(set) var vfs: SimVFS!

    init(directory: String) {
        directories = [directory]
        vfs = SimVFS(disk: self)
    }

    /// ``StoreStorage`` on this disk: ``FileProbe`` and SQLite's connections use it.
    var storage: StoreStorage { StoreStorage(files: self, vfsName: vfs.name) }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }

    // MARK: - The process and the power

    /// The process using the disk died (or exited): its handles are dead from now on, its
    /// locks and shared memory gone. With `powerCut`, the disk keeps only what was synced.
    func processDied(powerCut: Bool) {
        process += 1
        sharedMemory.removeAll()
        descriptors.removeAll()
        for inode in entries.values {
            inode.shared = 0
            inode.reserved = nil
            inode.pending = nil
            inode.exclusive = nil
        }
        lostWALFrames = false
        guard powerCut else { return }
        for (path, inode) in entries.sorted(by: { $0.key < $1.key }) where inode.data != inode.durable || durableEntries[path] !== inode {
            trace("power cut: \(path) \(durableEntries[path] === inode ? "\(inode.data.size) -> \(inode.durable.size) bytes" : "gone")")
            if path.hasSuffix("-wal"), inode.data != inode.durable { lostWALFrames = true }
        }
        entries = durableEntries
        for inode in entries.values {
            inode.data = inode.durable
        }
    }

    /// Whether a handle opened in process `process` belongs to a dead one.
    func isDead(_ process: Int) -> Bool { process != self.process }

    // MARK: - Files

    func exists(_ path: String) -> Bool { entries[path] != nil || directories.contains(path) }

    func create(_ path: String) -> Inode? {
        guard directories.contains(Self.directory(of: path)) else { return nil }
        let inode = Inode()
        entries[path] = inode
        return inode
    }

    /// `fsync` of a file: its data is on the disk, unless the fault fails it.
    func sync(_ inode: Inode, as target: SyncTarget, path: String) -> Bool {
        if target == .journal, failsNextJournalSync {
            failsNextJournalSync = false
            trace("the process dies in fsync(\(path))")
            return false
        }
        if fault(target) {
            trace("fsync(\(path)) fails: EIO")
            return false
        }
        inode.durable = inode.data
        return true
    }

    /// `fsync` of a directory: its entries are on the disk, unless the fault fails it.
    func syncDirectory(_ directory: String) -> Bool {
        if fault(.directory) {
            trace("fsync(\(directory)) fails: EIO")
            return false
        }
        for path in Set(durableEntries.keys).union(entries.keys) where Self.directory(of: path) == directory {
            durableEntries[path] = entries[path]
        }
        return true
    }

    // MARK: - StoreFileSystem

    private func error(_ operation: String, _ code: Int32, _ path: String) -> SystemError {
        SystemError(operation: operation, errno: Errno(rawValue: code), path: path)
    }

    func lstat(_ path: String) throws(SystemError) -> FileInfo? {
        var info = FileInfo()
        if directories.contains(path) {
            info.st_mode = S_IFDIR | 0o700
        } else if let inode = entries[path] {
            info.st_mode = S_IFREG | 0o600
            info.st_size = off_t(inode.data.size)
        } else {
            return nil
        }
        return info
    }

    func open(_ path: String, _ flags: Int32) throws(SystemError) -> Int32 {
        let inode = entries[path]
        guard inode != nil || directories.contains(path) else { throw error("open", ENOENT, path) }
        if flags & O_DIRECTORY != 0, inode != nil { throw error("open", ENOTDIR, path) }
        let fd = nextDescriptor
        nextDescriptor += 1
        descriptors[fd] = (path, inode, 0)
        return fd
    }

    func close(_ fd: Int32) { descriptors[fd] = nil }

    func read(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int, path: String) throws(SystemError) -> Int {
        guard let descriptor = descriptors[fd] else { throw error("read", EBADF, path) }
        guard let inode = descriptor.inode else { throw error("read", EISDIR, path) }
        let got = inode.data.read(into: buffer, count: count, at: descriptor.offset)
        descriptors[fd]?.offset += got
        return got
    }

    func fsync(_ fd: Int32, path: String) throws(SystemError) {
        guard let descriptor = descriptors[fd] else { throw error("fsync", EBADF, path) }
        let synced =
            if let inode = descriptor.inode {
                sync(inode, as: inode.isDatabase ? .database : .journal, path: descriptor.path)
            } else {
                syncDirectory(descriptor.path)
            }
        if !synced { throw error("fsync", EIO, path) }
    }

    func chmod(_ path: String, _ mode: mode_t) throws(SystemError) {
        guard exists(path) else { throw error("chmod", ENOENT, path) }
    }

    func unlink(_ path: String) throws(SystemError) {
        guard entries.removeValue(forKey: path) != nil else { throw error("unlink", ENOENT, path) }
    }

    func rename(_ from: String, _ to: String) throws(SystemError) {
        guard let inode = entries.removeValue(forKey: from) else { throw error("rename", ENOENT, from) }
        entries[to] = inode
    }
}
