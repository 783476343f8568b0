#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite

/// The `sqlite3` handle, shared by a database and the statements prepared on it so that
/// statements can tell when the database has been closed.
final class SQLiteConnection {
    private(set) var handle: OpaquePointer?
    let path: String

    init(handle: OpaquePointer, path: String) {
        self.handle = handle
        self.path = path
    }

    var isOpen: Bool { handle != nil }

    /// Closes the connection. Statements still alive keep it as a zombie until they are
    /// finalized; any later use of them fails with ``SQLiteError``.
    func close() {
        guard let handle else { return }
        self.handle = nil
        sqlite3_close_v2(handle)
    }

    func error(_ resultCode: Int32, operation: String, sql: String?, threadErrno: Int32 = 0) -> SQLiteError {
        SQLiteError(
            resultCode: resultCode, connection: handle, operation: operation, sql: sql, path: path,
            threadErrno: threadErrno)
    }

    /// Calls `body` with `errno` cleared, and returns its result with the `errno` it left,
    /// which tells which system call failed when SQLite does not say.
    @inline(__always)
    static func trackingErrno(_ body: () -> Int32) -> (result: Int32, errno: Int32) {
        errno = 0
        let result = body()
        return (result, errno)
    }

    deinit {
        close()
    }
}
