/// A queued channel on the link: items carry a per-channel sequence number and are
/// acknowledged cumulatively once the receiver has committed them.
public enum QueueChannel: UInt8, Sendable, CaseIterable, Comparable {
    /// `transferUserInfo` and `transferCurrentComplicationUserInfo`, in one FIFO.
    case userInfo = 1
    /// `updateApplicationContext`: only the newest item matters.
    case applicationContext = 2
    /// `transferFile`: each item is a file's header; its bytes follow in FILE_CHUNK frames,
    /// and the receiver acknowledges the item once the whole file is committed and verified.
    case file = 3

    public static func < (lhs: QueueChannel, rhs: QueueChannel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Bits of an item's flags byte.
public struct ItemFlags: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The item is the current complication userInfo (`isCurrentComplicationInfo`).
    public static let currentComplication = ItemFlags(rawValue: 1 << 0)
    /// Local only, never on the wire: the received item is for a framework on this side
    /// (a PowerAuth packet), not for the app; `received.list` leaves it out.
    public static let system = ItemFlags(rawValue: 1 << 7)
    /// Local only, never on the wire: the outbound item was accepted while an app process was
    /// attached: its `didFinish` is the app's, told at its next launch if it is not running then.
    public static let madeByApp = ItemFlags(rawValue: 1 << 6)
    /// The bits that stay on this side: an ITEM frame carries none of them.
    public static let localOnly: ItemFlags = [.system, .madeByApp]
}

/// A transfer of the app's (userInfo or file) that finished while the app was not running:
/// its `didFinish` is told at the app's next launch ("Will be called on next launch if the
/// sender was not running when the user info finished", `WCSession.h`).
public struct FinishedTransfer: Hashable, Sendable {
    /// A number of the receiver's `seq` counter: the app acknowledges it as it does a received
    /// item, once its delegate returned.
    public var seq: UInt64
    /// `.userInfo` or `.file`.
    public var channel: QueueChannel
    public var transferId: String
    /// The outbound item's payload: the userInfo dictionary, or the file's header.
    public var payload: [UInt8]
    /// The outbound item's flags (`currentComplication`).
    public var flags: ItemFlags
    /// The WatchConnectivity error it failed with (code and WatchLink's explanation); nil when
    /// it succeeded.
    public var errorCode: Int?
    public var errorMessage: String?
    /// Wall-clock seconds since 1970 when it finished.
    public var finishedAt: Double

    public init(
        seq: UInt64, channel: QueueChannel, transferId: String, payload: [UInt8], flags: ItemFlags, errorCode: Int?,
        errorMessage: String?, finishedAt: Double
    ) {
        self.seq = seq
        self.channel = channel
        self.transferId = transferId
        self.payload = payload
        self.flags = flags
        self.errorCode = errorCode
        self.errorMessage = errorMessage
        self.finishedAt = finishedAt
    }
}

/// An item this side accepted for a queued channel and has not yet seen acknowledged.
public struct OutboundItem: Hashable, Sendable {
    public var channel: QueueChannel
    public var seq: UInt64
    public var transferId: String
    /// The binary property list of the dictionary.
    public var payload: [UInt8]
    public var flags: ItemFlags
    /// Wall-clock seconds since 1970 when it was accepted.
    public var createdAt: Double

    public init(channel: QueueChannel, seq: UInt64, transferId: String, payload: [UInt8], flags: ItemFlags, createdAt: Double) {
        self.channel = channel
        self.seq = seq
        self.transferId = transferId
        self.payload = payload
        self.flags = flags
        self.createdAt = createdAt
    }
}

/// An item this side received and committed, delivered to the app or waiting to be.
public struct InboxItem: Hashable, Sendable {
    /// The receiver's own sequence number, shared with immediate messages in `received.list`.
    public var seq: UInt64
    public var channel: QueueChannel
    /// The sender's sequence number on the channel.
    public var channelSeq: UInt64
    public var payload: [UInt8]
    public var flags: ItemFlags
    public var receivedAt: Double
    public var delivered: Bool

    public init(
        seq: UInt64, channel: QueueChannel, channelSeq: UInt64, payload: [UInt8], flags: ItemFlags,
        receivedAt: Double, delivered: Bool
    ) {
        self.seq = seq
        self.channel = channel
        self.channelSeq = channelSeq
        self.payload = payload
        self.flags = flags
        self.receivedAt = receivedAt
        self.delivered = delivered
    }
}

/// Sequence bookkeeping of one channel, both directions.
public struct ChannelCursor: Hashable, Sendable {
    /// The highest sequence number this side assigned to an outbound item.
    public var lastAssigned: UInt64 = 0
    /// The highest sequence number the peer acknowledged.
    public var lastAcknowledged: UInt64 = 0
    /// The highest sequence number this side received and committed.
    public var lastReceived: UInt64 = 0

