#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite

/// An SQLite VFS whose files live on a ``SimDisk``, registered under its own name
/// (`sqlite3_vfs_register`) for as long as the disk lives.
///
/// It does what SQLite's unix VFS does where that matters to durability: `xSync` syncs the
/// file, and the first `xSync` of a WAL or rollback journal that was opened to be created
/// also syncs its directory (the unix VFS's `UNIXFILE_DIRSYNC`), ignoring a failure of that
/// as the unix VFS does; `xDelete` syncs the directory when asked to; `xAccess` finds an
/// empty file missing. Locks and the WAL index (`xShm*`) are in the memory of the process,
/// as one process of the node uses the store: a process's death drops them. `xRandomness`
/// and `xCurrentTime` come from the world.
final class SimVFS {
    let name: String
    private let vfs: UnsafeMutablePointer<sqlite3_vfs>
    private let cName: UnsafeMutablePointer<CChar>

    init(disk: SimDisk) {
        vfs = .allocate(capacity: 1)
        name = "watchlink-sim-\(UInt(bitPattern: vfs))"
        cName = name.withCString { strdup($0)! }
        vfs.initialize(to: sqlite3_vfs())
        vfs.pointee.iVersion = 1
        vfs.pointee.szOsFile = Int32(SimVFSFile.fileStructSize)
        vfs.pointee.mxPathname = 512
        vfs.pointee.zName = UnsafePointer(cName)
        vfs.pointee.pAppData = Unmanaged.passUnretained(disk).toOpaque()
        vfs.pointee.xOpen = { vfs, name, file, flags, outFlags in
            SimVFSFile.open(SimVFS.disk(vfs), name.map { String(cString: $0) }, file!, flags, outFlags)
        }
        vfs.pointee.xDelete = { vfs, name, syncDirectory in
            let disk = SimVFS.disk(vfs)
            let path = String(cString: name!)
            guard (try? disk.unlink(path)) != nil else { return IOError.deleteNoent }
            if syncDirectory != 0, !disk.syncDirectory(SimDisk.directory(of: path)) { return IOError.dirFsync }
            return SQLITE_OK
        }
        vfs.pointee.xAccess = { vfs, name, flags, result in
            let disk = SimVFS.disk(vfs)
            let path = String(cString: name!)
            // As the unix VFS: an empty file is not there (SQLITE_ACCESS_EXISTS).
            let found = disk.entries[path].map { flags != SQLITE_ACCESS_EXISTS || $0.data.size > 0 } ?? disk.exists(path)
            result!.pointee = found ? 1 : 0
            return SQLITE_OK
        }
        vfs.pointee.xFullPathname = { _, name, count, output in
            let length = strlen(name!)
            guard length < Int(count) else { return SQLITE_CANTOPEN }
            strcpy(output!, name!)
            return SQLITE_OK
        }
        vfs.pointee.xRandomness = { vfs, count, output in
            let bytes = SimVFS.disk(vfs).randomBytes(Int(count))
            for (index, byte) in bytes.enumerated() { output![index] = CChar(bitPattern: byte) }
            return count
        }
        vfs.pointee.xSleep = { _, microseconds in microseconds }
        vfs.pointee.xCurrentTime = { vfs, time in
            time!.pointee = 2_440_587.5 + SimVFS.disk(vfs).now() / 86_400
            return SQLITE_OK
        }
        vfs.pointee.xGetLastError = { _, _, _ in 0 }
        sqlite3_vfs_register(vfs, 0)
    }

    deinit {
        sqlite3_vfs_unregister(vfs)
        vfs.deallocate()
        free(cName)
    }

    fileprivate static func disk(_ vfs: UnsafeMutablePointer<sqlite3_vfs>?) -> SimDisk {
        Unmanaged<SimDisk>.fromOpaque(vfs!.pointee.pAppData).takeUnretainedValue()
    }
}

/// One open file of ``SimVFS``: SQLite's `sqlite3_file` holds the methods and, after them, a
/// retained reference to this.
private final class SimVFSFile {
    /// `sqlite3_file` (the methods' pointer) and the reference.
    static let fileStructSize = MemoryLayout<sqlite3_file>.stride + MemoryLayout<UnsafeMutableRawPointer>.stride

