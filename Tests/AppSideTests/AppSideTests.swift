import Foundation
import LinkClient
import LinkJSON
import WatchLinkTesting
import XCTest

/// Two real app processes, written against the WatchConnectivity API only, attached to the
/// two daemons: what each delegate sees, with Apple's arguments, in Apple's order.
class AppSideTestCase: XCTestCase {
    private(set) var apps: [AppProcess] = []
    private var outputDirectory = ""

    override func setUp() {
        super.setUp()
        outputDirectory = TemporaryHome().path
    }

    override func tearDown() {
        for app in apps { app.stop() }
        for app in apps {
            let reports = ProgramOutput.sanitizerReports(app.output)
            if !reports.isEmpty { XCTFail("\(app.name) had sanitizer reports: \(reports.prefix(3).joined(separator: " | "))") }
        }
        // `hasSucceeded` is false until the run is over: what counts is a failure recorded so far.
        if testRun.map({ $0.totalFailureCount > 0 }) ?? false {
            for app in apps { print("---- \(app.name) (pid \(app.pid)):\n\(app.output)") }
        }
        apps.removeAll()
        try? FileManager.default.removeItem(atPath: outputDirectory)
        super.tearDown()
    }

    /// Launches an app process (the probe, unless `program` names another) on `daemon`'s side.
    func launch(
        _ name: String, program: String = "WatchLinkAppProbe", on daemon: WatchLinkDaemon, of pair: WatchLinkPair,
        arguments: [String] = []
    ) throws -> AppProcess {
        var environment = pair.environment(for: daemon)
        // An app exits with its session's singletons alive, as apps do: no leak report for it.
        environment["LSAN_OPTIONS"] = "detect_leaks=0"
        let app = AppProcess(
            name, program: program, environment: environment, directory: outputDirectory,
            arguments: arguments)
        try app.start()
        apps.append(app)
        if program == "WatchLinkAppProbe" { try app.waitFor("launched") }
        return app
    }

    /// Launches the app and activates its session; returns once activation completed.
    func launchActivated(_ name: String, on daemon: WatchLinkDaemon, of pair: WatchLinkPair, arguments: [String] = []) throws -> AppProcess {
        let app = try launch(name, on: daemon, of: pair, arguments: arguments)
        app.send(["cmd": "activate"])
        let completed = try app.waitFor("activationDidComplete")[0]
        XCTAssertEqual(completed["state"] as? Int, 2, "activated")
        XCTAssertTrue(completed["error"] is NSNull, "\(completed)")
        return app
    }

    func control(_ daemon: WatchLinkDaemon, _ op: String, _ args: JSONObject = [:]) throws -> JSONObject {
        let client = try daemon.client()
        defer { client.close() }
        return try client.call(op, args)
    }
}

final class AppSideTests: AppSideTestCase {
    /// WCSession: activate() → `session(_:activationDidCompleteWith:error:)` with `.activated`
    /// and no error; then `sessionReachabilityDidChange` as the counterpart comes and goes:
    /// the link down and up, the watch app quitting.
    func testActivationAndReachabilityCallbacks() throws {
        let pair = try startWatchLinkPair()
        let phone = try launchActivated("phone-app", on: pair.phone, of: pair)
        XCTAssertEqual(phone.callbacks.last?["isReachable"] as? Bool, false, "no watch app runs yet")
        let watch = try launchActivated("watch-app", on: pair.watch, of: pair)
        try phone.waitFor("reachabilityDidChange")
        try watch.waitFor("reachabilityDidChange")

        _ = try control(pair.phone, "link.set", ["up": false])
        try phone.waitFor("reachabilityDidChange", count: 2)
        try watch.waitFor("reachabilityDidChange", count: 2)
        _ = try control(pair.phone, "link.set", ["up": true])
        try phone.waitFor("reachabilityDidChange", count: 3)
        try watch.waitFor("reachabilityDidChange", count: 3)

        // The watch app in the background: neither reaches the other.
        watch.send(["cmd": "appState", "state": "background"])
        XCTAssertEqual(try watch.waitFor("appState")[0]["changed"] as? Bool, true)
        try phone.waitFor("reachabilityDidChange", count: 4)
        try watch.waitFor("reachabilityDidChange", count: 4)
        watch.send(["cmd": "sendMessage", "message": ["from": "background"], "wantsReply": true])
        XCTAssertEqual(try watch.waitFor("errorHandler")[0]["code"] as? Int, 7007, "only a foreground watch app sends messages")
        watch.send(["cmd": "appState", "state": "foreground"])
        try phone.waitFor("reachabilityDidChange", count: 5)
        // Each app hears of it on its own: the watch app's callback is awaited before it is killed.
        try watch.waitFor("reachabilityDidChange", count: 5)
        watch.kill9()
        try phone.waitFor("reachabilityDidChange", count: 6)

        let reachability = phone.callbacks.filter { $0["cb"] as? String == "reachabilityDidChange" }.map { $0["isReachable"] as? Bool }
        XCTAssertEqual(reachability, [true, false, true, false, true, false])
        // The watch app's own reachability follows its state too (next test).
        let fromWatch = watch.callbacks.filter { $0["cb"] as? String == "reachabilityDidChange" }.map { $0["isReachable"] as? Bool }
        XCTAssertEqual(fromWatch, [true, false, true, false, true])
        XCTAssertEqual(
            phone.names.filter { $0 != "launched" }.prefix(2), ["activationDidComplete", "reachabilityDidChange"],
            "activation completes before the first reachability change")
    }

