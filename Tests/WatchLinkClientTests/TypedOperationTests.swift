import Foundation
import LinkJSON
import TestSupport
@testable import WatchLinkClient
import XCTest

/// The typed methods send the documented op and arguments and read the documented results.
final class TypedOperationTests: XCTestCase {
    private var server: FakeControlServer!
    private var client: WatchLinkClient!
    private var connection: FakeConnection!

    override func setUpWithError() throws {
        server = try FakeControlServer()
        let path = server.socketPath
        guard case .success(let connected)? = start({ try await WatchLinkClient.connect(socketPath: path) }).wait() else {
            throw FakeControlServer.Failure(description: "cannot connect")
        }
        client = connected
        connection = try server.accept()
    }

    override func tearDown() {
        client.close()
        server.stop()
    }

    /// Starts `body`, answers its one request with `result` after checking op and args, and
    /// returns what `body` returned.
    private func exchange<T: Sendable>(
        _ op: String, args expected: JSONObject, answer result: JSONObject,
        _ body: @escaping @Sendable (WatchLinkClient) async throws -> T,
        file: StaticString = #filePath, line: UInt = #line
    ) throws -> T? {
        let client = self.client!
        let pending = start { try await body(client) }
        let request = try connection.expect(op)
        XCTAssertEqual(request.args, expected, file: file, line: line)
        connection.respond(to: request, result)
        return try pending.wait(file: file, line: line)?.get()
    }

    func testStatusReadsTheCommonFields() throws {
        let raw: JSONObject = [
            "role": "phone", "version": "1", "activationState": "activated", "isReachable": false,
            "unreachableReason": "the link is down", "appState": "background", "hasContentPending": true,
            "isPaired": true, "isWatchAppInstalled": true, "isComplicationEnabled": false,
            "outstandingUserInfoTransfers": 3, "outstandingFileTransfers": 1, "remainingComplicationUserInfoTransfers": 50,
        ]
        let status = try XCTUnwrap(try exchange("status", args: [:], answer: raw) { try await $0.status() })
        XCTAssertEqual(status.role, .phone)
        XCTAssertEqual(status.activationState, .activated)
        XCTAssertFalse(status.isReachable)
        XCTAssertEqual(status.unreachableReason, "the link is down")
        XCTAssertEqual(status.appState, .background)
        XCTAssertTrue(status.hasContentPending)
        XCTAssertEqual(status.isPaired, true)
        XCTAssertEqual(status.isComplicationEnabled, false)
        XCTAssertNil(status.isCompanionAppInstalled)
        XCTAssertEqual(status.outstandingUserInfoTransfers, 3)
        XCTAssertEqual(status.outstandingFileTransfers, 1)
        XCTAssertEqual(status.remainingComplicationUserInfoTransfers, 50)
        XCTAssertEqual(status.raw, raw)

        let client = self.client!
        let broken = start { try await client.status() }
        connection.respond(to: try connection.expect("status"), ["role": "tablet"])
        guard case .failure(let error)? = broken.wait(), case .invalidResponse(let text)? = error as? WatchLinkError else {
            return XCTFail("an unknown role must be an invalid response")
        }
        XCTAssertTrue(text.contains("tablet"), text)
    }

    func testSessionOps() throws {
        let attachment = try exchange(
            "app.attach", args: ["state": "foreground", "handles": ["message", "messageWithReply"]],
            answer: ["attached": true, "appState": "foreground", "activationState": "notActivated", "isReachable": false]
        ) {
            try await $0.attachApp(state: .foreground, handles: [.message, .messageWithReply])
        }
        XCTAssertEqual(attachment?.activationState, .notActivated)
        XCTAssertEqual(try exchange("session.activate", args: [:], answer: ["activationState": "activated"]) { try await $0.activate() }, .activated)
        XCTAssertEqual(
            try exchange("app.setState", args: ["state": "notRunning"], answer: ["appState": "notRunning"]) {
                try await $0.setAppState(.notRunning)
            }, .notRunning)
        XCTAssertEqual(
            try exchange(
                "device.set", args: ["isComplicationEnabled": true, "isPaired": false],
                answer: ["isPaired": false, "isWatchAppInstalled": true, "isComplicationEnabled": true]
            ) {
                try await $0.setDevice([.isPaired: false, .isComplicationEnabled: true])
            }, [.isPaired: false, .isWatchAppInstalled: true, .isComplicationEnabled: true])
        XCTAssertEqual(
            try exchange("link.set", args: ["up": false, "latencyMs": 20], answer: ["up": false, "latencyMs": 20, "connected": false]) {
                try await $0.setLink(up: false, latencyMs: 20)
            }, WatchLinkLinkState(up: false, latencyMs: 20, connected: false))
        _ = try exchange("app.acknowledge", args: ["seq": 9], answer: [:]) { try await $0.acknowledge(seq: 9) }
    }