    let disk: SimDisk
    let inode: SimDisk.Inode
    let path: String
    /// The disk's process when this was opened: a dead process's handle does nothing.
    let process: Int
    let deleteOnClose: Bool
    /// The first `xSync` also syncs the directory (a WAL or journal opened to be created).
    var syncsDirectory: Bool
    var lockLevel = SQLITE_LOCK_NONE
    var memory: SimDisk.SharedMemory?
    var sharedLocks: UInt8 = 0
    var exclusiveLocks: UInt8 = 0

    init(disk: SimDisk, inode: SimDisk.Inode, path: String, deleteOnClose: Bool, syncsDirectory: Bool) {
        self.disk = disk
        self.inode = inode
        self.path = path
        self.process = disk.process
        self.deleteOnClose = deleteOnClose
        self.syncsDirectory = syncsDirectory
    }

    var isDead: Bool { disk.isDead(process) }

    static func open(
        _ disk: SimDisk, _ name: String?, _ file: UnsafeMutablePointer<sqlite3_file>, _ flags: Int32,
        _ outFlags: UnsafeMutablePointer<Int32>?
    ) -> Int32 {
        file.pointee.pMethods = nil
        let inode: SimDisk.Inode
        let path: String
        if let name {
            path = name
            if let existing = disk.entries[name] {
                if flags & SQLITE_OPEN_EXCLUSIVE != 0 { return SQLITE_CANTOPEN }
                inode = existing
            } else {
                guard flags & SQLITE_OPEN_CREATE != 0, let created = disk.create(name) else { return SQLITE_CANTOPEN }
                inode = created
            }
        } else {
            path = "(temporary)"
            inode = SimDisk.Inode()
        }
        if flags & SQLITE_OPEN_MAIN_DB != 0 { inode.isDatabase = true }
        let journal = SQLITE_OPEN_MAIN_JOURNAL | SQLITE_OPEN_WAL | SQLITE_OPEN_SUPER_JOURNAL
        let handle = SimVFSFile(
            disk: disk, inode: inode, path: path, deleteOnClose: name != nil && flags & SQLITE_OPEN_DELETEONCLOSE != 0,
            syncsDirectory: flags & SQLITE_OPEN_CREATE != 0 && flags & journal != 0)
        let reference = UnsafeMutableRawPointer(file) + MemoryLayout<sqlite3_file>.stride
        reference.storeBytes(of: Unmanaged.passRetained(handle).toOpaque(), as: UnsafeMutableRawPointer.self)
        file.pointee.pMethods = UnsafePointer(methods)
        outFlags?.pointee = flags
        return SQLITE_OK
    }

    static func handle(_ file: UnsafeMutablePointer<sqlite3_file>?) -> SimVFSFile {
        let reference = UnsafeMutableRawPointer(file!) + MemoryLayout<sqlite3_file>.stride
        return Unmanaged<SimVFSFile>.fromOpaque(reference.load(as: UnsafeMutableRawPointer.self)).takeUnretainedValue()
    }

    // MARK: - Locks (in the process)

    func lock(_ level: Int32) -> Int32 {
        guard !isDead else { return IOError.lock }
        guard level > lockLevel else { return SQLITE_OK }
        let me = ObjectIdentifier(self)
        switch level {
        case SQLITE_LOCK_SHARED:
            if let owner = inode.pending ?? inode.exclusive, owner != me { return SQLITE_BUSY }
            inode.shared += 1
        case SQLITE_LOCK_RESERVED:
            if let owner = inode.reserved, owner != me { return SQLITE_BUSY }
            inode.reserved = me
        default:
            if let owner = inode.pending ?? inode.exclusive, owner != me { return SQLITE_BUSY }
            inode.pending = me
            if inode.shared > 1 {
                lockLevel = SQLITE_LOCK_PENDING
                return SQLITE_BUSY
            }
            inode.exclusive = me
        }
        lockLevel = level
        return SQLITE_OK
    }

    func unlock(_ level: Int32) -> Int32 {
        guard !isDead else {
            lockLevel = level
            return SQLITE_OK
        }
        guard level < lockLevel else { return SQLITE_OK }
        let me = ObjectIdentifier(self)
        if inode.pending == me { inode.pending = nil }
        if inode.exclusive == me { inode.exclusive = nil }
        if level < SQLITE_LOCK_RESERVED, inode.reserved == me { inode.reserved = nil }
        if level == SQLITE_LOCK_NONE, lockLevel >= SQLITE_LOCK_SHARED { inode.shared -= 1 }
        lockLevel = level
        return SQLITE_OK
    }

