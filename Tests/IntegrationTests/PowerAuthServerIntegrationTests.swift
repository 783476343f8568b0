import Foundation
import LinkClient
import LinkControl
import LinkJSON
import PowerAuthServer
import XCTest

/// The activation status through the emulated server inside phoned, over its emulated network.
final class PowerAuthServerIntegrationTests: DaemonTestCase {
    private let instance: JSONObject = ["instanceId": "main"]

    private func args(_ extra: JSONObject) -> JSONObject {
        var object = instance
        for key in extra.keys { object[key] = extra[key] }
        return object
    }

    private func server(_ p: ControlClient, _ id: String, _ action: String, _ extra: JSONObject = [:]) throws -> JSONObject {
        var object: JSONObject = ["activationId": .string(id), "action": .string(action)]
        for key in extra.keys { object[key] = extra[key] }
        return try p.call("pa.server.activation", object)
    }

    private func fetch(_ p: ControlClient) throws -> JSONObject { try p.call("pa.status.fetch", instance) }

    private func assertStatus(
        _ status: JSONObject, _ state: String, fail: Int64, max: Int64 = 5, remaining: Int64,
        upgrade: Bool = false, custom: JSONValue? = nil, blocked: Bool = false,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertEqual(status["state"], .string(state), "\(status)", file: file, line: line)
        XCTAssertEqual(status["failCount"], .int(fail), "\(status)", file: file, line: line)
        XCTAssertEqual(status["maxFailCount"], .int(max), "\(status)", file: file, line: line)
        XCTAssertEqual(status["remainingAttempts"], .int(remaining), "\(status)", file: file, line: line)
        XCTAssertEqual(status["isProtocolUpgradeAvailable"], .bool(upgrade), "\(status)", file: file, line: line)
        XCTAssertEqual(status["customObject"], custom, "\(status)", file: file, line: line)
        XCTAssertEqual(status["blockExpirationTime"] != nil, blocked, "\(status)", file: file, line: line)
    }

    private func phoneOnly() throws -> ControlClient {
        let phone = try daemon("phoned").startAndWait()
        let p = try client(phone)
        _ = try p.call("pa.instance.add", instance)
        return p
    }

