import Foundation
import LinkClient
import LinkControl
import LinkCrypto
import LinkJSON
import WireProtocol
import XCTest

/// PowerAuth watch synchronisation between the two daemons, spawned for real.
final class PowerAuthIntegrationTests: DaemonTestCase {
    private let instance: JSONObject = ["instanceId": "main"]

    private func args(_ extra: JSONObject) -> JSONObject {
        var object = instance
        for key in extra.keys { object[key] = extra[key] }
        return object
    }

    /// Both sessions activated, instance `main` on both sides with a phone activation.
    private func preparedPair() throws -> (phone: DaemonProcess, watch: DaemonProcess, p: ControlClient, w: ControlClient, activationId: String) {
        let pair = try startActivatedPair()
        _ = try pair.p.call("pa.instance.add", instance)
        _ = try pair.w.call("pa.instance.add", instance)
        let activationId = try XCTUnwrap(pair.p.call("pa.activation.create", args(["commit": true]))["activationId"]?.stringValue)
        return (pair.phone, pair.watch, pair.p, pair.w, activationId)
    }

    private func watchActivation(_ w: ControlClient) throws -> JSONValue? {
        try w.call("pa.activation.get", instance)["activationIdentifier"]
    }

    private func watchTokens(_ w: ControlClient) throws -> [JSONValue] {
        try w.call("pa.token.local", instance)["tokens"]?.arrayValue ?? []
    }

    private func makeUnreachable(_ p: ControlClient, _ w: ControlClient) throws {
        _ = try w.call("app.setState", ["state": "background"])
        eventually("the phone to lose reachability") { try p.call("status")["isReachable"] == false }
    }

    func testLazyStatusAndTokenTravelAsUserInfoWhileUnreachable() throws {
        let (_, watch, p, w, activationId) = try preparedPair()
        let watchEvents = try subscribed(watch)
        try makeUnreachable(p, w)

        XCTAssertEqual(try p.call("pa.status.sendToWatch", args(["mode": "lazy"]))["issued"], true)
        _ = try watchEvents.waitForEvent("system.userInfoReceived", timeoutSeconds: 5)
        eventually("the watch to know the activation") { try self.watchActivation(w) == .string(activationId) }
        XCTAssertEqual(try w.call("pa.activation.get", instance)["hasValidActivation"], true)

        let token = try p.call("pa.token.create", args(["name": "possession"]))
        XCTAssertEqual(try p.call("pa.token.sendToWatch", args(["name": "possession", "mode": "lazy"]))["issued"], true)
        _ = try watchEvents.waitForEvent("system.userInfoReceived", timeoutSeconds: 5)
        eventually("the token on the watch") { try self.watchTokens(w).count == 1 }
        XCTAssertEqual(try w.call("pa.token.local", args(["name": "possession"]))["tokenIdentifier"], token["tokenIdentifier"])
        eventually("the phone's outbox to empty") { try p.call("userInfo.outstanding")["transfers"]?.arrayValue?.isEmpty == true }

        XCTAssertEqual(try w.call("received.list")["items"]?.arrayValue?.count, 0, "packets never reach the app")
    }

    func testLazyStatusAndTokenTravelAsMessagesWhileReachable() throws {
        let (_, watch, p, w, activationId) = try preparedPair()
        let watchEvents = try subscribed(watch)

        XCTAssertEqual(try p.call("pa.status.sendToWatch", args(["mode": "lazy"]))["issued"], true)
        let event = try watchEvents.waitForEvent("system.messageReceived", timeoutSeconds: 5)
        XCTAssertEqual(event.data["kind"], "messageData")
        eventually("the watch to know the activation") { try self.watchActivation(w) == .string(activationId) }

        _ = try p.call("pa.token.create", args(["name": "possession"]))
        XCTAssertEqual(try p.call("pa.token.sendToWatch", args(["name": "possession", "mode": "lazy"]))["issued"], true)
        _ = try watchEvents.waitForEvent("system.messageReceived", timeoutSeconds: 5)
        eventually("the token on the watch") { try self.watchTokens(w).count == 1 }
        XCTAssertEqual(try p.call("userInfo.outstanding")["transfers"]?.arrayValue?.count, 0, "nothing went as userInfo")

        // The app's own data still reaches the app; a packet does not.
        _ = try p.call("message.sendData", ["data": ["$data": .string(Data("PAwc1 hello".utf8).base64EncodedString())]])
        let items = try w.call("received.list")["items"]?.arrayValue ?? []
        XCTAssertEqual(items.count, 1, "short data with the magic is not a packet: \(items)")
    }

