#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkCollections
import LinkCrypto
import LinkStore
import WireProtocol

/// The WatchConnectivity session rules as a state machine.
///
/// `LinkSession` owns no socket and reads no clock: every entry point takes the current
/// monotonic time in milliseconds and returns the actions the runtime must perform, in order.
/// It is driven by link events (up, down, a frame), control commands and timers.
public final class LinkSession {
    public struct Configuration: Sendable {
        public var role: Role
        /// How long a sender waits for a reply (or a delivery acknowledgement) by default.
        public var defaultReplyTimeoutMilliseconds: Int64
        /// The reply timeout that ships, 10 s (`--reply-timeout-ms`): WatchConnectivity
        /// documents none, only that a reply that does not come is 7012 `messageReplyTimedOut`.
        public static let standardReplyTimeoutMilliseconds: Int64 = 10_000
        /// The inactive period that ships, 2 s (`--inactive-delivery-ms`): Apple's "a small
        /// amount of time" after a watch switch, before `sessionDidDeactivate`.
        public static let standardInactiveDeliveryMilliseconds: Int64 = 2_000
        /// The largest encoded payload `sendMessage` / `sendMessageData` accepts.
        public var maximumMessagePayloadLength: Int
        /// How many received items `received.list` keeps (newest kept).
        public var receivedListCapacity: Int
        /// How many payload bytes of received messages `received.list` keeps (newest kept).
        public var receivedListByteCapacity: Int = Configuration.defaultReceivedListByteCapacity
        /// 256 KiB: 16 messages of 16 KiB, or the whole 1,000 of up to 256 bytes. Every
        /// message kept is memory the next one's copy cannot reuse warm: 4 MiB cost about 1 µs
        /// per 16 KiB round trip, 1 MiB (a core's L2 here) 0.4 µs, 256 KiB nothing measurable
        /// (docs/performance.md).
        public static let defaultReceivedListByteCapacity = 256 << 10
        /// How many messages may wait for a `manual` reply before the oldest is forgotten.
        public var manualReplyCapacity: Int
        /// The largest encoded userInfo `transferUserInfo` accepts.
        public var maximumUserInfoLength: Int = 65_536
        /// The largest encoded application context.
        public var maximumApplicationContextLength: Int = 262_144
        /// Complication userInfo transfers a day while the complication is enabled.
        public var complicationTransfersPerDay: Int = 50
        /// Unacknowledged ITEM frames a channel may have on the link.
        public var maximumItemsInFlight: Int = 2_048
        /// Wall-clock seconds since 1970 (injected so tests control the day).
        public var wallClock: @Sendable () -> Double = { Date().timeIntervalSince1970 }
        /// Recognises messages meant for a framework on this side rather than the app (the
        /// PowerAuth SDK's packets): while the daemon plays the app (no app installed or
        /// attached, ``LinkSession/frameworksRunInTheDaemon``) they are reported as
        /// `systemMessageReceived`, never recorded for the app, and a reply is left to the
        /// framework whatever the reply mode. An app that is a process has its frameworks in
        /// it: their packets are its messages.
        public var isSystemMessage: (@Sendable (MessagePayload) -> Bool)?
        /// The same for queued userInfo dictionaries (encoded).
        public var isSystemUserInfo: (@Sendable ([UInt8]) -> Bool)?
        /// Makes the `transferId` of a new transfer (by default a random UUID).
        public var makeTransferId: (@Sendable () -> String)?
        /// Where files in transit live: `outbox/`, `partial/` and `inbox/` below it.
        public var fileDirectory: String = "files"
        /// The largest FILE_CHUNK payload.
        public var fileChunkLength: Int = 256 << 10
        /// File bytes sent and not yet written by the receiver, at most.
        public var fileWindowBytes: UInt64 = 4 << 20
        /// The receiver syncs and commits a file's offset every this many bytes.
        public var fileCommitInterval: UInt64 = 8 << 20
        /// Checksum mismatches of one file before the receiver gives it up.
        public var fileMismatchLimit: Int = 3
        /// Phone: how long an inactive session (after a watch switch) keeps delivering what it
        /// received from the previous watch before it deactivates anyway.
        public var inactiveDeliveryMilliseconds: Int64 = Configuration.standardInactiveDeliveryMilliseconds
        /// Watch: when the OS runs an installed app that is not in the foreground
        /// (BackgroundTasks.swift); the daemon's default is the watch policy with a random seed.
        public var launchPolicy = BackgroundLaunchPolicy(mode: .immediate, seed: 0)
        /// Watch: how long a background run lasts before watchOS's watchdog ends an app whose
        /// tasks are not completed (`--background-task-ms`).
        public var backgroundTaskBudgetMilliseconds: Int64 = Configuration.standardBackgroundTaskBudgetMilliseconds
        /// 15 s: "Exhausted wall time allowance of 15.00 seconds" (watchOS's watchdog, crash
        /// reports in home-assistant/iOS 1192 and OctoPod 387; "the watchdog timeout from the
        /// system, which is 15.0s", home-assistant/iOS 1454).
        public static let standardBackgroundTaskBudgetMilliseconds: Int64 = 15_000
        /// How reachability behaves: calm (every change at once) unless `--weather device`
        /// (ReachabilityWeather.swift).
        public var weather: ReachabilityWeather

