import Foundation
import LinkJSON
import TestSupport
@_spi(Testing) @testable import WatchConnectivity
import XCTest

/// WCSession against a fake daemon: the requests it makes, the delegate calls it makes.
final class WCSessionTests: XCTestCase {
    private var server: FakeControlServer!

    static let phoneStatus: JSONObject = [
        "role": "phone", "activationState": "activated", "isReachable": true, "appState": "foreground",
        "hasContentPending": false, "isPaired": true, "isWatchAppInstalled": true, "isComplicationEnabled": true,
        "outstandingUserInfoTransfers": 0, "outstandingFileTransfers": 0, "remainingComplicationUserInfoTransfers": 50,
    ]

    override func setUpWithError() throws {
        server = try FakeControlServer()
    }

    override func tearDown() {
        WCSession.default.invalidate()
        server.stop()
    }

    /// Activates `WCSession.default` against the fake daemon; `beforeStatus` runs before
    /// `status` is answered.
    private func activate(
        _ delegate: any WCSessionDelegate, recorder: Recorder,
        beforeStatus: (FakeConnection) -> Void = { _ in }
    ) throws -> FakeConnection {
        let before = recorder.all.count
        WCSession.resetDefault(controlSocketPath: server.socketPath)
        let session = WCSession.default
        markDelegateQueue(of: session)
        session.delegate = delegate
        session.activate()
        let connection = try server.accept()
        let attach = try connection.expect("app.attach")
        XCTAssertEqual(attach.args, ["state": "foreground", "handles": ["message", "messageWithReply", "messageData", "messageDataWithReply"]])
        connection.respond(to: attach, ["attached": true, "appState": "foreground", "activationState": "notActivated", "isReachable": false])
        connection.respond(to: try connection.expect("session.activate"), ["activationState": "activated"])
        let status = try connection.expect("status")
        beforeStatus(connection)
        connection.respond(to: status, Self.phoneStatus)
        connection.respond(
            to: try connection.expect("context.get"),
            ["applicationContext": ["mine": 1], "receivedApplicationContext": ["theirs": 2]])
        let after = recorder.wait(for: before + 1)
        XCTAssertEqual(after.count > before ? after[before].hasPrefix("activation 2") : false, true, "\(after)")
        return connection
    }

    func testActivationReportsAfterStatusThenWhatArrivedMeanwhile() throws {
        let delegate = RecordingDelegate()
        let connection = try activate(delegate, recorder: delegate.recorder) { connection in
            connection.event("userInfo.received", ["seq": 3, "userInfo": ["n": 7], "isCurrentComplicationInfo": false])
        }
        XCTAssertEqual(delegate.recorder.wait(for: 2), ["activation 2 paired true reachable true", "userInfo 7"])
        XCTAssertEqual(try connection.expect("app.acknowledge").args, ["seq": 3])
        let session = WCSession.default
        XCTAssertEqual(session.activationState, .activated)
        XCTAssertTrue(session.isWatchAppInstalled)
        XCTAssertEqual(session.remainingComplicationUserInfoTransfers, 50)
        XCTAssertEqual(session.applicationContext["mine"] as? Int, 1)
        XCTAssertEqual(session.receivedApplicationContext["theirs"] as? Int, 2)
        XCTAssertEqual(Set(delegate.queues.all), ["WatchConnectivity.WCSession.delegate"])
    }

    func testActivationWithoutADaemonNamesTheSocket() throws {
        let missing = server.directory + "/nothing/phone.ctl"
        WCSession.resetDefault(controlSocketPath: missing)
        let delegate = RecordingDelegate()
        WCSession.default.delegate = delegate
        WCSession.default.activate()
        let report = try XCTUnwrap(delegate.recorder.wait(for: 1).first)
        XCTAssertTrue(report.hasPrefix("activation 0 error 7001: Unknown WatchConnectivity error. | "), "the framework's text: \(report)")
        let explanation = String(report.drop(while: { $0 != "|" }).dropFirst(2))
        XCTAssertTrue(explanation.hasPrefix("WatchConnectivity cannot reach"), explanation)
        XCTAssertTrue(explanation.contains(missing) && explanation.contains("WATCHLINK_HOME"), explanation)
        XCTAssertEqual(WCSession.default.activationState, .notActivated)
    }

