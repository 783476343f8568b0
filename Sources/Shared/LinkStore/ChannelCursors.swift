/// The cursor of every ``QueueChannel``, held in memory by ``DeliveryStore`` so that the
/// operations of a turn raise them without a statement each; the changed ones are written
/// once, at commit. Every column only rises.
struct ChannelCursors: Equatable {
    private static let slots = Int(QueueChannel.allCases.map(\.rawValue).max() ?? 0) + 1
    private var storage = [ChannelCursor](repeating: ChannelCursor(), count: slots)

    subscript(channel: QueueChannel) -> ChannelCursor {
        get { storage[Int(channel.rawValue)] }
        set { storage[Int(channel.rawValue)] = newValue }
    }

    @inline(__always)
    mutating func raiseLastAssigned(_ channel: QueueChannel, to seq: UInt64) {
        let slot = Int(channel.rawValue)
        if storage[slot].lastAssigned < seq { storage[slot].lastAssigned = seq }
    }

    @inline(__always)
    mutating func raiseLastAcknowledged(_ channel: QueueChannel, to seq: UInt64) {
        let slot = Int(channel.rawValue)
        if storage[slot].lastAcknowledged < seq { storage[slot].lastAcknowledged = seq }
    }

    @inline(__always)
    mutating func raiseLastReceived(_ channel: QueueChannel, to seq: UInt64) {
        let slot = Int(channel.rawValue)
        if storage[slot].lastReceived < seq { storage[slot].lastReceived = seq }
    }

    /// Every channel's cursor, zeros where the channel carried nothing yet.
    var all: [QueueChannel: ChannelCursor] {
        Dictionary(uniqueKeysWithValues: QueueChannel.allCases.map { ($0, self[$0]) })
    }
}
