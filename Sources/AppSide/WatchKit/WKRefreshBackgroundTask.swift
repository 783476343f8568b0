import Foundation
import WatchLinkClient

/// A background task watchOS hands the app's delegate (`handle(_:)`): the abstract superclass
/// of the task classes (Apple's `WKRefreshBackgroundTask`). The system makes them; complete each
/// with ``setTaskCompletedWithSnapshot(_:)`` once done. "An uncompleted task consumes the
/// background-task time budget that watchOS allocates to the app, which results in a crash when
/// the budget runs out" (Apple's sample "Transferring data with Watch Connectivity"): here the
/// watchdog ends the app when its background run's budget (15 s) is spent with a task open.
public class WKRefreshBackgroundTask: NSObject, @unchecked Sendable {
    /// The task's number on the watch's emulated OS.
    let taskId: UInt64
    private let completed = Locked(false)
    private let expiration = Locked<UncheckedBox<() -> Void>?>(nil)
    private let info: (any NSSecureCoding & NSObjectProtocol)?

    init(taskId: UInt64, userInfo: (any NSSecureCoding & NSObjectProtocol)?) {
        self.taskId = taskId
        info = userInfo
        super.init()
    }

    /// What the app gave when it scheduled the task; `nil` for tasks the system made.
    public var userInfo: (any NSSecureCoding & NSObjectProtocol)? { info }

    /// Called when the task's background time is about to run out (a second before the
    /// budget is spent): clean up and complete the task.
    public var expirationHandler: (() -> Void)? {
        get { expiration.withLock { $0?.value } }
        set {
            let handler = newValue.map { UncheckedBox($0) }
            expiration.withLock { $0 = handler }
        }
    }

    /// Marks the task complete; `refreshSnapshot` asks for a new snapshot (nothing is drawn
    /// here). When every task of the background run is complete, watchOS suspends the app.
    public func setTaskCompletedWithSnapshot(_ refreshSnapshot: Bool) {
        complete(snapshot: refreshSnapshot)
    }

    /// Marks the task complete (watchOS 3; replaced by ``setTaskCompletedWithSnapshot(_:)``).
    @available(*, deprecated, message: "Use setTaskCompletedWithSnapshot(_:) instead")
    public func setTaskCompleted() {
        complete(snapshot: true)
    }

    func complete(snapshot: Bool) {
        let first = completed.withLock { done -> Bool in
            defer { done = true }
            return !done
        }
        guard first else {
            // A field report: an app crashing "when completing the background refresh operation
            // ... because the task is being called more than once" (home-assistant/iOS 1168).
            fatalError("WatchKit: \(self) was completed more than once; watchOS ends an app for that")
        }
        // Told at the end of the main queue's current turn: the app is suspended once watchd
        // hears of its last completion, and what the app does right after completing (Apple's
        // sample schedules a snapshot refresh) reaches watchd first, as it does on a watch.
        let taskId = taskId
        DispatchQueue.main.async { WatchKitConnection.shared.complete(taskId: taskId, snapshot: snapshot) }
    }

    /// Runs the expiration handler, if the task is still open.
    func expire() {
        guard !completed.withLock({ $0 }) else { return }
        expiration.withLock { $0?.value }?()
    }

    public override var description: String {
        "<\(type(of: self)): \(taskId)>"
    }
}

/// Data the paired iPhone sent while the app was not in the foreground (Apple's
/// `WKWatchConnectivityRefreshBackgroundTask`). Complete it once the app's session is activated
/// and has delivered its pending data (`WCSession.hasContentPending` is false).
public final class WKWatchConnectivityRefreshBackgroundTask: WKRefreshBackgroundTask, @unchecked Sendable {}

/// A background app refresh the app scheduled (`scheduleBackgroundRefresh(withPreferredDate:...)`).
public final class WKApplicationRefreshBackgroundTask: WKRefreshBackgroundTask, @unchecked Sendable {}

/// A snapshot refresh the app scheduled (`scheduleSnapshotRefresh(withPreferredDate:...)`).
public final class WKSnapshotRefreshBackgroundTask: WKRefreshBackgroundTask, @unchecked Sendable {
    /// Why the snapshot is asked for: the app scheduled it.
    public var reasonForSnapshot: WKSnapshotReason { .appScheduled }

    /// Completes the snapshot task. With an `estimatedSnapshotExpiration` other than
    /// `Date.distantFuture` the system schedules the next snapshot refresh for then.
    public func setTaskCompleted(
        restoredDefaultState: Bool, estimatedSnapshotExpiration expirationDate: Date?,
        userInfo: (any NSSecureCoding & NSObjectProtocol)?
    ) {
        complete(snapshot: true)
        guard let expirationDate, expirationDate < Date.distantFuture else { return }
        WatchKitConnection.shared.schedule(.snapshot, at: expirationDate, userInfo: userInfo) { error in
            if let error { WatchKitConnection.warn("the next snapshot refresh could not be scheduled: \(error)") }
        }
    }
}

/// A background URL session's events (Apple's `WKURLSessionRefreshBackgroundTask`): never
/// handed here (there are no background URL sessions), present for code that names it.
public final class WKURLSessionRefreshBackgroundTask: WKRefreshBackgroundTask, @unchecked Sendable {
    /// The identifier of the background session.
    public var sessionIdentifier: String { "" }
}

/// A value that is not `Sendable`, used where its owner says it may be (a handler the app gave,
/// called on the queue Apple's API promises).
final class UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
