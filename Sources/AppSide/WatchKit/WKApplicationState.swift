/// The running states of a watchOS app (`WKApplication.applicationState`).
public enum WKApplicationState: Int, Sendable, Hashable {
    /// Running in the foreground and receiving events.
    case active = 0
    /// Running in the foreground, not receiving events (between the foreground and the background).
    case inactive = 1
    /// Running in the background: for a background task, or on its way to being suspended.
    case background = 2
}

/// Why the system asks for a snapshot (`WKSnapshotRefreshBackgroundTask.reasonForSnapshot`).
public enum WKSnapshotReason: Int, Sendable, Hashable {
    /// The app scheduled it (`scheduleSnapshotRefresh(withPreferredDate:...)`).
    case appScheduled = 0
    case returnToDefaultState = 1
    case complicationUpdate = 2
    case prelaunch = 3
    case appBackgrounded = 4
}
