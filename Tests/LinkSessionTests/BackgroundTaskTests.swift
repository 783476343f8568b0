import LinkSession
import WireProtocol
import XCTest

/// The watch app's background life (BackgroundTasks.swift) with a fake clock: tasks handed,
/// completed and expired, suspension, and when the launch policy runs the app. The expected
/// values are Apple's and the field reports' (docs/app-side.md, "The watch app's background life").
final class BackgroundTaskTests: XCTestCase {
    private let budget: Int64 = 15_000

    /// A linked, activated pair whose watch app is an installed program that is not running.
    private func pair(
        policy: BackgroundLaunchPolicy = BackgroundLaunchPolicy(mode: .immediate, seed: 0),
        wallClock: @escaping @Sendable () -> Double = { 1_700_000_000 }
    ) -> SessionPair {
        let pair = SessionPair { configuration in
            configuration.launchPolicy = policy
            configuration.wallClock = wallClock
        }
        pair.linkUp()
        pair.activateBoth()
        pair.command(.watch, .setAppInstalled(true))
        return pair
    }

    private func launches(_ pair: SessionPair) -> [LaunchReason] {
        pair.launches.filter { $0.role == .watch }.map(\.reason)
    }

    private func processActions(_ pair: SessionPair) -> [AppProcessAction] {
        pair.processActions.filter { $0.role == .watch }.map(\.action)
    }

    private func events(_ pair: SessionPair) -> [BackgroundTaskNotification] {
        pair.watchNotifications.compactMap { if case .backgroundTask(let event) = $0 { return event } else { return nil } }
    }

    private func handed(_ pair: SessionPair) -> [BackgroundTask] {
        events(pair).flatMap { if case .handed(let tasks) = $0 { return tasks } else { return [] } }
    }

    private func userInfoReceived(_ pair: SessionPair) -> [UInt64] {
        pair.watchNotifications.compactMap { if case .userInfoReceived(let seq, _, _) = $0 { return seq } else { return nil } }
    }

    private func wakeDelays(_ pair: SessionPair) -> [Int64] {
        events(pair).compactMap { if case .wakeScheduled(_, let delay) = $0 { return delay } else { return nil } }
    }

    /// The launched app's WatchKit and session attach, as `WKApplicationMain` and
    /// `WCSession.activate()` do.
    private func appComesUp(_ pair: SessionPair) {
        pair.command(.watch, .attachWatchKit(.background, launchedByTheOS: true))
        pair.command(.watch, .attachApp(.background, .all, launchedByTheOS: true))
    }

    private func sendUserInfo(_ pair: SessionPair, _ n: Int64) {
        pair.command(.phone, .transferUserInfo(payload(["n": .integer(n)])))
    }

    // MARK: A background run

    /// `WKWatchConnectivityRefreshBackgroundTask`: "when this background watch connectivity task is
    /// triggered, the system launches your app in the background ... and passes the task object to
    /// your app delegate's handle(_:) method"; `setTaskCompleted()`: "The system suspends the
    /// extension as soon as all background tasks are complete."
    func testDataLaunchesTheAppWithATaskAndCompletingItSuspendsTheApp() throws {
        let pair = pair()
        sendUserInfo(pair, 1)
        XCTAssertEqual(launches(pair), [.backgroundData])
        XCTAssertTrue(handed(pair).isEmpty, "handed once the app's WatchKit is attached")
        XCTAssertTrue(userInfoReceived(pair).isEmpty, "delivered once the app's session attaches")

        appComesUp(pair)
        let task = try XCTUnwrap(handed(pair).first)
        XCTAssertEqual(task.kind, .watchConnectivity)
        XCTAssertEqual(userInfoReceived(pair).count, 1)
        XCTAssertEqual(pair.watch.appState, .background)
        XCTAssertTrue(processActions(pair).isEmpty, "running while its task is open")

        pair.advance(by: 2_000)
        let done = pair.command(.watch, .completeBackgroundTask(id: task.id))
        XCTAssertEqual(pair.result(done), .success(.empty))
        XCTAssertEqual(processActions(pair), [.suspend])
        XCTAssertTrue(events(pair).contains(.suspended))
        XCTAssertEqual(pair.watch.appState, .background, "suspended is a background app that runs no code")
        XCTAssertFalse(pair.phone.isReachable)

        pair.clearNotifications()
        sendUserInfo(pair, 2)
        XCTAssertEqual(processActions(pair), [.suspend, .resume], "the data wakes it")
        let resumed = try XCTUnwrap(pair.watchNotifications.firstIndex(of: .backgroundTask(.resumed(.backgroundData))))
        let received = try XCTUnwrap(pair.watchNotifications.firstIndex { if case .userInfoReceived = $0 { return true } else { return false } })
        XCTAssertLessThan(resumed, received, "a suspended app receives nothing until it is resumed")
        XCTAssertEqual(launches(pair), [.backgroundData], "resumed, not launched again")
        XCTAssertEqual(handed(pair).map(\.kind), [.watchConnectivity], "with a task of its own")
        XCTAssertEqual(userInfoReceived(pair).count, 1, "and then it receives")
    }

