import Foundation
import LinkClient
import LinkControl
import LinkJSON
import XCTest

/// One phone paired with several watches: quick watch switching with real processes.
///
/// Watch A runs in the test's home; every other watch in a home of its own (its control
/// socket and state), linked to the phone's `link.sock` with the phone's `pairing.key`.
final class WatchSwitchingTests: DaemonTestCase {
    private func startPhone(_ arguments: [String] = []) throws -> (DaemonProcess, ControlClient) {
        let phone = try daemon("phoned", arguments).startAndWait()
        return (phone, try client(phone))
    }

    /// watchd `deviceId` in a home of its own, or in the test's home.
    private func startWatch(_ deviceId: String, inTestHome: Bool = false) throws -> DaemonProcess {
        if inTestHome { return try daemon("watchd", ["--device-id", deviceId]).startAndWait() }
        return try daemon(
            "watchd", home: makeDirectory(),
            [
                "--link", home + "/link.sock", "--pairing-key", home + "/pairing.key",
                "--device-id", deviceId,
            ]
        ).startAndWait()
    }

    private func watchStatus(_ p: ControlClient, _ deviceId: String) throws -> JSONValue? {
        try p.call("status")["pairedWatches"]?.arrayValue?.first { $0["deviceId"]?.stringValue == deviceId }
    }

    private func waitConnected(
        _ p: ControlClient, _ deviceId: String, _ connected: Bool = true,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        eventually("watch \(deviceId) \(connected ? "linked" : "unlinked")", timeout: 10, file: file, line: line) {
            try self.watchStatus(p, deviceId)?["isConnected"]?.boolValue == connected
        }
    }

    /// phoned, then watch A (linked first, so it is the active watch), then watch B.
    private func startPhoneWithTwoWatches(phoneArguments: [String] = [])
        throws -> (phone: DaemonProcess, a: DaemonProcess, b: DaemonProcess, p: ControlClient)
    {
        let (phone, p) = try startPhone(phoneArguments)
        let a = try startWatch("watch-a", inTestHome: true)
        waitConnected(p, "watch-a")
        let b = try startWatch("watch-b")
        waitConnected(p, "watch-b")
        XCTAssertEqual(try p.call("status")["activeWatchDeviceId"], "watch-a")
        return (phone, a, b, p)
    }

    private func activateAll(_ clients: ControlClient...) throws {
        for client in clients { XCTAssertEqual(try client.call("session.activate")["activationState"], "activated") }
    }

    private func userInfos(_ client: ControlClient) throws -> [JSONValue] {
        try Received.userInfos(client)
    }

    // MARK: - Switching

    /// WCSession.h, sessionDidBecomeInactive: "Called when the session can no longer be used to
    /// modify or add any new transfers and, all interactive messages will be cancelled".
    func testSwitchingCancelsInteractiveMessagesBothWays() throws {
        let (phone, a, _, p) = try startPhoneWithTwoWatches()
        let wa = try client(a)
        try activateAll(p, wa)
        eventually("the phone to reach watch A") { try p.call("status")["isReachable"] == true }
        _ = try wa.call("replies.set", ["mode": "manual"])
        _ = try p.call("replies.set", ["mode": "manual"])
        let watchEvents = try subscribed(a)
        let phoneEvents = try subscribed(phone)
        let fromPhone = AsyncResult<JSONObject>()
        DispatchQueue.global().async {
            fromPhone.set(Result { try p.call("message.send", ["message": ["q": "phone"], "wantsReply": true, "timeoutMs": 60_000], timeoutSeconds: 90) })
        }
        let fromWatch = AsyncResult<JSONObject>()
        DispatchQueue.global().async {
            fromWatch.set(Result { try wa.call("message.send", ["message": ["q": "watch"], "wantsReply": true, "timeoutMs": 60_000], timeoutSeconds: 90) })
        }
        _ = try watchEvents.waitForEvent("message.received", timeoutSeconds: 10)
        _ = try phoneEvents.waitForEvent("message.received", timeoutSeconds: 10)

        _ = try p.call("device.switchWatch", ["deviceId": "watch-b"])
        for (side, result, code) in [("phone", fromPhone, 7016), ("watch", fromWatch, 7007)] {
            do {
                let value = try result.wait(timeout: 10)
                XCTFail("the \(side)'s message was answered: \(value)")
            } catch let error as ControlError {
                XCTAssertEqual(error.code, code, "the \(side)'s message: \(error)")
            }
        }
        let seen = try phoneEvents.events(until: "session.didDeactivate", timeoutSeconds: 10)
        XCTAssertEqual(seen.map(\.name).filter { $0.hasPrefix("session.did") }, ["session.didBecomeInactive", "session.didDeactivate"])
    }

