import LinkSession
import LinkStore
import WireProtocol

/// The watch's emulated OS for an installed watch app, and the app's process (docs/app-side.md,
/// "The emulated OS launches the app" and "The watch app's background life"), with the checks
/// of that background life.
///
/// The OS acts on the session's actions as watchd does: `.launchApp` starts the app's process,
/// which attaches (its WatchKit, then its session) in the state it was launched in;
/// `.appProcess` stops it (suspend), lets it run (resume) or ends it at once (the watchdog), and
/// its connections closing detach it. The process completes the tasks handed to it after a
/// drawn delay, or never, schedules refresh and snapshot tasks at drawn dates (`inMs`, as the
/// `WatchKit` library sends `scheduleBackgroundRefresh`), and runs no code while it is stopped
/// (what it would do waits for its resumption). The user opens the app, sends it to the
/// background and quits it.
///
/// The checks state Apple's figures and the project's documented rules themselves rather than
/// read them from the session's configuration: a changed default is a failure.
final class SimWatchApp {
    /// The world's events of the watch app.
    enum Event {
        /// The launched process attaches (WatchKit, then its session).
        case attach(launch: Int)
        /// The app completes a task (`setTaskCompletedWithSnapshot(_:)`).
        case complete(launch: Int, task: UInt64)
        /// The app schedules a refresh or snapshot task.
        case schedule(launch: Int)
        /// The ended process's connections close.
        case exited(launch: Int)
        /// A background run's budget is over: its tasks are completed or the app was ended.
        case watchdogCheck(run: Int)
        /// Data that came for the sleeping app must have woken it by `deadline`.
        case windowCheck(obligation: Int, deadline: Int64)
    }

    enum Process: Equatable {
        case none
        case launching(Int, foreground: Bool)
        case running(Int)
        case suspended(Int)
        /// Ended (the watchdog): its connections close at once.
        case exiting(Int)
    }

    /// "Background App Refresh watchdog transgression. Exhausted wall time allowance of 15.00
    /// seconds" (watchOS crash reports quoted in home-assistant/iOS pull 1192 and OctoPod issue
    /// 387; docs/app-side.md, "The watch app's background life"; `BackgroundTaskTests`).
    static let budgetMilliseconds: Int64 = 15_000
    /// The tasks' `expirationHandler` runs "a second before" the budget's end (docs/app-side.md:
    /// Apple gives no lead time, the project's rule is min(1 s, budget / 2); `BackgroundTaskTests`).
    static let expirationLeadMilliseconds: Int64 = 1_000
    /// A run for data starts within 15 minutes of the data ("four refresh tasks an hour",
    /// docs/app-side.md, the `watch` launch policy; `WatchAppBackgroundTests/testTheWatchPolicy`).
    static let windowMilliseconds: Int64 = 15 * 60 * 1_000
    static let hourMilliseconds: Int64 = 60 * 60 * 1_000
    /// "If your complication is active, your app can be woken up at least four times an hour. If
    /// your complication is not active, your app is guaranteed to be woken at least once an hour"
    /// (WWDC 2016 session 218); "you can safely schedule four refresh tasks an hour" (Apple's
    /// "Updating your complication"); docs/app-side.md.
    static let runsPerHourWithComplication = 4
    static let runsPerHourWithoutComplication = 1

    unowned let node: SimNode
    private var world: SimWorld { node.world }
    private(set) var process: Process = .none
    private var launches = 0
    /// The app's state as the session told it (`appStateDidChange`).
    private var foreground = false
    /// Tasks handed to the app and not completed or expired.
    private var open: Set<UInt64> = []
    /// The current background run: its number and start.
    private var run: (number: Int, start: Int64)?
    private var runs = 0
    /// Counted background runs (launches and wakes outside a complication's) of this start of
    /// watchd: a restart forgets them (docs/app-side.md).
    private var counted: [Int64] = []
    /// Data that came while the app slept and waits for a run.
    private var waiting: (number: Int, since: Int64)?
    private var obligations = 0
    /// The newest received item seen in the watch's store.
    private var seenUpTo: UInt64 = 0
    /// The latest scheduled task of each kind (its number) and every scheduled task's date.
    private var scheduled: [BackgroundTaskKind: Int] = [:]
    private var scheduledDue: [Int: Int64] = [:]
    private var nextScheduled = 1
    /// What the stopped process would have done, done when it runs again.
    private var deferred: [SimWorld.Event] = []
    /// The phone's latest state on the watch's current link, and whether it says the
    /// complication is enabled; when the watch last did not know it was.
    private weak var stateConnection: SimConnection?
    private var peerSaysComplicationEnabled = false
    private var complicationUnknownAt: Int64 = 0
    // The turn under way.
    private var asleepAtTurnStart = true
    private var foregroundAtTurnStart = false
    private var turnRunStarts = 0
    private var turnCompleted = false
    private var turnSuspended = false
    private var turnExpired = false
    private var turnToBackground = false
    /// A current complication userInfo came in this turn (kept or not).
    private var turnComplicationFrame = false
    private var inStartTurn = false

