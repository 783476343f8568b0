import CSQLite
import LinkStore

/// A node's store in a world on SQLite: the daemon's ``DeliveryStore``, opened as the daemon
/// opens it (`DeliveryStore(path:)`, its defaults) on the node's ``SimDisk`` through
/// ``SimVFS``. The first open creates the file through ``StoreFile`` and ``FileProbe`` on the
/// disk.
///
/// A process's death abandons the connection (nothing of it is closed, checkpointed or
/// written after the death); the next start opens the file as the disk then has it. After
/// each commit and open, the committed state is read back into `mirror`, the ``ModelStore``
/// the checks read.
final class SimSQLiteStore: DurableStore {
    let disk: SimDisk
    let path: String
    let mirror: ModelStore
    private var store: DeliveryStore?
    /// Decides, at each commit, whether the process dies around it (as ``ModelStore``'s).
    var commitHook: () -> ModelStore.CommitOutcome = { .proceed }
    /// Asked when a commit is to die before it is durable: whether the death is a power cut.
    /// Then SQLite writes the commit and the process dies in its `fsync` (the frames are in
    /// the WAL, not on the disk); otherwise it dies before writing.
    var diesInTheCommitsSync: () -> Bool = { false }
    /// Whether the disk fails `fsync`s in the first process (for the world's choice of a
    /// power cut).
    var diskFails = false
    /// Whether this process created the database file.
    private(set) var createdInThisProcess = false

    init(path: String, disk: SimDisk, mirror: ModelStore) {
        self.path = path
        self.disk = disk
        self.mirror = mirror
    }

    deinit {
        // The world is over: the connection is abandoned as at a death, not closed on the disk.
        disk.processDied(powerCut: false)
        store?.close()
    }

    /// Opens the store as the daemon does, on the disk.
    func open() throws {
        let path = self.path
        let store = try StoreStorage.$current.withValue(disk.storage) { try DeliveryStore(path: path) }
        self.store = store
        if case .created = store.openOutcome { createdInThisProcess = true }
        refreshMirror()
    }

    /// The process died (or exited after a failed start): with `powerCut`, the disk keeps only
    /// what was synced.
    func processDied(powerCut: Bool) {
        disk.processDied(powerCut: powerCut)
        // Every call of the dead connection now fails on the disk: closing it frees its memory
        // and writes nothing.
        store?.close()
        store = nil
        createdInThisProcess = false
    }

    private func opened(_ operation: String) throws(SQLiteError) -> DeliveryStore {
        guard let store else {
            throw SQLiteError(extendedCode: SQLITE_MISUSE, message: "the store is not open", operation: operation, path: path)
        }
        return store
    }

    private func refreshMirror() {
        guard let store, let state = try? store.load(), let delivered = try? store.deliveredItems(after: 0, limit: Int.max) else { return }
        mirror.mirror(committed: state, delivered: delivered)
    }

    // MARK: - DurableStore

    var inTransaction: Bool { store?.inTransaction ?? false }

    func apply(_ operation: DurableOperation) throws(SQLiteError) {
        try opened("apply").apply(operation)
    }

    func commit() throws(SQLiteError) {
        let store = try opened("commit")
        guard store.inTransaction else { return try store.commit() }
        switch commitHook() {
        case .crashBefore:
            if diesInTheCommitsSync() {
                disk.failsNextJournalSync = true
                try? store.commit()
                disk.failsNextJournalSync = false
            }
            store.rollback()
        case .proceed, .crashAfter:
            try store.commit()
            refreshMirror()
        }
    }

    func rollback() { store?.rollback() }

    func load() throws(SQLiteError) -> DurableState { try opened("load").load() }

    func deliveredItems(after seq: UInt64, limit: Int) throws(SQLiteError) -> [InboxItem] {
        try opened("deliveredItems").deliveredItems(after: seq, limit: limit)
    }

    func pruneDelivered(keeping count: Int) throws(SQLiteError) {
        try opened("pruneDelivered").pruneDelivered(keeping: count)
    }

    func close() {
        store?.close()
        store = nil
    }
}
