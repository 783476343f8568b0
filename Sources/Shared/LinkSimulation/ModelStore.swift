import CSQLite
import LinkStore

/// The durable operations applied to memory, with the crash and fault semantics of
/// ``DeliveryStore`` on SQLite in WAL mode with `synchronous=FULL`: what a turn wrote is visible
/// to ``load()`` only once ``commit()`` ran, a commit is durable when it returns (so a power cut
/// and a SIGKILL lose the same thing: the open turn), and a failed write or commit throws the
/// ``SQLiteError`` SQLite gives (`SQLITE_FULL` for no space, `SQLITE_IOERR` for EIO), after
/// which the turn is rolled back.
package final class ModelStore: DurableStore {
    /// The calls a fault can fail.
    package enum FaultPoint { case apply, commit }

    /// Where a crash lands in a commit.
    package enum CommitOutcome {
        case proceed
        /// The process dies before the commit reaches the disk: the turn is lost.
        case crashBefore
        /// The commit is durable, then the process dies.
        case crashAfter
    }

    package private(set) var committed = DurableState()
    /// Received items handed to the app, oldest first (`markDelivered` moves them here).
    package private(set) var delivered: [InboxItem] = []
    private var pending: [DurableOperation] = []
    private var isOpen = true
    package let path: String

    /// Fails a call with the error returned, or lets it happen (nil).
    package var fault: (FaultPoint) -> SQLiteError? = { _ in nil }
    /// Decides, at each commit, whether the process dies around it.
    package var commitHook: () -> CommitOutcome = { .proceed }
    /// What happened to the store, in order, for a test to replay on another store.
    package enum Call {
        case apply(DurableOperation)
        case commit
        case rollback
        /// The process died (or started): the open turn is gone.
        case reopen
    }

    /// Sees every call that changed the store (see ``Call``).
    package var recorder: ((Call) -> Void)?

    package init(path: String = "model.db") {
        self.path = path
        // As DeliveryStore reads them: a cursor for every channel.
        for channel in QueueChannel.allCases { committed.cursors[channel] = ChannelCursor() }
    }

    package static func diskFull(_ call: FaultPoint, path: String) -> SQLiteError {
        SQLiteError(
            extendedCode: SQLITE_FULL, systemErrno: 28, message: "database or disk is full", operation: "\(call)", path: path)
    }

    package static func ioError(_ call: FaultPoint, path: String) -> SQLiteError {
        SQLiteError(extendedCode: SQLITE_IOERR, systemErrno: 5, message: "disk I/O error", operation: "\(call)", path: path)
    }

    package var inTransaction: Bool { !pending.isEmpty }

    package func apply(_ operation: DurableOperation) throws(SQLiteError) {
        guard isOpen else { throw closedError("apply") }
        if let error = fault(.apply) { throw error }
        pending.append(operation)
        recorder?(.apply(operation))
    }

    package func commit() throws(SQLiteError) {
        guard isOpen else { throw closedError("commit") }
        guard !pending.isEmpty else { return }
        if let error = fault(.commit) { throw error }
        switch commitHook() {
        case .crashBefore:
            pending.removeAll()
            return
        case .proceed, .crashAfter:
            for operation in pending { Self.apply(operation, to: &committed, delivered: &delivered) }
            pending.removeAll()
            recorder?(.commit)
        }
    }

    package func rollback() {
        pending.removeAll()
        recorder?(.rollback)
    }

    package func load() throws(SQLiteError) -> DurableState {
        guard isOpen else { throw closedError("load") }
        // In DeliveryStore's order.
        var state = committed
        state.outbox.sort { ($0.channel.rawValue, $0.seq) < ($1.channel.rawValue, $1.seq) }
        state.undelivered.sort { $0.seq < $1.seq }
        return state
    }

    package func deliveredItems(after seq: UInt64, limit: Int) throws(SQLiteError) -> [InboxItem] {
        guard isOpen else { throw closedError("deliveredItems") }
        return Array(delivered.filter { $0.seq > seq }.sorted { $0.seq < $1.seq }.prefix(limit))
    }

    package func pruneDelivered(keeping count: Int) throws(SQLiteError) {
        guard isOpen else { throw closedError("pruneDelivered") }
        if delivered.count > count { delivered.removeFirst(delivered.count - count) }
    }

    package func close() {
        pending.removeAll()
        isOpen = false
    }

    /// Takes the committed state of another store (a world on SQLite keeps this one as the
    /// copy of what its ``DeliveryStore`` committed, read back after each commit and open,
    /// for the checks to read).
    package func mirror(committed: DurableState, delivered: [InboxItem]) {
        self.committed = committed
        self.delivered = delivered
    }

    /// SIGKILL or a power cut: the open turn is gone; the file opens again as committed.
    package func crash() {
        pending.removeAll()
        isOpen = true
        recorder?(.reopen)
    }

    private func closedError(_ operation: String) -> SQLiteError {
        SQLiteError(extendedCode: SQLITE_MISUSE, message: "the database connection is closed", operation: operation, path: path)
    }

    /// The first position in `outbox` (in (channel, seq) order) at or after `(channel, seq)`.
    private static func firstIndex(in outbox: [OutboundItem], atOrAfter channel: QueueChannel, _ seq: UInt64) -> Int {
        var low = 0
        var high = outbox.count
        while low < high {
            let middle = (low + high) / 2
            let item = outbox[middle]
            if (item.channel.rawValue, item.seq) < (channel.rawValue, seq) { low = middle + 1 } else { high = middle }
        }
        return low
    }

    package static func apply(_ operation: DurableOperation, to state: inout DurableState, delivered: inout [InboxItem]) {
        func raise(_ channel: QueueChannel, _ change: (inout ChannelCursor) -> Void) {
            var cursor = state.cursors[channel] ?? ChannelCursor()
            change(&cursor)
            state.cursors[channel] = cursor
        }
        switch operation {
        case .enqueue(let item):
            state.outbox.insert(item, at: firstIndex(in: state.outbox, atOrAfter: item.channel, item.seq))
            raise(item.channel) { $0.lastAssigned = max($0.lastAssigned, item.seq) }
        case .acknowledge(let channel, let upTo):
            // The outbox is kept in (channel, seq) order: the acknowledged items are one run.
            let start = firstIndex(in: state.outbox, atOrAfter: channel, 0)
            let end = firstIndex(in: state.outbox, atOrAfter: channel, upTo &+ 1)
            if upTo < .max { state.outbox.removeSubrange(start..<end) } else { state.outbox.removeAll { $0.channel == channel } }
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