    init(node: SimNode) {
        self.node = node
    }

    private var asleep: Bool {
        switch process {
        case .none, .suspended: return true
        default: return false
        }
    }

    private var isRunning: Bool {
        if case .running = process { return true }
        return false
    }

    private func fail(_ message: String) { world.history.fail("watch app: " + message) }

    // MARK: - watchd's start and death

    /// watchd started: the app is installed (AppLauncher tells the session at start).
    func started() {
        inStartTurn = true
        node.turn { node.peer.session.handle(.setAppInstalled(true), token: world.history.internalToken(), now: world.now) }
        inStartTurn = false
    }

    /// watchd died: the app's process goes with it, and watchd's memory of tasks, scheduled
    /// refreshes and the hour's runs.
    func daemonDied() {
        process = .none
        foreground = false
        open.removeAll()
        run = nil
        counted.removeAll()
        waiting = nil
        scheduled.removeAll()
        scheduledDue.removeAll()
        deferred.removeAll()
        stateConnection = nil
    }

    // MARK: - Turns

    func turnStarts() {
        asleepAtTurnStart = asleep
        foregroundAtTurnStart = foreground
        turnRunStarts = 0
        turnCompleted = false
        turnSuspended = false
        turnExpired = false
        turnToBackground = false
        turnComplicationFrame = false
    }

    /// The watch's turn ended: what came in it and what the OS was asked.
    func turnEnded(rolledBack: Bool, dying: Bool) {
        defer {
            if !complicationKnown { complicationUnknownAt = world.now }
        }
        guard !dying else { return }
        var newComplication = false
        var newData = false
        var newest = seenUpTo
        for item in node.store.committed.undelivered where item.seq > seenUpTo {
            newest = max(newest, item.seq)
            if item.channel == .userInfo && item.flags.contains(.currentComplication) { newComplication = true } else { newData = true }
        }
        seenUpTo = newest
        let now = world.now
        if newComplication, asleepAtTurnStart, !rolledBack, turnRunStarts == 0 {
            // WCSession.h, transferCurrentComplicationUserInfo: "Once a current complication user
            // info is received the system will launch the Watch App Extension in the background".
            fail("a current complication userInfo came at \(now) while the app slept, and the app was not woken at once")
        }
        // A run that a complication userInfo (or watchd's start) asked for is outside the allowance.
        if turnRunStarts > 0 {
            if newComplication || turnComplicationFrame || inStartTurn {
                world.coverage.count(.watchComplicationWake)
            } else {
                counted.removeAll { $0 <= now - Self.hourMilliseconds }
                counted.append(now)
                let allowed = world.options.complicationEnabled ? Self.runsPerHourWithComplication : Self.runsPerHourWithoutComplication
                if counted.count > allowed {
                    fail(
                        "\(counted.count) background runs within an hour (at \(counted.map(String.init).joined(separator: ", "))), "
                            + "over the allowance of \(allowed) with the complication \(world.options.complicationEnabled ? "enabled" : "not enabled")")
                }
            }
        }
        if newData || (inStartTurn && !node.store.committed.undelivered.isEmpty), asleepAtTurnStart || inStartTurn, turnRunStarts == 0,
            waiting == nil
        {
            obligations += 1
            waiting = (obligations, now)
            schedule(.windowCheck(obligation: obligations, deadline: now + Self.windowMilliseconds), at: now + Self.windowMilliseconds + 1)
        }
        // setTaskCompleted(): "The system suspends the extension as soon as all background tasks
        // are complete" (and an app sent to the background with none open has none to run).
        if turnCompleted || turnToBackground, open.isEmpty, isRunning, !foreground, !turnSuspended {
            fail("the app ran in the background at \(now) with every task completed, and it was not suspended")
        }
    }

