import LinkJSON
import LinkStore

/// The emulated server's activation records and MAC tokens in their own SQLite file
/// (`STATE/powerauth-server.db`, `application_id` "WLPS").
public final class ServerStore {
    public static let applicationID: Int32 = 0x574C_5053

    static let schema = StoreSchema(
        name: "WatchLink PowerAuth server", applicationID: applicationID,
        migrations: [
            Migration(
                version: 1,
                sql: """
                    CREATE TABLE server_activations (
                        activation_id TEXT PRIMARY KEY NOT NULL,
                        state INTEGER NOT NULL,
                        fail_count INTEGER NOT NULL,
                        max_fail_count INTEGER NOT NULL,
                        custom_object TEXT,
                        current_version INTEGER NOT NULL,
                        upgrade_version INTEGER NOT NULL,
                        look_ahead INTEGER NOT NULL,
                        counter INTEGER NOT NULL,
                        counter_data BLOB NOT NULL,
                        transport_key BLOB NOT NULL,
                        block_expiration INTEGER
                    ) WITHOUT ROWID;
                    """),
            // Records of version 1 held a transport key and a counter that no real PowerAuth
            // server computes (see docs/powerauth.md); they cannot be carried over.
            Migration(
                version: 2,
                sql: """
                    DELETE FROM server_activations;
                    ALTER TABLE server_activations RENAME COLUMN transport_key TO master_secret;
                    """),
            Migration(
                version: 3,
                sql: """
                    CREATE TABLE server_tokens (
                        token_id TEXT PRIMARY KEY NOT NULL,
                        activation_id TEXT NOT NULL,
                        secret BLOB NOT NULL,
                        signature_type TEXT NOT NULL,
                        created INTEGER NOT NULL
                    ) WITHOUT ROWID;
                    CREATE INDEX server_tokens_by_activation ON server_tokens (activation_id);
                    """),
            // The key exchange: the two public keys of a record; a record imported with its keys
            // only has no master secret, and its five keys in `signature_keys`.
            Migration(
                version: 4,
                sql: """
                    CREATE TABLE server_activations_4 (
                        activation_id TEXT PRIMARY KEY NOT NULL,
                        state INTEGER NOT NULL,
                        fail_count INTEGER NOT NULL,
                        max_fail_count INTEGER NOT NULL,
                        custom_object TEXT,
                        current_version INTEGER NOT NULL,
                        upgrade_version INTEGER NOT NULL,
                        look_ahead INTEGER NOT NULL,
                        counter INTEGER NOT NULL,
                        counter_data BLOB NOT NULL,
                        master_secret BLOB,
                        block_expiration INTEGER,
                        signature_keys BLOB,
                        device_public_key BLOB,
                        server_public_key BLOB,
                        CHECK (master_secret IS NOT NULL OR signature_keys IS NOT NULL)
                    ) WITHOUT ROWID;
                    INSERT INTO server_activations_4 (activation_id, state, fail_count, max_fail_count, custom_object, current_version,
                        upgrade_version, look_ahead, counter, counter_data, master_secret, block_expiration)
                        SELECT activation_id, state, fail_count, max_fail_count, custom_object, current_version, upgrade_version,
                            look_ahead, counter, counter_data, master_secret, block_expiration FROM server_activations;
                    DROP TABLE server_activations;
                    ALTER TABLE server_activations_4 RENAME TO server_activations;
                    """),
        ])

    private let database: SQLiteDatabase

    public init(path: String) throws {
        database = try StoreFile.open(path: path, schema: Self.schema).database
    }

    public func close() { database.close() }

    public func activation(_ activationId: String) throws -> ServerActivation? {
        let statement = try database.cachedStatement(
            "SELECT activation_id, state, fail_count, max_fail_count, custom_object, current_version, upgrade_version, look_ahead, counter, counter_data, master_secret, block_expiration, signature_keys, device_public_key, server_public_key FROM server_activations WHERE activation_id = ?"
        )
        defer { statement.reset() }
        try statement.bind([.text(activationId)])
        return try statement.mapRows(Self.activation).first
    }

    public func activations() throws -> [ServerActivation] {
        let statement = try database.cachedStatement(
            "SELECT activation_id, state, fail_count, max_fail_count, custom_object, current_version, upgrade_version, look_ahead, counter, counter_data, master_secret, block_expiration, signature_keys, device_public_key, server_public_key FROM server_activations ORDER BY activation_id"
        )
        defer { statement.reset() }
        return try statement.mapRows(Self.activation)
    }

