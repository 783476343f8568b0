import Foundation
import LinkClient
import LinkControl
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

    private func assertStatus(_ status: JSONObject, _ state: String, fail: Int64, max: Int64 = 5, remaining: Int64,
                              upgrade: Bool = false, custom: JSONValue? = nil, blocked: Bool = false,
                              file: StaticString = #filePath, line: UInt = #line) {
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
        _ = try p.call("pa.token.create", args(["name": "possession"]))
        _ = try p.call("pa.token.sendToWatch", args(["name": "possession", "mode": "completion"]))

        assertStatus(try fetch(p), "pendingCommit", fail: 0, remaining: 0)
        _ = try server(p, id, "commit")
        assertStatus(try fetch(p), "active", fail: 0, remaining: 5)

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

        _ = try server(p, id, "temporaryBlock", ["durationMs": 800])
        let blocked = try fetch(p)
        assertStatus(blocked, "blocked", fail: 0, remaining: 0, blocked: true)
        let expiration = try XCTUnwrap(blocked["blockExpirationTime"]?.intValue)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        XCTAssertTrue((now...now + 900).contains(expiration), "expires in 0.8 s: \(expiration - now)")
        eventually("the temporary block to expire by itself") { try self.fetch(p)["state"] == "active" }
        assertStatus(try fetch(p), "active", fail: 0, remaining: 5)

        _ = try server(p, id, "remove")
        let removed = try fetch(p)
        assertStatus(removed, "removed", fail: 0, remaining: 0)
        assertControlError("PowerAuthErrorDomain", 3) { try self.server(p, id, "unblock") }

        // The app reacts as the SDK's documentation says: removeActivationLocal, and the watch learns it.
        let removal = try p.call("pa.activation.removeLocal", instance)
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
        let again = try fetch(p)
        XCTAssertEqual(again["state"], "active")
        XCTAssertEqual(again["counterSynchronization"], "inSync", "the server caught up")
        XCTAssertEqual(try p.call("pa.sign", args(["online": true]))["valid"], true)

        for _ in 1...21 { _ = try p.call("pa.sign", args(["online": false])) }
        let deadlocked = try fetch(p)
        XCTAssertEqual(deadlocked["state"], "deadlock")
        XCTAssertEqual(deadlocked["remainingAttempts"], 0)
        XCTAssertEqual(try fetch(p)["state"], "deadlock", "it stays a deadlock")
        XCTAssertEqual(try p.call("pa.sign", args(["online": true]))["valid"], false, "no code can be validated any more")
    }

    func testTenOfflineCodesStayWithinTheWindow() throws {
        let p = try phoneOnly()
        _ = try p.call("pa.activation.create", args(["commit": true]))
        for _ in 1...10 { _ = try p.call("pa.sign", args(["online": false])) }
        let status = try fetch(p)
        XCTAssertEqual(status["state"], "active")
        XCTAssertEqual(status["counterSynchronization"], "clientAhead")
        let online = try p.call("pa.sign", args(["online": true]))
        XCTAssertEqual(online["valid"], true)
        XCTAssertEqual(online["skipped"], 10)
    }

    func testServerAheadFastForwardsTheClient() throws {
        let p = try phoneOnly()
        let id = try XCTUnwrap(p.call("pa.activation.create", args(["commit": true]))["activationId"]?.stringValue)
        _ = try server(p, id, "advanceCounter", ["count": 7])
        let status = try fetch(p)
        XCTAssertEqual(status["state"], "active")
        XCTAssertEqual(status["counterSynchronization"], "fastForwarded")
        XCTAssertEqual(try fetch(p)["counterSynchronization"], "inSync")
        let online = try p.call("pa.sign", args(["online": true]))
        XCTAssertEqual(online["valid"], true)
        XCTAssertEqual(online["skipped"], 0)

        _ = try server(p, id, "advanceCounter", ["count": 21])
        XCTAssertEqual(try fetch(p)["state"], "deadlock", "server ahead beyond the window")
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
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let current = try p.call("pa.time.current", instance)
        XCTAssertEqual(current["isTimeSynchronized"], true)
        let time = try XCTUnwrap(current["time"]?.intValue)
        XCTAssertLessThan(abs(time - (now + 90_000)), 1_000, "within 1 s of server time")

        let header = try XCTUnwrap(p.call("pa.token.header", args(["name": "possession"]))["value"]?.stringValue)
        XCTAssertTrue(header.contains("version=\"3.3\""), header)
        let stamp = try XCTUnwrap(header.components(separatedBy: "timestamp=\"").last?.prefix { $0 != "\"" })
        let headerTime = try XCTUnwrap(Int64(stamp))
        let later = Int64(Date().timeIntervalSince1970 * 1000)
        XCTAssertLessThan(abs(headerTime - (later + 90_000)), 1_000, "the header follows synchronised time")

        // A fetch also samples the time; a close sample soon after keeps the adjustment.
        _ = try fetch(p)
        XCTAssertEqual(try p.call("pa.time.sync", instance)["outcome"], "kept")
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

        let header = try XCTUnwrap(w.call("pa.token.header", args(["name": "possession"]))["value"]?.stringValue)
        XCTAssertTrue(header.contains("version=\"3.3\""), header)
        let stamp = try XCTUnwrap(header.components(separatedBy: "timestamp=\"").last?.prefix { $0 != "\"" })
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        XCTAssertLessThan(abs(try XCTUnwrap(Int64(stamp)) - (now + 90_000)), 1_000, "the watch uses the phone's adjustment")
    }

    func testArgumentsAreChecked() throws {
        let p = try phoneOnly()
        let id = try XCTUnwrap(p.call("pa.activation.create", instance)["activationId"]?.stringValue)
        assertControlError("control", 3) { try self.server(p, id, "explode") }
        assertControlError("control", 3) { try self.server(p, "no-such-activation", "commit") }
        assertControlError("control", 3) { try p.call("pa.network.set", ["failRate": 2]) }
        assertControlError("control", 3) { try p.call("pa.server.set", ["activationId": .string(id), "lookAhead": 0]) }
        assertControlError("PowerAuthErrorDomain", 3) { try p.call("pa.activation.create", self.instance) }
    }
}