        public init(
            role: Role,
            defaultReplyTimeoutMilliseconds: Int64 = Configuration.standardReplyTimeoutMilliseconds,
            maximumMessagePayloadLength: Int = LinkProtocol.maximumMessagePayloadLength,
            receivedListCapacity: Int = 1_000,
            manualReplyCapacity: Int = 10_000
        ) {
            self.role = role
            weather = ReachabilityWeather(role: role)
            self.defaultReplyTimeoutMilliseconds = defaultReplyTimeoutMilliseconds
            self.maximumMessagePayloadLength = maximumMessagePayloadLength
            self.receivedListCapacity = receivedListCapacity
            self.manualReplyCapacity = manualReplyCapacity
        }
    }

    /// A message this side sent and whose outcome it still awaits.
    struct PendingSend {
        var token: RequestToken
        var wantsReply: Bool
        var isData: Bool
    }

    /// A received message that waits for this side's reply.
    struct AwaitingReply {
        var messageId: UInt64
        var isData: Bool
        var linkGeneration: UInt64
        /// The reply to send when a delayed automatic reply fires.
        var scheduled: MessagePayload?
        /// Handed to the attached app, whose reply handler answers it.
        var isTheApps = false
    }

    public let configuration: Configuration
    /// Where this session keeps the files of transfers: ``Configuration/fileDirectory`` until
    /// the owner of the session's store places them beside it (phoned keeps one store, and
    /// one directory of files, a watch).
    public var fileDirectory: String
    public internal(set) var activationState: ActivationState = .notActivated
    public internal(set) var appState: AppState = .foreground
    /// Watch: a workout session runs (`workout.start`): the app runs with a high priority in the
    /// background and stays reachable there.
    public internal(set) var workoutRunning = false
    public internal(set) var flags: DeviceFlags
    public internal(set) var replies = ReplyConfiguration()
    public private(set) var isLinkUp = false
    public private(set) var peerState: SessionState?
    /// Reachability in fact, which sends follow. The app reads ``reportedReachability``, which
    /// lags it under the device weather.
    public internal(set) var isReachable = false
    /// Reachability as the app reads it (`WCSession.isReachable`, the reachability callback).
    public var reportedReachability: Bool { weather.reported }
    /// Phone: whether this session's watch is the active watch (see `setActiveWatch`); its
    /// queued items go out only then.
    public internal(set) var isWithActiveWatch = true
    /// The app process attached to this side (`app.attach`) and the delegate methods it has;
    /// nil when none is (AppAttachment.swift).
    public internal(set) var attachedApp: AppHandles?
    /// The newest received item handed to the attached app and not yet acknowledged.
    var handedUpTo: UInt64 = 0
    /// A rolled-back turn's hand of items to the app was not told: hand them at the restore.
    var handAgainAtRestore = false
    /// The app as a program the emulated OS launches (AppLaunch.swift).
    var launch = AppLaunchState()
    /// Watch: the app's background tasks, runs and suspension (BackgroundTasks.swift).
    var background: BackgroundTaskState
    /// The app's view of reachability, and the watch's spells (LinkSession+Weather.swift).
    var weather: WeatherState
    /// The app's transfers that finished while it was not running, in `seq` order
    /// (FinishedTransfers.swift).
    var finishedWhileAway: [FinishedTransfer] = []
    /// The transfers the attached app process made and that have not finished.
    var transfersOfTheAttachedApp: Set<String> = []
    /// The time given with the event being handled.
    var currentTime: Int64 = 0