    // MARK: - The WAL index

    func mapShared(region: Int, size: Int, extend: Bool, into pointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>) -> Int32 {
        pointer.pointee = nil
        guard !isDead else { return IOError.shmmap }
        let memory: SimDisk.SharedMemory
        if let attached = self.memory {
            memory = attached
        } else {
            let id = ObjectIdentifier(inode)
            memory = disk.sharedMemory[id] ?? SimDisk.SharedMemory()
            disk.sharedMemory[id] = memory
            memory.mappers += 1
            self.memory = memory
        }
        if memory.regionSize == 0 { memory.regionSize = size }
        while memory.regions.count <= region {
            guard extend else { return SQLITE_OK }
            let new = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
            new.initializeMemory(as: UInt8.self, repeating: 0, count: size)
            memory.regions.append(new)
        }
        pointer.pointee = memory.regions[region]
        return SQLITE_OK
    }

    func lockShared(offset: Int, count: Int, flags: Int32) -> Int32 {
        guard let memory else { return isDead ? SQLITE_OK : IOError.shmlock }
        let me = ObjectIdentifier(self)
        let range = offset..<(offset + count)
        if flags & SQLITE_SHM_UNLOCK != 0 {
            for slot in range {
                let bit = UInt8(1) << slot
                if exclusiveLocks & bit != 0 {
                    memory.exclusive[slot] = nil
                    exclusiveLocks &= ~bit
                }
                if sharedLocks & bit != 0 {
                    memory.shared[slot] -= 1
                    sharedLocks &= ~bit
                }
            }
            return SQLITE_OK
        }
        guard !isDead else { return IOError.shmlock }
        if flags & SQLITE_SHM_SHARED != 0 {
            for slot in range where sharedLocks & (UInt8(1) << slot) == 0 {
                if let owner = memory.exclusive[slot], owner != me { return SQLITE_BUSY }
            }
            for slot in range where sharedLocks & (UInt8(1) << slot) == 0 {
                memory.shared[slot] += 1
                sharedLocks |= UInt8(1) << slot
            }
        } else {
            for slot in range {
                if let owner = memory.exclusive[slot], owner != me { return SQLITE_BUSY }
                let mine = sharedLocks & (UInt8(1) << slot) != 0 ? 1 : 0
                if memory.shared[slot] > mine { return SQLITE_BUSY }
            }
            for slot in range {
                memory.exclusive[slot] = me
                exclusiveLocks |= UInt8(1) << slot
            }
        }
        return SQLITE_OK
    }

    /// The last connection to unmap the WAL index drops it, as the unix VFS does: the next
    /// one to map it starts from an empty index and rebuilds it from the WAL (the unix VFS
    /// truncates the `-shm` file when it is the first to open it).
    func unmapShared(delete: Bool) -> Int32 {
        guard let memory else { return SQLITE_OK }
        _ = lockShared(offset: 0, count: 8, flags: SQLITE_SHM_UNLOCK)
        self.memory = nil
        memory.mappers -= 1
        if memory.mappers == 0, !isDead, disk.sharedMemory[ObjectIdentifier(inode)] === memory {
            disk.sharedMemory[ObjectIdentifier(inode)] = nil
        }
        return SQLITE_OK
    }

    // MARK: - The methods

