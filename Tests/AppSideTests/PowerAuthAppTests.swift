import Foundation
import LinkClient
import LinkJSON
import LinkTrace
import WatchLinkTesting
import XCTest

/// PowerAuth's watch synchronisation between real app processes written against `PowerAuth2`
/// and `PowerAuth2ForWatch` (Tests/PowerAuthPhoneProbe, Tests/PowerAuthWatchProbe): their
/// delegates hand the packets to `PowerAuthWCSessionManager`, as the guide's SessionManager
/// does, and the daemons keep the state (docs/powerauth.md, "The app side").
final class PowerAuthAppTests: AppSideTestCase {
    private let instance: JSONObject = ["instanceId": "io.watchlink.example"]
    private static let phoneProbe = "WatchLinkPowerAuthPhoneProbe"
    private static let watchProbe = "WatchLinkPowerAuthWatchProbe"

    /// A probe attached to `daemon`, its SDK object made and its session activated.
    private func app(
        _ name: String, _ program: String, on daemon: WatchLinkDaemon, of pair: WatchLinkPair,
        arguments: [String] = []
    ) throws -> AppProcess {
        let app = try launch(name, program: program, on: daemon, of: pair, arguments: arguments)
        try app.waitFor("launched")
        app.send(["cmd": "sdk"])
        XCTAssertEqual(try app.waitFor("sdkCreated")[0]["ok"] as? Bool, true)
        app.send(["cmd": "activate"])
        XCTAssertEqual(try app.waitFor("activationDidComplete")[0]["state"] as? Int, 2)
        return app
    }

    /// Sends `command` and returns the `count`-th line named `callback` (counting earlier ones).
    @discardableResult
    private func ask(_ app: AppProcess, _ command: [String: Any], _ callback: String, timeout: Double = 20) throws -> [String: Any] {
        let before = app.callbacks.filter { $0["cb"] as? String == callback }.count
        app.send(command)
        return try app.waitFor(callback, count: before + 1, timeout: timeout)[before]
    }