    /// A run's budget: 15 s of wall time, then the watchdog ends the app ("Exhausted wall time
    /// allowance of 15.00 seconds"); `expirationHandler` "when the available runtime for a
    /// background task is about to expire".
    func testAnUncompletedTaskExpiresAtTheBudgetAndTheWatchdogEndsTheApp() throws {
        let pair = pair()
        sendUserInfo(pair, 1)
        appComesUp(pair)
        let task = try XCTUnwrap(handed(pair).first)

        pair.advance(by: budget - 1_001)
        XCTAssertFalse(events(pair).contains { if case .expiring = $0 { return true } else { return false } })
        pair.advance(by: 1)
        XCTAssertTrue(events(pair).contains(.expiring([task])), "a second before the budget runs out")
        pair.advance(by: 999)
        XCTAssertTrue(processActions(pair).isEmpty, "14,999 ms: still within the budget")
        pair.advance(by: 1)
        guard case .end(let reason, let detail)? = processActions(pair).last else {
            return XCTFail("the watchdog ends the app at 15,000 ms: \(processActions(pair))")
        }
        XCTAssertEqual(reason, "backgroundTaskWatchdog")
        XCTAssertTrue(detail.contains("watchConnectivity task \(task.id)"), detail)
        var expired = task
        expired.state = .expired
        XCTAssertTrue(events(pair).contains(.expired(expired)))
        assertInvalid(pair.result(pair.command(.watch, .completeBackgroundTask(id: task.id))), containing: "expired")
    }

    /// What the app's delegate took stays delivered; what it had not taken waits for the next
    /// launch, and the ended app is not launched again and again for it.
    func testAfterTheWatchdogTheUntakenDataWaitsForTheNextLaunch() throws {
        let pair = pair()
        sendUserInfo(pair, 1)
        sendUserInfo(pair, 2)
        appComesUp(pair)
        let seqs = userInfoReceived(pair)
        XCTAssertEqual(seqs.count, 2)
        pair.command(.watch, .acknowledgeDelivery(upTo: seqs[0]))
        pair.advance(by: budget)
        pair.command(.watch, .detachApp)
        pair.command(.watch, .detachWatchKit)
        XCTAssertEqual(pair.watch.appState, .notRunning)
        XCTAssertEqual(launches(pair), [.backgroundData], "not woken again for the data it had")

        pair.clearNotifications()
        sendUserInfo(pair, 3)
        XCTAssertEqual(launches(pair), [.backgroundData, .backgroundData], "new data wakes it")
        appComesUp(pair)
        XCTAssertEqual(userInfoReceived(pair).count, 2, "the untaken item and the new one")
        XCTAssertFalse(userInfoReceived(pair).contains(seqs[0]), "the taken one is not delivered again")
    }

    func testCompletingAnUnknownOrUnhandedTaskIsRefused() throws {
        let pair = pair()
        assertInvalid(pair.result(pair.command(.watch, .completeBackgroundTask(id: 42))), containing: "no background task 42")
        sendUserInfo(pair, 1)
        let task = try XCTUnwrap(pair.watch.backgroundTaskStatus(now: pair.now)?.tasks.first)
        XCTAssertEqual(task.state, .pending)
        assertInvalid(pair.result(pair.command(.watch, .completeBackgroundTask(id: task.id))), containing: "not handed")
        appComesUp(pair)
        XCTAssertEqual(pair.result(pair.command(.watch, .completeBackgroundTask(id: task.id))), .success(.empty))
        assertInvalid(pair.result(pair.command(.watch, .completeBackgroundTask(id: task.id))), containing: "completed already")
    }

