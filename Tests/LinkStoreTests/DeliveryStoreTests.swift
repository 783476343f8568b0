import Foundation
import LinkStore
import XCTest

func outbound(
    _ channel: QueueChannel, _ seq: UInt64, flags: ItemFlags = [], payloadSize: Int = 48
) -> OutboundItem {
    OutboundItem(
        channel: channel, seq: seq, transferId: "T-\(channel.rawValue)-\(seq)",
        payload: pattern(Int(truncatingIfNeeded: seq) &* 7 &+ Int(channel.rawValue), count: payloadSize), flags: flags,
        createdAt: 1_800_000_000.25 + Double(seq))
}

func inbound(
    _ seq: UInt64, _ channel: QueueChannel = .userInfo, channelSeq: UInt64? = nil, flags: ItemFlags = [],
    delivered: Bool = false, payloadSize: Int = 48
) -> InboxItem {
    InboxItem(
        seq: seq, channel: channel, channelSeq: channelSeq ?? seq,
        payload: pattern(Int(truncatingIfNeeded: seq) &* 11 &+ Int(channel.rawValue), count: payloadSize), flags: flags,
        receivedAt: 1_800_000_100.5 + Double(seq), delivered: delivered)
}

final class DeliveryStoreTests: DirectoryTestCase {
    private var path: String { directory.file("phone.db") }
    private var store: DeliveryStore!

    override func setUpWithError() throws {
        try super.setUpWithError()
        store = try DeliveryStore(path: path)
    }

    override func tearDown() {
        store?.close()
        store = nil
        super.tearDown()
    }

    /// Applies `operations` as one turn and commits it.
    private func commitTurn(_ operations: [DurableOperation]) throws {
        for operation in operations {
            try store.apply(operation)
        }
        try store.commit()
    }

    /// Closes the store, opens the file again and loads it.
    private func reopenAndLoad() throws -> DurableState {
        store.close()
        store = try DeliveryStore(path: path)
        XCTAssertEqual(store.openOutcome, .opened(version: 3))
        return try store.load()
    }

    private func cursor(_ state: DurableState, _ channel: QueueChannel) -> ChannelCursor {
        state.cursors[channel] ?? ChannelCursor(lastAssigned: .max, lastAcknowledged: .max, lastReceived: .max)
    }

    // MARK: Opening

    func testANewStoreIsCreatedAndLoadsEmpty() throws {
        XCTAssertEqual(store.openOutcome, .created(version: 3))
        XCTAssertEqual(DeliveryStore.applicationID, 0x574C_4E4B)
        let state = try store.load()
        XCTAssertEqual(Set(state.cursors.keys), Set(QueueChannel.allCases))
        for channel in QueueChannel.allCases {
            XCTAssertEqual(state.cursors[channel], ChannelCursor())
        }
        XCTAssertEqual(
            state,
            {
                var empty = DurableState()
                empty.cursors = state.cursors
                return empty
            }())
        XCTAssertFalse(store.inTransaction)
        XCTAssertEqual(try reopenAndLoad(), state)
        store.close()
        XCTAssertEqual(Array(try fileBytes(path)[68..<72]), Array("WLNK".utf8))
    }

    func testAClosedStoreRefusesWork() throws {
        store.close()
        store.close()
        let error = assertSQLiteError(try store.apply(.markDelivered(seq: 1)))
        XCTAssertEqual(error?.code, 21)
        XCTAssertNotNil(assertSQLiteError(try store.load()))
        XCTAssertNotNil(assertSQLiteError(try store.commit()))
        store.rollback()
        XCTAssertFalse(store.inTransaction)
    }

    // MARK: Each operation, committed and reloaded

