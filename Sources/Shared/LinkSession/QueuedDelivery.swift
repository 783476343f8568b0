import LinkStore
import WireProtocol

/// An item of the peer that this side wrote in a turn (see `refuseUncommittedItems`).
struct ItemReceipt: Hashable {
    var channel: QueueChannel
    var seq: UInt64
}

/// The outbound side of one queued channel: what waits for the peer's acknowledgement.
/// A class, so that the hot path mutates it in place instead of copying its items.
final class OutboundQueue {
    /// Unacknowledged items in sequence order, from `head` on.
    private var storage: [OutboundItem] = []
    private var head = 0
    /// Whether the peer told us its resume point on the current link.
    var isResumed = false
    /// The highest seq sent on the current link.
    var sentUpTo: UInt64 = 0
    /// The highest seq that may have reached the peer on any link: items above it were never
    /// sent, so they may still be renumbered (a current complication item goes ahead of them).
    /// After a restore every stored item counts as possibly sent.
    var mayHaveSentUpTo: UInt64 = 0
    /// The seq of the last item queued ahead (a current complication item) since the restore:
    /// a newer one goes behind it, also once it was retagged, cancelled or acknowledged, so
    /// that an older complication item that lost its tag is never overtaken.
    var lastQueuedAhead: UInt64 = 0

    var count: Int { storage.count - head }
    var isEmpty: Bool { count == 0 }
    var items: ArraySlice<OutboundItem> { storage[head...] }

    subscript(offset: Int) -> OutboundItem {
        get { storage[head + offset] }
        set { storage[head + offset] = newValue }
    }

    func append(_ item: OutboundItem) { storage.append(item) }

    /// Removes the items with `seq <= upTo` (a prefix) and returns them.
    func removeAcknowledged(upTo seq: UInt64) -> ArraySlice<OutboundItem> {
        let start = head
        while head < storage.count, storage[head].seq <= seq { head += 1 }
        let removed = storage[start..<head]
        if head > 1_024, head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
        return removed
    }

    /// Removes items anywhere (cancel, a replaced context).
    func removeAll(where predicate: (OutboundItem) -> Bool) {
        storage.removeSubrange(0..<head)
        head = 0
        storage.removeAll(where: predicate)
    }

    /// Makes room at `seq` for an item that goes ahead: the items from `seq` on, never sent,
    /// move one number up, and `item` takes `seq`.
    func insertAhead(_ item: OutboundItem) {
        storage.removeSubrange(0..<head)
        head = 0
        let index = storage.firstIndex { $0.seq >= item.seq } ?? storage.count
        for later in index..<storage.count { storage[later].seq += 1 }
        storage.insert(item, at: index)
    }

    func sort() {
        storage.removeSubrange(0..<head)
        head = 0
        storage.sort { $0.seq < $1.seq }
    }

    /// Items already sent and not yet acknowledged: a prefix of `items`.
    func inFlightCount() -> Int {
        var low = head, high = storage.count
        while low < high {
            let middle = (low + high) / 2
            if storage[middle].seq <= sentUpTo { low = middle + 1 } else { high = middle }
        }
        return low - head
    }
}

/// Guaranteed delivery: `transferUserInfo`, complication userInfo and the application
/// context, exactly once and in order across link drops and crashes.
///
/// The sender commits an item before it answers the app and sends it only after that
/// commit (the runtime holds every action that follows a `.persist` until the turn's
/// transaction commits). The receiver commits an item and its raised cursor in the same
/// transaction, and acknowledges only after that commit. Sequence numbers at or below the
/// receiver's cursor are duplicates and are dropped.
extension LinkSession {
    // MARK: - Restoring

