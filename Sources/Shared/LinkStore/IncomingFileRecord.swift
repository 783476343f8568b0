/// A file this side is receiving on the file channel, as the store keeps it between its
/// header and its last byte.
public struct IncomingFileRecord: Hashable, Sendable {
    /// The sender's sequence number of the file on the file channel.
    public var seq: UInt64
    public var transferId: String
    /// The file's header as it came in the ITEM (size, SHA-256, name, metadata).
    public var header: [UInt8]
    /// How many leading bytes of the partial file are synced to disk.
    public var committedOffset: UInt64
    /// Wall-clock seconds since 1970 when the header arrived.
    public var receivedAt: Double

    public init(seq: UInt64, transferId: String, header: [UInt8], committedOffset: UInt64, receivedAt: Double) {
        self.seq = seq
        self.transferId = transferId
        self.header = header
        self.committedOffset = committedOffset
        self.receivedAt = receivedAt
    }
}
