import Dispatch
import Foundation
import LinkJSON
import WatchLinkClient

// swift-format-ignore: AlwaysUseLowerCamelCase
/// The domain of HealthKit's errors.
public let HKErrorDomain = "com.apple.healthkit"

/// HealthKit's store. Here only what a workout session needs: it makes none of the health data.
open class HKHealthStore: NSObject, @unchecked Sendable {
    /// Whether health data is available on this device: true on the emulated watch.
    open class func isHealthDataAvailable() -> Bool { true }
}

/// Where a workout takes place (Apple's `HKWorkoutSessionLocationType`).
public enum HKWorkoutSessionLocationType: Int, Sendable, Hashable {
    case unknown = 1
    case indoor = 2
    case outdoor = 3
}

/// The states of a workout session (Apple's `HKWorkoutSessionState`).
public enum HKWorkoutSessionState: Int, Sendable, Hashable {
    case notStarted = 1
    case running = 2
    case ended = 3
    case paused = 4
    case prepared = 5
    case stopped = 6
}

/// What kind of workout a session records (Apple's `HKWorkoutConfiguration`).
open class HKWorkoutConfiguration: NSObject, @unchecked Sendable {
    open var activityType: HKWorkoutActivityType = .other
    open var locationType: HKWorkoutSessionLocationType = .unknown
}

/// What a workout session tells of its state (Apple's `HKWorkoutSessionDelegate`): every call on
/// one serial background queue, as HealthKit's.
public protocol HKWorkoutSessionDelegate: AnyObject {
    func workoutSession(
        _ workoutSession: HKWorkoutSession, didChangeTo toState: HKWorkoutSessionState,
        from fromState: HKWorkoutSessionState, date: Date)
    func workoutSession(_ workoutSession: HKWorkoutSession, didFailWithError error: any Error)
}

/// A workout on the watch (Apple's `HKWorkoutSession`). While it runs (from
/// ``startActivity(with:)`` until ``stopActivity(with:)`` or ``end()``, paused included) the
/// watch app runs with a high priority in the background, and stays reachable there:
/// `isReachable` (WatchKit extension): "the WatchKit extension is running in the foreground, or
/// is running with a high priority in the background (for example, during a workout session
/// ...)". It tells watchd (`workout.start`, `workout.end`); nothing is measured.
open class HKWorkoutSession: NSObject, @unchecked Sendable {
    private let lock = NSLock()
    private var current: HKWorkoutSessionState = .notStarted
    private weak var delegateReference: (any HKWorkoutSessionDelegate)?
    private let queue = DispatchQueue(label: "HealthKit.HKWorkoutSession.delegate")
    private var dates: (start: Date?, end: Date?) = (nil, nil)

    /// The configuration the session was made with.
    public let workoutConfiguration: HKWorkoutConfiguration

    /// A session for `configuration`, not started.
    public init(healthStore: HKHealthStore, configuration workoutConfiguration: HKWorkoutConfiguration) throws {
        self.workoutConfiguration = workoutConfiguration
        super.init()
    }

    /// Told of the session's changes; held weakly.
    open var delegate: (any HKWorkoutSessionDelegate)? {
        get { lock.withLock { delegateReference } }
        set { lock.withLock { delegateReference = newValue } }
    }

    /// The session's state.
    open var state: HKWorkoutSessionState { lock.withLock { current } }
    /// When the activity started, once it has.
    open var startDate: Date? { lock.withLock { dates.start } }
    /// When the session ended, once it has.
    open var endDate: Date? { lock.withLock { dates.end } }

    /// Prepares the sensors: the session is `prepared`.
    open func prepare() {
        move(to: .prepared, from: [.notStarted])
    }

    /// Starts the workout: the session runs, and with it the app in the background.
    open func startActivity(with date: Date?) {
        guard move(to: .running, from: [.notStarted, .prepared], date: date) else { return }
        lock.withLock { dates.start = date ?? Date() }
        tell("workout.start")
    }

    /// Pauses the workout; the session (and the app's priority) lasts.
    open func pause() {
        move(to: .paused, from: [.running])
    }

    /// Resumes a paused workout.
    open func resume() {
        move(to: .running, from: [.paused])
    }

    /// Stops the activity: the session is `stopped`, and the app loses its priority.
    open func stopActivity(with date: Date?) {
        guard move(to: .stopped, from: [.running, .paused], date: date) else { return }
        tell("workout.end")
    }

    /// Ends the session.
    open func end() {
        let wasActive = [.running, .paused].contains(state)
        guard move(to: .ended, from: [.notStarted, .prepared, .running, .paused, .stopped]) else { return }
        lock.withLock { dates.end = Date() }
        if wasActive { tell("workout.end") }
    }

    /// Moves from one of `allowed` to `state` and tells the delegate; false when the session is
    /// in none of them.
    @discardableResult
    private func move(to state: HKWorkoutSessionState, from allowed: Set<HKWorkoutSessionState>, date: Date? = nil) -> Bool {
        let previous = lock.withLock { () -> HKWorkoutSessionState? in
            guard allowed.contains(current) else { return nil }
            defer { current = state }
            return current
        }
        guard let previous else { return false }
        let when = date ?? Date()
        queue.async { [self] in delegate?.workoutSession(self, didChangeTo: state, from: previous, date: when) }
        return true
    }

    /// Tells watchd; a failure reaches the delegate as HealthKit's error.
    private func tell(_ op: String) {
        switch SystemConnection.shared(framework: "HealthKit") {
        case .failure(let failure):
            fail("\(failure)")
        case .success(let connection):
            connection.client.send(op) { [self] result in
                if case .failure(let error) = result { fail("\(op): \(error.message)") }
            }
        }
    }

    private func fail(_ text: String) {
        let error = NSError(domain: HKErrorDomain, code: 3, userInfo: [NSLocalizedDescriptionKey: text])
        queue.async { [self] in delegate?.workoutSession(self, didFailWithError: error) }
    }
}
