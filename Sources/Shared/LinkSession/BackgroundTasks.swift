import LinkStore
import WireProtocol

/// The watch app's background life as watchOS runs it (docs/app-side.md, "The watch app's
/// background life"): background tasks handed to its delegate, a budget for each background
/// run, suspension once its tasks are completed, and background runs when the launch policy
/// allows. Only the watch has it, and only for an installed app (`app.install`): without one the
/// daemon plays the app and takes its data at once.
///
/// - Data for an app that is not running or suspended asks for a run with a
///   `WKWatchConnectivityRefreshBackgroundTask` ("Background watch connectivity tasks are
///   triggered whenever the paired device sends data", `WKWatchConnectivityRefreshBackgroundTask`),
///   at the time ``BackgroundLaunchPolicy`` gives; complication userInfo at once.
/// - A run lasts until the app completed every task ("The system suspends the extension as soon as
///   all background tasks are complete", `setTaskCompleted()`), at most the budget: 15 s of wall
///   time ("Background App Refresh watchdog transgression. Exhausted wall time allowance of 15.00
///   seconds", watchOS crash reports quoted in home-assistant/iOS 1192 and OctoPod 387), after
///   which the watchdog ends the app. The tasks' `expirationHandler` runs shortly before ("A block
///   that the system calls when the available runtime for a background task is about to expire").
/// - Scheduled tasks come due at, not before, their preferred date, later when the policy says;
///   "You can only schedule one background app refresh task at a time; scheduling a second task
///   cancels the first"; "If the app is still running in the foreground at the scheduled time,
///   the system ignores the task" (`scheduleBackgroundRefresh(withPreferredDate:...)`).
struct BackgroundTaskState {
    var policy: BackgroundLaunchPolicy
    /// Tasks not completed or expired, oldest first.
    var open: [BackgroundTask] = []
    /// The latest finished tasks, for `status`.
    var finished: [BackgroundTask] = []
    var nextId: UInt64 = 1
    /// The running app is the program this OS launched: it can be suspended and ended.
    var launchedByTheOS = false
    var isSuspended = false
    /// The app's WatchKit is attached (`watchKit.attach`): tasks can be handed to it.
    var watchKitAttached = false
    /// The end of the current background run's budget.
    var runDeadline: Int64?
    /// When a background run for data the policy deferred starts.
    var wakeDue: Int64?
    /// The newest received item a run for data was started for: older ones wait for the app's
    /// next run of its own (a watchdog-ended app is not woken again and again for the same data).
    var wokenUpTo: UInt64 = 0
    var scheduled: [BackgroundTaskKind: ScheduledTask] = [:]

    struct ScheduledTask {
        var due: Int64
        var userInfo: [UInt8]?
    }

    static let finishedKept = 16

    init(policy: BackgroundLaunchPolicy) {
        self.policy = policy
    }
}

extension LinkSession {
    /// How long before the budget runs out the open tasks' `expirationHandler` runs: a second, or
    /// half of a shorter budget (Apple gives no lead time).
    var expirationLeadMilliseconds: Int64 {
        min(1_000, configuration.backgroundTaskBudgetMilliseconds / 2)
    }

    private var peerComplicationEnabled: Bool {
        peerState?.flags.contains(.isComplicationEnabled) ?? false
    }

    // MARK: - Data wakes the app

    /// Watch: received items that an installed app not running (or suspended) has not taken ask
    /// for a background run with a `WKWatchConnectivityRefreshBackgroundTask`.
    func wakeForBackgroundData() {
        guard role == .watch, launch.isInstalled, let newest = undelivered.last else { return }
        // What arrives while the app is awake, or being launched, is the current run's.
        guard appState == .notRunning || background.isSuspended, !launch.isUnderWay else {
            background.wokenUpTo = max(background.wokenUpTo, newest.seq)
            return
        }
        // A suspended app holds what it was handed: only what it was not wakes it.
        let floor = max(background.wokenUpTo, appState == .notRunning ? 0 : handedUpTo)
        guard newest.seq > floor else { return }
        // A run is asked for already: only a complication userInfo that just came changes it.
        let waiting: (any: Bool, complication: Bool)
        if background.wakeDue != nil {
            waiting = (false, Self.isCurrentComplicationInfo(newest))
        } else {
            waiting = waitingItems(above: floor)
        }
        if waiting.complication {
            cancelBackgroundWake()
            runBackgroundTask(.watchConnectivity, userInfo: nil, counted: false)
        } else if waiting.any {
            let deferred = currentTime + background.policy.dataDeferral()
            scheduleBackgroundWake(at: max(deferred, background.policy.earliestRun(now: currentTime, complicationEnabled: peerComplicationEnabled)))
        }
    }