    func testStateWalkWithEveryField() throws {
        let (_, _, p, w) = try startActivatedPair()
        _ = try p.call("pa.instance.add", instance)
        _ = try w.call("pa.instance.add", instance)
        let created = try p.call("pa.activation.create", instance)
        XCTAssertEqual(created["state"], "pendingCommit")
        let id = try XCTUnwrap(created["activationId"]?.stringValue)
        XCTAssertEqual(try p.call("pa.status.sendToWatch", args(["mode": "completion"]))["delivered"], true)
        assertControlError("PowerAuthErrorDomain", 1) {  // a token needs a signature the server accepts: an active activation's
            try p.call("pa.token.create", self.args(["name": "possession"]))
        }

        assertStatus(try fetch(p), "pendingCommit", fail: 0, remaining: 0)
        _ = try server(p, id, "commit")
        assertStatus(try fetch(p), "active", fail: 0, remaining: 5)
        _ = try p.call("pa.token.create", args(["name": "possession"]))
        _ = try p.call("pa.token.sendToWatch", args(["name": "possession", "mode": "completion"]))

        _ = try p.call("pa.server.set", ["activationId": .string(id), "customObject": ["tier": "gold"], "currentVersion": 2, "upgradeVersion": 3])
        assertStatus(try fetch(p), "active", fail: 0, remaining: 5, upgrade: true, custom: .object(["tier": "gold"]))
        _ = try p.call("pa.server.set", ["activationId": .string(id), "customObject": .null, "currentVersion": 3])

        for fail in 1...4 {
            _ = try server(p, id, "failAttempt")
            assertStatus(try fetch(p), "active", fail: Int64(fail), remaining: Int64(5 - fail))
        }
        _ = try server(p, id, "succeedAttempt")
        assertStatus(try fetch(p), "active", fail: 0, remaining: 5)
        for _ in 1...5 { _ = try server(p, id, "failAttempt") }
        assertStatus(try fetch(p), "blocked", fail: 5, remaining: 0)

        _ = try server(p, id, "unblock")
        assertStatus(try fetch(p), "active", fail: 0, remaining: 5)

        let beforeBlock = Int64(Date().timeIntervalSince1970 * 1000)
        _ = try server(p, id, "temporaryBlock", ["durationMs": 800])
        let afterBlock = Int64(Date().timeIntervalSince1970 * 1000)
        let blocked = try fetch(p)
        assertStatus(blocked, "blocked", fail: 0, remaining: 0, blocked: true)
        let expiration = try XCTUnwrap(blocked["blockExpirationTime"]?.intValue)
        XCTAssertTrue((beforeBlock + 800...afterBlock + 800).contains(expiration), "expires 0.8 s after the block: \(expiration - beforeBlock)")
        eventually("the temporary block to expire by itself") { try self.fetch(p)["state"] == "active" }
        assertStatus(try fetch(p), "active", fail: 0, remaining: 5)

        _ = try server(p, id, "remove")
        let removed = try fetch(p)
        assertStatus(removed, "removed", fail: 0, remaining: 0)
        assertControlError("PowerAuthErrorDomain", 3) { try self.server(p, id, "unblock") }

        // The app reacts as the SDK's documentation says: removeActivationLocal, and the watch learns it.
        let removal = try p.call("pa.activation.removeLocal", args(["notifyWatch": true]))
        XCTAssertEqual(removal["removed"], true)
        XCTAssertEqual(removal["watchNotified"], true)
        eventually("the watch to drop the activation") { try w.call("pa.activation.get", self.instance)["activationIdentifier"] == .null }
        XCTAssertEqual(try w.call("pa.activation.get", instance)["hasValidActivation"], false)
        XCTAssertEqual(try w.call("pa.token.local", instance)["tokens"]?.arrayValue?.count, 0)
        assertControlError("PowerAuthErrorDomain", 6) { try self.fetch(p) }
    }

    func testOfflineCodesDeadlockAndAutomaticSynchronisation() throws {
        let p = try phoneOnly()
        _ = try p.call("pa.activation.create", args(["commit": true]))
        for _ in 1...11 { XCTAssertEqual(try p.call("pa.sign", args(["online": false]))["valid"], nil) }
        let synced = try fetch(p)
        XCTAssertEqual(synced["state"], "active")
        XCTAssertEqual(synced["counterSynchronization"], "synchronized")
        XCTAssertEqual(synced["counterState"], "calculateSignature")
        let again = try fetch(p)
        XCTAssertEqual(again["state"], "active")
        XCTAssertEqual(again["counterSynchronization"], "inSync", "the server caught up")
        XCTAssertEqual(again["counterState"], "ok")
        XCTAssertEqual(try p.call("pa.sign", args(["online": true]))["valid"], true)

        for _ in 1...21 { _ = try p.call("pa.sign", args(["online": false])) }
        let deadlocked = try fetch(p)
        XCTAssertEqual(deadlocked["state"], "deadlock")
        XCTAssertEqual(deadlocked["counterState"], "invalid")
        XCTAssertEqual(deadlocked["remainingAttempts"], 0)
        XCTAssertEqual(try fetch(p)["state"], "deadlock", "it stays a deadlock")
        XCTAssertEqual(try p.call("pa.sign", args(["online": true]))["valid"], false, "no signature can be validated any more")
    }

    /// A new instance with a committed activation, `offline` signatures ahead of the server.
    private func instance(_ p: ControlClient, _ name: String, offline: Int) throws -> (JSONObject, String) {
        let other: JSONObject = ["instanceId": .string(name)]
        _ = try p.call("pa.instance.add", other)
        var create = other
        create["commit"] = true
        let id = try XCTUnwrap(p.call("pa.activation.create", create)["activationId"]?.stringValue)
        var sign = other
        sign["online"] = false
        for _ in 0..<offline { _ = try p.call("pa.sign", sign) }
        return (other, id)
    }

