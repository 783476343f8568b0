import LinkStore
import WireProtocol

/// The outbound side of one queued channel: what waits for the peer's acknowledgement.
struct OutboundQueue {
    /// Unacknowledged items in sequence order.
    var items: [OutboundItem] = []
    /// Whether the peer told us its resume point on the current link.
    var isResumed = false
    /// The highest seq sent on the current link.
    var sentUpTo: UInt64 = 0

    /// Items already sent and not yet acknowledged: a prefix of `items`.
    func inFlightCount() -> Int {
        var low = 0, high = items.count
        while low < high {
            let middle = (low + high) / 2
            if items[middle].seq <= sentUpTo { low = middle + 1 } else { high = middle }
        }
        return low
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
        for item in state.outbox { queues[item.channel, default: OutboundQueue()].items.append(item) }
        for channel in QueueChannel.allCases { queues[channel]?.items.sort { $0.seq < $1.seq } }
        undelivered = state.undelivered.sorted { $0.seq < $1.seq }
        durableContexts = (state.applicationContext, state.receivedApplicationContext)
        complicationBudget = (state.complicationDay, state.complicationTransfersUsed)
        reservedSeq = state.reservedSeq
        nextReceivedSeq = max(nextReceivedSeq, state.reservedSeq + 1)
        acknowledgementsDue = []
    }

    /// The cumulative acknowledgements of this turn, one per channel: the runtime asks for
    /// them at the end of each loop turn, before it commits, and sends them after.
    public func flushAcknowledgements() -> [SessionAction] {
        if isLinkUp {
            for channel in acknowledgementsDue.sorted() {
                actions.append(.send(.ack(channel: channel.rawValue, seq: cursor(channel).lastReceived)))
            }
        }
        acknowledgementsDue.removeAll(keepingCapacity: true)
        return drain()
    }

    // MARK: - Link

