import Foundation
import LinkClient
import LinkControl
import LinkJSON
import XCTest

/// Errors and ops that only a running pair can produce: `shutdown` and the `shuttingDown`
/// answer, `busy`, and the WatchConnectivity errors 7002, 7011 and 7014, end to end.
final class ErrorCoverageTests: DaemonTestCase {
    /// `shutdown` answers, then the daemon stops as on SIGTERM: a message waiting for its reply
    /// fails as the link goes (7007), a request still waiting for the daemon itself (a file
    /// being copied into the outbox) gets `shuttingDown`, and the daemon exits 0.
    func testShutdownStopsTheDaemonAndAnswersWhatWaits() throws {
        let (phone, watch, p, w) = try startActivatedPair()
        let watchEvents = try subscribed(watch)
        _ = try w.call("replies.set", ["mode": "manual"])
        let message = AsyncResult<JSONObject>()
        DispatchQueue.global().async {
            message.set(
                Result {
                    try p.call(
                        "message.send", ["message": ["wait": true], "wantsReply": true, "timeoutMs": 600_000],
                        timeoutSeconds: 120)
                })
        }
        _ = try watchEvents.waitForEvent("message.received", timeoutSeconds: 30)

        let source = home + "/large.bin"
        _ = try writeLargeFile(source, size: 512 << 20)
        let copier = try client(phone, timeout: 120)
        let transfer = AsyncResult<JSONObject>()
        DispatchQueue.global().async {
            transfer.set(Result { try copier.call("file.transfer", ["path": .string(source)], timeoutSeconds: 120) })
        }
        let outbox = home + "/phone/files/outbox"
        eventually("the copy into the outbox to start", timeout: 30) {
            ((try? FileManager.default.contentsOfDirectory(atPath: outbox)) ?? []).count == 1
        }

        XCTAssertEqual(try client(phone).call("shutdown"), ["stopping": true])
        assertControlError("control", 6) { try transfer.wait(timeout: 60) }
        assertControlError("WCErrorDomain", 7007) { try message.wait(timeout: 60) }
        XCTAssertEqual(phone.waitForExit(timeout: 60), 0, "phoned exits 0 after shutdown")
        XCTAssertFalse(FileManager.default.fileExists(atPath: phone.controlPath), "phoned removes its control socket")
        eventually("the watch to see the link go down", timeout: 30) {
            try w.call("status")[path: "link", "connected"] == false
        }
    }

    func testOnlyOneBenchmarkRunsAtATime() throws {
        let (phone, watch, p, w) = try startManualClockPair()
        let watchEvents = try subscribed(watch)
        // The watch answers after 5 s of the pair's manual clock: the first benchmark's one
        // round trip runs until the clock is moved.
        _ = try w.call("replies.set", ["mode": "empty", "delayMs": 5_000])
        let long = AsyncResult<JSONObject>()
        DispatchQueue.global().async {
            long.set(Result { try p.call("bench.roundTrip", ["count": 1], timeoutSeconds: 120) })
        }
        // Its message has reached the watch: the benchmark is running until the reply.
        _ = try watchEvents.waitForEvent("message.received", timeoutSeconds: 30)
        let second = try client(phone)
        do {
            let value = try second.call("bench.oneWay", ["count": 1], timeoutSeconds: 60)
            XCTFail("a second benchmark ran while the first did: \(value)")
        } catch let error as ControlError {
            XCTAssertEqual(error.domain, "control", "\(error)")
            XCTAssertEqual(error.code, 7, "\(error)")
            XCTAssertEqual(error.name, "busy", "\(error)")
            XCTAssertTrue(error.message.contains("already running"), error.message)
        }
        XCTAssertFalse(long.isDone)
        try advance(p, 5_000)
        XCTAssertEqual(try long.wait(timeout: 120)["count"], 1, "the first benchmark completes")
        _ = try w.call("replies.set", ["mode": "empty", "delayMs": 0])
        XCTAssertEqual(try second.call("bench.roundTrip", ["count": 1])["count"], 1, "and then another may run")
    }