    /// Whether the watch knows the phone's complication is enabled: the phone's state on the
    /// current link says so.
    private var complicationKnown: Bool {
        guard let connection = node.connection, connection === stateConnection, connection.end(node.role).established else { return false }
        return peerSaysComplicationEnabled
    }

    /// A frame the watch's session received.
    func received(_ frame: Frame, on connection: SimConnection) {
        if case .item(let channel, _, let flags, _) = frame, channel == QueueChannel.userInfo.rawValue,
            ItemFlags(rawValue: flags).contains(.currentComplication)
        {
            turnComplicationFrame = true
        }
        if case .state(let state) = frame {
            stateConnection = connection
            peerSaysComplicationEnabled = state.flags.contains(.isComplicationEnabled)
        }
    }

    // MARK: - The session's actions

    func launch(_ reason: LaunchReason) {
        if case .none = process {
            launches += 1
            process = .launching(launches, foreground: false)
            schedule(.attach(launch: launches), at: world.now + world.random.int64(1...300))
            world.coverage.count(.watchAppLaunched)
        }
        if reason != .user { backgroundRunStarts() }
    }

    func perform(_ action: AppProcessAction) {
        switch action {
        case .suspend:
            guard case .running(let launch) = process else {
                return fail("suspended while its process is \(process)")
            }
            process = .suspended(launch)
            run = nil
            turnSuspended = true
            world.coverage.count(.watchAppSuspended)
        case .resume:
            guard case .suspended(let launch) = process else {
                return fail("resumed while its process is \(process)")
            }
            process = .running(launch)
            for event in deferred { world.schedule(event, at: world.now) }
            deferred.removeAll()
        case .end(let reason, _):
            let now = world.now
            if let run {
                // The watchdog ends a run that has not completed its tasks at its end, not before.
                if now - run.start != Self.budgetMilliseconds {
                    fail(
                        "the watchdog (\(reason)) ended the app \(now - run.start) ms into its background run, not at its budget of \(Self.budgetMilliseconds) ms"
                    )
                }
            } else {
                fail("the watchdog (\(reason)) ended the app outside a background run")
            }
            if !turnExpired { fail("the watchdog ended the app though it had completed every task handed to it") }
            world.coverage.count(.watchdogKill)
            guard case .running(let launch) = process else { return }
            process = .exiting(launch)
            run = nil
            open.removeAll()
            deferred.removeAll()
            if let app = node.app {
                world.history.appQuit(app, by: node.role)
                node.app = nil
            }
            schedule(.exited(launch: launch), at: now)
        }
    }

    /// The OS launched or woke the app for a background task.
    private func backgroundRunStarts() {
        turnRunStarts += 1
        waiting = nil
        startRun()
    }

    private func startRun() {
        guard run == nil else { return }
        runs += 1
        run = (runs, world.now)
        schedule(.watchdogCheck(run: runs), at: world.now + Self.budgetMilliseconds + 1)
    }

    /// What the session told the app (before SimHistory sees it).
    func notified(_ notification: SessionNotification) {
        switch notification {
        case .appStateDidChange(let state):
            foreground = state == .foreground
            switch state {
            case .foreground:
                // The user opened the app: it gets everything at once.
                run = nil
                waiting = nil
            case .background:
                turnToBackground = true
                // The running app sent to the background with tasks open: a run, not a launch.
                if run == nil, !open.isEmpty, isRunning { startRun() }
            case .notRunning:
                run = nil
                open.removeAll()
            }
        case .userInfoReceived, .applicationContextReceived, .file(.received):
            // docs/app-side.md: suspended, "it runs no code and receives nothing until it is woken".
            if case .suspended = process {
                fail("received item \(notification.handedSeq ?? 0) was handed to the app while it was suspended")
            }
        case .backgroundTask(let task):
            backgroundTask(task)
        default:
            break
        }
    }