    /// `isReachable`, WatchKit extension side: "the WatchKit extension is running in the
    /// foreground, or is running with a high priority in the background (for example, during a
    /// workout session ...)". A background watch app reads false and its sends fail as the
    /// property says; a HealthKit workout session makes it reachable in the background, both ways.
    func testABackgroundWatchAppIsReachableOnlyDuringAWorkout() throws {
        let pair = try startWatchLinkPair()
        let phone = try launchActivated("phone-app", on: pair.phone, of: pair)
        let watch = try launchActivated("watch-app", on: pair.watch, of: pair)
        try waitForProperty(watch, "isReachable", true)
        try waitForProperty(phone, "isReachable", true)

        watch.send(["cmd": "appState", "state": "background"])
        try watch.waitFor("appState")
        try waitForProperty(watch, "isReachable", false)
        try waitForProperty(phone, "isReachable", false)
        watch.send(["cmd": "sendMessage", "message": ["from": "background"], "wantsReply": true])
        XCTAssertEqual(try watch.waitFor("errorHandler")[0]["code"] as? Int, 7007, "the send agrees with the property")

        watch.send(["cmd": "startWorkout"])
        XCTAssertEqual(try watch.waitFor("workoutState")[0]["state"] as? Int, 2, "running")
        try waitForProperty(watch, "isReachable", true)
        try waitForProperty(phone, "isReachable", true)
        XCTAssertEqual(try control(pair.watch, "status")["appState"], "background", "still in the background")
        watch.send(["cmd": "sendMessage", "message": ["from": "a workout"], "wantsReply": true])
        XCTAssertEqual(try watch.waitFor("replyHandler")[0]["reply"] as? [String: Bool], ["ok": true])
        phone.send(["cmd": "sendMessage", "message": ["to": "the workout"], "wantsReply": true])
        XCTAssertEqual(try watch.waitFor("didReceiveMessageWithReply")[0]["message"] as? [String: String], ["to": "the workout"])

        watch.send(["cmd": "endWorkout"])
        XCTAssertEqual(try watch.waitFor("workoutState", count: 2)[1]["state"] as? Int, 3, "ended")
        try waitForProperty(watch, "isReachable", false)
        try waitForProperty(phone, "isReachable", false)
    }

    /// Asks the app for its properties until `key` reads `value`.
    private func waitForProperty(_ app: AppProcess, _ key: String, _ value: Bool, timeout: Double = 10) throws {
        let deadline = Date().addingTimeInterval(timeout)
        var asked = app.callbacks.filter { $0["cb"] as? String == "status" }.count
        while Date() < deadline {
            app.send(["cmd": "status"])
            asked += 1
            let status = try app.waitFor("status", count: asked)
            if status.last?[key] as? Bool == value { return }
            usleep(20_000)
        }
        XCTFail("\(app.name): \(key) did not become \(value) within \(timeout) s")
    }

