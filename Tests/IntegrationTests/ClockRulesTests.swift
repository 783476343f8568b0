import Foundation
import LinkClient
import LinkControl
import LinkJSON
import WatchLinkTesting
import XCTest

/// Rules measured in minutes, hours and days, tested by moving the pair's manual clock instead
/// of waiting: APNs's storage for an offline device, provider tokens' hour and 20 minutes, a
/// PowerAuth temporary block.
final class ClockRulesTests: DaemonTestCase {
    /// phoned on a manual clock, its push endpoint set up for a provider, registered for
    /// `fileProvider` pushes: the client, an event subscription, the device token and the provider.
    private func manualPushPhone() throws -> (c: ControlClient, events: ControlClient, token: String, provider: WatchLinkPushProvider) {
        let phone = try daemon("phoned", ["--clock", "manual", "--clock-start", "2026-12-31T12:00:00Z"]).startAndWait()
        let c = try client(phone)
        let events = try subscribed(phone)
        let token = try XCTUnwrap(c.call("push.register", ["types": ["fileProvider"]])["token"]?.stringValue)
        let provider = try WatchLinkPushProvider.configure(phone)
        let clockClient = try client(phone)
        provider.tokenClock = { Date(timeIntervalSince1970: Double(try clockClient.call("status")["clock"]?["wallMs"]?.intValue ?? 0) / 1000) }
        return (c, events, token, provider)
    }

    private func change(_ container: String) -> [UInt8] {
        Array(JSON.serialize(["container-identifier": .string(container), "domain": "main"]).utf8)
    }

    func testAnOfflineDevicesPushIsKeptUntilItsExpirationAndDroppedAfterIt() throws {
        let (c, events, token, provider) = try manualPushPhone()
        defer { provider.close() }
        _ = try c.call("push.network.set", ["online": false])
        let inAnHour = try wallMilliseconds(c) / 1000 + 3_600
        for container in ["kept", "expired"] {
            let response = try provider.send(change(container), to: token, headers: [("apns-expiration", String(inAnHour))])
            XCTAssertEqual(response.status, 200, "\(response)")
            let stored = try events.waitForEvent("push.stored", timeoutSeconds: 5)
            XCTAssertEqual(stored.data["expiresAt"]?.intValue, inAnHour * 1000)
        }
        // APNs keeps one push per app: the second replaced the first.
        XCTAssertEqual(try c.call("push.stored")["stored"]?.arrayValue?.count, 1)

        // Thirty minutes: still stored, and delivered when the device comes back.
        try advance(c, 30 * 60_000)
        XCTAssertEqual(try c.call("push.stored")["stored"]?.arrayValue?.count, 1)
        _ = try c.call("push.network.set", ["online": true])
        let received = try events.waitForEvent("push.received", timeoutSeconds: 5)
        XCTAssertEqual(received.data["payload"]?["container-identifier"], "expired")
        XCTAssertEqual(received.data["heldMs"]?.intValue, 30 * 60_000, "held for the thirty minutes of device time")

        // Two hours: dropped at its expiration, while the device is still offline.
        _ = try c.call("push.network.set", ["online": false])
        let again = try wallMilliseconds(c) / 1000 + 3_600
        XCTAssertEqual(try provider.send(change("late"), to: token, headers: [("apns-expiration", String(again))]).status, 200)
        _ = try events.waitForEvent("push.stored", timeoutSeconds: 5)
        try advance(c, 2 * 3_600_000)
        let dropped = try events.waitForEvent("push.dropped", timeoutSeconds: 5)
        XCTAssertEqual(dropped.data["reason"], "expired")
        XCTAssertEqual(dropped.date?.timeIntervalSince1970, Double(again), "the event is stamped with the expiration's device time")
        XCTAssertEqual(try c.call("push.stored")["stored"]?.arrayValue?.count, 0)
        _ = try c.call("push.network.set", ["online": true])
        let afterwards = try events.nextEvent(timeoutSeconds: 0.3)
        XCTAssertNotEqual(afterwards?.name, "push.received", "an expired push never arrives")
    }

