import Foundation
import LinkClient
import LinkControl
import LinkJSON
import TestSupport
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Guaranteed delivery at its edges: items on the link, long backlogs under kill -9, every
/// property-list type through the database, paging, the phone app's state, damaged or
/// unusable database files, and a full disk while the link carries traffic both ways.
final class DurableEdgeCaseTests: DurableTestCase {
    func testCancelWhileOnTheLinkIsRefusedAndTheItemStillArrives() throws {
        let (_, watch, p, w) = try startDurablePair()
        let events = try subscribed(watch)
        _ = try p.call("link.set", ["latencyMs": 1_000])
        let id = try p.transferUserInfo(["slow": true])
        let outstanding = try p.call("userInfo.outstanding")["transfers"]?.arrayValue ?? []
        XCTAssertEqual(outstanding.map { $0["isTransferring"] }, [true], "the item is on the link")
        XCTAssertEqual(try p.call("userInfo.cancel", ["transferId": .string(id)])["cancelled"], false)
        XCTAssertEqual(try events.waitForEvent("userInfo.received", timeoutSeconds: 10).data["userInfo"], ["slow": true])
        XCTAssertEqual(try Received.userInfos(w), [["slow": true]])
    }

    func testBacklogDrainsExactlyOnceInOrderWhileBothSidesAreKilled() throws {
        let (phone, watch, p, w) = try startDurablePair()
        _ = try w.call("link.set", ["up": false])
        eventually("the link to drop") { try p.status("link")?["connected"] == false }
        let count = 600
        for n in 1...count { _ = try p.call("userInfo.transfer", ["userInfo": ["n": .int(Int64(n))]]) }
        _ = try w.call("link.set", ["up": true])
        let seed = testSeed(default: 99)
        failureNote = "seed \(seed): WATCHLINK_SEED=\(seed) replays it"
        var generator = SeededGenerator(seed: seed)
        for _ in 0..<12 {
            let victim = Bool.random(using: &generator) ? phone : watch
            usleep(UInt32.random(in: 1_000...30_000, using: &generator))
            victim.kill9()
            try victim.startAndWait()
        }
        let p2 = try client(phone)
        let w2 = try client(watch)
        eventually("the backlog to drain (seed \(seed))", timeout: 30) { try p2.status("outstandingUserInfoTransfers") == 0 }
        let received = try Received.userInfos(w2).compactMap { $0["n"]?.intValue }
        XCTAssertEqual(received, Array(1...Int64(count)), "seed \(seed)")
    }

    func testEveryPropertyListTypeSurvivesTheQueueAndRestarts() throws {
        let (phone, watch, p, w) = try startDurablePair()
        _ = try w.call("link.set", ["up": false])
        eventually("the link to drop") { try p.status("link")?["connected"] == false }
        let info: JSONValue = [
            "string": "héllo ✓ 𝄞", "empty": "", "int": 9_223_372_036_854_775_807, "negative": -42, "zero": 0,
            "double": 3.25, "tiny": 1.0e-300, "true": true, "false": false,
            "data": ["$data": "AAEC/w=="], "emptyData": ["$data": ""], "date": ["$date": "2026-11-30T07:00:00.123Z"],
            "list": [1, "two", [3], ["four": 4]], "emptyList": [], "emptyDict": [:],
            "nested": ["a": ["b": ["c": ["d": "deep"]]]], "ключ": "значение",
        ]
        _ = try p.call("userInfo.transfer", ["userInfo": info])
        _ = try p.call("context.update", ["context": info])
        phone.kill9()
        try phone.startAndWait()
        let p2 = try client(phone)
        XCTAssertEqual(try p2.call("userInfo.outstanding")["transfers"]?[0]?["userInfo"], info)
        XCTAssertEqual(try p2.call("context.get")["applicationContext"], info)

        _ = try w.call("link.set", ["up": true])
        eventually("the transfer to arrive", timeout: 10) { try Received.userInfos(w).count == 1 }
        XCTAssertEqual(try Received.userInfos(w), [info])
        eventually("the context to arrive", timeout: 10) { try w.call("context.get")["receivedApplicationContext"] == info }
        watch.kill9()
        try watch.startAndWait()
        let w2 = try client(watch)
        XCTAssertEqual(try Received.userInfos(w2), [info])
        XCTAssertEqual(try w2.call("context.get")["receivedApplicationContext"], info)
    }

