import Dispatch
import Foundation
import LinkJSON
import WatchLinkClient

// swift-format-ignore: AlwaysUseLowerCamelCase
/// Runs a watch app: makes its delegate, attaches the app's WatchKit to its watch's daemon
/// (`watchd`), tells the delegate of its launch, hands it the background tasks and state changes
/// watchOS gives it, and runs the main queue (so `DispatchQueue.main.async` in delegate code
/// runs). It never returns.
///
/// On a device `@main`, the storyboard or the `WKExtensionDelegateClassName` key name the
/// delegate; an app built for Linux names it in its `main.swift`:
///
/// ```swift
/// import WatchKit
///
/// WKApplicationMain(ExtensionDelegate())
/// ```
///
/// The delegate is made first (an app's delegate typically activates its `WCSession` in its
/// initializer), then `applicationDidFinishLaunching()` and, in the foreground,
/// `applicationDidBecomeActive()` run, and only then `handle(_:)` with the tasks the app was
/// launched for. Without a daemon (no `WATCHLINK_*` environment, nothing listening) the app runs
/// in the foreground with no background tasks, and says so on standard error.
///
/// Call it on the main thread (top-level code of `main.swift`), in either language mode.
public func WKApplicationMain<Delegate: WKApplicationDelegate>(_ makeDelegate: @autoclosure @MainActor () -> Delegate) -> Never {
    MainActor.assumeIsolated { WatchApp.run(makeDelegate()) }
}

/// The running app's WatchKit on the main thread: its delegate, state and open tasks.
@MainActor
enum WatchApp {
    static var delegate: (any WKApplicationDelegate)?
    static var applicationState = WKApplicationState.active
    /// Tasks handed to the delegate and not yet expired, by number.
    private static var tasks: [UInt64: WKRefreshBackgroundTask] = [:]
    /// The app's state as watchd last said it (`app.stateDidChange`).
    private static var reportedState = "foreground"

    static func run(_ delegate: some WKApplicationDelegate) -> Never {
        self.delegate = delegate
        let answer = WatchKitConnection.shared.attach { event in
            DispatchQueue.main.async { MainActor.assumeIsolated { receive(event) } }
        }
        reportedState = answer?["appState"]?.stringValue ?? "foreground"
        applicationState = reportedState == "background" ? .background : .active
        delegate.applicationDidFinishLaunching()
        if applicationState == .active { delegate.applicationDidBecomeActive() }
        dispatchMain()
    }

    /// The events that came while tasks wait to be handed over (`nil` while none do), taken in
    /// order once they are.
    private static var heldEvents: [WatchLinkEvent]?

    private static func receive(_ event: WatchLinkEvent) {
        if heldEvents != nil {
            heldEvents?.append(event)
        } else {
            handle(event)
        }
    }

    private static func handle(_ event: WatchLinkEvent) {
        switch event.name {
        case "backgroundTask.handed":
            let handed = tasks(in: event.data).map { task -> WKRefreshBackgroundTask in
                let known = tasks[task.taskId] ?? task
                tasks[task.taskId] = known
                return known
            }
            guard !handed.isEmpty else { return }
            // On a watch the data a task is for is the session's when `handle(_:)` runs
            // (`hasContentPending` stays true until its delegate has it): watchd wrote it to the
            // session's connection first, and the session takes it in before the task is handed.
            heldEvents = []
            AppSessionConnection.afterEventsWrittenSoFar {
                DispatchQueue.main.async { MainActor.assumeIsolated { handOver(handed) } }
            }
        case "backgroundTask.expiring":
            for id in taskIds(in: event.data) { tasks[id]?.expire() }
        case "backgroundTask.completed", "backgroundTask.expired":
            if let id = event.data["taskId"]?.intValue { tasks[UInt64(id)] = nil }
        case "app.stateDidChange":
            guard let state = event.data["appState"]?.stringValue, state != reportedState else { return }
            reportedState = state
            enter(state)
        default:
            break
        }
    }

    /// `handle(_:)` with `handed`, then the events held meanwhile.
    private static func handOver(_ handed: [WKRefreshBackgroundTask]) {
        let held = heldEvents ?? []
        heldEvents = nil
        delegate?.handle(Set(handed))
        for event in held { receive(event) }
    }

    /// The delegate's life-cycle calls, in Apple's order, for the app's new state.
    private static func enter(_ state: String) {
        guard let delegate else { return }
        switch state {
        case "foreground":
            guard applicationState != .active else { return }
            delegate.applicationWillEnterForeground()
            applicationState = .active
            delegate.applicationDidBecomeActive()
        case "background":
            guard applicationState == .active else { return }
            applicationState = .inactive
            delegate.applicationWillResignActive()
            applicationState = .background
            delegate.applicationDidEnterBackground()
        default:
            break
        }
    }

    private static func taskIds(in data: JSONObject) -> [UInt64] {
        (data["tasks"]?.arrayValue ?? []).compactMap { $0.objectValue?["taskId"]?.intValue }.map { UInt64($0) }
    }

    private static func tasks(in data: JSONObject) -> [WKRefreshBackgroundTask] {
        (data["tasks"]?.arrayValue ?? []).compactMap { value -> WKRefreshBackgroundTask? in
            guard let task = value.objectValue, let id = task["taskId"]?.intValue, id > 0 else { return nil }
            let userInfo = TaskUserInfo.decode(task["userInfo"])
            switch task["kind"]?.stringValue {
            case "watchConnectivity": return WKWatchConnectivityRefreshBackgroundTask(taskId: UInt64(id), userInfo: userInfo)
            case "applicationRefresh": return WKApplicationRefreshBackgroundTask(taskId: UInt64(id), userInfo: userInfo)
            case "snapshot": return WKSnapshotRefreshBackgroundTask(taskId: UInt64(id), userInfo: userInfo)
            default: return nil
            }
        }
    }
}
