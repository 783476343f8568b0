import Foundation
import LinkClient
import LinkControl
import LinkJSON
import WatchLinkTesting
import XCTest
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The emulated OS launching the installed app (the probe, built from the package), as iOS
/// and watchOS do, and ending it (docs/app-side.md, "The emulated OS launches the app").
final class AppLaunchTests: LaunchedAppTestCase {
    /// Installs the probe as `daemon`'s app with `arguments`; its output goes to the returned log.
    @discardableResult
    private func install(on daemon: WatchLinkDaemon, _ arguments: [String], extension kind: String? = nil) throws -> String {
        var args: JSONObject = [
            "command": .array(([DaemonBinaries.path("WatchLinkAppProbe")] + arguments).map(JSONValue.string)),
            "environment": ["LSAN_OPTIONS": "detect_leaks=0"],
        ]
        if let kind { args["extension"] = .string(kind) }
        return try XCTUnwrap(try client(daemon).call("app.install", args)["log"]?.stringValue)
    }

    private func isAlive(_ pid: Int64) -> Bool {
        kill(Int32(pid), 0) == 0
    }

    // MARK: The phone app, woken by the watch

    /// WCSession.sendMessage: "Calling this method from your WatchKit extension while it is
    /// active and running wakes up the corresponding iOS app in the background and makes it
    /// reachable."
    func testAWatchMessageLaunchesThePhoneAppWhoseDelegateReplies() throws {
        let pair = try start()
        let log = try install(on: pair.phone, ["--activate-after-ms", "0"])
        let phone = try client(pair.phone, subscribed: true)
        XCTAssertEqual(try phone.call("status")["appState"], "notRunning", "installed, the app runs only as its program")
        let reply = try client(pair.watch).call("message.send", ["message": ["ping": 1], "wantsReply": true])
        XCTAssertEqual(reply["reply"], ["ok": true], "the probe's reply handler answered")
        let launched = try phone.waitForEvent("app.launched", timeoutSeconds: 10)
        XCTAssertEqual(launched.data["reason"], "message")
        XCTAssertEqual(launched.data["state"], "background")
        XCTAssertEqual(launched.data["log"]?.stringValue, log)
        XCTAssertEqual(try waitForLines(log, "didReceiveMessageWithReply")[0]["message"], ["ping": 1])
        XCTAssertEqual(try waitForLines(log, "launched")[0]["reason"], "message", "the launch's reason reaches the app")
        let status = try phone.call("status")
        XCTAssertEqual(status["appState"], "background")
        XCTAssertEqual(status["apps"]?["app"]?["reason"], "message")

        _ = try client(pair.watch).call("message.send", ["message": ["plain": 2]])
        XCTAssertEqual(try waitForLines(log, "didReceiveMessage")[0]["message"], ["plain": 2], "without a reply, to the same running app")
        XCTAssertEqual(lines(log, "launched").count, 1, "launched once")
        let traced = (try phone.call("trace.get", ["limit": 100_000])["entries"]?.arrayValue ?? []).filter { $0["kind"] == "app" }
        XCTAssertEqual(traced.map { $0["name"] }, ["launched"], "the trace records the launch")
        XCTAssertEqual(traced.first?["reason"], "message")
    }

    /// A launched app that activates its session late still gets the message within the reply
    /// timeout; after it, the watch gets what a device gives: 7012 `messageReplyTimedOut`.
    func testAnAppThatActivatesLateGetsTheMessageInsideTheTimeoutAndNotAfterIt() throws {
        let pair = try start(phone: ["--reply-timeout-ms", "3000"])
        let log = try install(on: pair.phone, ["--activate-after-ms", "1000"])
        let reply = try client(pair.watch).call("message.send", ["message": ["n": 1], "wantsReply": true], timeoutSeconds: 30)
        XCTAssertEqual(reply["reply"], ["ok": true], "1 s late is inside the 3 s")
        try waitForLines(log, "didReceiveMessageWithReply")

        let late = try start(phone: ["--reply-timeout-ms", "1000"])
        let lateLog = try install(on: late.phone, ["--activate-after-ms", "4000"])
        let started = Date()
        XCTAssertThrowsError(try client(late.watch).call("message.send", ["message": ["n": 2], "wantsReply": true], timeoutSeconds: 30)) {
            XCTAssertEqual(($0 as? ControlError)?.code, 7012, "\($0)")
        }
        // An upper bound, because the rule is a timeout (1 s here): slack for a loaded host.
        XCTAssertLessThan(Date().timeIntervalSince(started), 8)
        try waitForLines(lateLog, "activationDidComplete", timeout: 20)
        XCTAssertEqual(lines(lateLog, "didReceiveMessageWithReply").count, 0, "the stale message does not reach the app")
    }

