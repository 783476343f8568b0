import Foundation
import LinkClient
import LinkControl
import LinkJSON
import TestSupport
import XCTest

/// The WatchConnectivity rules as a device keeps them, one test per rule, with both daemons
/// running. The expected codes and event orders are Apple's: `WCError.h` (the codes),
/// `WCSession.h` and the `WCSession` reference pages (quoted where each test relies on them).
final class DeviceRulesTests: DurableTestCase {
    // MARK: - Rule 1: pairing and installation gate every send

    /// WCSession: "The iOS app should ensure the Watch app is installed before trying to
    /// initiate transfers"; every transfer fails with `WCErrorCodeDeviceNotPaired` (7005),
    /// `WCErrorCodeWatchAppNotInstalled` (7006) or, on the watch,
    /// `WCErrorCodeCompanionAppNotInstalled` (7018) / `WCErrorCodeWatchOnlyApp` (7019).
    func testPairingAndInstallationGateEverySendNotOnlyMessages() throws {
        let (_, _, p, w) = try startActivatedPair()
        let file = home + "/f.bin"
        _ = try writeRandomFile(file, size: 1_000)
        _ = try p.call("device.set", ["isComplicationEnabled": true])
        func everySend(_ client: ControlClient, phone: Bool) -> [(String, JSONObject)] {
            var sends: [(String, JSONObject)] = [
                ("message.send", ["message": ["m": 1]]),
                ("userInfo.transfer", ["userInfo": ["u": 1]]),
                ("context.update", ["context": ["c": .int(Int64.random(in: 1...1_000_000))]]),
                ("file.transfer", ["path": .string(file)]),
            ]
            if phone { sends.append(("complication.transfer", ["userInfo": ["c": 1]])) }
            return sends
        }
        for (flags, code) in [(["isPaired": false] as JSONObject, 7005), (["isWatchAppInstalled": false], 7006)] {
            _ = try p.call("device.set", flags)
            for (op, args) in everySend(p, phone: true) {
                assertControlError("WCErrorDomain", code) { try p.call(op, args) }
            }
            _ = try p.call("device.set", ["isPaired": true, "isWatchAppInstalled": true])
        }
        for (flags, code) in [(["isCompanionAppInstalled": false] as JSONObject, 7018), (["isWatchOnlyApp": true], 7019)] {
            _ = try w.call("device.set", flags)
            for (op, args) in everySend(w, phone: false) {
                assertControlError("WCErrorDomain", code) { try w.call(op, args) }
            }
            eventually("the phone to see the watch app as unreachable") { try p.call("status")["isReachable"] == false }
            _ = try w.call("device.set", ["isCompanionAppInstalled": true, "isWatchOnlyApp": false])
            eventually("reachable again") { try p.call("status")["isReachable"] == true }
        }
        XCTAssertEqual(try p.call("userInfo.outstanding")["transfers"], [], "nothing refused was queued")
        XCTAssertEqual(try w.call("userInfo.outstanding")["transfers"], [])
    }

    // MARK: - Rule 2: reachability seen from the watch

    /// sendMessage: "Calling this method from your WatchKit extension while it is active and
    /// running wakes up the corresponding iOS app in the background and makes it reachable."
    /// WCSession.h: "Messages can only be sent while the sending app is running."
    func testAWatchMessageWakesThePhoneAppAndOnlyARunningWatchAppSends() throws {
        let (phone, _, p, w) = try startActivatedPair()
        _ = try p.call("app.setState", ["state": "notRunning"])
        eventually("the phone app to be not running") { try p.call("status")["appState"] == "notRunning" }
        XCTAssertEqual(try w.call("status")["isReachable"], true, "a phone app that is not running is still reachable from the watch")
        let events = try subscribed(phone)

        let answer = try w.call("message.send", ["message": ["wake": true], "wantsReply": true])
        XCTAssertEqual(answer["reply"], [:])
        let seen = try events.events(until: "message.received", timeoutSeconds: 5)
        XCTAssertEqual(
            seen.map(\.name).filter { ["app.stateDidChange", "message.received"].contains($0) },
            ["app.stateDidChange", "message.received"], "the app is launched, then gets the message")
        XCTAssertEqual(seen.first { $0.name == "app.stateDidChange" }?.data["appState"], "background")
        XCTAssertEqual(try p.call("status")["appState"], "background")

        _ = try w.call("app.setState", ["state": "background"])
        assertControlError("WCErrorDomain", 7007) { try w.call("message.send", ["message": ["from": "background"]]) }
        _ = try w.call("app.setState", ["state": "notRunning"])
        assertControlError("WCErrorDomain", 7007) { try w.call("message.send", ["message": ["from": "not running"]]) }
        XCTAssertEqual(try Received.items(p, kind: "message").count, 1, "only the running watch app's message arrived")
    }

    // MARK: - Rule 4: complication transfers