    func testMessagesReachTheDelegateAndRepliesGoBack() throws {
        let delegate = RecordingDelegate()
        let connection = try activate(delegate, recorder: delegate.recorder)
        connection.event("message.received", ["seq": 4, "kind": "message", "message": ["n": 1]])
        connection.event("message.received", ["seq": 5, "kind": "message", "message": ["n": 2], "replyId": 5])
        connection.event("message.received", ["seq": 6, "kind": "messageData", "data": ["$data": "AQID"], "replyId": 6])
        XCTAssertEqual(
            Array(delegate.recorder.wait(for: 4).dropFirst()),
            ["message 1", "message with reply 2", "data with reply [1, 2, 3]"])
        let reply = try connection.expect("message.reply")
        XCTAssertEqual(reply.args, ["replyId": 5, "reply": ["echo": 2, "when": ["$date": "1970-01-01T00:00:00.000Z"]]])
        XCTAssertEqual(try connection.expect("message.reply").args, ["replyId": 6, "replyData": ["$data": "AwIB"]])
    }

    func testAMessageForAMethodTheDelegateLacksIsDeclined() throws {
        let delegate = MinimalDelegate()
        let connection = try activate(delegate, recorder: delegate.recorder)
        connection.event("message.received", ["seq": 1, "kind": "message", "message": ["n": 1]])
        connection.event("message.received", ["seq": 2, "kind": "message", "message": ["n": 2], "replyId": 2])
        connection.event("message.received", ["seq": 3, "kind": "messageData", "data": ["$data": "AA=="], "replyId": 3])
        XCTAssertEqual(try connection.expect("message.decline").args, ["replyId": 2])
        XCTAssertEqual(try connection.expect("message.decline").args, ["replyId": 3])
    }

    func testSendMessageCallsTheReplyOrTheErrorHandlerOnTheSessionQueue() throws {
        let delegate = RecordingDelegate()
        let connection = try activate(delegate, recorder: delegate.recorder)
        let outcomes = Recorder()
        WCSession.default.sendMessage(
            ["ask": "status"],
            replyHandler: { reply in
                outcomes.record("reply \(reply["state"] as? String ?? "?") on \(currentQueueLabel())")
            }, errorHandler: { error in outcomes.record("error \(error)") })
        let send = try connection.expect("message.send")
        XCTAssertEqual(send.args, ["message": ["ask": "status"], "wantsReply": true])
        connection.respond(to: send, ["reply": ["state": "ready"]])
        XCTAssertEqual(outcomes.wait(for: 1), ["reply ready on WatchConnectivity.WCSession.delegate"])

        WCSession.default.sendMessage(["n": 1], replyHandler: nil) { error in
            guard let error = error as? WCError, error.code == .notReachable else { return outcomes.record("other \(error)") }
            outcomes.record("notReachable \((error as NSError).domain) \(error.localizedDescription) (\(error.explanation ?? "-"))")
        }
        let oneWay = try connection.expect("message.send")
        XCTAssertEqual(oneWay.args, ["message": ["n": 1]])
        connection.fail(oneWay, code: 7007, name: "notReachable", message: "the watch app is not in the foreground")
        XCTAssertEqual(
            outcomes.wait(for: 2).last,
            "notReachable WCErrorDomain WatchConnectivity session on paired device is not reachable. (the watch app is not in the foreground)")

        WCSession.default.sendMessageData(Data([9]), replyHandler: { outcomes.record("data \([UInt8]($0))") })
        let data = try connection.expect("message.sendData")
        XCTAssertEqual(data.args, ["data": ["$data": "CQ=="], "wantsReply": true])
        connection.respond(to: data, ["replyData": ["$data": "CAc="]])
        XCTAssertEqual(outcomes.wait(for: 3).last, "data [8, 7]")
    }

    func testValuesThatAreNotPropertyListsFailWithoutAskingTheDaemon() throws {
        let delegate = RecordingDelegate()
        let connection = try activate(delegate, recorder: delegate.recorder)
        let outcomes = Recorder()
        WCSession.default.sendMessage(["list": [1, NSObject()]], replyHandler: nil) { error in
            outcomes.record("\((error as? WCError)?.code.rawValue ?? 0) \((error as? WCError)?.explanation ?? error.localizedDescription)")
        }
        let text = try XCTUnwrap(outcomes.wait(for: 1).first)
        XCTAssertTrue(text.hasPrefix("7010") && text.contains("'list[1]'") && text.contains("NSObject"), text)
        XCTAssertThrowsError(try WCSession.default.updateApplicationContext(["when": Optional<Int>.none as Any])) { error in
            XCTAssertEqual((error as? WCError)?.code, .payloadUnsupportedTypes)
        }
        _ = WCSession.default.transferUserInfo(["n": 3, "bad": URL(fileURLWithPath: "/")])
        XCTAssertEqual(delegate.recorder.wait(for: 2).last, "userInfo finished 3 7010 false")
        WCSession.default.sendMessage(["ok": true], replyHandler: nil)
        XCTAssertEqual(try connection.expect("message.send").args, ["message": ["ok": true]], "nothing else was sent")
    }

