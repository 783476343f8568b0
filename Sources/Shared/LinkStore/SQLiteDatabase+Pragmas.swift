import CSQLite

extension SQLiteDatabase {
    /// The value of `PRAGMA name`, or `nil` if it returns no row.
    ///
    /// `name` is an identifier, optionally prefixed with a schema name (`main.user_version`).
    public func pragma(_ name: String) throws(SQLiteError) -> SQLiteValue? {
        try checkPragmaName(name)
        return try scalar("PRAGMA \(name)")
    }

    /// Runs `PRAGMA name = value` and returns the row it answers with, if any.
    ///
    /// `value` is an integer, or a keyword made of letters, digits and underscores.
    @discardableResult
    public func setPragma(_ name: String, to value: String) throws(SQLiteError) -> SQLiteValue? {
        try checkPragmaName(name)
        let digits = value.hasPrefix("-") ? value.dropFirst() : Substring(value)
        let isInteger = !digits.isEmpty && digits.allSatisfy { $0.isASCII && $0.isNumber }
        guard isInteger || Self.isKeyword(value) else {
            throw .misuse("'\(value)' is not a valid pragma value", operation: "pragma", sql: nil, path: path)
        }
        let statement = try prepare("PRAGMA \(name) = \(value)")
        guard try statement.step() else { return nil }
        let answer = statement.value(at: 0)
        // Run it to its end: a pragma that writes (`journal_mode = wal` writes the file's
        // header) commits there, and a failed commit must not pass for the answer. (Reset
        // early, SQLite rolls the write back and says so only to `sqlite3_reset`, whose result
        // is lost; the connection then answers "wal" and journals in DELETE mode.)
        while try statement.step() {}
        return answer
    }

    /// `PRAGMA user_version`: the schema version of the application.
    public func userVersion() throws(SQLiteError) -> Int {
        Int(try scalar("PRAGMA user_version")?.integerValue ?? 0)
    }

    /// Sets `PRAGMA user_version`; inside a transaction, the change commits or rolls back
    /// with it.
    public func setUserVersion(_ version: Int) throws(SQLiteError) {
        try setPragma("user_version", to: String(Int32(truncatingIfNeeded: version)))
    }

    /// `PRAGMA application_id`: the number that says which application owns the file.
    public func applicationID() throws(SQLiteError) -> Int32 {
        Int32(truncatingIfNeeded: try scalar("PRAGMA application_id")?.integerValue ?? 0)
    }

    /// Sets `PRAGMA application_id`; inside a transaction, the change commits or rolls back
    /// with it.
    public func setApplicationID(_ applicationID: Int32) throws(SQLiteError) {
        try setPragma("application_id", to: String(applicationID))
    }

    /// The current journal mode.
    public func journalMode() throws(SQLiteError) -> JournalMode? {
        try pragma("journal_mode")?.textValue.flatMap { JournalMode(rawValue: $0.lowercased()) }
    }

    /// Switches the journal mode; throws if SQLite keeps another mode (an in-memory
    /// database cannot use WAL, for instance).
    public func setJournalMode(_ mode: JournalMode) throws(SQLiteError) {
        let answer = try setPragma("journal_mode", to: mode.rawValue)?.textValue?.lowercased()
        guard answer == mode.rawValue else {
            throw SQLiteError(
                extendedCode: SQLITE_ERROR,
                message: "journal mode stayed \(answer ?? "unknown") instead of \(mode.rawValue)",
                operation: "pragma", sql: "PRAGMA journal_mode = \(mode.rawValue)", path: path)
        }
    }

    /// Runs `PRAGMA quick_check` and returns the problems it reports; empty when the
    /// database is sound.
    public func quickCheck(maximumProblems: Int = 100) throws(SQLiteError) -> [String] {
        let statement = try prepare("PRAGMA quick_check(\(max(maximumProblems, 1)))")
        var rows: [String] = []
        while try statement.step() {
            rows.append(statement.string(at: 0))
        }
        return rows == ["ok"] ? [] : rows
    }

    /// Copies WAL content into the database file (`sqlite3_wal_checkpoint_v2`).
    ///
    /// - Returns: the frames in the WAL, and how many of them are now in the database file.
    @discardableResult
    public func checkpoint(_ mode: CheckpointMode = .passive) throws(SQLiteError) -> (walFrames: Int, checkpointedFrames: Int) {
        let handle = try openHandle("checkpoint")
        let sqliteMode: Int32
        switch mode {
        case .passive: sqliteMode = SQLITE_CHECKPOINT_PASSIVE
        case .full: sqliteMode = SQLITE_CHECKPOINT_FULL
        case .restart: sqliteMode = SQLITE_CHECKPOINT_RESTART
        case .truncate: sqliteMode = SQLITE_CHECKPOINT_TRUNCATE
        }
        var walFrames: Int32 = 0
        var checkpointedFrames: Int32 = 0
        let (result, checkpointErrno) = SQLiteConnection.trackingErrno {
            sqlite3_wal_checkpoint_v2(handle, nil, sqliteMode, &walFrames, &checkpointedFrames)
        }
        if result != SQLITE_OK {
            throw connection.error(result, operation: "checkpoint", sql: nil, threadErrno: checkpointErrno)
        }
        return (Int(walFrames), Int(checkpointedFrames))
    }

    private func checkPragmaName(_ name: String) throws(SQLiteError) {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(parts.count), parts.allSatisfy({ Self.isKeyword($0) }) else {
            throw .misuse("'\(name)' is not a valid pragma name", operation: "pragma", sql: nil, path: path)
        }
    }

    private static func isKeyword(_ text: some StringProtocol) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter || first == "_" else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
    }
}
