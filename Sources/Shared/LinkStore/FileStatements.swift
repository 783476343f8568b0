import CSQLite

/// The statements of the file channel's receiving side (`file_incoming`), prepared once when
/// a ``DeliveryStore`` opens.
final class FileStatements {
    let insertIncoming: SQLiteStatement
    let updateIncomingOffset: SQLiteStatement
    let deleteIncoming: SQLiteStatement
    let selectIncoming: SQLiteStatement

    init(_ database: SQLiteDatabase) throws(SQLiteError) {
        insertIncoming = try database.cachedStatement(
            """
            INSERT OR REPLACE INTO file_incoming (seq, transfer_id, header, committed_offset, received_at)
            VALUES (?1, ?2, ?3, ?4, ?5)
            """)
        updateIncomingOffset = try database.cachedStatement("UPDATE file_incoming SET committed_offset = ?2 WHERE seq = ?1")
        deleteIncoming = try database.cachedStatement("DELETE FROM file_incoming WHERE seq = ?1")
        selectIncoming = try database.cachedStatement(
            """
            SELECT seq, transfer_id, header, committed_offset, received_at FROM file_incoming ORDER BY seq
            """)
    }

    /// Applies one of the file operations; other operations are not this type's.
    func apply(_ operation: DurableOperation, path: String) throws(SQLiteError) {
        switch operation {
        case .beginIncomingFile(let record):
            let insert = insertIncoming
            try insert.bind(try Self.storable(record.seq, "seq", path: path), at: 1)
            try insert.bind(record.transferId, at: 2)
            try insert.bind(record.header, at: 3)
            try insert.bind(try Self.storable(record.committedOffset, "committed offset", path: path), at: 4)
            try insert.bind(record.receivedAt, at: 5)
            try insert.run()
        case .setIncomingFileOffset(let seq, let offset):
            let update = updateIncomingOffset
            try update.bind(try Self.storable(seq, "seq", path: path), at: 1)
            try update.bind(try Self.storable(offset, "committed offset", path: path), at: 2)
            try update.run()
        case .removeIncomingFile(let seq):
            let delete = deleteIncoming
            try delete.bind(try Self.storable(seq, "seq", path: path), at: 1)
            try delete.run()
        default:
            preconditionFailure("\(operation) is not a file operation")
        }
    }

    /// The files being received, in `seq` order.
    func loadIncoming() throws(SQLiteError) -> [IncomingFileRecord] {
        let select = selectIncoming
        defer { select.reset() }
        var records: [IncomingFileRecord] = []
        while try select.step() {
            records.append(
                IncomingFileRecord(
                    seq: UInt64(bitPattern: select.int64(at: 0)),
                    transferId: select.string(at: 1),
                    header: select.blob(at: 2),
                    committedOffset: UInt64(bitPattern: select.int64(at: 3)),
                    receivedAt: select.double(at: 4)))
        }
        return records
    }

    private static func storable(_ value: UInt64, _ name: String, path: String) throws(SQLiteError) -> Int64 {
        guard let stored = Int64(exactly: value) else {
            throw .misuse(
                "\(name) \(value) is above the largest integer SQLite stores (\(Int64.max))",
                operation: "apply", sql: nil, path: path)
        }
        return stored
    }
}
