import Dispatch
import LinkJSON
import WatchLinkClient

/// What a ``WCSession`` knows, guarded by one lock: its connection, the properties it
/// mirrors from the daemon, and the deliveries held back while activation is under way.
struct SessionState {
    /// The connection to the daemon once `activate()` has connected; `nil` before and after
    /// the daemon went away.
    var client: WatchLinkClient?
    /// Where the daemon is, once resolved.
    var location: DaemonLocation?
    /// The daemon's role, from `status`.
    var role: WatchLinkSide?
    /// `activate()` is under way.
    var activating = false
    /// Delegate calls made while activating, run after `activationDidComplete` as on a device;
    /// `nil` when none are held.
    var heldDeliveries: [@Sendable () -> Void]?

    var activationState: WCSessionActivationState = .notActivated
    var isReachable = false
    var isPaired = false
    var isWatchAppInstalled = false
    var isComplicationEnabled = false
    var isCompanionAppInstalled = false
    /// Queued items the daemon handed this process whose delegate method has not returned yet.
    var pendingDeliveries = 0
    var hasContentPending: Bool { pendingDeliveries > 0 }
    var remainingComplicationUserInfoTransfers = 0
    /// Phone: the app's directory for the watch of its session (`status.watchDirectory`), nil
    /// while there is none (no paired watch, the watch app not installed, not activated).
    var watchDirectory: String?
    var applicationContext: JSONObject = [:]
    var receivedApplicationContext: JSONObject = [:]

    /// Takes in the fields of `status`. The activation state is not among them: it changes with
    /// the activation's answer and the session's events, and a `status` asked for before the
    /// activation may be answered after it.
    mutating func apply(_ status: WatchLinkStatus) {
        role = status.role
        isReachable = status.isReachable
        isPaired = status.isPaired ?? isPaired
        isWatchAppInstalled = status.isWatchAppInstalled ?? isWatchAppInstalled
        isComplicationEnabled = status.isComplicationEnabled ?? isComplicationEnabled
        isCompanionAppInstalled = status.isCompanionAppInstalled ?? isCompanionAppInstalled
        remainingComplicationUserInfoTransfers = status.remainingComplicationUserInfoTransfers ?? 0
        watchDirectory = status.raw["watchDirectory"]?.stringValue
    }

    /// Forgets the connection and what only a live session has; news held back for an
    /// activation that will not complete are dropped.
    mutating func disconnect() {
        client = nil
        activating = false
        heldDeliveries = nil
        activationState = .notActivated
        isReachable = false
        pendingDeliveries = 0
    }
}

extension WCSessionActivationState {
    init(_ state: WatchLinkActivationState) {
        switch state {
        case .notActivated: self = .notActivated
        case .inactive: self = .inactive
        case .activated: self = .activated
        }
    }

    init?(name: String) {
        guard let state = WatchLinkActivationState(rawValue: name) else { return nil }
        self.init(state)
    }
}
