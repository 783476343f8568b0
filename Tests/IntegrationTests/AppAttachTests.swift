import Foundation
import LinkClient
import LinkControl
import LinkJSON
import WatchLinkTesting
import XCTest

/// `app.attach`: a control connection that is the running app, spoken raw (the
/// WatchConnectivity library speaks it for apps; AppSideTests runs real app processes).
final class AppAttachTests: DurableTestCase {
    func testTheAttachedConnectionIsTheAppAndItsCloseIsAQuit() throws {
        let (phone, _, p, w) = try startDurablePair()
        let app = try client(phone)
        let attached = try app.call("app.attach", ["state": "background"])
        XCTAssertEqual(attached["attached"], true)
        XCTAssertEqual(attached["appState"], "background")
        XCTAssertEqual(try p.status("appState"), "background")

        let other = try client(phone)
        assertControlError("control", 7) { try other.call("app.attach") }
        assertControlError("control", 7) { try p.call("app.setState", ["state": "foreground"]) }
        assertControlError("control", 3) { try p.call("app.acknowledge", ["seq": 1]) }
        assertControlError("control", 3) { try app.call("app.attach", ["state": "notRunning"]) }
        assertControlError("control", 3) { try app.call("app.attach", ["handles": ["didReceiveEverything"]]) }
        XCTAssertEqual(try app.call("app.setState", ["state": "foreground"])["appState"], "foreground")
        eventually("the watch to reach the phone app") { try w.status("isReachable") == true }

        app.close()
        eventually("the app to be not running once its connection closed") { try p.status("appState") == "notRunning" }
        XCTAssertEqual(try other.call("app.attach")["attached"], true, "then another process may attach")
    }

    func testMessagesGoToTheAppsDelegateMethods() throws {
        let (phone, _, p, w) = try startDurablePair()
        _ = try p.call("replies.set", ["mode": "echo"])
        let app = try client(phone)
        _ = try app.call("app.attach", ["handles": ["message", "messageWithReply", "messageData"]])
        eventually("the watch to reach the phone app") { try w.status("isReachable") == true }

        let answer = AsyncResult<JSONObject>()
        DispatchQueue.global().async {
            answer.set(Result { try w.call("message.send", ["message": ["q": 1], "wantsReply": true], timeoutSeconds: 20) })
        }
        let received = try app.waitForEvent("message.received", timeoutSeconds: 10)
        XCTAssertEqual(received.data["message"], ["q": 1])
        let replyId = try XCTUnwrap(received.data["replyId"], "the app's reply handler answers, not the reply mode")
        XCTAssertFalse(answer.isDone)
        _ = try app.call("message.reply", ["replyId": replyId, "reply": ["a": 2]])
        XCTAssertEqual(try answer.wait(timeout: 10)["reply"], ["a": 2])

        assertControlError("WCErrorDomain", 7014) {
            try w.call("message.sendData", ["data": ["$data": "AQI="], "wantsReply": true])
        }
        let declined = AsyncResult<JSONObject>()
        DispatchQueue.global().async {
            declined.set(Result { try w.call("message.send", ["message": ["q": 3], "wantsReply": true], timeoutSeconds: 20) })
        }
        let third = try app.waitForEvent("message.received", timeoutSeconds: 10) { $0.data["message"] == ["q": 3] }
        _ = try app.call("message.decline", ["replyId": try XCTUnwrap(third.data["replyId"])])
        do {
            _ = try declined.wait(timeout: 10)
            XCTFail("a declined message fails")
        } catch let error as ControlError {
            XCTAssertEqual(error.code, 7014, "\(error)")
        }
    }

    /// An app that quits with a message unanswered: its sender learns at once (7007), not
    /// after its reply timeout.
    func testAnAppThatQuitsFailsTheMessagesItDidNotAnswer() throws {
        let (phone, _, _, w) = try startDurablePair()
        let app = try client(phone)
        _ = try app.call("app.attach")
        eventually("the watch to reach the phone app") { try w.status("isReachable") == true }
        let answer = AsyncResult<JSONObject>()
        DispatchQueue.global().async {
            answer.set(Result { try w.call("message.send", ["message": ["q": 1], "wantsReply": true, "timeoutMs": 60_000], timeoutSeconds: 90) })
        }
        _ = try app.waitForEvent("message.received", timeoutSeconds: 10)
        let quit = Date()
        app.close()
        do {
            _ = try answer.wait(timeout: 10)
            XCTFail("the message of an app that quit is not answered")
        } catch let error as ControlError {
            XCTAssertEqual(error.code, 7007, "\(error)")
        }
        XCTAssertLessThan(Date().timeIntervalSince(quit), 5, "at once, not after the 60 s timeout")
    }

