import CSQLite

/// A connection to one SQLite database file.
///
/// The connection is opened in `SQLITE_OPEN_NOMUTEX` mode: it belongs to one thread (the
/// event loop that owns the store) and is not `Sendable`. Every failure throws
/// ``SQLiteError`` naming the file, the operation and the SQL.
///
/// Statements come in two kinds: ``prepare(_:)`` returns a statement the caller owns, and
/// ``cachedStatement(_:)`` returns one kept prepared by the database for the next call with
/// the same SQL text, which is what hot paths should use.
public final class SQLiteDatabase {
    /// The database file, as given when opening.
    public let path: String
    let connection: SQLiteConnection
    private var statementCache: [String: SQLiteStatement] = [:]
    private let statementCacheCapacity: Int

    /// Opens (or, with ``Options/Access/readWriteCreate``, creates) the database at `path`,
    /// through the VFS of ``StoreStorage/current``, and applies the journal mode,
    /// `synchronous`, foreign keys and busy timeout of `options`.
    public init(path: String, options: Options = Options()) throws(SQLiteError) {
        var flags = SQLITE_OPEN_NOMUTEX
        switch options.access {
        case .readOnly: flags |= SQLITE_OPEN_READONLY
        case .readWrite: flags |= SQLITE_OPEN_READWRITE
        case .readWriteCreate: flags |= SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE
        }
        if !options.followsSymbolicLinks {
            flags |= SQLITE_OPEN_NOFOLLOW
        }
        var filename = path
        if options.isImmutable {
            flags |= SQLITE_OPEN_URI
            filename = Self.immutableURI(path)
        }
        var handle: OpaquePointer?
        // The VFS of ``StoreStorage/current``: SQLite's default, or the simulator's.
        let vfsName = StoreStorage.current.vfsName
        let (result, openErrno) = SQLiteConnection.trackingErrno { sqlite3_open_v2(filename, &handle, flags, vfsName) }
        guard result == SQLITE_OK, let handle else {
            let error = SQLiteError(
                resultCode: handle.map { sqlite3_extended_errcode($0) } ?? result,
                connection: handle, operation: "open", sql: nil, path: path, threadErrno: openErrno)
            sqlite3_close_v2(handle)
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        self.path = path
        self.connection = SQLiteConnection(handle: handle, path: path)
        self.statementCacheCapacity = max(options.statementCacheCapacity, 0)
        do {
            try configure(options)
        } catch {
            close()
            throw error
        }
    }

    /// `file:PATH?immutable=1`, with the path percent-encoded.
    private static func immutableURI(_ path: String) -> String {
        var uri = "file:"
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "/"), UInt8(ascii: "-"),
                UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                uri.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                uri += byte < 16 ? "%0\(hex)" : "%\(hex)"
            }
        }
        return uri + "?immutable=1"
    }

    private func configure(_ options: Options) throws(SQLiteError) {
        let timeout = sqlite3_busy_timeout(try openHandle("busy_timeout"), options.busyTimeoutMilliseconds)
        if timeout != SQLITE_OK {
            throw connection.error(timeout, operation: "busy_timeout", sql: nil)
        }
        if let journalMode = options.journalMode {
            try setJournalMode(journalMode)
        }
        if let synchronous = options.synchronous {
            try execute("PRAGMA synchronous = \(synchronous.rawValue)")
        }
        try execute(options.foreignKeys ? "PRAGMA foreign_keys = ON" : "PRAGMA foreign_keys = OFF")
    }

    deinit {
        close()
    }

    /// The version of the SQLite library in use, such as `3.40.1`.
    public static var libraryVersion: String {
        String(cString: sqlite3_libversion())
    }

    // MARK: Life cycle

    /// Whether ``close()`` has not been called yet.
    public var isOpen: Bool { connection.isOpen }

    /// Finalizes the cached statements and closes the connection; an open transaction is
    /// rolled back. Statements the caller still holds fail from now on. Calling it again does
    /// nothing.
    public func close() {
        statementCache.removeAll()
        connection.close()
    }

    func openHandle(_ operation: String, sql: String? = nil) throws(SQLiteError) -> OpaquePointer {
        guard let handle = connection.handle else {
            throw .closed(operation: operation, sql: sql, path: path)
        }
        return handle
    }

    // MARK: Statements

    /// Runs `sql`, which may hold several statements separated by semicolons, discarding any
    /// rows. Meant for schema changes and pragmas; hot paths use ``cachedStatement(_:)``.
    public func execute(_ sql: String) throws(SQLiteError) {
        let handle = try openHandle("execute", sql: sql)
        let (result, execErrno) = SQLiteConnection.trackingErrno { sqlite3_exec(handle, sql, nil, nil, nil) }
        if result != SQLITE_OK {
            throw connection.error(result, operation: "execute", sql: sql, threadErrno: execErrno)
        }
    }

    /// Prepares one SQL statement that the caller owns; it is finalized when released.
    public func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        try makeStatement(sql, flags: 0)
    }

    /// The statement for `sql`, prepared on first use (`SQLITE_PREPARE_PERSISTENT`) and kept
    /// for later calls with the same text; it comes back reset with all parameters `NULL`.
    ///
    /// Each call resets the statement, so code that is still reading rows from it must not
    /// ask for the same SQL again before it is done; use ``prepare(_:)`` for that.
    public func cachedStatement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let statement = statementCache[sql] {
            sqlite3_reset(statement.handle)
            sqlite3_clear_bindings(statement.handle)
            return statement
        }
        let statement = try makeStatement(sql, flags: UInt32(SQLITE_PREPARE_PERSISTENT))
        if statementCacheCapacity > 0 {
            if statementCache.count >= statementCacheCapacity, let victim = statementCache.keys.first {
                statementCache.removeValue(forKey: victim)
            }
            statementCache[sql] = statement
        }
        return statement
    }

    /// The number of statements ``cachedStatement(_:)`` keeps prepared.
    public var cachedStatementCount: Int { statementCache.count }

    /// Drops the cached statements; those the caller still holds stay usable.
    public func clearStatementCache() {
        statementCache.removeAll()
    }

    /// Binds `values` to the cached statement for `sql` and runs it to completion.
    public func run(_ sql: String, _ values: SQLiteValue...) throws(SQLiteError) {
        try run(sql, values)
    }

    /// ``run(_:_:)-(_,SQLiteValue...)`` with the values in an array (for a caller that passes its own on).
    public func run(_ sql: String, _ values: [SQLiteValue]) throws(SQLiteError) {
        let statement = try cachedStatement(sql)
        try statement.bind(values)
        try statement.run()
    }

    /// The first column of the first row of `sql` with `values` bound, or `nil` if there is
    /// no row.
    public func scalar(_ sql: String, _ values: SQLiteValue...) throws(SQLiteError) -> SQLiteValue? {
        let statement = try cachedStatement(sql)
        try statement.bind(values)
        guard try statement.step() else { return nil }
        let value = statement.value(at: 0)
        statement.reset()
        return value
    }

    private func makeStatement(_ sql: String, flags: UInt32) throws(SQLiteError) -> SQLiteStatement {
        let handle = try openHandle("prepare", sql: sql)
        var statement: OpaquePointer?
        var remainder = ""
        let result = sql.withCString { text in
            var tail: UnsafePointer<CChar>?
            let result = sqlite3_prepare_v3(handle, text, -1, flags, &statement, &tail)
            if result == SQLITE_OK, let tail, tail.pointee != 0 {
                remainder = String(cString: tail)
            }
            return result
        }
        guard result == SQLITE_OK else {
            throw connection.error(result, operation: "prepare", sql: sql)
        }
        guard let statement else {
            throw .misuse("the SQL holds no statement", operation: "prepare", sql: sql, path: path)
        }
        if try holdsStatement(remainder) {
            sqlite3_finalize(statement)
            throw .misuse("the SQL holds more than one statement", operation: "prepare", sql: sql, path: path)
        }
        return SQLiteStatement(connection: connection, handle: statement, sql: sql)
    }

    /// Whether `sql`, the text after a prepared statement, holds more than whitespace,
    /// semicolons and comments.
    private func holdsStatement(_ sql: String) throws(SQLiteError) -> Bool {
        guard sql.contains(where: { !$0.isWhitespace && $0 != ";" }) else { return false }
        var statement: OpaquePointer?
        let result = sqlite3_prepare_v3(try openHandle("prepare", sql: sql), sql, -1, 0, &statement, nil)
        defer { sqlite3_finalize(statement) }
        return result != SQLITE_OK || statement != nil
    }

    // MARK: Connection state

    /// Whether a transaction is open (SQLite is not in autocommit mode).
    public var inTransaction: Bool {
        guard let handle = connection.handle else { return false }
        return sqlite3_get_autocommit(handle) == 0
    }

    /// Rows changed by the most recent `INSERT`, `UPDATE` or `DELETE`.
    public var changes: Int {
        guard let handle = connection.handle else { return 0 }
        return Int(sqlite3_changes64(handle))
    }

    /// Rows changed since the connection was opened.
    public var totalChanges: Int {
        guard let handle = connection.handle else { return 0 }
        return Int(sqlite3_total_changes64(handle))
    }

    /// The rowid of the most recent successful `INSERT`.
    public var lastInsertRowID: Int64 {
        guard let handle = connection.handle else { return 0 }
        return sqlite3_last_insert_rowid(handle)
    }
}

@available(*, unavailable)
extension SQLiteDatabase: Sendable {}