    /// Loads what the store kept. Called at start, and again after a failed commit
    /// (the runtime then also restarts the link so that both sides resynchronise).
    public func restore(_ state: DurableState) {
        cursors = state.cursors
        queues = [:]
        for channel in QueueChannel.allCases { queues[channel] = OutboundQueue() }
        for item in state.outbox { queue(item.channel).append(item) }
        for channel in QueueChannel.allCases {
            queue(channel).sort()
            queue(channel).mayHaveSentUpTo = cursor(channel).lastAssigned
        }
        undelivered = state.undelivered.sorted { $0.seq < $1.seq }
        finishedWhileAway = state.finished.sorted { $0.seq < $1.seq }
        durableContexts = (state.applicationContext, state.receivedApplicationContext)
        complicationBudget = (state.complicationDay, state.complicationTransfersUsed)
        reservedSeq = state.reservedSeq
        nextReceivedSeq = max(nextReceivedSeq, state.reservedSeq + 1)
        acknowledgementsDue = []
        restoreFiles(state)
        if handAgainAtRestore {
            handAgainAtRestore = false
            // Told with the next actions the session gives: to the attached app, or by the
            // daemon playing the app.
            deliverPending()
        }
    }

    /// The delivery numbered `seq` was handed to the app in a turn whose commit failed, and
    /// the app was not told of it (what only holds once the store commits is not told then):
    /// it and what followed it are handed again once the committed state is restored. Where
    /// the daemon plays the app, the delivery it committed is rolled back with the turn: it
    /// is delivered again then too.
    public func handedButNotTold(seq: UInt64) {
        guard seq > 0 else { return }
        if seq <= handedUpTo { handedUpTo = seq - 1 }
        handAgainAtRestore = true
    }

    /// The cumulative acknowledgements of this turn, one per channel: the runtime asks for
    /// them at the end of each loop turn, before it commits, and sends them after.
    public func flushAcknowledgements() -> [SessionAction] {
        swap(&turnReceipts, &committingReceipts)
        turnReceipts.removeAll(keepingCapacity: true)
        if isLinkUp && !acknowledgementsDue.isEmpty {
            for channel in acknowledgementsDue.sorted() {
                actions.append(.send(.ack(channel: channel.rawValue, seq: cursor(channel).lastReceived)))
            }
        }
        acknowledgementsDue.removeAll(keepingCapacity: true)
        flushFileAcknowledgements()
        return drain()
    }

    // MARK: - Link

    func queuedLinkUp() {
        for channel in QueueChannel.allCases {
            queue(channel).isResumed = false
            queue(channel).sentUpTo = 0
            // Our resume point: the peer resends everything after it.
            actions.append(.send(.ack(channel: channel.rawValue, seq: cursor(channel).lastReceived)))
        }
        acknowledgementsDue.removeAll()
    }

    func queuedLinkDown() {
        for channel in QueueChannel.allCases {
            queues[channel]?.isResumed = false
            queues[channel]?.sentUpTo = 0
        }
        acknowledgementsDue.removeAll()
    }

    func cursor(_ channel: QueueChannel) -> ChannelCursor {
        cursors[channel] ?? ChannelCursor()
    }

    func queue(_ channel: QueueChannel) -> OutboundQueue {
        if let queue = queues[channel] { return queue }
        let queue = OutboundQueue()
        queues[channel] = queue
        return queue
    }

    // MARK: - Sending

    /// `transferUserInfo` and `transferCurrentComplicationUserInfo`. A current complication item
    /// has "a higher priority and is transmitted right away" (WCSession): it goes ahead of the
    /// plain items not yet sent. With the complication not enabled, or its daily budget spent,
    /// it is "transferred as regular userInfos" (WCSession.h).
    func transferUserInfo(_ payload: [UInt8], complication: Bool, token: RequestToken) {
        if complication, role != .phone {
            actions.append(
                .respond(
                    token,
                    .failure(
                        .wc(
                            .sessionNotSupported,
                            "transferCurrentComplicationUserInfo is a phone API"))))
            return
        }
        if let error = activationFailure() ?? pairingFailure() {
            actions.append(.respond(token, .failure(error)))
            return
        }
        guard payload.count <= configuration.maximumUserInfoLength else {
            actions.append(
                .respond(
                    token,
                    .failure(
                        .wc(
                            .payloadTooLarge,
                            "the userInfo is \(payload.count) bytes; transfers are limited to \(configuration.maximumUserInfoLength) bytes"))))
            return
        }
        var remaining: Int?
        let item: OutboundItem
        if complication, flags.contains(.isComplicationEnabled), remainingComplicationTransfers() > 0 {
            let today = currentDay()
            if complicationBudget.day != today { complicationBudget = (today, 0) }
            complicationBudget.used += 1
            actions.append(.persist(.setComplicationBudget(day: today, used: complicationBudget.used)))
            let previous = retagOlderComplicationItems()
            item = enqueueAhead(.userInfo, after: previous, payload: payload, flags: acceptedItemFlags.union(.currentComplication))
        } else {
            item = enqueue(.userInfo, payload: payload, flags: acceptedItemFlags)
        }
        noteAccepted(item)
        if complication { remaining = remainingComplicationTransfers() }
        actions.append(.respond(token, .success(.transfer(transferId: item.transferId, remainingComplicationTransfers: remaining))))
        pump(.userInfo)
    }