    func testAProviderTokenExpiresAfterAnHourAndMayBeReplacedAfterTwentyMinutes() throws {
        let (c, events, token, provider) = try manualPushPhone()
        defer { provider.close() }
        let key = try c.call("push.keys.create")
        let pem = try XCTUnwrap(key["privateKeyPEM"]?.stringValue)
        let keyId = try XCTUnwrap(key["keyId"]?.stringValue)
        func tokenIssued(atMinute minute: Int64, _ start: Int64) throws -> String {
            // A fresh signer for each: its first token is issued at that minute.
            try APNsProviderTokens(privateKeyPEM: pem, keyId: keyId, teamId: provider.tokens.teamId)
                .token(at: Date(timeIntervalSince1970: Double(start + minute * 60_000) / 1000))
        }
        func push(_ token: String, _ device: String) throws -> WatchLinkPushProvider.Response {
            try provider.send(change("c"), to: device, headers: [("authorization", "bearer " + token)])
        }
        let start = try wallMilliseconds(c)
        let first = try tokenIssued(atMinute: 0, start)
        XCTAssertEqual(try push(first, token).status, 200)
        _ = try events.waitForEvent("push.received", timeoutSeconds: 5)

        // A new token four minutes later is too soon on this connection; the connection stays
        // unusable until twenty minutes after the first token, pushed to every four minutes
        // (under APNs's 300 s idle timeout).
        try advance(c, 4 * 60_000)
        let second = try tokenIssued(atMinute: 4, start)
        XCTAssertEqual(try push(second, token).reason, "TooManyProviderTokenUpdates")
        for minute in stride(from: 8, through: 16, by: 4) {
            try advance(c, 4 * 60_000)
            XCTAssertEqual(try push(first, token).reason, "TooManyProviderTokenUpdates", "minute \(minute)")
        }
        try advance(c, 4 * 60_000 - 1)
        XCTAssertEqual(try push(second, token).reason, "TooManyProviderTokenUpdates", "a millisecond before the twenty minutes")
        try advance(c, 1)
        XCTAssertEqual(try push(second, token).status, 200, "twenty minutes after the first, a new token is taken")
        XCTAssertEqual(provider.connectionCount, 1, "all on one connection")

        // An hour after its issue the first token is still good; a second later, expired.
        try advance(c, 40 * 60_000)
        XCTAssertEqual(try push(first, token).status, 200, "an hour old")
        _ = try events.waitForEvent("push.received", timeoutSeconds: 5)
        try advance(c, 1_000)
        let expired = try push(first, token)
        XCTAssertEqual(expired.status, 403)
        XCTAssertEqual(expired.reason, "ExpiredProviderToken")
        // A new connection takes the later token, 56 minutes old (on this one the first was taken
        // again a second ago, after the idle timeout closed the connection of the first hour).
        provider.close()
        XCTAssertEqual(try push(second, token).status, 200)
    }

    func testAPowerAuthTemporaryBlockEndsWhenItsExpirationPasses() throws {
        let (_, _, p, _) = try startManualClockPair()
        let instance: JSONObject = ["instanceId": "main"]
        _ = try p.call("pa.instance.add", instance)
        let created = try p.call("pa.activation.create", ["instanceId": "main", "commit": true])
        let id = try XCTUnwrap(created["activationId"]?.stringValue)
        let blockedAt = try wallMilliseconds(p)
        let block = try p.call("pa.server.activation", ["activationId": .string(id), "action": "temporaryBlock"])
        XCTAssertEqual(block["state"], "blocked")
        XCTAssertEqual(block["blockExpirationTime"]?.intValue, blockedAt + 300_000, "five minutes of the server's (device) time")
        XCTAssertEqual(try p.call("pa.status.fetch", instance)["state"], "blocked")
        try advance(p, 299_999)
        XCTAssertEqual(try p.call("pa.status.fetch", instance)["state"], "blocked", "a millisecond before its end")
        try advance(p, 1)
        let status = try p.call("pa.status.fetch", instance)
        XCTAssertEqual(status["state"], "active")
        XCTAssertNil(status["blockExpirationTime"])
        // The server's clock and the SDK's time service read the phone's, moved with it.
        let clock = try p.call("pa.server.clock")
        XCTAssertEqual(clock["localTime"]?.intValue, try wallMilliseconds(p))
        XCTAssertEqual(clock["serverTime"]?.intValue, try wallMilliseconds(p))
        XCTAssertEqual(try p.call("pa.time.current", instance)["time"]?.intValue, try wallMilliseconds(p))
    }
}