    func testLazyIsNotIssuedWithoutAUsableSession() throws {
        let (phone, _) = try startPair()
        let p = try client(phone)
        _ = try p.call("pa.instance.add", instance)
        _ = try p.call("pa.activation.create", instance)
        XCTAssertEqual(try p.call("pa.status.sendToWatch", args(["mode": "lazy"]))["issued"], false, "not activated")
        _ = try p.call("session.activate")
        _ = try p.call("device.set", ["isWatchAppInstalled": false])
        XCTAssertEqual(try p.call("pa.status.sendToWatch", args(["mode": "lazy"]))["issued"], false, "watch app not installed")
        _ = try p.call("device.set", ["isWatchAppInstalled": true])
        XCTAssertEqual(try p.call("pa.status.sendToWatch", args(["mode": "lazy"]))["issued"], true)
    }

    func testCompletionModeNeedsReachability() throws {
        let (_, _, p, w, activationId) = try preparedPair()
        XCTAssertEqual(try p.call("pa.status.sendToWatch", args(["mode": "completion"]))["delivered"], true)
        XCTAssertEqual(try watchActivation(w), .string(activationId), "delivered means stored")

        _ = try p.call("pa.token.create", args(["name": "possession"]))
        try makeUnreachable(p, w)
        assertControlError("PowerAuthErrorDomain", 15) { try p.call("pa.status.sendToWatch", self.args(["mode": "completion"])) }
        assertControlError("PowerAuthErrorDomain", 15) {
            try p.call("pa.token.sendToWatch", self.args(["name": "possession", "mode": "completion"]))
        }
        XCTAssertEqual(try watchTokens(w).count, 0)
        _ = try w.call("app.setState", ["state": "foreground"])
        eventually("reachable again") { try p.call("status")["isReachable"] == true }
        XCTAssertEqual(try p.call("pa.token.sendToWatch", args(["name": "possession", "mode": "completion"]))["delivered"], true)
        XCTAssertEqual(try watchTokens(w).count, 1)
    }

