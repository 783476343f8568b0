import Foundation
import LinkStore
import XCTest

private let applicationID: Int32 = 0x574C_4E4B

private let version1 = Migration(
    version: 1,
    sql: """
        CREATE TABLE outbox (channel INTEGER NOT NULL, seq INTEGER NOT NULL, payload BLOB NOT NULL,
                             PRIMARY KEY (channel, seq));
        """)

private let version2 = Migration(version: 2) { database in
    try database.execute("ALTER TABLE outbox ADD COLUMN size INTEGER NOT NULL DEFAULT 0")
    try database.execute("UPDATE outbox SET size = length(payload)")
    try database.execute("CREATE TABLE inbox (channel INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (channel, seq))")
}

private let schema1 = StoreSchema(applicationID: applicationID, migrations: [version1])
private let schema2 = StoreSchema(applicationID: applicationID, migrations: [version1, version2])

final class StoreFileTests: DirectoryTestCase {
    private var path: String { directory.file("phone.db") }

    /// Asserts that opening `path` with `schema` is refused and changes nothing on disk.
    private func assertRefusedUnchanged(
        schema: StoreSchema = schema2, file: StaticString = #filePath, line: UInt = #line
    ) throws -> StoreFileError? {
        let bytes = try fileBytes(path)
        let listing = try directory.contents()
        let error = assertRefused(try StoreFile.open(path: self.path, schema: schema), file: file, line: line)
        XCTAssertEqual(try fileBytes(path), bytes, "the refused file was modified", file: file, line: line)
        XCTAssertEqual(try directory.contents(), listing, "files appeared or vanished", file: file, line: line)
        return error
    }

    func testANewFileIsCreatedWithTheWholeSchema() throws {
        let (database, outcome) = try StoreFile.open(path: path, schema: schema2)
        XCTAssertEqual(outcome, .created(version: 2))
        XCTAssertEqual(try database.applicationID(), applicationID)
        XCTAssertEqual(try database.userVersion(), 2)
        XCTAssertEqual(try database.journalMode(), .wal)
        try database.run("INSERT INTO inbox (channel, seq) VALUES (1, 1)")
        database.close()

        let (reopened, again) = try StoreFile.open(path: path, schema: schema2)
        XCTAssertEqual(again, .opened(version: 2))
        XCTAssertEqual(try reopened.scalar("SELECT count(*) FROM inbox"), .integer(1))
    }

    func testAnEmptyFileIsTakenAsNew() throws {
        try writeFile(path, [])
        let (database, outcome) = try StoreFile.open(path: path, schema: schema1)
        XCTAssertEqual(outcome, .created(version: 1))
        XCTAssertEqual(try database.applicationID(), applicationID)
    }

    func testMigrationFromVersion1To2KeepsTheData() throws {
        let (old, created) = try StoreFile.open(path: path, schema: schema1)
        XCTAssertEqual(created, .created(version: 1))
        try old.transaction {
            for seq in 1...3 {
                try old.run("INSERT INTO outbox (channel, seq, payload) VALUES (1, ?, ?)", .integer(Int64(seq)), .blob(pattern(seq, count: seq * 10)))
            }
        }
        old.close()

        let (database, outcome) = try StoreFile.open(path: path, schema: schema2)
        XCTAssertEqual(outcome, .migrated(from: 1, to: 2))
        XCTAssertEqual(try database.userVersion(), 2)
        let rows = try database.prepare("SELECT seq, payload, size FROM outbox ORDER BY seq").mapRows {
            ($0.int(at: 0), $0.blob(at: 1), $0.int(at: 2))
        }
        XCTAssertEqual(rows.map(\.0), [1, 2, 3])
        XCTAssertEqual(rows.map(\.1), [pattern(1, count: 10), pattern(2, count: 20), pattern(3, count: 30)])
        XCTAssertEqual(rows.map(\.2), [10, 20, 30])
        XCTAssertEqual(try database.scalar("SELECT count(*) FROM inbox"), .integer(0))
    }