    /// sendMessage with a reply handler: the counterpart's `session(_:didReceiveMessage:replyHandler:)`
    /// and the sender's replyHandler; without one: `session(_:didReceiveMessage:)`;
    /// sendMessageData likewise; the errors 7004, 7007, 7012 and 7014 in the errorHandler.
    func testMessagesRepliesAndTheirErrors() throws {
        // The shipped 10 s reply timeout, of the pair's manual clock.
        let pair = try startWatchLinkPair(clock: .manual)
        let early = try launch("early-app", on: pair.phone, of: pair)
        early.send(["cmd": "sendMessage", "message": ["too": "early"], "wantsReply": true])
        XCTAssertEqual(try early.waitFor("errorHandler")[0]["code"] as? Int, 7004, "sessionNotActivated before activate()")
        early.stop()

        let phone = try launchActivated("phone-app", on: pair.phone, of: pair)
        phone.send(["cmd": "sendMessage", "message": ["to": "nobody"], "wantsReply": true])
        XCTAssertEqual(try phone.waitFor("errorHandler")[0]["code"] as? Int, 7007, "notReachable: no watch app runs")

        let watch = try launchActivated("watch-app", on: pair.watch, of: pair)
        try phone.waitFor("reachabilityDidChange")
        phone.send(["cmd": "sendMessage", "message": ["ping": 1], "wantsReply": true])
        XCTAssertEqual(try phone.waitFor("replyHandler")[0]["reply"] as? [String: Bool], ["ok": true])
        XCTAssertEqual(try watch.waitFor("didReceiveMessageWithReply")[0]["message"] as? [String: Int], ["ping": 1])
        phone.send(["cmd": "sendMessage", "message": ["fire": "and forget"]])
        XCTAssertEqual(try watch.waitFor("didReceiveMessage")[0]["message"] as? [String: String], ["fire": "and forget"])
        phone.send(["cmd": "sendMessageData", "data": Data([1, 2, 3]).base64EncodedString()])
        XCTAssertEqual(
            try watch.waitFor("didReceiveMessageDataWithReply")[0]["data"] as? [String: String],
            ["$data": Data([1, 2, 3]).base64EncodedString()])
        XCTAssertEqual(
            try phone.waitFor("replyDataHandler")[0]["data"] as? [String: String],
            ["$data": Data([3, 2, 1]).base64EncodedString()])

        watch.send(["cmd": "setReply", "reply": ["late": true], "delaySeconds": 600.0])
        try watch.waitFor("replySet")  // the commands and the link are two paths into the app
        phone.send(["cmd": "sendMessage", "message": ["slow": 1], "wantsReply": true])
        try watch.waitFor("didReceiveMessageWithReply", count: 2)
        try pair.advanceClock(by: 9.999)
        XCTAssertEqual(phone.names.filter { $0 == "errorHandler" }.count, 1, "no 7012 before the timeout")
        try pair.advanceClock(by: 0.001)
        XCTAssertEqual(try phone.waitFor("errorHandler", count: 2)[1]["code"] as? Int, 7012, "messageReplyTimedOut")

        watch.stop()
        try phone.waitFor("reachabilityDidChange", count: 2)
        let plain = try launchActivated("plain-watch-app", on: pair.watch, of: pair, arguments: ["--no-reply-handler"])
        try phone.waitFor("reachabilityDidChange", count: 3)
        phone.send(["cmd": "sendMessage", "message": ["needs": "a reply handler"], "wantsReply": true])
        XCTAssertEqual(try phone.waitFor("errorHandler", count: 3)[2]["code"] as? Int, 7014, "deliveryFailed without a reply handler")
        XCTAssertFalse(plain.names.contains("didReceiveMessageWithReply"))

        // The framework's own texts, as a device gives them (its Localizable.strings, Err70xx with
        // -C the failure reason and -R the recovery suggestion, as Johennes/swift-systemstrings
        // lists them; device logs quote "WatchConnectivity session on paired device is not
        // reachable." and "Message reply took too long."): apps branch on them.
        let errors = phone.callbacks.filter { $0["cb"] as? String == "errorHandler" } + early.callbacks.filter { $0["cb"] as? String == "errorHandler" }
        func texts(_ code: Int) -> [String?] {
            guard let line = errors.first(where: { $0["code"] as? Int == code }) else { return ["no \(code)"] }
            return [line["description"] as? String, line["reason"] as? String, line["suggestion"] as? String]
        }
        XCTAssertEqual(
            texts(7004),
            [
                "WatchConnectivity session has not been activated.", "Function activateSession has not been called.",
                "Activate the WatchConnectivity session.",
            ])
        XCTAssertEqual(texts(7007), ["WatchConnectivity session on paired device is not reachable.", nil, nil])
        XCTAssertEqual(texts(7012), ["Message reply took too long.", "Reply timeout occurred.", nil])
        XCTAssertEqual(texts(7014), ["Payload could not be delivered.", nil, nil])
        for line in errors {
            XCTAssertFalse((line["explanation"] as? String ?? "").isEmpty, "WatchLink's explanation, beside the device's text: \(line)")
            XCTAssertEqual(line["domain"] as? String, "WCErrorDomain")
        }
    }

