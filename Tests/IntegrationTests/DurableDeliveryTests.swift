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

/// Guaranteed delivery (userInfo, application context, complication userInfo) with real
/// daemons: exactly once and in order across kill -9, held until the app can take it,
/// cancel, restarts, budgets, damaged databases and a full disk.
final class DurableDeliveryTests: DurableTestCase {

    // MARK: Exactly once across crashes

    func testExactlyOnceInOrderAcrossRandomSIGKILLs() throws {
        let seed = randomSeed("WATCHLINK_CRASH_SEED")
        let minimumAttempts = 2_000
        let minimumKills = 50
        let minimumKillsEach = 20
        let started = Date()

        let phone = restartable("phoned", logLevel: "info")
        let watch = restartable("watchd", logLevel: "info")
        try phone.startAndWait()
        try watch.startAndWait()

        let stop = Locked(false)
        let p2w = TransferStream(direction: "p2w", sender: phone, minimumAttempts: minimumAttempts)
        let w2p = TransferStream(direction: "w2p", sender: watch, minimumAttempts: minimumAttempts)
        let killer = Killer(daemons: [phone, watch], seed: seed)
        let group = DispatchGroup()
        for stream in [p2w, w2p] {
            DispatchQueue.global().async(group: group) { stream.run { stop.current } }
        }
        DispatchQueue.global().async(group: group) {
            killer.run {
                let kills = killer.kills
                return kills.reduce(0, +) >= minimumKills && kills.allSatisfy { $0 >= minimumKillsEach }
                    && p2w.attempts >= minimumAttempts && w2p.attempts >= minimumAttempts
                    || p2w.failure != nil || w2p.failure != nil
            }
            stop.withValue { $0 = true }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 240), .success, "senders and killer finish")
        stop.withValue { $0 = true }
        let streaming = Date().timeIntervalSince(started)
        if let failure = killer.failure { return XCTFail("restarting a killed daemon failed: \(failure)") }
        for stream in [p2w, w2p] {
            if let failure = stream.failure { return XCTFail("\(stream.direction): \(failure)") }
        }