    /// An app that crashes at launch: logged with its status and log, the watch's message fails
    /// at once (7014), and the daemon does not launch it again in a tight loop.
    func testAnAppThatCrashesAtLaunchFailsTheMessageAndIsNotRelaunchedAtOnce() throws {
        let pair = try start()
        let log = try install(on: pair.phone, ["--crash-at-start"])
        let phone = try client(pair.phone, subscribed: true)
        let watch = try client(pair.watch)
        XCTAssertThrowsError(try watch.call("message.send", ["message": ["n": 1], "wantsReply": true])) {
            let error = $0 as? ControlError
            XCTAssertEqual(error?.code, 7014, "\($0)")
            XCTAssertTrue(error?.message.contains("exited with status 3 before it attached") == true, "\($0)")
            XCTAssertTrue(error?.message.contains(log) == true, "the message names the log: \($0)")
        }
        let exited = try phone.waitForEvent("app.exited", timeoutSeconds: 10)
        XCTAssertEqual(exited.data["status"], 3)
        XCTAssertEqual(exited.data["reason"], "crashedAtLaunch")
        XCTAssertLessThanOrEqual(try backoff(watch), 1_000, "1 s after the first crash")
        XCTAssertEqual(lines(log, "crashing").count, 1, "one launch")
        XCTAssertTrue(pair.phone.log.contains("exited with status 3 before it attached; its output is in \(log)"), pair.phone.log)
        XCTAssertEqual(try phone.call("status")["role"], "phone", "the daemon keeps serving")

        // Once the second has passed, a message launches it again; it crashes again, and the
        // backoff doubles (docs/app-side.md: 1 s, doubling up to 60 s).
        let deadline = Date().addingTimeInterval(20)
        while true {
            do {
                _ = try watch.call("message.send", ["message": ["n": 3], "wantsReply": true])
                return XCTFail("the crashing app answered")
            } catch let error as ControlError where error.message.contains("not launched again") {
                guard Date() < deadline else { return XCTFail("not launched again within 20 s: \(error)") }
                usleep(20_000)
            } catch let error as ControlError {
                XCTAssertTrue(error.message.contains("exited with status 3 before it attached"), "\(error)")
                break
            }
        }
        let again = try backoff(watch)
        XCTAssertGreaterThan(again, 1_000, "doubled")
        XCTAssertLessThanOrEqual(again, 2_000, "doubled once")
        XCTAssertEqual(lines(log, "crashing").count, 2)
    }

    /// The time the phone app is not launched again for, as the refusal of a message for it says.
    private func backoff(_ watch: ControlClient) throws -> Int64 {
        do {
            _ = try watch.call("message.send", ["message": ["n": 0], "wantsReply": true])
        } catch let error as ControlError {
            XCTAssertEqual(error.code, 7014, "\(error)")
            let after = try XCTUnwrap(error.message.range(of: "not launched again for "), error.message).upperBound
            return try XCTUnwrap(Int64(error.message[after...].prefix { $0.isNumber }), error.message)
        }
        throw AppProcessError("the crashing app answered a message")
    }

    // MARK: Launches by the user, the budget, the end

    func testTheUserLaunchesTheAppTheSystemEndsItAndStoppingTheDaemonLeavesNoApp() throws {
        let pair = try start(clock: .manual)
        let log = try install(on: pair.phone, ["--activate-after-ms", "0"])
        let phone = try client(pair.phone, subscribed: true)
        let launched = try phone.call("app.launch")
        let pid = try XCTUnwrap(launched["pid"]?.intValue)
        try waitForLines(log, "activationDidComplete")
        XCTAssertEqual(try phone.call("status")["appState"], "foreground", "a tap on the icon")
        XCTAssertEqual(try phone.call("app.terminate")["pid"]?.intValue, pid)
        XCTAssertFalse(isAlive(pid), "answered once the app ended and was reaped")
        let ended = try phone.waitForEvent("app.exited", timeoutSeconds: 10)
        XCTAssertEqual(ended.data["reason"], "terminated")
        XCTAssertEqual(ended.data["signal"], .int(Int64(SIGTERM)))
        eventually { try phone.call("status")["appState"] == "notRunning" }

        // A background launch spends its budget (30 s of the phone's clock, moved here) and is ended.
        _ = try client(pair.watch).call("message.send", ["message": ["wake": true]])
        let background = try phone.waitForEvent("app.launched", timeoutSeconds: 10)
        let budgetPid = try XCTUnwrap(background.data["pid"]?.intValue)
        try pair.advanceClock(by: 29.999)
        XCTAssertTrue(isAlive(budgetPid), "a millisecond before its budget is spent")
        try pair.advanceClock(by: 0.001)
        let spent = try phone.waitForEvent("app.exited", timeoutSeconds: 15)
        XCTAssertEqual(spent.data["reason"], "backgroundBudget")
        XCTAssertEqual(spent.data["pid"]?.intValue, budgetPid)
        XCTAssertEqual(spent.data["signal"], .int(Int64(SIGTERM)), "SIGTERM, which the probe does not handle, ends it at once")
        XCTAssertEqual(spent.date?.timeIntervalSince(try XCTUnwrap(background.date)), 30, "the budget, of the phone's time")

        _ = try phone.call("app.launch")
        let running = try XCTUnwrap(try phone.call("status")["apps"]?["app"]?["pid"]?.intValue)
        XCTAssertTrue(isAlive(running))
        pair.stop(keepingLogs: false)
        XCTAssertFalse(isAlive(running), "the daemon ended its app when it stopped")
    }

