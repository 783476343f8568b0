import Foundation
import LinkJSON
import WatchLinkClient
import WatchLinkObservation

/// Key-value observing of the session's properties, as apps do on a device: Apple's sample
/// "Transferring data with Watch Connectivity" completes its
/// `WKWatchConnectivityRefreshBackgroundTask`s when an observation of `activationState` or
/// `hasContentPending` fires, so
///
/// ```swift
/// observation = WCSession.default.observe(\.hasContentPending) { _, _ in
///     DispatchQueue.main.async { self.completeBackgroundTasks() }
/// }
/// ```
///
/// compiles and fires unchanged. Observable: `activationState`, `hasContentPending`,
/// `isReachable`, `isPaired`, `isWatchAppInstalled`, `isComplicationEnabled`,
/// `isCompanionAppInstalled`, `remainingComplicationUserInfoTransfers`, `applicationContext`
/// and `receivedApplicationContext`. A handler runs on the thread that changed the property
/// (the session's queues), once the value has changed, as KVO's does.
extension WCSession {
    /// Observes the session's property at `keyPath`; the observation lasts until it is
    /// invalidated or released.
    public func observe<Value>(
        _ keyPath: KeyPath<WCSession, Value>, options: NSKeyValueObservingOptions = [],
        changeHandler: @escaping (WCSession, NSKeyValueObservedChange<Value>) -> Void
    ) -> NSKeyValueObservation {
        if !ObservableValues.properties.contains(where: { $0.keyPath == keyPath }) {
            warn("\(keyPath) is not an observable property of WCSession: its observation never fires")
        }
        return state.observers.observe(self, keyPath, current: self[keyPath: keyPath], options: options, changeHandler: changeHandler)
    }
}

/// The session's state behind its lock, reporting every change of an observable property to
/// its observers once the lock is released.
final class ObservedSessionState: @unchecked Sendable {
    private let locked: Locked<SessionState>
    let observers = KeyValueObservers<WCSession>()
    /// The session the observers are told of; set once, right after the session is made.
    weak var session: WCSession?

    init(_ state: SessionState) {
        locked = Locked(state)
    }

    /// Runs `body` with the state; observers hear of what it changed after the lock is released.
    func withLock<Result>(_ body: (inout SessionState) throws -> Result) rethrows -> Result {
        guard !observers.isEmpty, let session else { return try locked.withLock(body) }
        var before: ObservableValues?
        var after: ObservableValues?
        let result = try locked.withLock { state -> Result in
            before = ObservableValues(state)
            defer { after = ObservableValues(state) }
            return try body(&state)
        }
        if let before, let after, before != after {
            for property in ObservableValues.properties where property.changed(before, after) {
                observers.changed(session, property.keyPath, from: property.value(before), to: property.value(after))
            }
        }
        return result
    }

    var current: SessionState { locked.current }
}

/// The observable properties' values, as the state gives them.
struct ObservableValues: Equatable {
    var activationState: WCSessionActivationState
    var hasContentPending: Bool
    var isReachable: Bool
    var isPaired: Bool
    var isWatchAppInstalled: Bool
    var isComplicationEnabled: Bool
    var isCompanionAppInstalled: Bool
    var remainingComplicationUserInfoTransfers: Int
    var applicationContext: JSONObject
    var receivedApplicationContext: JSONObject

    init(_ state: SessionState) {
        activationState = state.activationState
        hasContentPending = state.hasContentPending
        isReachable = state.isReachable
        isPaired = state.isPaired
        isWatchAppInstalled = state.isWatchAppInstalled
        isComplicationEnabled = state.isComplicationEnabled
        isCompanionAppInstalled = state.isCompanionAppInstalled
        remainingComplicationUserInfoTransfers = state.remainingComplicationUserInfoTransfers
        applicationContext = state.applicationContext
        receivedApplicationContext = state.receivedApplicationContext
    }

    /// One observable property: its key path on `WCSession`, and its value as the property
    /// returns it. Key paths and the functions over them are immutable: shared safely.
    struct Property: @unchecked Sendable {
        let keyPath: AnyKeyPath
        let changed: (ObservableValues, ObservableValues) -> Bool
        let value: (ObservableValues) -> Any

        init<Value: Equatable>(_ keyPath: KeyPath<WCSession, Value>, _ own: KeyPath<ObservableValues, Value>) {
            self.keyPath = keyPath
            changed = { $0[keyPath: own] != $1[keyPath: own] }
            value = { $0[keyPath: own] }
        }

        init(context keyPath: KeyPath<WCSession, [String: Any]>, _ own: KeyPath<ObservableValues, JSONObject>) {
            self.keyPath = keyPath
            changed = { $0[keyPath: own] != $1[keyPath: own] }
            value = { PropertyListConversion.dictionary(from: $0[keyPath: own]) }
        }
    }

    static let properties: [Property] = [
        Property(\WCSession.activationState, \.activationState),
        Property(\WCSession.hasContentPending, \.hasContentPending),
        Property(\WCSession.isReachable, \.isReachable),
        Property(\WCSession.isPaired, \.isPaired),
        Property(\WCSession.isWatchAppInstalled, \.isWatchAppInstalled),
        Property(\WCSession.isComplicationEnabled, \.isComplicationEnabled),
        Property(\WCSession.isCompanionAppInstalled, \.isCompanionAppInstalled),
        Property(\WCSession.remainingComplicationUserInfoTransfers, \.remainingComplicationUserInfoTransfers),
        Property(context: \WCSession.applicationContext, \.applicationContext),
        Property(context: \WCSession.receivedApplicationContext, \.receivedApplicationContext),
    ]
}
