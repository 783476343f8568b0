extension DeliveryStore {
    /// The schema of `phone.db` and `watch.db`, version by version.
    ///
    /// - `cursor`: one row per channel that has seen traffic; a missing row reads as zeros.
    /// - `outbox`: accepted items not yet acknowledged, keyed by channel and sequence number.
    /// - `inbox`: received items under the receiver's own `seq`, delivered or waiting; the
    ///   partial index keeps the waiting ones in order.
    /// - `kv`: single values (the contexts, the complication budget, the reserved `seq`).
    /// - `file_incoming` (version 2): files being received, by the sender's `seq` on the file
    ///   channel, with their header and how many bytes of the partial file are synced. A file
    ///   being sent is an `outbox` row of channel 3 whose payload is its header; a received one
    ///   an `inbox` row of channel 3.
    /// - `finished` (version 3): the app's userInfo and file transfers that finished while it
    ///   was not running, until the app is told at its next launch: the outbound item (payload,
    ///   flags), the error if it failed, under a number of the receiver's `seq` counter, which
    ///   the app acknowledges.
    ///
    /// The tables keep their rowid: payloads reach 64 KiB (contexts 256 KiB), and a
    /// `WITHOUT ROWID` b-tree moves a row of more than about 1 KiB to overflow pages, which
    /// made a 1 KiB enqueue three times slower. `transfer_id` has no index: nothing looks an
    /// item up by it (the session keeps the outbox in memory), and an index on random UUIDs
    /// dirties a page per insert, which made an enqueue three to four times slower.
    public static let schema = StoreSchema(
        applicationID: applicationID,
        migrations: [
            Migration(
                version: 1,
                sql: """
                    CREATE TABLE cursor (
                        channel INTEGER PRIMARY KEY,
                        last_assigned INTEGER NOT NULL DEFAULT 0,
                        last_acknowledged INTEGER NOT NULL DEFAULT 0,
                        last_received INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE TABLE outbox (
                        channel INTEGER NOT NULL,
                        seq INTEGER NOT NULL,
                        transfer_id TEXT NOT NULL,
                        payload BLOB NOT NULL,
                        flags INTEGER NOT NULL,
                        created_at REAL NOT NULL,
                        PRIMARY KEY (channel, seq)
                    );
                    CREATE TABLE inbox (
                        seq INTEGER PRIMARY KEY,
                        channel INTEGER NOT NULL,
                        channel_seq INTEGER NOT NULL,
                        payload BLOB NOT NULL,
                        flags INTEGER NOT NULL,
                        received_at REAL NOT NULL,
                        delivered INTEGER NOT NULL DEFAULT 0
                    );
                    CREATE INDEX inbox_undelivered ON inbox (seq) WHERE delivered = 0;
                    CREATE TABLE kv (
                        key TEXT PRIMARY KEY,
                        value BLOB
                    );
                    """),
            Migration(
                version: 2,
                sql: """
                    CREATE TABLE file_incoming (
                        seq INTEGER PRIMARY KEY,
                        transfer_id TEXT NOT NULL,
                        header BLOB NOT NULL,
                        committed_offset INTEGER NOT NULL DEFAULT 0,
                        received_at REAL NOT NULL
                    );
                    """),
            Migration(
                version: 3,
                sql: """
                    CREATE TABLE finished (
                        seq INTEGER PRIMARY KEY,
                        channel INTEGER NOT NULL,
                        transfer_id TEXT NOT NULL,
                        payload BLOB NOT NULL,
                        flags INTEGER NOT NULL,
                        error_code INTEGER,
                        error_message TEXT,
                        finished_at REAL NOT NULL
                    );
                    """),
        ])

    /// The `kv` keys.
    enum Key {
        static let applicationContext = "applicationContext"
        static let receivedApplicationContext = "receivedApplicationContext"
        static let complicationDay = "complicationDay"
        static let complicationTransfersUsed = "complicationTransfersUsed"
        static let reservedSeq = "reservedSeq"
    }
}