    private(set) var linkGeneration: UInt64 = 0
    var nextMessageId: UInt64 = 1
    var pendingSends = SequenceMap<PendingSend>()
    var pendingSendsAreEmpty: Bool { pendingSends.isEmpty }
    var deadlines = DeadlineHeap()
    var armedDeadline: Int64?
    var awaitingReplies: [UInt64: AwaitingReply] = [:]
    var awaitingReplyOrder: [UInt64] = []
    var received = RingBuffer<ReceivedItem>(capacity: 1)
    let receivedSequence: ReceivedSequence
    var nextReceivedSeq: UInt64 {
        get { receivedSequence.next }
        set { receivedSequence.next = newValue }
    }
    var actions: [SessionAction] = []
    /// Emptied lists handed back by ``recycle(_:)``: two, as actions performed often lead to
    /// a command whose own list is drained before the first is handed back (a reply whose
    /// handler sends the next message).
    private var spareActions: [SessionAction] = []
    private var secondSpareActions: [SessionAction] = []
    // Queued channels (QueuedDelivery.swift).
    var queues: [QueueChannel: OutboundQueue] = [:]
    var cursors: [QueueChannel: ChannelCursor] = [:]
    var undelivered: [InboxItem] = []
    var acknowledgementsDue: Set<QueueChannel> = []
    /// Items of the peer (userInfo, files) this turn wrote, and those of the turn being
    /// committed: refused with ITEM_ERROR when that commit finds the disk full.
    var turnReceipts: [ItemReceipt] = []
    var committingReceipts: [ItemReceipt] = []
    /// Items refused (ITEM_ERROR) since this process started, with the frame that refused
    /// them: refused again at once when the peer sends them again (it may have lost the
    /// frame with the link), and repeated at every link up. Memory only, bounded.
    var refusals: [ItemReceipt: Frame] = [:]
    var durableContexts: (application: [UInt8]?, received: [UInt8]?) = (nil, nil)
    var complicationBudget: (day: Int64, used: Int) = (0, 0)
    var reservedSeq: UInt64 = 0
    var transferIds = RandomUUIDs(.upper)
    let files = FileTransferState()

    /// - Parameter receivedSequence: the `seq` counter; sessions of one daemon share one.
    public init(configuration: Configuration, receivedSequence: ReceivedSequence = ReceivedSequence()) {
        self.configuration = configuration
        fileDirectory = configuration.fileDirectory
        self.receivedSequence = receivedSequence
        background = BackgroundTaskState(policy: configuration.launchPolicy)
        weather = WeatherState(model: configuration.weather)
        switch configuration.role {
        case .phone: flags = [.isPaired, .isWatchAppInstalled]
        case .watch: flags = [.isCompanionAppInstalled]
        }
        received = RingBuffer(
            capacity: max(1, configuration.receivedListCapacity),
            weightCapacity: configuration.receivedListByteCapacity)
    }

    public var role: Role { configuration.role }

    /// This side's state as the peer learns it from STATE frames. The watch sends its app's
    /// state as reachability sees it: foreground while it can converse (in the foreground, or in
    /// a workout), background otherwise.
    public var localState: SessionState {
        SessionState(activationState: activationState, appState: role == .watch ? conversingAppState : appState, flags: flags)
    }

    public func status() -> SessionStatus {
        var status = SessionStatus(
            role: role, activationState: activationState, isReachable: weather.reported,
            appState: appState, flags: flags, linkConnected: isLinkUp, peerState: peerState,
            hasContentPending: !undelivered.isEmpty, pendingMessages: pendingSends.count,
            awaitingManualReplies: awaitingReplies.count,
            outstandingUserInfoTransfers: queues[.userInfo]?.count ?? 0,
            remainingComplicationUserInfoTransfers: role == .phone ? remainingComplicationTransfers() : nil)
        status.outstandingFileTransfers = queues[.file]?.count ?? 0
        return status
    }

    // MARK: - Link events

    /// The link finished its handshake: tell the peer who we are.
    public func linkUp(now: Int64) -> [SessionAction] {
        currentTime = now
        isLinkUp = true
        linkGeneration &+= 1
        peerState = nil
        actions.append(.send(.state(localState)))
        // Refusals go ahead of the acknowledgements: an acknowledgement covers every lower
        // sequence number, a refused one too, and the peer must drop that one as refused.
        for receipt in refusals.keys.sorted(by: { ($0.channel.rawValue, $0.seq) < ($1.channel.rawValue, $1.seq) }) {
            if let frame = refusals[receipt] { actions.append(.send(frame)) }
        }
        queuedLinkUp()
        filesLinkUp()
        updateReachability()
        return drain()
    }