    /// Look-ahead 20: the SDK tolerates up to 20 signatures ahead by its counter byte, but the
    /// server's window holds 20 values (ctr … ctr+19), so only up to 19 can be caught up.
    func testClientAheadAtTheLookAheadBoundaries() throws {
        let p = try phoneOnly()
        let (nineteen, _) = try instance(p, "nineteen", offline: 19)
        let caughtUp = try p.call("pa.status.fetch", nineteen)
        XCTAssertEqual(caughtUp["counterSynchronization"], "synchronized")
        XCTAssertEqual(try p.call("pa.status.fetch", nineteen)["counterSynchronization"], "inSync")

        let (twenty, twentyId) = try instance(p, "twenty", offline: 20)
        // The synchronising signature falls past the server's window: HTTP 401, a network error.
        assertControlError("PowerAuthErrorDomain", 1) { try p.call("pa.status.fetch", twenty) }
        XCTAssertEqual(
            try p.call("pa.server.get", ["activationId": .string(twentyId)])["failCount"], 0,
            "a possession-only signature adds no failed attempt")
        XCTAssertEqual(try p.call("pa.status.fetch", twenty)["state"], "deadlock", "now 21 ahead")

        let (twentyOne, _) = try instance(p, "twentyOne", offline: 21)
        XCTAssertEqual(try p.call("pa.status.fetch", twentyOne)["state"], "deadlock")
    }

    func testServerAheadAtTheLookAheadBoundaries() throws {
        let p = try phoneOnly()
        let id = try XCTUnwrap(p.call("pa.activation.create", args(["commit": true]))["activationId"]?.stringValue)
        _ = try server(p, id, "advanceCounter", ["count": 7])
        let status = try fetch(p)
        XCTAssertEqual(status["state"], "active")
        XCTAssertEqual(status["counterSynchronization"], "fastForwarded")
        XCTAssertEqual(status["counterState"], "updated")
        XCTAssertEqual(try fetch(p)["counterSynchronization"], "inSync")
        let online = try p.call("pa.sign", args(["online": true]))
        XCTAssertEqual(online["valid"], true)
        XCTAssertEqual(online["skipped"], 0)

        _ = try server(p, id, "advanceCounter", ["count": 19])
        XCTAssertEqual(try fetch(p)["counterSynchronization"], "fastForwarded", "LA − 1 ahead: within the SDK's search")
        _ = try server(p, id, "advanceCounter", ["count": 20])
        XCTAssertEqual(try fetch(p)["state"], "deadlock", "LA ahead: past the SDK's search")
    }

    func testOnlySignaturesWithKnowledgeCountFailedAttempts() throws {
        let p = try phoneOnly()
        let (deadlocked, id) = try instance(p, "deadlocked", offline: 25)
        var possession = deadlocked
        possession["online"] = true
        XCTAssertEqual(try p.call("pa.sign", possession)["valid"], false)
        XCTAssertEqual(try p.call("pa.server.get", ["activationId": .string(id)])["failCount"], 0, "possession only: not counted")
        var knowledge = possession
        knowledge["signatureType"] = "possession_knowledge"
        XCTAssertEqual(try p.call("pa.sign", knowledge)["valid"], false)
        XCTAssertEqual(try p.call("pa.server.get", ["activationId": .string(id)])["failCount"], 1)
        knowledge["signatureType"] = "possession_biometry"
        XCTAssertEqual(try p.call("pa.sign", knowledge)["valid"], false)
        XCTAssertEqual(try p.call("pa.server.get", ["activationId": .string(id)])["failCount"], 2)

        let (fresh, freshId) = try instance(p, "fresh", offline: 0)
        _ = try server(p, freshId, "failAttempt")
        var valid = fresh
        valid["online"] = true
        XCTAssertEqual(try p.call("pa.sign", valid)["valid"], true)
        XCTAssertEqual(try p.call("pa.server.get", ["activationId": .string(freshId)])["failCount"], 1, "a valid possession signature resets nothing")
        valid["signatureType"] = "possession_knowledge"
        let signed = try p.call("pa.sign", valid)
        XCTAssertEqual(signed["valid"], true)
        XCTAssertEqual(signed["signatureType"], "possession_knowledge")
        XCTAssertEqual(try p.call("pa.server.get", ["activationId": .string(freshId)])["failCount"], 0, "a valid knowledge signature resets it")
    }