    /// Whether items above `floor` wait for the app, and whether one is complication userInfo;
    /// items for a framework on this side (PowerAuth) are delivered without the app.
    private func waitingItems(above floor: UInt64) -> (any: Bool, complication: Bool) {
        var any = false
        for item in undelivered.reversed() {
            guard item.seq > floor else { break }
            if item.channel == .userInfo && item.flags.contains(.system) { continue }
            if Self.isCurrentComplicationInfo(item) { return (true, true) }
            any = true
        }
        return (any, false)
    }

    private static func isCurrentComplicationInfo(_ item: InboxItem) -> Bool {
        item.channel == .userInfo && item.flags.contains(.currentComplication)
    }

    private func scheduleBackgroundWake(at due: Int64) {
        background.wakeDue = due
        actions.append(.notify(.backgroundTask(.wakeScheduled(reason: .backgroundData, inMilliseconds: due - currentTime))))
        if due <= currentTime {
            backgroundWakeFired()
        } else {
            actions.append(.armTimer(.backgroundWake, deadlineMilliseconds: due))
        }
    }

    private func cancelBackgroundWake() {
        guard background.wakeDue != nil else { return }
        background.wakeDue = nil
        actions.append(.cancelTimer(.backgroundWake))
    }

    /// ``SessionTimer/backgroundWake``: the run for data starts, unless the hourly allowance is
    /// spent (it then waits for room) or the app took the data meanwhile.
    func backgroundWakeFired() {
        background.wakeDue = nil
        guard launch.isInstalled, appState == .notRunning || background.isSuspended, !launch.isUnderWay,
            undelivered.contains(where: { $0.seq > background.wokenUpTo })
        else { return }
        let earliest = background.policy.earliestRun(now: currentTime, complicationEnabled: peerComplicationEnabled)
        if earliest > currentTime { return scheduleBackgroundWake(at: earliest) }
        runBackgroundTask(.watchConnectivity, userInfo: nil, counted: true)
    }

    // MARK: - Background runs and tasks

    /// A task of `kind` for the app: launched or resumed for it when it is not awake (`counted`
    /// against the hourly allowance then), handed to its delegate once its WatchKit is attached.
    func runBackgroundTask(_ kind: BackgroundTaskKind, userInfo: [UInt8]?, counted: Bool) {
        let task = BackgroundTask(id: background.nextId, kind: kind, state: .pending, userInfo: userInfo, createdAt: currentTime)
        background.nextId += 1
        background.open.append(task)
        if kind == .watchConnectivity { background.wokenUpTo = max(background.wokenUpTo, undelivered.last?.seq ?? 0) }
        if appState == .notRunning {
            if counted, !launch.isUnderWay { background.policy.recordRun(at: currentTime) }
            requestLaunch(kind.launchReason)
        } else if background.isSuspended {
            if counted { background.policy.recordRun(at: currentTime) }
            resumeApp(kind.launchReason)
        }
        if appState != .foreground, !workoutRunning { startBackgroundRun() }
        handBackgroundTasks()
    }

    private func startBackgroundRun() {
        guard background.runDeadline == nil else { return }
        let deadline = currentTime + configuration.backgroundTaskBudgetMilliseconds
        background.runDeadline = deadline
        actions.append(.armTimer(.backgroundBudget, deadlineMilliseconds: deadline))
        actions.append(.armTimer(.backgroundTasksExpiring, deadlineMilliseconds: deadline - expirationLeadMilliseconds))
    }

    private func endBackgroundRun() {
        guard background.runDeadline != nil else { return }
        background.runDeadline = nil
        actions.append(.cancelTimer(.backgroundBudget))
        actions.append(.cancelTimer(.backgroundTasksExpiring))
    }

    /// Hands the pending tasks to the app's WatchKit, all in one `handle(_:)`.
    private func handBackgroundTasks() {
        guard background.watchKitAttached else { return }
        var handed: [BackgroundTask] = []
        for index in background.open.indices where background.open[index].state == .pending {
            background.open[index].state = .handed
            handed.append(background.open[index])
        }
        if !handed.isEmpty { actions.append(.notify(.backgroundTask(.handed(handed)))) }
    }

    private func resumeApp(_ reason: LaunchReason) {
        background.isSuspended = false
        actions.append(.appProcess(.resume))
        actions.append(.notify(.backgroundTask(.resumed(reason))))
        deliverPending()
    }

