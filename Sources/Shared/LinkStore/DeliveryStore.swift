import CSQLite

/// The WatchLink database of one daemon (`phone/phone.db` or `watch/watch.db`): the
/// queued channels' cursors, outbox and inbox, and the session's single values.
///
/// The runtime applies the ``DurableOperation``s of one event-loop turn with ``apply(_:)``,
/// which opens a transaction on the first of them, and makes them durable together with
/// ``commit()`` (group commit). After a failed ``apply(_:)`` or ``commit()``, ``rollback()``
/// discards the whole turn. Every statement is prepared once, when the store opens; the
/// channel cursors are kept in memory and written once a turn, at commit.
///
/// A store belongs to the thread of the event loop that owns it.
public final class DeliveryStore {
    /// `PRAGMA application_id` of a WatchLink database: "WLNK".
    public static let applicationID: Int32 = 0x574C_4E4B

    /// The database file.
    public let path: String
    /// Whether opening created the file, found it current, or migrated it.
    public let openOutcome: StoreFile.Outcome
    private let database: SQLiteDatabase
    private var statements: DeliveryStatements?
    private var fileStatements: FileStatements?
    private var finishedStatements: FinishedStatements?
    /// The cursors as committed.
    private var committedCursors: ChannelCursors
    /// The cursors with the open turn's changes.
    private var cursors: ChannelCursors

    /// Opens the database at `path`, creating it or bringing its schema up to date.
    ///
    /// - Parameter synchronous: `.full` (the default) makes each commit durable against a
    ///   power loss; `.normal` only against a crash of the process, in return for fewer
    ///   `fsync` calls.
    /// - Throws: ``StoreFileError`` for a file that is not a WatchLink database, is damaged,
    ///   or was written by a newer version (the file is left as it was); ``SQLiteError``
    ///   when SQLite fails otherwise (a full disk while creating the file, for instance).
    public init(path: String, synchronous: SQLiteDatabase.Synchronous = .full) throws {
        var options = SQLiteDatabase.Options()
        options.synchronous = synchronous
        let (database, outcome) = try StoreFile.open(path: path, schema: Self.schema, options: options)
        do {
            let statements = try DeliveryStatements(database)
            committedCursors = try Self.readCursors(statements.selectCursors, path: path)
            self.statements = statements
            fileStatements = try FileStatements(database)
            finishedStatements = try FinishedStatements(database)
        } catch {
            database.close()
            throw error.isCorrupt ? StoreFileError.corrupt(path: path, reason: error.message) : error
        }
        cursors = committedCursors
        self.path = path
        self.database = database
        self.openOutcome = outcome
    }

    deinit {
        close()
    }

    /// Rolls back a turn still open, finalizes the statements and closes the file. Later
    /// calls fail with ``SQLiteError``; calling it again does nothing.
    public func close() {
        statements = nil
        fileStatements = nil
        finishedStatements = nil
        database.close()
    }

    // MARK: Turns

    /// Whether a turn's transaction is open.
    public var inTransaction: Bool { database.inTransaction }

