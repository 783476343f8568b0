import LinkStore
import WireProtocol

/// Identifies one control request that is waiting for its response.
public struct RequestToken: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt64
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    public var description: String { "request#\(rawValue)" }
}

/// A failure of a session operation: a `WCErrorDomain` error, or a bad argument.
public enum SessionError: Error, Hashable, Sendable, CustomStringConvertible {
    case wc(WCErrorCode, String)
    case invalidArgument(String)

    public var description: String {
        switch self {
        case .wc(let code, let message): return "\(WCErrorCode.domain) \(code.rawValue) \(code.name): \(message)"
        case .invalidArgument(let message): return "invalidArgument: \(message)"
        }
    }
}

/// The content of an immediate message or reply as the app sees it.
public enum MessageContent: Hashable, Sendable {
    /// Checked as it arrived, decoded when read.
    case dictionary(CheckedDictionary)
    case data([UInt8])

    public var isData: Bool {
        if case .data = self { return true }
        return false
    }
}

/// How the receiving side answers messages that want a reply.
public enum ReplyMode: String, Sendable, CaseIterable {
    /// An empty dictionary (or empty Data), as the PowerAuth sample app does.
    case empty
    /// The message itself.
    case echo
    /// The configured `reply` / `replyData`.
    case fixed
    /// No reply: the sender times out with 7012.
    case none
    /// A control client answers with `message.reply`.
    case manual
    /// The app implements only `session(_:didReceiveMessage:)` (no reply handler): a message
    /// that wants a reply is not delivered and fails on the sender with 7014 `deliveryFailed`;
    /// one that wants none is delivered.
    case noReplyHandler
}

/// The `WCSessionDelegate` methods an attached app implements (`app.attach` `handles`).
public struct AppHandles: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// `session(_:didReceiveMessage:)`
    public static let message = AppHandles(rawValue: 1 << 0)
    /// `session(_:didReceiveMessage:replyHandler:)`
    public static let messageWithReply = AppHandles(rawValue: 1 << 1)
    /// `session(_:didReceiveMessageData:)`
    public static let messageData = AppHandles(rawValue: 1 << 2)
    /// `session(_:didReceiveMessageData:replyHandler:)`
    public static let messageDataWithReply = AppHandles(rawValue: 1 << 3)
    public static let all: AppHandles = [.message, .messageWithReply, .messageData, .messageDataWithReply]

    /// The names `app.attach` takes, as the delegate methods are known.
    public static let names: [(String, AppHandles)] = [
        ("message", .message), ("messageWithReply", .messageWithReply),
        ("messageData", .messageData), ("messageDataWithReply", .messageDataWithReply),
    ]
}

/// The receiving side's reply behaviour (`replies.set`).
public struct ReplyConfiguration: Hashable, Sendable {
    public var mode: ReplyMode
    /// Encoded binary property list used by `fixed` for dictionary messages.
    public var reply: [UInt8]?
    public var replyData: [UInt8]?
    public var delayMilliseconds: Int64

    public init(mode: ReplyMode = .empty, reply: [UInt8]? = nil, replyData: [UInt8]? = nil, delayMilliseconds: Int64 = 0) {
        self.mode = mode
        self.reply = reply
        self.replyData = replyData
        self.delayMilliseconds = delayMilliseconds
    }
}

/// One item the app received, as `received.list` and `message.received` report it.
public struct ReceivedItem: Hashable, Sendable {
    public enum Kind: String, Sendable {
        case message
        case messageData
    }

    public var seq: UInt64
    public var kind: Kind
    public var content: MessageContent
    /// Present when the sender waits for a reply and the reply mode is `manual`.
    public var replyId: UInt64?
}

/// Device flags by their API names.
public enum DeviceFlagName: String, Sendable, CaseIterable {
    case isPaired
    case isWatchAppInstalled
    case isComplicationEnabled
    case isCompanionAppInstalled
    case isWatchOnlyApp

    public var flag: DeviceFlags {
        switch self {
        case .isPaired: return .isPaired
        case .isWatchAppInstalled: return .isWatchAppInstalled
        case .isComplicationEnabled: return .isComplicationEnabled
        case .isCompanionAppInstalled: return .isCompanionAppInstalled
        case .isWatchOnlyApp: return .isWatchOnlyApp
        }
    }

