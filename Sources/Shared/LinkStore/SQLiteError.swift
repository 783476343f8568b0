#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CSQLite

/// A failed SQLite call: the result codes, the operating-system error behind it, what was
/// being done, and on which database file.
public struct SQLiteError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The primary result code (`SQLITE_FULL`, `SQLITE_IOERR`, …).
    public var code: Int32 { extendedCode & 0xFF }
    /// The extended result code (`SQLITE_IOERR_WRITE`, `SQLITE_CORRUPT_INDEX`, …).
    public let extendedCode: Int32
    /// `errno` of the system call that failed, as `sqlite3_system_errno` reported it; 0 if none.
    public let systemErrno: Int32
    /// SQLite's message for this failure.
    public let message: String
    /// What was being done: `open`, `prepare`, `step`, `bind`, `execute`, `begin`, ….
    public let operation: String
    /// The SQL text involved, if any.
    public let sql: String?
    /// The database file.
    public let path: String

    /// An error with the given codes; the primary code is the low byte of `extendedCode`.
    public init(
        extendedCode: Int32, systemErrno: Int32 = 0, message: String,
        operation: String, sql: String? = nil, path: String
    ) {
        self.extendedCode = extendedCode
        self.systemErrno = systemErrno
        self.message = message
        self.operation = operation
        self.sql = sql
        self.path = path
    }

    /// Captures the state of `connection` right after a call returned `resultCode`.
    ///
    /// - Parameter threadErrno: `errno` read right after the call, having been set to 0
    ///   before it.
    init(
        resultCode: Int32, connection: OpaquePointer?, operation: String, sql: String?, path: String,
        threadErrno: Int32 = 0
    ) {
        var message = String(cString: sqlite3_errstr(resultCode))
        var systemErrno: Int32 = 0
        if let connection {
            if sqlite3_extended_errcode(connection) == resultCode {
                message = String(cString: sqlite3_errmsg(connection))
            }
            let primary = resultCode & 0xFF
            if primary == SQLITE_IOERR || primary == SQLITE_FULL || primary == SQLITE_CANTOPEN {
                systemErrno = sqlite3_system_errno(connection)
                if systemErrno == 0 { systemErrno = threadErrno }
                if systemErrno == 0 { systemErrno = wl_sqlite3_file_errno(connection) }
            }
        }
        self.init(
            extendedCode: resultCode, systemErrno: systemErrno, message: message,
            operation: operation, sql: sql, path: path)
    }

    static func closed(operation: String, sql: String?, path: String) -> SQLiteError {
        SQLiteError(
            extendedCode: SQLITE_MISUSE, message: "the database connection is closed",
            operation: operation, sql: sql, path: path)
    }

    static func misuse(_ message: String, operation: String, sql: String?, path: String) -> SQLiteError {
        SQLiteError(extendedCode: SQLITE_MISUSE, message: message, operation: operation, sql: sql, path: path)
    }

    /// The write failed for want of space: `SQLITE_FULL`, or an I/O error whose `errno` is
    /// `ENOSPC`, `EDQUOT` or `EFBIG` (the file size limit, `RLIMIT_FSIZE`, was reached).
    public var isDiskFull: Bool {
        switch code {
        case SQLITE_FULL:
            return true
        case SQLITE_IOERR:
            return systemErrno == ENOSPC || systemErrno == EDQUOT || systemErrno == EFBIG
        default:
            return false
        }
    }

    /// The file is damaged or is not a database: `SQLITE_CORRUPT` or `SQLITE_NOTADB`.
    public var isCorrupt: Bool {
        code == SQLITE_CORRUPT || code == SQLITE_NOTADB
    }

    /// Another connection holds a lock that did not clear within the busy timeout:
    /// `SQLITE_BUSY` or `SQLITE_LOCKED`.
    public var isBusy: Bool {
        code == SQLITE_BUSY || code == SQLITE_LOCKED
    }

    /// A `UNIQUE`, `NOT NULL`, `CHECK` or foreign key constraint refused the change.
    public var isConstraintViolation: Bool {
        code == SQLITE_CONSTRAINT
    }

    public var description: String {
        var text = "\(path): \(operation) failed: \(message) (code \(code)"
        if extendedCode != code {
            text += ", extended \(extendedCode)"
        }
        if systemErrno != 0 {
            text += ", errno \(systemErrno) \(String(cString: strerror(systemErrno)))"
        }
        text += ")"
        if let sql {
            let limit = 200
            text += sql.count > limit ? "; SQL: \(sql.prefix(limit))…" : "; SQL: \(sql)"
        }
        return text
    }
}