    func testRemovedWhenPlacedDeadlockWhenNot() throws {
        let p = try phoneOnly()
        let (placed, placedId) = try instance(p, "placed", offline: 0)
        _ = try server(p, placedId, "remove")
        XCTAssertEqual(try p.call("pa.status.fetch", placed)["state"], "removed")
        let (lost, lostId) = try instance(p, "lost", offline: 21)
        _ = try server(p, lostId, "remove")
        XCTAssertEqual(try p.call("pa.status.fetch", lost)["state"], "deadlock", "Session.cpp: an unplaceable counter wins over removed")
    }

    /// The raw request and response decrypt, with the keys `pa.server.secrets` reveals, to
    /// exactly what `pa.status.fetch` reported.
    func testRawStatusDecryptsWithTheServersSecrets() throws {
        let phone = try daemon("phoned", ["--log-level", "debug"]).startAndWait()
        let p = try client(phone)
        _ = try p.call("pa.instance.add", instance)
        let (raw, id) = try instance(p, "raw", offline: 3)
        _ = try server(p, id, "failAttempt")
        _ = try p.call("pa.server.set", ["activationId": .string(id), "maxFailCount": 7, "lookAhead": 33])
        var request = raw
        request["raw"] = true
        let status = try p.call("pa.status.fetch", request)
        let secrets = try p.call("pa.server.secrets", ["activationId": .string(id)])
        XCTAssertEqual(
            Set(secrets.keys),
            ["masterSecretKey", "transportKey", "signaturePossessionKey", "signatureKnowledgeKey", "signatureBiometryKey", "vaultEncryptionKey"])
        func bytes(_ value: JSONValue?) throws -> [UInt8] { Array(try XCTUnwrap(Data(base64Encoded: try XCTUnwrap(value?.stringValue)))) }
        let transportKey = try bytes(secrets["transportKey"])
        let blob = try StatusBlobCipher.decrypt(
            try bytes(status["encryptedStatusBlob"]), transportKey: transportKey,
            challenge: try bytes(status["challenge"]), nonce: try bytes(status["nonce"]))
        XCTAssertEqual(.string(blob.state.name), status["state"])
        XCTAssertEqual(.int(Int64(blob.failCount)), status["failCount"])
        XCTAssertEqual(.int(Int64(blob.maxFailCount)), status["maxFailCount"])
        XCTAssertEqual(blob.failCount, 1)
        XCTAssertEqual(blob.maxFailCount, 7)
        XCTAssertEqual(blob.lookAhead, 33)
        XCTAssertEqual(blob.counterByte, 0, "the server has seen none of the three offline signatures")
        XCTAssertEqual(status["counterSynchronization"], "clientAhead")
        let server = try p.call("pa.server.get", ["activationId": .string(id)])
        let serverCounterData = try bytes(server["ctrData"])
        XCTAssertEqual(
            CounterSynchronization.hashDistance(
                from: serverCounterData, to: blob.counterDataHash,
                transportKey: transportKey, maximumIterations: 1
            ).distance, 0,
            "the blob's CTR_DATA hash is the server's counter data under the revealed transport key")
        XCTAssertNil(try p.call("pa.status.fetch", raw)["encryptedStatusBlob"], "only with raw")
        for key in secrets.values {
            XCTAssertFalse(phone.log.contains(try XCTUnwrap(key.stringValue)), "a key is in phoned's log")
        }
    }

