#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import LinkStore
import XCTest

private let schema = StoreSchema(
    applicationID: 0x574C_4E4B,
    migrations: [
        Migration(version: 1, sql: "CREATE TABLE blobs (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)")
    ])

final class DiskFullTests: XCTestCase {
    func testAFullDiskFailsTheTransactionCleanlyAndWritesWorkOnceThereIsRoom() throws {
        let directory = try TemporaryDirectory()
        let path = directory.file("store.db")
        var (database, _) = try StoreFile.open(path: path, schema: schema)
        let insert = "INSERT INTO blobs (id, payload) VALUES (?, ?)"
        let rowSize = 64 * 1024
        var committed = 0

        func commitBatch(_ rows: Int) throws {
            try database.transaction {
                for id in (committed + 1)...(committed + rows) {
                    try database.run(insert, .integer(Int64(id)), .blob(pattern(id, count: rowSize)))
                }
            }
            committed += rows
        }

        try commitBatch(8)
        try database.checkpoint(.truncate)
        let limit = try fileSize(path) + 2 * 1024 * 1024

        let failure: SQLiteError? = try withFileSizeLimit(limit) {
            for _ in 0..<1000 {
                do {
                    try commitBatch(4)
                } catch let error as SQLiteError {
                    return error
                }
            }
            return nil
        }

        guard let failure else {
            return XCTFail("\(committed) rows of \(rowSize) bytes fitted under a limit of \(limit) bytes")
        }
        XCTAssertTrue(failure.isDiskFull, "\(failure)")
        XCTAssertFalse(failure.isCorrupt)
        XCTAssertFalse(database.inTransaction, "the failed transaction is still open")
        XCTAssertGreaterThan(committed, 8)
        XCTAssertEqual(try database.scalar("SELECT count(*) FROM blobs"), .integer(Int64(committed)))
        XCTAssertEqual(try database.scalar("SELECT max(id) FROM blobs"), .integer(Int64(committed)))

        try commitBatch(4)
        XCTAssertEqual(try database.scalar("SELECT count(*) FROM blobs"), .integer(Int64(committed)))
        database.close()

        let outcome: StoreFile.Outcome
        (database, outcome) = try StoreFile.open(path: path, schema: schema)
        XCTAssertEqual(outcome, .opened(version: 1))
        XCTAssertEqual(try database.quickCheck(), [])
        var expected = 1
        try database.prepare("SELECT id, payload FROM blobs ORDER BY id").forEachRow { row in
            XCTAssertEqual(row.int(at: 0), expected)
            XCTAssertTrue(row.blob(at: 1) == pattern(expected, count: rowSize), "row \(expected) changed")
            expected += 1
        }
        XCTAssertEqual(expected - 1, committed)
        try commitBatch(1)
        database.close()
    }

    func testAFullDatabaseIsDiskFull() throws {
        let directory = try TemporaryDirectory()
        let database = try SQLiteDatabase(path: directory.file("small.db"))
        try database.execute("CREATE TABLE blobs (payload BLOB)")
        try database.setPragma("max_page_count", to: "20")
        let error = assertSQLiteError(
            try {
                for index in 0..<100 {
                    try database.run("INSERT INTO blobs VALUES (?)", .blob(pattern(index, count: 4096)))
                }
            }())
        XCTAssertEqual(error?.code, 13)
        XCTAssertEqual(error?.isDiskFull, true)
    }

    func testIOErrorsAreDiskFullOnlyForWantOfSpace() {
        func ioError(_ errno: Int32, extended: Int32 = 778) -> SQLiteError {
            SQLiteError(extendedCode: extended, systemErrno: errno, message: "disk I/O error", operation: "step", path: "/x.db")
        }
        XCTAssertTrue(ioError(EFBIG).isDiskFull)
        XCTAssertTrue(ioError(ENOSPC).isDiskFull)
        XCTAssertTrue(ioError(EDQUOT, extended: 1034).isDiskFull)
        XCTAssertFalse(ioError(EIO).isDiskFull)
        XCTAssertFalse(ioError(0).isDiskFull)
        XCTAssertEqual(ioError(EFBIG).code, 10)
        XCTAssertFalse(ioError(EFBIG).isCorrupt)
        let corrupt = SQLiteError(extendedCode: 26, message: "file is not a database", operation: "step", path: "/x.db")
        XCTAssertTrue(corrupt.isCorrupt)
        XCTAssertTrue(SQLiteError(extendedCode: 267, message: "", operation: "step", path: "/x.db").isCorrupt)
        XCTAssertTrue(SQLiteError(extendedCode: 517, message: "", operation: "step", path: "/x.db").isBusy)
        XCTAssertTrue(SQLiteError(extendedCode: 6, message: "", operation: "step", path: "/x.db").isBusy)
    }
}
