import Foundation
import LinkJSON
import WatchLinkClient

/// The app process's WatchKit towards its watch's daemon (`watchd`), as WatchKit talks to
/// watchOS: `watchKit.attach` at launch (this connection is handed the app's background tasks and
/// hears of its state), `backgroundTask.complete` and `backgroundTask.schedule`. It finds the
/// daemon as `WatchConnectivity` does (`WATCHLINK_CONTROL`, or `WATCHLINK_HOME` and
/// `WATCHLINK_SIDE`, here `watch` unless it says otherwise).
final class WatchKitConnection: Sendable {
    static let shared = WatchKitConnection()

    private let client = Locked<WatchLinkClient?>(nil)

    /// Connects and attaches; `onEvent` gets the daemon's events on the connection's queue.
    /// The answer of `watchKit.attach`, or nil when there is no daemon to attach to (said on
    /// standard error: the app runs in the foreground without background tasks).
    func attach(onEvent: @escaping @Sendable (WatchLinkEvent) -> Void) -> JSONObject? {
        var environment = ProcessInfo.processInfo.environment
        if (environment[DaemonLocation.sideVariable] ?? "").isEmpty { environment[DaemonLocation.sideVariable] = "watch" }
        let location: DaemonLocation
        do {
            location = try DaemonLocation.resolve(environment: environment)
        } catch {
            Self.warn("\(error.description); running without a watch daemon")
            return nil
        }
        let connection: WatchLinkClient
        do {
            connection = try WatchLinkClient.connectNow(socketPath: location.socketPath)
        } catch {
            Self.warn(location.unreachable(error, framework: "WatchKit") + "; running without background tasks")
            return nil
        }
        connection.onEvent(onEvent)
        connection.onClose { reason in Self.warn("lost the connection to watchd: \(reason.message)") }
        switch connection.callAndWait("watchKit.attach", ["state": "foreground"]) {
        case .success(let answer):
            client.withLock { $0 = connection }
            return answer
        case .failure(let error):
            connection.close()
            Self.warn("watchd refused watchKit.attach: \(error.message); running without background tasks")
            return nil
        }
    }

    func complete(taskId: UInt64, snapshot: Bool) {
        guard let client = client.withLock({ $0 }) else { return }
        client.send("backgroundTask.complete", ["taskId": .int(Int64(clamping: taskId)), "snapshot": .bool(snapshot)]) { result in
            if case .failure(let error) = result { Self.warn("cannot complete background task \(taskId): \(error.message)") }
        }
    }

    /// Schedules a task of `kind` at `date`; `completion` runs on the main queue.
    func schedule(
        _ kind: TaskKind, at date: Date, userInfo: (any NSSecureCoding & NSObjectProtocol)?,
        completion: @escaping ((any Error)?) -> Void
    ) {
        let done = UncheckedBox(completion)
        let finish: @Sendable ((any Error)?) -> Void = { error in
            let error = error.map { UncheckedBox($0) }
            DispatchQueue.main.async { done.value(error?.value) }
        }
        guard let client = client.withLock({ $0 }) else {
            return finish(WatchKitError(.unknown, "WatchKit is not attached to a watch daemon (run the app with WKApplicationMain, launched by watchd)"))
        }
        // The app's date is of its own clock, the device's time is the watch's (a manual clock
        // in a test): the task is due as far ahead of the device's time as `date` is of the app's.
        let milliseconds = date.timeIntervalSinceNow * 1_000
        let inMs = milliseconds.isFinite ? Int64(min(max(0, milliseconds), Double(Self.longestScheduleMilliseconds)).rounded(.up)) : 0
        var args: JSONObject = ["kind": .string(kind.rawValue), "inMs": .int(inMs)]
        if let userInfo { args["userInfo"] = .object(TaskUserInfo.encode(userInfo)) }
        client.send("backgroundTask.schedule", args) { result in
            switch result {
            case .success: finish(nil)
            case .failure(let error): finish(WatchKitError(.invalidArgument, error.message))
            }
        }
    }

    /// A year: watchd takes a later preferred date as a year from now.
    static let longestScheduleMilliseconds: Int64 = 366 * 24 * 3_600_000

    enum TaskKind: String {
        case applicationRefresh
        case snapshot
    }

    /// What watchOS would write to the console.
    static func warn(_ text: String) {
        FileHandle.standardError.write(Data("WatchKit: \(text)\n".utf8))
    }
}
