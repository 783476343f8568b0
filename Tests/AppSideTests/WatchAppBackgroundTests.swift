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

/// The watch app as watchOS runs it, with the example watch app (`Examples/BackgroundWatchApp`,
/// its delegate completing its tasks as Apple's sample "Transferring data with Watch
/// Connectivity" does) launched by watchd: background tasks, their budget, suspension, and the
/// launch policy (docs/app-side.md, "The watch app's background life").
final class WatchAppBackgroundTests: LaunchedAppTestCase {
    /// Installs the example as the watch app; its output goes to the returned log.
    @discardableResult
    private func installExample(on pair: WatchLinkPair, _ arguments: [String] = []) throws -> String {
        let command = [DaemonBinaries.path("WatchLinkExampleBackgroundWatch")] + arguments
        let answer = try client(pair.watch).call(
            "app.install",
            [
                "command": .array(command.map(JSONValue.string)),
                "environment": ["LSAN_OPTIONS": "detect_leaks=0"],
            ])
        return try XCTUnwrap(answer["log"]?.stringValue)
    }

    private func transfer(_ phone: ControlClient, _ n: Int64) throws {
        _ = try phone.call("userInfo.transfer", ["userInfo": ["n": .int(n)]])
    }

    /// The example's lines in its log (`example <time> <text>`), in order.
    private func exampleLines(_ log: String) -> [(time: Double, text: String)] {
        ProgramOutput.exampleLines((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")
    }

    /// Waits until the example has written `count` lines with `text`.
    @discardableResult
    private func waitForLine(_ log: String, _ text: String, count: Int = 1, timeout: Double = 20) throws -> [(time: Double, text: String)] {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let found = exampleLines(log).filter { $0.text == text }
            if found.count >= count { return found }
            usleep(10_000)
        }
        throw WatchLinkTestingError(
            "\(count) '\(text)' lines did not come within \(timeout) s; \(log):\n\(exampleLines(log).map(\.text).joined(separator: "\n"))")
    }

    /// Whether the process is stopped (`T` in /proc/PID/stat), as a suspended app is.
    private func isStopped(_ pid: Int64) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return stat[stat.index(close, offsetBy: 2)] == "T"
    }