    /// The link is gone: everything waiting on the peer fails with 7007 at once.
    public func linkDown(now: Int64) -> [SessionAction] {
        currentTime = now
        guard isLinkUp else { return drain() }
        isLinkUp = false
        peerState = nil
        deadlines.removeAll()
        if armedDeadline != nil {
            armedDeadline = nil
            actions.append(.cancelTimer(.replyTimeouts))
        }
        failPendingSends { pending in
            .wc(.notReachable, "the link to the \(peerName) dropped before the \(pending.wantsReply ? "reply" : "delivery acknowledgement") arrived")
        }
        forgetAwaitingReplies(answering: nil)
        forgetHeldMessages()
        queuedLinkDown()
        filesLinkDown()
        updateReachability()
        return drain()
    }

    /// A session frame from the authenticated peer.
    public func receive(_ frame: Frame, now: Int64) -> [SessionAction] {
        currentTime = now
        guard isLinkUp else { return drain() }
        switch frame {
        case .state(let state):
            peerState = state
            updateReachability()
        case .message(let id, let wantsReply, let payload):
            receiveMessage(id: id, wantsReply: wantsReply, payload: payload, now: now)
        case .reply(let id, let payload):
            receiveReply(id: id, payload: payload)
        case .messageError(let id, let code, let description):
            guard let pending = pendingSends.removeValue(forKey: id) else { break }
            let wcCode = WCErrorCode(rawValue: Int(code)) ?? .genericError
            actions.append(.respond(pending.token, .failure(.wc(wcCode, description))))
        case .messageAck(let id):
            guard let pending = pendingSends[id], !pending.wantsReply else { break }
            pendingSends[id] = nil
            actions.append(.respond(pending.token, .success(.empty)))
        case .ping(let value):
            actions.append(.send(.pong(value)))
        case .item(let channel, let seq, let flags, let payload):
            receiveItem(channel: channel, seq: seq, flags: ItemFlags(rawValue: flags), payload: payload)
        case .ack(let channel, let seq):
            receiveAcknowledgement(channel: channel, seq: seq)
        case .itemError(let channel, let seq, let code, let description):
            receiveItemError(channel: channel, seq: seq, code: code, description: description)
        case .fileChunk, .fileChunkAck, .fileCancel:
            receiveFileFrame(frame, now: now)
        case .hello, .auth, .ready, .pong, .goAway, .clockSet, .clockAck:
            break
        }
        return drain()
    }

    public func timerFired(_ timer: SessionTimer, now: Int64) -> [SessionAction] {
        currentTime = now
        switch timer {
        case .replyTimeouts:
            armedDeadline = nil
            while let top = deadlines.top, top.deadline <= now {
                _ = deadlines.pop()
                guard let pending = pendingSends.removeValue(forKey: top.id) else { continue }
                if pending.wantsReply {
                    actions.append(
                        .respond(
                            pending.token,
                            .failure(
                                .wc(
                                    .messageReplyTimedOut,
                                    "no reply from the \(peerName) within the reply timeout"))))
                } else {
                    actions.append(
                        .respond(
                            pending.token,
                            .failure(
                                .wc(
                                    .deliveryFailed,
                                    "the \(peerName) did not acknowledge delivery within the timeout"))))
                }
            }
            armNextDeadline()
        case .inactiveDelivery:
            inactiveDeliveryEnded()
        case .heldMessages:
            heldMessagesTimerFired(now: now)
        case .backgroundWake:
            backgroundWakeFired()
        case .backgroundBudget:
            backgroundBudgetSpent()
        case .backgroundTasksExpiring:
            backgroundTasksExpiring()
        case .scheduledTask(let kind):
            scheduledTaskFired(kind)
        case .weatherReport:
            weatherReportDue()
        case .weatherSpell:
            weatherSpellDue()
        case .delayedReply(let replyId):
            guard let awaiting = awaitingReplies[replyId], let payload = awaiting.scheduled else { break }
            forgetAwaitingReply(replyId)
            if isLinkUp, awaiting.linkGeneration == linkGeneration {
                actions.append(.send(.reply(id: awaiting.messageId, payload: payload)))
            }
        }
        return drain()
    }

    // MARK: - Commands

