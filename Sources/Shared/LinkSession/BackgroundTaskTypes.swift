/// The kinds of `WKRefreshBackgroundTask` watchOS hands a watch app's delegate
/// (`handle(_ backgroundTasks:)`), by the names of their classes.
public enum BackgroundTaskKind: String, Sendable, Hashable, CaseIterable {
    /// `WKWatchConnectivityRefreshBackgroundTask`: data the phone sent while the app was not in
    /// the foreground.
    case watchConnectivity
    /// `WKApplicationRefreshBackgroundTask`: `scheduleBackgroundRefresh(withPreferredDate:...)`.
    case applicationRefresh
    /// `WKSnapshotRefreshBackgroundTask`: `scheduleSnapshotRefresh(withPreferredDate:...)`.
    case snapshot

    /// The reason the emulated OS gives a launch for a task of this kind.
    var launchReason: LaunchReason {
        switch self {
        case .watchConnectivity: return .backgroundData
        case .applicationRefresh: return .backgroundRefresh
        case .snapshot: return .snapshot
        }
    }
}

/// One background task of the watch app: handed to its delegate, then completed by the app
/// (`setTaskCompletedWithSnapshot(_:)`) or expired at the end of the background budget.
public struct BackgroundTask: Hashable, Sendable {
    public enum State: String, Sendable, Hashable {
        /// Created; the app's WatchKit has not been handed it yet (the app is being launched).
        case pending
        /// Handed to the app's delegate; not completed yet.
        case handed
        case completed
        /// The background budget ran out before the app completed it: the watchdog ended the app.
        case expired
    }

    public var id: UInt64
    public var kind: BackgroundTaskKind
    public var state: State
    /// What the app gave when it scheduled the task (`userInfo`), as the app's library encoded it.
    public var userInfo: [UInt8]?
    /// When it was created, on the session's clock.
    public var createdAt: Int64

    public init(id: UInt64, kind: BackgroundTaskKind, state: State, userInfo: [UInt8]?, createdAt: Int64) {
        self.id = id
        self.kind = kind
        self.state = state
        self.userInfo = userInfo
        self.createdAt = createdAt
    }

    public var isOpen: Bool { state == .pending || state == .handed }
}

/// What the watch's emulated OS tells of the app's background life (events, the trace).
public enum BackgroundTaskNotification: Hashable, Sendable {
    /// Tasks handed to the app's delegate (`handle(_:)`), in one call.
    case handed([BackgroundTask])
    /// The budget is about to run out for these open tasks: their `expirationHandler` runs.
    case expiring([BackgroundTask])
    case completed(BackgroundTask)
    case expired(BackgroundTask)
    /// A background run was asked for (`reason`): it starts `inMilliseconds` from now, as the
    /// launch policy decides.
    case wakeScheduled(reason: LaunchReason, inMilliseconds: Int64)
    /// A scheduled task came due while the app ran in the foreground: watchOS ignores it.
    case ignored(BackgroundTask)
    /// Every task of the background run is completed: the app is suspended.
    case suspended
    /// The suspended app runs again, in the background for a task or in the foreground.
    case resumed(LaunchReason)
}

/// What the emulated OS does to the app's process for the session's rules.
public enum AppProcessAction: Sendable, Hashable {
    /// Stop the process: a suspended app runs no code.
    case suspend
    /// Let a suspended process run again.
    case resume
    /// End the app at once as watchOS's watchdog does (`reason`, the log's `detail`).
    case end(reason: String, detail: String)
}

/// The watch app's background life for `status`.
public struct BackgroundTaskStatus: Hashable, Sendable {
    public var policy: BackgroundLaunchPolicy.Mode
    public var seed: UInt64
    public var windowMilliseconds: Int64
    public var budgetMilliseconds: Int64
    /// What is left of the current background run's budget, while one runs.
    public var budgetLeftMilliseconds: Int64?
    public var isSuspended: Bool
    /// The open tasks, then the latest finished ones, oldest first.
    public var tasks: [BackgroundTask]
    /// When the next background run for data starts, if one is asked for.
    public var nextWakeInMilliseconds: Int64?
    /// The scheduled refresh tasks and when each comes due.
    public var scheduled: [Scheduled]
    /// Background launches and wakes of the last hour, against the hourly allowance.
    public var launchesThisHour: Int
    public var launchesPerHour: Int

    public struct Scheduled: Hashable, Sendable {
        public var kind: BackgroundTaskKind
        public var inMilliseconds: Int64
    }
}