    func testOutboundOperationsSurviveAReopen() throws {
        try commitTurn([
            .enqueue(outbound(.userInfo, 1)),
            .enqueue(outbound(.userInfo, 2)),
            .enqueue(outbound(.userInfo, 3, payloadSize: 65_536)),
            .enqueue(outbound(.userInfo, 4)),
            .enqueue(outbound(.applicationContext, 1, payloadSize: 0)),
        ])
        try commitTurn([
            .setFlags(.userInfo, seq: 2, .currentComplication),
            .removeOutbound(.userInfo, seq: 4),
            .acknowledge(.userInfo, upTo: 1),
        ])
        let state = try reopenAndLoad()
        var flagged = outbound(.userInfo, 2)
        flagged.flags = .currentComplication
        XCTAssertEqual(
            state.outbox,
            [
                flagged, outbound(.userInfo, 3, payloadSize: 65_536), outbound(.applicationContext, 1, payloadSize: 0),
            ])
        XCTAssertEqual(cursor(state, .userInfo), ChannelCursor(lastAssigned: 4, lastAcknowledged: 1))
        XCTAssertEqual(cursor(state, .applicationContext), ChannelCursor(lastAssigned: 1))

        try commitTurn([.acknowledge(.userInfo, upTo: 3), .setFlags(.applicationContext, seq: 1, [])])
        let later = try reopenAndLoad()
        XCTAssertEqual(later.outbox, [outbound(.applicationContext, 1, payloadSize: 0)])
        XCTAssertEqual(cursor(later, .userInfo), ChannelCursor(lastAssigned: 4, lastAcknowledged: 3))
    }

    func testShiftingMakesRoomAheadOfUnsentItemsAndSurvivesAReopen() throws {
        try commitTurn([
            .enqueue(outbound(.userInfo, 1)), .enqueue(outbound(.userInfo, 2)), .enqueue(outbound(.userInfo, 3)),
            .enqueue(outbound(.applicationContext, 2)),
        ])
        var ahead = outbound(.userInfo, 2, flags: .currentComplication)
        ahead.transferId = "T-ahead"
        try commitTurn([.shiftOutbound(.userInfo, from: 2, lastAssigned: 4), .enqueue(ahead)])
        let state = try reopenAndLoad()
        var second = outbound(.userInfo, 2), third = outbound(.userInfo, 3)
        second.seq = 3
        third.seq = 4
        XCTAssertEqual(
            state.outbox, [outbound(.userInfo, 1), ahead, second, third, outbound(.applicationContext, 2)],
            "the later items moved one up, the other channel untouched")
        XCTAssertEqual(cursor(state, .userInfo), ChannelCursor(lastAssigned: 4))
    }

    func testInboundOperationsSurviveAReopen() throws {
        try commitTurn([
            .receive(inbound(1, .userInfo, channelSeq: 1, flags: .currentComplication)),
            .receive(inbound(2, .applicationContext, channelSeq: 1)),
            .receive(inbound(3, .userInfo, channelSeq: 2)),
            .receive(inbound(4, .userInfo, channelSeq: 3, delivered: true)),
            .receive(inbound(5, .userInfo, channelSeq: 4)),
        ])
        try commitTurn([
            .markDelivered(seq: 1),
            .removeInbox(seq: 2),
            .removeInbox(seq: 5),
            .setLastReceived(.applicationContext, 5),
        ])
        let state = try reopenAndLoad()
        XCTAssertEqual(state.undelivered, [inbound(3, channelSeq: 2)])
        XCTAssertEqual(
            try store.deliveredItems(after: 0, limit: 10),
            [
                inbound(1, channelSeq: 1, flags: .currentComplication, delivered: true),
                inbound(4, channelSeq: 3, delivered: true),
            ])
        XCTAssertEqual(cursor(state, .userInfo), ChannelCursor(lastReceived: 4))
        XCTAssertEqual(cursor(state, .applicationContext), ChannelCursor(lastReceived: 5))
        XCTAssertEqual(state.reservedSeq, 5, "seq 5 was used, though its item is gone")
    }

    func testSingleValuesSurviveAReopen() throws {
        let context = pattern(1, count: 262_144)
        let received = pattern(2, count: 300)
        try commitTurn([
            .setApplicationContext(context),
            .setReceivedApplicationContext(received),
            .setComplicationBudget(day: 20_000, used: 49),
            .reserveSeq(upTo: 4_096),
        ])
        var state = try reopenAndLoad()
        XCTAssertEqual(state.applicationContext, context)
        XCTAssertEqual(state.receivedApplicationContext, received)
        XCTAssertEqual(state.complicationDay, 20_000)
        XCTAssertEqual(state.complicationTransfersUsed, 49)
        XCTAssertEqual(state.reservedSeq, 4_096)

        try commitTurn([
            .setApplicationContext([]),
            .setReceivedApplicationContext(received + [1]),
            .setComplicationBudget(day: 20_001, used: 0),
        ])
        state = try reopenAndLoad()
        XCTAssertEqual(state.applicationContext, [], "an empty context is a context, not none")
        XCTAssertEqual(state.receivedApplicationContext, received + [1])
        XCTAssertEqual(state.complicationDay, 20_001)
        XCTAssertEqual(state.complicationTransfersUsed, 0)
    }

