import Foundation
import LinkClient
import LinkControl
import LinkJSON
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Both daemons, spawned for real, talking over the link.
final class SessionIntegrationTests: DaemonTestCase {
    func testActivationSequence() throws {
        let (phone, watch) = try startPair()
        let phoneEvents = try subscribed(phone)
        let watchEvents = try subscribed(watch)
        let p = try client(phone)
        let w = try client(watch)

        XCTAssertEqual(try p.call("status")["activationState"], "notActivated")
        assertControlError("WCErrorDomain", 7004) { try p.call("message.send", ["message": ["a": 1]]) }

        XCTAssertEqual(try p.call("session.activate")["activationState"], "activated")
        let event = try phoneEvents.waitForEvent("session.activationDidComplete", timeoutSeconds: 5)
        XCTAssertEqual(event.data["activationState"], "activated")
        XCTAssertEqual(try p.call("status")["isReachable"], false, "the watch is not activated yet")

        XCTAssertEqual(try w.call("session.activate")["activationState"], "activated")
        _ = try watchEvents.waitForEvent("session.activationDidComplete", timeoutSeconds: 5)
        _ = try phoneEvents.waitForEvent("session.reachabilityDidChange", timeoutSeconds: 5) { $0.data["isReachable"] == true }
        _ = try watchEvents.waitForEvent("session.reachabilityDidChange", timeoutSeconds: 5) { $0.data["isReachable"] == true }

        let status = try p.call("status")
        XCTAssertEqual(status["role"], "phone")
        XCTAssertEqual(status["activationState"], "activated")
        XCTAssertEqual(status["isReachable"], true)
        XCTAssertEqual(status["appState"], "foreground")
        XCTAssertEqual(status[path: "link", "connected"], true)
        XCTAssertEqual(status["hasContentPending"], false)
        XCTAssertEqual(status["isPaired"], true)
        XCTAssertEqual(status["isWatchAppInstalled"], true)
        XCTAssertEqual(status["isComplicationEnabled"], false)
        XCTAssertNotNil(status["version"]?.stringValue)
        XCTAssertEqual(try w.call("status")["isCompanionAppInstalled"], true)
    }

    func testReachabilityFollowsAppStateDeviceFlagsAndLink() throws {
        let (phone, watch, p, w) = try startActivatedPair()
        let events = try subscribed(phone)
        let watchEvents = try subscribed(watch)
        func phoneReachable() throws -> Bool { try p.call("status")["isReachable"]?.boolValue ?? false }

        _ = try w.call("app.setState", ["state": "background"])
        _ = try events.waitForEvent("session.reachabilityDidChange", timeoutSeconds: 5) { $0.data["isReachable"] == false }
        // Apple's `isReachable`, WatchKit extension side: reachable while "running in the
        // foreground, or ... with a high priority in the background (for example, during a
        // workout session)": the background watch app's own property reads false too.
        XCTAssertEqual(try w.call("status")["isReachable"], false, "the background watch app is not reachable itself")
        _ = try w.call("workout.start")
        XCTAssertEqual(try w.call("status")["isReachable"], true, "a workout keeps it reachable in the background")
        _ = try events.waitForEvent("session.reachabilityDidChange", timeoutSeconds: 5) { $0.data["isReachable"] == true }
        _ = try w.call("workout.end")
        _ = try events.waitForEvent("session.reachabilityDidChange", timeoutSeconds: 5) { $0.data["isReachable"] == false }
        _ = try w.call("app.setState", ["state": "foreground"])
        _ = try events.waitForEvent("session.reachabilityDidChange", timeoutSeconds: 5) { $0.data["isReachable"] == true }

        // A watch message wakes the phone app (DeviceRulesTests): not running, it stays reachable.
        _ = try p.call("app.setState", ["state": "notRunning"])
        XCTAssertEqual(try p.call("status")["appState"], "notRunning")
        XCTAssertEqual(try w.call("status")["isReachable"], true, "a phone app that is not running is reachable from the watch")
        _ = try p.call("app.setState", ["state": "background"])

        _ = try p.call("device.set", ["isPaired": false])
        _ = try events.waitForEvent("session.watchStateDidChange", timeoutSeconds: 5) { $0.data["isPaired"] == false }
        XCTAssertFalse(try phoneReachable())
        assertControlError("WCErrorDomain", 7005) { try p.call("message.send", ["message": [:]]) }
        _ = try p.call("device.set", ["isPaired": true, "isWatchAppInstalled": false])
        assertControlError("WCErrorDomain", 7006) { try p.call("message.send", ["message": [:]]) }
        _ = try p.call("device.set", ["isWatchAppInstalled": true])
        _ = try w.call("device.set", ["isCompanionAppInstalled": false])
        XCTAssertEqual(
            try watchEvents.waitForEvent("session.companionAppInstalledDidChange", timeoutSeconds: 10).data,
            ["isCompanionAppInstalled": false])
        assertControlError("WCErrorDomain", 7018) { try w.call("message.send", ["message": [:]]) }
        _ = try w.call("device.set", ["isCompanionAppInstalled": true])
        XCTAssertEqual(
            try watchEvents.waitForEvent("session.companionAppInstalledDidChange", timeoutSeconds: 10).data,
            ["isCompanionAppInstalled": true])
        eventually("reachable again") { try phoneReachable() }

        let down = try p.call("link.set", ["up": false])
        XCTAssertEqual(down["up"], false)
        eventually("the link to drop") { try p.call("status")[path: "link", "connected"] == false }
        XCTAssertFalse(try phoneReachable())
        assertControlError("WCErrorDomain", 7007) { try p.call("message.send", ["message": [:]]) }
        eventually("the watch to see the link down") { try w.call("status")[path: "link", "connected"] == false }
        // The watch keeps retrying: once the phone has turned away two more of its connections,
        // the link has had its chance to come back and must still be down.
        let refusal = "phoned: link: connection #"
        let refusedBefore = phone.log.components(separatedBy: refusal).count - 1
        eventually("the phone to turn away two more connections of the watch", timeout: 30) {
            phone.log.components(separatedBy: refusal).count - 1 >= refusedBefore + 3  // the old link and two attempts
        }
        XCTAssertEqual(try p.call("status")[path: "link", "connected"], false, "the link stays down until link.set up")
        _ = try p.call("link.set", ["up": true])
        eventually("reachable after link.set up") { try phoneReachable() }

        _ = try w.call("link.set", ["up": false])
        eventually("the phone to see the watch's link go down") { try p.call("status")[path: "link", "connected"] == false }
        _ = try w.call("link.set", ["up": true])
        eventually("reachable after the watch's link.set up") { try phoneReachable() }
    }