    func testMessageOps() throws {
        XCTAssertEqual(
            try exchange(
                "message.send", args: ["message": ["hello": "watch"], "wantsReply": true, "timeoutMs": 500],
                answer: ["reply": ["ok": true]]
            ) {
                try await $0.sendMessage(["hello": "watch"], wantsReply: true, timeoutMs: 500)
            }, ["ok": true])
        XCTAssertEqual(
            try exchange("message.send", args: ["message": ["a": 1]], answer: [:]) {
                try await $0.sendMessage(["a": 1])
            }, .some(nil))
        XCTAssertEqual(
            try exchange(
                "message.sendData", args: ["data": ["$data": "AQID"], "wantsReply": true],
                answer: ["replyData": ["$data": "BAU="]]
            ) {
                try await $0.sendMessageData(Data([1, 2, 3]), wantsReply: true)
            }, Data([4, 5]))
        _ = try exchange("message.reply", args: ["replyId": 4, "reply": ["x": 1]], answer: [:]) { try await $0.reply(replyId: 4, reply: ["x": 1]) }
        _ = try exchange("message.reply", args: ["replyId": 5, "replyData": ["$data": "/w=="]], answer: [:]) {
            try await $0.reply(replyId: 5, replyData: [0xFF])
        }
        _ = try exchange("message.decline", args: ["replyId": 6], answer: [:]) { try await $0.declineMessage(replyId: 6) }
        _ = try exchange("replies.set", args: ["mode": "manual", "delayMs": 10], answer: ["mode": "manual"]) {
            try await $0.setReplies(mode: .manual, delayMs: 10)
        }
    }

    func testTransferOps() throws {
        XCTAssertEqual(
            try exchange("userInfo.transfer", args: ["userInfo": ["k": "v"]], answer: ["transferId": "T1"]) {
                try await $0.transferUserInfo(["k": "v"])
            }, "T1")
        let complication = try exchange("complication.transfer", args: ["userInfo": ["c": 1]], answer: ["transferId": "T2", "remaining": 49]) {
            let answer = try await $0.transferComplicationUserInfo(["c": 1])
            return "\(answer.transferId) \(answer.remaining)"
        }
        XCTAssertEqual(complication, "T2 49")
        XCTAssertEqual(
            try exchange("userInfo.cancel", args: ["transferId": "T1"], answer: ["cancelled": true]) {
                try await $0.cancelUserInfo(transferId: "T1")
            }, true)
        let outstanding = try exchange(
            "userInfo.outstanding", args: [:],
            answer: [
                "transfers": [
                    ["transferId": "T2", "userInfo": ["c": 1], "isTransferring": true, "isCurrentComplicationInfo": true]
                ]
            ]
        ) { try await $0.outstandingUserInfo() }
        XCTAssertEqual(outstanding, [WatchLinkOutstandingUserInfo(transferId: "T2", userInfo: ["c": 1], isTransferring: true, isCurrentComplicationInfo: true)])
        _ = try exchange("context.update", args: ["context": ["v": 2]], answer: [:]) { try await $0.updateApplicationContext(["v": 2]) }
        let contexts = try exchange("context.get", args: [:], answer: ["applicationContext": ["v": 2], "receivedApplicationContext": [:]]) {
            let answer = try await $0.applicationContext()
            return [answer.applicationContext, answer.receivedApplicationContext]
        }
        XCTAssertEqual(contexts, [["v": 2], [:]])
        XCTAssertEqual(
            try exchange("file.transfer", args: ["path": "/tmp/a.bin", "metadata": ["name": "a"]], answer: ["transferId": "F1"]) {
                try await $0.transferFile(path: "/tmp/a.bin", metadata: ["name": "a"])
            }, "F1")
        let files = try exchange(
            "file.outstanding", args: [:],
            answer: [
                "transfers": [
                    ["transferId": "F1", "path": "/o/F1", "metadata": [:], "totalBytes": 10, "completedBytes": 4, "isTransferring": true]
                ]
            ]
        ) { try await $0.outstandingFiles() }
        XCTAssertEqual(
            files, [WatchLinkOutstandingFile(transferId: "F1", path: "/o/F1", metadata: [:], totalBytes: 10, completedBytes: 4, isTransferring: true)])
        XCTAssertEqual(
            try exchange("file.cancel", args: ["transferId": "F1"], answer: ["cancelled": false]) {
                try await $0.cancelFile(transferId: "F1")
            }, false)
    }
}