    private func backgroundTask(_ notification: BackgroundTaskNotification) {
        let now = world.now
        switch notification {
        case .handed(let tasks):
            if case .suspended = process { fail("tasks were handed to the app while it was suspended") }
            guard case .running(let launch) = process else { return }
            for task in tasks {
                open.insert(task.id)
                if task.kind != .watchConnectivity { scheduledTaskHanded(task) }
                // Most tasks are completed soon, some late, some never (the watchdog ends the app).
                let draw = world.random.int(0...99)
                if draw < 65 {
                    schedule(.complete(launch: launch, task: task.id), at: now + world.random.int64(0...3_000))
                } else if draw < 85 {
                    schedule(.complete(launch: launch, task: task.id), at: now + world.random.int64(3_000...20_000))
                }
                if world.random.chance(0.3) { schedule(.schedule(launch: launch), at: now + world.random.int64(0...2_000)) }
            }
        case .expiring:
            world.coverage.count(.expirationHandlerCalled)
            let expected = Self.budgetMilliseconds - Self.expirationLeadMilliseconds
            if let run {
                if now - run.start != expected {
                    fail("the tasks' expirationHandler ran \(now - run.start) ms into the background run, not at \(expected) ms (a second before its end)")
                }
            } else {
                fail("the tasks' expirationHandler ran outside a background run")
            }
        case .completed(let task):
            open.remove(task.id)
            turnCompleted = true
        case .expired(let task):
            open.remove(task.id)
            turnExpired = true
        case .ignored:
            world.coverage.count(.scheduledTaskInForeground)
        case .resumed(let reason):
            if reason == .user { waiting = nil } else { backgroundRunStarts() }
        case .suspended, .wakeScheduled:
            break
        }
    }

    /// A scheduled refresh or snapshot task was handed: at, not before, its date; not while the
    /// app ran in the foreground; the latest of its kind.
    private func scheduledTaskHanded(_ task: BackgroundTask) {
        world.coverage.count(.scheduledTaskRan)
        guard let info = task.userInfo, let n = SimHistory.number(info), let due = scheduledDue[n] else {
            return fail("a \(task.kind) task was handed that the app did not schedule since watchd started")
        }
        // scheduleBackgroundRefresh(withPreferredDate:...): "You can only schedule one background
        // app refresh task at a time; scheduling a second task cancels the first".
        if scheduled[task.kind] != n { fail("\(task.kind) task \(n) was handed though the app scheduled another after it") }
        scheduled[task.kind] = nil
        // "The system attempts to wake your app in the background shortly after the scheduled time".
        if world.now < due { fail("\(task.kind) task \(n) was handed at \(world.now), before its date \(due)") }
        // "If the app is still running in the foreground at the scheduled time, the system ignores the task".
        if foregroundAtTurnStart, foreground { fail("\(task.kind) task \(n) came due while the app ran in the foreground and was handed to it") }
    }

    // MARK: - The world's events

    private func schedule(_ event: Event, at time: Int64) { world.schedule(.watchApp(event), at: time) }