    func testNetworkDownChangesNothing() throws {
        let p = try phoneOnly()
        let id = try XCTUnwrap(p.call("pa.activation.create", args(["commit": true]))["activationId"]?.stringValue)
        let before = try p.call("pa.server.get", ["activationId": .string(id)])
        _ = try p.call("pa.network.set", ["up": false])
        assertControlError("PowerAuthErrorDomain", 1) { try self.fetch(p) }
        assertControlError("PowerAuthErrorDomain", 1) { try p.call("pa.time.sync", self.instance) }
        XCTAssertEqual(try p.call("pa.time.current", instance)["isTimeSynchronized"], false)
        XCTAssertEqual(try p.call("pa.server.get", ["activationId": .string(id)]), before)
        _ = try p.call("pa.network.set", ["up": true, "failRate": 1])
        assertControlError("PowerAuthErrorDomain", 1) { try self.fetch(p) }
        _ = try p.call("pa.network.set", ["failRate": 0, "latencyMs": 100])
        XCTAssertEqual(try fetch(p)["state"], "active")
        XCTAssertEqual(try fetch(p)["counterSynchronization"], "inSync")
    }

    func testTamperedBlobIsRejected() throws {
        let p = try phoneOnly()
        _ = try p.call("pa.activation.create", args(["commit": true]))
        _ = try p.call("pa.network.set", ["tamper": true])
        assertControlError("PowerAuthErrorDomain", 5) { try self.fetch(p) }
        _ = try p.call("pa.network.set", ["tamper": false])
        XCTAssertEqual(try fetch(p)["counterSynchronization"], "inSync", "nothing changed")
    }

    func testTimeFollowsTheServerClock() throws {
        let p = try phoneOnly()
        _ = try p.call("pa.activation.create", args(["commit": true]))
        let token = try p.call("pa.token.create", args(["name": "possession"]))
        XCTAssertNotNil(token["tokenIdentifier"])
        _ = try p.call("pa.server.clock", ["offsetMs": 90_000])
        _ = try p.call("pa.network.set", ["latencyMs": 200])
        let sync = try p.call("pa.time.sync", instance)
        XCTAssertEqual(sync["outcome"], "adjusted")
        // The server stamps its time somewhere inside the round trip; the SDK assumes half-way.
        let roundTrip = try XCTUnwrap(sync["roundTripMs"]?.intValue)
        let adjustment = try XCTUnwrap(sync["adjustmentMs"]?.intValue)
        XCTAssertLessThanOrEqual(abs(adjustment - 90_000), roundTrip / 2 + 1)
        let current = try p.call("pa.time.current", instance)
        XCTAssertEqual(current["isTimeSynchronized"], true)
        XCTAssertEqual(current["adjustmentMs"], .int(adjustment))
        XCTAssertEqual(current["precisionMs"], .int(roundTrip / 2), "half the round trip of the sample that synchronised")

        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let header = try XCTUnwrap(p.call("pa.token.header", args(["name": "possession"]))["value"]?.stringValue)
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        XCTAssertTrue(header.hasPrefix("PowerAuth version=\"3.3\", token_id="), header)
        let stamp = try XCTUnwrap(header.components(separatedBy: "timestamp=\"").last?.prefix { $0 != "\"" })
        let headerTime = try XCTUnwrap(Int64(stamp))
        XCTAssertTrue((before + adjustment...after + adjustment).contains(headerTime), "the header follows synchronised time")

        // Synchronised: a status fetch takes no sample, and a close sample keeps the adjustment.
        _ = try fetch(p)
        XCTAssertEqual(try p.call("pa.time.current", instance)["adjustmentMs"], .int(adjustment))
        XCTAssertEqual(try p.call("pa.time.sync", instance)["outcome"], "kept")

        // resetTimeSynchronization: the next sample adjusts again.
        let reset = try p.call("pa.time.reset", instance)
        XCTAssertEqual(reset["isTimeSynchronized"], false)
        XCTAssertEqual(reset["adjustmentMs"], 0)
        XCTAssertEqual(try p.call("pa.time.sync", instance)["outcome"], "adjusted")
    }