    // MARK: The foreground

    func testAForegroundAppTakesDataWithoutTasksAndOpeningWakesASuspendedApp() throws {
        let pair = pair()
        sendUserInfo(pair, 1)
        appComesUp(pair)
        pair.command(.watch, .completeBackgroundTask(id: try XCTUnwrap(handed(pair).first).id))
        XCTAssertEqual(processActions(pair), [.suspend])

        pair.command(.watch, .setAppState(.foreground))
        XCTAssertEqual(processActions(pair), [.suspend, .resume], "opening the app resumes it")
        XCTAssertTrue(events(pair).contains(.resumed(.user)))
        pair.clearNotifications()
        sendUserInfo(pair, 2)
        XCTAssertEqual(userInfoReceived(pair).count, 1)
        XCTAssertTrue(handed(pair).isEmpty, "a foreground app gets no background task")

        pair.command(.watch, .setAppState(.background))
        XCTAssertEqual(processActions(pair), [.suspend, .resume, .suspend], "leaving the foreground with nothing open suspends it")
    }

    /// A workout session keeps the app running with a high priority in the background: reachable,
    /// with no run's budget and no suspension until it ends.
    func testAWorkoutKeepsTheAppRunningAndReachableInTheBackground() throws {
        let pair = pair()
        pair.command(.watch, .attachWatchKit(.foreground, launchedByTheOS: true))
        pair.command(.watch, .attachApp(.foreground, .all, launchedByTheOS: true))
        XCTAssertEqual(pair.result(pair.command(.watch, .setWorkout(true))), .success(.empty))
        pair.command(.watch, .setAppState(.background))
        XCTAssertTrue(processActions(pair).isEmpty, "not suspended during the workout")
        XCTAssertTrue(pair.watch.isReachable)
        XCTAssertTrue(pair.phone.isReachable, "the phone reaches the watch app in its workout")
        sendUserInfo(pair, 1)
        pair.advance(by: budget * 2)
        XCTAssertTrue(processActions(pair).isEmpty, "no background budget while the workout runs")

        pair.command(.watch, .setWorkout(false))
        XCTAssertEqual(processActions(pair), [.suspend], "the workout over, the background's rules apply again")
        XCTAssertFalse(pair.phone.isReachable)
        XCTAssertTrue(pair.watchNotifications.contains(.workoutStateDidChange(false)))
    }

    func testAWorkoutNeedsTheAppRunning() {
        let pair = pair()
        guard case .failure(.invalidArgument(let message))? = pair.result(pair.command(.watch, .setWorkout(true))) else {
            return XCTFail("refused while the watch app is not running")
        }
        XCTAssertTrue(message.contains("not running"), message)
    }

    /// A process started outside the emulated OS cannot be stopped: it keeps running.
    func testAnAppTheOSDidNotLaunchIsNeverSuspended() throws {
        let pair = pair()
        pair.command(.watch, .attachWatchKit(.foreground, launchedByTheOS: false))
        pair.command(.watch, .attachApp(.foreground, .all))
        pair.command(.watch, .setAppState(.background))
        XCTAssertTrue(processActions(pair).isEmpty)
    }

    // MARK: The watch policy

    private func watchPolicy(seed: UInt64, window: Int64 = 60_000) -> BackgroundLaunchPolicy {
        BackgroundLaunchPolicy(mode: .watch, seed: seed, windowMilliseconds: window)
    }

