import LinkStore

/// The durable operations applied to memory, with the runtime's group commit: what a turn
/// wrote is visible to `load()` only once `commit()` ran, and `crash()` forgets the rest.
struct MemoryStore {
    private(set) var committed = DurableState()
    private(set) var delivered: [InboxItem] = []
    private var pending: [DurableOperation] = []

    var inTransaction: Bool { !pending.isEmpty }

    mutating func apply(_ operation: DurableOperation) { pending.append(operation) }

    mutating func commit() {
        for operation in pending { Self.apply(operation, to: &committed, delivered: &delivered) }
        pending.removeAll()
    }

    mutating func crash() { pending.removeAll() }

    func load() -> DurableState { committed }

    private static func apply(_ operation: DurableOperation, to state: inout DurableState, delivered: inout [InboxItem]) {
        func raise(_ channel: QueueChannel, _ change: (inout ChannelCursor) -> Void) {
            var cursor = state.cursors[channel] ?? ChannelCursor()
            change(&cursor)
            state.cursors[channel] = cursor
        }
        switch operation {
        case .enqueue(let item):
            state.outbox.append(item)
            raise(item.channel) { $0.lastAssigned = max($0.lastAssigned, item.seq) }
        case .acknowledge(let channel, let upTo):
            state.outbox.removeAll { $0.channel == channel && $0.seq <= upTo }
            raise(channel) { $0.lastAcknowledged = max($0.lastAcknowledged, upTo) }
        case .removeOutbound(let channel, let seq):
            state.outbox.removeAll { $0.channel == channel && $0.seq == seq }
        case .shiftOutbound(let channel, let from, let lastAssigned):
            for index in state.outbox.indices where state.outbox[index].channel == channel && state.outbox[index].seq >= from {
                state.outbox[index].seq += 1
            }
            raise(channel) { $0.lastAssigned = max($0.lastAssigned, lastAssigned) }
        case .setFlags(let channel, let seq, let flags):
            if let index = state.outbox.firstIndex(where: { $0.channel == channel && $0.seq == seq }) {
                state.outbox[index].flags = flags
            }
        case .receive(let item):
            state.undelivered.append(item)
            raise(item.channel) { $0.lastReceived = max($0.lastReceived, item.channelSeq) }
            state.reservedSeq = max(state.reservedSeq, item.seq)
        case .setLastReceived(let channel, let seq):
            raise(channel) { $0.lastReceived = max($0.lastReceived, seq) }
        case .setLastAssigned(let channel, let seq):
            raise(channel) { $0.lastAssigned = max($0.lastAssigned, seq) }
        case .markDelivered(let seq):
            if let index = state.undelivered.firstIndex(where: { $0.seq == seq }) {
                var item = state.undelivered.remove(at: index)
                item.delivered = true
                delivered.append(item)
            }
        case .removeInbox(let seq):
            state.undelivered.removeAll { $0.seq == seq }
        case .setApplicationContext(let bytes):
            state.applicationContext = bytes
        case .setReceivedApplicationContext(let bytes):
            state.receivedApplicationContext = bytes
        case .setComplicationBudget(let day, let used):
            state.complicationDay = day
            state.complicationTransfersUsed = used
        case .reserveSeq(let upTo):
            state.reservedSeq = max(state.reservedSeq, upTo)
        case .beginIncomingFile(let record):
            state.incomingFiles.removeAll { $0.seq == record.seq }
            state.incomingFiles.append(record)
            state.incomingFiles.sort { $0.seq < $1.seq }
        case .setIncomingFileOffset(let seq, let offset):
            if let index = state.incomingFiles.firstIndex(where: { $0.seq == seq }) {
                state.incomingFiles[index].committedOffset = offset
            }
        case .removeIncomingFile(let seq):
            state.incomingFiles.removeAll { $0.seq == seq }
        case .recordFinished(let record):
            state.finished.removeAll { $0.seq == record.seq }
            state.finished.append(record)
            state.finished.sort { $0.seq < $1.seq }
            state.reservedSeq = max(state.reservedSeq, record.seq)
        case .removeFinished(let upTo):
            state.finished.removeAll { $0.seq <= upTo }
        }
    }
}
