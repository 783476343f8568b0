import Foundation
import LinkStore
import XCTest

/// The app's transfers that finished while it was not running (schema version 3), and the
/// migration from version 2.
final class DeliveryStoreFinishedTests: DirectoryTestCase {
    private var path: String { directory.file("phone.db") }

    private func finished(_ seq: UInt64, _ channel: QueueChannel = .userInfo, error: Int? = nil) -> FinishedTransfer {
        FinishedTransfer(
            seq: seq, channel: channel, transferId: "T-\(seq)", payload: pattern(Int(seq), count: 40),
            flags: [.madeByApp], errorCode: error, errorMessage: error.map { "failed with \($0)" },
            finishedAt: 1_800_000_000.25 + Double(seq))
    }

    private func turn(_ store: DeliveryStore, _ operations: [DurableOperation]) throws {
        for operation in operations { try store.apply(operation) }
        try store.commit()
    }

    func testFinishedTransfersSurviveAReopenUntilRemovedAndKeepTheirSeqReserved() throws {
        var store = try DeliveryStore(path: path)
        try turn(store, [.recordFinished(finished(9, .file, error: 7015)), .recordFinished(finished(4))])
        store.close()
        store = try DeliveryStore(path: path)
        var state = try store.load()
        XCTAssertEqual(state.finished, [finished(4), finished(9, .file, error: 7015)], "in seq order, the error kept")
        XCTAssertGreaterThanOrEqual(state.reservedSeq, 9, "a restart never hands out their seq again")

        try store.apply(.removeFinished(upTo: 4))
        store.rollback()
        XCTAssertEqual(try store.load().finished.count, 2, "a rolled back turn removes nothing")
        try turn(store, [.removeFinished(upTo: 4)])
        store.close()
        store = try DeliveryStore(path: path)
        state = try store.load()
        XCTAssertEqual(state.finished, [finished(9, .file, error: 7015)])
        store.close()
    }

    func testAVersion2DatabaseIsMigratedAndKeepsItsRows() throws {
        let version2 = StoreSchema(
            applicationID: DeliveryStore.applicationID, migrations: Array(DeliveryStore.schema.migrations.prefix(2)))
        do {
            let (database, outcome) = try StoreFile.open(path: path, schema: version2)
            XCTAssertEqual(outcome, .created(version: 2))
            try database.execute("INSERT INTO outbox VALUES (1, 5, 'T-5', x'62706c6973743030', 64, 1800000000.0);")
            database.close()
        }
        let store = try DeliveryStore(path: path)
        XCTAssertEqual(store.openOutcome, .migrated(from: 2, to: 3))
        XCTAssertEqual(try store.load().outbox.map(\.flags), [[.madeByApp]])
        try turn(store, [.recordFinished(finished(1))])
        XCTAssertEqual(try store.load().finished, [finished(1)])
        store.close()
    }
}