    /// WCSession.h, remainingComplicationUserInfoTransfers: "Count will be 0 whenever the
    /// complication is not enabled", and "if this is 0, the complicationUserInfo will be
    /// transferred as regular userInfos".
    func testWithoutAnEnabledComplicationNothingRemainsAndTheItemIsPlainUserInfo() throws {
        let (_, _, p, w) = try startActivatedPair()
        XCTAssertEqual(try p.call("status")["remainingComplicationUserInfoTransfers"], 0)
        let sent = try p.call("complication.transfer", ["userInfo": ["temp": 21]])
        XCTAssertEqual(sent["remaining"], 0)
        eventually("the watch to get it") { try Received.userInfos(w).count == 1 }
        XCTAssertEqual(try Received.items(w, kind: "userInfo").first?["isCurrentComplicationInfo"], false)
        _ = try p.call("device.set", ["isComplicationEnabled": true])
        XCTAssertEqual(try p.call("status")["remainingComplicationUserInfoTransfers"], 50)
    }

    /// WCSession: "Data sent using the sendMessage…, sendMessageData…, and
    /// transferCurrentComplicationUserInfo(_:) methods has a higher priority and is
    /// transmitted right away."
    func testTheCurrentComplicationItemGoesAheadOfQueuedUserInfo() throws {
        let (phone, watch, p, w) = try startActivatedPair()
        _ = try p.call("device.set", ["isComplicationEnabled": true])
        _ = try p.call("link.set", ["up": false])
        eventually("the link to drop") { try p.call("status")[path: "link", "connected"] == false }
        for n in 1...3 { _ = try p.call("userInfo.transfer", ["userInfo": ["n": .int(Int64(n))]]) }
        let current = try p.call("complication.transfer", ["userInfo": ["complication": true]])
        XCTAssertEqual(current["remaining"], 49)
        let outstanding = try p.call("userInfo.outstanding")["transfers"]?.arrayValue ?? []
        XCTAssertEqual(outstanding.map { $0["userInfo"] }, [["complication": true], ["n": 1], ["n": 2], ["n": 3]])
        _ = (phone, watch)
        _ = try p.call("link.set", ["up": true])
        eventually("the watch to get all four") { try Received.userInfos(w).count == 4 }
        XCTAssertEqual(try Received.userInfos(w), [["complication": true], ["n": 1], ["n": 2], ["n": 3]])
        XCTAssertEqual(try Received.items(w, kind: "userInfo").map { $0["isCurrentComplicationInfo"] }, [true, false, false, false])
    }

    // MARK: - Rule 5: where errors arrive

    /// WCError 7015: "there isn't enough space on the receiving side to store the data"; a
    /// failed transferUserInfo reports through `session(_:didFinish:error:)`.
    func testAReceiversFullDiskReachesTheSenderAsDidFinish7015() throws {
        // 1 MiB in the shell's 512-byte blocks.
        let (phone, watch, p, w) = try startDurablePair(watchFileSizeLimitBlocks: 2_048, logLevel: "info")
        let events = try subscribed(phone)
        var generator = SeededGenerator(seed: 17)
        var ids: [JSONValue] = []
        for n in 1...40 {
            ids.append(
                try XCTUnwrap(p.call("userInfo.transfer", ["userInfo": ["n": .int(Int64(n)), "b": randomData(60_000, using: &generator)]])["transferId"]))
        }
        var finished: [JSONValue: JSONValue] = [:]  // the error, or null
        while finished.count < ids.count {
            let event = try events.waitForEvent("userInfo.didFinish", timeoutSeconds: 30)
            finished[event.data["transferId"] ?? .null] = event.data["error"] ?? .null
        }
        let refused = ids.filter { finished[$0] != .null }
        XCTAssertFalse(refused.isEmpty, "the watch's disk fills up")
        for id in refused {
            XCTAssertEqual(finished[id]?["code"], 7015)
            XCTAssertEqual(finished[id]?["name"], "insufficientSpace")
        }
        XCTAssertEqual(try p.call("userInfo.outstanding")["transfers"], [], "a refused transfer is finished, not retried")
        XCTAssertTrue(watch.isRunning)
        let delivered = try Received.userInfos(w).compactMap { $0["n"]?.intValue }
        XCTAssertEqual(delivered.count, ids.count - refused.count, "every transfer either arrived or failed with 7015")
        XCTAssertEqual(delivered, delivered.sorted(), "in order")
    }