    /// The watch policy defers a run for data within its window, not before its draw, and the
    /// same seed draws the same delays.
    func testTheWatchPolicyDefersDataWithinItsWindowAndASeedReplaysIt() throws {
        let first = pair(policy: watchPolicy(seed: 7))
        sendUserInfo(first, 1)
        let delay = try XCTUnwrap(wakeDelays(first).first)
        XCTAssertTrue((0...60_000).contains(delay), "\(delay)")
        XCTAssertTrue(launches(first).isEmpty || delay == 0)
        first.advance(by: delay - 1)
        XCTAssertTrue(launches(first).isEmpty || delay == 0, "not before its time")
        first.advance(by: 1)
        XCTAssertEqual(launches(first), [.backgroundData])

        let again = pair(policy: watchPolicy(seed: 7))
        sendUserInfo(again, 1)
        XCTAssertEqual(wakeDelays(again), [delay], "the same seed, the same delay")
        let delays = (1...8).map { seed -> Int64 in
            let other = pair(policy: watchPolicy(seed: UInt64(seed) * 1_000_003))
            sendUserInfo(other, 1)
            return wakeDelays(other).first ?? -1
        }
        XCTAssertGreaterThan(Set(delays).count, 4, "seeds draw different delays: \(delays)")
    }

    /// "If your complication is not active, your app is guaranteed to be woken at least once an
    /// hour" / four times with it (WWDC 2016 218): the allowance of background runs an hour.
    func testAHourlyAllowanceDefersFurtherRunsUntilTheAppIsOpened() throws {
        let pair = pair(policy: watchPolicy(seed: 3, window: 0))
        sendUserInfo(pair, 1)
        XCTAssertEqual(launches(pair), [.backgroundData], "a zero window: at once")
        appComesUp(pair)
        pair.command(.watch, .completeBackgroundTask(id: try XCTUnwrap(handed(pair).first).id))
        XCTAssertEqual(processActions(pair), [.suspend])

        pair.advance(by: 60_000)
        pair.clearNotifications()
        sendUserInfo(pair, 2)
        XCTAssertEqual(wakeDelays(pair).last, 3_540_000, "one run an hour without a complication: an hour after the first")
        pair.advance(by: 3_539_999)
        XCTAssertEqual(processActions(pair), [.suspend], "not before the hour is over")
        XCTAssertTrue(userInfoReceived(pair).isEmpty)
        pair.command(.watch, .setAppState(.foreground))
        XCTAssertEqual(userInfoReceived(pair).count, 1, "opened, the app gets it at once")
        pair.advance(by: 1)
        XCTAssertEqual(processActions(pair), [.suspend, .resume], "and no background run follows")
    }

    /// With the complication on the watch face, four runs an hour ("If your complication is
    /// active, your app can be woken up at least four times an hour", WWDC 2016 218).
    func testTheComplicationMakesTheAllowanceFourRunsAnHour() throws {
        let pair = pair(policy: watchPolicy(seed: 5, window: 0))
        pair.command(.phone, .setDeviceFlags([.isComplicationEnabled: true]))
        sendUserInfo(pair, 0)
        appComesUp(pair)
        for n in 1...4 {
            if n > 1 { sendUserInfo(pair, Int64(n)) }
            pair.command(.watch, .completeBackgroundTask(id: try XCTUnwrap(handed(pair).last).id))
            pair.advance(by: 1_000)
        }
        XCTAssertEqual(processActions(pair).filter { $0 == .resume }.count, 3, "the first run was a launch, three wakes followed")
        XCTAssertEqual(pair.watch.backgroundTaskStatus(now: pair.now)?.launchesPerHour, 4)
        sendUserInfo(pair, 5)
        XCTAssertEqual(wakeDelays(pair).last, 3_600_000 - 4_000, "the fifth waits for the hour's first to be an hour old")
    }

    func testComplicationUserInfoWakesTheAppAtOnceOutsideTheAllowance() throws {
        let pair = pair(policy: watchPolicy(seed: 3, window: 600_000))
        pair.command(.phone, .setDeviceFlags([.isComplicationEnabled: true]))
        pair.command(.phone, .transferComplicationUserInfo(payload(["temperature": .integer(21)])))
        XCTAssertEqual(launches(pair), [.backgroundData], "at once: \"the system will launch the Watch App Extension in the background\"")
        XCTAssertEqual(pair.watch.backgroundTaskStatus(now: pair.now)?.launchesThisHour, 0, "not counted")
    }

    // MARK: Scheduled tasks

