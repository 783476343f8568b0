/// Opens the SQLite file of a store, making sure it is this application's, sound, and at
/// the schema version of the code.
///
/// - A missing file (or an empty one) is created: the application ID is set and every
///   migration runs, all in one transaction.
/// - A file of another application, a file that is not SQLite, a damaged file, or a file
///   whose schema is newer than the code is refused with ``StoreFileError`` and left as it
///   was: a foreign `application_id` in the file header is refused before SQLite opens the
///   file at all, and the rest is examined through a read-only connection, which creates
///   no `-wal` or `-shm` file unless the database already has a WAL. (A read-write
///   connection could change a foreign file: roll back its hot journal, or checkpoint its
///   WAL on close.)
/// - A file at an older schema version gets the missing migrations in one transaction.
public enum StoreFile {
    /// What ``open(path:schema:options:checksIntegrity:)`` found and did.
    public enum Outcome: Sendable, Equatable {
        case created(version: Int)
        case opened(version: Int)
        case migrated(from: Int, to: Int)
    }

    /// Opens the store at `path`, creating or migrating it as needed.
    ///
    /// - Parameters:
    ///   - options: connection settings; the access mode is chosen here.
    ///   - checksIntegrity: runs `PRAGMA quick_check` on an existing file before using it.
    /// - Throws: ``StoreFileError`` for a file that is refused, ``SQLiteError`` when SQLite
    ///   fails otherwise (a full disk during migration, a lock held past the busy timeout).
    public static func open(
        path: String, schema: StoreSchema, options: SQLiteDatabase.Options = .init(),
        checksIntegrity: Bool = true
    ) throws -> (database: SQLiteDatabase, outcome: Outcome) {
        var options = options
        options.followsSymbolicLinks = false
        switch try FileProbe.kind(of: path) {
        case .missing:
            for journal in [path + "-wal", path + "-journal"] {
                if try FileProbe.kind(of: journal) != .missing {
                    throw StoreFileError.strayJournal(path: path, journal: journal)
                }
            }
            try create(path: path, schema: schema, options: options)
            options.access = .readWrite
            let database = try openMappingCorruption(path: path, options: options)
            return (database, .created(version: schema.version))
        case .regularFile(let size):
            try inspectRecovering(path: path, size: size, schema: schema, checksIntegrity: checksIntegrity)
            options.access = .readWrite
        case .other(let kind):
            throw StoreFileError.notARegularFile(path: path, kind: kind)
        }

        let database = try openMappingCorruption(path: path, options: options)
        do {
            let outcome = try database.transaction(.immediate) {
                try bringUpToDate(database, schema: schema)
            }
            return (database, outcome)
        } catch let error as SQLiteError where error.isCorrupt {
            database.close()
            throw StoreFileError.corrupt(path: path, reason: error.message)
        } catch {
            database.close()
            throw error
        }
    }

    /// Creates the database whole or not at all: it is built and closed under a scratch name,
    /// then renamed into place, so that a crash during a first start never leaves a
    /// half-made file (or a hot journal) at `path`.
    private static func create(path: String, schema: StoreSchema, options: SQLiteDatabase.Options) throws {
        let scratch = path + ".creating"
        for leftover in [scratch, scratch + "-wal", scratch + "-journal", scratch + "-shm"] {
            FileProbe.remove(leftover)
        }
        var createOptions = options
        createOptions.access = .readWriteCreate
        // Errors name the file the caller asked for, not the scratch name.
        func named(_ error: Error) -> Error {
            guard let error = error as? SQLiteError, error.path == scratch else { return error }
            return SQLiteError(
                extendedCode: error.extendedCode, systemErrno: error.systemErrno, message: error.message,
                operation: error.operation, sql: error.sql, path: path)
        }
        let database: SQLiteDatabase
        do { database = try openMappingCorruption(path: scratch, options: createOptions) } catch { throw named(error) }
        do {
            _ = try database.transaction(.immediate) { try bringUpToDate(database, schema: schema) }
            database.close()
        } catch {
            database.close()
            FileProbe.remove(scratch)
            throw named(error)
        }
        try FileProbe.publish(scratch, as: path)
    }