    func testReservedSeqIsNeverBelowTheNewestInboxItemNorLowered() throws {
        try store.pruneDelivered(keeping: 0)
        XCTAssertEqual(try store.load().reservedSeq, 0)
        try commitTurn([.reserveSeq(upTo: 100), .receive(inbound(150))])
        XCTAssertEqual(try reopenAndLoad().reservedSeq, 150)
        try commitTurn([.reserveSeq(upTo: 200)])
        XCTAssertEqual(try reopenAndLoad().reservedSeq, 200)
        try commitTurn([.reserveSeq(upTo: 120)])
        XCTAssertEqual(try reopenAndLoad().reservedSeq, 200)
        try commitTurn([.receive(inbound(250, delivered: true))])
        try store.pruneDelivered(keeping: 0)
        XCTAssertEqual(try store.deliveredItems(after: 0, limit: 10), [])
        XCTAssertEqual(try reopenAndLoad().reservedSeq, 250, "pruning forgets items, not the seq they used")
        try commitTurn([.receive(inbound(260)), .removeInbox(seq: 260)])
        XCTAssertEqual(try reopenAndLoad().reservedSeq, 260)
    }

    // MARK: Cursors

    func testCursorsAreRaisedNeverLowered() throws {
        try commitTurn([
            .enqueue(outbound(.userInfo, 10)),
            .setLastAssigned(.userInfo, 5),
            .receive(inbound(1, channelSeq: 9)),
            .setLastReceived(.userInfo, 4),
            .acknowledge(.userInfo, upTo: 7),
            .acknowledge(.userInfo, upTo: 3),
        ])
        XCTAssertEqual(cursor(try store.load(), .userInfo), ChannelCursor(lastAssigned: 10, lastAcknowledged: 7, lastReceived: 9))

        try commitTurn([
            .setLastAssigned(.userInfo, 2),
            .setLastReceived(.userInfo, 1),
            .acknowledge(.userInfo, upTo: 1),
            .receive(inbound(2, channelSeq: 3)),
        ])
        var state = try reopenAndLoad()
        XCTAssertEqual(cursor(state, .userInfo), ChannelCursor(lastAssigned: 10, lastAcknowledged: 7, lastReceived: 9))
        XCTAssertEqual(state.outbox, [outbound(.userInfo, 10)])

        try commitTurn([.setLastAssigned(.userInfo, 20), .setLastReceived(.applicationContext, 6)])
        state = try reopenAndLoad()
        XCTAssertEqual(cursor(state, .userInfo), ChannelCursor(lastAssigned: 20, lastAcknowledged: 7, lastReceived: 9))
        XCTAssertEqual(cursor(state, .applicationContext), ChannelCursor(lastReceived: 6))
    }

    func testALoadWithinATurnSeesTheTurn() throws {
        try store.apply(.enqueue(outbound(.userInfo, 3)))
        try store.apply(.setLastReceived(.applicationContext, 8))
        let state = try store.load()
        XCTAssertTrue(store.inTransaction)
        XCTAssertEqual(state.outbox, [outbound(.userInfo, 3)])
        XCTAssertEqual(cursor(state, .userInfo).lastAssigned, 3)
        XCTAssertEqual(cursor(state, .applicationContext).lastReceived, 8)
        try store.commit()
        XCTAssertEqual(try reopenAndLoad(), state)
    }