    func testReceivedListPagesWithAfterLimitAndMore() throws {
        let (_, _, p, w) = try startDurablePair()
        for n in 1...25 { _ = try p.call("userInfo.transfer", ["userInfo": ["n": .int(Int64(n))]]) }
        eventually("delivery", timeout: 10) { try Received.userInfos(w).count == 25 }
        let first = try w.call("received.list", ["limit": 10])
        XCTAssertEqual(first["items"]?.arrayValue?.compactMap { $0["userInfo"]?["n"]?.intValue }, Array(1...10))
        XCTAssertEqual(first["more"], true)
        let last = first["items"]?.arrayValue?.last?["seq"]?.intValue ?? 0
        let second = try w.call("received.list", ["after": .int(last), "limit": 10])
        XCTAssertEqual(second["items"]?.arrayValue?.compactMap { $0["userInfo"]?["n"]?.intValue }, Array(11...20))
        let end = second["items"]?.arrayValue?.last?["seq"]?.intValue ?? 0
        let third = try w.call("received.list", ["after": .int(end), "limit": 10])
        XCTAssertEqual(third["items"]?.arrayValue?.compactMap { $0["userInfo"]?["n"]?.intValue }, Array(21...25))
        XCTAssertNotEqual(third["more"], true)
        assertControlError("control", 3) { try w.call("received.list", ["limit": 0]) }
        assertControlError("control", 3) { try w.call("received.list", ["limit": 10_001]) }
    }

    func testThePhoneAppHoldsWatchTransfersOnlyWhileNotRunning() throws {
        let (_, _, p, w) = try startDurablePair()
        _ = try p.call("app.setState", ["state": "notRunning"])
        _ = try w.call("userInfo.transfer", ["userInfo": ["x": 1]])
        eventually("the phone to hold it", timeout: 10) { try p.status("hasContentPending") == true }
        XCTAssertEqual(try Received.userInfos(p), [])
        _ = try p.call("app.setState", ["state": "background"])
        eventually("delivery to the app in the background", timeout: 10) { try Received.userInfos(p) == [["x": 1]] }
        XCTAssertEqual(try p.status("hasContentPending"), false)
    }

    func testNewerSchemaStrayWALAndSymbolicLinkAreRefused() throws {
        let phone = restartable("phoned")
        try phone.startAndWait()
        phone.stop()
        try runSQLite(at: phone.databasePath, "PRAGMA user_version = 999; PRAGMA journal_mode = DELETE;")
        let before = FileManager.default.contents(atPath: phone.databasePath)
        let newer = try refusedStart(phone)
        XCTAssertTrue(newer.contains(phone.databasePath) && newer.contains("newer"), newer)
        XCTAssertEqual(FileManager.default.contents(atPath: phone.databasePath), before, "the file is left as it was")

        let other = restartable("phoned", home: makeDirectory())
        try makeStateDirectory(other)
        let wal = other.databasePath + "-wal"
        XCTAssertTrue(FileManager.default.createFile(atPath: wal, contents: Data(repeating: 1, count: 100)))
        let stray = try refusedStart(other)
        XCTAssertTrue(stray.contains(wal), stray)
        XCTAssertFalse(FileManager.default.fileExists(atPath: other.databasePath), "no database is made next to a stray WAL")

        try FileManager.default.removeItem(atPath: wal)
        try FileManager.default.createSymbolicLink(atPath: other.databasePath, withDestinationPath: phone.databasePath)
        let link = try refusedStart(other)
        XCTAssertTrue(link.contains(other.databasePath) && link.contains("symbolic link"), link)
        XCTAssertEqual(FileManager.default.contents(atPath: phone.databasePath), before, "the link's target is left as it was")
    }