    /// Queues an item ahead of every item never sent (or last, when every item may have been),
    /// but behind `previous`: the former current complication item keeps its place before it,
    /// so that the watch never gets an older complication value after a newer one.
    private func enqueueAhead(_ channel: QueueChannel, after previous: UInt64?, payload: [UInt8], flags: ItemFlags) -> OutboundItem {
        let queue = queue(channel)
        let floor = max(queue.mayHaveSentUpTo, previous ?? 0)
        guard let first = queue.items.first(where: { $0.seq > floor }) else {
            let item = enqueue(channel, payload: payload, flags: flags)
            queue.lastQueuedAhead = item.seq
            return item
        }
        var cursor = cursor(channel)
        cursor.lastAssigned += 1
        cursors[channel] = cursor
        actions.append(.persist(.shiftOutbound(channel, from: first.seq, lastAssigned: cursor.lastAssigned)))
        let item = OutboundItem(
            channel: channel, seq: first.seq,
            transferId: configuration.makeTransferId?() ?? transferIds.next(),
            payload: payload, flags: flags, createdAt: configuration.wallClock())
        queue.insertAhead(item)
        queue.lastQueuedAhead = item.seq
        actions.append(.persist(.enqueue(item)))
        return item
    }

    /// Only one queued item is the current complication info: a newer one takes the tag.
    /// Returns the seq of the last item untagged, if any.
    private func retagOlderComplicationItems() -> UInt64? {
        let queue = queue(.userInfo)
        var untagged: UInt64?
        for offset in 0..<queue.count where queue[offset].flags.contains(.currentComplication) && queue[offset].seq > queue.sentUpTo {
            queue[offset].flags.remove(.currentComplication)
            actions.append(.persist(.setFlags(.userInfo, seq: queue[offset].seq, queue[offset].flags)))
            untagged = queue[offset].seq
        }
        let previous = max(untagged ?? 0, queue.lastQueuedAhead)
        return previous == 0 ? nil : previous
    }

    func updateApplicationContext(_ payload: [UInt8], token: RequestToken) {
        if let error = activationFailure() ?? pairingFailure() {
            actions.append(.respond(token, .failure(error)))
            return
        }
        guard payload.count <= configuration.maximumApplicationContextLength else {
            actions.append(
                .respond(
                    token,
                    .failure(
                        .wc(
                            .payloadTooLarge,
                            "the context is \(payload.count) bytes; the application context is limited to \(configuration.maximumApplicationContextLength) bytes"
                        ))))
            return
        }
        if payload == durableContexts.application {
            actions.append(.respond(token, .success(.contextUpdated)))
            return
        }
        // Latest wins: an older context that has not gone out yet is replaced.
        let contextQueue = queue(.applicationContext)
        let sentUpTo = contextQueue.sentUpTo
        for item in contextQueue.items where item.seq > sentUpTo {
            actions.append(.persist(.removeOutbound(.applicationContext, seq: item.seq)))
        }
        contextQueue.removeAll { $0.seq > sentUpTo }
        durableContexts.application = payload
        actions.append(.persist(.setApplicationContext(payload)))
        enqueue(.applicationContext, payload: payload, flags: [])
        actions.append(.respond(token, .success(.contextUpdated)))
        pump(.applicationContext)
    }