    func testWatchRequestsATokenAndMakesHeaders() throws {
        let (phone, _, p, w, activationId) = try preparedPair()
        assertControlError("PowerAuthErrorDomain", 6) { try w.call("pa.token.request", self.args(["name": "possession"])) }
        let status = try w.call("pa.status.update", args(["mode": "completion"]))
        XCTAssertEqual(status["activationIdentifier"], .string(activationId))
        XCTAssertEqual(status["hasValidActivation"], true)

        assertControlError("PowerAuthErrorDomain", 14) { try w.call("pa.token.request", self.args(["name": "possession"])) }
        let created = try p.call("pa.token.create", args(["name": "possession"]))

        // Concurrent requests for one name share one message (the phone answers 300 ms late).
        // Both requests go in one write, so watchd has both before any answer can come back,
        // however late the test's threads run.
        let phoneEvents = try subscribed(phone)
        _ = try p.call("link.set", ["latencyMs": 300])
        let answers = try Self.pipelined(
            w.socketPath,
            [
                ("pa.token.request", args(["name": "possession"])),
                ("pa.token.request", args(["name": "possession"])),
            ])
        for answer in answers {
            XCTAssertEqual(answer["tokenIdentifier"], created["tokenIdentifier"])
            XCTAssertEqual(answer["source"], "phone")
            XCTAssertNil(answer["tokenSecret"], "the watch never hands out the secret")
        }
        // Both answers are in, so the phone has handled every request; its next event marks the end.
        _ = try p.call("app.setState", ["state": "background"])
        var requests = 0
        while true {
            let event = try phoneEvents.nextEvent(timeoutSeconds: 10)
            guard let event else { return XCTFail("app.stateDidChange never came") }
            if event.name == "app.stateDidChange" { break }
            if event.name == "system.messageReceived" { requests += 1 }
        }
        _ = try p.call("app.setState", ["state": "foreground"])
        XCTAssertEqual(requests, 1, "one get_token message for both callers")
        _ = try p.call("link.set", ["latencyMs": 0])
        XCTAssertEqual(try w.call("pa.token.request", args(["name": "possession"]))["source"], "local")
        XCTAssertEqual(try p.call("received.list")["items"]?.arrayValue?.count, 0, "packets never reach the phone app")

        let secret = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(created["tokenSecret"]?.stringValue)))
        // The digest as the server's TokenUtils checks it: the version is appended for 3.2 and 3.3.
        for version in ["3.0", "3.1", "3.2", "3.3", nil] {
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            var request = args(["name": "possession"])
            if let version { request["version"] = .string(version) }
            let header = try w.call("pa.token.header", request)
            let after = Int64(Date().timeIntervalSince1970 * 1000)
            XCTAssertEqual(header["key"], "X-PowerAuth-Token")
            let value = try XCTUnwrap(header["value"]?.stringValue)
            let expected = version ?? "3.3"
            XCTAssertTrue(value.hasPrefix("PowerAuth version=\"\(expected)\", token_id=\""), "the SDK's order: \(value)")
            let fields = try Self.headerFields(value)
            XCTAssertEqual(Array(fields.keys).sorted(), ["nonce", "timestamp", "token_digest", "token_id", "version"])
            XCTAssertEqual(fields["token_id"], created["tokenIdentifier"]?.stringValue)
            XCTAssertEqual(fields["version"], expected)
            let nonce = try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(fields["nonce"])))
            XCTAssertEqual(nonce.count, 16)
            let timestamp = try XCTUnwrap(fields["timestamp"])
            let milliseconds = try XCTUnwrap(Int64(timestamp))
            XCTAssertTrue((before...after).contains(milliseconds), "the watch's clock, no adjustment received: \(milliseconds) in \(before)...\(after)")
            var message = Array(nonce) + Array("&\(timestamp)".utf8)
            if expected == "3.2" || expected == "3.3" { message += Array("&\(expected)".utf8) }
            XCTAssertEqual(fields["token_digest"], Data(HMACSHA256.authenticationCode(key: Array(secret), message: message)).base64EncodedString())
        }

        for path in [home + "/phone/powerauth.db", home + "/watch/powerauth.db"] {
            let mode = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)
            XCTAssertEqual(mode.intValue & 0o777, 0o600, path)
        }
        let secretText = try XCTUnwrap(created["tokenSecret"]?.stringValue)
        for daemon in [w, p] {
            let log = try XCTUnwrap(daemons.first { $0.controlPath.hasSuffix(daemon === w ? "watch.ctl" : "phone.ctl") }).log
            XCTAssertFalse(log.contains(secretText), "a token secret is in a log")
        }
    }

    /// The token blob carries the factors it was created with (`af`), and the watch makes
    /// headers only from tokens of its current activation.
    func testTokenFactorsAndTheWatchsCurrentActivation() throws {
        let (_, _, p, w, activationId) = try preparedPair()
        _ = try p.call("pa.status.sendToWatch", args(["mode": "completion"]))
        let created = try p.call("pa.token.create", args(["name": "pk", "signatureType": "possession_knowledge"]))
        XCTAssertEqual(created["authenticationFactors"], 0x11, "SF_Possession | SF_Knowledge")
        _ = try p.call("pa.token.sendToWatch", args(["name": "pk", "mode": "completion"]))
        let local = try w.call("pa.token.local", args(["name": "pk"]))
        XCTAssertEqual(local["authenticationFactors"], 0x11)
        XCTAssertEqual(local["activationId"], .string(activationId))
        XCTAssertNotNil(try w.call("pa.token.header", args(["name": "pk"]))["value"])

        // The phone moves to another activation while the watch cannot hear of it, then hands
        // over a token of the new one: the watch still knows the old activation.
        _ = try p.call("device.set", ["isWatchAppInstalled": false])
        XCTAssertEqual(try p.call("pa.activation.removeLocal", args(["notifyWatch": true]))["watchNotified"], false)
        let newActivation = try XCTUnwrap(p.call("pa.activation.create", args(["commit": true]))["activationId"]?.stringValue)
        _ = try p.call("pa.token.create", args(["name": "next"]))
        _ = try p.call("device.set", ["isWatchAppInstalled": true])
        eventually("reachable again") { try p.call("status")["isReachable"] == true }
        _ = try p.call("pa.token.sendToWatch", args(["name": "next", "mode": "completion"]))
        XCTAssertEqual(try w.call("pa.token.local", args(["name": "next"]))["activationId"], .string(newActivation))
        XCTAssertEqual(try watchActivation(w), .string(activationId))
        assertControlError("PowerAuthErrorDomain", 6) { try w.call("pa.token.header", self.args(["name": "next"])) }
    }

    /// The watch's service publishes what it stores and removes, in the order it happened;
    /// the watch app removes its local tokens with pa.token.remove and pa.token.removeAll.
    func testWatchEventsAndLocalTokenRemoval() throws {
        let (_, watch, p, w, _) = try preparedPair()
        let events = try subscribed(watch)
        _ = try p.call("pa.status.sendToWatch", args(["mode": "completion"]))
        for name in ["a", "b", "c"] {
            let created = try p.call("pa.token.create", args(["name": .string(name)]))
            _ = try p.call("pa.token.sendToWatch", args(["name": .string(name), "mode": "completion"]))
            let received = try events.waitForEvent("pa.tokenReceived", timeoutSeconds: 10)
            XCTAssertEqual(received.data, ["instanceId": "main", "name": .string(name), "tokenIdentifier": created["tokenIdentifier"]!])
        }
        XCTAssertEqual(try w.call("pa.token.remove", args(["name": "a"])), ["removed": true])
        XCTAssertEqual(try events.waitForEvent("pa.tokenRemoved", timeoutSeconds: 10).data, ["instanceId": "main", "name": "a"])
        XCTAssertEqual(try w.call("pa.token.remove", args(["name": "a"])), ["removed": false], "already gone")
        XCTAssertEqual(try w.call("pa.token.removeAll", instance), ["removed": 2])
        XCTAssertEqual(try watchTokens(w).count, 0)

        _ = try p.call("pa.token.sendToWatch", args(["name": "b", "mode": "completion"]))
        _ = try events.waitForEvent("pa.tokenReceived", timeoutSeconds: 10)
        // As the SDK, removing the activation says nothing to the watch: the app sends the status next.
        _ = try p.call("pa.activation.removeLocal", instance)
        XCTAssertEqual(try p.call("pa.status.sendToWatch", args(["mode": "lazy"]))["issued"], true)
        let changed = try events.waitForEvent("pa.activationDidChange", timeoutSeconds: 10)
        XCTAssertEqual(changed.data, ["instanceId": "main", "activationIdentifier": .null, "tokensRemoved": 1])
        XCTAssertEqual(try watchActivation(w), .null)

        _ = try p.call("pa.activation.create", args(["commit": true]))
        _ = try p.call("pa.server.clock", ["offsetMs": 30_000])
        let synced = try p.call("pa.time.sync", instance)
        _ = try p.call("pa.time.sendToWatch", args(["mode": "completion"]))
        let adjustment = try events.waitForEvent("pa.timeAdjustmentReceived", timeoutSeconds: 10)
        XCTAssertEqual(adjustment.data, ["instanceId": "main", "adjustmentMs": synced["adjustmentMs"]!])
    }

    func testTokenRemovalFromWatch() throws {
        let (_, _, p, w, _) = try preparedPair()
        _ = try p.call("pa.status.sendToWatch", args(["mode": "completion"]))
        for name in ["a", "b"] {
            _ = try p.call("pa.token.create", args(["name": .string(name)]))
            _ = try p.call("pa.token.sendToWatch", args(["name": .string(name), "mode": "completion"]))
        }
        XCTAssertEqual(try watchTokens(w).count, 2)
        XCTAssertEqual(try p.call("pa.token.removeFromWatch", args(["name": "a", "mode": "completion"]))["delivered"], true)
        XCTAssertEqual(try watchTokens(w).map { $0["name"] }, ["b"])
        try makeUnreachable(p, w)
        XCTAssertEqual(try p.call("pa.token.removeFromWatch", args(["name": "b", "mode": "lazy"]))["issued"], true)
        eventually("b removed by userInfo") { try self.watchTokens(w).isEmpty }
        assertControlError("PowerAuthErrorDomain", 14) { try w.call("pa.token.header", self.args(["name": "b"])) }
    }

    func testActivationRemovalWipesTheWatchTokens() throws {
        let (_, _, p, w, _) = try preparedPair()
        _ = try p.call("pa.status.sendToWatch", args(["mode": "completion"]))
        for name in ["a", "b", "c"] {
            _ = try p.call("pa.token.create", args(["name": .string(name)]))
            _ = try p.call("pa.token.sendToWatch", args(["name": .string(name), "mode": "completion"]))
        }
        XCTAssertEqual(try watchTokens(w).count, 3)
        XCTAssertEqual(try p.call("pa.activation.removeLocal", instance)["removed"], true)
        XCTAssertEqual(try p.call("pa.token.list", instance)["tokens"]?.arrayValue?.count, 0)
        XCTAssertEqual(try p.call("pa.status.sendToWatch", args(["mode": "lazy"]))["issued"], true)
        eventually("the watch to forget the activation") { try self.watchActivation(w) == .null }
        XCTAssertEqual(try watchTokens(w).count, 0)
        assertControlError("PowerAuthErrorDomain", 14) { try w.call("pa.token.header", self.args(["name": "a"])) }

        // A new activation on the phone: another id also wipes what the watch had.
        _ = try p.call("pa.activation.create", args(["commit": true]))
        _ = try p.call("pa.status.sendToWatch", args(["mode": "completion"]))
        _ = try p.call("pa.token.create", args(["name": "a"]))
        _ = try p.call("pa.token.sendToWatch", args(["name": "a", "mode": "completion"]))
        _ = try p.call("pa.activation.removeLocal", instance)
        _ = try p.call("pa.activation.create", args(["commit": true]))
        _ = try p.call("pa.status.sendToWatch", args(["mode": "completion"]))
        XCTAssertEqual(try watchTokens(w).count, 0)
    }

    /// The watch asks for the status while the phone app is not yet running; the phone
    /// activates its session and the queued request arrives at once.
    private func startupSequence(registerBeforeActivation: Bool) throws -> (p: ControlClient, w: ControlClient, events: ControlClient, activationId: String) {
        let (phone, watch) = try startPair()
        let p = try client(phone)
        let w = try client(watch)
        let events = try subscribed(phone)
        _ = try w.call("session.activate")
        _ = try w.call("pa.instance.add", instance)
        XCTAssertEqual(try w.call("pa.status.update", args(["mode": "lazy"]))["issued"], true)
        eventually("the request queued on the watch") { try w.call("userInfo.outstanding")["transfers"]?.arrayValue?.count == 1 }

        var activationId = ""
        if registerBeforeActivation {
            _ = try p.call("pa.instance.add", instance)
            activationId = try XCTUnwrap(p.call("pa.activation.create", instance)["activationId"]?.stringValue)
        }
        _ = try p.call("session.activate")
        _ = try events.waitForEvent("session.activationDidComplete", timeoutSeconds: 5)
        if !registerBeforeActivation {
            _ = try p.call("pa.instance.add", instance)
            activationId = try XCTUnwrap(p.call("pa.activation.create", instance)["activationId"]?.stringValue)
        }
        eventually("the request delivered") { try w.call("userInfo.outstanding")["transfers"]?.arrayValue?.isEmpty == true }
        return (p, w, events, activationId)
    }

    func testStartupOrderInstancesAfterActivationLosesTheRequest() throws {
        let (p, w, events, _) = try startupSequence(registerBeforeActivation: false)
        let dropped = try events.waitForEvent("pa.messageDropped", timeoutSeconds: 5)
        XCTAssertEqual(dropped.data["target"], "session:main")
        XCTAssertEqual(dropped.data["reason"], "instanceNotRegistered")
        XCTAssertEqual(try p.call("status")[path: "powerAuth", "messageDropped"], 1)
        XCTAssertEqual(try w.call("pa.activation.get", instance)["hasValidActivation"], false, "the answer never came")
    }

    func testStartupOrderInstancesBeforeActivationIsAnswered() throws {
        let (p, w, events, activationId) = try startupSequence(registerBeforeActivation: true)
        eventually("the lazy answer on the watch") { try self.watchActivation(w) == .string(activationId) }
        XCTAssertEqual(try p.call("status")[path: "powerAuth", "messageDropped"], 0)
        // The phone answered the request, so a drop would have been published before this
        // event: it marks the end of what the phone did with the watch's packets.
        _ = try p.call("app.setState", ["state": "background"])
        while true {
            let event = try XCTUnwrap(try events.nextEvent(timeoutSeconds: 10), "app.stateDidChange never came")
            if event.name == "app.stateDidChange" {
                XCTAssertEqual(event.data["appState"], "background")
                break
            }
            XCTAssertNotEqual(event.name, "pa.messageDropped", "\(event.data)")
        }
    }

    func testRequestForAnUnregisteredInstanceGetsAnErrorPacket() throws {
        let (phone, _, p, w, _) = try preparedPair()
        let events = try subscribed(phone)
        _ = try w.call("pa.instance.add", ["instanceId": "other"])
        assertControlError("PowerAuthErrorDomain", 15) { try w.call("pa.status.update", ["instanceId": "other", "mode": "completion"]) }
        let dropped = try events.waitForEvent("pa.messageDropped", timeoutSeconds: 5)
        XCTAssertEqual(dropped.data["target"], "session:other")
        XCTAssertEqual(try p.call("status")[path: "powerAuth", "messageDropped"], 1)
        // An instance removed on the phone no longer answers the watch's token requests.
        _ = try w.call("pa.status.update", args(["mode": "completion"]))
        _ = try p.call("pa.instance.remove", instance)
        assertControlError("PowerAuthErrorDomain", 15) { try w.call("pa.token.request", self.args(["name": "x"])) }
        let second = try events.waitForEvent("pa.messageDropped", timeoutSeconds: 5)
        XCTAssertEqual(second.data["target"], "token:main")
        XCTAssertEqual(try p.call("status")[path: "powerAuth", "messageDropped"], 2)
    }

    func testArgumentsAreChecked() throws {
        let (_, _, p, w, _) = try preparedPair()
        assertControlError("control", 3) { try p.call("pa.status.sendToWatch", self.args(["mode": "eager"])) }
        assertControlError("control", 3) { try p.call("pa.activation.create", ["instanceId": "unknown"]) }
        assertControlError("control", 3) { try p.call("pa.instance.add", [:]) }
        assertControlError("control", 3) { try w.call("pa.token.header", self.args(["name": "a", "version": "2.0"])) }
        assertControlError("PowerAuthErrorDomain", 3) { try p.call("pa.activation.create", self.instance) }
        assertControlError("PowerAuthErrorDomain", 14) { try p.call("pa.token.sendToWatch", self.args(["name": "none"])) }
        XCTAssertEqual(try p.call("pa.instance.list")["instances"], ["main"])
    }

    // MARK: - Helpers

    /// Sends `requests` to the control socket at `path` in one write and returns their results
    /// in the order sent (each must succeed).
    private static func pipelined(_ path: String, _ requests: [(op: String, args: JSONObject)]) throws -> [JSONObject] {
        let fd = try UnixSocket.connectBlocking(path: path)
        defer { close(fd) }
        var bytes: [UInt8] = []
        for (index, request) in requests.enumerated() {
            bytes += ControlCodec.request(ControlRequest(id: .int(Int64(index)), op: request.op, args: request.args))
        }
        try UnixSocket.writeAll(fd, bytes)
        var reader = LineReader(fd: fd)
        var results: [Int: JSONObject] = [:]
        while results.count < requests.count {
            let line = try XCTUnwrap(reader.nextLine(), "\(results.count) of \(requests.count) answers before EOF or 5 s")
            let answer = try JSON.parse(line)
            guard case .int(let id)? = answer["id"], answer["ok"] == true, case .object(let result)? = answer["result"] else {
                throw ControlClientError.invalidResponse("not a success: \(answer)")
            }
            results[Int(id)] = result
        }
        return (0..<requests.count).map { results[$0] ?? [:] }
    }

    /// `PowerAuth a="1", b="2"` → `["a": "1", "b": "2"]`.
    private static func headerFields(_ value: String) throws -> [String: String] {
        XCTAssertTrue(value.hasPrefix("PowerAuth "))
        var fields: [String: String] = [:]
        for part in value.dropFirst("PowerAuth ".count).components(separatedBy: ", ") {
            let pieces = part.split(separator: "=", maxSplits: 1).map(String.init)
            XCTAssertEqual(pieces.count, 2, part)
            fields[pieces[0]] = pieces[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return fields
    }
}