    /// Performs `operation` in the current turn's transaction, opening one
    /// (`BEGIN IMMEDIATE`) if none is open.
    ///
    /// - Throws: ``SQLiteError``; ``SQLiteError/isDiskFull`` when there was no room. The
    ///   turn must then be discarded with ``rollback()``.
    public func apply(_ operation: DurableOperation) throws(SQLiteError) {
        let statements = try open("apply")
        if !database.inTransaction {
            cursors = committedCursors
            try statements.begin.run()
        }
        switch operation {
        case .enqueue(let item):
            let seq = try storable(item.seq, "seq")
            let insert = statements.insertOutbox
            try insert.bind(Int64(item.channel.rawValue), at: 1)
            try insert.bind(seq, at: 2)
            try insert.bind(item.transferId, at: 3)
            try insert.bind(item.payload, at: 4)
            try insert.bind(Int64(item.flags.rawValue), at: 5)
            try insert.bind(item.createdAt, at: 6)
            try insert.run()
            cursors.raiseLastAssigned(item.channel, to: item.seq)

        case .acknowledge(let channel, let upTo):
            let seq = try storable(upTo, "acknowledged seq")
            let delete = statements.deleteOutboxUpTo
            try delete.bind(Int64(channel.rawValue), at: 1)
            try delete.bind(seq, at: 2)
            try delete.run()
            cursors.raiseLastAcknowledged(channel, to: upTo)

        case .removeOutbound(let channel, let seq):
            let delete = statements.deleteOutbox
            try delete.bind(Int64(channel.rawValue), at: 1)
            try delete.bind(try storable(seq, "seq"), at: 2)
            try delete.run()

        case .setFlags(let channel, let seq, let flags):
            let update = statements.updateOutboxFlags
            try update.bind(Int64(channel.rawValue), at: 1)
            try update.bind(try storable(seq, "seq"), at: 2)
            try update.bind(Int64(flags.rawValue), at: 3)
            try update.run()

        case .shiftOutbound(let channel, let from, let lastAssigned):
            let away = statements.shiftOutboxAway
            try away.bind(Int64(channel.rawValue), at: 1)
            try away.bind(try storable(from, "seq"), at: 2)
            try away.run()
            let back = statements.shiftOutboxBack
            try back.bind(Int64(channel.rawValue), at: 1)
            try back.run()
            _ = try storable(lastAssigned, "lastAssigned")
            cursors.raiseLastAssigned(channel, to: lastAssigned)

        case .receive(let item):
            let insert = statements.insertInbox
            try insert.bind(try storable(item.seq, "seq"), at: 1)
            try insert.bind(Int64(item.channel.rawValue), at: 2)
            try insert.bind(try storable(item.channelSeq, "channel seq"), at: 3)
            try insert.bind(item.payload, at: 4)
            try insert.bind(Int64(item.flags.rawValue), at: 5)
            try insert.bind(item.receivedAt, at: 6)
            try insert.bind(item.delivered, at: 7)
            try insert.run()
            cursors.raiseLastReceived(item.channel, to: item.channelSeq)

        case .setLastReceived(let channel, let seq):
            cursors.raiseLastReceived(channel, to: UInt64(try storable(seq, "seq")))

        case .setLastAssigned(let channel, let seq):
            cursors.raiseLastAssigned(channel, to: UInt64(try storable(seq, "seq")))

        case .markDelivered(let seq):
            let update = statements.markDelivered
            try update.bind(try storable(seq, "seq"), at: 1)
            try update.run()

        case .removeInbox(let seq):
            try statements.keepNewestInboxSeq.run()
            let delete = statements.deleteInbox
            try delete.bind(try storable(seq, "seq"), at: 1)
            try delete.run()

        case .setApplicationContext(let context):
            try statements.setApplicationContext.bind(context, at: 1)
            try statements.setApplicationContext.run()

        case .setReceivedApplicationContext(let context):
            try statements.setReceivedApplicationContext.bind(context, at: 1)
            try statements.setReceivedApplicationContext.run()

        case .setComplicationBudget(let day, let used):
            try statements.setComplicationBudget.bind(day, at: 1)
            try statements.setComplicationBudget.bind(used, at: 2)
            try statements.setComplicationBudget.run()

        case .reserveSeq(let upTo):
            try statements.raiseReservedSeq.bind(try storable(upTo, "reserved seq"), at: 1)
            try statements.raiseReservedSeq.run()

        case .beginIncomingFile, .setIncomingFileOffset, .removeIncomingFile:
            guard let fileStatements else { throw .closed(operation: "apply", sql: nil, path: path) }
            try fileStatements.apply(operation, path: path)

        case .recordFinished, .removeFinished:
            guard let finishedStatements else { throw .closed(operation: "apply", sql: nil, path: path) }
            try finishedStatements.apply(operation, path: path)
        }
    }

    /// Commits the turn's transaction; does nothing when no turn is open.
    ///
    /// - Throws: ``SQLiteError``; ``SQLiteError/isDiskFull`` when there was no room. Nothing
    ///   of the turn is durable then; call ``rollback()``.
    public func commit() throws(SQLiteError) {
        let statements = try open("commit")
        guard database.inTransaction else {
            cursors = committedCursors
            return
        }
        for channel in QueueChannel.allCases where cursors[channel] != committedCursors[channel] {
            let cursor = cursors[channel]
            let write = statements.writeCursor
            try write.bind(Int64(channel.rawValue), at: 1)
            try write.bind(Int64(bitPattern: cursor.lastAssigned), at: 2)
            try write.bind(Int64(bitPattern: cursor.lastAcknowledged), at: 3)
            try write.bind(Int64(bitPattern: cursor.lastReceived), at: 4)
            try write.run()
        }
        try statements.commit.run()
        committedCursors = cursors
    }

    /// Discards the turn: after a failed ``apply(_:)`` or ``commit()``, nothing of it
    /// remains. Does nothing when no turn is open (SQLite may already have rolled it back).
    public func rollback() {
        cursors = committedCursors
        guard let statements, database.inTransaction else { return }
        try? statements.rollback.run()
    }

    // MARK: Reading