    /// Delivered means acknowledged by the app: an app that quits before it acknowledged gets
    /// the items again at its next attach, in order.
    func testQueuedItemsWaitForTheAppAndCountOnlyOnceAcknowledged() throws {
        let (phone, _, p, w) = try startDurablePair()
        _ = try p.call("app.setState", ["state": "notRunning"])
        for n in 1...3 { _ = try w.call("userInfo.transfer", ["userInfo": ["n": .int(Int64(n))]]) }
        _ = try w.call("context.update", ["context": ["v": 1]])
        eventually("the phone to hold them for the app") { try p.status("hasContentPending") == true }

        let first = try client(phone)
        _ = try first.call("app.attach")
        let handed = try first.events(until: "context.received", timeoutSeconds: 10).filter { $0.name.hasSuffix(".received") }
        XCTAssertEqual(handed.map(\.name), ["userInfo.received", "userInfo.received", "userInfo.received", "context.received"])
        XCTAssertEqual(handed.prefix(3).map { $0.data["userInfo"] }, [["n": 1], ["n": 2], ["n": 3]])
        let seqs = handed.compactMap { $0.data["seq"]?.intValue }
        _ = try first.call("app.acknowledge", ["seq": .int(seqs[1])])
        XCTAssertEqual(try p.status("hasContentPending"), true, "two items are not acknowledged yet")
        first.close()
        eventually("the app to be gone") { try p.status("appState") == "notRunning" }

        let second = try client(phone)
        _ = try second.call("app.attach")
        let again = try second.events(until: "context.received", timeoutSeconds: 10).filter { $0.name.hasSuffix(".received") }
        XCTAssertEqual(again.map { $0.data["seq"]?.intValue }, [seqs[2], seqs[3]], "what was not acknowledged comes again, in order")
        _ = try second.call("app.acknowledge", ["seq": .int(seqs[3])])
        eventually("nothing left for the app") { try p.status("hasContentPending") == false }
        XCTAssertEqual(try Received.userInfos(p), [["n": 1], ["n": 2], ["n": 3]], "each delivered once")
        XCTAssertEqual(try p.call("context.get")["receivedApplicationContext"], ["v": 1])
    }

    /// The app belongs to the phone, not to one watch: after a switch its session with the new
    /// watch hands it the new watch's messages.
    func testTheAttachedAppFollowsTheSessionToTheNewWatch() throws {
        let pair = try startWatchLinkPair(watchCount: 2, activate: true)
        let app = try client(pair.phone)
        _ = try app.call("app.attach")
        _ = try app.call("device.switchWatch", ["deviceId": "watch-2"])
        eventually("the session to move to watch-2") { try app.call("status")["sessionWatchDeviceId"] == "watch-2" }
        _ = try app.call("session.activate")
        let second = try client(pair.watches[1])
        eventually("watch-2 to reach the phone") { try second.status("isReachable") == true }
        let answer = AsyncResult<JSONObject>()
        DispatchQueue.global().async {
            answer.set(Result { try second.call("message.send", ["message": ["from": "watch-2"], "wantsReply": true], timeoutSeconds: 20) })
        }
        let received = try app.waitForEvent("message.received", timeoutSeconds: 10) { $0.data["message"] == ["from": "watch-2"] }
        _ = try app.call(
            "message.reply",
            [
                "replyId": try XCTUnwrap(received.data["replyId"], "the app's reply handler answers"),
                "reply": ["to": "watch-2"],
            ])
        XCTAssertEqual(try answer.wait(timeout: 10)["reply"], ["to": "watch-2"])
    }

    /// WCSession.h, `session(_:didReceive:)`: "The system will remove any content that has not
    /// been moved when this delegate method returns."
    func testAReceivedFileIsRemovedWhenTheAppAcknowledgesUnlessItMovedIt() throws {
        let (phone, _, _, w) = try startDurablePair()
        let app = try client(phone)
        _ = try app.call("app.attach")
        var paths: [String] = []
        for name in ["left.bin", "moved.bin"] {
            let source = home + "/" + name
            _ = try writeRandomFile(source, size: 10_000)
            _ = try w.call("file.transfer", ["path": .string(source)])
            let received = try app.waitForEvent("file.received", timeoutSeconds: 10)
            paths.append(try XCTUnwrap(received.data["path"]?.stringValue))
            if name == "moved.bin" { try FileManager.default.moveItem(atPath: paths[1], toPath: home + "/kept.bin") }
            _ = try app.call("app.acknowledge", ["seq": try XCTUnwrap(received.data["seq"])])
        }
        eventually("the file the app left in the inbox to be removed") { !FileManager.default.fileExists(atPath: paths[0]) }
        XCTAssertTrue(FileManager.default.fileExists(atPath: home + "/kept.bin"), "the moved file is the app's")
    }
}