        let p = try client(phone, timeout: 30)
        let w = try client(watch, timeout: 30)
        eventually("both outboxes to drain", timeout: 60) {
            try p.status("outstandingUserInfoTransfers") == 0 && w.status("outstandingUserInfoTransfers") == 0
        }
        var summary: [String] = []
        var totalDuplicates = 0, totalLost = 0, totalOutOfOrder = 0
        for (stream, receiver) in [(p2w, w), (w2p, p)] {
            let received = try Received.userInfos(receiver)
            let numbers = received.compactMap { $0["dir"] == .string(stream.direction) ? $0["n"]?.intValue.map(Int.init) : nil }
            XCTAssertEqual(numbers.count, received.count, "\(stream.direction): every received item is one of ours: \(received.prefix(3))")
            var seen = Set<Int>(), duplicates: [Int] = [], outOfOrder: [(Int, Int)] = []
            for (index, n) in numbers.enumerated() {
                if !seen.insert(n).inserted { duplicates.append(n) }
                if index > 0, numbers[index - 1] >= n { outOfOrder.append((numbers[index - 1], n)) }
            }
            let acknowledged = stream.acknowledged
            let lost = acknowledged.filter { !seen.contains($0) }
            let unknown = numbers.filter { $0 < 1 || $0 > stream.attempts }
            let unacknowledgedReceived = seen.subtracting(acknowledged).count
            XCTAssertEqual(duplicates, [], "\(stream.direction): attempts received more than once")
            XCTAssertEqual(lost, [], "\(stream.direction): acknowledged attempts never received")
            XCTAssertTrue(outOfOrder.isEmpty, "\(stream.direction): out of order (previous, next): \(outOfOrder.prefix(20))")
            XCTAssertEqual(unknown, [], "\(stream.direction): numbers never attempted")
            XCTAssertGreaterThanOrEqual(stream.attempts, minimumAttempts)
            XCTAssertGreaterThan(
                acknowledged.count, stream.attempts / 2,
                "\(stream.direction): most attempts should be acknowledged; errors \(stream.errors)")
            totalDuplicates += duplicates.count
            totalLost += lost.count
            totalOutOfOrder += outOfOrder.count
            summary.append(
                "\(stream.direction): attempts=\(stream.attempts) acknowledged=\(acknowledged.count) "
                    + "received=\(numbers.count) (unacknowledged but received=\(unacknowledgedReceived)) "
                    + "reconnects=\(stream.reconnects) errors=\(stream.errors.sorted { $0.key < $1.key })")
        }
        let kills = killer.kills
        XCTAssertGreaterThanOrEqual(kills[0] + kills[1], minimumKills)
        XCTAssertGreaterThanOrEqual(kills[0], minimumKillsEach)
        XCTAssertGreaterThanOrEqual(kills[1], minimumKillsEach)
        let total = Date().timeIntervalSince(started)
        print(
            "crash test seed=\(seed) | " + summary.joined(separator: " | ")
                + " | kills phoned=\(kills[0]) watchd=\(kills[1]) | duplicates=\(totalDuplicates) lost=\(totalLost) "
                + "outOfOrder=\(totalOutOfOrder) | streaming \(String(format: "%.1f", streaming)) s, total \(String(format: "%.1f", total)) s")
    }

    func testApplicationContextNeverGoesBackAcrossRandomSIGKILLs() throws {
        let seed = randomSeed("WATCHLINK_CRASH_SEED")
        let phone = restartable("phoned", logLevel: "info")
        let watch = restartable("watchd", logLevel: "info")
        try phone.startAndWait()
        try watch.startAndWait()
        let stop = Locked(false)
        let contexts = TransferStream(
            direction: "p2w", sender: phone, minimumAttempts: 1_000,
            op: "context.update", argument: "context")
        let killer = Killer(daemons: [phone, watch], seed: seed)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) { contexts.run { stop.current } }
        DispatchQueue.global().async(group: group) {
            killer.run {
                killer.kills.allSatisfy { $0 >= 12 } && contexts.attempts >= 1_000 || contexts.failure != nil
            }
            stop.withValue { $0 = true }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 120), .success, "sender and killer finish")
        stop.withValue { $0 = true }
        if let failure = killer.failure ?? contexts.failure { return XCTFail(failure) }

        let p = try client(phone, timeout: 30)
        let w = try client(watch, timeout: 30)
        let newest = try XCTUnwrap(p.call("context.get")["applicationContext"]?["n"]?.intValue)
        XCTAssertGreaterThanOrEqual(newest, Int64(contexts.acknowledged.last ?? 0), "the newest acknowledged context is kept")
        eventually("the watch to get the newest context", timeout: 30) {
            try w.call("context.get")["receivedApplicationContext"]?["n"]?.intValue == newest
        }
        let received = try Received.items(w, kind: "applicationContext").compactMap { $0["applicationContext"]?["n"]?.intValue }
        let backwards = zip(received, received.dropFirst()).filter { $0.0 >= $0.1 }
        XCTAssertTrue(backwards.isEmpty, "the received context went back or repeated (previous, next): \(backwards.prefix(20))")
        XCTAssertEqual(received.last, newest)
        print(
            "context crash test seed=\(seed) | attempts=\(contexts.attempts) acknowledged=\(contexts.acknowledged.count) "
                + "received=\(received.count) newest=\(newest) | kills phoned=\(killer.kills[0]) watchd=\(killer.kills[1]) "
                + "| backwards=\(backwards.count)")
    }

    // MARK: Held until the app can take it

    func testDeliveryWaitsForActivationAndForTheAppToRun() throws {
        let (_, watch, p, w) = try startDurablePair(activateWatch: false)
        let events = try subscribed(watch)
        let first: [JSONValue] = [["k": "a", "i": 1], ["k": "a", "i": 2], ["k": "a", "i": 3]]
        for info in first { _ = try p.call("userInfo.transfer", ["userInfo": info]) }
        eventually("the watch to hold content for its not yet activated session", timeout: 10) {
            try w.status("hasContentPending") == true
        }
        XCTAssertEqual(try Received.userInfos(w), [], "nothing reaches the app before activation")

        _ = try w.call("session.activate")
        XCTAssertEqual(try events.userInfoReceived(count: 3).map { $0.data["userInfo"] }, first)
        XCTAssertEqual(try Received.userInfos(w), first)
        XCTAssertEqual(try w.status("hasContentPending"), false)
        eventually("the phone's outbox to drain") { try p.status("outstandingUserInfoTransfers") == 0 }

        let last = try Received.lastSeq(w)
        _ = try w.call("app.setState", ["state": "notRunning"])
        let second: [JSONValue] = [["k": "b", "i": 1], ["k": "b", "i": 2], ["k": "b", "i": 3]]
        for info in second { _ = try p.call("userInfo.transfer", ["userInfo": info]) }
        eventually("the watch to hold content while its app is not running", timeout: 10) {
            try w.status("hasContentPending") == true
        }
        XCTAssertEqual(try Received.userInfos(w, after: last), [], "nothing reaches an app that is not running")
        _ = try w.call("app.setState", ["state": "foreground"])
        XCTAssertEqual(try events.userInfoReceived(count: 3).map { $0.data["userInfo"] }, second)
        XCTAssertEqual(try Received.userInfos(w), first + second)
        XCTAssertEqual(try w.status("hasContentPending"), false)
    }

    func testHeldContentSurvivesSIGKILLOfTheReceiver() throws {
        let (_, watch, p, w) = try startDurablePair(activateWatch: false)
        let infos: [JSONValue] = [["held": 1], ["held": 2], ["held": 3]]
        for info in infos { _ = try p.call("userInfo.transfer", ["userInfo": info]) }
        eventually("the watch to commit the items it holds", timeout: 10) {
            try p.status("outstandingUserInfoTransfers") == 0 && w.status("hasContentPending") == true
        }
        watch.kill9()
        try watch.startAndWait(activate: false)
        let w2 = try client(watch)
        XCTAssertEqual(try w2.status("hasContentPending"), true, "held items survive kill -9 of the receiver")
        XCTAssertEqual(try Received.userInfos(w2), [])
        let events = try subscribed(watch)
        _ = try w2.call("session.activate")
        XCTAssertEqual(try events.userInfoReceived(count: 3).map { $0.data["userInfo"] }, infos)
        XCTAssertEqual(try Received.userInfos(w2), infos, "each held item is delivered once")
        XCTAssertEqual(try w2.status("hasContentPending"), false)
    }

    // MARK: Cancel and didFinish

    func testCancelBeforeAndAfterDeliveryAndDidFinish() throws {
        let (phone, watch, p, w) = try startDurablePair()
        let phoneEvents = try subscribed(phone)
        let watchEvents = try subscribed(watch)
        _ = try p.call("link.set", ["up": false])
        eventually("the link to drop") { try p.status("link")?["connected"] == false }

        let cancelled = try p.transferUserInfo(["item": "cancelled"])
        let kept = try p.transferUserInfo(["item": "kept"])
        XCTAssertEqual(try p.outstandingIds(), [cancelled, kept])
        XCTAssertEqual(try p.call("userInfo.cancel", ["transferId": .string(cancelled)])["cancelled"], true)
        XCTAssertEqual(try p.outstandingIds(), [kept])
        XCTAssertEqual(
            try p.call("userInfo.cancel", ["transferId": .string(cancelled)])["cancelled"], false,
            "a transfer cancelled once is no longer outstanding")
        XCTAssertEqual(try p.call("userInfo.cancel", ["transferId": .string(UUID().uuidString)])["cancelled"], false)

        _ = try p.call("link.set", ["up": true])
        let seen = try watchEvents.events(until: "userInfo.received", timeoutSeconds: 10)
        XCTAssertEqual(
            seen.filter { $0.name == "userInfo.received" }.map { $0.data["userInfo"] }, [["item": "kept"]],
            "the cancelled transfer never arrives, the later one does")
        let finishedKept = try phoneEvents.waitForEvent("userInfo.didFinish", timeoutSeconds: 10)
        XCTAssertEqual(finishedKept.data["transferId"]?.stringValue, kept)
        XCTAssertNil(finishedKept.data["error"])

        let delivered = try p.transferUserInfo(["item": "delivered"])
        let finished = try phoneEvents.waitForEvent("userInfo.didFinish", timeoutSeconds: 10)
        XCTAssertEqual(finished.data["transferId"]?.stringValue, delivered)
        XCTAssertNil(finished.data["error"])
        XCTAssertEqual(
            try p.call("userInfo.cancel", ["transferId": .string(delivered)])["cancelled"], false,
            "cancel has no effect once delivered")
        XCTAssertEqual(try Received.userInfos(w), [["item": "kept"], ["item": "delivered"]])
        XCTAssertEqual(try p.outstandingIds(), [])
    }

    // MARK: Outstanding transfers survive a restart

    func testOutstandingTransfersSurviveSIGKILLOfThePhone() throws {
        let (phone, _, p, w) = try startDurablePair()
        _ = try w.call("link.set", ["up": false])
        eventually("the link to drop") { try p.status("link")?["connected"] == false }
        let infos: [JSONValue] = [["q": 1, "s": "one"], ["q": 2, "blob": ["$data": "AAECAw=="]], ["q": 3, "list": [1, 2.5, true]]]
        var ids: [String] = []
        for info in infos { ids.append(try p.transferUserInfo(info)) }
        let before = try p.call("userInfo.outstanding")["transfers"]?.arrayValue ?? []
        XCTAssertEqual(before.compactMap { $0["transferId"]?.stringValue }, ids)
        XCTAssertEqual(try p.status("outstandingUserInfoTransfers"), 3)

        phone.kill9()
        try phone.startAndWait()
        let p2 = try client(phone)
        let after = try p2.call("userInfo.outstanding")["transfers"]?.arrayValue ?? []
        XCTAssertEqual(after.compactMap { $0["transferId"]?.stringValue }, ids, "the same transfers, in order, after kill -9")
        XCTAssertEqual(after.compactMap { $0["userInfo"] }, infos)
        XCTAssertEqual(after.compactMap { $0["isTransferring"] }, [false, false, false])
        XCTAssertEqual(after.compactMap { $0["isCurrentComplicationInfo"] }, [false, false, false])
        XCTAssertEqual(try p2.status("outstandingUserInfoTransfers"), 3)

        _ = try w.call("link.set", ["up": true])
        eventually("the three transfers to arrive", timeout: 10) { try Received.userInfos(w).count >= 3 }
        XCTAssertEqual(try Received.userInfos(w), infos)
        eventually("the outbox to empty") {
            try p2.call("userInfo.outstanding")["transfers"]?.arrayValue?.isEmpty == true
        }
        XCTAssertEqual(try p2.status("outstandingUserInfoTransfers"), 0)
    }

    // MARK: Application context

    func testApplicationContextLatestWins() throws {
        let (_, watch, p, w) = try startDurablePair()
        let events = try subscribed(watch)
        _ = try p.call("link.set", ["up": false])
        eventually("the link to drop") { try p.status("link")?["connected"] == false }
        let contexts: [JSONValue] = [
            ["v": 1, "mode": "first"], ["v": 2, "mode": "second"], ["v": 3, "mode": "newest", "at": ["$date": "2026-11-30T07:00:00.000Z"]],
        ]
        for context in contexts { XCTAssertEqual(try p.call("context.update", ["context": context]), [:]) }
        XCTAssertEqual(try p.call("context.get")["applicationContext"], contexts[2])
        XCTAssertEqual(try w.call("context.get")["receivedApplicationContext"], .object([:]))

        _ = try p.call("link.set", ["up": true])
        let first = try events.waitForEvent("context.received", timeoutSeconds: 10)
        XCTAssertEqual(first.data["applicationContext"], contexts[2], "the watch gets only the newest context")
        XCTAssertEqual(try w.call("context.get")["receivedApplicationContext"], contexts[2])
        XCTAssertEqual(try w.call("context.get")["applicationContext"], .object([:]))
        try assertNoContextReceived(events, barrier: 1, p: p)
        let received = try Received.items(w, kind: "applicationContext")
        XCTAssertEqual(received.map { $0["applicationContext"] }, [contexts[2]])

        XCTAssertEqual(try p.call("context.update", ["context": contexts[2]]), [:], "an equal context is accepted")
        try assertNoContextReceived(events, barrier: 2, p: p)
        XCTAssertEqual(try Received.items(w, kind: "applicationContext").count, 1, "and not sent again")

        let newer: JSONValue = ["v": 4]
        _ = try p.call("context.update", ["context": newer])
        XCTAssertEqual(try events.waitForEvent("context.received", timeoutSeconds: 10).data["applicationContext"], newer)
        XCTAssertEqual(try w.call("context.get")["receivedApplicationContext"], newer)

        var generator = SeededGenerator(seed: 5)
        assertControlError("WCErrorDomain", 7009) {
            try p.call("context.update", ["context": ["blob": randomData(262_145, using: &generator)]])
        }
        XCTAssertEqual(try p.call("context.get")["applicationContext"], newer, "a refused context changes nothing")
    }

    func testApplicationContextSurvivesSIGKILLOfEitherSide() throws {
        let (phone, watch, p, w) = try startDurablePair()
        _ = try w.call("link.set", ["up": false])
        eventually("the link to drop") { try p.status("link")?["connected"] == false }
        _ = try p.call("context.update", ["context": ["v": 1]])
        _ = try p.call("context.update", ["context": ["v": 2]])
        phone.kill9()
        try phone.startAndWait()
        let p2 = try client(phone)
        XCTAssertEqual(try p2.call("context.get")["applicationContext"], ["v": 2], "the context survives kill -9 of the sender")

        let events = try subscribed(watch)
        _ = try w.call("link.set", ["up": true])
        XCTAssertEqual(try events.waitForEvent("context.received", timeoutSeconds: 10).data["applicationContext"], ["v": 2])
        try assertNoContextReceived(events, barrier: 1, p: p2)

        watch.kill9()
        try watch.startAndWait()
        let w2 = try client(watch)
        XCTAssertEqual(
            try w2.call("context.get")["receivedApplicationContext"], ["v": 2],
            "receivedApplicationContext survives kill -9 of the receiver")
        let events2 = try subscribed(watch)
        eventually("the link to come back", timeout: 10) { try p2.status("link")?["connected"] == true }
        try assertNoContextReceived(events2, barrier: 2, p: p2)
        XCTAssertEqual(
            try Received.items(w2, kind: "applicationContext").map { $0["applicationContext"] }, [["v": 2]],
            "delivered once")
    }

    // MARK: Complication budget

    func testComplicationBudgetThenPlainUserInfo() throws {
        let (_, watch, p, w) = try startDurablePair()
        let events = try subscribed(watch)
        // WCSession.h: "Count will be 0 whenever the complication is not enabled" (the transfer
        // then goes as a plain userInfo: DeviceRulesTests).
        XCTAssertEqual(try p.status("remainingComplicationUserInfoTransfers"), 0)
        _ = try p.call("device.set", ["isComplicationEnabled": true])
        XCTAssertEqual(try p.status("remainingComplicationUserInfoTransfers"), 50)

        for index in 0..<51 {
            let info: JSONValue = ["c": .int(Int64(index))]
            let result = try p.call("complication.transfer", ["userInfo": info])
            XCTAssertNotNil(result["transferId"]?.stringValue)
            XCTAssertEqual(result["remaining"]?.intValue, Int64(max(0, 49 - index)), "remaining after transfer \(index + 1)")
            let event = try events.waitForEvent("userInfo.received", timeoutSeconds: 10)
            XCTAssertEqual(event.data["userInfo"], info)
            XCTAssertEqual(
                event.data["isCurrentComplicationInfo"], .bool(index < 50),
                "transfer \(index + 1) \(index < 50 ? "is" : "is no longer") complication info")
        }
        XCTAssertEqual(try p.status("remainingComplicationUserInfoTransfers"), 0)
        let flags = try Received.items(w, kind: "userInfo").compactMap { $0["isCurrentComplicationInfo"]?.boolValue }
        XCTAssertEqual(flags, Array(repeating: true, count: 50) + [false])
    }

    func testOnlyTheNewestQueuedComplicationTransferCarriesTheTag() throws {
        let (_, watch, p, w) = try startDurablePair()
        _ = try p.call("device.set", ["isComplicationEnabled": true])
        _ = try p.call("link.set", ["up": false])
        eventually("the link to drop") { try p.status("link")?["connected"] == false }
        XCTAssertEqual(try p.call("complication.transfer", ["userInfo": ["c": "older"]])["remaining"], 49)
        XCTAssertEqual(try p.call("complication.transfer", ["userInfo": ["c": "newer"]])["remaining"], 48)
        let outstanding = try p.call("userInfo.outstanding")["transfers"]?.arrayValue ?? []
        XCTAssertEqual(outstanding.map { $0["userInfo"] }, [["c": "older"], ["c": "newer"]])
        XCTAssertEqual(outstanding.map { $0["isCurrentComplicationInfo"] }, [false, true], "the newer one took the tag")
        XCTAssertEqual(try p.status("remainingComplicationUserInfoTransfers"), 48)

        let events = try subscribed(watch)
        _ = try p.call("link.set", ["up": true])
        let received = try events.userInfoReceived(count: 2)
        XCTAssertEqual(received.map { $0.data["userInfo"] }, [["c": "older"], ["c": "newer"]])
        XCTAssertEqual(received.map { $0.data["isCurrentComplicationInfo"] }, [false, true])
        XCTAssertEqual(try Received.items(w, kind: "userInfo").map { $0["isCurrentComplicationInfo"] }, [false, true])
    }

    // MARK: Errors

    func testUserInfoTransferErrors() throws {
        let phone = restartable("phoned")
        try phone.startAndWait(activate: false)
        let p = try client(phone)
        assertControlError("WCErrorDomain", 7004) { try p.call("userInfo.transfer", ["userInfo": ["a": 1]]) }
        assertControlError("WCErrorDomain", 7010) { try p.call("userInfo.transfer", ["userInfo": ["a": ["b": nil]]]) }
        assertControlError("WCErrorDomain", 7004) { try p.call("context.update", ["context": ["a": 1]]) }
        _ = try p.call("device.set", ["isComplicationEnabled": true])
        assertControlError("WCErrorDomain", 7004) { try p.call("complication.transfer", ["userInfo": ["a": 1]]) }
        _ = try p.call("session.activate")
        var generator = SeededGenerator(seed: 7)
        assertControlError("WCErrorDomain", 7009) {
            try p.call("userInfo.transfer", ["userInfo": ["blob": randomData(65_537, using: &generator)]])
        }
        assertControlError("WCErrorDomain", 7010) { try p.call("userInfo.transfer", ["userInfo": ["a": nil]]) }
        assertControlError("control", 3) { try p.call("userInfo.transfer", ["userInfo": "text"]) }
        assertControlError("control", 3) { try p.call("userInfo.transfer", [:]) }
        assertControlError("control", 3) { try p.call("userInfo.cancel", [:]) }
        assertControlError("WCErrorDomain", 7009) {
            try p.call("complication.transfer", ["userInfo": ["blob": randomData(65_537, using: &generator)]])
        }
        XCTAssertEqual(try p.status("outstandingUserInfoTransfers"), 0, "refused transfers are not queued")
        let accepted = try p.transferUserInfo(["a": 1])
        XCTAssertEqual(try p.outstandingIds(), [accepted], "only the accepted transfer is queued")
        XCTAssertEqual(try p.status("outstandingUserInfoTransfers"), 1)
    }

    // MARK: Damaged databases

    func testCorruptDatabaseIsRefusedAndLeftAlone() throws {
        let phone = restartable("phoned")
        try makeStateDirectory(phone)
        var generator = SeededGenerator(seed: 11)
        let garbage = Data((0..<16_384).map { _ in UInt8.random(in: 0...255, using: &generator) })
        XCTAssertTrue(FileManager.default.createFile(atPath: phone.databasePath, contents: garbage))
        let log = try refusedStart(phone)
        XCTAssertTrue(log.contains(phone.databasePath), "the message names the file:\n\(log)")
        XCTAssertTrue(log.contains("corrupt"), "the message says corrupt:\n\(log)")
        XCTAssertEqual(FileManager.default.contents(atPath: phone.databasePath), garbage, "the file is left as it was")
    }

    func testForeignSQLiteDatabaseIsRefusedAndLeftAlone() throws {
        let phone = restartable("phoned")
        try makeStateDirectory(phone)
        try createForeignDatabase(at: phone.databasePath)
        let before = FileManager.default.contents(atPath: phone.databasePath)
        XCTAssertNotNil(before)
        let log = try refusedStart(phone)
        XCTAssertTrue(log.contains(phone.databasePath), "the message names the file:\n\(log)")
        XCTAssertTrue(log.contains("not a WatchLink database"), "the message says whose it is not:\n\(log)")
        XCTAssertEqual(FileManager.default.contents(atPath: phone.databasePath), before, "the file is left as it was")
    }

    // MARK: Full disk

    func testInsufficientSpaceKeepsEverythingAnsweredAndNothingElse() throws {
        let phone = restartable("phoned", logLevel: "info")
        try phone.startAndWait(fileSizeLimitBlocks: 2_048)
        let p = try client(phone)
        var generator = SeededGenerator(seed: 13)
        var accepted: [Int] = []
        var failure: ControlError?
        var attempt = 0
        while failure == nil && attempt < 400 {
            attempt += 1
            do {
                _ = try p.call("userInfo.transfer", ["userInfo": ["n": .int(Int64(attempt)), "blob": randomData(60 * 1024, using: &generator)]])
                accepted.append(attempt)
            } catch let error as ControlError {
                failure = error
            }
        }
        guard let failure else { return XCTFail("no transfer failed in \(attempt) attempts of 60 KiB under a file-size limit") }
        XCTAssertEqual(failure.domain, "WCErrorDomain", "\(failure)")
        XCTAssertEqual(failure.code, 7015, "\(failure)")
        XCTAssertFalse(accepted.isEmpty, "some transfers fit before the disk was full")
        XCTAssertEqual(try p.status("role"), "phone", "the daemon keeps answering")
        XCTAssertTrue(phone.isRunning)
        XCTAssertEqual(try p.status("outstandingUserInfoTransfers")?.intValue, Int64(accepted.count))
        p.close()

        phone.stop()
        XCTAssertEqual(phone.terminationReason, .exit, "phoned stops on SIGTERM, not by a signal")
        try phone.startAndWait()
        let watch = restartable("watchd")
        try watch.startAndWait()
        let p2 = try client(phone)
        let w = try client(watch)
        eventually("everything accepted to be delivered", timeout: 30) { try p2.status("outstandingUserInfoTransfers") == 0 }
        let received = try Received.userInfos(w).compactMap { $0["n"]?.intValue.map(Int.init) }
        XCTAssertEqual(received, accepted, "every accepted transfer arrives once, in order, and nothing else")
        print("full disk: \(accepted.count) transfers accepted, attempt \(attempt) failed with \(failure.code)")
    }

    // MARK: Helpers

    /// Sends a userInfo marker and checks that no `context.received` event comes before it.
    private func assertNoContextReceived(
        _ events: ControlClient, barrier: Int, p: ControlClient,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let marker: JSONValue = ["barrier": .int(Int64(barrier))]
        _ = try p.call("userInfo.transfer", ["userInfo": marker])
        let seen = try events.events(until: "userInfo.received", timeoutSeconds: 10) { $0.data["userInfo"] == marker }
        let contexts = seen.filter { $0.name == "context.received" }
        XCTAssertEqual(contexts.count, 0, "unexpected context.received: \(contexts.map(\.data))", file: file, line: line)
    }

    /// An SQLite database of another application.
    private func createForeignDatabase(at path: String) throws {
        try runSQLite(at: path, "CREATE TABLE notes(id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes(text) VALUES ('hello');")
    }
}