    func handle(_ event: Event) {
        guard node.isUp else { return }
        let now = world.now
        switch event {
        case .attach(let launch):
            guard case .launching(launch, let inForeground) = process else { return }
            process = .running(launch)
            let state: AppState = inForeground ? .foreground : .background
            node.command(.attachWatchKit(state, launchedByTheOS: true), token: world.history.internalToken())
            if node.app == nil, node.isUp, process == .running(launch) {
                node.attachApp(state, handles: .all, token: world.history.internalToken(), launchedByTheOS: true)
            }
            if world.random.chance(0.3) { schedule(.schedule(launch: launch), at: now + world.random.int64(0...2_000)) }
            ensureOpen()
        case .complete(let launch, let task):
            if case .suspended(launch) = process { return deferred.append(.watchApp(event)) }
            guard process == .running(launch) else { return }
            node.command(.completeBackgroundTask(id: task), token: world.history.internalToken())
        case .schedule(let launch):
            if case .suspended(launch) = process { return deferred.append(.watchApp(event)) }
            guard process == .running(launch) else { return }
            let kind: BackgroundTaskKind = world.random.chance(0.5) ? .applicationRefresh : .snapshot
            let delay: Int64
            switch world.random.int(0...9) {
            case 0...1: delay = world.random.int64(0...5_000)
            case 2...5: delay = world.random.int64(0...120_000)
            default: delay = world.random.int64(120_000...3_600_000)
            }
            let n = nextScheduled
            nextScheduled += 1
            scheduled[kind] = n
            scheduledDue[n] = now + delay
            world.trace("watch app schedules \(kind) task \(n) in \(delay) ms")
            node.command(.scheduleBackgroundTaskAfter(kind, milliseconds: delay, userInfo: SimHistory.payload(n)), token: world.history.internalToken())
        case .exited(let launch):
            guard process == .exiting(launch) else { return }
            process = .none
            // watchd sees the app's connections close (Daemon.swift): its session, then its WatchKit.
            node.command(.detachApp, token: world.history.internalToken())
            node.command(.detachWatchKit, token: world.history.internalToken())
            ensureOpen()
        case .watchdogCheck(let number):
            guard let run, run.number == number, !open.isEmpty, isRunning else { return }
            fail(
                "the background run that started at \(run.start) still has tasks open at \(now), past its budget of \(Self.budgetMilliseconds) ms, and the watchdog did not end the app"
            )
        case .windowCheck(let number, let deadline):
            guard let waiting, waiting.number == number else { return }
            // The allowance the watch knew of when it timed the run: 4 only while the phone's
            // state said the complication is enabled throughout the hour before (a run is
            // timed at most an hour ahead, perhaps for earlier data).
            let allowed =
                world.options.complicationEnabled && complicationUnknownAt <= deadline - Self.hourMilliseconds
                ? Self.runsPerHourWithComplication : Self.runsPerHourWithoutComplication
            let recent = counted.filter { $0 > deadline - Self.hourMilliseconds }.sorted()
            if recent.count < allowed {
                fail(
                    "data came at \(waiting.since) while the app slept and no background run started by \(deadline), "
                        + "within \(Self.windowMilliseconds / 60_000) minutes or once the hourly allowance of \(allowed) had room (\(recent.count) runs in the hour)"
                )
                self.waiting = nil
                return
            }
            world.coverage.count(.runDeferredByAllowance)
            let room = recent[recent.count - allowed] + Self.hourMilliseconds
            schedule(.windowCheck(obligation: number, deadline: room), at: room + 1)
        }
    }

    // MARK: - The user

    /// The user opens the app, sends it to the background or back, or quits it.
    func userActs() {
        switch process {
        case .none:
            launchForTheUser()
        case .running:
            if world.random.chance(0.4) {
                process = .none
                open.removeAll()
                run = nil
                if node.app != nil { node.appQuits(token: world.history.internalToken()) }
                if node.isUp { node.command(.detachWatchKit, token: world.history.internalToken()) }
            } else {
                userSetsState(world.random.chance(0.5) ? .foreground : .background)
            }
        case .suspended:
            userSetsState(.foreground)
        case .launching, .exiting:
            break
        }
    }

    /// The user brings the running app to the foreground or sends it to the background.
    func userSetsState(_ state: AppState) {
        switch process {
        case .running, .suspended:
            node.command(.setAppState(state), token: world.history.internalToken())
        default:
            break
        }
    }

    private func launchForTheUser() {
        launches += 1
        process = .launching(launches, foreground: true)
        waiting = nil
        schedule(.attach(launch: launches), at: world.now + world.random.int64(1...300))
    }

    /// The final phase: the user opens the app and keeps it open.
    func finalPhase() {
        ensureOpen()
    }

    func ensureOpen() {
        guard world.isFinalPhase, node.isUp else { return }
        switch process {
        case .none: launchForTheUser()
        case .running, .suspended:
            if !foreground { node.command(.setAppState(.foreground), token: world.history.internalToken()) }
            // It acknowledges what it was handed and answers what waits for its reply.
            if node.app != nil { world.history.attachForTheFinalPhase(node) }
        case .launching, .exiting: break
        }
    }

    /// Whether the stopped app holds `event` (an acknowledgement or a reply) until it runs.
    func holds(_ event: SimWorld.Event) -> Bool {
        guard case .suspended = process else { return false }
        deferred.append(event)
        return true
    }
}