    func testUserInfoTransfersLearnTheirIdAndFinish() throws {
        let delegate = RecordingDelegate()
        let connection = try activate(delegate, recorder: delegate.recorder)
        let first = WCSession.default.transferUserInfo(["n": 1])
        let second = WCSession.default.transferUserInfo(["n": 2])
        XCTAssertTrue(first.isTransferring)
        let firstRequest = try connection.expect("userInfo.transfer")
        XCTAssertEqual(firstRequest.args, ["userInfo": ["n": 1]])
        let secondRequest = try connection.expect("userInfo.transfer")
        connection.fail(secondRequest, code: 7005, name: "deviceNotPaired", message: "no watch is paired")
        connection.respond(to: firstRequest, ["transferId": "T1"])
        connection.event("userInfo.didFinish", ["transferId": "T1"])
        XCTAssertEqual(Array(delegate.recorder.wait(for: 3).dropFirst()), ["userInfo finished 2 7005 false", "userInfo finished 1 0 false"])
        XCTAssertEqual(delegate.finished.all.last, "\(ObjectIdentifier(first).hashValue)", "the returned object is the one finished")
        XCTAssertFalse(second.isTransferring)
    }

    func testCancelBeforeTheIdIsKnownCancelsOnceItIs() throws {
        let delegate = RecordingDelegate()
        let connection = try activate(delegate, recorder: delegate.recorder)
        let transfer = WCSession.default.transferCurrentComplicationUserInfo(["n": 1])
        transfer.cancel()
        let request = try connection.expect("complication.transfer")
        connection.respond(to: request, ["transferId": "C1", "remaining": 49])
        let cancel = try connection.expect("userInfo.cancel")
        XCTAssertEqual(cancel.args, ["transferId": "C1"])
        XCTAssertEqual(WCSession.default.remainingComplicationUserInfoTransfers, 49)
    }

    func testOutstandingTransfersComeFromTheDaemonKeepingIdentity() throws {
        let delegate = RecordingDelegate()
        let connection = try activate(delegate, recorder: delegate.recorder)
        let mine = WCSession.default.transferUserInfo(["n": 1])
        connection.respond(to: try connection.expect("userInfo.transfer"), ["transferId": "T1"])
        let listed = onThread { WCSession.default.outstandingUserInfoTransfers }
        connection.respond(
            to: try connection.expect("userInfo.outstanding"),
            [
                "transfers": [
                    ["transferId": "T0", "userInfo": ["n": 0], "isTransferring": true, "isCurrentComplicationInfo": false],
                    ["transferId": "T1", "userInfo": ["n": 1], "isTransferring": false, "isCurrentComplicationInfo": false],
                ]
            ])
        let transfers = try XCTUnwrap(listed.wait())
        XCTAssertEqual(transfers.map { $0.userInfo["n"] as? Int }, [0, 1])
        XCTAssertTrue(transfers[1] === mine)
        connection.event(
            "userInfo.didFinish", ["transferId": "T0", "error": ["domain": "WCErrorDomain", "code": 7017, "name": "transferTimedOut", "message": "gave up"]])
        XCTAssertEqual(delegate.recorder.wait(for: 2).last, "userInfo finished 0 7017 false")
    }

