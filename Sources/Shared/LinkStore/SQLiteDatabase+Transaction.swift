import CSQLite

extension SQLiteDatabase {
    /// Starts a transaction; `.immediate` takes the write lock now.
    public func begin(_ kind: TransactionKind = .immediate) throws(SQLiteError) {
        let sql: String
        switch kind {
        case .deferred: sql = "BEGIN DEFERRED"
        case .immediate: sql = "BEGIN IMMEDIATE"
        case .exclusive: sql = "BEGIN EXCLUSIVE"
        }
        try cachedStatement(sql).run()
    }

    /// Commits the open transaction.
    ///
    /// If the commit fails, SQLite may already have rolled the transaction back
    /// (`SQLITE_FULL`, `SQLITE_IOERR`) or may have kept it open (`SQLITE_BUSY`): check
    /// ``inTransaction``, and retry or ``rollback()``.
    public func commit() throws(SQLiteError) {
        try cachedStatement("COMMIT").run()
    }

    /// Rolls back the open transaction; does nothing when none is open (for instance after
    /// SQLite rolled it back itself on an I/O error).
    public func rollback() throws(SQLiteError) {
        guard inTransaction else { return }
        try cachedStatement("ROLLBACK").run()
    }

    /// Runs `body` in a transaction and commits it, or rolls it back if `body` or the commit
    /// throws.
    ///
    /// Called inside an open transaction, `body` runs in a savepoint instead: its changes are
    /// undone on error, and become durable when the outer transaction commits.
    public func transaction<Result>(
        _ kind: TransactionKind = .immediate, _ body: () throws -> Result
    ) throws -> Result {
        if inTransaction {
            return try savepoint(body)
        }
        try begin(kind)
        do {
            let result = try body()
            try commit()
            return result
        } catch {
            try? rollback()
            throw error
        }
    }

    private func savepoint<Result>(_ body: () throws -> Result) throws -> Result {
        try cachedStatement("SAVEPOINT watchlink_nested").run()
        do {
            let result = try body()
            try cachedStatement("RELEASE watchlink_nested").run()
            return result
        } catch {
            if inTransaction {
                try? cachedStatement("ROLLBACK TO watchlink_nested").run()
                try? cachedStatement("RELEASE watchlink_nested").run()
            }
            throw error
        }
    }
}
