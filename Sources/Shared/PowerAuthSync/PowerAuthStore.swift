import LinkStore
import PowerAuthServer

/// A token kept by a daemon: on the phone the ones it created, on the watch the ones it got.
public struct StoredToken: Hashable, Sendable {
    public var instanceId: String
    public var data: PowerAuthTokenData
}

/// The PowerAuth state of one daemon in its own SQLite file (`STATE/powerauth.db`, mode 0600):
/// the activation of each instance and the tokens with their secrets. Secrets live here only.
public final class PowerAuthStore {
    /// `PRAGMA application_id` of the file: "WLPA".
    public static let applicationID: Int32 = 0x574C_5041

    static let schema = StoreSchema(
        name: "WatchLink PowerAuth", applicationID: applicationID,
        migrations: [
            Migration(
                version: 1,
                sql: """
                    CREATE TABLE activations (
                        instance_id TEXT PRIMARY KEY NOT NULL,
                        activation_id TEXT NOT NULL
                    ) WITHOUT ROWID;
                    CREATE TABLE tokens (
                        instance_id TEXT NOT NULL,
                        name TEXT NOT NULL,
                        token_id TEXT NOT NULL,
                        activation_id TEXT,
                        secret BLOB NOT NULL,
                        PRIMARY KEY (instance_id, name)
                    ) WITHOUT ROWID;
                    """),
            Migration(
                version: 2,
                sql: """
                    CREATE TABLE client_counters (
                        instance_id TEXT PRIMARY KEY NOT NULL,
                        transport_key BLOB NOT NULL,
                        counter_data BLOB NOT NULL,
                        counter INTEGER NOT NULL,
                        history BLOB NOT NULL
                    ) WITHOUT ROWID;
                    """),
            // Version 2 kept a transport key and a counter that no real PowerAuth SDK computes
            // (docs/powerauth.md); the emulated server drops those records too.
            Migration(
                version: 3,
                sql: """
                    DROP TABLE client_counters;
                    CREATE TABLE client_counters (
                        instance_id TEXT PRIMARY KEY NOT NULL,
                        master_secret BLOB NOT NULL,
                        counter_data BLOB NOT NULL,
                        counter_byte INTEGER
                    ) WITHOUT ROWID;
                    ALTER TABLE tokens ADD COLUMN factors INTEGER NOT NULL DEFAULT 0;
                    """),
            // The key exchange: the public keys from which the SDK computes the fingerprint.
            Migration(
                version: 4,
                sql: """
                    ALTER TABLE client_counters ADD COLUMN device_public_key BLOB;
                    ALTER TABLE client_counters ADD COLUMN server_public_key BLOB;
                    """),
        ])

    private let database: SQLiteDatabase
    public let path: String
    /// Told of every write that failed (its path and error) before the error is thrown: the
    /// feature reports it as a `state.writeFailed` event (``FeatureContext/stateWriteFailed``).
    public var writeFailed: (String, Error) -> Void = { _, _ in }

    /// Opens (or creates) the store at `path`.
    public init(path: String) throws {
        self.path = path
        database = try StoreFile.open(path: path, schema: Self.schema).database
    }

