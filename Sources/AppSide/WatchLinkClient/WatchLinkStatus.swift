import LinkJSON

/// The common fields of a daemon's `status`; ``raw`` has every field.
public struct WatchLinkStatus: Sendable, Hashable {
    /// Which side answered.
    public var role: WatchLinkSide
    /// The app's session: `notActivated`, `inactive` (phone, during a watch switch) or `activated`.
    public var activationState: WatchLinkActivationState
    /// Whether the counterpart is reachable for messages now.
    public var isReachable: Bool
    /// Why the counterpart is not reachable, in words, while ``isReachable`` is false.
    public var unreachableReason: String?
    /// The app's state on this side.
    public var appState: WatchLinkAppState
    /// Whether received items wait for the app.
    public var hasContentPending: Bool
    /// Phone: whether a watch is paired; `nil` on the watch.
    public var isPaired: Bool?
    /// Phone: whether the watch app is installed; `nil` on the watch.
    public var isWatchAppInstalled: Bool?
    /// Phone: whether the complication is enabled; `nil` on the watch.
    public var isComplicationEnabled: Bool?
    /// Watch: whether the iOS app is installed; `nil` on the phone.
    public var isCompanionAppInstalled: Bool?
    /// The userInfo transfers not yet acknowledged by the other side.
    public var outstandingUserInfoTransfers: Int
    /// The file transfers not yet delivered.
    public var outstandingFileTransfers: Int
    /// Phone: what is left of the day's complication budget; `nil` on the watch.
    public var remainingComplicationUserInfoTransfers: Int?
    /// The whole result of `status`.
    public var raw: JSONObject

    /// Reads the result of `status`.
    ///
    /// - Throws: ``WatchLinkError/invalidResponse(_:)`` when a common field is missing.
    public init(_ result: JSONObject) throws(WatchLinkError) {
        let reader = ResultReader(result, op: "status")
        role = try reader.value("role", as: WatchLinkSide.self)
        activationState = try reader.value("activationState", as: WatchLinkActivationState.self)
        isReachable = try reader.bool("isReachable")
        unreachableReason = reader.optionalString("unreachableReason")
        appState = try reader.value("appState", as: WatchLinkAppState.self)
        hasContentPending = reader.optionalBool("hasContentPending") ?? false
        isPaired = reader.optionalBool("isPaired")
        isWatchAppInstalled = reader.optionalBool("isWatchAppInstalled")
        isComplicationEnabled = reader.optionalBool("isComplicationEnabled")
        isCompanionAppInstalled = reader.optionalBool("isCompanionAppInstalled")
        outstandingUserInfoTransfers = reader.optionalInt("outstandingUserInfoTransfers") ?? 0
        outstandingFileTransfers = reader.optionalInt("outstandingFileTransfers") ?? 0
        remainingComplicationUserInfoTransfers = reader.optionalInt("remainingComplicationUserInfoTransfers")
        raw = result
    }
}