    func testSequenceNumbersBeyondWhatSQLiteStoresAreRefused() throws {
        let error = assertSQLiteError(try store.apply(.enqueue(outbound(.userInfo, UInt64(Int64.max) + 1))))
        XCTAssertEqual(error?.code, 21)
        XCTAssertTrue(error?.message.contains("9223372036854775808") ?? false, "\(String(describing: error))")
        XCTAssertNotNil(assertSQLiteError(try store.apply(.setLastReceived(.userInfo, .max))))
        store.rollback()
        try commitTurn([.enqueue(outbound(.userInfo, UInt64(Int64.max)))])
        let state = try reopenAndLoad()
        XCTAssertEqual(cursor(state, .userInfo).lastAssigned, UInt64(Int64.max))
        XCTAssertEqual(state.outbox.map(\.seq), [UInt64(Int64.max)])
    }

    // MARK: Turns

    func testApplyOpensATurnAndCommitEndsIt() throws {
        XCTAssertFalse(store.inTransaction)
        try store.commit()
        store.rollback()
        try store.apply(.setLastAssigned(.userInfo, 1))
        XCTAssertTrue(store.inTransaction)
        try store.apply(.setLastAssigned(.userInfo, 2))
        try store.commit()
        XCTAssertFalse(store.inTransaction)
        try store.commit()
        XCTAssertEqual(cursor(try reopenAndLoad(), .userInfo).lastAssigned, 2)
    }

    func testRollbackDiscardsTheWholeTurn() throws {
        try commitTurn([
            .enqueue(outbound(.userInfo, 1)),
            .enqueue(outbound(.userInfo, 2)),
            .receive(inbound(1)),
            .receive(inbound(2)),
            .setApplicationContext([1, 2, 3]),
            .setComplicationBudget(day: 7, used: 3),
            .reserveSeq(upTo: 64),
        ])
        let committed = try store.load()

        try store.apply(.enqueue(outbound(.userInfo, 3)))
        try store.apply(.acknowledge(.userInfo, upTo: 2))
        try store.apply(.setFlags(.userInfo, seq: 3, .currentComplication))
        try store.apply(.receive(inbound(3, .applicationContext, channelSeq: 5)))
        try store.apply(.markDelivered(seq: 1))
        try store.apply(.removeInbox(seq: 2))
        try store.apply(.setLastAssigned(.applicationContext, 9))
        try store.apply(.setApplicationContext([4]))
        try store.apply(.setReceivedApplicationContext([5]))
        try store.apply(.setComplicationBudget(day: 8, used: 0))
        try store.apply(.reserveSeq(upTo: 128))
        try store.pruneDelivered(keeping: 0)
        XCTAssertNotEqual(try store.load(), committed)
        store.rollback()

        XCTAssertFalse(store.inTransaction)
        XCTAssertEqual(try store.load(), committed)
        XCTAssertEqual(try store.deliveredItems(after: 0, limit: 10), [])
        XCTAssertEqual(try reopenAndLoad(), committed)

        try commitTurn([.acknowledge(.userInfo, upTo: 1)])
        let state = try reopenAndLoad()
        XCTAssertEqual(state.outbox, [outbound(.userInfo, 2)])
        XCTAssertEqual(cursor(state, .userInfo), ChannelCursor(lastAssigned: 2, lastAcknowledged: 1, lastReceived: 2))
        XCTAssertEqual(cursor(state, .applicationContext), ChannelCursor())
    }

    func testAFailedOperationLeavesTheTurnToBeRolledBack() throws {
        try commitTurn([.enqueue(outbound(.userInfo, 1))])
        let committed = try store.load()
        try store.apply(.enqueue(outbound(.userInfo, 5)))
        try store.apply(.receive(inbound(1)))
        let duplicate = assertSQLiteError(try store.apply(.enqueue(outbound(.userInfo, 1))))
        XCTAssertEqual(duplicate?.isConstraintViolation, true)
        XCTAssertTrue(store.inTransaction)
        store.rollback()
        XCTAssertEqual(try store.load(), committed)
        XCTAssertEqual(try reopenAndLoad(), committed)
    }

    // MARK: Order and paging