    /// Runs `body`, a write, telling ``writeFailed`` when it fails: once, by the `writing` around
    /// a whole transaction, not by each statement inside it.
    private func writing<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch {
            if !database.inTransaction { writeFailed(path, error) }
            throw error
        }
    }

    /// Runs one statement that writes (SQLite commits it, unless a transaction is open).
    private func write(_ sql: String, _ values: SQLiteValue...) throws {
        try writing { try database.run(sql, values) }
    }

    public func close() { database.close() }

    public func activationId(instanceId: String) throws -> String? {
        try database.scalar("SELECT activation_id FROM activations WHERE instance_id = ?", .text(instanceId))?.textValue
    }

    /// Sets (or with nil removes) the activation of an instance; when `removingTokens`, all of
    /// the instance's tokens go in the same transaction. Returns how many tokens were removed.
    @discardableResult
    public func setActivationId(_ activationId: String?, instanceId: String, removingTokens: Bool) throws -> Int {
        try writing {
            try database.transaction {
                if let activationId {
                    try write(
                        "INSERT INTO activations (instance_id, activation_id) VALUES (?, ?) ON CONFLICT(instance_id) DO UPDATE SET activation_id = excluded.activation_id",
                        .text(instanceId), .text(activationId))
                } else {
                    try write("DELETE FROM activations WHERE instance_id = ?", .text(instanceId))
                }
                guard removingTokens else { return 0 }
                try write("DELETE FROM tokens WHERE instance_id = ?", .text(instanceId))
                return database.changes
            }
        }
    }

    /// The client side of an instance's activation: master secret, hash-based counter, public keys.
    public func clientCounter(instanceId: String) throws -> ClientCounter? {
        let statement = try database.cachedStatement(
            "SELECT master_secret, counter_data, counter_byte, device_public_key, server_public_key FROM client_counters WHERE instance_id = ?")
        defer { statement.reset() }
        try statement.bind([.text(instanceId)])
        return try statement.mapRows { row in
            let masterSecret = row.blob(at: 0), counterData = row.blob(at: 1)
            guard masterSecret.count == SignatureKeys.byteCount, counterData.count == HashCounter.byteCount else {
                throw PowerAuthStoreError(description: "the counter of instance '\(instanceId)' is damaged: a key or its counter data has the wrong length")
            }
            return ClientCounter(
                masterSecret: masterSecret, counterData: counterData,
                counterByte: row.isNull(at: 2) ? nil : UInt8(truncatingIfNeeded: row.int64(at: 2)),
                devicePublicKey: row.isNull(at: 3) ? nil : row.blob(at: 3), serverPublicKey: row.isNull(at: 4) ? nil : row.blob(at: 4))
        }.first
    }

    /// Saves (or with nil removes) the client counter of an instance.
    public func setClientCounter(_ counter: ClientCounter?, instanceId: String) throws {
        guard let counter else {
            try write("DELETE FROM client_counters WHERE instance_id = ?", .text(instanceId))
            return
        }
        try write(
            "INSERT OR REPLACE INTO client_counters (instance_id, master_secret, counter_data, counter_byte, device_public_key, server_public_key) VALUES (?, ?, ?, ?, ?, ?)",
            .text(instanceId), .blob(counter.masterSecret), .blob(counter.counterData),
            counter.counterByte.map { .integer(Int64($0)) } ?? .null,
            counter.devicePublicKey.map { .blob($0) } ?? .null, counter.serverPublicKey.map { .blob($0) } ?? .null)
    }

    public func token(instanceId: String, name: String) throws -> StoredToken? {
        let statement = try database.cachedStatement("SELECT name, token_id, activation_id, secret, factors FROM tokens WHERE instance_id = ? AND name = ?")
        defer { statement.reset() }
        try statement.bind([.text(instanceId), .text(name)])
        return try statement.mapRows { row in Self.token(row, instanceId: instanceId) }.first
    }

    public func tokens(instanceId: String) throws -> [StoredToken] {
        let statement = try database.cachedStatement("SELECT name, token_id, activation_id, secret, factors FROM tokens WHERE instance_id = ? ORDER BY name")
        defer { statement.reset() }
        try statement.bind([.text(instanceId)])
        return try statement.mapRows { row in Self.token(row, instanceId: instanceId) }
    }

    public func saveToken(_ token: StoredToken) throws {
        let data = token.data
        try write(
            "INSERT INTO tokens (instance_id, name, token_id, activation_id, secret, factors) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(instance_id, name) DO UPDATE SET token_id = excluded.token_id, activation_id = excluded.activation_id, secret = excluded.secret, factors = excluded.factors",
            .text(token.instanceId), .text(data.name), .text(data.identifier),
            data.activationId.map { .text($0) } ?? .null, .blob(data.secret),
            .integer(Int64(data.authenticationFactors)))
    }

    /// Removes one token; returns whether it existed.
    @discardableResult
    public func removeToken(instanceId: String, name: String) throws -> Bool {
        try write("DELETE FROM tokens WHERE instance_id = ? AND name = ?", .text(instanceId), .text(name))
        return database.changes > 0
    }

    /// Removes all tokens of an instance; returns how many.
    @discardableResult
    public func removeAllTokens(instanceId: String) throws -> Int {
        try write("DELETE FROM tokens WHERE instance_id = ?", .text(instanceId))
        return database.changes
    }

    private static func token(_ row: SQLiteStatement, instanceId: String) -> StoredToken {
        StoredToken(
            instanceId: instanceId,
            data: PowerAuthTokenData(
                name: row.string(at: 0), identifier: row.string(at: 1),
                activationId: row.isNull(at: 2) ? nil : row.string(at: 2),
                authenticationFactors: row.int(at: 4), secret: row.blob(at: 3)))
    }
}

/// A record of the store that cannot be read.
public struct PowerAuthStoreError: Error, CustomStringConvertible {
    public var description: String
}
