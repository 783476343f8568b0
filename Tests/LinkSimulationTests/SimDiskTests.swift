import LinkStore
import XCTest

@testable import LinkSimulation

/// The simulator's in-memory file system and its SQLite VFS: what a power cut and a SIGKILL
/// keep, and `DeliveryStore` on them.
final class SimDiskTests: XCTestCase {
    private func item(_ seq: UInt64) -> OutboundItem {
        OutboundItem(channel: .userInfo, seq: seq, transferId: "T-\(seq)", payload: [1, 2, 3], flags: [], createdAt: 0)
    }

    func testAPowerCutKeepsWhatWasSyncedAndASIGKILLKeepsEverything() throws {
        let disk = SimDisk(directory: "/d")
        let inode = try XCTUnwrap(disk.create("/d/a"))
        let bytes: [UInt8] = [1, 2, 3]
        bytes.withUnsafeBytes { inode.data.write($0.baseAddress!, count: 3, at: 0) }
        XCTAssertTrue(disk.sync(inode, as: .journal, path: "/d/a"))
        bytes.withUnsafeBytes { inode.data.write($0.baseAddress!, count: 3, at: 3) }
        disk.processDied(powerCut: false)
        XCTAssertEqual(disk.entries["/d/a"]?.data.size, 6, "a SIGKILL keeps unsynced writes")
        disk.processDied(powerCut: true)
        XCTAssertNil(disk.entries["/d/a"], "the file's directory entry was never synced")

        let synced = try XCTUnwrap(disk.create("/d/b"))
        bytes.withUnsafeBytes { synced.data.write($0.baseAddress!, count: 3, at: 0) }
        XCTAssertTrue(disk.syncDirectory("/d"))
        try disk.rename("/d/b", "/d/c")
        disk.processDied(powerCut: true)
        XCTAssertNil(disk.entries["/d/c"], "an unsynced rename is undone")
        XCTAssertEqual(disk.entries["/d/b"]?.data.size, 0, "the data was never synced")
    }

    func testAFailedFsyncWritesNothing() throws {
        let disk = SimDisk(directory: "/d")
        disk.fault = { $0 == .database }
        try XCTUnwrap(disk.create("/d/x")).isDatabase = true
        XCTAssertTrue(disk.syncDirectory("/d"))
        let fd = try disk.open("/d/x", 0)
        XCTAssertThrowsError(try disk.fsync(fd, path: "/d/x"))
        disk.close(fd)
    }

    func testACommitOfDeliveryStoreSurvivesAPowerCut() throws {
        let disk = SimDisk(directory: "/state")
        let store = SimSQLiteStore(path: "/state/phone.db", disk: disk, mirror: ModelStore())
        try store.open()
        XCTAssertTrue(store.createdInThisProcess)
        try store.apply(.enqueue(item(1)))
        try store.commit()
        store.processDied(powerCut: true)
        try store.open()
        XCTAssertEqual(try store.load().outbox.map(\.seq), [1])
        XCTAssertEqual(store.mirror.committed.outbox.map(\.seq), [1])
    }

    func testWithSynchronousNormalAPowerCutLosesACommit() throws {
        // "A transaction committed in WAL mode with synchronous=NORMAL might roll back
        // following a power loss or system crash" (sqlite.org/pragma.html#pragma_synchronous).
        let disk = SimDisk(directory: "/state")
        func open() throws -> DeliveryStore {
            try StoreStorage.$current.withValue(disk.storage) { try DeliveryStore(path: "/state/phone.db", synchronous: .normal) }
        }
        var store = try open()
        try store.apply(.enqueue(item(1)))
        try store.commit()
        disk.processDied(powerCut: true)
        store.close()
        XCTAssertTrue(disk.lostWALFrames)
        store = try open()
        XCTAssertEqual(try store.load().outbox.count, 0)
        disk.processDied(powerCut: false)
        store.close()
    }

    func testAStoreWhoseDatabaseCannotBeSyncedDoesNotOpen() {
        // Its header (journal_mode = wal) never reaches the disk: the open fails rather than
        // going on in a rollback journal, whose commits a power cut may undo.
        let disk = SimDisk(directory: "/state")
        disk.fault = { $0 == .database }
        let store = SimSQLiteStore(path: "/state/phone.db", disk: disk, mirror: ModelStore())
        XCTAssertThrowsError(try store.open())
    }
}