    /// WCError 7003 `sessionMissingDelegate`: a send of a session without a delegate.
    func testSendsWithoutADelegateFailWith7003() throws {
        let pair = try startWatchLinkPair()
        let phone = try launchActivated("phone-app", on: pair.phone, of: pair)
        phone.send(["cmd": "dropDelegate"])
        try phone.waitFor("delegateDropped")
        phone.send(["cmd": "sendMessage", "message": ["n": 1]])
        XCTAssertEqual(try phone.waitFor("errorHandler")[0]["code"] as? Int, 7003)
        phone.send(["cmd": "updateApplicationContext", "context": ["n": 1]])
        XCTAssertEqual(try phone.waitFor("contextError")[0]["code"] as? Int, 7003)
        XCTAssertEqual(try control(pair.phone, "userInfo.outstanding")["transfers"], [], "nothing was sent")
    }

    /// `hasContentPending`: "true if the session has received data in the background but has not
    /// yet delivered that data to the session's delegate" (Apple's page): true while userInfo
    /// queued before the app ran waits for its delegate, false once the delegate has returned,
    /// and observable as Apple's sample observes it (`observe(\.hasContentPending)`).
    func testHasContentPendingTurnsFalseOnceTheDelegateTookTheDataAndObservationsFire() throws {
        let pair = try startWatchLinkPair()
        _ = try control(pair.phone, "session.activate")
        _ = try control(pair.watch, "app.setState", ["state": "notRunning"])
        for n in 1...2 { _ = try control(pair.phone, "userInfo.transfer", ["userInfo": ["n": .int(Int64(n))]]) }
        let watchDaemon = try pair.watch.client()
        defer { watchDaemon.close() }
        let deadline = Date().addingTimeInterval(10)
        while try watchDaemon.call("status")["hasContentPending"] != true, Date() < deadline { usleep(5_000) }

        let watch = try launch("watch-app", on: pair.watch, of: pair, arguments: ["--work-ms", "100"])
        watch.send(["cmd": "observe"])
        try watch.waitFor("observing")
        watch.send(["cmd": "activate"])
        let activated = try watch.waitFor("activationDidComplete")[0]
        XCTAssertEqual(activated["hasContentPending"] as? Bool, true, "the userInfo waits for the delegate")
        try watch.waitFor("didReceiveUserInfo", count: 2)
        // The probe writes its didReceiveUserInfo line on entering the delegate method; the method
        // has returned once the observation heard the change to false (the initial value, true,
        // false). A read from then on is false.
        func pendingChanges() -> [[String: Any]] {
            watch.callbacks.filter { $0["cb"] as? String == "kvo" && $0["key"] as? String == "hasContentPending" }
        }
        let returned = Date().addingTimeInterval(10)
        while pendingChanges().count < 3, Date() < returned { usleep(5_000) }
        watch.send(["cmd": "status"])
        XCTAssertEqual(try watch.waitFor("status")[0]["hasContentPending"] as? Bool, false, "read after the delegate returned")

        let pending = pendingChanges()
        XCTAssertEqual(pending.map { $0["new"] as? Bool }, [false, true, false], "the initial value, then each change: \(pending)")
        XCTAssertEqual(pending.last?["old"] as? Bool, true)
        XCTAssertEqual(pending.last?["value"] as? Bool, false, "the property reads the new value in the handler")
        let names = watch.names
        XCTAssertLessThan(
            try XCTUnwrap(names.lastIndex(of: "didReceiveUserInfo")), try XCTUnwrap(names.lastIndex(of: "kvo")),
            "false only once the delegate has taken the last item")
        let activation = watch.callbacks.filter { $0["cb"] as? String == "kvo" && $0["key"] as? String == "activationState" }
        XCTAssertEqual(activation.map { $0["new"] as? Int }, [2], "activated")

        // Invalidated, an observation hears nothing more.
        watch.send(["cmd": "stopObserving"])
        try watch.waitFor("notObserving")
        _ = try control(pair.phone, "userInfo.transfer", ["userInfo": ["n": 3]])
        try watch.waitFor("didReceiveUserInfo", count: 3)
        watch.send(["cmd": "status"])
        try watch.waitFor("status", count: 2)
        XCTAssertEqual(watch.callbacks.filter { $0["cb"] as? String == "kvo" }.count, pending.count + activation.count)
    }