    func testTruncatedDatabaseIsRefusedAsCorrupt() throws {
        let (phone, _, p, w) = try startDurablePair()
        _ = try w.call("link.set", ["up": false])
        eventually("the link to drop") { try p.status("link")?["connected"] == false }
        var generator = SeededGenerator(seed: 3)
        for n in 1...20 {
            _ = try p.call("userInfo.transfer", ["userInfo": ["n": .int(Int64(n)), "b": randomData(8_000, using: &generator)]])
        }
        phone.stop()
        XCTAssertFalse(FileManager.default.fileExists(atPath: phone.databasePath + "-wal"), "a clean stop leaves no WAL")
        let data = try XCTUnwrap(FileManager.default.contents(atPath: phone.databasePath))
        let truncated = data.prefix(data.count / 2)
        XCTAssertTrue(FileManager.default.createFile(atPath: phone.databasePath, contents: truncated))
        let log = try refusedStart(phone)
        XCTAssertTrue(log.contains(phone.databasePath) && log.contains("corrupt"), log)
        XCTAssertEqual(FileManager.default.contents(atPath: phone.databasePath), truncated, "the file is left as it was")
    }

    func testKillDuringFirstStartNeverLeavesAnUnstartableDatabase() throws {
        let seed = randomSeed("WATCHLINK_FIRST_START_SEED")
        var generator = SeededGenerator(seed: seed)
        var failures: [String] = []
        for round in 1...120 {
            let home = makeDirectory()
            let name = Bool.random(using: &generator) ? "phoned" : "watchd"
            if name == "watchd" {
                XCTAssertTrue(
                    FileManager.default.createFile(
                        atPath: home + "/pairing.key", contents: Data(repeating: 7, count: 32),
                        attributes: [.posixPermissions: 0o600]))
            }
            let daemon = restartable(name, home: home, logLevel: "info")
            try daemon.start()
            usleep(UInt32.random(in: 0...40_000, using: &generator))
            daemon.kill9()
            let files = ((try? FileManager.default.contentsOfDirectory(atPath: daemon.stateDirectory)) ?? []).sorted().map { file in
                let size = (try? FileManager.default.attributesOfItem(atPath: daemon.stateDirectory + "/" + file))?[.size] as? Int
                return "\(file) (\(size ?? -1) bytes)"
            }
            do {
                try daemon.startAndWait(timeout: 10)
            } catch {
                failures.append("round \(round), \(name) killed during its first start left \(files): \(error)")
            }
            daemon.stop()
        }
        XCTAssertEqual(failures, [], "seed \(seed): a daemon killed during its first start must start again:\n" + failures.joined(separator: "\n"))
    }

    func testHotJournalOfAnInterruptedFirstStartIsRecovered() throws {
        let phone = restartable("phoned")
        try makeStateDirectory(phone)
        // What kill -9 leaves when it lands while the first start switches a new file to WAL:
        // page 1 written, and a hot journal that says the file was empty before.
        var page = [UInt8](repeating: 0, count: 4_096)
        let header: [(Int, UInt8)] = [
            (16, 0x10), (18, 2), (19, 2), (21, 0x40), (22, 0x20), (23, 0x20), (27, 1), (31, 1),
            (95, 1), (97, 0x2E), (98, 0x63), (99, 1), (100, 0x0D), (105, 0x10),
        ]
        page.replaceSubrange(0..<16, with: Array("SQLite format 3\0".utf8))
        for (offset, byte) in header { page[offset] = byte }
        var journal = [UInt8](repeating: 0, count: 512)
        journal.replaceSubrange(0..<8, with: [0xD9, 0xD5, 0x05, 0xF9, 0x20, 0xA1, 0x63, 0xD7])
        for (offset, byte) in [(12, 0x51), (13, 0xD1), (14, 0x84), (15, 0xB6), (22, 2), (26, 0x10)] as [(Int, UInt8)] {
            journal[offset] = byte
        }
        XCTAssertTrue(FileManager.default.createFile(atPath: phone.databasePath, contents: Data(page)))
        XCTAssertTrue(FileManager.default.createFile(atPath: phone.databasePath + "-journal", contents: Data(journal)))

        try phone.startAndWait()
        let p = try client(phone)
        XCTAssertEqual(try p.status("outstandingUserInfoTransfers"), 0)
        _ = try p.transferUserInfo(["after": "recovery"])
        phone.kill9()
        try phone.startAndWait()
        XCTAssertEqual(try client(phone).call("userInfo.outstanding")["transfers"]?[0]?["userInfo"], ["after": "recovery"])
    }

