import Foundation
import LinkClient
import LinkControl
import LinkJSON
import LinkTrace
import XCTest

/// The ops the app-side PowerAuth libraries are built on (`pa.packet.*`, the SDK objects of a
/// process, pending activations) and the server's tokens, driven raw as the libraries drive
/// them; Tests/AppSideTests runs the libraries in real app processes.
final class PowerAuthAppOpsTests: DaemonTestCase {
    private let instance: JSONObject = ["instanceId": "main"]

    private func args(_ extra: JSONObject) -> JSONObject {
        var object = instance
        for key in extra.keys { object[key] = extra[key] }
        return object
    }

    private func data(_ object: JSONObject, _ key: String = "data") throws -> String {
        try XCTUnwrap(object[key]?.stringValue, "\(key) in \(object)")
    }

    private func text(_ base64: String) -> String {
        String(decoding: Data(base64Encoded: base64) ?? Data(), as: UTF8.self)
    }

    /// An attached app gets PowerAuth's packets as its own messages; it hands them to the
    /// daemon, which answers for the SDK objects the process registered, and drops (visibly)
    /// the one that came before its SDK object existed.
    func testAnAttachedAppReceivesThePacketsAndHandsThemOver() throws {
        let (phone, _, p, w) = try startActivatedPair()
        _ = try w.call("pa.instance.add", instance)
        let app = try client(phone)
        _ = try app.call("app.attach", ["handles": ["messageData", "messageDataWithReply"]])
        let events = try subscribed(phone)

        let update = AsyncResult<JSONObject>()
        let request = args(["mode": "completion"])
        DispatchQueue.global().async { update.set(Result { try w.call("pa.status.update", request, timeoutSeconds: 20) }) }
        let received = try app.waitForEvent("message.received", timeoutSeconds: 10)
        let packet = try XCTUnwrap(received.data["data"]?["$data"]?.stringValue, "the packet reaches the app as message data")
        XCTAssertEqual(text(packet), #"PAwc1{"target":"session:main","activationCmd":"get_session"}"#)

        // No SDK object yet: the SDK answers error 15, and the drop shows.
        let refused = try app.call("pa.packet.process", ["data": .string(packet), "wantsReply": true])
        XCTAssertEqual(refused["processed"], true)
        XCTAssertEqual(
            text(try data(refused, "reply")),
            #"PAwc1{"target":"*","errorCode":15,"errorDomain":"PowerAuthErrorDomain","errorMsg":"PA2WCSessionManager: Unable to handle request for target 'session:main'."}"#
        )
        let dropped = try events.waitForEvent("pa.messageDropped", timeoutSeconds: 10)
        XCTAssertEqual(dropped.data["reason"], "instanceNotRegistered")
        XCTAssertEqual(dropped.data["target"], "session:main")
        let fault = try traceEntries(p).last { $0.kind == .fault }
        XCTAssertEqual(fault?.string("name"), "pa.messageDropped")
        XCTAssertEqual(fault?.string("reason"), "instanceNotRegistered")
        _ = try app.call("message.reply", ["replyId": try XCTUnwrap(received.data["replyId"]), "replyData": ["$data": .string(try data(refused, "reply"))]])
        do {
            _ = try update.wait(timeout: 10)
            XCTFail("the watch's request was lost")
        } catch let error as ControlError {
            XCTAssertEqual(error.code, 15)
            XCTAssertEqual(error.message, "PA2WCSessionManager: Unable to handle request for target 'session:main'.")
        }

        // The process's SDK object, then an activation: the same request is answered.
        XCTAssertEqual(try app.call("pa.instance.add", args(["whileConnected": true]))["added"], true)
        let activationId = try XCTUnwrap(app.call("pa.activation.create", instance)["activationId"]?.stringValue)
        let second = AsyncResult<JSONObject>()
        DispatchQueue.global().async { second.set(Result { try w.call("pa.status.update", request, timeoutSeconds: 20) }) }
        let again = try app.waitForEvent("message.received", timeoutSeconds: 10)
        let answered = try app.call("pa.packet.process", ["data": try XCTUnwrap(again.data["data"]?["$data"]), "wantsReply": true])
        XCTAssertEqual(text(try data(answered, "reply")), #"PAwc1{"target":"*","activationCmd":"put_session","activationId":"\#(activationId)"}"#)
        _ = try app.call("message.reply", ["replyId": try XCTUnwrap(again.data["replyId"]), "replyData": ["$data": .string(try data(answered, "reply"))]])
        XCTAssertEqual(try second.wait(timeout: 10)["activationIdentifier"], .string(activationId))

        // Without a reply handler the SDK answers lazily: the app is told what to send.
        let lazy = try app.call("pa.packet.process", ["data": .string(packet)])
        XCTAssertNil(lazy["reply"])
        XCTAssertEqual(text(try data(lazy, "send")), #"PAwc1{"target":"session:main","activationCmd":"put_session","activationId":"\#(activationId)"}"#)
        XCTAssertEqual(
            try app.call("pa.packet.process", ["data": .string(Data("hello, not a packet".utf8).base64EncodedString())]),
            ["processed": false])

        // A second SDK object's registration, released (its deinit): the first one's stays.
        let other = try client(phone)
        XCTAssertEqual(try other.call("pa.instance.add", args(["whileConnected": true]))["added"], false)
        XCTAssertEqual(try other.call("pa.instance.remove", args(["whileConnected": true]))["removed"], true)
        XCTAssertEqual(try other.call("pa.instance.remove", args(["whileConnected": true]))["removed"], false)
        XCTAssertEqual(try p.call("pa.instance.list")["instances"], ["main"])

        app.close()
        eventually("the process's SDK object to go with its connection") {
            try p.call("pa.instance.list")["instances"] == []
        }
        XCTAssertEqual(try p.call("pa.instance.add", instance)["added"], true, "a script registers it again")
        XCTAssertEqual(
            try p.call("pa.activation.get", instance)["activationIdentifier"], .string(activationId),
            "the activation is the device's, not the process's")
    }

    /// The packets an app sends and the answers it gets back, without the link: the phone
    /// writes them, the watch reads them against its state.
    func testPacketsMadeOnOneSideAreProcessedOnTheOther() throws {
        let (_, _, p, w) = try startActivatedPair()
        _ = try p.call("pa.instance.add", instance)
        _ = try w.call("pa.instance.add", instance)
        let activationId = try XCTUnwrap(p.call("pa.activation.create", args(["commit": true]))["activationId"]?.stringValue)
        _ = try p.call("pa.token.create", args(["name": "MyToken"]))

        let status = try data(try p.call("pa.packet.make", args(["command": "put_session"])))
        let statusAnswer = try w.call("pa.packet.process", ["data": .string(status), "wantsReply": true])
        XCTAssertEqual(text(try data(statusAnswer, "reply")), #"PAwc1{"target":"*","successCode":1}"#)
        XCTAssertEqual(try w.call("pa.activation.get", instance)["activationIdentifier"], .string(activationId))
        XCTAssertEqual(
            try p.call("pa.packet.response", args(["command": "put_session", "data": .string(try data(statusAnswer, "reply"))])),
            ["delivered": true])

        let token = try data(try p.call("pa.packet.make", args(["command": "put_token", "name": "MyToken"])))
        _ = try w.call("pa.packet.process", ["data": .string(token)])
        XCTAssertEqual(try w.call("pa.token.local", args(["name": "MyToken"]))["activationId"], .string(activationId))

        // The watch asks for a token the phone has, and one it has not.
        let request = try data(try w.call("pa.packet.make", args(["command": "get_token", "name": "Other"])))
        XCTAssertEqual(text(request), #"PAwc1{"target":"token:main","tokenCmd":"get_token","tokenName":"Other"}"#)
        let notFound = try p.call("pa.packet.process", ["data": .string(request), "wantsReply": true])
        assertControlError("PowerAuthErrorDomain", 14) {
            try w.call("pa.packet.response", self.args(["command": "get_token", "name": "Other", "data": .string(try self.data(notFound, "reply"))]))
        }
        _ = try p.call("pa.token.create", args(["name": "Other"]))
        let found = try p.call("pa.packet.process", ["data": .string(request), "wantsReply": true])
        let stored = try w.call("pa.packet.response", args(["command": "get_token", "name": "Other", "data": .string(try data(found, "reply"))]))
        XCTAssertEqual(stored["source"], "phone")
        XCTAssertNotNil(try w.call("pa.token.header", args(["name": "Other"]))["value"])

        // What the SDK says of answers that are not what the request expects.
        let notAPacket = Data("not a packet at all".utf8).base64EncodedString()
        for (command, bytes, message) in [
            ("get_session", notAPacket, "PA2WCSessionManager: Received response is in unknown data format."),
            ("get_session", Data(#"PAwc1{"target":12345678}"#.utf8).base64EncodedString(), "PA2WCSessionManager: Cannot process received response."),
            (
                "get_session", Data(#"PAwc1{"target":"*","successCode":1}"#.utf8).base64EncodedString(),
                "PA2WCSessionManager: Invalid payload. PA2WCSessionPacket_ActivationStatus class is expected."
            ),
            (
                "get_session", Data(#"PAwc1{"target":"*","activationCmd":"get_session"}"#.utf8).base64EncodedString(),
                "PowerAuthWatchSDK: Wrong status object received from iPhone."
            ),
        ] {
            do {
                _ = try w.call("pa.packet.response", args(["command": .string(command), "data": .string(bytes)]))
                XCTFail("\(text(bytes)) is refused")
            } catch let error as ControlError {
                XCTAssertEqual(error.code, 15, text(bytes))
                XCTAssertEqual(error.message, message)
            }
        }
        assertControlError("control", 3) { try w.call("pa.packet.make", self.args(["command": "put_session"])) }
        assertControlError("control", 3) { try p.call("pa.packet.make", self.args(["command": "get_status"])) }
        assertControlError("control", 3) { try p.call("pa.packet.process", ["data": "not base64!"]) }
        assertControlError("PowerAuthErrorDomain", 14) { try p.call("pa.packet.make", self.args(["command": "put_token", "name": "nope"])) }
    }

    /// `createActivation` and `persistActivation`: a request to the server, a pending
    /// activation the SDK object holds, lost with its process.
    func testAPendingActivationIsPersistedOrLostWithItsProcess() throws {
        let (phone, _) = try startPair()
        let p = try client(phone)
        let app = try client(phone)
        _ = try app.call("pa.instance.add", args(["whileConnected": true]))
        let created = try app.call("pa.activation.create", args(["pending": true]))
        XCTAssertEqual(created["pending"], true)
        XCTAssertEqual(created["activationFingerprint"]?.stringValue?.count, 8)
        let pendingId = try XCTUnwrap(created["activationId"]?.stringValue)
        XCTAssertEqual(
            try app.call("pa.activation.get", instance),
            [
                "hasValidActivation": false, "activationIdentifier": .null, "hasPendingActivation": true,
                "activationFingerprint": .null,
            ])
        assertControlError("PowerAuthErrorDomain", 3) { try app.call("pa.activation.create", self.args(["pending": true])) }
        assertControlError("PowerAuthErrorDomain", 7) { try app.call("pa.status.fetch", self.instance) }
        XCTAssertEqual(try p.call("pa.server.get", ["activationId": .string(pendingId)])["state"], "pendingCommit")

        // Its process ends before it persisted: the server keeps a record nobody can use.
        app.close()
        _ = try p.call("pa.instance.add", instance)
        eventually("the pending activation to go with its process") {
            try p.call("pa.activation.get", self.instance)["hasPendingActivation"] == false
        }
        assertControlError("PowerAuthErrorDomain", 3) { try p.call("pa.activation.persist", self.instance) }

        let next = try client(phone)
        let id = try XCTUnwrap(next.call("pa.activation.create", args(["pending": true, "commit": true]))["activationId"]?.stringValue)
        XCTAssertEqual(try next.call("pa.activation.persist", instance)["activationId"], .string(id))
        XCTAssertEqual(try p.call("pa.activation.get", instance)["activationIdentifier"], .string(id))
        XCTAssertEqual(try p.call("pa.status.fetch", instance)["state"], "active")

        // The request goes over the emulated network.
        _ = try p.call("pa.activation.removeLocal", instance)
        _ = try p.call("pa.network.set", ["up": false])
        assertControlError("PowerAuthErrorDomain", 1) { try p.call("pa.activation.create", self.args(["pending": true])) }
    }

    /// Tokens are the server's: a signed request creates one, `validateToken` checks its
    /// headers as the real server does, `removeAccessToken` removes it there.
    func testTheServerKnowsTheTokensAndValidatesTheirHeaders() throws {
        let (_, _, p, w) = try startActivatedPair()
        _ = try p.call("pa.instance.add", instance)
        _ = try w.call("pa.instance.add", instance)
        let activationId = try XCTUnwrap(p.call("pa.activation.create", args(["commit": true]))["activationId"]?.stringValue)
        let created = try p.call("pa.token.create", args(["name": "MyToken", "signatureType": "possession_knowledge"]))
        let tokenId = try XCTUnwrap(created["tokenIdentifier"]?.stringValue)
        XCTAssertEqual(tokenId, tokenId.lowercased(), "the server's ids are lowercase UUIDs")
        XCTAssertEqual(try p.call("pa.server.get", ["activationId": .string(activationId)])["tokens"]?[0]?["tokenId"], .string(tokenId))
        XCTAssertEqual(try p.call("pa.token.create", args(["name": "MyToken", "signatureType": "possession_knowledge"]))["created"], false)
        assertControlError("PowerAuthErrorDomain", 13) {
            try p.call("pa.token.create", self.args(["name": "MyToken", "signatureType": "possession"]))
        }

        let header = try XCTUnwrap(p.call("pa.token.header", args(["name": "MyToken"]))["value"]?.stringValue)
        let valid = try p.call("pa.server.validateToken", ["header": .string(header)])
        XCTAssertEqual(
            valid,
            [
                "tokenValid": true, "activationId": .string(activationId), "activationStatus": "ACTIVE",
                "signatureType": "POSSESSION_KNOWLEDGE",
            ])
        assertControlError("PowerAuthServer", 24) { try p.call("pa.server.validateToken", ["header": .string(header)]) }

        // A header made on the watch from the token the phone sent.
        _ = try p.call("pa.status.sendToWatch", args(["mode": "completion"]))
        _ = try p.call("pa.token.sendToWatch", args(["name": "MyToken", "mode": "completion"]))
        let watchHeader = try XCTUnwrap(w.call("pa.token.header", args(["name": "MyToken"]))["value"]?.stringValue)
        XCTAssertEqual(try p.call("pa.server.validateToken", ["header": .string(watchHeader)])["tokenValid"], true)

        // A wrong digest is not valid; a broken header names the field.
        let fresh = try XCTUnwrap(p.call("pa.token.header", args(["name": "MyToken"]))["value"]?.stringValue)
        let digest = try XCTUnwrap(fresh.range(of: #"token_digest=""#)).upperBound
        var tampered = fresh
        tampered.replaceSubrange(digest...digest, with: fresh[digest] == "A" ? "B" : "A")
        XCTAssertEqual(try p.call("pa.server.validateToken", ["header": .string(tampered)])["tokenValid"], false)
        for (broken, field) in [
            ("PowerAuth version=\"3.3\"", "POWER_AUTH_TOKEN_ID_EMPTY"),
            (header.replacingOccurrences(of: "version=\"3.3\"", with: "version=\"4.0\""), "POWER_AUTH_TOKEN_VERSION_INVALID"),
            (header.replacingOccurrences(of: "PowerAuth ", with: "Bearer "), "POWER_AUTH_TOKEN_ID_EMPTY"),
        ] {
            do {
                _ = try p.call("pa.server.validateToken", ["header": .string(broken)])
                XCTFail("\(broken) is refused")
            } catch let error as ControlError {
                XCTAssertEqual(error.code, 3)
                XCTAssertTrue(error.message.contains(field), error.message)
            }
        }
        let unknown = header.replacingOccurrences(of: tokenId, with: "0b6a8f8e-1d2c-4e5f-9a0b-1c2d3e4f5a6b")
        XCTAssertEqual(try p.call("pa.server.validateToken", ["header": .string(unknown)]), ["tokenValid": false])

        // A clock the server does not share: the timestamp is outside its window.
        _ = try p.call("pa.server.clock", ["offsetMs": 10_800_000])
        let old = try XCTUnwrap(w.call("pa.token.header", args(["name": "MyToken"]))["value"]?.stringValue)
        assertControlError("PowerAuthServer", 30) { try p.call("pa.server.validateToken", ["header": .string(old)]) }
        _ = try p.call("pa.server.clock", ["offsetMs": -3_600_000])
        let future = try XCTUnwrap(w.call("pa.token.header", args(["name": "MyToken"]))["value"]?.stringValue)
        assertControlError("PowerAuthServer", 44) { try p.call("pa.server.validateToken", ["header": .string(future)]) }
        _ = try p.call("pa.server.clock", ["offsetMs": 0])

        // A blocked activation's tokens are not valid; removal from the server ends them.
        _ = try p.call("pa.server.activation", ["activationId": .string(activationId), "action": "block"])
        let blocked = try XCTUnwrap(p.call("pa.token.header", args(["name": "MyToken"]))["value"]?.stringValue)
        XCTAssertEqual(try p.call("pa.server.validateToken", ["header": .string(blocked)])["tokenValid"], false)
        assertControlError("PowerAuthErrorDomain", 1) { try p.call("pa.token.remove", self.args(["name": "MyToken", "server": true])) }
        XCTAssertEqual(try p.call("pa.token.local", instance)["tokens"]?.arrayValue?.count, 1, "a failed removal keeps the local token")
        _ = try p.call("pa.server.activation", ["activationId": .string(activationId), "action": "unblock"])
        XCTAssertEqual(try p.call("pa.token.remove", args(["name": "MyToken", "server": true])), ["removed": true, "removedOnServer": true])
        XCTAssertEqual(try p.call("pa.server.get", ["activationId": .string(activationId)])["tokens"], [])
        let gone = try XCTUnwrap(w.call("pa.token.header", args(["name": "MyToken"]))["value"]?.stringValue)
        XCTAssertEqual(try p.call("pa.server.validateToken", ["header": .string(gone)]), ["tokenValid": false])
        assertControlError("PowerAuthErrorDomain", 14) { try w.call("pa.token.remove", self.args(["name": "MyToken", "server": true])) }
    }
}