    /// Asks the app for its `state` until `condition` holds.
    @discardableResult
    private func eventuallyState(
        _ app: AppProcess, _ what: String, timeout: Double = 20,
        _ condition: ([String: Any]) -> Bool
    ) throws -> [String: Any] {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let state = try ask(app, ["cmd": "state"], "state")
            if condition(state) { return state }
            if Date() > deadline { throw AppProcessError("\(app.name): not \(what) within \(timeout) s; last state \(state)") }
            usleep(20_000)
        }
    }

    private func error(_ line: [String: Any]) -> (code: Int, message: String)? {
        guard let error = line["error"] as? [String: Any] else { return nil }
        return (error["code"] as? Int ?? -1, error["message"] as? String ?? "")
    }

    /// The phone app creates and persists an activation and the server commits it.
    private func activate(_ phone: AppProcess, on daemon: WatchLinkDaemon) throws -> String {
        let created = try ask(phone, ["cmd": "createActivation", "code": "VVVVV-VVVVV-VVVVV-VTFVA"], "createActivation")
        XCTAssertNil(error(created), "\(created)")
        XCTAssertEqual((created["fingerprint"] as? String)?.count, 8)
        XCTAssertEqual(try ask(phone, ["cmd": "state"], "state")["hasPendingActivation"] as? Bool, true)
        XCTAssertNil(error(try ask(phone, ["cmd": "persist"], "persist")))
        let state = try ask(phone, ["cmd": "state"], "state")
        XCTAssertEqual(state["hasValidActivation"] as? Bool, true)
        let activationId = try XCTUnwrap(state["activationIdentifier"] as? String)
        XCTAssertEqual(state["activationFingerprint"] as? String, created["fingerprint"] as? String)
        let record = try control(daemon, "pa.server.get", ["activationId": .string(activationId)])
        XCTAssertEqual(record["devicePublicKeyFingerprint"]?.stringValue, created["fingerprint"] as? String, "both ends of the key exchange")
        _ = try control(daemon, "pa.server.activation", ["activationId": .string(activationId), "action": "commit"])
        return activationId
    }

    private func waitReachable(_ pair: WatchLinkPair) throws {
        let deadline = Date().addingTimeInterval(20)
        while try control(pair.phone, "status")["isReachable"] != true || control(pair.watch, "status")["isReachable"] != true {
            if Date() > deadline { throw AppProcessError("the apps did not reach each other within 20 s") }
            usleep(10_000)
        }
    }

    /// Both probes on a pair, reaching each other, the phone app's activation committed by the server.
    private func startActivatedApps() throws -> (pair: WatchLinkPair, phone: AppProcess, watch: AppProcess, activationId: String) {
        let pair = try startWatchLinkPair()
        let phone = try app("phone-app", Self.phoneProbe, on: pair.phone, of: pair)
        let watch = try app("watch-app", Self.watchProbe, on: pair.watch, of: pair)
        try waitReachable(pair)
        return (pair, phone, watch, try activate(phone, on: pair.phone))
    }

    // MARK: Status and tokens

    func testStatusAndTokensTravelBetweenTheAppsAndTheServerAcceptsTheWatchsHeaders() throws {
        let (pair, phone, watch, activationId) = try startActivatedApps()
        XCTAssertEqual(try ask(watch, ["cmd": "state"], "state")["hasValidActivation"] as? Bool, false)

        // Lazily: a message the watch app's delegate hands to PowerAuth.
        XCTAssertEqual(try ask(phone, ["cmd": "sendStatus"], "sendStatus")["issued"] as? Bool, true)
        try eventuallyState(watch, "activated") { $0["activationIdentifier"] as? String == activationId }
        XCTAssertEqual(try watch.waitFor("didReceiveMessageData")[0]["processed"] as? Bool, true)
        // With completion, and the watch asking with completion: the phone app's delegate answers.
        XCTAssertNil(error(try ask(phone, ["cmd": "sendStatus", "mode": "completion"], "sendStatus")))
        let update = try ask(watch, ["cmd": "updateStatus", "mode": "completion"], "updateStatus")
        XCTAssertEqual(update["activationId"] as? String, activationId, "\(update)")
        XCTAssertEqual(try phone.waitFor("didReceiveMessageDataWithReply")[0]["processed"] as? Bool, true)

        // A token to the watch, and a header made there that the server accepts.
        let token = try ask(phone, ["cmd": "requestToken", "name": "MyToken"], "requestToken")
        XCTAssertNil(error(token), "\(token)")
        XCTAssertEqual(
            phone.callbacks.last { $0["cb"] as? String == "requestTokenReturned" }?["synchronous"] as? Bool, false,
            "the server creates it: asynchronous")
        XCTAssertEqual(
            try ask(phone, ["cmd": "requestToken", "name": "MyToken"], "requestTokenReturned")["synchronous"] as? Bool, true,
            "then it is local")
        XCTAssertEqual(try ask(phone, ["cmd": "sendToken", "name": "MyToken"], "sendToken")["issued"] as? Bool, true)
        try eventuallyState(watch, "holding MyToken") { ($0["localTokens"] as? [String])?.contains("MyToken") == true }
        let header = try XCTUnwrap(try ask(watch, ["cmd": "header", "name": "MyToken"], "header")["value"] as? String)
        XCTAssertTrue(header.contains("token_id=\"\(try XCTUnwrap(token["tokenIdentifier"] as? String))\""), header)
        XCTAssertEqual(
            try control(pair.phone, "pa.server.validateToken", ["header": .string(header)]),
            ["tokenValid": true, "activationId": .string(activationId), "activationStatus": "ACTIVE", "signatureType": "POSSESSION"])

        // The watch asks for a token: the phone app's delegate forwards the request.
        let missing = try ask(watch, ["cmd": "requestToken", "name": "Balance"], "requestToken")
        XCTAssertEqual(error(missing)?.code, 14)
        XCTAssertEqual(error(missing)?.message, "Token not found on paired iPhone.")
        let balance = try ask(phone, ["cmd": "requestToken", "name": "Balance", "factors": "possession_knowledge"], "requestToken")
        let fromPhone = try ask(watch, ["cmd": "requestToken", "name": "Balance"], "requestToken")
        XCTAssertEqual(fromPhone["tokenIdentifier"] as? String, balance["tokenIdentifier"] as? String, "\(fromPhone)")
        let balanceHeader = try XCTUnwrap(try ask(watch, ["cmd": "header", "name": "Balance"], "header")["value"] as? String)
        XCTAssertEqual(
            try control(pair.phone, "pa.server.validateToken", ["header": .string(balanceHeader)])["signatureType"],
            "POSSESSION_KNOWLEDGE")

        // Removal of a token from the watch, of one from the server, and of the activation.
        XCTAssertNil(error(try ask(phone, ["cmd": "removeTokenFromWatch", "name": "MyToken", "mode": "completion"], "removeTokenFromWatch")))
        try eventuallyState(watch, "without MyToken") { ($0["localTokens"] as? [String]) == ["Balance"] }
        let removed = try ask(phone, ["cmd": "removeTokenFromServer", "name": "Balance"], "removeTokenFromServer")
        XCTAssertEqual(removed["removed"] as? Bool, true, "\(removed)")
        let later = try XCTUnwrap(try ask(watch, ["cmd": "header", "name": "Balance"], "header")["value"] as? String)
        XCTAssertEqual(try control(pair.phone, "pa.server.validateToken", ["header": .string(later)]), ["tokenValid": false])
        XCTAssertEqual(try ask(watch, ["cmd": "removeAccessToken", "name": "Balance"], "removeAccessToken")["removed"] as? Bool, false)

        XCTAssertEqual(try ask(phone, ["cmd": "removeActivationLocal"], "removedLocally")["hasValidActivation"] as? Bool, false)
        XCTAssertEqual(
            try ask(watch, ["cmd": "state"], "state")["hasValidActivation"] as? Bool, true,
            "removeActivationLocal tells the watch nothing, as the SDK")
        XCTAssertEqual(try ask(watch, ["cmd": "updateStatus"], "updateStatus")["issued"] as? Bool, true)
        let gone = try eventuallyState(watch, "without the activation") { $0["hasValidActivation"] as? Bool == false }
        XCTAssertEqual(gone["localTokens"] as? [String], [], "no activation: the watch drops the instance's tokens")
    }

    /// The SDK sends nothing to the watch while the watch app is not installed: on iOS its
    /// session is valid only when `isPaired && isWatchAppInstalled` (`PA2WCSessionManager.m`,
    /// `validSession`), so a lazy send returns false and one with a completion ends with
    /// PowerAuth's error 15; once the app is installed again the same sends go.
    func testThePhoneSendsNothingToTheWatchWhileTheWatchAppIsNotInstalled() throws {
        let (pair, phone, watch, activationId) = try startActivatedApps()
        XCTAssertNil(error(try ask(phone, ["cmd": "requestToken", "name": "MyToken"], "requestToken")))
        func session(_ what: String, _ condition: @escaping ([String: Any]) -> Bool) throws -> [String: Any] {
            let deadline = Date().addingTimeInterval(20)
            while true {
                let session = try ask(phone, ["cmd": "session"], "session")
                if condition(session) { return session }
                if Date() > deadline { throw AppProcessError("the phone app's session: not \(what) within 20 s; last \(session)") }
                usleep(20_000)
            }
        }
        XCTAssertEqual(try session("valid") { _ in true }["hasValidSession"] as? Bool, true)

        _ = try control(pair.phone, "device.set", ["isWatchAppInstalled": false])
        let without = try session("without the watch app") { $0["isWatchAppInstalled"] as? Bool == false }
        XCTAssertEqual(without["isPaired"] as? Bool, true)
        XCTAssertEqual(without["hasValidSession"] as? Bool, false, "paired, but the watch app is not installed")
        XCTAssertEqual(try ask(phone, ["cmd": "sendStatus"], "sendStatus")["issued"] as? Bool, false)
        XCTAssertEqual(try ask(phone, ["cmd": "sendToken", "name": "MyToken"], "sendToken")["issued"] as? Bool, false)
        let refused = try ask(phone, ["cmd": "sendStatus", "mode": "completion"], "sendStatus")
        XCTAssertEqual(error(refused)?.code, 15, "\(refused)")
        XCTAssertEqual(error(refused)?.message, "PA2WCSessionManager: WCSession is currently not available for messaging.")
        XCTAssertEqual(try ask(watch, ["cmd": "state"], "state")["hasValidActivation"] as? Bool, false, "nothing reached the watch")

        _ = try control(pair.phone, "device.set", ["isWatchAppInstalled": true])
        try session("valid again") { $0["hasValidSession"] as? Bool == true }
        XCTAssertEqual(try ask(phone, ["cmd": "sendStatus"], "sendStatus")["issued"] as? Bool, true)
        try eventuallyState(watch, "activated") { $0["activationIdentifier"] as? String == activationId }
    }

    // MARK: The activation status guide's switch

    func testEveryBranchOfTheStatusGuidesSwitchWithTheServersValues() throws {
        let pair = try startWatchLinkPair()
        let phone = try app("phone-app", Self.phoneProbe, on: pair.phone, of: pair)
        let created = try ask(phone, ["cmd": "createActivation"], "createActivation")
        XCTAssertNil(error(created))
        XCTAssertNil(error(try ask(phone, ["cmd": "persist"], "persist")))
        let id = try XCTUnwrap(try ask(phone, ["cmd": "state"], "state")["activationIdentifier"] as? String)
        let record: JSONObject = ["activationId": .string(id)]
        func server(_ action: String, _ extra: JSONObject = [:]) throws {
            var args = record
            args["action"] = .string(action)
            for key in extra.keys { args[key] = extra[key] }
            _ = try control(pair.phone, "pa.server.activation", args)
        }
        func status() throws -> [String: Any] { try ask(phone, ["cmd": "fetchStatus"], "status") }

        var line = try status()
        XCTAssertEqual(line["branch"] as? String, "pendingCommit")
        XCTAssertEqual(line["remainingAttempts"] as? Int, 0)
        try server("commit")
        line = try status()
        XCTAssertEqual(line["branch"] as? String, "active")
        XCTAssertEqual([line["failCount"], line["maxFailCount"], line["remainingAttempts"]] as? [Int], [0, 5, 5])
        XCTAssertNil(line["customObject"])

        var settings = record
        settings["maxFailCount"] = 3
        settings["customObject"] = ["tier": "gold", "limit": 1200]
        settings["currentVersion"] = 2
        _ = try control(pair.phone, "pa.server.set", settings)
        try server("failAttempt")
        line = try status()
        XCTAssertEqual(line["branch"] as? String, "active")
        XCTAssertEqual([line["failCount"], line["maxFailCount"], line["remainingAttempts"]] as? [Int], [1, 3, 2])
        XCTAssertEqual(line["customObject"] as? NSDictionary, ["tier": "gold", "limit": 1200] as NSDictionary)
        XCTAssertEqual(line["isProtocolUpgradeAvailable"] as? Bool, true, "current 2, upgrade 3")

        try server("temporaryBlock", ["durationMs": 60_000])
        line = try status()
        XCTAssertEqual(line["branch"] as? String, "blocked")
        let remaining = try XCTUnwrap(line["remainingBlockTime"] as? Double, "\(line)")
        XCTAssertTrue((50...60.5).contains(remaining), "seconds to the unblock, against synchronised time: \(remaining)")
        try server("unblock")
        try server("block")
        line = try status()
        XCTAssertEqual(line["branch"] as? String, "blocked")
        XCTAssertNil(line["remainingBlockTime"], "a block without an end")

        try server("remove")
        line = try status()
        XCTAssertEqual(line["branch"] as? String, "removed")
        XCTAssertEqual(line["hasValidActivationAfter"] as? Bool, false, "the guide removes the activation locally")

        XCTAssertNil(error(try ask(phone, ["cmd": "createActivation"], "createActivation")))
        XCTAssertNil(error(try ask(phone, ["cmd": "persist"], "persist")))
        let next = try XCTUnwrap(try ask(phone, ["cmd": "state"], "state")["activationIdentifier"] as? String)
        _ = try control(pair.phone, "pa.server.activation", ["activationId": .string(next), "action": "commit"])
        // The server 20 signatures ahead, past the look-ahead window: the counter cannot be placed.
        _ = try control(pair.phone, "pa.server.activation", ["activationId": .string(next), "action": "advanceCounter", "count": 20])
        line = try status()
        XCTAssertEqual(line["branch"] as? String, "deadlock")
        XCTAssertEqual(line["hasValidActivationAfter"] as? Bool, false)
        XCTAssertEqual(try status()["branch"] as? String, "noActivation")
    }

    // MARK: Removal

    /// The guide's "Removal via Signed Request" (`removeActivation(with:)`), run in the app's
    /// process: with possession alone the endpoint refuses it (it takes 2FA or 3FA) and the
    /// activation stays; with the password the server removes the record, and the device its
    /// activation and tokens.
    func testTheGuidesSignedRemovalRemovesTheActivationOnTheServer() throws {
        let pair = try startWatchLinkPair()
        let phone = try app("phone-app", Self.phoneProbe, on: pair.phone, of: pair)
        let id = try activate(phone, on: pair.phone)
        XCTAssertNil(error(try ask(phone, ["cmd": "requestToken", "factors": "possession"], "requestToken")))
        let record: JSONObject = ["activationId": .string(id)]
        let counter = try XCTUnwrap(try control(pair.phone, "pa.server.get", record)["counter"]?.intValue)

        let refused = try ask(phone, ["cmd": "removeActivation", "factors": "possession"], "removeActivation")
        XCTAssertEqual(error(refused)?.code, 1, "\(refused)")
        XCTAssertEqual(refused["hasValidActivationAfter"] as? Bool, true)
        XCTAssertEqual(refused["tokens"] as? Bool, true)
        XCTAssertEqual(try control(pair.phone, "pa.server.get", record)["state"], "active")
        XCTAssertEqual(try control(pair.phone, "pa.server.get", record)["counter"]?.intValue, counter, "refused before the server saw it")

        let removed = try ask(phone, ["cmd": "removeActivation", "factors": "possession_knowledge"], "removeActivation")
        XCTAssertNil(error(removed), "\(removed)")
        XCTAssertEqual(removed["hasValidActivationAfter"] as? Bool, false)
        XCTAssertEqual(removed["tokens"] as? Bool, false, "the tokens go with the activation")
        let server = try control(pair.phone, "pa.server.get", record)
        XCTAssertEqual(server["state"], "removed")
        XCTAssertEqual(server["counter"]?.intValue, counter + 2, "the refused request's signature was made too: the server skipped it")
        let again = try ask(phone, ["cmd": "removeActivation"], "removeActivation")
        XCTAssertEqual(error(again)?.code, 6, "no activation left to remove")
    }

    // MARK: The startup order

    /// Installs the phone probe as phoned's app, launched with `arguments`; its log.
    private func installPhoneApp(_ pair: WatchLinkPair, _ arguments: [String]) throws -> String {
        let args: JSONObject = [
            "command": .array(([DaemonBinaries.path(Self.phoneProbe)] + arguments).map(JSONValue.string)),
            "environment": ["LSAN_OPTIONS": "detect_leaks=0"],
        ]
        return try XCTUnwrap(try control(pair.phone, "app.install", args)["log"]?.stringValue)
    }

    /// The guide: "your watchOS application can wake up its iOS counterpart. Therefore, it is
    /// highly possible that some messages will be available right at the application's
    /// startup. If you don't follow the guidelines and forget to prepare your PowerAuthSDK
    /// instances before the WCSession is activated, then a couple of messages may be lost."
    func testTheWatchWakesThePhoneAppWhichAnswersOnlyIfItMadeItsSDKFirst() throws {
        // Activated: the device remembers that the app activated its session in an earlier run.
        let pair = try startWatchLinkPair(activate: true)
        // The device's state from an earlier run of the app: an activation and a token.
        _ = try control(pair.phone, "pa.instance.add", instance)
        var activation = instance
        activation["commit"] = true
        let activationId = try XCTUnwrap(try control(pair.phone, "pa.activation.create", activation)["activationId"]?.stringValue)
        var token = instance
        token["name"] = "Balance"
        let tokenId = try XCTUnwrap(try control(pair.phone, "pa.token.create", token)["tokenIdentifier"]?.stringValue)
        _ = try control(pair.phone, "pa.instance.remove", instance)

        let goodLog = try installPhoneApp(pair, ["--startup", "sdkFirst"])
        let watch = try app("watch-app", Self.watchProbe, on: pair.watch, of: pair)
        let update = try ask(watch, ["cmd": "updateStatus", "mode": "completion"], "updateStatus", timeout: 30)
        XCTAssertEqual(update["activationId"] as? String, activationId, "the launched app answered: \(update)")
        XCTAssertEqual(try waitForLines(goodLog, "launched")[0]["reason"], "message")
        // The system ends the background app; the watch's token request launches it again.
        _ = try control(pair.phone, "app.terminate")
        let fromPhone = try ask(watch, ["cmd": "requestToken", "name": "Balance"], "requestToken", timeout: 30)
        XCTAssertEqual(fromPhone["tokenIdentifier"] as? String, tokenId, "\(fromPhone)")
        XCTAssertEqual(try waitForLines(goodLog, "launched", count: 2)[1]["reason"], "message")

        // The same app, activating its session first and making its SDK object after the packet.
        let events = try pair.phone.client(timeout: 30)
        defer { events.close() }
        try events.subscribe()
        _ = try control(pair.phone, "app.terminate")
        let badLog = try installPhoneApp(pair, ["--startup", "activateFirst"])
        let lost = try ask(watch, ["cmd": "updateStatus", "mode": "completion"], "updateStatus", timeout: 30)
        XCTAssertEqual(error(lost)?.code, 15, "\(lost)")
        XCTAssertEqual(error(lost)?.message, "PA2WCSessionManager: Unable to handle request for target 'session:io.watchlink.example'.")
        let dropped = try events.waitForEvent("pa.messageDropped", timeoutSeconds: 10)
        XCTAssertEqual(dropped.data["reason"], "instanceNotRegistered")
        XCTAssertEqual(dropped.data["target"], "session:io.watchlink.example")
        let entries = (try control(pair.phone, "trace.get", ["limit": 10_000])["entries"]?.arrayValue ?? []).compactMap(TraceEntry.init(json:))
        let fault = try XCTUnwrap(entries.last { $0.kind == .fault && $0.string("name") == "pa.messageDropped" }, "the loss is in the trace")
        XCTAssertEqual(fault.string("target"), "session:io.watchlink.example")
        XCTAssertEqual(try waitForLines(badLog, "didReceiveMessageDataWithReply")[0]["processed"], true, "PowerAuth's, and lost")
        // Its SDK object exists now: the next request is answered.
        try waitForLines(badLog, "sdkCreated")
        let answered = try ask(watch, ["cmd": "updateStatus", "mode": "completion"], "updateStatus", timeout: 30)
        XCTAssertEqual(answered["activationId"] as? String, activationId)
    }

    /// A phone app whose delegate does not hand the packets to PowerAuth answers them with
    /// empty data (the guide's fallback): the watch's completion ends with the SDK's error.
    func testAPhoneAppThatDoesNotForwardEndsTheWatchsRequestsWithTheSDKsError() throws {
        let pair = try startWatchLinkPair()
        let phone = try app("phone-app", Self.phoneProbe, on: pair.phone, of: pair, arguments: ["--no-forward"])
        _ = try activate(phone, on: pair.phone)
        let watch = try app("watch-app", Self.watchProbe, on: pair.watch, of: pair)
        try waitReachable(pair)
        XCTAssertNil(error(try ask(phone, ["cmd": "sendStatus", "mode": "completion"], "sendStatus")), "sending is the app's own")
        let started = Date()
        let update = try ask(watch, ["cmd": "updateStatus", "mode": "completion"], "updateStatus")
        XCTAssertEqual(error(update)?.code, 15, "\(update)")
        XCTAssertEqual(error(update)?.message, "PA2WCSessionManager: Received response is in unknown data format.")
        let token = try ask(watch, ["cmd": "requestToken", "name": "MyToken"], "requestToken")
        XCTAssertEqual(error(token)?.message, "PA2WCSessionManager: Received response is in unknown data format.")
        XCTAssertLessThan(Date().timeIntervalSince(started), 10, "answered, not left to a timeout")
        XCTAssertEqual(try phone.waitFor("didReceiveMessageDataWithReply")[0]["processed"] as? Bool, false)
    }
}