    nonisolated(unsafe) static let methods: UnsafeMutablePointer<sqlite3_io_methods> = {
        let methods = UnsafeMutablePointer<sqlite3_io_methods>.allocate(capacity: 1)
        methods.initialize(to: sqlite3_io_methods())
        methods.pointee.iVersion = 2
        methods.pointee.xClose = { file in
            let reference = UnsafeMutableRawPointer(file!) + MemoryLayout<sqlite3_file>.stride
            let handle = Unmanaged<SimVFSFile>.fromOpaque(reference.load(as: UnsafeMutableRawPointer.self))
            let file = handle.takeUnretainedValue()
            _ = file.unmapShared(delete: false)
            _ = file.unlock(SQLITE_LOCK_NONE)
            if file.deleteOnClose, !file.isDead, file.disk.entries[file.path] === file.inode {
                try? file.disk.unlink(file.path)
            }
            handle.release()
            return SQLITE_OK
        }
        methods.pointee.xRead = { file, buffer, count, offset in
            let file = SimVFSFile.handle(file)
            guard !file.isDead else { return IOError.read }
            let got = file.inode.data.read(into: buffer!, count: Int(count), at: Int(offset))
            guard got == Int(count) else {
                (buffer! + got).initializeMemory(as: UInt8.self, repeating: 0, count: Int(count) - got)
                return IOError.shortRead
            }
            return SQLITE_OK
        }
        methods.pointee.xWrite = { file, buffer, count, offset in
            let file = SimVFSFile.handle(file)
            guard !file.isDead else { return IOError.write }
            file.inode.data.write(buffer!, count: Int(count), at: Int(offset))
            return SQLITE_OK
        }
        methods.pointee.xTruncate = { file, size in
            let file = SimVFSFile.handle(file)
            guard !file.isDead else { return IOError.truncate }
            file.inode.data.truncate(to: Int(size))
            return SQLITE_OK
        }
        methods.pointee.xSync = { file, _ in
            let file = SimVFSFile.handle(file)
            guard !file.isDead else { return IOError.fsync }
            guard file.disk.sync(file.inode, as: file.inode.isDatabase ? .database : .journal, path: file.path) else {
                return IOError.fsync
            }
            if file.syncsDirectory {
                // The unix VFS's unixSync: the directory's fsync once, its failure ignored.
                file.syncsDirectory = false
                _ = file.disk.syncDirectory(SimDisk.directory(of: file.path))
            }
            return SQLITE_OK
        }
        methods.pointee.xFileSize = { file, size in
            let file = SimVFSFile.handle(file)
            guard !file.isDead else { return IOError.fstat }
            size!.pointee = sqlite3_int64(file.inode.data.size)
            return SQLITE_OK
        }
        methods.pointee.xLock = { file, level in SimVFSFile.handle(file).lock(level) }
        methods.pointee.xUnlock = { file, level in SimVFSFile.handle(file).unlock(level) }
        methods.pointee.xCheckReservedLock = { file, result in
            let file = SimVFSFile.handle(file)
            result!.pointee = file.inode.reserved != nil && !file.isDead ? 1 : 0
            return SQLITE_OK
        }
        methods.pointee.xFileControl = { _, _, _ in SQLITE_NOTFOUND }
        methods.pointee.xSectorSize = { _ in 4096 }
        methods.pointee.xDeviceCharacteristics = { _ in SQLITE_IOCAP_POWERSAFE_OVERWRITE }
        methods.pointee.xShmMap = { file, region, size, extend, pointer in
            let pointer = UnsafeMutableRawPointer(pointer!).assumingMemoryBound(to: UnsafeMutableRawPointer?.self)
            return SimVFSFile.handle(file).mapShared(region: Int(region), size: Int(size), extend: extend != 0, into: pointer)
        }
        methods.pointee.xShmLock = { file, offset, count, flags in
            SimVFSFile.handle(file).lockShared(offset: Int(offset), count: Int(count), flags: flags)
        }
        methods.pointee.xShmBarrier = { _ in }
        methods.pointee.xShmUnmap = { file, delete in SimVFSFile.handle(file).unmapShared(delete: delete != 0) }
        return methods
    }()
}

/// SQLite's extended I/O error codes (`SQLITE_IOERR_*`, macros Swift does not import).
private enum IOError {
    static let read: Int32 = SQLITE_IOERR | (1 << 8)
    static let shortRead: Int32 = SQLITE_IOERR | (2 << 8)
    static let write: Int32 = SQLITE_IOERR | (3 << 8)
    static let fsync: Int32 = SQLITE_IOERR | (4 << 8)
    static let dirFsync: Int32 = SQLITE_IOERR | (5 << 8)
    static let truncate: Int32 = SQLITE_IOERR | (6 << 8)
    static let fstat: Int32 = SQLITE_IOERR | (7 << 8)
    static let lock: Int32 = SQLITE_IOERR | (15 << 8)
    static let shmlock: Int32 = SQLITE_IOERR | (20 << 8)
    static let shmmap: Int32 = SQLITE_IOERR | (21 << 8)
    static let deleteNoent: Int32 = SQLITE_IOERR | (23 << 8)
}