    func testMessageWithReplyInBothDirections() throws {
        let (_, watch, p, w) = try startActivatedPair()
        let watchEvents = try subscribed(watch)
        _ = try w.call("replies.set", ["mode": "echo"])
        let message: JSONValue = [
            "cmd": "hello", "n": 42, "ok": true, "pi": 3.5, "list": [1, "two"],
            "blob": ["$data": "AAEC"], "when": ["$date": "2026-11-30T07:00:00.000Z"],
        ]
        let result = try p.call("message.send", ["message": message, "wantsReply": true])
        XCTAssertEqual(result["reply"], message)
        let received = try watchEvents.waitForEvent("message.received", timeoutSeconds: 5)
        XCTAssertEqual(received.data["message"], message)
        XCTAssertEqual(received.data["kind"], "message")

        let back = try w.call("message.sendData", ["data": ["$data": "3q2+7w=="], "wantsReply": true])
        XCTAssertEqual(back["replyData"], ["$data": ""], "the phone's default reply is empty Data")
        let noReply = try w.call("message.send", ["message": ["x": 1]])
        XCTAssertEqual(noReply.count, 0)
        let list = try p.call("received.list")
        let kinds = list["items"]?.arrayValue?.compactMap { $0["kind"]?.stringValue }
        XCTAssertEqual(kinds, ["messageData", "message"])
    }

    func testEachReplyMode() throws {
        let (_, watch, p, w) = try startActivatedPair()
        let watchEvents = try subscribed(watch)

        _ = try w.call("replies.set", ["mode": "empty"])
        XCTAssertEqual(try p.call("message.send", ["message": ["a": 1], "wantsReply": true])["reply"], .object([:]))
        XCTAssertEqual(try p.call("message.sendData", ["data": ["$data": "AQ=="], "wantsReply": true])["replyData"], ["$data": ""])

        _ = try w.call("replies.set", ["mode": "echo"])
        XCTAssertEqual(try p.call("message.sendData", ["data": ["$data": "AQID"], "wantsReply": true])["replyData"], ["$data": "AQID"])

        _ = try w.call("replies.set", ["mode": "fixed", "reply": ["status": "ok"], "replyData": ["$data": "/w=="]])
        XCTAssertEqual(try p.call("message.send", ["message": ["a": 1], "wantsReply": true])["reply"], ["status": "ok"])
        XCTAssertEqual(try p.call("message.sendData", ["data": ["$data": "AA=="], "wantsReply": true])["replyData"], ["$data": "/w=="])

        _ = try w.call("replies.set", ["mode": "none"])
        let started = Date()
        assertControlError("WCErrorDomain", 7012) {
            try p.call("message.send", ["message": ["a": 1], "wantsReply": true, "timeoutMs": 300])
        }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.29)
        // An upper bound, because the rule is a timeout: slack for a loaded host, far below ten times it.
        XCTAssertLessThan(Date().timeIntervalSince(started), 3, "7012 at the 300 ms timeout")