    /// What was queued for the old watch stays stored for it, the session deactivates whether
    /// or not the old watch is in range, and the queue goes out when that watch is active again.
    func testTheOldWatchsQueueWaitsForItAndTheSessionDeactivatesWithoutIt() throws {
        let (phone, a, b, p) = try startPhoneWithTwoWatches()
        let wa = try client(a), wb = try client(b)
        try activateAll(p, wa, wb)
        eventually("the phone to reach watch A") { try p.call("status")["isReachable"] == true }
        let seenFromB = try wb.call("status")
        XCTAssertEqual(seenFromB["isReachable"], false, "a watch that is not the active one does not reach the phone")
        XCTAssertTrue(seenFromB["unreachableReason"]?.stringValue?.contains("phone") == true, "\(seenFromB)")

        _ = try wa.call("link.set", ["up": false])
        waitConnected(p, "watch-a", false)
        var transferIds: [JSONValue] = []
        for n in 1...3 {
            transferIds.append(try XCTUnwrap(p.call("userInfo.transfer", ["userInfo": ["n": .int(Int64(n))]])["transferId"]))
        }
        let sourceA = home + "/for-a.bin"
        let expectedA = try writeRandomFile(sourceA, size: 300_000)
        let forA = try XCTUnwrap(p.call("file.transfer", ["path": .string(sourceA)])["transferId"])
        let events = try subscribed(phone)

        let switched = try p.call("device.switchWatch", ["deviceId": "watch-b"])
        XCTAssertEqual(switched["switched"], true)
        XCTAssertEqual(switched["previousWatchDeviceId"], "watch-a")
        XCTAssertEqual(switched["activeWatchDeviceId"], "watch-b")
        XCTAssertEqual(switched["activationState"], "notActivated", "nothing received waits for the app: deactivated at once, A out of range")
        let lifecycle = try events.events(until: "session.didDeactivate", timeoutSeconds: 5)
        XCTAssertEqual(lifecycle.map(\.name).filter { $0.hasPrefix("session.did") }, ["session.didBecomeInactive", "session.didDeactivate"])
        XCTAssertEqual(try watchStatus(p, "watch-a")?["outstandingUserInfoTransfers"], 3, "kept for A")
        assertControlError("WCErrorDomain", 7004) { try p.call("userInfo.transfer", ["userInfo": ["n": 99]]) }

        _ = try wa.call("link.set", ["up": true])
        waitConnected(p, "watch-a")
        XCTAssertEqual(try p.call("session.activate")["activationState"], "activated")
        eventually("the phone to reach watch B") { try p.call("status")["isReachable"] == true }
        let last = try XCTUnwrap(p.call("userInfo.transfer", ["userInfo": ["to": "b"]])["transferId"])
        _ = try events.waitForEvent("userInfo.didFinish", timeoutSeconds: 15) { $0.data["transferId"] == last }
        XCTAssertEqual(try userInfos(wb), [["to": "b"]], "B gets only its own item")
        XCTAssertEqual(try userInfos(wa), [], "A, in range again but not the active watch, gets nothing")
        XCTAssertEqual(try Received.items(wa, kind: "file"), [])
        XCTAssertEqual(try watchStatus(p, "watch-a")?["outstandingUserInfoTransfers"], 3)

        let eventsA = try subscribed(a)
        _ = try p.call("device.switchWatch", ["deviceId": "watch-a"])
        eventually("A to get its three items once it is the active watch again", timeout: 15) { try self.userInfos(wa).count == 3 }
        XCTAssertEqual(try userInfos(wa), [["n": 1], ["n": 2], ["n": 3]])
        let receivedA = try eventsA.waitForEvent("file.received", timeoutSeconds: 30)
        XCTAssertEqual(receivedA.data["transferId"], forA)
        XCTAssertEqual(try sha256(of: try XCTUnwrap(receivedA.data["path"]?.stringValue)), expectedA)
        XCTAssertEqual(try userInfos(wb), [["to": "b"]], "nothing of A's went to B")
        eventually("A's queue to empty") { try self.watchStatus(p, "watch-a")?["outstandingUserInfoTransfers"] == 0 }
        eventually("the outbox copy of A's file to be removed") {
            try FileManager.default.contentsOfDirectory(atPath: phone.home + "/phone" + "/files/outbox").isEmpty
        }
        _ = transferIds
    }

