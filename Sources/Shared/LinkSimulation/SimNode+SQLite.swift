import LinkSession
import LinkStore
import WireProtocol

/// A node of a world on SQLite: its store is the daemon's ``DeliveryStore`` on the node's
/// ``SimDisk``.
///
/// The disk's faults, in the node's first process only (the one whose start creates the
/// database): every `fsync` of its directory fails with EIO (drawn for one node in 2), and
/// every `fsync` of a main database file after the first 0, 1 (half the time) or 2 fails with
/// EIO (one node in 2: a disk that goes bad; creating the file syncs it three times: its
/// header, the checkpoint when the creating connection closes, and `FileProbe.publish`).
/// A WAL or journal never fails an `fsync` (a failed WAL sync at a commit is the
/// ``ModelStore``'s store fault). A start whose store does not open because of them exits,
/// and the daemon is started again (by launchd) a moment later; a store that does not open
/// otherwise is a failure of the world.
extension SimNode {
    func makeSQLiteStore() -> SimSQLiteStore {
        let disk = SimDisk(directory: "/state")
        let directoryFails = world.random.chance(0.5)
        // The database's fsyncs that succeed before the disk fails every later one.
        var databaseSyncsLeft = world.random.chance(0.5) ? [0, 1, 1, 2][world.random.int(0...3)] : Int.max
        disk.fault = { [unowned disk] target in
            guard disk.process == 0 else { return false }
            switch target {
            case .directory: return directoryFails
            case .database:
                guard databaseSyncsLeft > 0 else { return true }
                databaseSyncsLeft -= 1
                return false
            case .journal: return false
            }
        }
        disk.randomBytes = { [weak self] count in self?.world.random.bytes(count) ?? [UInt8](repeating: 0, count: count) }
        disk.now = { [weak self] in self.map { $0.world.wallClockBase + Double($0.world.now) / 1000 } ?? 0 }
        disk.trace = { [weak self] line in self?.world.trace("\(self?.role.name ?? "") disk: \(line)") }
        let sqlite = SimSQLiteStore(path: "/state/" + (role == .phone ? "phone.db" : "watch.db"), disk: disk, mirror: store)
        sqlite.diskFails = directoryFails || databaseSyncsLeft != Int.max
        sqlite.commitHook = store.commitHook
        sqlite.diesInTheCommitsSync = { [weak self] in
            guard let self else { return false }
            let powerCut = self.world.random.chance(0.5)
            self.dyingByPowerCut = powerCut
            return powerCut
        }
        return sqlite
    }

    /// Opens the store at a start; false when it did not open (the process exits).
    func open(_ sqlite: SimSQLiteStore) -> Bool {
        do {
            try sqlite.open()
            return true
        } catch {
            isUp = false
            sqlite.processDied(powerCut: false)
            if case StoreFileError.inaccessible = error {
                retryStart(after: error)
            } else if let error = error as? SQLiteError, error.extendedCode & 0xff == 10 {
                // SQLITE_IOERR: a failed fsync while creating the file.
                retryStart(after: error)
            } else {
                // A power cut keeps what was synced (docs/durability.md, "A power cut": the
                // daemon starts on what is on the disk without repair), and a commit is
                // synced: "With synchronous=FULL in WAL mode, an additional sync operation of
                // the WAL file happens after each transaction commit. The extra WAL sync
                // following each transaction helps ensure that transactions are durable
                // across a power loss" (sqlite.org/pragma.html#pragma_synchronous).
                world.history.fail("the \(role.name)'s store did not open after its last death: \(error)")
            }
            return false
        }
    }

    private func retryStart(after error: Error) {
        world.coverage.count(.storeDidNotOpen)
        world.trace("\(role.name) exits: the store did not open (\(error))")
        world.schedule(.restart(role), at: world.now + world.random.int64(1...500))
    }

    /// The process died: its connection is abandoned, and a power cut takes from the disk
    /// what was not synced.
    func sqliteProcessDied(powerCut: Bool) {
        guard let sqlite else { return }
        if powerCut, sqlite.createdInThisProcess { world.coverage.count(.powerCutAfterCreation) }
        sqlite.processDied(powerCut: powerCut)
        if sqlite.disk.lostWALFrames { world.coverage.count(.powerCutLostWALFrames) }
    }
}

extension SimWorld {
    /// Each node's first start (which creates its database) comes at time 0; three worlds in
    /// 4 cut a node's power at one of the workload steps 2 to 8, the power of a node whose disk
    /// fails in its first process when there is one.
    func startOnSQLite() {
        coverage.count(.onSQLite)
        guard random.chance(0.75) else { return }
        let failing = [Role.phone, .watch].filter { node($0).sqlite?.diskFails == true }
        let role = failing.isEmpty || random.chance(0.25) ? (random.chance(0.5) ? .phone : .watch) : failing[random.int(0...(failing.count - 1))]
        earlyPowerCut = (random.int(min(2, options.steps)...min(8, options.steps)), role)
    }
}