    /// `scheduleBackgroundRefresh(withPreferredDate:...)`: at, not before, the preferred date; a
    /// second one "cancels the first"; in the foreground at the scheduled time "the system ignores
    /// the task".
    func testAScheduledRefreshRunsAtItsPreferredDateAndNotInTheForeground() throws {
        let wall = WallClock(1_700_000_000)
        let pair = pair(wallClock: { wall.seconds })
        let scheduled = pair.command(.watch, .scheduleBackgroundTask(.applicationRefresh, preferredDate: 1_700_000_900, userInfo: Array("{\"k\":1}".utf8)))
        XCTAssertEqual(pair.result(scheduled), .success(.taskScheduled(inMilliseconds: 900_000)))
        pair.command(.watch, .scheduleBackgroundTask(.applicationRefresh, preferredDate: 1_700_000_600, userInfo: nil))
        pair.advance(by: 599_999)
        XCTAssertTrue(launches(pair).isEmpty, "not before its preferred date")
        pair.advance(by: 1)
        XCTAssertEqual(launches(pair), [.backgroundRefresh])
        appComesUp(pair)
        let task = try XCTUnwrap(handed(pair).first)
        XCTAssertEqual(task.kind, .applicationRefresh)
        XCTAssertNil(task.userInfo, "the replacing schedule's userInfo")
        pair.command(.watch, .completeBackgroundTask(id: task.id))
        pair.advance(by: 300_000)
        XCTAssertEqual(processActions(pair), [.suspend], "the second schedule replaced the first")

        pair.command(.watch, .setAppState(.foreground))
        pair.command(.watch, .scheduleBackgroundTask(.snapshot, preferredDate: 1_700_000_000, userInfo: nil))
        pair.advance(by: 0)
        XCTAssertTrue(events(pair).contains { if case .ignored(let ignored) = $0 { return ignored.kind == .snapshot } else { return false } })
        XCTAssertEqual(handed(pair).count, 1)
    }

    /// The `WatchKit` library schedules by the time from now (its app's date is of the app's
    /// own clock): the task is due that long after the device's now, to the millisecond, and a
    /// delay past a year is a year.
    func testARefreshScheduledByItsDelayIsDueThatLongFromNow() throws {
        let pair = pair()
        let scheduled = pair.command(.watch, .scheduleBackgroundTaskAfter(.applicationRefresh, milliseconds: 900_000, userInfo: nil))
        XCTAssertEqual(pair.result(scheduled), .success(.taskScheduled(inMilliseconds: 900_000)))
        pair.advance(by: 899_999)
        XCTAssertTrue(launches(pair).isEmpty, "not before its time")
        pair.advance(by: 1)
        XCTAssertEqual(launches(pair), [.backgroundRefresh])
        let far = pair.command(.watch, .scheduleBackgroundTaskAfter(.snapshot, milliseconds: Int64.max, userInfo: nil))
        XCTAssertEqual(pair.result(far), .success(.taskScheduled(inMilliseconds: 366 * 24 * 3_600_000)))
    }

    func testTheWatchPolicyDefersAScheduledTaskPastTheHourlyAllowance() throws {
        let pair = pair(policy: watchPolicy(seed: 1, window: 0))
        sendUserInfo(pair, 1)
        appComesUp(pair)
        pair.command(.watch, .completeBackgroundTask(id: try XCTUnwrap(handed(pair).first).id))
        pair.command(.watch, .scheduleBackgroundTask(.applicationRefresh, preferredDate: 1_700_000_060, userInfo: nil))
        pair.advance(by: 60_000)
        XCTAssertEqual(processActions(pair), [.suspend], "the hour's one run is spent")
        pair.advance(by: 3_540_000)
        XCTAssertEqual(processActions(pair), [.suspend, .resume], "an hour after the first run")
        XCTAssertEqual(handed(pair).last?.kind, .applicationRefresh)
    }

    // MARK: Helpers

    private func assertInvalid(
        _ result: Result<CommandResult, SessionError>?, containing text: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        guard case .failure(.invalidArgument(let message))? = result else {
            return XCTFail("expected invalidArgument, got \(String(describing: result))", file: file, line: line)
        }
        XCTAssertTrue(message.contains(text), message, file: file, line: line)
    }
}

/// A wall clock a test sets.
private final class WallClock: @unchecked Sendable {
    var seconds: Double
    init(_ seconds: Double) { self.seconds = seconds }
}
