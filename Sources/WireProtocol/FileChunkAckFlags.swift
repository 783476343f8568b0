/// The flags byte of a FILE_CHUNK_ACK frame.
public struct FileChunkAckFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Send from `receivedOffset` on: the answer to the file's ITEM on this link, or a
    /// request to send again from that point (after a checksum mismatch, from 0).
    public static let resume = FileChunkAckFlags(rawValue: 1 << 0)
    /// The receiver gave the file up (its checksum failed again and again): the sender stops
    /// and reports the transfer as failed.
    public static let rejected = FileChunkAckFlags(rawValue: 1 << 1)

    /// Every defined bit.
    public static let all: FileChunkAckFlags = [.resume, .rejected]
}