    public init(lastAssigned: UInt64 = 0, lastAcknowledged: UInt64 = 0, lastReceived: UInt64 = 0) {
        self.lastAssigned = lastAssigned
        self.lastAcknowledged = lastAcknowledged
        self.lastReceived = lastReceived
    }
}

/// Everything the session keeps across restarts, as loaded from the store at start.
public struct DurableState: Hashable, Sendable {
    public var cursors: [QueueChannel: ChannelCursor] = [:]
    /// Unacknowledged outbound items, in sequence order per channel.
    public var outbox: [OutboundItem] = []
    /// Received items not yet delivered to the app, in `seq` order.
    public var undelivered: [InboxItem] = []
    /// This side's `applicationContext` (the newest it set), encoded.
    public var applicationContext: [UInt8]?
    /// The newest context received from the peer (`receivedApplicationContext`), encoded.
    public var receivedApplicationContext: [UInt8]?
    /// The complication budget: the day (days since 1970, UTC) and how many were sent that day.
    public var complicationDay: Int64 = 0
    public var complicationTransfersUsed: Int = 0
    /// The receiver's `seq` counter may start after this value (sequence numbers are reserved
    /// in blocks so that immediate messages, which are not stored, never reuse one).
    public var reservedSeq: UInt64 = 0
    /// Files being received, in channel `seq` order.
    public var incomingFiles: [IncomingFileRecord] = []
    /// The app's transfers that finished while it was not running, in `seq` order.
    public var finished: [FinishedTransfer] = []

    public init() {}
}

/// A durable write the runtime applies to the store within the current loop turn's
/// transaction. Responses and frames that depend on it are held until that commit.
public enum DurableOperation: Hashable, Sendable {
    /// Insert an outbound item and raise the channel's `lastAssigned` to its seq.
    case enqueue(OutboundItem)
    /// The peer acknowledged everything up to `seq`: delete those outbound items.
    case acknowledge(QueueChannel, upTo: UInt64)
    /// Delete an outbound item (cancelled before it was sent).
    case removeOutbound(QueueChannel, seq: UInt64)
    /// Change an outbound item's flags (a newer complication item re-tags the older one).
    case setFlags(QueueChannel, seq: UInt64, ItemFlags)
    /// Renumber the outbound items with `seq >= from` one higher and raise `lastAssigned` to
    /// `lastAssigned`: room for an item that goes ahead of them (the current complication
    /// userInfo). Only for items never sent: the receiver knows no number above `from - 1`.
    case shiftOutbound(QueueChannel, from: UInt64, lastAssigned: UInt64)
    /// Insert a received item and raise the channel's `lastReceived` to its channelSeq.
    case receive(InboxItem)
    /// Raise `lastReceived` without storing an item (a context equal to the last one).
    case setLastReceived(QueueChannel, UInt64)
    /// Raise `lastAssigned` (the peer knows of later sequence numbers than this side).
    case setLastAssigned(QueueChannel, UInt64)
    /// The item was delivered to the app.
    case markDelivered(seq: UInt64)
    /// Forget an undelivered item (a newer received context replaces it).
    case removeInbox(seq: UInt64)
    case setApplicationContext([UInt8])
    case setReceivedApplicationContext([UInt8])
    case setComplicationBudget(day: Int64, used: Int)
    case reserveSeq(upTo: UInt64)
    /// Start receiving a file: its header, nothing committed yet.
    case beginIncomingFile(IncomingFileRecord)
    /// The first `committedOffset` bytes of the incoming file `seq` are synced to its
    /// partial file (they may also go back to 0, after a checksum mismatch).
    case setIncomingFileOffset(seq: UInt64, committedOffset: UInt64)
    /// Forget the incoming file `seq` (received whole, or cancelled by its sender).
    case removeIncomingFile(seq: UInt64)
    /// Keep a transfer of the app's that finished while it was not running.
    case recordFinished(FinishedTransfer)
    /// The app was told of the finished transfers up to `seq` (or they were dropped).
    case removeFinished(upTo: UInt64)
}
