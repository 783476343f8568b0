#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import LinkStore
import XCTest

final class DeliveryStoreDiskFullTests: DirectoryTestCase {
    private enum Stage: Equatable {
        case apply, commit
    }

    /// What happened to the turns tried while the file size was limited.
    private struct Outcome {
        var committedTurns = 0
        var failure: (stage: Stage, error: SQLiteError)?
        var stateAfterRollback: DurableState?
        var inTransactionAfterRollback = true
        var secondFailure: SQLiteError?
    }

    private var path: String { directory.file("watch.db") }

    /// The largest of the database's files, so that a limit above it leaves room for a few
    /// turns only.
    private func largestFileSize() throws -> Int {
        try [path, path + "-wal"].filter { FileManager.default.fileExists(atPath: $0) }.map(fileSize).max() ?? 0
    }

    /// Commits turns of `turnSize` enqueues of `payloadSize` bytes (and as many small
    /// receives) under a file size limit until one fails, rolls it back, and tries a larger
    /// turn, still under the limit.
    private func fillUntilFull(
        _ store: DeliveryStore, nextSeq: inout UInt64, committed: inout DurableState,
        turnSize: Int, payloadSize: Int, room: Int
    ) throws -> Outcome {
        let limit = try largestFileSize() + room
        var captured = committed
        let outcome = try withFileSizeLimit(limit) { () throws -> Outcome in
            var outcome = Outcome()
            for _ in 0..<1_000 {
                var stage = Stage.apply
                do {
                    for offset in 0..<UInt64(turnSize) {
                        try store.apply(.enqueue(outbound(.userInfo, nextSeq + offset, payloadSize: payloadSize)))
                        try store.apply(.receive(inbound(nextSeq + offset, payloadSize: 16)))
                    }
                    stage = .commit
                    try store.commit()
                    nextSeq += UInt64(turnSize)
                    outcome.committedTurns += 1
                    captured = try store.load()
                } catch let error as SQLiteError {
                    outcome.failure = (stage, error)
                    break
                }
            }
            guard outcome.failure != nil else { return outcome }
            store.rollback()
            outcome.inTransactionAfterRollback = store.inTransaction
            outcome.stateAfterRollback = try? store.load()
            do {
                for offset in 0..<UInt64(2 * turnSize) {
                    try store.apply(.enqueue(outbound(.userInfo, nextSeq + offset, payloadSize: payloadSize)))
                }
                try store.commit()
            } catch let error as SQLiteError {
                outcome.secondFailure = error
                store.rollback()
            }
            return outcome
        }
        committed = captured
        return outcome
    }

    private func assertFullDiskHandled(
        turnSize: Int, payloadSize: Int, room: Int, expectedStage: Stage,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        var store = try DeliveryStore(path: path)
        try store.apply(.setApplicationContext(pattern(3, count: 1_000)))
        for seq in UInt64(1)...8 {
            try store.apply(.enqueue(outbound(.userInfo, seq, payloadSize: 16_384)))
        }
        try store.commit()
        var nextSeq: UInt64 = 9
        var committed = try store.load()

        let outcome = try fillUntilFull(
            store, nextSeq: &nextSeq, committed: &committed, turnSize: turnSize, payloadSize: payloadSize, room: room)

        guard let failure = outcome.failure else {
            return XCTFail("\(outcome.committedTurns) turns fitted under the limit", file: file, line: line)
        }
        XCTAssertTrue(failure.error.isDiskFull, "\(failure.error)", file: file, line: line)
        XCTAssertFalse(failure.error.isCorrupt, file: file, line: line)
        XCTAssertEqual(failure.stage, expectedStage, "\(failure.error)", file: file, line: line)
        XCTAssertFalse(outcome.inTransactionAfterRollback, file: file, line: line)
        XCTAssertEqual(outcome.stateAfterRollback, committed, "the committed state changed", file: file, line: line)
        XCTAssertEqual(outcome.secondFailure?.isDiskFull, true, "a turn while still full", file: file, line: line)

        XCTAssertFalse(store.inTransaction, file: file, line: line)
        XCTAssertEqual(try store.load(), committed, file: file, line: line)
        try store.apply(.enqueue(outbound(.userInfo, nextSeq, payloadSize: payloadSize)))
        try store.apply(.acknowledge(.userInfo, upTo: 8))
        try store.commit()
        committed.outbox.removeAll { $0.seq <= 8 }
        committed.outbox.append(outbound(.userInfo, nextSeq, payloadSize: payloadSize))
        committed.cursors[.userInfo]?.lastAssigned = nextSeq
        committed.cursors[.userInfo]?.lastAcknowledged = 8
        XCTAssertEqual(try store.load(), committed, file: file, line: line)
        store.close()

        store = try DeliveryStore(path: path)
        XCTAssertEqual(store.openOutcome, .opened(version: 3), file: file, line: line)
        XCTAssertEqual(try store.load(), committed, file: file, line: line)
        store.close()
    }

    /// Small turns fit in SQLite's page cache: the WAL is written, and fails, at commit.
    func testATurnThatDoesNotFitFailsAtCommitAndTheStoreRecovers() throws {
        try assertFullDiskHandled(turnSize: 4, payloadSize: 16_384, room: 1 << 20, expectedStage: .commit)
    }

    /// A turn larger than SQLite's page cache spills into the WAL while it is applied.
    func testATurnLargerThanThePageCacheFailsWhileApplyingAndTheStoreRecovers() throws {
        try assertFullDiskHandled(turnSize: 64, payloadSize: 65_536, room: 1 << 20, expectedStage: .apply)
    }
}
