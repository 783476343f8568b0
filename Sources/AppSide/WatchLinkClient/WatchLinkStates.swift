/// A session's activation state as the daemon names it (`WCSessionActivationState`).
public enum WatchLinkActivationState: String, Sendable, Hashable, CaseIterable {
    /// Not activated yet: nothing can be sent (7004 `sessionNotActivated`).
    case notActivated
    /// A phone's session after a watch switch, still delivering what the previous watch sent;
    /// new sends fail with 7016 `sessionInactive`.
    case inactive
    /// Activated: the session sends and receives.
    case activated
}

/// The app's state on one side (`app.setState`, `app.stateDidChange`).
public enum WatchLinkAppState: String, Sendable, Hashable, CaseIterable {
    /// Running in the foreground: reachable on either side.
    case foreground
    /// Running in the background: a phone app is still reachable (a watch message wakes it),
    /// a watch app is not.
    case background
    /// Not running: what the daemon receives waits for the app's next launch.
    case notRunning
}

/// How a side answers messages that want a reply (`replies.set`).
public enum WatchLinkReplyMode: String, Sendable, Hashable, CaseIterable {
    /// An empty dictionary, or empty Data (the default).
    case empty
    /// The message itself.
    case echo
    /// The configured `reply` / `replyData`.
    case fixed
    /// No reply: the sender gets 7012 after its timeout.
    case none
    /// `message.received` carries a `replyId`; answer with ``WatchLinkClient/reply(replyId:reply:)``.
    case manual
    /// The app has no reply handler: a message that wants a reply fails on the sender with 7014.
    case noReplyHandler
}

/// A device flag that `device.set` changes: the phone's `isPaired`, `isWatchAppInstalled`,
/// `isComplicationEnabled`; the watch's `isCompanionAppInstalled`, `isWatchOnlyApp`.
public enum WatchLinkDeviceFlag: String, Sendable, Hashable, CaseIterable {
    /// Phone: a watch is paired (false: sends fail with 7005 `deviceNotPaired`).
    case isPaired
    /// Phone: the watch app is installed (false: sends fail with 7006 `watchAppNotInstalled`).
    case isWatchAppInstalled
    /// Phone: the app's complication is on the watch face, so complication userInfo counts
    /// against the daily budget.
    case isComplicationEnabled
    /// Watch: the iOS app is installed (false: sends fail with 7018 `companionAppNotInstalled`).
    case isCompanionAppInstalled
    /// Watch: the app runs without an iOS app (sends fail with 7019 `watchOnlyApp`).
    case isWatchOnlyApp
}

/// The `WCSessionDelegate` message methods an attached app has (`app.attach` `handles`).
public struct WatchLinkAppHandles: OptionSet, Sendable, Hashable {
    /// One bit a method.
    public let rawValue: UInt8

    /// The methods whose bits are set in `rawValue`.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// `session(_:didReceiveMessage:)`
    public static let message = WatchLinkAppHandles(rawValue: 1 << 0)
    /// `session(_:didReceiveMessage:replyHandler:)`
    public static let messageWithReply = WatchLinkAppHandles(rawValue: 1 << 1)
    /// `session(_:didReceiveMessageData:)`
    public static let messageData = WatchLinkAppHandles(rawValue: 1 << 2)
    /// `session(_:didReceiveMessageData:replyHandler:)`
    public static let messageDataWithReply = WatchLinkAppHandles(rawValue: 1 << 3)
    /// Every message method.
    public static let all: WatchLinkAppHandles = [.message, .messageWithReply, .messageData, .messageDataWithReply]

    /// The names `app.attach` takes, in a stable order.
    public var names: [String] {
        let named: [(String, WatchLinkAppHandles)] = [
            ("message", .message), ("messageWithReply", .messageWithReply),
            ("messageData", .messageData), ("messageDataWithReply", .messageDataWithReply),
        ]
        return named.filter { contains($0.1) }.map(\.0)
    }
}
