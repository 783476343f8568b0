import Foundation
import LinkJSON
import WatchLinkClient

/// The app's WatchConnectivity session with its counterpart, backed by a WatchLink daemon:
/// `phoned` for an iOS app, `watchd` for a watchOS app (see ``activate()`` for which).
///
/// ```swift
/// if WCSession.isSupported() {
///     let session = WCSession.default
///     session.delegate = self
///     session.activate()
/// }
/// ```
///
/// Every delegate callback, reply handler and error handler runs on one background serial
/// queue, as on a device.
open class WCSession: NSObject, @unchecked Sendable {
    let state: ObservedSessionState
    let transfers = TransferRegistry()
    let delegateQueue = DispatchQueue(label: "WatchConnectivity.WCSession.delegate")
    /// Set by a default delegate method when it runs: the delegate lacks that method.
    let lacksMethod = Locked(false)
    private let delegateReference = Locked(WeakDelegate())

    private struct WeakDelegate {
        weak var value: (any WCSessionDelegate)?
    }

    /// A session for the daemon at `location`; `nil` reads the environment at `activate()`.
    init(location: DaemonLocation?) {
        state = ObservedSessionState(SessionState(location: location))
        super.init()
        state.session = self
    }

    private static let shared = Locked(WCSession(location: nil))

    /// Whether this process can use a session: always true here (the daemon's presence is
    /// checked by ``activate()``, which reports its absence as an activation error).
    open class func isSupported() -> Bool { true }

    /// The app's one session.
    open class var `default`: WCSession { shared.current }

    /// Replaces ``default`` with a session for the control socket at `controlSocketPath`
    /// (`nil`: the environment's daemon) and closes the previous one's connection.
    @_spi(Testing) public static func resetDefault(controlSocketPath: String?) {
        let replacement = WCSession(location: controlSocketPath.map(DaemonLocation.socket))
        let previous = shared.withLock { current -> WCSession in
            defer { current = replacement }
            return current
        }
        previous.invalidate()
    }

    /// Moves the running app to `state` (`"foreground"` or `"background"`), as the system's
    /// app lifecycle does on a device: the other side's `isReachable` follows. For tests and
    /// harnesses; app code on a device has no such call. False when the daemon refused it or
    /// the session has no connection (activate first).
    @_spi(Testing) public func setApplicationState(_ state: String) -> Bool {
        guard case .success(let client) = connectedClient(),
            case .success = callSynchronously(client, "app.setState", ["state": .string(state)])
        else { return false }
        return true
    }

    /// Closes the connection to the daemon (the app stops running there) and forgets the
    /// session's state, as when the app quits.
    @_spi(Testing) public func invalidate() {
        let client = state.withLock { state -> WatchLinkClient? in
            defer { state.disconnect() }
            return state.client
        }
        client?.close()
    }

    /// The object told of activation, reachability, messages and transfers; held weakly.
    /// Set it before ``activate()``.
    open var delegate: (any WCSessionDelegate)? {
        get { delegateReference.withLock { $0.value } }
        set { delegateReference.withLock { $0.value = newValue } }
    }

    /// Connects to the daemon and activates the session; the delegate's
    /// `session(_:activationDidCompleteWith:error:)` reports the outcome.
    ///
    /// The daemon is the one the environment names: `WATCHLINK_CONTROL` (a control socket
    /// path), else `WATCHLINK_SIDE` (`phone`, the default, or `watch`) in the home
    /// `WATCHLINK_HOME` (else the daemons' default home). When nothing answers there, the
    /// activation fails with ``WCError/Code/genericError`` naming the socket.
    open func activate() {
        startActivation()
    }

    /// The session's activation state.
    open var activationState: WCSessionActivationState { state.withLock { $0.activationState } }

    /// Whether the counterpart is reachable for ``sendMessage(_:replyHandler:errorHandler:)``.
    open var isReachable: Bool { state.withLock { $0.isReachable } }

    /// Whether the iPhone is paired with an Apple Watch (iOS).
    open var isPaired: Bool { state.withLock { $0.isPaired } }

    /// Whether the Watch app is installed on the paired watch (iOS).
    open var isWatchAppInstalled: Bool { state.withLock { $0.isWatchAppInstalled } }

    /// Whether the app's complication is on the active watch face (iOS).
    open var isComplicationEnabled: Bool { state.withLock { $0.isComplicationEnabled } }

    /// Whether the counterpart iOS app is installed (watchOS).
    open var isCompanionAppInstalled: Bool { state.withLock { $0.isCompanionAppInstalled } }

    /// Whether the iPhone must be unlocked before the watch can reach it (watchOS): never here.
    open var iOSDeviceNeedsUnlockAfterRebootForReachability: Bool { false }

