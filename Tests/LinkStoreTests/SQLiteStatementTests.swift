import LinkStore
import XCTest

final class SQLiteStatementTests: DirectoryTestCase {
    private var database: SQLiteDatabase!

    override func setUpWithError() throws {
        try super.setUpWithError()
        database = try SQLiteDatabase(path: directory.file("test.db"))
        try database.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, score REAL, payload BLOB)")
    }

    override func tearDown() {
        database.close()
        database = nil
        super.tearDown()
    }

    func testInsertSelectUpdateDelete() throws {
        let insert = try database.prepare("INSERT INTO items (name, score, payload) VALUES (?, ?, ?)")
        try insert.bind("first", at: 1)
        try insert.bind(1.5, at: 2)
        try insert.bind([1, 2, 3] as [UInt8], at: 3)
        XCTAssertFalse(try insert.step())
        XCTAssertEqual(database.changes, 1)
        XCTAssertEqual(database.lastInsertRowID, 1)
        try insert.run("second", 2.5, .blob([]))
        XCTAssertEqual(database.lastInsertRowID, 2)

        let select = try database.prepare("SELECT id, name, score, payload FROM items ORDER BY id")
        XCTAssertEqual(select.columnCount, 4)
        XCTAssertEqual(select.columnName(at: 1), "name")
        let rows = try select.mapRows { [$0.value(at: 0), $0.value(at: 1), $0.value(at: 2), $0.value(at: 3)] }
        XCTAssertEqual(
            rows,
            [
                [.integer(1), .text("first"), .real(1.5), .blob([1, 2, 3])],
                [.integer(2), .text("second"), .real(2.5), .blob([])],
            ])

        try database.run("UPDATE items SET name = ? WHERE id = ?", "renamed", 2)
        XCTAssertEqual(database.changes, 1)
        XCTAssertEqual(try database.scalar("SELECT name FROM items WHERE id = 2"), .text("renamed"))

        try database.run("DELETE FROM items WHERE id = ?", 1)
        XCTAssertEqual(database.changes, 1)
        XCTAssertEqual(try database.scalar("SELECT count(*) FROM items"), .integer(1))
        XCTAssertEqual(database.totalChanges, 4)
    }

    func testBlobsKeepEveryByteAndTellEmptyFromNull() throws {
        let large = pattern(7, count: 1 << 20)
        let withZeros: [UInt8] = [0, 0, 255, 0, 1]
        let insert = try database.prepare("INSERT INTO items (id, payload) VALUES (?, ?)")
        try insert.run(1, .blob(large))
        try insert.run(2, .blob(withZeros))
        try insert.bind(3, at: 1)
        try insert.bind([UInt8](), at: 2)
        try insert.run()
        try insert.bind(4, at: 1)
        try insert.bindNull(at: 2)
        try insert.run()
        try insert.bind(5, at: 1)
        try insert.bind(withZeros[1...3], at: 2)
        try insert.run()
        try withZeros.withUnsafeBytes { bytes in
            try insert.bind(6, at: 1)
            try insert.bind(bytes: bytes, at: 2)
            try insert.run()
        }

        let select = try database.prepare("SELECT payload, typeof(payload) FROM items WHERE id = ?")
        func read(_ id: Int) throws -> ([UInt8], String) {
            try select.bind(id, at: 1)
            XCTAssertTrue(try select.step())
            defer { select.reset() }
            return (select.blob(at: 0), select.string(at: 1))
        }
        XCTAssertEqual(try read(1).0, large)
        XCTAssertEqual(try read(2).0, withZeros)
        XCTAssertEqual(try read(3).0, [])
        XCTAssertEqual(try read(3).1, "blob")
        XCTAssertEqual(try read(4).1, "null")
        XCTAssertEqual(try read(5).0, [0, 255, 0])
        XCTAssertEqual(try read(6).0, withZeros)

        try select.bind(1, at: 1)
        XCTAssertTrue(try select.step())
        let sum = select.withBlob(at: 0) { $0.reduce(0) { $0 &+ Int($1) } }
        XCTAssertEqual(sum, large.reduce(0) { $0 &+ Int($1) })
        select.reset()
    }

    func testBlobBindingIsACopy() throws {
        let insert = try database.prepare("INSERT INTO items (id, payload) VALUES (1, ?)")
        var bytes: [UInt8] = [1, 2, 3]
        try insert.bind(bytes, at: 1)
        bytes[0] = 9
        bytes = []
        try insert.run()
        XCTAssertEqual(try database.scalar("SELECT payload FROM items"), .blob([1, 2, 3]))
    }

    func testTextAndNumbers() throws {
        let insert = try database.prepare("INSERT INTO items (id, name, score) VALUES (?, ?, ?)")
        try insert.run(.integer(Int64.max), "žluťoučký kůň 🐎", .real(-0.25))
        try insert.run(.integer(Int64.min), "", nil)
        try insert.bind(true, at: 1)
        try insert.bind("a\u{0}b", at: 2)
        try insert.run()

        let select = try database.prepare("SELECT id, name, score, typeof(name), length(CAST(name AS BLOB)) FROM items ORDER BY id")
        var rows: [(Int64, String, Double, String, Int)] = []
        try select.forEachRow {
            rows.append(($0.int64(at: 0), $0.string(at: 1), $0.double(at: 2), $0.string(at: 3), $0.int(at: 4)))
        }
        XCTAssertEqual(rows.map(\.0), [Int64.min, 1, Int64.max])
        XCTAssertEqual(rows.map(\.1), ["", "a\u{0}b", "žluťoučký kůň 🐎"])
        XCTAssertEqual(rows.map(\.3), ["text", "text", "text"])
        XCTAssertEqual(rows[1].4, 3)
        XCTAssertEqual(rows[2].2, -0.25)
        XCTAssertTrue(try select.step())
        XCTAssertFalse(select.isNull(at: 1))
        XCTAssertTrue(select.isNull(at: 2))
        select.reset()
    }

    func testStepReportsTheEndAndCanRunAgain() throws {
        try database.execute("INSERT INTO items (id) VALUES (1), (2)")
        let select = try database.prepare("SELECT id FROM items ORDER BY id")
        for _ in 0..<2 {
            XCTAssertTrue(try select.step())
            XCTAssertEqual(select.int(at: 0), 1)
            XCTAssertTrue(try select.step())
            XCTAssertEqual(select.int(at: 0), 2)
            XCTAssertFalse(try select.step())
        }
    }

    func testErrorsNameTheOperationTheSQLAndTheFile() throws {
        let syntax = assertSQLiteError(try database.prepare("SELEKT 1"))
        XCTAssertEqual(syntax?.code, 1)
        XCTAssertEqual(syntax?.operation, "prepare")
        XCTAssertEqual(syntax?.sql, "SELEKT 1")
        XCTAssertEqual(syntax?.path, directory.file("test.db"))
        XCTAssertTrue(syntax?.description.contains("near \"SELEKT\": syntax error") == true, syntax?.description ?? "")
        XCTAssertTrue(syntax?.description.hasPrefix(directory.file("test.db") + ": prepare failed") == true)

        let statement = try database.prepare("SELECT ?")
        let range = assertSQLiteError(try statement.bind(1, at: 2))
        XCTAssertEqual(range?.code, 25)
        XCTAssertEqual(range?.operation, "bind")

        try database.run("INSERT INTO items (id) VALUES (1)")
        let duplicate = assertSQLiteError(try self.database.run("INSERT INTO items (id) VALUES (1)"))
        XCTAssertEqual(duplicate?.isConstraintViolation, true)
        XCTAssertEqual(duplicate?.extendedCode, 1555)
        XCTAssertFalse(duplicate?.isDiskFull ?? true)
        XCTAssertFalse(duplicate?.isCorrupt ?? true)
    }

    func testPrepareTakesExactlyOneStatement() throws {
        XCTAssertNotNil(assertSQLiteError(try database.prepare("SELECT 1; SELECT 2")))
        XCTAssertNotNil(assertSQLiteError(try database.prepare("  -- nothing here\n")))
        XCTAssertEqual(try database.prepare("SELECT 1; -- trailing\n").columnCount, 1)
    }

    func testStatementsFailClearlyAfterTheDatabaseCloses() throws {
        let statement = try database.prepare("SELECT 1")
        let cached = try database.cachedStatement("SELECT 2")
        database.close()
        database.close()
        XCTAssertFalse(database.isOpen)
        XCTAssertEqual(assertSQLiteError(try statement.step())?.message, "the database connection is closed")
        XCTAssertEqual(assertSQLiteError(try cached.step())?.code, 21)
        XCTAssertNotNil(assertSQLiteError(try self.database.execute("SELECT 1")))
    }
}