    /// The phone's disk fills while both sides send. What the phone accepted reaches the watch;
    /// what the watch accepted reaches the phone, except what arrived while the phone's disk was
    /// full: the phone refuses it and the watch reports `userInfo.didFinish` with 7015, as a
    /// device does when the receiving side has no room (see DeviceRulesTests). Nothing else is
    /// lost, nothing arrives twice.
    func testFullDiskOnThePhoneWhileTheLinkCarriesTrafficBothWays() throws {
        let phone = restartable("phoned", logLevel: "info")
        let watch = restartable("watchd", logLevel: "info")
        try phone.startAndWait(fileSizeLimitBlocks: 2_048)
        try watch.startAndWait()
        let p = try client(phone)
        let w = try client(watch)
        eventually("both sides reachable", timeout: 10) { try p.status("isReachable") == true }
        let watchEvents = try subscribed(watch)
        var generator = SeededGenerator(seed: 21)
        var phoneAccepted: [Int] = [], watchAccepted: [Int] = []
        var phoneErrors: [Int] = [], watchErrors: [Int] = []
        var watchTransfers: [JSONValue: Int] = [:]  // transferId → n
        for n in 1...150 {
            do {
                _ = try p.call("userInfo.transfer", ["userInfo": ["n": .int(Int64(n)), "b": randomData(30_000, using: &generator)]])
                phoneAccepted.append(n)
            } catch let error as ControlError {
                phoneErrors.append(error.code)
            }
            do {
                let result = try w.call("userInfo.transfer", ["userInfo": ["n": .int(Int64(n)), "b": randomData(30_000, using: &generator)]])
                watchAccepted.append(n)
                watchTransfers[try XCTUnwrap(result["transferId"])] = n
            } catch let error as ControlError {
                watchErrors.append(error.code)
            }
        }
        XCTAssertFalse(phoneErrors.isEmpty, "the phone's disk fills up")
        XCTAssertEqual(Set(phoneErrors), [7015])
        XCTAssertEqual(watchErrors, [], "the watch's disk is not full")
        XCTAssertTrue(phone.isRunning)
        XCTAssertEqual(try p.status("role"), "phone", "the phone keeps answering")

        phone.stop()
        try phone.startAndWait()
        let p2 = try client(phone)
        eventually("both outboxes to drain", timeout: 30) {
            try p2.status("outstandingUserInfoTransfers") == 0 && w.status("outstandingUserInfoTransfers") == 0
        }
        XCTAssertEqual(try Received.userInfos(w).compactMap { $0["n"]?.intValue.map(Int.init) }, phoneAccepted)
        // Every transfer of the watch finished: delivered, or refused by the phone's full disk.
        var refusedByThePhone: Set<Int> = []
        var finished = 0
        while finished < watchTransfers.count {
            let event = try watchEvents.waitForEvent("userInfo.didFinish", timeoutSeconds: 30)
            finished += 1
            guard let error = event.data["error"], error != .null else { continue }
            XCTAssertEqual(error["code"], 7015, "\(event.data)")
            refusedByThePhone.insert(try XCTUnwrap(event.data["transferId"].flatMap { watchTransfers[$0] }))
        }
        XCTAssertEqual(
            try Received.userInfos(p2).compactMap { $0["n"]?.intValue.map(Int.init) },
            watchAccepted.filter { !refusedByThePhone.contains($0) })
    }
}