    /// Two watches on a phone with a manual clock (the shipped 2 s of the inactive period are
    /// of the phone's clock: a test moves through them), both sessions with A activated, the
    /// phone app not running and an item of A's held for it.
    private func startWithAnItemHeldForTheApp() throws -> (phone: DaemonProcess, wa: ControlClient, p: ControlClient) {
        let (phone, a, _, p) = try startPhoneWithTwoWatches(phoneArguments: ["--clock", "manual"])
        let wa = try client(a)
        try activateAll(p, wa)
        _ = try p.call("app.setState", ["state": "notRunning"])
        _ = try wa.call("userInfo.transfer", ["userInfo": ["from": "a"]])
        eventually("the phone to hold A's item for its app") { try self.watchStatus(p, "watch-a")?["hasContentPending"] == true }
        return (phone, wa, p)
    }

    /// WCSession: "Moving to the inactive state gives the session a small amount of time to
    /// deliver any data that has already been received." With the app not running nothing is
    /// delivered: the session is inactive (7016) for that while, then deactivates anyway.
    func testTheInactivePeriodIsShortAndRefusesNewSends() throws {
        let (phone, _, p) = try startWithAnItemHeldForTheApp()
        let events = try subscribed(phone)
        let switched = try p.call("device.switchWatch", ["deviceId": "watch-b"])
        XCTAssertEqual(switched["activationState"], "inactive")
        let inactive = try events.waitForEvent("session.didBecomeInactive", timeoutSeconds: 5)
        assertControlError("WCErrorDomain", 7016) { try p.call("userInfo.transfer", ["userInfo": ["n": 99]]) }
        assertControlError("WCErrorDomain", 7016) { try p.call("message.send", ["message": ["n": 99]]) }
        assertControlError("WCErrorDomain", 7016) { try p.call("context.update", ["context": ["n": 99]]) }
        XCTAssertEqual(try p.call("session.activate")["activationState"], "inactive")
        try advance(p, 1_999)
        XCTAssertEqual(try p.call("status")["activationState"], "inactive", "a millisecond before the 2 s are over")
        try advance(p, 1)
        let deactivated = try events.waitForEvent("session.didDeactivate", timeoutSeconds: 5)
        XCTAssertEqual(
            try XCTUnwrap(deactivated.date).timeIntervalSince(try XCTUnwrap(inactive.date)), 2, accuracy: 0.0001,
            "inactive for the 2 s of --inactive-delivery-ms, then deactivated")
        XCTAssertEqual(try p.call("status")["sessionWatchDeviceId"], "watch-b")
        XCTAssertEqual(try watchStatus(p, "watch-a")?["hasContentPending"], true, "A's item waits for the app's next session with A")
    }

