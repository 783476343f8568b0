import Foundation
import LinkStore
import XCTest

/// The file channel's rows (schema version 2) and the migration from version 1.
final class DeliveryStoreFileTests: DirectoryTestCase {
    private var path: String { directory.file("watch.db") }

    private func record(_ seq: UInt64, committed: UInt64 = 0) -> IncomingFileRecord {
        IncomingFileRecord(
            seq: seq, transferId: "T-\(seq)", header: pattern(Int(seq), count: 90),
            committedOffset: committed, receivedAt: 1_800_000_000.5 + Double(seq))
    }

    private func turn(_ store: DeliveryStore, _ operations: [DurableOperation]) throws {
        for operation in operations { try store.apply(operation) }
        try store.commit()
    }

    func testIncomingFilesSurviveAReopenInSeqOrder() throws {
        var store = try DeliveryStore(path: path)
        try turn(store, [.beginIncomingFile(record(7)), .beginIncomingFile(record(3))])
        try turn(store, [.setIncomingFileOffset(seq: 7, committedOffset: 8_388_608)])
        store.close()
        store = try DeliveryStore(path: path)
        XCTAssertEqual(try store.load().incomingFiles, [record(3), record(7, committed: 8_388_608)])

        try turn(store, [.setIncomingFileOffset(seq: 7, committedOffset: 0), .removeIncomingFile(seq: 3)])
        store.close()
        store = try DeliveryStore(path: path)
        XCTAssertEqual(try store.load().incomingFiles, [record(7)], "an offset may go back to 0 (a checksum mismatch)")
        store.close()
    }

    func testReceivingAFileWholeRemovesItsRecordAndRaisesTheCursorInOneTurn() throws {
        let store = try DeliveryStore(path: path)
        try turn(store, [.beginIncomingFile(record(4, committed: 16))])
        try store.apply(.removeIncomingFile(seq: 4))
        try store.apply(.receive(inbound(1, .file, channelSeq: 4)))
        store.rollback()
        XCTAssertEqual(try store.load().incomingFiles, [record(4, committed: 16)], "a rolled back turn leaves the record")
        XCTAssertEqual(try store.load().cursors[.file]?.lastReceived, 0)

        try turn(store, [.removeIncomingFile(seq: 4), .receive(inbound(1, .file, channelSeq: 4))])
        let state = try store.load()
        XCTAssertEqual(state.incomingFiles, [])
        XCTAssertEqual(state.cursors[.file]?.lastReceived, 4)
        XCTAssertEqual(state.undelivered.map(\.channel), [.file])
        store.close()
    }

    func testAVersion1DatabaseIsMigratedAndKeepsItsRows() throws {
        let version1 = StoreSchema(
            applicationID: DeliveryStore.applicationID,
            migrations: Array(DeliveryStore.schema.migrations.prefix(1)))
        do {
            let (database, outcome) = try StoreFile.open(path: path, schema: version1)
            XCTAssertEqual(outcome, .created(version: 1))
            try database.execute(
                """
                INSERT INTO cursor VALUES (1, 5, 4, 2);
                INSERT INTO outbox VALUES (1, 5, 'T-5', x'62706c6973743030', 0, 1800000000.0);
                """)
            database.close()
        }
        let store = try DeliveryStore(path: path)
        XCTAssertEqual(store.openOutcome, .migrated(from: 1, to: 3))
        var state = try store.load()
        XCTAssertEqual(state.outbox.map(\.transferId), ["T-5"])
        XCTAssertEqual(state.cursors[.userInfo], ChannelCursor(lastAssigned: 5, lastAcknowledged: 4, lastReceived: 2))
        XCTAssertEqual(state.cursors[.file], ChannelCursor())
        try turn(store, [.beginIncomingFile(record(1))])
        state = try store.load()
        XCTAssertEqual(state.incomingFiles, [record(1)])
        store.close()
        XCTAssertEqual(try DeliveryStore(path: path).openOutcome, .opened(version: 3))
    }
}