    @discardableResult
    func enqueue(_ channel: QueueChannel, payload: [UInt8], flags: ItemFlags, transferId: String? = nil) -> OutboundItem {
        var cursor = cursor(channel)
        cursor.lastAssigned += 1
        cursors[channel] = cursor
        let item = OutboundItem(
            channel: channel, seq: cursor.lastAssigned,
            transferId: transferId ?? configuration.makeTransferId?() ?? transferIds.next(),
            payload: payload, flags: flags, createdAt: configuration.wallClock())
        queue(channel).append(item)
        actions.append(.persist(.enqueue(item)))
        return item
    }

    /// Sends what the window allows, in order, once the peer told us where to resume.
    func pump(_ channel: QueueChannel) {
        if channel == .file { return pumpFiles() }
        let queue = queue(channel)
        guard isLinkUp, queue.isResumed, queuedItemsMayGo else { return }
        var next = queue.inFlightCount()
        while next < queue.count, next < configuration.maximumItemsInFlight {
            let item = queue[next]
            actions.append(
                .send(
                    .item(
                        channel: channel.rawValue, seq: item.seq,
                        flags: item.flags.subtracting(.localOnly).rawValue, payload: item.payload)))
            queue.sentUpTo = item.seq
            if item.seq > queue.mayHaveSentUpTo { queue.mayHaveSentUpTo = item.seq }
            next += 1
        }
    }

    /// Whether queued items go out: to the active watch only, and while the pair is usable.
    /// What was queued for a watch app that was uninstalled since (or a watch that was
    /// unpaired, or a companion app that was removed) waits, outstanding and cancellable, until
    /// it is usable again: Apple documents no outcome for it, and a transfer once accepted is
    /// "guaranteed" (docs/app-side.md, "What differs from a device").
    var queuedItemsMayGo: Bool {
        guard isWithActiveWatch else { return false }
        switch role {
        case .phone: return flags.contains(.isPaired) && flags.contains(.isWatchAppInstalled)
        case .watch: return flags.contains(.isCompanionAppInstalled)
        }
    }

    /// The pair became usable again: what waited goes out.
    func resumeQueuedItems(ifHeldBefore wasAllowed: Bool) {
        guard !wasAllowed, queuedItemsMayGo else { return }
        for channel in QueueChannel.allCases { pump(channel) }
    }

    func cancelTransfer(_ transferId: String, token: RequestToken) {
        let removed = removeUnsentUserInfo(transferId)
        actions.append(.respond(token, .success(.cancelled(removed != nil))))
    }

    /// Removes a userInfo transfer still queued and not on the link (an item on the link may
    /// arrive, so it stays); nil when there is none.
    private func removeUnsentUserInfo(_ transferId: String) -> OutboundItem? {
        let queue = queue(.userInfo)
        guard let item = queue.items.first(where: { $0.transferId == transferId }) else { return nil }
        if isLinkUp, queue.isResumed, item.seq <= queue.sentUpTo { return nil }
        queue.removeAll { $0.seq == item.seq }
        actions.append(.persist(.removeOutbound(.userInfo, seq: item.seq)))
        return item
    }

    /// `transfer.timeOut`: the fault of a transfer the system gave up on (7017).
    func timeOutTransfer(_ transferId: String, token: RequestToken) {
        let error = SessionError.wc(.transferTimedOut, "the transfer timed out before it completed (transfer.timeOut)")
        if let item = removeUnsentUserInfo(transferId) {
            transferFinished(item, error: error)
            actions.append(.respond(token, .success(.timedOut(true))))
        } else {
            actions.append(.respond(token, .success(.timedOut(failUnsentFile(transferId, error: error)))))
        }
    }

    func outstandingTransfers() -> [OutstandingTransfer] {
        let queue = queue(.userInfo)
        return queue.items.map { item in
            OutstandingTransfer(
                transferId: item.transferId, payload: item.payload,
                isTransferring: isLinkUp && queue.isResumed && item.seq <= queue.sentUpTo,
                isCurrentComplicationInfo: item.flags.contains(.currentComplication))
        }
    }