    func queuedLinkUp() {
        for channel in QueueChannel.allCases {
            queues[channel, default: OutboundQueue()].isResumed = false
            queues[channel]?.sentUpTo = 0
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

    // MARK: - Sending

    func transferUserInfo(_ payload: [UInt8], complication: Bool, token: RequestToken) {
        if complication {
            guard role == .phone else {
                actions.append(.respond(token, .failure(.wc(.sessionNotSupported,
                    "transferCurrentComplicationUserInfo is a phone API"))))
                return
            }
            guard flags.contains(.isComplicationEnabled) else {
                actions.append(.respond(token, .failure(.wc(.genericError,
                    "the complication is not enabled on the watch face (device.set isComplicationEnabled)"))))
                return
            }
        }
        guard activationState == .activated else {
            actions.append(.respond(token, .failure(.wc(.sessionNotActivated,
                "the session is not activated: call session.activate first"))))
            return
        }
        guard payload.count <= configuration.maximumUserInfoLength else {
            actions.append(.respond(token, .failure(.wc(.payloadTooLarge,
                "the userInfo is \(payload.count) bytes; transfers are limited to \(configuration.maximumUserInfoLength) bytes"))))
            return
        }
        var itemFlags: ItemFlags = []
        var remaining: Int?
        if complication {
            let today = currentDay()
            if complicationBudget.day != today { complicationBudget = (today, 0) }
            if complicationBudget.used < configuration.complicationTransfersPerDay {
                complicationBudget.used += 1
                itemFlags = .currentComplication
                actions.append(.persist(.setComplicationBudget(day: today, used: complicationBudget.used)))
                retagOlderComplicationItems()
            }
            remaining = configuration.complicationTransfersPerDay - complicationBudget.used
        }
        let item = enqueue(.userInfo, payload: payload, flags: itemFlags)
        actions.append(.respond(token, .success(.transfer(transferId: item.transferId, remainingComplicationTransfers: remaining))))
        pump(.userInfo)
    }

    /// Only one queued item is the current complication info: a newer one takes the tag.
    private func retagOlderComplicationItems() {
        guard var queue = queues[.userInfo] else { return }
        for index in queue.items.indices where queue.items[index].flags.contains(.currentComplication)
            && queue.items[index].seq > queue.sentUpTo {
            queue.items[index].flags.remove(.currentComplication)
            actions.append(.persist(.setFlags(.userInfo, seq: queue.items[index].seq, queue.items[index].flags)))
        }
        queues[.userInfo] = queue
    }

    func updateApplicationContext(_ payload: [UInt8], token: RequestToken) {
        guard activationState == .activated else {
            actions.append(.respond(token, .failure(.wc(.sessionNotActivated,
                "the session is not activated: call session.activate first"))))
            return
        }
        guard payload.count <= configuration.maximumApplicationContextLength else {
            actions.append(.respond(token, .failure(.wc(.payloadTooLarge,
                "the context is \(payload.count) bytes; the application context is limited to \(configuration.maximumApplicationContextLength) bytes"))))
            return
        }
        if payload == durableContexts.application {
            actions.append(.respond(token, .success(.contextUpdated)))
            return
        }
        // Latest wins: an older context that has not gone out yet is replaced.
        if var queue = queues[.applicationContext] {
            let stale = queue.items.filter { $0.seq > queue.sentUpTo }
            for item in stale { actions.append(.persist(.removeOutbound(.applicationContext, seq: item.seq))) }
            queue.items.removeAll { $0.seq > queue.sentUpTo }
            queues[.applicationContext] = queue
        }
        durableContexts.application = payload
        actions.append(.persist(.setApplicationContext(payload)))
        enqueue(.applicationContext, payload: payload, flags: [])
        actions.append(.respond(token, .success(.contextUpdated)))
        pump(.applicationContext)
    }

    @discardableResult
    private func enqueue(_ channel: QueueChannel, payload: [UInt8], flags: ItemFlags) -> OutboundItem {
        var cursor = cursor(channel)
        cursor.lastAssigned += 1
        cursors[channel] = cursor
        let item = OutboundItem(channel: channel, seq: cursor.lastAssigned, transferId: configuration.makeTransferId(),
                                payload: payload, flags: flags, createdAt: configuration.wallClock())
        queues[channel, default: OutboundQueue()].items.append(item)
        actions.append(.persist(.enqueue(item)))
        return item
    }

    /// Sends what the window allows, in order, once the peer told us where to resume.
    func pump(_ channel: QueueChannel) {
        guard isLinkUp, var queue = queues[channel], queue.isResumed else { return }
        var next = queue.inFlightCount()
        while next < queue.items.count, next < configuration.maximumItemsInFlight {
            let item = queue.items[next]
            actions.append(.send(.item(channel: channel.rawValue, seq: item.seq, flags: item.flags.rawValue, payload: item.payload)))
            queue.sentUpTo = item.seq
            next += 1
        }
        queues[channel] = queue
    }

    func cancelTransfer(_ transferId: String, token: RequestToken) {
        guard var queue = queues[.userInfo], let index = queue.items.firstIndex(where: { $0.transferId == transferId }) else {
            actions.append(.respond(token, .success(.cancelled(false))))
            return
        }
        let item = queue.items[index]
        if isLinkUp, queue.isResumed, item.seq <= queue.sentUpTo {
            // On the link already: it may arrive, so it is not cancelled.
            actions.append(.respond(token, .success(.cancelled(false))))
            return
        }
        queue.items.remove(at: index)
        queues[.userInfo] = queue
        actions.append(.persist(.removeOutbound(.userInfo, seq: item.seq)))
        actions.append(.respond(token, .success(.cancelled(true))))
    }

    func outstandingTransfers() -> [OutstandingTransfer] {
        guard let queue = queues[.userInfo] else { return [] }
        return queue.items.map { item in
            OutstandingTransfer(transferId: item.transferId, payload: item.payload,
                                isTransferring: isLinkUp && queue.isResumed && item.seq <= queue.sentUpTo,
                                isCurrentComplicationInfo: item.flags.contains(.currentComplication))
        }
    }

    func remainingComplicationTransfers() -> Int {
        complicationBudget.day == currentDay()
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
        var queue = queues[channel] ?? OutboundQueue()
        if seq > cursor.lastAcknowledged {
            cursor.lastAcknowledged = seq
            var finished = 0
            while finished < queue.items.count, queue.items[finished].seq <= seq { finished += 1 }
            if finished > 0 {
                if channel == .userInfo {
                    for item in queue.items[..<finished] {
                        actions.append(.notify(.userInfoDidFinish(transferId: item.transferId, error: nil)))
                    }
                }
                queue.items.removeFirst(finished)
            }
            actions.append(.persist(.acknowledge(channel, upTo: seq)))
        }
        cursors[channel] = cursor
        if !queue.isResumed {
            queue.isResumed = true
            queue.sentUpTo = seq
        } else {
            queue.sentUpTo = max(queue.sentUpTo, seq)
        }
        queues[channel] = queue
        pump(channel)
    }

    // MARK: - Items from the peer

    func receiveItem(channel rawChannel: UInt8, seq: UInt64, flags: ItemFlags, payload: [UInt8]) {
        guard let channel = QueueChannel(rawValue: rawChannel) else { return }
        var cursor = cursor(channel)
        acknowledgementsDue.insert(channel)
        guard seq > cursor.lastReceived else { return }   // a duplicate after a reconnect
        cursor.lastReceived = seq
        cursors[channel] = cursor
        guard (try? PropertyListCodec.decodeDictionary(payload)) != nil else {
            // Unusable: acknowledge it so the peer stops sending it, and deliver nothing.
            actions.append(.persist(.setLastReceived(channel, seq)))
            return
        }
        switch channel {
        case .userInfo:
            let item = InboxItem(seq: allocateReceivedSeq(), channel: channel, channelSeq: seq, payload: payload,
                                 flags: flags, receivedAt: configuration.wallClock(), delivered: false)
            actions.append(.persist(.receive(item)))
            undelivered.append(item)
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
            let item = InboxItem(seq: allocateReceivedSeq(), channel: channel, channelSeq: seq, payload: payload,
                                 flags: flags, receivedAt: configuration.wallClock(), delivered: false)
            actions.append(.persist(.receive(item)))
            undelivered.append(item)
        }
        deliverPending()
    }

    /// Hands received items to the app once its session is activated and it runs, in order
    /// (WatchConnectivity delivers them at launch).
    func deliverPending() {
        guard !undelivered.isEmpty, activationState == .activated, appState != .notRunning else { return }
        for item in undelivered {
            let dictionary = (try? PropertyListCodec.decodeDictionary(item.payload)) ?? [:]
            actions.append(.persist(.markDelivered(seq: item.seq)))
            switch item.channel {
            case .userInfo:
                actions.append(.notify(.userInfoReceived(seq: item.seq, userInfo: dictionary,
                                                         isCurrentComplicationInfo: item.flags.contains(.currentComplication))))
            case .applicationContext:
                durableContexts.received = item.payload
                actions.append(.persist(.setReceivedApplicationContext(item.payload)))
                actions.append(.notify(.applicationContextReceived(seq: item.seq, context: dictionary)))
            }
        }
        undelivered.removeAll()
    }
}