    func testLoadOrdersTheOutboxByChannelThenSeqAndTheInboxBySeq() throws {
        try commitTurn([.enqueue(outbound(.applicationContext, 2)), .enqueue(outbound(.userInfo, 3))])
        try commitTurn([.enqueue(outbound(.applicationContext, 1)), .enqueue(outbound(.userInfo, 1))])
        try commitTurn([.enqueue(outbound(.userInfo, 2)), .enqueue(outbound(.userInfo, 11))])
        try commitTurn([.receive(inbound(9)), .receive(inbound(2)), .receive(inbound(30, delivered: true))])
        try commitTurn([.receive(inbound(5)), .receive(inbound(1)), .receive(inbound(10))])
        let state = try reopenAndLoad()
        XCTAssertEqual(state.outbox.map { "\($0.channel.rawValue):\($0.seq)" }, ["1:1", "1:2", "1:3", "1:11", "2:1", "2:2"])
        XCTAssertEqual(state.undelivered.map(\.seq), [1, 2, 5, 9, 10])
        XCTAssertEqual(state.reservedSeq, 30)
    }

    func testDeliveredItemsArePagedOldestFirst() throws {
        for seq in UInt64(1)...40 {
            try store.apply(.receive(inbound(seq, delivered: seq % 4 != 0)))
        }
        try store.commit()
        let delivered = (UInt64(1)...40).filter { $0 % 4 != 0 }
        XCTAssertEqual(delivered.count, 30)

        var pages: [[UInt64]] = []
        var after: UInt64 = 0
        while true {
            let page = try store.deliveredItems(after: after, limit: 12)
            guard let last = page.last else { break }
            XCTAssertTrue(page.allSatisfy(\.delivered))
            pages.append(page.map(\.seq))
            after = last.seq
        }
        XCTAssertEqual(pages.map(\.count), [12, 12, 6])
        XCTAssertEqual(Array(pages.joined()), delivered)
        XCTAssertEqual(try store.deliveredItems(after: 0, limit: 1), [inbound(1, delivered: true)])
        XCTAssertEqual(try store.deliveredItems(after: 0, limit: 0), [])
        XCTAssertEqual(try store.deliveredItems(after: 4, limit: 2).map(\.seq), [5, 6])
        XCTAssertEqual(try store.deliveredItems(after: .max, limit: 10), [])
        XCTAssertEqual(try store.load().undelivered.map(\.seq), [4, 8, 12, 16, 20, 24, 28, 32, 36, 40])
    }

    func testPruneDeliveredKeepsTheNewest() throws {
        for seq in UInt64(1)...30 {
            try store.apply(.receive(inbound(seq, delivered: seq > 3)))
        }
        try store.commit()
        let undelivered = [inbound(1), inbound(2), inbound(3)]

        try store.pruneDelivered(keeping: 100)
        XCTAssertEqual(try store.deliveredItems(after: 0, limit: 100).count, 27)

        try store.pruneDelivered(keeping: 20)
        XCTAssertFalse(store.inTransaction)
        XCTAssertEqual(try store.deliveredItems(after: 0, limit: 100).map(\.seq), Array(11...30))
        XCTAssertEqual(try reopenAndLoad().undelivered, undelivered)
        XCTAssertEqual(try store.deliveredItems(after: 0, limit: 100).map(\.seq), Array(11...30))

        try store.apply(.markDelivered(seq: 2))
        try store.pruneDelivered(keeping: 5)
        XCTAssertTrue(store.inTransaction)
        store.rollback()
        XCTAssertEqual(try store.deliveredItems(after: 0, limit: 100).map(\.seq), Array(11...30))

        try store.apply(.markDelivered(seq: 2))
        try store.pruneDelivered(keeping: 5)
        try store.commit()
        XCTAssertEqual(try store.deliveredItems(after: 0, limit: 100).map(\.seq), Array(26...30))
        XCTAssertEqual(try reopenAndLoad().undelivered, [inbound(1), inbound(3)])

        try store.pruneDelivered(keeping: 0)
        XCTAssertEqual(try store.deliveredItems(after: 0, limit: 100), [])
        let state = try reopenAndLoad()
        XCTAssertEqual(state.undelivered, [inbound(1), inbound(3)])
        XCTAssertEqual(state.reservedSeq, 30)
    }

    // MARK: Files that are not ours