    func testInstallErrorsNameThePath() throws {
        let pair = try start()
        let phone = try client(pair.phone)
        let plain = pair.phone.home + "/not-a-program"
        XCTAssertTrue(FileManager.default.createFile(atPath: plain, contents: Data("text".utf8), attributes: [.posixPermissions: 0o644]))
        for (command, expected) in [
            ("/nonexistent/app", "/nonexistent/app does not exist"), (plain, "\(plain) is not an executable file"),
            ("relative/app", "must be an absolute path, not 'relative/app'"),
        ] {
            XCTAssertThrowsError(try phone.call("app.install", ["command": [.string(command)]])) {
                XCTAssertEqual(($0 as? ControlError)?.name, "invalidArgument")
                XCTAssertTrue(($0 as? ControlError)?.message.contains(expected) == true, "\($0)")
            }
        }
        XCTAssertThrowsError(try phone.call("app.launch")) { XCTAssertTrue("\($0)".contains("no app is installed"), "\($0)") }
        XCTAssertEqual(try phone.call("app.uninstall")["uninstalled"], false)
        XCTAssertEqual(try phone.call("status")["appState"], "foreground", "without an installed app the daemon plays it")
    }

    // MARK: The watch app, woken for its data

    /// WKWatchConnectivityRefreshBackgroundTask: "Background watch connectivity tasks are
    /// triggered whenever the paired device sends data using" the queued methods.
    func testComplicationUserInfoWakesTheWatchAppInTheBackground() throws {
        let pair = try start()
        let log = try install(on: pair.watch, ["--activate-after-ms", "0"])
        let phone = try client(pair.phone, subscribed: true)
        _ = try phone.call("device.set", ["isComplicationEnabled": true])
        _ = try phone.call("complication.transfer", ["userInfo": ["temperature": 21]])
        XCTAssertEqual(try waitForLines(log, "didReceiveUserInfo")[0]["userInfo"], ["temperature": 21])
        XCTAssertEqual(try waitForLines(log, "launched")[0]["reason"], "backgroundData")
        _ = try phone.waitForEvent("userInfo.didFinish", timeoutSeconds: 10)
        XCTAssertEqual(try client(pair.watch).call("status")["appState"], "background")
    }

    // MARK: Pushes