    /// Switching back to the watch of the app's session while that session is still inactive:
    /// it deactivates as before ("a small amount of time to deliver any data that has already
    /// been received"), and once the app activates it again, that watch is the active one and
    /// its queue goes out.
    func testSwitchingBackBeforeTheSessionDeactivatedSendsItsQueue() throws {
        let (phone, wa, p) = try startWithAnItemHeldForTheApp()
        let events = try subscribed(phone)
        XCTAssertEqual(try p.call("device.switchWatch", ["deviceId": "watch-b"])["activationState"], "inactive")
        XCTAssertEqual(try p.call("device.switchWatch", ["deviceId": "watch-a"])["activationState"], "inactive")
        try advance(p, 2_000)
        _ = try events.waitForEvent("session.didDeactivate", timeoutSeconds: 5)
        XCTAssertEqual(try p.call("status")["sessionWatchDeviceId"], "watch-a")
        XCTAssertEqual(try p.call("session.activate")["activationState"], "activated")
        _ = try p.call("userInfo.transfer", ["userInfo": ["to": "a"]])
        eventually("A, the active watch, to get the phone's item", timeout: 10) { try self.userInfos(wa) == [["to": "a"]] }
    }

    /// The app's state belongs to the phone: the session with the new watch has it too.
    func testTheAppsStateGoesWithItToTheNewWatchsSession() throws {
        let (_, a, b, p) = try startPhoneWithTwoWatches()
        try activateAll(p, try client(a), try client(b))
        XCTAssertEqual(try p.call("app.setState", ["state": "background"])["appState"], "background")
        _ = try p.call("device.switchWatch", ["deviceId": "watch-b"])
        eventually("the app's session to move to watch B") { try p.call("status")["sessionWatchDeviceId"] == "watch-b" }
        XCTAssertEqual(try p.call("status")["appState"], "background")
    }

    func testSwitchingWithNothingPendingDeactivatesAtOnce() throws {
        let (phone, _, b, p) = try startPhoneWithTwoWatches()
        let wb = try client(b)
        try activateAll(p, wb)
        let events = try subscribed(phone)
        XCTAssertEqual(try p.call("device.switchWatch", ["deviceId": "watch-b"])["activationState"], "notActivated")
        _ = try events.waitForEvent("session.didDeactivate", timeoutSeconds: 5)
        XCTAssertEqual(try p.call("session.activate")["activationState"], "activated")
        eventually("the phone to reach watch B") { try p.call("status")["isReachable"] == true }
        eventually("watch B to reach the phone") { try wb.call("status")["isReachable"] == true }
        XCTAssertEqual(try p.call("message.send", ["message": ["to": "b"], "wantsReply": true])["reply"], .object([:]))
        let received = try wb.call("received.list")["items"]?.arrayValue ?? []
        XCTAssertEqual(received.map { $0["message"] }, [["to": "b"]])
        let paired = try p.call("status")["pairedWatches"]?.arrayValue ?? []
        XCTAssertEqual(paired.map { $0["deviceId"] }, ["watch-a", "watch-b"])
        XCTAssertEqual(paired.map { $0["isActive"] }, [false, true])
        XCTAssertEqual(paired.map { $0["activationState"] }, ["notActivated", "activated"])
    }

    func testWhatTheAppQueuedBeforeAnyWatchLinkedGoesToTheFirstWatch() throws {
        let (_, p) = try startPhone()
        _ = try p.call("session.activate")
        _ = try p.call("userInfo.transfer", ["userInfo": ["early": true]])
        XCTAssertEqual(try p.call("status")["activeWatchDeviceId"], .null)
        let a = try startWatch("watch-a")
        let wa = try client(a)
        _ = try wa.call("session.activate")
        eventually("the first watch to get what was queued") { try self.userInfos(wa) == [["early": true]] }
        XCTAssertEqual(try p.call("status")["activeWatchDeviceId"], "watch-a")
    }

    // MARK: - Bad input