    /// The flags a role owns: the phone knows about the watch, the watch about its companion.
    public static func owned(by role: Role) -> [DeviceFlagName] {
        switch role {
        case .phone: return [.isPaired, .isWatchAppInstalled, .isComplicationEnabled]
        case .watch: return [.isCompanionAppInstalled, .isWatchOnlyApp]
        }
    }
}

/// What the session asks of the control layer and the link.
public enum SessionCommand: Sendable {
    case activate
    case setAppState(AppState)
    /// Watch: a workout session starts (`HKWorkoutSession.startActivity`) or ends.
    case setWorkout(Bool)
    case setDeviceFlags([DeviceFlagName: Bool])
    case sendMessage(MessagePayload, wantsReply: Bool, timeoutMilliseconds: Int64?)
    case reply(replyId: UInt64, payload: MessagePayload)
    case setReplies(ReplyConfiguration)
    case receivedList(after: UInt64?)
    /// `transferUserInfo`: the encoded dictionary.
    case transferUserInfo([UInt8])
    /// `transferCurrentComplicationUserInfo` (phone).
    case transferComplicationUserInfo([UInt8])
    case cancelTransfer(transferId: String)
    /// A fault: a userInfo or file transfer not yet on the link fails with 7017
    /// `transferTimedOut` in its `didFinish`, as when the system gives up on it.
    case timeOutTransfer(transferId: String)
    /// An app process attached itself (`app.attach`): it runs in `state` and has `handles`;
    /// `launchedByTheOS` when it is the program this side's OS launched (it can suspend and end it).
    case attachApp(AppState, AppHandles, launchedByTheOS: Bool = false)
    /// The attached app's connection closed: the app is not running.
    case detachApp
    /// The attached app's delegate returned for every item handed to it up to `seq`.
    case acknowledgeDelivery(upTo: UInt64)
    /// The receiving app has no delegate method with a reply handler: the sender gets 7014.
    case declineMessage(replyId: UInt64)
    case outstandingTransfers
    /// `updateApplicationContext`: the encoded dictionary.
    case updateApplicationContext([UInt8])
    case applicationContext
    /// `transferFile`, `outstandingFileTransfers`, a file transfer's `cancel()`.
    case file(FileCommand)
    /// Whether this side's app is a program the emulated OS launches (`app.install`): while it
    /// is, the app is `notRunning` until that program attaches, and what would wake it on a
    /// device launches it (``SessionAction/launchApp(_:)``).
    case setAppInstalled(Bool)
    /// The app the session asked to launch did not come up: it could not start, or it ended
    /// before it attached. What waited for it fails with 7014.
    case appLaunchFailed(String)
    /// Watch: the app's WatchKit attached itself (`watchKit.attach`), the connection that its
    /// background tasks are handed on; the app runs in `state`.
    case attachWatchKit(AppState, launchedByTheOS: Bool)
    /// Watch: the app's WatchKit connection closed.
    case detachWatchKit
    /// Watch: the app completed a background task (`setTaskCompletedWithSnapshot(_:)`).
    case completeBackgroundTask(id: UInt64)
    /// Watch: `scheduleBackgroundRefresh` or `scheduleSnapshotRefresh`: a task of `kind` at,
    /// not before, `preferredDate` (seconds since 1970), replacing the one of that kind.
    case scheduleBackgroundTask(BackgroundTaskKind, preferredDate: Double, userInfo: [UInt8]?)
    /// As `scheduleBackgroundTask`, due `milliseconds` of device time from now: the `WatchKit`
    /// library's preferred date, relative to the app's own clock.
    case scheduleBackgroundTaskAfter(BackgroundTaskKind, milliseconds: Int64, userInfo: [UInt8]?)
}

/// Why the emulated OS launches an app into the background.
public enum LaunchReason: String, Sendable, Hashable, CaseIterable {
    /// A message from the watch app (phone): "wakes up the corresponding iOS app in the
    /// background and makes it reachable" (`sendMessage`).
    case message
    /// A push for a type the app registered (phone; PushKit).
    case push
    /// Data WatchConnectivity brings the watch app (`WKWatchConnectivityRefreshBackgroundTask`).
    case backgroundData
    /// The user opened the app (`app.launch`): in the foreground.
    case user
    /// A scheduled background app refresh came due (`WKApplicationRefreshBackgroundTask`).
    case backgroundRefresh
    /// A scheduled snapshot refresh came due (`WKSnapshotRefreshBackgroundTask`).
    case snapshot
}