    /// A run whose tasks are all completed ends: the app is suspended (only a program this OS
    /// launched; one started otherwise keeps running).
    private func suspendIfDone() {
        guard background.open.isEmpty, appState == .background, !workoutRunning, background.launchedByTheOS, !background.isSuspended else { return }
        endBackgroundRun()
        background.isSuspended = true
        actions.append(.appProcess(.suspend))
        actions.append(.notify(.backgroundTask(.suspended)))
    }

    private func finish(_ task: BackgroundTask) {
        background.finished.append(task)
        if background.finished.count > BackgroundTaskState.finishedKept { background.finished.removeFirst() }
    }

    /// `backgroundTask.complete`: the app's `setTaskCompletedWithSnapshot(_:)`.
    func completeBackgroundTask(id: UInt64, token: RequestToken) {
        guard let index = background.open.firstIndex(where: { $0.id == id }) else {
            let finished = background.finished.last { $0.id == id }
            let reason =
                finished.map { "background task \(id) is \($0.state.rawValue) already" } ?? "no background task \(id) (completed long ago, or never handed)"
            actions.append(.respond(token, .failure(.invalidArgument("backgroundTask.complete: \(reason)"))))
            return
        }
        guard background.open[index].state == .handed else {
            actions.append(.respond(token, .failure(.invalidArgument("backgroundTask.complete: task \(id) was not handed to the app yet"))))
            return
        }
        var task = background.open.remove(at: index)
        task.state = .completed
        finish(task)
        actions.append(.notify(.backgroundTask(.completed(task))))
        actions.append(.respond(token, .success(.empty)))
        suspendIfDone()
    }

    /// ``SessionTimer/backgroundTasksExpiring``: the open tasks' `expirationHandler` runs.
    func backgroundTasksExpiring() {
        let handed = background.open.filter { $0.state == .handed }
        if !handed.isEmpty { actions.append(.notify(.backgroundTask(.expiring(handed)))) }
    }

    /// ``SessionTimer/backgroundBudget``: the run's budget is spent with tasks open: they expire
    /// and the watchdog ends the app. What its delegate took stays delivered; what it had not
    /// taken waits for its next launch.
    func backgroundBudgetSpent() {
        background.runDeadline = nil
        guard !background.open.isEmpty else { return }
        var names: [String] = []
        for var task in background.open {
            task.state = .expired
            finish(task)
            names.append("\(task.kind.rawValue) task \(task.id)")
            actions.append(.notify(.backgroundTask(.expired(task))))
        }
        background.open.removeAll()
        actions.append(
            .appProcess(
                .end(
                    reason: "backgroundTaskWatchdog",
                    detail:
                        "\(names.joined(separator: ", ")) not completed within the background budget of \(configuration.backgroundTaskBudgetMilliseconds) ms")))
    }

    // MARK: - The app's state

    /// The app's state changed: the foreground ends a run and wakes a suspended app; leaving it
    /// suspends an app with no open task; an app that is not running has no tasks.
    func backgroundAppStateChanged(to state: AppState) {
        guard role == .watch else { return }
        switch state {
        case .foreground:
            cancelBackgroundWake()
            endBackgroundRun()
            if background.isSuspended { resumeApp(.user) }
        case .background:
            if workoutRunning { return }
            if background.open.isEmpty { suspendIfDone() } else { startBackgroundRun() }
        case .notRunning:
            cancelBackgroundWake()
            endBackgroundRun()
            background.open.removeAll()
            background.isSuspended = false
            background.launchedByTheOS = false
        }
    }

    /// A workout started (the app runs on, with no run's budget) or ended (the background's rules
    /// apply again).
    func backgroundWorkoutChanged() {
        if workoutRunning {
            endBackgroundRun()
        } else if appState == .background {
            if background.open.isEmpty { suspendIfDone() } else { startBackgroundRun() }
        }
    }

    /// `watchKit.attach`: the app's WatchKit connection; the pending tasks are handed to it.
    func attachWatchKit(state: AppState, launchedByTheOS: Bool, token: RequestToken) {
        guard role == .watch else {
            actions.append(.respond(token, .failure(.invalidArgument("watchKit.attach: WatchKit's background tasks are the watch's"))))
            return
        }
        background.watchKitAttached = true
        if launchedByTheOS { background.launchedByTheOS = true }
        launchEnded()
        if attachedApp == nil { changeAppState(to: state) }
        actions.append(.respond(token, .success(.appState(appState))))
        handBackgroundTasks()
    }