    /// The SDK resets its time synchronisation when the app enters the foreground; the next
    /// status fetch synchronises again.
    func testEnteringTheForegroundResetsTimeSynchronisation() throws {
        let phone = try daemon("phoned").startAndWait()
        let p = try client(phone)
        let events = try subscribed(phone)
        _ = try p.call("pa.instance.add", instance)
        _ = try p.call("pa.activation.create", args(["commit": true]))
        _ = try p.call("pa.server.clock", ["offsetMs": 60_000])
        _ = try fetch(p)
        XCTAssertEqual(try p.call("pa.time.current", instance)["isTimeSynchronized"], true, "the first fetch synchronises")
        _ = try p.call("app.setState", ["state": "background"])
        XCTAssertEqual(try p.call("pa.time.current", instance)["isTimeSynchronized"], true, "the background keeps it")
        _ = try p.call("app.setState", ["state": "foreground"])
        var states: [JSONValue] = []
        while states.count < 2 {
            let event = try events.waitForEvent("app.stateDidChange", timeoutSeconds: 10)
            states.append(try XCTUnwrap(event.data["appState"]))
        }
        XCTAssertEqual(states, ["background", "foreground"])
        let reset = try p.call("pa.time.current", instance)
        XCTAssertEqual(reset["isTimeSynchronized"], false)
        XCTAssertEqual(reset["adjustmentMs"], 0)
        _ = try fetch(p)
        XCTAssertEqual(try p.call("pa.time.current", instance)["isTimeSynchronized"], true, "the next fetch synchronises again")
    }

    func testWatchHeadersFollowThePhonesTimeAdjustment() throws {
        let (_, _, p, w) = try startActivatedPair()
        _ = try p.call("pa.instance.add", instance)
        _ = try w.call("pa.instance.add", instance)
        _ = try p.call("pa.activation.create", args(["commit": true]))
        _ = try p.call("pa.status.sendToWatch", args(["mode": "completion"]))
        _ = try p.call("pa.token.create", args(["name": "possession"]))
        _ = try p.call("pa.token.sendToWatch", args(["name": "possession", "mode": "completion"]))
        assertControlError("PowerAuthErrorDomain", 13) { try p.call("pa.time.sendToWatch", self.args(["mode": "completion"])) }
        _ = try p.call("pa.server.clock", ["offsetMs": 90_000])
        _ = try p.call("pa.time.sync", instance)
        XCTAssertEqual(try p.call("pa.time.sendToWatch", args(["mode": "completion"]))["delivered"], true)

        let adjustment = try XCTUnwrap(p.call("pa.time.current", instance)["adjustmentMs"]?.intValue)
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let header = try XCTUnwrap(w.call("pa.token.header", args(["name": "possession"]))["value"]?.stringValue)
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        XCTAssertTrue(header.hasPrefix("PowerAuth version=\"3.3\", token_id="), header)
        let stamp = try XCTUnwrap(header.components(separatedBy: "timestamp=\"").last?.prefix { $0 != "\"" })
        XCTAssertTrue((before + adjustment...after + adjustment).contains(try XCTUnwrap(Int64(stamp))), "the watch uses the phone's adjustment")
    }

    func testArgumentsAreChecked() throws {
        let p = try phoneOnly()
        let id = try XCTUnwrap(p.call("pa.activation.create", instance)["activationId"]?.stringValue)
        assertControlError("control", 3) { try self.server(p, id, "explode") }
        assertControlError("control", 3) { try self.server(p, "no-such-activation", "commit") }
        assertControlError("control", 3) { try p.call("pa.network.set", ["failRate": 2]) }
        assertControlError("control", 3) { try p.call("pa.server.set", ["activationId": .string(id), "lookAhead": 0]) }
        assertControlError("PowerAuthErrorDomain", 3) { try p.call("pa.activation.create", self.instance) }
        assertControlError("control", 3) { try p.call("pa.sign", self.args(["online": true, "signatureType": "password"])) }
        assertControlError("control", 3) { try p.call("pa.sign", self.args(["online": true, "componentLength": 6])) }
        assertControlError("control", 3) { try p.call("pa.sign", self.args(["online": false, "componentLength": 9])) }
        assertControlError("control", 3) { try p.call("pa.server.secrets", ["activationId": "no-such-activation"]) }
        let offline = try p.call("pa.sign", args(["online": false, "signatureType": "possession_knowledge", "componentLength": 6]))
        XCTAssertEqual(offline["signature"]?.stringValue?.count, 13, "two 6-digit components")
    }
}