/// One entry of `outstandingUserInfoTransfers`.
public struct OutstandingTransfer: Hashable, Sendable {
    public var transferId: String
    public var payload: [UInt8]
    public var isTransferring: Bool
    public var isCurrentComplicationInfo: Bool
}

/// The successful outcome of a `SessionCommand`.
public enum CommandResult: Hashable, Sendable {
    case activationState(ActivationState)
    case empty
    case reply(MessageContent)
    case received([ReceivedItem])
    case appState(AppState)
    case deviceFlags(DeviceFlags)
    case replies(ReplyConfiguration)
    /// A queued transfer was accepted and committed.
    case transfer(transferId: String, remainingComplicationTransfers: Int?)
    case cancelled(Bool)
    case timedOut(Bool)
    case outstanding([OutstandingTransfer])
    case contextUpdated
    case contexts(applicationContext: [UInt8]?, received: [UInt8]?)
    case outstandingFiles([OutstandingFileTransfer])
    /// A background task was scheduled; it comes due in this long.
    case taskScheduled(inMilliseconds: Int64)
}

extension CommandResult {
    /// Whether the result promises something the store must have committed first: a
    /// failed commit turns it into 7015 `insufficientSpace`.
    public var isDurable: Bool {
        switch self {
        case .transfer, .contextUpdated: return true
        case .cancelled(let done), .timedOut(let done): return done
        default: return false
        }
    }
}

/// Something the app is told (a delegate callback in WatchConnectivity terms).
public enum SessionNotification: Hashable, Sendable {
    case activationDidComplete(ActivationState)
    /// Phone: `sessionDidBecomeInactive`: the phone switched to another watch; the session
    /// still delivers its watch's data but sends nothing new (7016).
    case didBecomeInactive
    /// Phone: `sessionDidDeactivate`: everything of the previous watch is delivered; call
    /// `activate()` again to talk to the new one.
    case didDeactivate
    case reachabilityDidChange(Bool)
    /// Phone: `sessionWatchStateDidChange` (paired, app installed, complication enabled).
    case watchStateDidChange(DeviceFlags)
    /// Watch: `sessionCompanionAppInstalledDidChange`.
    case companionAppInstalledDidChange(Bool)
    /// This side's app changed state (`app.setState`), as UIKit's application notifications
    /// report it; frameworks on this side react (PowerAuth resets its time synchronisation
    /// when the app enters the foreground).
    case appStateDidChange(AppState)
    /// Watch: a workout session started or ended.
    case workoutStateDidChange(Bool)
    case messageReceived(ReceivedItem)
    /// A queued userInfo reached the app (`didReceiveUserInfo`); the encoded dictionary.
    case userInfoReceived(seq: UInt64, userInfo: [UInt8], isCurrentComplicationInfo: Bool)
    /// The other side committed a transfer (`didFinish userInfoTransfer`), or it failed;
    /// `earlier` when the app process did not make it (FinishedTransfers.swift).
    case userInfoDidFinish(transferId: String, error: SessionError?, earlier: EarlierTransfer? = nil)
    /// A message for a framework on this side (see `Configuration.isSystemMessage`); answer
    /// it with `.reply(replyId:payload:)` when `replyId` is set.
    case systemMessageReceived(replyId: UInt64?, content: MessageContent)
    /// A queued userInfo for a framework on this side (see `Configuration.isSystemUserInfo`).
    case systemUserInfoReceived(seq: UInt64, userInfo: [UInt8])
    /// A new application context reached the app (`didReceiveApplicationContext`); encoded.
    case applicationContextReceived(seq: UInt64, context: [UInt8])
    /// File transfers: progress, `didFinish`, a received file.
    case file(FileNotification)
    /// Watch: the app's background life (tasks, suspension, wakes).
    case backgroundTask(BackgroundTaskNotification)
    /// What the device weather did (spells, lagged and missed reports of reachability).
    case weather(WeatherNotification)
}