    /// The app registered for VoIP pushes earlier; the push launches it in the background
    /// ("the system launches or wakes your app and delivers the notification to your app's
    /// PKPushRegistry object"), it reports the call to CallKit, and it keeps running.
    func testAVoIPPushLaunchesTheAppWhichReportsTheCall() throws {
        let pair = try start()
        let log = try install(on: pair.phone, ["--push-types", "voIP", "--report-calls"])
        let phone = try client(pair.phone, subscribed: true)
        let token = try XCTUnwrap(try client(pair.phone).call("push.register", ["types": ["voIP"]])["token"]?.stringValue)
        clients.last?.close()
        let provider = try WatchLinkPushProvider.configure(pair.phone)
        defer { provider.close() }
        XCTAssertEqual(try provider.send(Array(#"{"handle":"alice"}"#.utf8), to: token, pushType: "voip").status, 200)
        XCTAssertEqual(try phone.waitForEvent("app.launched", timeoutSeconds: 10).data["reason"], "push")
        XCTAssertEqual(try waitForLines(log, "didReceiveIncomingPush")[0]["payload"], ["handle": "alice"])
        XCTAssertEqual(try waitForLines(log, "reportedCall")[0]["error"], .null, "CallKit allowed the call")
        let pid = try XCTUnwrap(try phone.call("status")["apps"]?["app"]?["pid"]?.intValue)
        // That the OS does not end the app can only be seen over a while: the completion
        // handler's report reaches phoned within it (an app that did not report is ended then).
        usleep(300_000)
        XCTAssertTrue(isAlive(pid), "reported to CallKit: the app keeps running")
    }

    /// PushKit: "On iOS 13.0 and later, if you fail to report a call to CallKit, the system will
    /// terminate your app. Repeatedly failing to report calls may cause the system to stop
    /// delivering any more VoIP push notifications to your app." Apple gives no number; a phoned
    /// started without options stops after three (docs/app-side.md).
    func testVoIPPushesNotReportedToCallKitEndTheAppAndPastTheLimitAreNotDelivered() throws {
        try checkVoIPPushesAreNotDelivered(after: 3, phone: [])
    }

    func testTheVoIPFailureLimitIsTheOneGiven() throws {
        try checkVoIPPushesAreNotDelivered(after: 1, phone: ["--voip-failure-limit", "1"])
    }

    /// Each of `limit` VoIP pushes the app does not report to CallKit ends it; the next is
    /// not delivered, and the app is not launched for it.
    private func checkVoIPPushesAreNotDelivered(after limit: Int, phone arguments: [String]) throws {
        let pair = try start(phone: arguments)
        let log = try install(on: pair.phone, ["--push-types", "voIP"])
        let phone = try client(pair.phone, subscribed: true)
        let token = try XCTUnwrap(try client(pair.phone).call("push.register", ["types": ["voIP"]])["token"]?.stringValue)
        clients.last?.close()
        let provider = try WatchLinkPushProvider.configure(pair.phone)
        defer { provider.close() }
        for attempt in 1...limit {
            XCTAssertEqual(try provider.send(Array(#"{"n":\#(attempt)}"#.utf8), to: token, pushType: "voip").status, 200)
            let exited = try phone.waitForEvent("app.exited", timeoutSeconds: 15)
            XCTAssertEqual(exited.data["reason"], "voipNotReportedToCallKit", "push \(attempt)")
            try waitForLines(log, "didReceiveIncomingPush", count: attempt)
        }
        let past = limit + 1
        XCTAssertEqual(try provider.send(Array(#"{"n":\#(past)}"#.utf8), to: token, pushType: "voip").status, 200, "APNs still takes it")
        let dropped = try phone.waitForEvent("push.dropped", timeoutSeconds: 10)
        XCTAssertEqual(dropped.data["reason"], "voipNotReportedToCallKit")
        XCTAssertEqual(lines(log, "launched").count, limit, "not launched for push \(past)")
    }

    /// Apple's File Provider push page: "When the system receives the notification, it
    /// automatically calls the signalEnumerator(for:completionHandler:) method": the installed
    /// extension runs, and its completion's error reaches phoned.
    func testAFileProviderPushRunsTheExtensionWhoseErrorReachesPushSignals() throws {
        let pair = try start()
        let log = try install(on: pair.phone, ["--file-provider", "main", "--signal-error", "-1004"], extension: "fileProvider")
        let phone = try client(pair.phone, subscribed: true)
        let token = try XCTUnwrap(try client(pair.phone).call("push.register", ["types": ["fileProvider"]])["token"]?.stringValue)
        clients.last?.close()
        let provider = try WatchLinkPushProvider.configure(pair.phone)
        defer { provider.close() }
        XCTAssertEqual(try provider.sendFileProviderChange(container: "doc-7", domain: "main", to: token).status, 200)
        let launched = try phone.waitForEvent("app.launched", timeoutSeconds: 10)
        XCTAssertEqual(launched.data["program"], "fileProvider")
        XCTAssertEqual(try waitForLines(log, "didSignalEnumerator")[0]["container"], "doc-7")
        let completed = try phone.waitForEvent("fileProvider.signalCompleted", timeoutSeconds: 10)
        XCTAssertEqual(completed.data["error"]?["domain"], "NSFileProviderErrorDomain")
        XCTAssertEqual(completed.data["error"]?["code"], -1004)
        let signal = try XCTUnwrap(try phone.call("push.signals")["signals"]?.arrayValue?.last)
        XCTAssertEqual(signal["completed"], true)
        XCTAssertEqual(signal["error"]?["code"], -1004)
    }

    private func eventually(_ condition: () throws -> Bool, file: StaticString = #filePath, line: UInt = #line) {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if (try? condition()) == true { return }
            usleep(10_000)
        }
        XCTFail("the condition did not hold within 10 s", file: file, line: line)
    }
}