    func detachWatchKit(token: RequestToken) {
        background.watchKitAttached = false
        if attachedApp == nil { changeAppState(to: .notRunning) }
        actions.append(.respond(token, .success(.appState(appState))))
    }

    /// The launch asked for did not come up: its tasks go with it.
    func backgroundLaunchFailed() {
        guard role == .watch else { return }
        endBackgroundRun()
        background.open.removeAll()
    }

    // MARK: - Scheduled tasks

    /// `scheduleBackgroundRefresh` / `scheduleSnapshotRefresh`.
    func scheduleBackgroundTask(_ kind: BackgroundTaskKind, preferredDate: Double, userInfo: [UInt8]?, token: RequestToken) {
        let seconds = preferredDate - configuration.wallClock()
        let delay = seconds.isFinite ? Int64(min(max(0, seconds * 1_000), Double(Self.longestScheduleMilliseconds)).rounded(.up)) : 0
        scheduleBackgroundTask(kind, afterMilliseconds: delay, userInfo: userInfo, token: token)
    }

    /// A task due `milliseconds` from now (at most ``longestScheduleMilliseconds``).
    func scheduleBackgroundTask(_ kind: BackgroundTaskKind, afterMilliseconds milliseconds: Int64, userInfo: [UInt8]?, token: RequestToken) {
        guard role == .watch else {
            actions.append(.respond(token, .failure(.invalidArgument("backgroundTask.schedule: background refresh tasks are watchOS's"))))
            return
        }
        guard kind != .watchConnectivity else {
            actions.append(
                .respond(
                    token,
                    .failure(.invalidArgument("backgroundTask.schedule: watchConnectivity tasks come with data; schedule applicationRefresh or snapshot"))))
            return
        }
        let delay = min(max(0, milliseconds), Self.longestScheduleMilliseconds)
        let due = currentTime + delay
        background.scheduled[kind] = BackgroundTaskState.ScheduledTask(due: due, userInfo: userInfo)
        actions.append(.armTimer(.scheduledTask(kind), deadlineMilliseconds: due))
        actions.append(.respond(token, .success(.taskScheduled(inMilliseconds: delay))))
    }

    /// A year: a later preferred date is taken as a year from now.
    static let longestScheduleMilliseconds: Int64 = 366 * 24 * 3_600_000

    /// ``SessionTimer/scheduledTask(_:)``.
    func scheduledTaskFired(_ kind: BackgroundTaskKind) {
        guard let entry = background.scheduled.removeValue(forKey: kind) else { return }
        let runnable = appState != .notRunning || launch.isInstalled
        if appState == .foreground || !runnable {
            let task = BackgroundTask(id: background.nextId, kind: kind, state: .pending, userInfo: entry.userInfo, createdAt: currentTime)
            background.nextId += 1
            actions.append(.notify(.backgroundTask(.ignored(task))))
            return
        }
        let wakes = appState == .notRunning || background.isSuspended
        if wakes {
            let earliest = background.policy.earliestRun(now: currentTime, complicationEnabled: peerComplicationEnabled)
            if earliest > currentTime {
                background.scheduled[kind] = BackgroundTaskState.ScheduledTask(due: earliest, userInfo: entry.userInfo)
                actions.append(.armTimer(.scheduledTask(kind), deadlineMilliseconds: earliest))
                return
            }
        }
        runBackgroundTask(kind, userInfo: entry.userInfo, counted: wakes)
    }

    // MARK: - Status

    /// Watch: the app's background life at `now`, for `status`.
    public func backgroundTaskStatus(now currentTime: Int64) -> BackgroundTaskStatus? {
        guard role == .watch else { return nil }
        let policy = background.policy
        return BackgroundTaskStatus(
            policy: policy.mode, seed: policy.seed, windowMilliseconds: policy.windowMilliseconds,
            budgetMilliseconds: configuration.backgroundTaskBudgetMilliseconds,
            budgetLeftMilliseconds: background.runDeadline.map { max(0, $0 - currentTime) },
            isSuspended: background.isSuspended,
            tasks: background.open + background.finished,
            nextWakeInMilliseconds: background.wakeDue.map { max(0, $0 - currentTime) },
            scheduled: background.scheduled.sorted { $0.key.rawValue < $1.key.rawValue }
                .map { BackgroundTaskStatus.Scheduled(kind: $0.key, inMilliseconds: max(0, $0.value.due - currentTime)) },
            launchesThisHour: policy.runs(inHourBefore: currentTime),
            launchesPerHour: policy.mode == .watch ? policy.launchesPerHour(complicationEnabled: peerComplicationEnabled) : 0)
    }
}