    private func waitUntil(_ what: String, timeout: Double = 10, _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return }
            usleep(10_000)
        }
        XCTFail("\(what) did not happen within \(timeout) s")
    }

    // MARK: A background run as Apple's sample completes it

    /// `WKWatchConnectivityRefreshBackgroundTask`: "when this background watch connectivity task
    /// is triggered, the system launches your app in the background ... and passes the task
    /// object to your app delegate's handle(_:) method"; `hasContentPending`: "true if the session
    /// has received data in the background but has not yet delivered that data to the session's
    /// delegate"; `setTaskCompleted()`: "The system suspends the extension as soon as all
    /// background tasks are complete."
    func testTheAppIsLaunchedForUserInfoCompletesItsTaskAsTheSampleDoesAndIsSuspended() throws {
        let pair = try start(watch: ["--launch-policy", "immediate"])
        let log = try installExample(on: pair)
        let watch = try client(pair.watch, subscribed: true)
        let phone = try client(pair.phone, subscribed: true)
        try transfer(phone, 1)

        let launched = try watch.waitForEvent("app.launched", timeoutSeconds: 20)
        XCTAssertEqual(launched.data["reason"], "backgroundData")
        XCTAssertEqual(launched.data["state"], "background")
        let handed = try watch.waitForEvent("backgroundTask.handed", timeoutSeconds: 20)
        XCTAssertEqual(handed.data["tasks"]?.arrayValue?.first?["kind"], "watchConnectivity")
        _ = try watch.waitForEvent("backgroundTask.completed", timeoutSeconds: 20)
        _ = try watch.waitForEvent("app.suspended", timeoutSeconds: 20)
        _ = try phone.waitForEvent("userInfo.didFinish", timeoutSeconds: 20)

        try waitForLine(log, "completed 1 task(s)")
        let texts = exampleLines(log).map(\.text)
        // The delegate's calls run on the main queue and the session's on its own, as on a watch:
        // each in its order, and the task completed only once it is handed and nothing is pending.
        for order in [
            ["launched in the background", "task watchConnectivity", "completed 1 task(s)"],
            ["userInfo n=1", "hasContentPending false", "completed 1 task(s)"],
        ] {
            let positions = order.map { texts.firstIndex(of: $0) }
            XCTAssertFalse(positions.contains(nil), "\(texts)")
            XCTAssertEqual(positions.compactMap { $0 }, positions.compactMap { $0 }.sorted(), "in this order: \(texts)")
        }
        XCTAssertTrue(texts.contains("activated, hasContentPending true"), "the userInfo waited for the activation: \(texts)")
        XCTAssertTrue(texts.contains("hasContentPending true"), "the observation saw it arrive: \(texts)")

        let pid = try XCTUnwrap(launched.data["pid"]?.intValue)
        try waitUntil("the suspended app stopped") { isStopped(pid) }
        let status = try watch.call("status")
        XCTAssertEqual(status["backgroundTasks"]?["suspended"], true)
        XCTAssertEqual(status["backgroundTasks"]?["tasks"]?.arrayValue?.first?["state"], "completed")
        XCTAssertEqual(status["apps"]?["app"]?["suspended"], true)

        // More data wakes it with a task of its own.
        try transfer(phone, 2)
        XCTAssertEqual(try watch.waitForEvent("app.resumed", timeoutSeconds: 20).data["reason"], "backgroundData")
        _ = try watch.waitForEvent("app.suspended", timeoutSeconds: 20)
        try waitForLine(log, "completed 1 task(s)", count: 2)
        XCTAssertEqual(exampleLines(log).filter { $0.text == "launched in the background" }.count, 1, "woken, not launched again")
        XCTAssertTrue(exampleLines(log).contains { $0.text == "userInfo n=2" })
    }

    /// "An uncompleted task consumes the background-task time budget that watchOS allocates to
    /// the app, which results in a crash when the budget runs out" (Apple's sample); "Exhausted
    /// wall time allowance of 15.00 seconds" (watchOS crash reports). What the delegate took is
    /// not delivered again; what it had not taken arrives at its next launch.
    func testAnAppThatNeverCompletesItsTaskIsEndedByTheWatchdogAtItsBudget() throws {
        // The shipped budget, 15 s of the watch's time: a manual clock moves through it.
        let pair = try start(watch: ["--launch-policy", "immediate"], clock: .manual)
        let log = try installExample(on: pair, ["--never-complete", "--stall-on", "2"])
        let watch = try client(pair.watch, subscribed: true)
        let phone = try client(pair.phone)
        for n in 1...3 { try transfer(phone, Int64(n)) }

        let launched = try watch.waitForEvent("app.launched", timeoutSeconds: 20)
        // The delegate took n=1 and hangs on n=2: then the budget runs.
        try waitForLine(log, "stalls on n=2")
        try pair.advanceClock(by: 13.999)
        XCTAssertEqual(try watch.call("status")["backgroundTasks"]?["budgetLeftMs"]?.intValue, 1_001)
        try pair.advanceClock(by: 0.001)
        let expiring = try watch.waitForEvent("backgroundTask.expiring", timeoutSeconds: 20)
        try pair.advanceClock(by: 0.999)
        XCTAssertEqual(try watch.call("status")["apps"]?["app"]?["running"], true, "a millisecond before the budget is spent")
        try pair.advanceClock(by: 0.001)
        let expired = try watch.waitForEvent("backgroundTask.expired", timeoutSeconds: 20)
        let exited = try watch.waitForEvent("app.exited", timeoutSeconds: 20)
        XCTAssertEqual(exited.data["reason"], "backgroundTaskWatchdog")
        XCTAssertEqual(exited.data["signal"], .int(Int64(SIGKILL)), "ended at once, as the watchdog does")
        XCTAssertEqual(expired.data["kind"], "watchConnectivity")
        XCTAssertEqual(try milliseconds(from: launched, to: exited), 15_000, "the budget, of the watch's time")
        XCTAssertEqual(try milliseconds(from: expiring, to: expired), 1_000, "the expiration handler's second")
        try waitForLine(log, "task expiring")
        try waitForLine(log, "stalls on n=2")
        let daemonLog = try String(contentsOfFile: pair.watch.logPath, encoding: .utf8)
        XCTAssertTrue(
            daemonLog.contains(
                "the watchdog ends the app (pid \(launched.data["pid"]?.intValue ?? 0)): watchConnectivity task 1 not completed within the background budget of 15000 ms"
            ),
            daemonLog)
        let trace = try watch.call("trace.get", ["limit": 100_000])["entries"]?.arrayValue ?? []
        XCTAssertTrue(trace.contains { $0["kind"] == "app" && $0["name"] == "backgroundTask.expired" })
        XCTAssertTrue(trace.contains { $0["kind"] == "app" && $0["reason"] == "backgroundTaskWatchdog" })

        // The user opens the app: it gets what its delegate had not taken, and only that.
        try installExample(on: pair)
        _ = try watch.call("app.launch")
        try waitForLine(log, "userInfo n=3")
        let received = exampleLines(log).map(\.text).filter { $0.hasPrefix("userInfo") }
        XCTAssertEqual(
            received, ["userInfo n=1", "userInfo n=2", "userInfo n=2", "userInfo n=3"],
            "n=1 was taken before the watchdog; n=2 and n=3 come at the next launch")
    }

    // MARK: The launch policy

    /// SplitMix64, as its paper gives it (Steele, Lea and Flood 2014): the first draw of `seed`.
    private func firstDraw(seed: UInt64) -> UInt64 {
        var z = seed &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// Under the watch policy data waits for the run the policy draws, no sooner; the seed is
    /// logged and replays the delays; the next run within the hour waits for the hour (one run
    /// an hour without the complication, WWDC 2016 218) or for the user, who opens the app.
    func testTheWatchPolicyDefersTheLaunchFromItsSeedAndTheUserGetsTheDataAtOnce() throws {
        // The shipped window, 15 minutes of the watch's time: a manual clock moves through it.
        let window: Int64 = 900_000
        let arguments = ["--launch-policy", "watch", "--launch-seed", "42"]
        let pair = try start(watch: arguments, clock: .manual)
        let log = try installExample(on: pair)
        let watch = try client(pair.watch, subscribed: true)
        let phone = try client(pair.phone)
        try transfer(phone, 1)

        let scheduled = try watch.waitForEvent("app.wakeScheduled", timeoutSeconds: 20)
        let delay = try XCTUnwrap(scheduled.data["inMs"]?.intValue)
        XCTAssertEqual(UInt64(delay), firstDraw(seed: 42) % UInt64(window + 1), "the seed's first draw over the window")
        try pair.advanceClock(by: Double(delay - 1) / 1_000)
        XCTAssertEqual(try watch.call("status")["apps"]?["app"]?["running"], false, "no sooner than the policy allows")
        try pair.advanceClock(by: 0.001)
        let launched = try watch.waitForEvent("app.launched", timeoutSeconds: 20)
        XCTAssertEqual(launched.data["reason"], "backgroundData")
        XCTAssertEqual(try milliseconds(from: scheduled, to: launched), delay, "at the time the policy drew")
        _ = try watch.waitForEvent("app.suspended", timeoutSeconds: 20)
        let daemonLog = try String(contentsOfFile: pair.watch.logPath, encoding: .utf8)
        XCTAssertTrue(daemonLog.contains("seed 42 (replay with --launch-seed 42)"), daemonLog)

        // The hour's one run is spent: the next data waits, until the user opens the app.
        try transfer(phone, 2)
        let next = try watch.waitForEvent("app.wakeScheduled", timeoutSeconds: 20)
        XCTAssertGreaterThan(next.data["inMs"]?.intValue ?? 0, 3_500_000, "an hour after the first run")
        XCTAssertFalse(exampleLines(log).contains { $0.text == "userInfo n=2" })
        _ = try watch.call("app.launch")
        XCTAssertEqual(try watch.waitForEvent("app.resumed", timeoutSeconds: 20).data["reason"], "user")
        try waitForLine(log, "userInfo n=2")
        try waitForLine(log, "active")

        let trace = try watch.call("trace.get", ["limit": 100_000])["entries"]?.arrayValue ?? []
        let wakes = trace.filter { $0["name"] == "app.wakeScheduled" }
        XCTAssertEqual(wakes.first?["seed"], 42)
        XCTAssertEqual(wakes.first?["inMs"]?.intValue, delay)
        XCTAssertTrue(trace.contains { $0["name"] == "launched" && $0["reason"] == "backgroundData" })
        XCTAssertTrue(trace.contains { $0["name"] == "app.resumed" && $0["reason"] == "user" })

        // The same seed, another pair: the same delay.
        let again = try start(watch: arguments, clock: .manual)
        try installExample(on: again)
        let replay = try client(again.watch, subscribed: true)
        try transfer(try client(again.phone), 1)
        XCTAssertEqual(try replay.waitForEvent("app.wakeScheduled", timeoutSeconds: 20).data["inMs"]?.intValue, delay)
    }

    /// Data for an app that is not running waits for the run the policy drew, and no longer than
    /// until the user opens the app.
    func testTheUserOpeningTheAppGetsItTheDataThePolicyDeferred() throws {
        let window: Int64 = 3_600_000
        let pair = try start(watch: ["--launch-policy", "watch", "--launch-seed", "42", "--launch-window-ms", String(window)])
        let log = try installExample(on: pair)
        let watch = try client(pair.watch, subscribed: true)
        try transfer(try client(pair.phone), 1)
        let delay = try XCTUnwrap(try watch.waitForEvent("app.wakeScheduled", timeoutSeconds: 20).data["inMs"]?.intValue)
        XCTAssertEqual(UInt64(delay), firstDraw(seed: 42) % UInt64(window + 1), "50 minutes and more, for this seed")
        XCTAssertEqual(try watch.call("status")["apps"]?["app"]?["running"], false, "not launched before its time")

        let opened = try watch.call("app.launch")
        XCTAssertEqual(opened["reason"], "user")
        try waitForLine(log, "launched in the foreground")
        try waitForLine(log, "userInfo n=1")
        XCTAssertNil(try watch.call("status")["backgroundTasks"]?["nextWakeInMs"], "the deferred run is not needed any more")
    }

    // MARK: Scheduled refresh

    /// `scheduleBackgroundRefresh(withPreferredDate:userInfo:scheduledCompletion:)`: the task
    /// comes at, not before, its preferred date, with its userInfo, and wakes the suspended app.
    func testAScheduledBackgroundRefreshRunsAtItsPreferredDate() throws {
        // Fifteen minutes ahead, of the watch's time: a manual clock moves through them.
        let pair = try start(watch: ["--launch-policy", "immediate"], clock: .manual)
        let log = try installExample(on: pair, ["--refresh-after", "900"])
        let watch = try client(pair.watch, subscribed: true)
        try transfer(try client(pair.phone), 1)
        let suspended = try watch.waitForEvent("app.suspended", timeoutSeconds: 20)
        let inMs = try XCTUnwrap(watch.call("status")["backgroundTasks"]?["scheduled"]?[0]?["inMs"]?.intValue)
        XCTAssertEqual(Double(inMs), 900_000, accuracy: 1_000, "the app's fifteen minutes, from its own clock's now")
        try pair.advanceClock(by: Double(inMs - 1) / 1_000)
        XCTAssertEqual(try watch.call("status")["apps"]?["app"]?["suspended"], true, "not before the preferred date")
        try pair.advanceClock(by: 0.001)
        let resumed = try watch.waitForEvent("app.resumed", timeoutSeconds: 20)
        XCTAssertEqual(resumed.data["reason"], "backgroundRefresh")
        XCTAssertEqual(try milliseconds(from: suspended, to: resumed), inMs, "at the preferred date of the watch's time")
        try waitForLine(log, "task applicationRefresh, purpose example")
        // The schedule's completion ran once the app, suspended right after it asked, ran again.
        XCTAssertTrue(exampleLines(log).contains { $0.text.hasPrefix("refresh scheduled for ") })
        _ = try watch.waitForEvent("app.suspended", timeoutSeconds: 20)
    }
}
