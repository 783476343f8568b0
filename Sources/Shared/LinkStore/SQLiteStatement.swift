import CSQLite

/// A prepared SQL statement.
///
/// Parameters are numbered from 1 and columns from 0, as in SQLite. ``step()`` returns
/// `true` while a row is available; once it returns `false` or throws, the statement has
/// been reset (bindings are kept), holds no lock, and can run again.
///
/// Values are copied into SQLite when bound, so the Swift values need not outlive the call.
/// A statement belongs to the thread that uses its ``SQLiteDatabase``.
public final class SQLiteStatement {
    /// The SQL text the statement was prepared from.
    public let sql: String
    let connection: SQLiteConnection
    let handle: OpaquePointer

    init(connection: SQLiteConnection, handle: OpaquePointer, sql: String) {
        self.connection = connection
        self.handle = handle
        self.sql = sql
    }

    deinit {
        sqlite3_finalize(handle)
    }

    // MARK: Binding

    /// The number of parameters in the SQL text.
    public var parameterCount: Int {
        Int(sqlite3_bind_parameter_count(handle))
    }

    /// Binds an integer to parameter `index` (1-based).
    public func bind(_ value: Int64, at index: Int) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, Int32(index), value), "bind")
    }

    /// Binds an integer to parameter `index` (1-based).
    public func bind(_ value: Int, at index: Int) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, Int32(index), Int64(value)), "bind")
    }

    /// Binds a floating-point number to parameter `index` (1-based).
    public func bind(_ value: Double, at index: Int) throws(SQLiteError) {
        try check(sqlite3_bind_double(handle, Int32(index), value), "bind")
    }

    /// Binds 1 or 0 to parameter `index` (1-based).
    public func bind(_ value: Bool, at index: Int) throws(SQLiteError) {
        try check(sqlite3_bind_int64(handle, Int32(index), value ? 1 : 0), "bind")
    }

    /// Binds UTF-8 text to parameter `index` (1-based); embedded NUL characters are kept.
    public func bind(_ value: String, at index: Int) throws(SQLiteError) {
        var value = value
        let result = value.withUTF8 { utf8 in
            guard let base = utf8.baseAddress, utf8.count > 0 else {
                return "".withCString { sqlite3_bind_text(handle, Int32(index), $0, 0, wl_sqlite3_transient()) }
            }
            return base.withMemoryRebound(to: CChar.self, capacity: utf8.count) { text in
                sqlite3_bind_text64(
                    handle, Int32(index), text, UInt64(utf8.count), wl_sqlite3_transient(), UInt8(SQLITE_UTF8))
            }
        }
        try check(result, "bind")
    }

    /// Binds a blob. An empty array binds an empty blob, not `NULL`.
    public func bind(_ value: [UInt8], at index: Int) throws(SQLiteError) {
        let result = value.withUnsafeBytes { bindBlob($0, index) }
        try check(result, "bind")
    }

    /// Binds a blob. An empty slice binds an empty blob, not `NULL`.
    public func bind(_ value: ArraySlice<UInt8>, at index: Int) throws(SQLiteError) {
        let result = value.withUnsafeBytes { bindBlob($0, index) }
        try check(result, "bind")
    }

    /// Binds a copy of `bytes` as a blob. An empty buffer binds an empty blob, not `NULL`.
    public func bind(bytes: UnsafeRawBufferPointer, at index: Int) throws(SQLiteError) {
        try check(bindBlob(bytes, index), "bind")
    }

    /// Binds `NULL` to parameter `index` (1-based).
    public func bindNull(at index: Int) throws(SQLiteError) {
        try check(sqlite3_bind_null(handle, Int32(index)), "bind")
    }

    /// Binds `value` with its storage class to parameter `index` (1-based).
    public func bind(_ value: SQLiteValue, at index: Int) throws(SQLiteError) {
        switch value {
        case .null: try bindNull(at: index)
        case .integer(let integer): try bind(integer, at: index)
        case .real(let real): try bind(real, at: index)
        case .text(let text): try bind(text, at: index)
        case .blob(let blob): try bind(blob, at: index)
        }
    }

    /// Binds `values` to parameters 1, 2, ….
    public func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            try bind(value, at: offset + 1)
        }
    }

    /// Sets every parameter back to `NULL`.
    public func clearBindings() {
        sqlite3_clear_bindings(handle)
    }

    private func bindBlob(_ bytes: UnsafeRawBufferPointer, _ index: Int) -> Int32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            return sqlite3_bind_zeroblob(handle, Int32(index), 0)
        }
        return sqlite3_bind_blob64(handle, Int32(index), base, UInt64(bytes.count), wl_sqlite3_transient())
    }

    // MARK: Running

    /// Evaluates the statement up to the next row.
    ///
    /// - Returns: `true` if a row is available through the column getters; `false` when
    ///   the statement has finished (it is then reset).
    /// - Throws: ``SQLiteError``; the statement is reset.
    public func step() throws(SQLiteError) -> Bool {
        guard connection.isOpen else {
            throw .closed(operation: "step", sql: sql, path: connection.path)
        }
        let (result, stepErrno) = SQLiteConnection.trackingErrno { sqlite3_step(handle) }
        switch result {
        case SQLITE_ROW:
            return true
        case SQLITE_DONE:
            sqlite3_reset(handle)
            return false
        default:
            let error = connection.error(result, operation: "step", sql: sql, threadErrno: stepErrno)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Runs the statement to completion, discarding any rows.
    public func run() throws(SQLiteError) {
        while try step() {}
    }

    /// Binds `values` to parameters 1, 2, … and runs the statement to completion.
    public func run(_ values: SQLiteValue...) throws(SQLiteError) {
        try bind(values)
        try run()
    }

    /// Calls `body` for each row, then resets the statement, also when `body` throws.
    public func forEachRow(_ body: (SQLiteStatement) throws -> Void) throws {
        defer { sqlite3_reset(handle) }
        while try step() {
            try body(self)
        }
    }

    /// The rows transformed by `transform`; the statement is reset afterwards.
    public func mapRows<T>(_ transform: (SQLiteStatement) throws -> T) throws -> [T] {
        var rows: [T] = []
        try forEachRow { rows.append(try transform($0)) }
        return rows
    }

    /// Abandons the current evaluation, releasing its locks. Bindings are kept.
    public func reset() {
        sqlite3_reset(handle)
    }

    // MARK: Columns

    /// The number of columns in a result row.
    public var columnCount: Int {
        Int(sqlite3_column_count(handle))
    }

    /// The name of result column `column` (0-based).
    public func columnName(at column: Int) -> String {
        sqlite3_column_name(handle, Int32(column)).map { String(cString: $0) } ?? ""
    }

    /// Whether result column `column` (0-based) is `NULL`.
    public func isNull(at column: Int) -> Bool {
        sqlite3_column_type(handle, Int32(column)) == SQLITE_NULL
    }

    /// The column as an integer; `NULL` reads as 0.
    public func int64(at column: Int) -> Int64 {
        sqlite3_column_int64(handle, Int32(column))
    }

    /// The column as an integer; `NULL` reads as 0.
    public func int(at column: Int) -> Int {
        Int(sqlite3_column_int64(handle, Int32(column)))
    }

    /// The column as a floating-point number; `NULL` reads as 0.
    public func double(at column: Int) -> Double {
        sqlite3_column_double(handle, Int32(column))
    }

    /// The column as UTF-8 text; `NULL` reads as the empty string.
    public func string(at column: Int) -> String {
        guard let text = sqlite3_column_text(handle, Int32(column)) else { return "" }
        let count = Int(sqlite3_column_bytes(handle, Int32(column)))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The column as bytes; `NULL` reads as no bytes.
    public func blob(at column: Int) -> [UInt8] {
        withBlob(at: column) { Array($0) }
    }

    /// Calls `body` with the column's bytes in place, without copying them. The buffer is
    /// valid only during the call.
    public func withBlob<R>(at column: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let base = sqlite3_column_blob(handle, Int32(column))
        let count = Int(sqlite3_column_bytes(handle, Int32(column)))
        return try body(UnsafeRawBufferPointer(start: count > 0 ? base : nil, count: count))
    }

    /// The column with its storage class.
    public func value(at column: Int) -> SQLiteValue {
        switch sqlite3_column_type(handle, Int32(column)) {
        case SQLITE_INTEGER: return .integer(int64(at: column))
        case SQLITE_FLOAT: return .real(double(at: column))
        case SQLITE_TEXT: return .text(string(at: column))
        case SQLITE_BLOB: return .blob(blob(at: column))
        default: return .null
        }
    }

    @inline(__always)
    private func check(_ result: Int32, _ operation: String) throws(SQLiteError) {
        if result != SQLITE_OK {
            throw connection.error(result, operation: operation, sql: sql)
        }
    }
}

@available(*, unavailable)
extension SQLiteStatement: Sendable {}