    /// Whether the session has received content it has not delivered to the delegate yet:
    /// true from the moment the daemon hands an item to this process until the delegate method
    /// that takes it has returned ("true if the session has received data in the background but
    /// has not yet delivered that data to the session's delegate", Apple's `hasContentPending`).
    /// Observable (`observe(\.hasContentPending)`).
    open var hasContentPending: Bool { state.withLock { $0.hasContentPending } }

    /// How many more complication transfers the day's budget allows (iOS).
    open var remainingComplicationUserInfoTransfers: Int { state.withLock { $0.remainingComplicationUserInfoTransfers } }

    /// A directory for the data of the Watch app on the selected watch (iOS), created when
    /// first asked for: one per paired watch (`HOME/phone-app/Watches/<watch>`), nil before the
    /// session is activated, while no watch is paired or while the Watch app is not installed.
    /// Deleted at the app's next launch after the Watch app is uninstalled for that watch or
    /// the watch is unpaired (`WCSession.h`).
    open var watchDirectoryURL: URL? { currentWatchDirectoryURL() }

    /// The application context this app sent last.
    open var applicationContext: [String: Any] {
        PropertyListConversion.dictionary(from: state.withLock { $0.applicationContext })
    }

    /// The application context the counterpart sent last.
    open var receivedApplicationContext: [String: Any] {
        PropertyListConversion.dictionary(from: state.withLock { $0.receivedApplicationContext })
    }

    /// Sends `message` to the reachable counterpart at once.
    ///
    /// With a `replyHandler`, the counterpart's `session(_:didReceiveMessage:replyHandler:)`
    /// must answer; otherwise its `session(_:didReceiveMessage:)` gets the message. Exactly
    /// one of `replyHandler` or `errorHandler` is called, on the session's queue.
    open func sendMessage(
        _ message: [String: Any], replyHandler: (([String: Any]) -> Void)?,
        errorHandler: ((any Error) -> Void)? = nil
    ) {
        sendDictionaryMessage(message, replyHandler: replyHandler, errorHandler: errorHandler)
    }

    /// Sends `data` to the reachable counterpart at once; see
    /// ``sendMessage(_:replyHandler:errorHandler:)``.
    open func sendMessageData(
        _ data: Data, replyHandler: ((Data) -> Void)?,
        errorHandler: ((any Error) -> Void)? = nil
    ) {
        sendDataMessage(data, replyHandler: replyHandler, errorHandler: errorHandler)
    }

    /// Replaces the application context the counterpart receives; the newest one wins.
    ///
    /// - Throws: ``WCError`` — ``WCError/Code/payloadUnsupportedTypes`` naming the key of a
    ///   value that is not a property-list value, ``WCError/Code/sessionNotActivated``,
    ///   pairing errors, ``WCError/Code/payloadTooLarge``.
    open func updateApplicationContext(_ applicationContext: [String: Any]) throws {
        try updateContext(applicationContext)
    }

    /// Queues `userInfo` for guaranteed, in-order delivery, even while the counterpart is not
    /// reachable. Failures arrive in `session(_:didFinish:error:)`.
    @discardableResult
    open func transferUserInfo(_ userInfo: [String: Any] = [:]) -> WCSessionUserInfoTransfer {
        startUserInfoTransfer(userInfo, complication: false)
    }

    /// Queues `userInfo` for the watch's complication, ahead of other userInfo (iOS); counts
    /// against ``remainingComplicationUserInfoTransfers``.
    @discardableResult
    open func transferCurrentComplicationUserInfo(_ userInfo: [String: Any] = [:]) -> WCSessionUserInfoTransfer {
        startUserInfoTransfer(userInfo, complication: true)
    }

    /// The userInfo transfers not yet delivered, oldest first (asks the daemon).
    open var outstandingUserInfoTransfers: [WCSessionUserInfoTransfer] { currentOutstandingUserInfoTransfers() }

    /// Sends the file at `file` with `metadata`, in the background. Progress is in the
    /// transfer's `progress`; the outcome in `session(_:didFinish:error:)`.
    @discardableResult
    open func transferFile(_ file: URL, metadata: [String: Any]?) -> WCSessionFileTransfer {
        startFileTransfer(file, metadata: metadata)
    }

    /// The file transfers not yet delivered, oldest first (asks the daemon).
    open var outstandingFileTransfers: [WCSessionFileTransfer] { currentOutstandingFileTransfers() }

    /// Called by a default delegate method: the delegate does not implement it.
    func delegateLacksMethod() {
        lacksMethod.withLock { $0 = true }
    }
}