extension SessionNotification {
    /// Whether the notification reports something that only holds once the store commits.
    public var isDurable: Bool {
        switch self {
        case .userInfoReceived, .userInfoDidFinish, .applicationContextReceived, .systemUserInfoReceived: return true
        case .file(.received), .file(.didFinish): return true
        default: return false
        }
    }

    /// The `seq` of what this hands the app: a received item, or a transfer that finished
    /// while no app ran.
    public var handedSeq: UInt64? {
        switch self {
        case .userInfoReceived(let seq, _, _), .applicationContextReceived(let seq, _), .systemUserInfoReceived(let seq, _): return seq
        case .file(.received(let file)): return file.seq
        case .userInfoDidFinish(_, _, let earlier), .file(.didFinish(_, _, let earlier)): return earlier?.seq
        default: return nil
        }
    }
}

/// A transfer of the app's that the attached app process did not make (it was made in an
/// earlier launch), as its `didFinish` tells it: what the app needs to make the transfer object.
public struct EarlierTransfer: Hashable, Sendable {
    public struct File: Hashable, Sendable {
        /// The outbox copy the transfer sent (removed once it finished).
        public var path: String
        /// The file's name as the app gave it.
        public var name: String
        public var totalBytes: UInt64
    }

    /// userInfo: the encoded dictionary; file: the encoded metadata (empty for none).
    public var payload: [UInt8]
    public var isCurrentComplicationInfo: Bool
    /// Set for a file transfer.
    public var file: File?
    /// Set when it finished while the app was not running: the app acknowledges it
    /// (`app.acknowledge`) once its delegate returned.
    public var seq: UInt64?
}

/// Timers the session arms; the runtime calls back with the same value.
public enum SessionTimer: Hashable, Sendable {
    /// The earliest reply deadline of the pending messages.
    case replyTimeouts
    case delayedReply(replyId: UInt64)
    /// Phone: the end of the short while an inactive session has to deliver what it received
    /// from the previous watch; it then deactivates.
    case inactiveDelivery
    /// The earliest deadline of the messages held for an app being launched.
    case heldMessages
    /// Watch: a background run for data the launch policy deferred comes due.
    case backgroundWake
    /// Watch: the background run's budget is spent.
    case backgroundBudget
    /// Watch: the background run's budget is about to be spent (`expirationHandler`).
    case backgroundTasksExpiring
    /// Watch: a scheduled background task comes due.
    case scheduledTask(BackgroundTaskKind)
    /// The weather: the app is told of a change of reachability.
    case weatherReport
    /// The weather (watch): a wrist-down or screen-off spell begins or ends.
    case weatherSpell
}

/// The effects the runtime performs for the session.
public enum SessionAction: Sendable {
    case send(Frame)
    case respond(RequestToken, Result<CommandResult, SessionError>)
    case notify(SessionNotification)
    case armTimer(SessionTimer, deadlineMilliseconds: Int64)
    case cancelTimer(SessionTimer)
    /// The emulated OS launches this side's installed app into the background; a failed
    /// launch comes back as ``SessionCommand/appLaunchFailed(_:)``.
    case launchApp(LaunchReason)
    /// Watch: suspend, resume or end the app's process, as watchOS does.
    case appProcess(AppProcessAction)
    /// Write this within the current turn's transaction; what follows waits for its commit.
    case persist(DurableOperation)
    /// File work; see ``FileAction/precedesCommit`` for when the runtime performs it.
    case file(FileAction)
}

/// A point-in-time view of the session for `status`.
public struct SessionStatus: Hashable, Sendable {
    public var role: Role
    public var activationState: ActivationState
    public var isReachable: Bool
    public var appState: AppState
    public var flags: DeviceFlags
    public var linkConnected: Bool
    public var peerState: SessionState?
    public var hasContentPending: Bool
    public var pendingMessages: Int
    public var awaitingManualReplies: Int
    public var outstandingUserInfoTransfers: Int
    public var outstandingFileTransfers: Int = 0
    /// Phone: what is left of today's complication budget.
    public var remainingComplicationUserInfoTransfers: Int?
}