    func testSwitchingToAWatchThatNeverLinkedOrWithBadArgumentsIsRefused() throws {
        let (phone, p) = try startPhone()
        assertControlError("WCErrorDomain", 7008) { try p.call("device.switchWatch", ["deviceId": "watch-a"]) }
        let a = try startWatch("watch-a", inTestHome: true)
        waitConnected(p, "watch-a")
        let events = try subscribed(phone)

        do {
            _ = try p.call("device.switchWatch", ["deviceId": "watch-z"])
            XCTFail("an unknown watch is refused")
        } catch let error as ControlError {
            XCTAssertEqual(error.code, 7008)
            XCTAssertEqual(error.name, "invalidParameter")
            XCTAssertTrue(error.message.contains("'watch-z'") && error.message.contains("'watch-a'"), error.message)
        }
        assertControlError("control", 3) { try p.call("device.switchWatch", ["deviceId": ""]) }
        assertControlError("control", 3) { try p.call("device.switchWatch", ["deviceId": 7]) }
        assertControlError("control", 3) { try p.call("device.switchWatch", ["deviceId": ["watch-a"]]) }
        assertControlError("control", 3) { try p.call("device.switchWatch", [:]) }
        assertControlError("control", 3) { try p.call("device.switchWatch", ["deviceId": "watch-a", "force": true]) }
        assertControlError("control", 2) { try self.client(a).call("device.switchWatch", ["deviceId": "watch-a"]) }

        let same = try p.call("device.switchWatch", ["deviceId": "watch-a"])
        XCTAssertEqual(same["switched"], false)
        XCTAssertEqual(same["activeWatchDeviceId"], "watch-a")
        // A barrier: the event of a later device.set must be the first one the phone sends.
        _ = try p.call("device.set", ["isComplicationEnabled": true])
        let seen = try events.events(until: "session.watchStateDidChange", timeoutSeconds: 10) { $0.data["isComplicationEnabled"] == true }
        XCTAssertEqual(seen.map(\.name), ["session.watchStateDidChange"], "a refused or empty switch changes nothing")
        XCTAssertEqual(try p.call("status")["activeWatchDeviceId"], "watch-a")
        XCTAssertEqual(try watchStatus(p, "watch-a")?["isConnected"], true)
    }

    func testAWatchWithoutTheKeyIsStillRefusedWhileTwoWatchesAreLinked() throws {
        let (phone, _, _, p) = try startPhoneWithTwoWatches()
        let otherHome = makeDirectory()
        _ = FileManager.default.createFile(
            atPath: otherHome + "/pairing.key", contents: Data(repeating: 0xAB, count: 32),
            attributes: [.posixPermissions: 0o600])
        let intruder = try daemon("watchd", home: otherHome, ["--link", home + "/link.sock", "--device-id", "intruder"])
            .startAndWait()
        eventually("phoned to log the refusal") { phone.log.contains("did not prove the pairing key") }
        eventually("the intruder to log why it was refused") { intruder.log.contains("authenticationFailed") }
        let paired = try p.call("status")["pairedWatches"]?.arrayValue ?? []
        XCTAssertEqual(paired.map { $0["deviceId"] }, ["watch-a", "watch-b"], "a peer without the key is never paired")
        XCTAssertEqual(paired.map { $0["isConnected"] }, [true, true])
        XCTAssertEqual(try client(intruder).call("status")[path: "link", "connected"], false)
    }

    func testASecondLinkFromALinkedWatchIsRefusedAndTheFirstKeepsItsLink() throws {
        let (phone, _, _, p) = try startPhoneWithTwoWatches()
        let copy = try startWatch("watch-a")
        eventually("phoned to refuse the second link") { phone.log.contains("refused a second link from it") }
        eventually("the copy to learn why") { copy.log.contains("alreadyConnected") }
        XCTAssertEqual(try watchStatus(p, "watch-a")?["isConnected"], true)
        XCTAssertEqual(try client(copy).call("status")[path: "link", "connected"], false)
        XCTAssertEqual(try p.call("status")["pairedWatches"]?.arrayValue?.count, 2)
    }

    // MARK: - Restarts