    /// "0 whenever the complication is not enabled" (WCSession.h), else what is left of the
    /// day's budget.
    func remainingComplicationTransfers() -> Int {
        guard flags.contains(.isComplicationEnabled) else { return 0 }
        return complicationBudget.day == currentDay()
            ? max(0, configuration.complicationTransfersPerDay - complicationBudget.used)
            : configuration.complicationTransfersPerDay
    }

    private func currentDay() -> Int64 {
        Int64((configuration.wallClock() / 86_400).rounded(.down))
    }

    // MARK: - Acknowledgements from the peer

    func receiveAcknowledgement(channel rawChannel: UInt8, seq: UInt64) {
        guard let channel = QueueChannel(rawValue: rawChannel) else { return }
        var cursor = cursor(channel)
        if seq > cursor.lastAssigned {
            // The peer knows later numbers than we do (our state was reset): never reuse them.
            cursor.lastAssigned = seq
            actions.append(.persist(.setLastAssigned(channel, seq)))
        }
        let queue = queue(channel)
        if seq > cursor.lastAcknowledged {
            cursor.lastAcknowledged = seq
            let finished = queue.removeAcknowledged(upTo: seq)
            // Written first: what the app is told of it waits for the commit.
            actions.append(.persist(.acknowledge(channel, upTo: seq)))
            if channel == .userInfo {
                for item in finished {
                    transferFinished(item, error: nil)
                }
            }
            if channel == .file { filesDelivered(finished) }
        }
        cursors[channel] = cursor
        if !queue.isResumed {
            queue.isResumed = true
            queue.sentUpTo = seq
        } else {
            queue.sentUpTo = max(queue.sentUpTo, seq)
        }
        pump(channel)
    }

    // MARK: - Refusals

    /// The turn that received items of the peer could not be committed because the disk is
    /// full: each userInfo and file item of it is refused with `error` (7015), so that the
    /// sender reports it in `didFinish` instead of sending it again and again ("not enough
    /// space on the receiving side", WCError). Call before the session reloads its state.
    /// An application context is not refused: the next one replaces it, and it is sent again.
    public func refuseUncommittedItems(_ error: SessionError) -> [SessionAction] {
        guard isLinkUp, case .wc(let code, let reason) = error else { return drain() }
        var refused = Set<ItemReceipt>()
        for receipt in committingReceipts where refused.insert(receipt).inserted {
            let frame = Frame.itemError(
                channel: receipt.channel.rawValue, seq: receipt.seq, code: UInt16(code.rawValue),
                description: "the \(role == .phone ? "phone" : "watch") has no room for it: \(reason)")
            if refusals.count >= Self.maximumRemembered { refusals.removeAll() }
            refusals[receipt] = frame
            actions.append(.send(frame))
        }
        committingReceipts.removeAll()
        return drain()
    }

    /// How many refusals a session remembers.
    static let maximumRemembered = 4_096

    /// Whether the peer sent an item this side refused: refused again, nothing written.
    func refusedAgain(_ channel: QueueChannel, _ seq: UInt64) -> Bool {
        guard let frame = refusals[ItemReceipt(channel: channel, seq: seq)] else { return false }
        actions.append(.send(frame))
        return true
    }

    /// The peer refused one of our items for good: it leaves the queue and its `didFinish`
    /// reports the peer's error.
    func receiveItemError(channel rawChannel: UInt8, seq: UInt64, code: UInt16, description: String) {
        guard let channel = QueueChannel(rawValue: rawChannel), channel != .applicationContext,
            let item = queue(channel).items.first(where: { $0.seq == seq })
        else { return }
        let error = SessionError.wc(WCErrorCode(rawValue: Int(code)) ?? .genericError, description)
        if channel == .file { return fileRefused(item, error: error) }
        queue(channel).removeAll { $0.seq == seq }
        actions.append(.persist(.removeOutbound(channel, seq: seq)))
        transferFinished(item, error: error)
        pump(channel)
    }

    // MARK: - Items from the peer

