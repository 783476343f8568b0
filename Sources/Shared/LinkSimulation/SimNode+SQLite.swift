import LinkSession
import LinkStore

/// A node of a world on SQLite: its store is the daemon's ``DeliveryStore`` on the node's
/// ``SimDisk``.
///
/// The disk's faults, in the node's first process only (the one whose start creates the
/// database): every `fsync` of its directory fails with EIO (drawn for one node in 3), and
/// each `fsync` of a main database file fails with EIO with probability 1/2 (one node in 3).
/// A WAL or journal never fails an `fsync` (a failed WAL sync at a commit is the
/// ``ModelStore``'s store fault). A start whose store does not open because of them exits,
/// and the daemon is started again (by launchd) a moment later; a store that does not open
/// otherwise is a failure of the world.
extension SimNode {
    func makeSQLiteStore() -> SimSQLiteStore {
        let disk = SimDisk(directory: "/state")
        let directoryFails = world.random.int(0...2) == 0
        let databaseFails = world.random.int(0...2) == 0
        disk.fault = { [weak self, unowned disk] target in
            guard let self, disk.process == 0 else { return false }
            switch target {
            case .directory: return directoryFails
            case .database: return databaseFails && self.world.random.chance(0.5)
            case .journal: return false
            }
        }
        disk.randomBytes = { [weak self] count in self?.world.random.bytes(count) ?? [UInt8](repeating: 0, count: count) }
        disk.now = { [weak self] in self.map { $0.world.wallClockBase + Double($0.world.now) / 1000 } ?? 0 }
        disk.trace = { [weak self] line in self?.world.trace("\(self?.role.name ?? "") disk: \(line)") }
        let sqlite = SimSQLiteStore(path: "/state/" + (role == .phone ? "phone.db" : "watch.db"), disk: disk, mirror: store)
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
                // A power cut keeps what was synced, and what was synced opens (SQLite: "a
                // COMMIT ... in WAL mode with synchronous=FULL ... is durable", sqlite.org/
                // pragma.html#pragma_synchronous; docs/durability.md "A power cut": the daemon
                // starts on what is on the disk without repair).
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
    /// Each node already made its first start (which created its database); one world in 2
    /// cuts a node's power within the next 2 s.
    func startOnSQLite() {
        coverage.count(.onSQLite)
        guard random.chance(0.5) else { return }
        schedule(.powerCut(random.chance(0.5) ? .phone : .watch), at: random.int64(1...2_000))
    }
}
