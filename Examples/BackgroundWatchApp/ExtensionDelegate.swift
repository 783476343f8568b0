import WatchConnectivity
import WatchKit

/// The app's delegate: it activates the session as early as it can (a background launch's
/// time is short), keeps the WatchConnectivity tasks it is handed, and completes them once the
/// session is activated and `hasContentPending` is false, observing both properties.
final class ExtensionDelegate: NSObject, WKExtensionDelegate {
    private let receiver = SessionReceiver()
    private var observations: [NSKeyValueObservation] = []
    private var connectivityTasks: [WKWatchConnectivityRefreshBackgroundTask] = []

    override init() {
        super.init()
        let session = WCSession.default
        observations.append(
            session.observe(\.activationState) { [weak self] _, _ in
                DispatchQueue.main.async { self?.completeConnectivityTasks() }
            })
        observations.append(
            session.observe(\.hasContentPending, options: [.new]) { [weak self] _, change in
                say("hasContentPending \(change.newValue.map(String.init(describing:)) ?? "?")")
                DispatchQueue.main.async { self?.completeConnectivityTasks() }
            })
        session.delegate = receiver
        session.activate()
    }

    func applicationDidFinishLaunching() {
        say("launched in the \(WKExtension.shared().applicationState == .active ? "foreground" : "background")")
    }

    func applicationDidBecomeActive() {
        say("active")
    }

    func applicationDidEnterBackground() {
        say("background")
        scheduleRefreshIfAsked()
    }

    /// With `--refresh-after S`: a background refresh S seconds from now.
    private func scheduleRefreshIfAsked() {
        guard let seconds = Options.refreshAfter else { return }
        let date = Date(timeIntervalSinceNow: seconds)
        WKExtension.shared().scheduleBackgroundRefresh(withPreferredDate: date, userInfo: ["purpose": "example"] as NSDictionary) { error in
            say(error.map { "refresh not scheduled: \($0)" } ?? String(format: "refresh scheduled for %.3f", date.timeIntervalSince1970))
        }
    }

    func handle(_ backgroundTasks: Set<WKRefreshBackgroundTask>) {
        for task in backgroundTasks {
            switch task {
            case let connectivity as WKWatchConnectivityRefreshBackgroundTask:
                say("task watchConnectivity")
                connectivity.expirationHandler = { say("task expiring") }
                connectivityTasks.append(connectivity)
            case let refresh as WKApplicationRefreshBackgroundTask:
                let purpose = (refresh.userInfo as? NSDictionary)?["purpose"] as? String ?? "none"
                say("task applicationRefresh, purpose \(purpose)")
                refresh.setTaskCompletedWithSnapshot(false)
            default:
                say("task \(type(of: task))")
                task.setTaskCompletedWithSnapshot(false)
            }
        }
        completeConnectivityTasks()
    }

    private func completeConnectivityTasks() {
        let session = WCSession.default
        guard !connectivityTasks.isEmpty, session.activationState == .activated, !session.hasContentPending else { return }
        guard !Options.neverComplete else { return say("keeps \(connectivityTasks.count) task(s) open") }
        for task in connectivityTasks { task.setTaskCompletedWithSnapshot(false) }
        say("completed \(connectivityTasks.count) task(s)")
        connectivityTasks.removeAll()
        scheduleRefreshIfAsked()
    }
}

/// The session's delegate: it shows what arrives.
final class SessionReceiver: NSObject, WCSessionDelegate {
    func session(_ session: WCSession, activationDidCompleteWith activationState: WCSessionActivationState, error: Error?) {
        say("activated, hasContentPending \(session.hasContentPending)")
    }

    func session(_ session: WCSession, didReceiveUserInfo userInfo: [String: Any] = [:]) {
        let n = userInfo["n"] as? Int ?? 0
        say("userInfo n=\(n)")
        if n == Options.stallOn {
            say("stalls on n=\(n)")
            while true { sleep(60) }
        }
    }

    func session(_ session: WCSession, didReceiveApplicationContext applicationContext: [String: Any]) {
        say("context \(applicationContext)")
    }
}