    func receiveItem(channel rawChannel: UInt8, seq: UInt64, flags: ItemFlags, payload: [UInt8]) {
        guard let channel = QueueChannel(rawValue: rawChannel) else { return }
        if refusedAgain(channel, seq) { return }
        if channel == .file { return receiveFileOffer(seq: seq, payload: payload) }
        var cursor = cursor(channel)
        acknowledgementsDue.insert(channel)
        guard seq > cursor.lastReceived else { return }  // a duplicate after a reconnect
        cursor.lastReceived = seq
        cursors[channel] = cursor
        guard PropertyListCodec.isDictionaryByCheck(payload) else {
            // Unusable: acknowledge it so the peer stops sending it, and deliver nothing.
            actions.append(.persist(.setLastReceived(channel, seq)))
            return
        }
        switch channel {
        case .userInfo:
            var flags = flags
            flags.subtract(.localOnly)
            if frameworksRunInTheDaemon, let isSystem = configuration.isSystemUserInfo, isSystem(payload) { flags.insert(.system) }
            let item = InboxItem(
                seq: allocateReceivedSeq(), channel: channel, channelSeq: seq, payload: payload,
                flags: flags, receivedAt: configuration.wallClock(), delivered: false)
            actions.append(.persist(.receive(item)))
            undelivered.append(item)
            turnReceipts.append(ItemReceipt(channel: .userInfo, seq: seq))
        case .applicationContext:
            let pending = undelivered.last { $0.channel == .applicationContext }
            if payload == (pending?.payload ?? durableContexts.received) {
                actions.append(.persist(.setLastReceived(channel, seq)))
                return
            }
            for stale in undelivered where stale.channel == .applicationContext {
                actions.append(.persist(.removeInbox(seq: stale.seq)))
            }
            undelivered.removeAll { $0.channel == .applicationContext }
            let item = InboxItem(
                seq: allocateReceivedSeq(), channel: channel, channelSeq: seq, payload: payload,
                flags: flags, receivedAt: configuration.wallClock(), delivered: false)
            actions.append(.persist(.receive(item)))
            undelivered.append(item)
        case .file:
            return  // receiveFileOffer
        }
        deliverPending()
    }

    /// Hands received items to the app once its session is activated (or inactive, still
    /// delivering the previous watch's data) and it runs, in order (WatchConnectivity
    /// delivers them at launch). An attached app gets them to acknowledge (AppAttachment.swift).
    func deliverPending() {
        guard !undelivered.isEmpty || (attachedApp != nil && !finishedWhileAway.isEmpty) else { return }
        if !undelivered.isEmpty { wakeForBackgroundData() }
        // A suspended app runs no code and receives nothing until it is woken.
        guard activationState != .notActivated, appState != .notRunning, !background.isSuspended else { return }
        if attachedApp != nil { return handPendingToApp() }
        // An app process whose WatchKit runs takes its items itself, once its session attaches.
        guard !background.watchKitAttached else { return }
        for item in undelivered {
            markDelivered(item)
            notifyDelivery(item)
        }
        undelivered.removeAll()
    }

    /// The item is the app's now: committed as delivered (a context becomes the received one).
    func markDelivered(_ item: InboxItem) {
        actions.append(.persist(.markDelivered(seq: item.seq)))
        if item.channel == .applicationContext {
            durableContexts.received = item.payload
            actions.append(.persist(.setReceivedApplicationContext(item.payload)))
        }
    }

    /// Tells the app (and the frameworks on this side) about a received item.
    func notifyDelivery(_ item: InboxItem) {
        switch item.channel {
        case .userInfo where item.flags.contains(.system):
            actions.append(.notify(.systemUserInfoReceived(seq: item.seq, userInfo: item.payload)))
        case .userInfo:
            actions.append(
                .notify(
                    .userInfoReceived(
                        seq: item.seq, userInfo: item.payload,
                        isCurrentComplicationInfo: item.flags.contains(.currentComplication))))
        case .applicationContext:
            actions.append(.notify(.applicationContextReceived(seq: item.seq, context: item.payload)))
        case .file:
            if let file = ReceivedFile(seq: item.seq, payload: item.payload) {
                actions.append(.notify(.file(.received(file))))
            }
        }
    }
}