    public func handle(_ command: SessionCommand, token: RequestToken, now: Int64) -> [SessionAction] {
        currentTime = now
        switch command {
        case .activate:
            activate(token: token, now: now)
        case .setAppState(let state):
            changeAppState(to: state)
            actions.append(.respond(token, .success(.appState(state))))
        case .setWorkout(let running):
            setWorkout(running, token: token)
        case .setDeviceFlags(let changes):
            setDeviceFlags(changes, token: token)
        case .sendMessage(let payload, let wantsReply, let timeout):
            sendMessage(payload, wantsReply: wantsReply, timeout: timeout, token: token, now: now)
        case .reply(let replyId, let payload):
            replyManually(replyId: replyId, payload: payload, token: token)
        case .setReplies(let replies):
            // A reply must fit a message, as the app's reply handler's dictionary must.
            for (key, bytes) in [("reply", replies.reply), ("replyData", replies.replyData)] {
                if let bytes, bytes.count > configuration.maximumMessagePayloadLength {
                    actions.append(
                        .respond(
                            token,
                            .failure(
                                .wc(
                                    .payloadTooLarge,
                                    "replies.set: '\(key)' is \(bytes.count) bytes; replies are limited to \(configuration.maximumMessagePayloadLength) bytes"))
                        ))
                    return drain()
                }
            }
            self.replies = replies
            actions.append(.respond(token, .success(.replies(replies))))
        case .receivedList(let after):
            actions.append(.respond(token, .success(.received(receivedMessages(after: after ?? 0)))))
        case .transferUserInfo(let payload):
            transferUserInfo(payload, complication: false, token: token)
        case .transferComplicationUserInfo(let payload):
            transferUserInfo(payload, complication: true, token: token)
        case .cancelTransfer(let transferId):
            cancelTransfer(transferId, token: token)
        case .timeOutTransfer(let transferId):
            timeOutTransfer(transferId, token: token)
        case .attachApp(let state, let handles, let launchedByTheOS):
            attachApp(state: state, handles: handles, launchedByTheOS: launchedByTheOS, token: token, now: now)
        case .detachApp:
            detachApp(token: token)
        case .acknowledgeDelivery(let seq):
            acknowledgeDelivery(upTo: seq, token: token)
        case .declineMessage(let replyId):
            declineMessage(replyId: replyId, token: token)
        case .outstandingTransfers:
            actions.append(.respond(token, .success(.outstanding(outstandingTransfers()))))
        case .updateApplicationContext(let payload):
            updateApplicationContext(payload, token: token)
        case .applicationContext:
            actions.append(
                .respond(
                    token,
                    .success(
                        .contexts(
                            applicationContext: durableContexts.application,
                            received: durableContexts.received))))
        case .file(let command):
            handleFileCommand(command, token: token)
        case .setAppInstalled(let installed):
            setAppInstalled(installed, token: token)
        case .appLaunchFailed(let reason):
            appLaunchFailed(reason, token: token)
        case .attachWatchKit(let state, let launchedByTheOS):
            attachWatchKit(state: state, launchedByTheOS: launchedByTheOS, token: token)
        case .detachWatchKit:
            detachWatchKit(token: token)
        case .completeBackgroundTask(let id):
            completeBackgroundTask(id: id, token: token)
        case .scheduleBackgroundTask(let kind, let preferredDate, let userInfo):
            scheduleBackgroundTask(kind, preferredDate: preferredDate, userInfo: userInfo, token: token)
        case .scheduleBackgroundTaskAfter(let kind, let milliseconds, let userInfo):
            scheduleBackgroundTask(kind, afterMilliseconds: milliseconds, userInfo: userInfo, token: token)
        }
        return drain()
    }

    // MARK: - The list of actions

    func drain() -> [SessionAction] {
        if activationState == .inactive { deactivateIfDelivered() }
        // Hands the array over: `removeAll(keepingCapacity:)` on a buffer the caller now shares
        // would allocate a fresh one on every call, most often for nothing.
        guard !actions.isEmpty else { return [] }
        let drained = actions
        if spareActions.capacity > 0 {
            actions = spareActions
            spareActions = []
        } else if secondSpareActions.capacity > 0 {
            actions = secondSpareActions
            secondSpareActions = []
        } else {
            actions = []
            actions.reserveCapacity(4)  // one allocation, not one per doubling, for the next few
        }
        return drained
    }

    /// Takes back a list of actions once they are done, emptied, for a later call to hand out
    /// instead of allocating one (a list or two a message otherwise). Optional: a list not
    /// handed back is simply freed.
    public func recycle(_ done: consuming [SessionAction]) {
        guard spareActions.capacity == 0 || secondSpareActions.capacity == 0 else { return }
        var list = done
        guard list.capacity > 0 else { return }
        list.removeAllKeepingStorage()
        if spareActions.capacity == 0 {
            spareActions = list
        } else {
            secondSpareActions = list
        }
    }
}
