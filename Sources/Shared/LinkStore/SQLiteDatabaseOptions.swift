extension SQLiteDatabase {
    /// How a database file is opened and the connection settings applied right after.
    public struct Options: Sendable {
        /// What the connection may do with the file.
        public enum Access: Sendable {
            /// Read only; the file must exist.
            case readOnly
            /// Read and write; the file must exist.
            case readWrite
            /// Read and write, creating the file if it does not exist.
            case readWriteCreate
        }

        public var access: Access
        /// Set with `PRAGMA journal_mode` on open; `nil` leaves the file's mode alone.
        public var journalMode: JournalMode?
        /// Set with `PRAGMA synchronous` on open; `nil` keeps SQLite's default.
        public var synchronous: Synchronous?
        /// `PRAGMA foreign_keys`.
        public var foreignKeys: Bool
        /// How long a statement waits for another connection's lock before failing with
        /// `SQLITE_BUSY`.
        public var busyTimeoutMilliseconds: Int32
        /// How many statements ``SQLiteDatabase/cachedStatement(_:)`` keeps prepared.
        public var statementCacheCapacity: Int
        /// Opens the file even if `path` is a symbolic link (`SQLITE_OPEN_NOFOLLOW` otherwise).
        public var followsSymbolicLinks: Bool
        /// Reads the file as a snapshot nothing else writes (URI parameter `immutable=1`):
        /// no locks, and no WAL or shared-memory file is read or created. Only with
        /// ``Access/readOnly``, and only for a file whose WAL is absent.
        var isImmutable = false

        /// Read-write with create, WAL journal, `synchronous=FULL`, foreign keys on, a 5 s
        /// busy timeout, 64 cached statements, symbolic links refused.
        public init(
            access: Access = .readWriteCreate,
            journalMode: JournalMode? = .wal,
            synchronous: Synchronous? = .full,
            foreignKeys: Bool = true,
            busyTimeoutMilliseconds: Int32 = 5_000,
            statementCacheCapacity: Int = 64,
            followsSymbolicLinks: Bool = false
        ) {
            self.access = access
            self.journalMode = journalMode
            self.synchronous = synchronous
            self.foreignKeys = foreignKeys
            self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
            self.statementCacheCapacity = statementCacheCapacity
            self.followsSymbolicLinks = followsSymbolicLinks
        }

        /// Read only, changing nothing in the file: no journal mode or `synchronous`.
        public static var readOnly: Options {
            Options(access: .readOnly, journalMode: nil, synchronous: nil, statementCacheCapacity: 8)
        }
    }

    /// `PRAGMA journal_mode` values.
    public enum JournalMode: String, Sendable {
        case delete, truncate, persist, memory, wal, off
    }

    /// `PRAGMA synchronous` values.
    public enum Synchronous: String, Sendable {
        case off, normal, full, extra
    }

    /// `BEGIN` variants.
    public enum TransactionKind: String, Sendable {
        /// Takes locks when the first statement needs them.
        case deferred
        /// Takes the write lock at once, so a busy database fails at `BEGIN`, not mid-way.
        case immediate
        /// Like `immediate`; in WAL mode the two are the same.
        case exclusive
    }

    /// `PRAGMA wal_checkpoint` modes.
    public enum CheckpointMode: Sendable {
        case passive, full, restart, truncate
    }
}