    /// The same for a file: `session(_:didFinish fileTransfer:error:)` with 7015.
    func testAReceiversFullDiskFailsAFileTransferWith7015() throws {
        // 16 MiB in the shell's 512-byte blocks.
        let (phone, watch, p, _) = try startDurablePair(watchFileSizeLimitBlocks: 32_768, logLevel: "info")
        let events = try subscribed(phone)
        let source = home + "/large.bin"
        _ = try writeRandomFile(source, size: 24 << 20)
        let id = try XCTUnwrap(p.call("file.transfer", ["path": .string(source)])["transferId"])
        let finished = try events.waitForEvent("file.didFinish", timeoutSeconds: 30) { $0.data["transferId"] == id }
        XCTAssertEqual(finished.data[path: "error", "code"], 7015, "\(finished.data)")
        XCTAssertEqual(try p.call("file.outstanding")["transfers"], [], "the phone does not send it again")
        XCTAssertTrue(watch.isRunning)

        let small = home + "/small.bin"
        let expected = try writeRandomFile(small, size: 100_000)
        let watchEvents = try subscribed(watch)
        let next = try XCTUnwrap(p.call("file.transfer", ["path": .string(small)])["transferId"])
        let received = try watchEvents.waitForEvent("file.received", timeoutSeconds: 30)
        XCTAssertEqual(received.data["transferId"], next, "a file that fits still arrives")
        XCTAssertEqual(try sha256(of: try XCTUnwrap(received.data["path"]?.stringValue)), expected)
    }

    // MARK: - Rule 6: received files

    /// WCSession.h, `session(_:didReceive:)`: "The system will remove any content that has not
    /// been moved when this delegate method returns." Without an app attached there is no
    /// delegate that returns: the file stays in the inbox until removed (docs/control-protocol.md).
    func testWithoutAnAppAReceivedFileStaysInTheInbox() throws {
        let (_, watch, p, w) = try startActivatedPair()
        let source = home + "/kept.bin"
        let expected = try writeRandomFile(source, size: 20_000)
        let events = try subscribed(watch)
        _ = try p.call("file.transfer", ["path": .string(source)])
        let path = try XCTUnwrap(events.waitForEvent("file.received", timeoutSeconds: 10).data["path"]?.stringValue)
        _ = try p.call("message.send", ["message": ["barrier": true]])  // later turns of the watch ran
        _ = try w.call("status")
        XCTAssertTrue(FileManager.default.fileExists(atPath: path), "kept after delivery")
        XCTAssertEqual(try sha256(of: path), expected)
        try FileManager.default.removeItem(atPath: path)
        XCTAssertEqual(try Received.items(w, kind: "file").first?["path"], .string(path), "still listed, by path")
    }

    // MARK: - Rule 7: errors a device produces

    /// 7014 `WCErrorCodeDeliveryFailed` ("the system can't deliver the payload") when the
    /// receiving app implements `session(_:didReceiveMessage:)` only.
    func testAMessageWantingAReplyFailsWith7014WhenTheReceiverHasNoReplyHandler() throws {
        let (_, _, p, w) = try startActivatedPair()
        _ = try w.call("replies.set", ["mode": "noReplyHandler"])
        assertControlError("WCErrorDomain", 7014) { try p.call("message.send", ["message": ["q": 1], "wantsReply": true]) }
        XCTAssertEqual(try p.call("message.send", ["message": ["q": 2]]), [:], "a message without reply handler is delivered")
        XCTAssertEqual(try Received.items(w, kind: "message").map { $0["message"] }, [["q": 2]])
    }

    /// 7017 `WCErrorCodeTransferTimedOut`: "the transfer reaches the timeout limit before it
    /// completes", as a fault, reported in didFinish.
    func testATransferThatTimesOutReportsDidFinish7017() throws {
        let (phone, _, p, w) = try startActivatedPair()
        _ = try p.call("link.set", ["up": false])
        eventually("the link to drop") { try p.call("status")[path: "link", "connected"] == false }
        let events = try subscribed(phone)
        let id = try XCTUnwrap(p.call("userInfo.transfer", ["userInfo": ["n": 1]])["transferId"])
        XCTAssertEqual(try p.call("transfer.timeOut", ["transferId": id]), ["timedOut": true])
        let finished = try events.waitForEvent("userInfo.didFinish", timeoutSeconds: 5)
        XCTAssertEqual(finished.data["transferId"], id)
        XCTAssertEqual(finished.data[path: "error", "code"], 7017)
        XCTAssertEqual(finished.data[path: "error", "name"], "transferTimedOut")
        XCTAssertEqual(try p.call("transfer.timeOut", ["transferId": id]), ["timedOut": false], "once only")

        let file = home + "/f.bin"
        _ = try writeRandomFile(file, size: 10_000)
        let fileId = try XCTUnwrap(p.call("file.transfer", ["path": .string(file)])["transferId"])
        XCTAssertEqual(try p.call("transfer.timeOut", ["transferId": fileId]), ["timedOut": true])
        let fileFinished = try events.waitForEvent("file.didFinish", timeoutSeconds: 5)
        XCTAssertEqual(fileFinished.data[path: "error", "code"], 7017)
        XCTAssertEqual(try p.call("file.outstanding")["transfers"], [])

        _ = try p.call("link.set", ["up": true])
        _ = try p.call("userInfo.transfer", ["userInfo": ["n": 2]])
        eventually("the next transfer to arrive") { try Received.userInfos(w).count == 1 }
        XCTAssertEqual(try Received.userInfos(w), [["n": 2]], "the timed-out transfer never arrives")
    }
}