    func testAFailedMigrationChangesNothing() throws {
        let (old, _) = try StoreFile.open(path: path, schema: schema1)
        try old.run("INSERT INTO outbox (channel, seq, payload) VALUES (1, 1, x'00')")
        old.close()

        let broken = StoreSchema(
            applicationID: applicationID,
            migrations: [
                version1,
                Migration(version: 2, sql: "CREATE TABLE inbox (seq INTEGER); DELETE FROM outbox; SELECT * FROM nowhere;"),
            ])
        let error = assertSQLiteError(try StoreFile.open(path: self.path, schema: broken))
        XCTAssertTrue(error?.message.contains("no such table: nowhere") == true, "\(String(describing: error))")

        let (database, outcome) = try StoreFile.open(path: path, schema: schema1)
        XCTAssertEqual(outcome, .opened(version: 1))
        XCTAssertEqual(try database.scalar("SELECT count(*) FROM outbox"), .integer(1))
        XCTAssertEqual(try database.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'inbox'"), .integer(0))
    }

    func testRandomBytesAreRefusedAndLeftAlone() throws {
        var bytes = pattern(99, count: 8192)
        bytes[0] = 0x7F
        try writeFile(path, bytes)
        let error = try assertRefusedUnchanged()
        guard case .corrupt(let refusedPath, let reason) = error else {
            return XCTFail("expected .corrupt, got \(String(describing: error))")
        }
        XCTAssertEqual(refusedPath, path)
        XCTAssertTrue(reason.contains("not an SQLite database"), reason)
        XCTAssertTrue(error!.description.hasPrefix("\(path) is corrupt: "), error!.description)
    }

    func testAShortFileIsRefused() throws {
        try writeFile(path, Array("SQLite".utf8))
        guard case .corrupt = try assertRefusedUnchanged() else { return XCTFail() }
    }

    func testADamagedDatabaseIsRefusedAndLeftAlone() throws {
        do {
            let database = try SQLiteDatabase(path: path, options: .init(journalMode: .delete))
            try database.setApplicationID(applicationID)
            try database.execute("CREATE TABLE t (x TEXT); CREATE INDEX t_x ON t (x);")
            try database.transaction {
                for index in 0..<2000 {
                    try database.run("INSERT INTO t (x) VALUES (?)", .text("row \(index) " + String(repeating: "x", count: 40)))
                }
            }
            try database.setUserVersion(1)
        }
        var bytes = try fileBytes(path)
        let pageSize = 4096
        XCTAssertGreaterThan(bytes.count, 8 * pageSize)
        for offset in (3 * pageSize)..<(5 * pageSize) {
            bytes[offset] = UInt8(truncatingIfNeeded: offset &* 31)
        }
        try writeFile(path, bytes)

        let error = try assertRefusedUnchanged(schema: schema1)
        guard case .corrupt = error else {
            return XCTFail("expected .corrupt, got \(String(describing: error))")
        }
    }

    func testAForeignDatabaseIsRefusedAndLeftAlone() throws {
        do {
            let foreign = try SQLiteDatabase(path: path, options: .init(journalMode: .delete))
            try foreign.setApplicationID(0x0F00_BA44)
            try foreign.execute("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
        }
        let error = try assertRefusedUnchanged()
        XCTAssertEqual(error, .foreignDatabase(path: path, applicationID: 0x0F00_BA44, expected: "WatchLink"))
        XCTAssertEqual(error?.description, "\(path) is not a WatchLink database (application_id 0x0F00BA44)")
    }

    func testAForeignDatabaseWithoutApplicationIDIsRefusedAndLeftAlone() throws {
        do {
            let foreign = try SQLiteDatabase(path: path, options: .init(journalMode: .wal))
            try foreign.execute("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine');")
        }
        let error = try assertRefusedUnchanged()
        XCTAssertEqual(error?.description, "\(path) is not a WatchLink database (application_id 0x00000000)")
    }

    func testAForeignDatabaseWithItsChangesStillInTheWALIsLeftAlone() throws {
        let foreign = try SQLiteDatabase(path: path, options: .init(journalMode: .wal))
        try foreign.setPragma("wal_autocheckpoint", to: "0")
        try foreign.execute("CREATE TABLE notes (body TEXT)")
        try foreign.setApplicationID(-7)
        try foreign.run("INSERT INTO notes VALUES ('in the WAL only')")
        XCTAssertGreaterThan(try fileSize(path + "-wal"), 0)
        let wal = try fileBytes(path + "-wal")
        let error = try assertRefusedUnchanged()
        XCTAssertEqual(error, .foreignDatabase(path: path, applicationID: -7, expected: "WatchLink"))
        XCTAssertEqual(try fileBytes(path + "-wal"), wal)
        XCTAssertEqual(try foreign.scalar("SELECT body FROM notes"), .text("in the WAL only"))
    }

    func testANewerSchemaIsRefused() throws {
        let (database, _) = try StoreFile.open(path: path, schema: schema2)
        database.close()
        let error = try assertRefusedUnchanged(schema: schema1)
        XCTAssertEqual(error, .newerSchema(path: path, version: 2, supportedVersion: 1, name: "WatchLink"))
        XCTAssertEqual(
            error?.description,
            "\(path) was created by a newer WatchLink (schema version 2; this version knows up to 1)")
    }

    func testASymbolicLinkIsRefused() throws {
        let (database, _) = try StoreFile.open(path: directory.file("real.db"), schema: schema1)
        database.close()
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: directory.file("real.db"))
        let error = assertRefused(try StoreFile.open(path: self.path, schema: schema1))
        XCTAssertEqual(error, .notARegularFile(path: path, kind: "symbolic link"))
    }

    func testADirectoryIsRefused() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let error = assertRefused(try StoreFile.open(path: self.path, schema: schema1))
        XCTAssertEqual(error?.description, "\(path) is not a regular file but a directory")
    }

    func testAStrayWALWithoutItsDatabaseIsRefused() throws {
        try writeFile(path + "-wal", pattern(3, count: 100))
        let error = assertRefused(try StoreFile.open(path: self.path, schema: schema1))
        XCTAssertEqual(error, .strayJournal(path: path, journal: path + "-wal"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: path))
    }

    func testAMissingDirectoryIsReportedWithThePath() throws {
        let missing = directory.file("missing/phone.db")
        let error = assertSQLiteError(try StoreFile.open(path: missing, schema: schema1))
        XCTAssertEqual(error?.code, 14)
        XCTAssertEqual(error?.path, missing)
    }
}
