/// The statements of a ``DeliveryStore``, each prepared once when the store opens and kept
/// for the life of the connection.
final class DeliveryStatements {
    typealias Key = DeliveryStore.Key

    let begin: SQLiteStatement
    let commit: SQLiteStatement
    let rollback: SQLiteStatement

    let insertOutbox: SQLiteStatement
    let deleteOutboxUpTo: SQLiteStatement
    let deleteOutbox: SQLiteStatement
    let updateOutboxFlags: SQLiteStatement
    /// Two steps, so that no row ever takes a number another row still has (the primary key).
    let shiftOutboxAway: SQLiteStatement
    let shiftOutboxBack: SQLiteStatement
    let insertInbox: SQLiteStatement
    let markDelivered: SQLiteStatement
    let deleteInbox: SQLiteStatement

    let writeCursor: SQLiteStatement

    let setApplicationContext: SQLiteStatement
    let setReceivedApplicationContext: SQLiteStatement
    let setComplicationBudget: SQLiteStatement
    let raiseReservedSeq: SQLiteStatement

    let selectCursors: SQLiteStatement
    let selectOutbox: SQLiteStatement
    let selectUndelivered: SQLiteStatement
    let selectValues: SQLiteStatement
    let selectNewestInboxSeq: SQLiteStatement
    let selectDelivered: SQLiteStatement
    let keepNewestInboxSeq: SQLiteStatement
    let pruneDelivered: SQLiteStatement

    init(_ database: SQLiteDatabase) throws(SQLiteError) {
        func statement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
            try database.cachedStatement(sql)
        }
        /// `?1` is the value.
        func set(_ key: String) throws(SQLiteError) -> SQLiteStatement {
            try statement("INSERT OR REPLACE INTO kv (key, value) VALUES ('\(key)', ?1)")
        }

        begin = try statement("BEGIN IMMEDIATE")
        commit = try statement("COMMIT")
        rollback = try statement("ROLLBACK")

        insertOutbox = try statement(
            """
            INSERT INTO outbox (channel, seq, transfer_id, payload, flags, created_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6)
            """)
        deleteOutboxUpTo = try statement("DELETE FROM outbox WHERE channel = ?1 AND seq <= ?2")
        deleteOutbox = try statement("DELETE FROM outbox WHERE channel = ?1 AND seq = ?2")
        updateOutboxFlags = try statement("UPDATE outbox SET flags = ?3 WHERE channel = ?1 AND seq = ?2")
        shiftOutboxAway = try statement("UPDATE outbox SET seq = -(seq + 1) WHERE channel = ?1 AND seq >= ?2")
        shiftOutboxBack = try statement("UPDATE outbox SET seq = -seq WHERE channel = ?1 AND seq < 0")
        insertInbox = try statement(
            """
            INSERT INTO inbox (seq, channel, channel_seq, payload, flags, received_at, delivered)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
            """)
        markDelivered = try statement("UPDATE inbox SET delivered = 1 WHERE seq = ?1")
        deleteInbox = try statement("DELETE FROM inbox WHERE seq = ?1")

        writeCursor = try statement(
            """
            INSERT INTO cursor (channel, last_assigned, last_acknowledged, last_received) VALUES (?1, ?2, ?3, ?4)
            ON CONFLICT (channel) DO UPDATE SET
                last_assigned = max(last_assigned, excluded.last_assigned),
                last_acknowledged = max(last_acknowledged, excluded.last_acknowledged),
                last_received = max(last_received, excluded.last_received)
            """)

        setApplicationContext = try set(Key.applicationContext)
        setReceivedApplicationContext = try set(Key.receivedApplicationContext)
        setComplicationBudget = try statement(
            """
            INSERT OR REPLACE INTO kv (key, value)
            VALUES ('\(Key.complicationDay)', ?1), ('\(Key.complicationTransfersUsed)', ?2)
            """)
        raiseReservedSeq = try statement(
            """
            INSERT INTO kv (key, value) VALUES ('\(Key.reservedSeq)', ?1)
            ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)
            """)

        selectCursors = try statement("SELECT channel, last_assigned, last_acknowledged, last_received FROM cursor")
        selectOutbox = try statement(
            "SELECT channel, seq, transfer_id, payload, flags, created_at FROM outbox ORDER BY channel, seq")
        selectUndelivered = try statement(
            """
            SELECT seq, channel, channel_seq, payload, flags, received_at, delivered FROM inbox
            WHERE delivered = 0 ORDER BY seq
            """)
        selectValues = try statement("SELECT key, value FROM kv")
        selectNewestInboxSeq = try statement("SELECT max(seq) FROM inbox")
        selectDelivered = try statement(
            """
            SELECT seq, channel, channel_seq, payload, flags, received_at, delivered FROM inbox
            WHERE delivered = 1 AND seq > ?1 ORDER BY seq LIMIT ?2
            """)
        keepNewestInboxSeq = try statement(
            """
            INSERT INTO kv (key, value)
            SELECT '\(Key.reservedSeq)', seq FROM inbox WHERE true ORDER BY seq DESC LIMIT 1
            ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)
            """)
        pruneDelivered = try statement(
            """
            DELETE FROM inbox WHERE delivered = 1 AND seq <= (
                SELECT seq FROM inbox WHERE delivered = 1 ORDER BY seq DESC LIMIT 1 OFFSET ?1)
            """)
    }
}