    public func save(_ record: ServerActivation) throws {
        let custom: SQLiteValue = record.customObject.map { .text(JSON.serialize(.object($0))) } ?? .null
        try database.run(
            "INSERT OR REPLACE INTO server_activations (activation_id, state, fail_count, max_fail_count, custom_object, current_version, upgrade_version, look_ahead, counter, counter_data, master_secret, block_expiration, signature_keys, device_public_key, server_public_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            .text(record.activationId), .integer(Int64(record.state.rawValue)), .integer(Int64(record.failCount)),
            .integer(Int64(record.maxFailCount)), custom, .integer(Int64(record.currentVersion)),
            .integer(Int64(record.upgradeVersion)), .integer(Int64(record.lookAhead)), .integer(record.counter),
            .blob(record.counterData), record.masterSecret.map { .blob($0) } ?? .null,
            record.blockExpiration.map { .integer($0) } ?? .null,
            record.masterSecret == nil ? .blob(record.keys.concatenated) : .null,
            record.devicePublicKey.map { .blob($0) } ?? .null, record.serverPublicKey.map { .blob($0) } ?? .null)
    }

    public func token(_ tokenId: String) throws -> ServerToken? {
        let statement = try database.cachedStatement("SELECT token_id, activation_id, secret, signature_type, created FROM server_tokens WHERE token_id = ?")
        defer { statement.reset() }
        try statement.bind([.text(tokenId)])
        return try statement.mapRows(Self.token).first
    }

    public func tokens(activationId: String) throws -> [ServerToken] {
        let statement = try database.cachedStatement(
            "SELECT token_id, activation_id, secret, signature_type, created FROM server_tokens WHERE activation_id = ? ORDER BY created, token_id")
        defer { statement.reset() }
        try statement.bind([.text(activationId)])
        return try statement.mapRows(Self.token)
    }

    public func save(_ token: ServerToken) throws {
        try database.run(
            "INSERT OR REPLACE INTO server_tokens (token_id, activation_id, secret, signature_type, created) VALUES (?, ?, ?, ?, ?)",
            .text(token.tokenId), .text(token.activationId), .blob(token.secret), .text(token.signatureType.rawValue),
            .integer(token.created))
    }

    /// False when there was no such token.
    public func removeToken(_ tokenId: String) throws -> Bool {
        try database.run("DELETE FROM server_tokens WHERE token_id = ?", .text(tokenId))
        return database.changes > 0
    }

    private static func token(_ row: SQLiteStatement) throws -> ServerToken {
        let secret = row.blob(at: 2)
        guard secret.count == ServerToken.secretLength, let type = SignatureFactor(rawValue: row.string(at: 3)) else {
            throw ServerError.invalidValue("the server token '\(row.string(at: 0))' is damaged: its secret or signature type is not valid")
        }
        return ServerToken(
            tokenId: row.string(at: 0), activationId: row.string(at: 1), secret: secret, signatureType: type,
            created: row.int64(at: 4))
    }

    private static func activation(_ row: SQLiteStatement) throws -> ServerActivation {
        let masterSecret = row.isNull(at: 10) ? nil : row.blob(at: 10), counterData = row.blob(at: 9)
        let keys: SignatureKeys?
        if let masterSecret {
            keys = masterSecret.count == SignatureKeys.byteCount ? SignatureKeys(masterSecret: masterSecret) : nil
        } else {
            keys = SignatureKeys(concatenated: row.blob(at: 12))
        }
        guard let keys, counterData.count == HashCounter.byteCount else {
            throw ServerError.invalidValue("the server record '\(row.string(at: 0))' is damaged: a key or its counter data has the wrong length")
        }
        var custom: JSONObject?
        if !row.isNull(at: 4), case .object(let object)? = try? JSON.parse(row.string(at: 4)) { custom = object }
        return ServerActivation(
            activationId: row.string(at: 0),
            state: ServerActivationState(rawValue: UInt8(clamping: row.int(at: 1))) ?? .removed,
            keys: keys, masterSecret: masterSecret, counterData: counterData,
            devicePublicKey: row.isNull(at: 13) ? nil : row.blob(at: 13), serverPublicKey: row.isNull(at: 14) ? nil : row.blob(at: 14),
            failCount: row.int(at: 2), maxFailCount: row.int(at: 3), customObject: custom,
            currentVersion: row.int(at: 5), upgradeVersion: row.int(at: 6), lookAhead: row.int(at: 7),
            counter: row.int64(at: 8), blockExpiration: row.isNull(at: 11) ? nil : row.int64(at: 11))
    }
}