    /// `inspect`, but a hot rollback journal left by a crash in a transaction of ours (or
    /// of a file nobody claimed yet) is rolled back first, as SQLite does on a normal open.
    private static func inspectRecovering(path: String, size: Int64, schema: StoreSchema, checksIntegrity: Bool) throws {
        do {
            try inspect(path: path, size: size, schema: schema, checksIntegrity: checksIntegrity)
        } catch let error as SQLiteError where error.extendedCode == SQLITE_READONLY_ROLLBACK_CODE {
            let header = try FileProbe.prefix(of: path, count: 100)
            let id = header.count >= 72 ? Int32(bitPattern: header[68..<72].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }) : 0
            guard id == 0 || id == schema.applicationID else { throw error }
            var recovery = SQLiteDatabase.Options()
            recovery.access = .readWrite
            recovery.journalMode = nil
            recovery.followsSymbolicLinks = false
            let database = try openMappingCorruption(path: path, options: recovery)
            _ = try? database.scalar("SELECT count(*) FROM sqlite_master")
            database.close()
            guard case .regularFile(let newSize) = try FileProbe.kind(of: path) else { throw error }
            try inspect(path: path, size: newSize, schema: schema, checksIntegrity: checksIntegrity)
        }
    }

    // swift-format-ignore: AlwaysUseLowerCamelCase
    /// SQLITE_READONLY_ROLLBACK: a read-only connection met a hot journal it cannot roll back.
    private static let SQLITE_READONLY_ROLLBACK_CODE: Int32 = 8 | (3 << 8)

    private static func openMappingCorruption(path: String, options: SQLiteDatabase.Options) throws -> SQLiteDatabase {
        do {
            return try SQLiteDatabase(path: path, options: options)
        } catch {
            throw error.isCorrupt ? StoreFileError.corrupt(path: path, reason: error.message) : error
        }
    }

    private static let sqliteMagic = Array("SQLite format 3\0".utf8)

    /// Refuses a file that is not this application's or is damaged, changing nothing in it.
    private static func inspect(path: String, size: Int64, schema: StoreSchema, checksIntegrity: Bool) throws {
        if size > 0 {
            let header = try FileProbe.prefix(of: path, count: 100)
            guard header.starts(with: sqliteMagic) else {
                let start = header.prefix(16).map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined(separator: " ")
                throw StoreFileError.corrupt(
                    path: path, reason: "not an SQLite database (\(size) bytes starting with \(start))")
            }
            if header.count >= 72 {
                let applicationID = header[68..<72].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                let id = Int32(bitPattern: applicationID)
                if id != 0 && id != schema.applicationID {
                    throw StoreFileError.foreignDatabase(path: path, applicationID: id, expected: schema.name)
                }
            }
        }
        // Without a WAL or journal the file alone is the database: reading it as immutable
        // creates no -wal or -shm file next to a file that may not be ours.
        var inspection = SQLiteDatabase.Options.readOnly
        inspection.isImmutable =
            try FileProbe.kind(of: path + "-wal") == .missing && FileProbe.kind(of: path + "-journal") == .missing
        do {
            let database = try SQLiteDatabase(path: path, options: inspection)
            defer { database.close() }
            let state = try SchemaState(database)
            try state.check(against: schema, path: path)
            if checksIntegrity {
                let problems = try database.quickCheck(maximumProblems: 10)
                if !problems.isEmpty {
                    throw StoreFileError.corrupt(path: path, reason: problems.joined(separator: "; "))
                }
            }
        } catch let error as SQLiteError where error.isCorrupt {
            throw StoreFileError.corrupt(path: path, reason: error.message)
        }
    }

    private static func bringUpToDate(_ database: SQLiteDatabase, schema: StoreSchema) throws -> Outcome {
        let state = try SchemaState(database)
        try state.check(against: schema, path: database.path)
        if state.isFresh {
            try database.setApplicationID(schema.applicationID)
        }
        guard state.version < schema.version else {
            return .opened(version: state.version)
        }
        for migration in schema.migrations where migration.version > state.version {
            try migration.apply(database)
        }
        try database.setUserVersion(schema.version)
        return state.isFresh ? .created(version: schema.version) : .migrated(from: state.version, to: schema.version)
    }
}

/// The marks of ownership and version a database carries.
private struct SchemaState {
    let applicationID: Int32
    let version: Int
    let objectCount: Int64

    init(_ database: SQLiteDatabase) throws(SQLiteError) {
        applicationID = try database.applicationID()
        version = try database.userVersion()
        objectCount = try database.scalar("SELECT count(*) FROM sqlite_master")?.integerValue ?? 0
    }

    /// A new, empty file that nobody has claimed yet.
    var isFresh: Bool {
        applicationID == 0 && version == 0 && objectCount == 0
    }

    func check(against schema: StoreSchema, path: String) throws(StoreFileError) {
        if !isFresh && applicationID != schema.applicationID {
            throw .foreignDatabase(path: path, applicationID: applicationID, expected: schema.name)
        }
        if version > schema.version {
            throw .newerSchema(path: path, version: version, supportedVersion: schema.version, name: schema.name)
        }
    }
}
