#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why ``StoreFile`` refused a database file. A refused file is left as it was.
public enum StoreFileError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The file is an SQLite database of another application.
    case foreignDatabase(path: String, applicationID: Int32, expected: String)
    /// The file is not an SQLite database, or is damaged.
    case corrupt(path: String, reason: String)
    /// The file's schema is newer than this code knows how to use.
    case newerSchema(path: String, version: Int, supportedVersion: Int, name: String)
    /// The path names a symbolic link, a directory or another non-regular file.
    case notARegularFile(path: String, kind: String)
    /// The database is missing but its journal or WAL is there: creating a new database
    /// next to it would mix the two.
    case strayJournal(path: String, journal: String)
    /// A system call on the path failed.
    case inaccessible(path: String, operation: String, errno: Int32)

    public var description: String {
        switch self {
        case .foreignDatabase(let path, let applicationID, let expected):
            let hex = String(UInt32(bitPattern: applicationID), radix: 16, uppercase: true)
            let padded = String(repeating: "0", count: max(0, 8 - hex.count)) + hex
            return "\(path) is not a \(expected) database (application_id 0x\(padded))"
        case .corrupt(let path, let reason):
            return "\(path) is corrupt: \(reason)"
        case .newerSchema(let path, let version, let supportedVersion, let name):
            return "\(path) was created by a newer \(name) (schema version \(version); "
                + "this version knows up to \(supportedVersion))"
        case .notARegularFile(let path, let kind):
            return "\(path) is not a regular file but a \(kind)"
        case .strayJournal(let path, let journal):
            return "\(path) does not exist but \(journal) does; restore the database or move \(journal) away"
        case .inaccessible(let path, let operation, let errno):
            return "\(path): \(operation) failed: \(String(cString: strerror(errno))) (errno \(errno))"
        }
    }
}
