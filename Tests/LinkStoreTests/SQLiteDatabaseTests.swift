import LinkStore
import XCTest

private struct Refusal: Error {}

final class SQLiteDatabaseTests: DirectoryTestCase {
    private var database: SQLiteDatabase!

    override func setUpWithError() throws {
        try super.setUpWithError()
        database = try SQLiteDatabase(path: directory.file("test.db"))
        try database.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)")
    }

    override func tearDown() {
        database.close()
        database = nil
        super.tearDown()
    }

    private func count() throws -> Int64? {
        try database.scalar("SELECT count(*) FROM items")?.integerValue
    }

    func testOpenAppliesTheDurabilitySettings() throws {
        XCTAssertEqual(try database.journalMode(), .wal)
        XCTAssertEqual(try database.pragma("synchronous"), .integer(2))
        XCTAssertEqual(try database.pragma("foreign_keys"), .integer(1))
        XCTAssertEqual(try database.pragma("busy_timeout"), .integer(5_000))
        XCTAssertEqual(try database.quickCheck(), [])
        XCTAssertFalse(SQLiteDatabase.libraryVersion.isEmpty)
    }

    func testOpeningAMissingFileWithoutCreateFails() {
        let error = assertSQLiteError(
            try SQLiteDatabase(path: self.directory.file("missing.db"), options: .init(access: .readWrite)))
        XCTAssertEqual(error?.code, 14)
        XCTAssertEqual(error?.operation, "open")
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.file("missing.db")))
    }

    func testReadOnlyConnectionsCannotWrite() throws {
        let reader = try SQLiteDatabase(path: directory.file("test.db"), options: .readOnly)
        XCTAssertEqual(assertSQLiteError(try reader.execute("INSERT INTO items (id) VALUES (1)"))?.code, 8)
    }

    func testTransactionCommits() throws {
        let result = try database.transaction {
            XCTAssertTrue(database.inTransaction)
            try database.run("INSERT INTO items (name) VALUES (?)", "a")
            try database.run("INSERT INTO items (name) VALUES (?)", "b")
            return database.lastInsertRowID
        }
        XCTAssertEqual(result, 2)
        XCTAssertFalse(database.inTransaction)
        let other = try SQLiteDatabase(path: directory.file("test.db"))
        XCTAssertEqual(try other.scalar("SELECT count(*) FROM items"), .integer(2))
    }

    func testTransactionRollsBackWhenTheBodyThrows() throws {
        try database.run("INSERT INTO items (name) VALUES ('kept')")
        XCTAssertThrowsError(
            try database.transaction {
                try database.run("INSERT INTO items (name) VALUES ('dropped')")
                throw Refusal()
            }
        ) { XCTAssertTrue($0 is Refusal) }
        XCTAssertFalse(database.inTransaction)
        XCTAssertEqual(try count(), 1)
    }

    func testTransactionRollsBackWhenAStatementFails() throws {
        XCTAssertNotNil(
            assertSQLiteError(
                try self.database.transaction {
                    try self.database.run("INSERT INTO items (id) VALUES (1)")
                    try self.database.run("INSERT INTO items (id) VALUES (1)")
                }))
        XCTAssertFalse(database.inTransaction)
        XCTAssertEqual(try count(), 0)
    }

    func testNestedTransactionsAreSavepoints() throws {
        try database.transaction {
            try database.run("INSERT INTO items (name) VALUES ('outer')")
            XCTAssertThrowsError(
                try database.transaction {
                    try database.run("INSERT INTO items (name) VALUES ('inner, undone')")
                    throw Refusal()
                }
            ) { XCTAssertTrue($0 is Refusal, "\($0)") }
            try database.transaction {
                try database.run("INSERT INTO items (name) VALUES ('inner, kept')")
            }
            XCTAssertTrue(database.inTransaction)
        }
        let names = try database.prepare("SELECT name FROM items ORDER BY id").mapRows { $0.string(at: 0) }
        XCTAssertEqual(names, ["outer", "inner, kept"])
    }

    func testExplicitBeginCommitAndRollback() throws {
        try database.begin()
        XCTAssertTrue(database.inTransaction)
        try database.run("INSERT INTO items (name) VALUES ('one')")
        try database.commit()
        XCTAssertFalse(database.inTransaction)

        try database.begin(.deferred)
        try database.run("INSERT INTO items (name) VALUES ('two')")
        try database.rollback()
        XCTAssertFalse(database.inTransaction)
        try database.rollback()
        XCTAssertEqual(try count(), 1)

        XCTAssertNotNil(assertSQLiteError(try self.database.commit()))
        try database.begin(.exclusive)
        XCTAssertNotNil(assertSQLiteError(try self.database.begin()))
        try database.rollback()
    }

    func testImmediateTransactionsReportABusyDatabase() throws {
        let other = try SQLiteDatabase(path: directory.file("test.db"), options: .init(busyTimeoutMilliseconds: 0))
        try database.begin()
        let error = assertSQLiteError(try other.begin())
        XCTAssertEqual(error?.isBusy, true)
        XCTAssertFalse(other.inTransaction)
        try database.commit()
        try other.begin()
        try other.commit()
    }

    func testCloseRollsBackAnOpenTransaction() throws {
        try database.begin()
        try database.run("INSERT INTO items (name) VALUES ('uncommitted')")
        database.close()
        database = try SQLiteDatabase(path: directory.file("test.db"))
        XCTAssertEqual(try count(), 0)
    }

    func testCachedStatementsAreReusedResetAndCleared() throws {
        let sql = "SELECT ?, count(*) FROM items"
        let first = try database.cachedStatement(sql)
        try first.bind(42, at: 1)
        XCTAssertTrue(try first.step())
        XCTAssertEqual(first.int(at: 0), 42)

        let again = try database.cachedStatement(sql)
        XCTAssertTrue(first === again)
        XCTAssertTrue(try again.step())
        XCTAssertTrue(again.isNull(at: 0), "bindings are cleared")
        again.reset()

        XCTAssertFalse(try database.prepare(sql) === first)
    }

    func testStatementCacheIsBoundedAndHeldStatementsSurviveEviction() throws {
        let small = try SQLiteDatabase(path: directory.file("test.db"), options: .init(statementCacheCapacity: 3))
        let held = try small.cachedStatement("SELECT 0")
        for index in 1...10 {
            _ = try small.cachedStatement("SELECT \(index)")
            XCTAssertLessThanOrEqual(small.cachedStatementCount, 3)
        }
        XCTAssertTrue(try held.step())
        XCTAssertEqual(held.int(at: 0), 0)
        held.reset()
        small.clearStatementCache()
        XCTAssertEqual(small.cachedStatementCount, 0)

        let uncached = try SQLiteDatabase(path: directory.file("test.db"), options: .init(statementCacheCapacity: 0))
        XCTAssertFalse(try uncached.cachedStatement("SELECT 1") === uncached.cachedStatement("SELECT 1"))
    }

    func testCachedStatementsSeeSchemaChanges() throws {
        let select = try database.cachedStatement("SELECT * FROM items")
        XCTAssertEqual(select.columnCount, 2)
        try database.execute("ALTER TABLE items ADD COLUMN extra INTEGER DEFAULT 7")
        try database.run("INSERT INTO items (name) VALUES ('x')")
        let again = try database.cachedStatement("SELECT * FROM items")
        XCTAssertTrue(try again.step())
        XCTAssertEqual(again.int(at: 2), 7)
        again.reset()
    }

    func testUserVersionAndApplicationID() throws {
        XCTAssertEqual(try database.userVersion(), 0)
        XCTAssertEqual(try database.applicationID(), 0)
        try database.setUserVersion(12)
        try database.setApplicationID(0x574C_4E4B)
        XCTAssertEqual(try database.userVersion(), 12)
        XCTAssertEqual(try database.applicationID(), 0x574C_4E4B)
        try database.setApplicationID(-2)
        XCTAssertEqual(try database.applicationID(), -2)
    }

    func testPragmaHelpersRefuseAnythingButNamesAndPlainValues() throws {
        XCTAssertNotNil(assertSQLiteError(try self.database.pragma("user_version; DROP TABLE items")))
        XCTAssertNotNil(assertSQLiteError(try self.database.setPragma("user_version", to: "1; DROP TABLE items")))
        XCTAssertNotNil(assertSQLiteError(try self.database.setPragma("cache_size", to: "")))
        XCTAssertEqual(try database.pragma("main.user_version"), .integer(0))
        try database.setPragma("cache_size", to: "-4000")
        XCTAssertEqual(try database.pragma("cache_size"), .integer(-4000))
        try database.setPragma("synchronous", to: "NORMAL")
        XCTAssertEqual(try database.pragma("synchronous"), .integer(1))
    }

    func testJournalModeRefusalIsAnError() throws {
        let memory = try SQLiteDatabase(path: ":memory:", options: .init(journalMode: nil))
        let error = assertSQLiteError(try memory.setJournalMode(.wal))
        XCTAssertTrue(error?.message.contains("instead of wal") == true)
    }

    func testCheckpointMovesTheWALIntoTheDatabaseFile() throws {
        try database.run("INSERT INTO items (name) VALUES ('x')")
        let (walFrames, checkpointed) = try database.checkpoint(.truncate)
        XCTAssertEqual(walFrames, checkpointed)
        XCTAssertEqual(try fileSize(directory.file("test.db-wal")), 0)
    }
}
