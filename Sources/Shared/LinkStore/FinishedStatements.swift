import CSQLite

/// The statements of the app's transfers that finished while it was not running
/// (`finished`), prepared once when a ``DeliveryStore`` opens.
final class FinishedStatements {
    let insertFinished: SQLiteStatement
    let deleteFinishedUpTo: SQLiteStatement
    let selectFinished: SQLiteStatement

    init(_ database: SQLiteDatabase) throws(SQLiteError) {
        insertFinished = try database.cachedStatement(
            """
            INSERT OR REPLACE INTO finished (seq, channel, transfer_id, payload, flags, error_code, error_message, finished_at)
            VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
            """)
        deleteFinishedUpTo = try database.cachedStatement("DELETE FROM finished WHERE seq <= ?1")
        selectFinished = try database.cachedStatement(
            """
            SELECT seq, channel, transfer_id, payload, flags, error_code, error_message, finished_at FROM finished ORDER BY seq
            """)
    }

    /// Applies one of the operations on finished transfers; other operations are not this type's.
    func apply(_ operation: DurableOperation, path: String) throws(SQLiteError) {
        switch operation {
        case .recordFinished(let record):
            let insert = insertFinished
            try insert.bind(try Self.storable(record.seq, path: path), at: 1)
            try insert.bind(Int64(record.channel.rawValue), at: 2)
            try insert.bind(record.transferId, at: 3)
            try insert.bind(record.payload, at: 4)
            try insert.bind(Int64(record.flags.rawValue), at: 5)
            if let code = record.errorCode { try insert.bind(code, at: 6) } else { try insert.bindNull(at: 6) }
            if let message = record.errorMessage { try insert.bind(message, at: 7) } else { try insert.bindNull(at: 7) }
            try insert.bind(record.finishedAt, at: 8)
            try insert.run()
        case .removeFinished(let upTo):
            let delete = deleteFinishedUpTo
            try delete.bind(Int64(clamping: upTo), at: 1)
            try delete.run()
        default:
            preconditionFailure("\(operation) is not an operation on finished transfers")
        }
    }

    /// The finished transfers, in `seq` order.
    func load(path: String) throws(SQLiteError) -> [FinishedTransfer] {
        let select = selectFinished
        defer { select.reset() }
        var records: [FinishedTransfer] = []
        while try select.step() {
            let raw = select.int64(at: 1)
            guard let byte = UInt8(exactly: raw), let channel = QueueChannel(rawValue: byte), channel != .applicationContext else {
                throw SQLiteError(
                    extendedCode: SQLITE_CORRUPT, message: "a row of finished names channel \(raw), which has no transfers",
                    operation: "load", sql: select.sql, path: path)
            }
            records.append(
                FinishedTransfer(
                    seq: UInt64(bitPattern: select.int64(at: 0)), channel: channel, transferId: select.string(at: 2),
                    payload: select.blob(at: 3), flags: ItemFlags(rawValue: UInt8(truncatingIfNeeded: select.int64(at: 4))),
                    errorCode: select.isNull(at: 5) ? nil : Int(select.int64(at: 5)),
                    errorMessage: select.isNull(at: 6) ? nil : select.string(at: 6),
                    finishedAt: select.double(at: 7)))
        }
        return records
    }

    private static func storable(_ value: UInt64, path: String) throws(SQLiteError) -> Int64 {
        guard let stored = Int64(exactly: value) else {
            throw .misuse(
                "seq \(value) is above the largest integer SQLite stores (\(Int64.max))", operation: "apply", sql: nil, path: path)
        }
        return stored
    }
}