    func testFileTransfersReportProgressAndTheirEnd() throws {
        let delegate = RecordingDelegate()
        let connection = try activate(delegate, recorder: delegate.recorder)
        let path = server.directory + "/photo.jpg"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data(repeating: 1, count: 100)))
        let transfer = WCSession.default.transferFile(URL(fileURLWithPath: path), metadata: ["name": "photo"])
        XCTAssertEqual(transfer.progress.totalUnitCount, 100)
        XCTAssertEqual(transfer.file.metadata?["name"] as? String, "photo")
        let request = try connection.expect("file.transfer")
        XCTAssertEqual(request.args, ["path": .string(path), "metadata": ["name": "photo"]])
        connection.respond(to: request, ["transferId": "F1"])
        connection.event("file.progress", ["transferId": "F1", "completedBytes": 40, "totalBytes": 100])
        connection.event("file.didFinish", ["transferId": "F1"])
        XCTAssertEqual(delegate.recorder.wait(for: 2).last, "file finished 0 100/100")
        XCTAssertFalse(transfer.isTransferring)

        _ = WCSession.default.transferFile(URL(string: "https://example.com/x")!, metadata: nil)
        XCTAssertEqual(delegate.recorder.wait(for: 3).last, "file finished 7008 0/0")
    }

    func testReceivedFilesAndContextsAreAcknowledgedAfterTheDelegateReturns() throws {
        let delegate = RecordingDelegate()
        let connection = try activate(delegate, recorder: delegate.recorder)
        let path = server.directory + "/F9-notes.txt"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: Data("hi".utf8)))
        connection.event("file.received", ["seq": 10, "transferId": "F9", "path": .string(path), "metadata": ["name": "notes"], "totalBytes": 2])
        connection.event("context.received", ["seq": 11, "applicationContext": ["v": 5]])
        XCTAssertEqual(Array(delegate.recorder.wait(for: 3).dropFirst()), ["file F9-notes.txt notes exists true", "context 5 received 5"])
        XCTAssertEqual(try connection.expect("app.acknowledge").args, ["seq": 10])
        XCTAssertEqual(try connection.expect("app.acknowledge").args, ["seq": 11])
    }

    func testSessionEventsChangePropertiesBeforeTheDelegateHears() throws {
        let delegate = RecordingDelegate()
        let connection = try activate(delegate, recorder: delegate.recorder)
        connection.event("session.reachabilityDidChange", ["isReachable": false])
        connection.event("session.watchStateDidChange", ["isPaired": true, "isWatchAppInstalled": true, "isComplicationEnabled": false])
        connection.event("session.didBecomeInactive", ["activationState": "inactive"])
        connection.event("session.didDeactivate", ["activationState": "notActivated"])
        XCTAssertEqual(
            Array(delegate.recorder.wait(for: 5).dropFirst()),
            ["reachability false", "watchState true false", "inactive 1", "deactivated 0"])
        _ = try connection.expect("status")
    }

    func testUpdateApplicationContextWaitsForTheDaemonsAnswer() throws {
        let delegate = RecordingDelegate()
        let connection = try activate(delegate, recorder: delegate.recorder)
        let refused = onThread { () -> WCError.Code? in
            do {
                try WCSession.default.updateApplicationContext(["v": 1])
                return nil
            } catch WCError.sessionInactive {
                return .sessionInactive
            } catch {
                return .genericError
            }
        }
        connection.fail(try connection.expect("context.update"), code: 7016, name: "sessionInactive", message: "switching watches")
        XCTAssertEqual(refused.wait(), .sessionInactive)
        let accepted = onThread { () -> Bool in (try? WCSession.default.updateApplicationContext(["v": 2])) != nil }
        let update = try connection.expect("context.update")
        XCTAssertEqual(update.args, ["context": ["v": 2]])
        connection.respond(to: update)
        XCTAssertEqual(accepted.wait(), true)
        XCTAssertEqual(WCSession.default.applicationContext["v"] as? Int, 2)
    }

    func testLosingTheDaemonDeactivatesTheSession() throws {
        let delegate = RecordingDelegate()
        let connection = try activate(delegate, recorder: delegate.recorder)
        let transfer = WCSession.default.transferUserInfo(["n": 8])
        _ = try connection.expect("userInfo.transfer")
        connection.hangUp()
        let recorded = delegate.recorder.wait(for: 3)
        XCTAssertEqual(Set(recorded.dropFirst()), ["userInfo finished 8 7001 false", "reachability false"])
        XCTAssertFalse(transfer.isTransferring)
        XCTAssertEqual(WCSession.default.activationState, .notActivated)
        WCSession.default.sendMessage([:], replyHandler: nil) { error in
            delegate.recorder.record("after: \((error as? WCError)?.code.rawValue ?? 0)")
        }
        XCTAssertEqual(delegate.recorder.wait(for: 4).last, "after: 7004")
    }
}