        _ = try w.call("replies.set", ["mode": "empty", "delayMs": 200])
        let delayedStart = Date()
        XCTAssertEqual(try p.call("message.send", ["message": [:], "wantsReply": true])["reply"], .object([:]))
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(delayedStart), 0.19)

        _ = try w.call("replies.set", ["mode": "manual"])
        let outcome = AsyncResult<JSONObject>()
        DispatchQueue.global().async {
            outcome.set(Result { try p.call("message.send", ["message": ["q": "?"], "wantsReply": true, "timeoutMs": 10_000]) })
        }
        let event = try watchEvents.waitForEvent("message.received", timeoutSeconds: 5) { $0.data["message"] == ["q": "?"] }
        guard let replyId = event.data["replyId"]?.intValue else { return XCTFail("manual mode gives a replyId: \(event.data)") }
        let items = try w.call("received.list")["items"]?.arrayValue ?? []
        XCTAssertEqual(items.last?["replyId"]?.intValue, replyId)
        _ = try w.call("message.reply", ["replyId": .int(replyId), "reply": ["a": "!"]])
        XCTAssertEqual(try outcome.wait(timeout: 5)["reply"], ["a": "!"])
        assertControlError("control", 3) { try w.call("message.reply", ["replyId": .int(replyId), "reply": [:]]) }
    }

    func testPayloadTooLargeAndUnsupportedTypes() throws {
        let (_, _, p, _) = try startActivatedPair()
        let big = Data(repeating: 0x5A, count: 65_537).base64EncodedString()
        assertControlError("WCErrorDomain", 7009) {
            try p.call("message.sendData", ["data": ["$data": .string(big)], "wantsReply": true])
        }
        let limit = Data(repeating: 0x5A, count: 65_536).base64EncodedString()
        XCTAssertNotNil(try p.call("message.sendData", ["data": ["$data": .string(limit)], "wantsReply": true])["replyData"])
        assertControlError("WCErrorDomain", 7010) { try p.call("message.send", ["message": ["a": nil]]) }
    }

    func testPendingMessageFailsWhenTheWatchIsKilledAndReachabilityReturnsAfterRestart() throws {
        let (phone, watch, p, w) = try startActivatedPair()
        let phoneEvents = try subscribed(phone)
        let watchEvents = try subscribed(watch)
        _ = try w.call("replies.set", ["mode": "manual"])
        let outcome = AsyncResult<JSONObject>()
        DispatchQueue.global().async {
            outcome.set(Result { try p.call("message.send", ["message": ["wait": true], "wantsReply": true, "timeoutMs": 60_000]) })
        }
        _ = try watchEvents.waitForEvent("message.received", timeoutSeconds: 5)
        watch.kill9()
        // Well before the message's 60 s reply timeout: the failure comes from the lost link.
        do {
            let value = try outcome.wait(timeout: 30)
            XCTFail("expected 7007, got \(value)")
        } catch let error as ControlError {
            XCTAssertEqual(error.code, 7007, "\(error)")
        }
        _ = try phoneEvents.waitForEvent("session.reachabilityDidChange", timeoutSeconds: 5) { $0.data["isReachable"] == false }

        try watch.startAndWait()
        let w2 = try client(watch)
        _ = try w2.call("session.activate")
        _ = try phoneEvents.waitForEvent("session.reachabilityDidChange", timeoutSeconds: 5) { $0.data["isReachable"] == true }
        XCTAssertEqual(try p.call("message.send", ["message": ["again": true], "wantsReply": true])["reply"], .object([:]))
    }

    func testControlErrorsLeaveTheDaemonServing() throws {
        let phone = try daemon("phoned").startAndWait()
        let p = try client(phone)
        let bad = try p.callRaw(line: Array("{not json\n".utf8))
        XCTAssertEqual(bad["ok"], false)
        XCTAssertEqual(bad["error"]?["name"], "badRequest")
        assertControlError("control", 2) { try p.call("no.such.op") }
        assertControlError("control", 3) { try p.call("app.setState", ["state": 5]) }
        assertControlError("control", 3) { try p.call("app.setState", ["state": "sleeping"]) }
        assertControlError("control", 3) { try p.call("device.set", ["isCompanionAppInstalled": true]) }
        assertControlError("control", 3) { try p.call("message.send", ["message": "text"]) }
        assertControlError("control", 3) { try p.call("replies.set", ["mode": "sometimes"]) }
        assertControlError("control", 3) { try p.call("link.set", ["latencyMs": -1]) }
        assertControlError("control", 3) { try p.call("status", ["unexpected": 1]) }
        XCTAssertEqual(try p.call("status")["role"], "phone")
    }

    func testLinkLatencyDelaysFrames() throws {
        let (_, _, p, _) = try startActivatedPair()
        _ = try p.call("link.set", ["latencyMs": 150])
        let start = Date()
        _ = try p.call("message.send", ["message": [:], "wantsReply": true])
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.14)
        XCTAssertEqual(try p.call("status")[path: "link", "latencyMs"], 150)
    }
}

/// A result that another thread fills in.
final class AsyncResult<Value>: @unchecked Sendable {
    private let condition = NSCondition()
    private var result: Result<Value, Error>?

    func set(_ result: Result<Value, Error>) {
        condition.lock()
        self.result = result
        condition.broadcast()
        condition.unlock()
    }

    var isDone: Bool {
        condition.lock()
        defer { condition.unlock() }
        return result != nil
    }

    func wait(timeout: Double) throws -> Value {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(timeout)
        while result == nil {
            if !condition.wait(until: deadline) { break }
        }
        guard let result else { throw NSError(domain: "harness", code: 3, userInfo: [NSLocalizedDescriptionKey: "no result after \(timeout) s"]) }
        return try result.get()
    }
}