    /// Asserts that opening `path` is refused with a ``StoreFileError`` and changes nothing
    /// on disk.
    private func assertRefusedUnchanged(
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> StoreFileError? {
        let bytes = try fileBytes(path)
        let listing = try directory.contents()
        let error = assertRefused(try DeliveryStore(path: self.path), file: file, line: line)
        XCTAssertEqual(try fileBytes(path), bytes, "the refused file was modified", file: file, line: line)
        XCTAssertEqual(try directory.contents(), listing, "files appeared or vanished", file: file, line: line)
        return error
    }

    private func removeStore() throws {
        store?.close()
        store = nil
        for name in try directory.contents() {
            try FileManager.default.removeItem(atPath: directory.file(name))
        }
    }

    func testRandomBytesAreRefusedAndLeftAlone() throws {
        try removeStore()
        try writeFile(path, pattern(5, count: 16_384))
        guard case .corrupt = try assertRefusedUnchanged() else { return XCTFail("expected .corrupt") }
    }

    func testADamagedStoreIsRefusedAndLeftAlone() throws {
        for seq in UInt64(1)...300 {
            try store.apply(.receive(inbound(seq, delivered: seq % 2 == 0, payloadSize: 900)))
        }
        try store.commit()
        store.close()
        store = nil
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
        var bytes = try fileBytes(path)
        let pageSize = 4096
        XCTAssertGreaterThan(bytes.count, 16 * pageSize)
        for offset in (6 * pageSize)..<(9 * pageSize) {
            bytes[offset] = UInt8(truncatingIfNeeded: offset &* 29)
        }
        try writeFile(path, bytes)
        guard case .corrupt = try assertRefusedUnchanged() else { return XCTFail("expected .corrupt") }
    }

    func testAForeignSQLiteFileIsRefusedAndLeftAlone() throws {
        try removeStore()
        do {
            let foreign = try SQLiteDatabase(path: path, options: .init(journalMode: .delete))
            try foreign.setApplicationID(0x1234_5678)
            try foreign.execute("CREATE TABLE outbox (channel INTEGER, seq INTEGER); INSERT INTO outbox VALUES (1, 1);")
        }
        XCTAssertEqual(
            try assertRefusedUnchanged(),
            .foreignDatabase(path: path, applicationID: 0x1234_5678, expected: "WatchLink"))

        try removeStore()
        do {
            let foreign = try SQLiteDatabase(path: path)
            try foreign.execute("CREATE TABLE kv (key TEXT PRIMARY KEY, value BLOB)")
        }
        XCTAssertEqual(try assertRefusedUnchanged(), .foreignDatabase(path: path, applicationID: 0, expected: "WatchLink"))
    }

    func testAStoreOfANewerVersionIsRefusedAndLeftAlone() throws {
        try commitTurn([.enqueue(outbound(.userInfo, 1))])
        store.close()
        store = nil
        do {
            let database = try SQLiteDatabase(path: path)
            try database.setUserVersion(DeliveryStore.schema.version + 1)
        }
        XCTAssertEqual(
            try assertRefusedUnchanged(),
            .newerSchema(
                path: path, version: DeliveryStore.schema.version + 1, supportedVersion: DeliveryStore.schema.version,
                name: "WatchLink"))
    }

    func testRowsNamingAnUnknownChannelAreReportedAsCorrupt() throws {
        try commitTurn([.enqueue(outbound(.userInfo, 1)), .setLastAssigned(.applicationContext, 1)])
        store.close()
        do {
            let database = try SQLiteDatabase(path: path)
            try database.execute("UPDATE outbox SET channel = 9")
        }
        store = try DeliveryStore(path: path)
        let outboxError = assertSQLiteError(try store.load())
        XCTAssertEqual(outboxError?.isCorrupt, true)
        XCTAssertTrue(outboxError?.message.contains("channel 9") ?? false, "\(String(describing: outboxError))")
        store.close()

        do {
            let database = try SQLiteDatabase(path: path)
            try database.execute("UPDATE cursor SET channel = 300 WHERE channel = 2")
        }
        guard case .corrupt(_, let reason) = assertRefused(try DeliveryStore(path: path)) else {
            return XCTFail("expected .corrupt")
        }
        XCTAssertTrue(reason.contains("channel 300"), reason)
    }
}