    /// Everything the session keeps across restarts: a cursor for every ``QueueChannel``
    /// (zeros where the channel never carried anything), the outbox in (channel, seq) order,
    /// the undelivered inbox in `seq` order, the contexts, the complication budget, and the
    /// reserved `seq`: the highest of those reserved and of those received, also when the
    /// item that used it was removed or pruned since.
    public func load() throws(SQLiteError) -> DurableState {
        let statements = try open("load")
        if !database.inTransaction {
            cursors = committedCursors
        }
        var state = DurableState()
        state.cursors = cursors.all

        let outbox = statements.selectOutbox
        defer { outbox.reset() }
        while try outbox.step() {
            state.outbox.append(
                OutboundItem(
                    channel: try Self.channel(outbox, at: 0, in: "outbox", path: path),
                    seq: Self.sequence(outbox, at: 1),
                    transferId: outbox.string(at: 2),
                    payload: outbox.blob(at: 3),
                    flags: Self.flags(outbox, at: 4),
                    createdAt: outbox.double(at: 5)))
        }

        state.undelivered = try inboxItems(statements.selectUndelivered)

        let values = statements.selectValues
        defer { values.reset() }
        while try values.step() {
            switch values.string(at: 0) {
            case Key.applicationContext: state.applicationContext = values.blob(at: 1)
            case Key.receivedApplicationContext: state.receivedApplicationContext = values.blob(at: 1)
            case Key.complicationDay: state.complicationDay = values.int64(at: 1)
            case Key.complicationTransfersUsed: state.complicationTransfersUsed = values.int(at: 1)
            case Key.reservedSeq: state.reservedSeq = max(state.reservedSeq, Self.sequence(values, at: 1))
            default: break
            }
        }

        if let fileStatements {
            state.incomingFiles = try fileStatements.loadIncoming()
        }
        if let finishedStatements {
            state.finished = try finishedStatements.load(path: path)
            if let newest = state.finished.last { state.reservedSeq = max(state.reservedSeq, newest.seq) }
        }

        let newest = statements.selectNewestInboxSeq
        defer { newest.reset() }
        if try newest.step() {
            state.reservedSeq = max(state.reservedSeq, Self.sequence(newest, at: 0))
        }
        return state
    }

    /// Delivered inbox items with a `seq` above `seq`, oldest first, at most `limit` of them.
    public func deliveredItems(after seq: UInt64, limit: Int) throws(SQLiteError) -> [InboxItem] {
        let statements = try open("deliveredItems")
        guard limit > 0 else { return [] }
        let select = statements.selectDelivered
        try select.bind(Int64(clamping: seq), at: 1)
        try select.bind(limit, at: 2)
        return try inboxItems(select)
    }

    /// Deletes delivered inbox items but the newest `count`. The reserved `seq` stays at
    /// least the newest item's, deleted or not. Inside a turn's transaction the deletion is
    /// part of the turn; outside, it commits on its own.
    public func pruneDelivered(keeping count: Int) throws(SQLiteError) {
        let statements = try open("pruneDelivered")
        try statements.keepNewestInboxSeq.run()
        try statements.pruneDelivered.bind(max(count, 0), at: 1)
        try statements.pruneDelivered.run()
    }

    // MARK: Helpers

    private func open(_ operation: String) throws(SQLiteError) -> DeliveryStatements {
        guard let statements else {
            throw .closed(operation: operation, sql: nil, path: path)
        }
        return statements
    }

    private static func readCursors(_ select: SQLiteStatement, path: String) throws(SQLiteError) -> ChannelCursors {
        defer { select.reset() }
        var cursors = ChannelCursors()
        while try select.step() {
            let channel = try Self.channel(select, at: 0, in: "cursor", path: path)
            cursors[channel] = ChannelCursor(
                lastAssigned: Self.sequence(select, at: 1),
                lastAcknowledged: Self.sequence(select, at: 2),
                lastReceived: Self.sequence(select, at: 3))
        }
        return cursors
    }

    /// SQLite integers are signed: sequence numbers above `Int64.max` cannot be stored.
    @inline(__always)
    private func storable(_ value: UInt64, _ name: String) throws(SQLiteError) -> Int64 {
        guard let stored = Int64(exactly: value) else {
            throw .misuse(
                "\(name) \(value) is above the largest sequence number SQLite stores (\(Int64.max))",
                operation: "apply", sql: nil, path: path)
        }
        return stored
    }

    private func inboxItems(_ select: SQLiteStatement) throws(SQLiteError) -> [InboxItem] {
        defer { select.reset() }
        var items: [InboxItem] = []
        while try select.step() {
            items.append(
                InboxItem(
                    seq: Self.sequence(select, at: 0),
                    channel: try Self.channel(select, at: 1, in: "inbox", path: path),
                    channelSeq: Self.sequence(select, at: 2),
                    payload: select.blob(at: 3),
                    flags: Self.flags(select, at: 4),
                    receivedAt: select.double(at: 5),
                    delivered: select.int64(at: 6) != 0))
        }
        return items
    }

    private static func channel(
        _ row: SQLiteStatement, at column: Int, in table: String, path: String
    ) throws(SQLiteError) -> QueueChannel {
        let value = row.int64(at: column)
        guard let raw = UInt8(exactly: value), let channel = QueueChannel(rawValue: raw) else {
            throw SQLiteError(
                extendedCode: SQLITE_CORRUPT, message: "a row of \(table) names channel \(value), which does not exist",
                operation: "load", sql: row.sql, path: path)
        }
        return channel
    }

    private static func sequence(_ row: SQLiteStatement, at column: Int) -> UInt64 {
        UInt64(bitPattern: row.int64(at: column))
    }

    private static func flags(_ row: SQLiteStatement, at column: Int) -> ItemFlags {
        ItemFlags(rawValue: UInt8(truncatingIfNeeded: row.int64(at: column)))
    }
}

@available(*, unavailable)
extension DeliveryStore: Sendable {}
