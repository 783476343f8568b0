#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import LinkStore
import XCTest

private let schema = StoreSchema(applicationID: 0x574C_4E4B, migrations: [
    Migration(version: 1, sql: "CREATE TABLE items (seq INTEGER PRIMARY KEY, payload BLOB NOT NULL)"),
])

/// Commits one row a transaction, from argv[2] on, and prints each sequence number once
/// its COMMIT has returned.
private let writerScript = """
    import sqlite3, sys
    db = sqlite3.connect(sys.argv[1], isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("PRAGMA busy_timeout=5000")
    seq = int(sys.argv[2])
    while True:
        payload = bytes((seq * 7 + k) % 256 for k in range(seq % 3000))
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO items (seq, payload) VALUES (?, ?)", (seq, payload))
        db.execute("COMMIT")
        sys.stdout.write("%d\\n" % seq)
        sys.stdout.flush()
        seq += 1
    """

private func expectedPayload(_ seq: Int) -> [UInt8] {
    (0..<(seq % 3000)).map { UInt8((seq * 7 + $0) % 256) }
}

final class CrashSafetyTests: XCTestCase {
    private func pythonWithSQLite() throws -> Bool {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import sqlite3"]
        probe.standardOutput = FileHandle.nullDevice
        probe.standardError = FileHandle.nullDevice
        do {
            try probe.run()
        } catch {
            return false
        }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }

    /// Reads decimal lines from `fd` until `count` have arrived, the writer stops, or the
    /// deadline passes; returns the last number read.
    private func readAcknowledgements(from fd: Int32, count: Int, deadline: Date) throws -> Int? {
        var pending: [UInt8] = []
        var last: Int?
        var seen = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while seen < count {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { break }
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(min(remaining, 1) * 1000))
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { continue }
            let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if got < 0 && errno == EINTR { continue }
            guard got > 0 else { break }
            pending += buffer[0..<got]
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                last = Int(String(decoding: pending[..<newline], as: UTF8.self))
                pending.removeSubrange(...newline)
                seen += 1
            }
        }
        return last
    }

    func testRowsCommittedBeforeSIGKILLSurviveWithNoGaps() throws {
        guard try pythonWithSQLite() else {
            throw XCTSkip("python3 with its sqlite3 module is needed to write from another process")
        }
        let directory = try TemporaryDirectory()
        let path = directory.file("watch.db")
        try StoreFile.open(path: path, schema: schema).database.close()

        var nextSeq = 1
        for acknowledgementsBeforeKill in [1, 150, 400] {
            let writer = Process()
            let output = Pipe()
            writer.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            writer.arguments = ["python3", "-c", writerScript, path, String(nextSeq)]
            writer.standardOutput = output
            try writer.run()
            let acknowledged = try readAcknowledgements(
                from: output.fileHandleForReading.fileDescriptor, count: acknowledgementsBeforeKill,
                deadline: Date().addingTimeInterval(60))
            kill(writer.processIdentifier, SIGKILL)
            writer.waitUntilExit()
            XCTAssertEqual(writer.terminationReason, .uncaughtSignal)
            guard let acknowledged else {
                return XCTFail("the writer acknowledged nothing")
            }
            XCTAssertGreaterThanOrEqual(acknowledged, nextSeq + acknowledgementsBeforeKill - 1)

            let (database, outcome) = try StoreFile.open(path: path, schema: schema)
            XCTAssertEqual(outcome, .opened(version: 1))
            var expected = 1
            try database.prepare("SELECT seq, payload FROM items ORDER BY seq").forEachRow { row in
                XCTAssertEqual(row.int(at: 0), expected, "a gap before \(expected)")
                XCTAssertTrue(row.blob(at: 1) == expectedPayload(expected), "row \(expected) differs")
                expected += 1
            }
            let stored = expected - 1
            XCTAssertGreaterThanOrEqual(stored, acknowledged, "acknowledged rows were lost")
            database.close()
            nextSeq = stored + 1
        }
    }
}