    func testWatchConnectivityErrorsOfAPair() throws {
        let (_, watch, p, w) = try startActivatedPair()
        // 7002: complication transfers are an iPhone API.
        assertControlError("WCErrorDomain", 7002) { try w.call("complication.transfer", ["userInfo": ["a": 1]]) }

        // 7011: the watch's reply is over the limit: it gets 7009, the phone 7011.
        let watchEvents = try subscribed(watch)
        _ = try w.call("replies.set", ["mode": "manual"])
        let sent = AsyncResult<JSONObject>()
        DispatchQueue.global().async {
            sent.set(
                Result {
                    try p.call(
                        "message.send", ["message": ["big": "reply"], "wantsReply": true, "timeoutMs": 600_000],
                        timeoutSeconds: 120)
                })
        }
        let received = try watchEvents.waitForEvent("message.received", timeoutSeconds: 30)
        let replyId = try XCTUnwrap(received.data["replyId"], "\(received.data)")
        let blob = Data(repeating: 7, count: 70_000).base64EncodedString()
        assertControlError("WCErrorDomain", 7009) {
            try w.call("message.reply", ["replyId": replyId, "reply": ["blob": ["$data": .string(blob)]]])
        }
        do {
            let value = try sent.wait(timeout: 60)
            XCTFail("expected 7011, got \(value)")
        } catch let error as ControlError {
            XCTAssertEqual(error.domain, "WCErrorDomain", "\(error)")
            XCTAssertEqual(error.code, 7011, "\(error)")
        }
        _ = try w.call("replies.set", ["mode": "empty"])

        // 7014: without a reply handler, the watch's delivery acknowledgement comes too late.
        _ = try w.call("link.set", ["latencyMs": 5_000])
        assertControlError("WCErrorDomain", 7014) {
            try p.call("message.send", ["message": ["late": "ack"], "timeoutMs": 100], timeoutSeconds: 60)
        }
        _ = try w.call("link.set", ["latencyMs": 0])
        eventually("both sides reachable again", timeout: 30) { try p.call("status")["isReachable"] == true }
        XCTAssertEqual(
            try p.call("message.send", ["message": ["after": "late"], "wantsReply": true], timeoutSeconds: 60)["reply"],
            .object([:]), "the pair keeps working")
    }
}

/// `internalError`: an op that fails in a way the daemon has no WatchConnectivity or control
/// error for (here, its database changed under it by another program) is answered with
/// control 5 naming the op, and the daemon keeps serving.
final class InternalErrorTests: DurableTestCase {
    func testAFailureWithoutAnErrorOfItsOwnIsAnInternalErrorAndTheDaemonKeepsServing() throws {
        let (_, watch, p, w) = try startDurablePair()
        _ = try p.call("userInfo.transfer", ["userInfo": ["before": true]])
        eventually("the watch to commit the transfer", timeout: 30) { try Received.userInfos(w).count == 1 }
        try runSQLite(at: watch.databasePath, "ALTER TABLE inbox RENAME TO inbox_moved_away;")
        do {
            let value = try w.call("received.list")
            XCTFail("expected control 5 internalError, got \(value)")
        } catch let error as ControlError {
            XCTAssertEqual(error.domain, "control", "\(error)")
            XCTAssertEqual(error.code, 5, "\(error)")
            XCTAssertEqual(error.name, "internalError", "\(error)")
            XCTAssertTrue(error.message.hasPrefix("received.list: "), error.message)
        }
        XCTAssertEqual(try w.call("status")["role"], "watch", "the daemon keeps serving")
        // Put back, so that the watch stops cleanly at the end of the test.
        try runSQLite(at: watch.databasePath, "ALTER TABLE inbox_moved_away RENAME TO inbox;")
    }
}