    func testARestartedPhoneKeepsTheActiveWatchAndEachWatchsQueue() throws {
        let (phone, a, b, p) = try startPhoneWithTwoWatches()
        let wa = try client(a), wb = try client(b)
        try activateAll(p, wa, wb)
        _ = try wa.call("link.set", ["up": false])
        waitConnected(p, "watch-a", false)
        for n in 1...2 { _ = try p.call("userInfo.transfer", ["userInfo": ["a": .int(Int64(n))]]) }
        XCTAssertEqual(try p.call("device.switchWatch", ["deviceId": "watch-b"])["activationState"], "notActivated")

        phone.stop()
        try phone.start()
        try phone.waitUntilReady()
        let p2 = try client(phone)
        var status = try p2.call("status")
        XCTAssertEqual(status["activeWatchDeviceId"], "watch-b")
        XCTAssertEqual(status["sessionWatchDeviceId"], "watch-b", "a fresh launch starts with the active watch")
        XCTAssertEqual(status["activationState"], "notActivated")
        XCTAssertEqual(try watchStatus(p2, "watch-a")?["outstandingUserInfoTransfers"], 2)
        XCTAssertEqual(try p2.call("session.activate")["activationState"], "activated")

        waitConnected(p2, "watch-b")
        _ = try wb.call("link.set", ["up": false])
        waitConnected(p2, "watch-b", false)
        _ = try p2.call("userInfo.transfer", ["userInfo": ["b": 1]])

        phone.stop()
        try phone.start()
        try phone.waitUntilReady()
        let p3 = try client(phone)
        status = try p3.call("status")
        XCTAssertEqual(status["activeWatchDeviceId"], "watch-b")
        XCTAssertEqual(try watchStatus(p3, "watch-a")?["outstandingUserInfoTransfers"], 2)
        XCTAssertEqual(try watchStatus(p3, "watch-b")?["outstandingUserInfoTransfers"], 1)

        _ = try wa.call("link.set", ["up": true])
        _ = try wb.call("link.set", ["up": true])
        eventually("the active watch to get its item", timeout: 10) { try self.userInfos(wb).count == 1 }
        XCTAssertEqual(try userInfos(wb), [["b": 1]])
        waitConnected(p3, "watch-a")
        XCTAssertEqual(try userInfos(wa), [], "A's items wait for A to be the active watch")
        _ = try p3.call("device.switchWatch", ["deviceId": "watch-a"])
        eventually("A to get its items once active", timeout: 10) { try self.userInfos(wa).count == 2 }
        XCTAssertEqual(try userInfos(wa), [["a": 1], ["a": 2]])
        eventually("both queues to empty") {
            try self.watchStatus(p3, "watch-a")?["outstandingUserInfoTransfers"] == 0
                && self.watchStatus(p3, "watch-b")?["outstandingUserInfoTransfers"] == 0
        }
    }

    // MARK: - Features

    func testPowerAuthTalksToTheActiveWatch() throws {
        let (_, a, b, p) = try startPhoneWithTwoWatches()
        let wa = try client(a), wb = try client(b)
        try activateAll(p, wa, wb)
        let instance: JSONObject = ["instanceId": "main"]
        for client in [p, wa, wb] { _ = try client.call("pa.instance.add", instance) }
        let activationId = try XCTUnwrap(p.call("pa.activation.create", instance)["activationId"])
        XCTAssertEqual(try wa.call("pa.activation.get", instance)["activationIdentifier"], .null)
        _ = try p.call("device.switchWatch", ["deviceId": "watch-b"])
        eventually("the session with watch A to deactivate") { try p.call("status")["activationState"] == "notActivated" }
        XCTAssertEqual(try p.call("session.activate")["activationState"], "activated")
        eventually("the phone to reach watch B") { try p.call("status")["isReachable"] == true }
        XCTAssertEqual(try p.call("pa.status.sendToWatch", ["instanceId": "main", "mode": "completion"])["delivered"], true)
        XCTAssertEqual(try wb.call("pa.activation.get", instance)["activationIdentifier"], activationId)
        XCTAssertEqual(try wa.call("pa.activation.get", instance)["activationIdentifier"], .null)
    }
}