    /// updateApplicationContext: latest wins, delivered at launch; transferCurrentComplicationUserInfo
    /// arrives as userInfo with the sender's didFinish saying it was the current complication info.
    func testContextLatestWinsAndComplicationUserInfo() throws {
        let pair = try startWatchLinkPair()
        _ = try control(pair.phone, "device.set", ["isComplicationEnabled": true])
        let phone = try launchActivated("phone-app", on: pair.phone, of: pair)
        for n in 1...3 {
            phone.send(["cmd": "updateApplicationContext", "context": ["n": n]])
            try phone.waitFor("contextUpdated", count: n)
        }
        phone.send(["cmd": "transferCurrentComplicationUserInfo", "userInfo": ["temperature": 21]])
        let watch = try launchActivated("watch-app", on: pair.watch, of: pair)
        XCTAssertEqual(try watch.waitFor("didReceiveApplicationContext")[0]["context"] as? [String: Int], ["n": 3])
        XCTAssertEqual(try watch.waitFor("didReceiveUserInfo")[0]["userInfo"] as? [String: Int], ["temperature": 21])
        let finished = try phone.waitFor("didFinishUserInfo")[0]
        XCTAssertTrue(finished["error"] is NSNull, "\(finished)")
        XCTAssertEqual(finished["isCurrentComplicationInfo"] as? Bool, true)
        phone.send(["cmd": "updateApplicationContext", "context": ["n": 4]])
        XCTAssertEqual(try watch.waitFor("didReceiveApplicationContext", count: 2)[1]["context"] as? [String: Int], ["n": 4])
        XCTAssertEqual(watch.names.filter { $0 == "didReceiveApplicationContext" }.count, 2, "1 and 2 never arrived")
    }

    /// transferFile: the receiver's `session(_:didReceive:)` with the file and its metadata,
    /// the sender's progress and `session(_:didFinish:error:)`; cancel() of a queued file.
    func testFilesWithProgressAndCancel() throws {
        let pair = try startWatchLinkPair()
        let phone = try launchActivated("phone-app", on: pair.phone, of: pair)
        let watch = try launchActivated("watch-app", on: pair.watch, of: pair)
        let source = pair.phone.home + "/photo.jpg"
        try Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }).write(to: URL(fileURLWithPath: source))
        phone.send(["cmd": "transferFile", "path": source, "metadata": ["kind": "photo"]])
        let received = try watch.waitFor("didReceiveFile", timeout: 30)[0]
        XCTAssertEqual(received["name"] as? String, "photo.jpg", "the sender's name, as WCSessionFile.fileURL has it")
        XCTAssertEqual(received["size"] as? Int, 3_000_000)
        XCTAssertEqual(received["metadata"] as? [String: String], ["kind": "photo"])
        let finished = try phone.waitFor("didFinishFile", timeout: 30)[0]
        XCTAssertTrue(finished["error"] is NSNull, "\(finished)")
        XCTAssertEqual(finished["completed"] as? Int, finished["total"] as? Int)
        XCTAssertEqual(finished["total"] as? Int, 3_000_000)

        _ = try control(pair.phone, "link.set", ["up": false])
        phone.send(["cmd": "transferFile", "path": source, "metadata": ["kind": "cancelled"]])
        phone.send(["cmd": "cancelFile"])
        XCTAssertEqual(try phone.waitFor("cancelled")[0]["outstanding"] as? Int, 0)
        _ = try control(pair.phone, "link.set", ["up": true])
        try phone.waitFor("reachabilityDidChange", count: 3)
        phone.send(["cmd": "sendMessage", "message": ["barrier": true], "wantsReply": true])
        try phone.waitFor("replyHandler", timeout: 15)
        XCTAssertEqual(watch.names.filter { $0 == "didReceiveFile" }.count, 1, "the cancelled file never arrives")
    }
}
