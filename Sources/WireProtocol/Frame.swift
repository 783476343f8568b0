/// One unit of the link protocol. See `docs/wire-protocol.md` for the bytes of each.
public enum Frame: Sendable, Hashable {
    /// Opens the handshake (type 0x01).
    case hello(Hello)
    /// Proves the pairing key: a ``PairingProof`` of 32 bytes (type 0x02).
    case auth(proof: [UInt8])
    /// The sender verified the peer's AUTH; its side of the handshake is done (type 0x03).
    case ready
    /// The sender's session state (type 0x10).
    case state(SessionState)
    /// An immediate message (type 0x20).
    case message(id: UInt64, wantsReply: Bool, payload: MessagePayload)
    /// The reply to the message `id` (type 0x21).
    case reply(id: UInt64, payload: MessagePayload)
    /// The message `id` failed; `code` is a ``WCErrorCode`` raw value (type 0x22).
    case messageError(id: UInt64, code: UInt16, description: String)
    /// The message `id`, sent without a reply handler, was delivered (type 0x23).
    case messageAck(id: UInt64)
    /// Asks the peer for a PONG with the same value (type 0x30).
    case ping(UInt64)
    /// Answers a PING (type 0x31).
    case pong(UInt64)
    /// The sender ends the link; `code` is a ``GoAwayCode`` raw value (type 0x3F).
    case goAway(code: UInt16, reason: String)
    /// An item of the queued channel `channel` (1 userInfo, 2 applicationContext; never 0),
    /// numbered `seq` by its sender. `flags` bit 0 marks a current complication userInfo; the
    /// other bits are 0. `payload` is a binary property list dictionary, not parsed by the
    /// decoder (type 0x40).
    case item(channel: UInt8, seq: UInt64, flags: UInt8, payload: [UInt8])
    /// The sender has committed every item of `channel` numbered up to `seq` that it received:
    /// a cumulative acknowledgement, and on link up the point to resume from (type 0x41).
    case ack(channel: UInt8, seq: UInt64)
    /// Bytes of the file item `seq` (channel 3) from byte `offset` of the file on; `data` is
    /// never empty (type 0x42).
    case fileChunk(seq: UInt64, offset: UInt64, data: [UInt8])
    /// The receiver of file item `seq` has written its first `receivedOffset` bytes and made
    /// the first `committedOffset` of them durable (type 0x43). ``FileChunkAckFlags/resume``
    /// asks the sender to send from `receivedOffset` on; ``FileChunkAckFlags/rejected`` says
    /// the receiver gave the file up.
    case fileChunkAck(seq: UInt64, flags: FileChunkAckFlags, receivedOffset: UInt64, committedOffset: UInt64)
    /// The sender cancelled file item `seq`: the receiver discards what it has of it (type 0x44).
    case fileCancel(seq: UInt64)
    /// The receiver refuses item `seq` of `channel` for good, with a WCError `code` (7015 when
    /// it has no room): the sender drops the item and reports the error (type 0x45).
    case itemError(channel: UInt8, seq: UInt64, code: UInt16, description: String)
    /// The phone's device clock, for its watch to follow (protocol version 2; type 0x50): round
    /// `round` of the phone's clock, which is ``ClockSetting/isManual`` or the system's, reads
    /// `monotonicMilliseconds` (device time) and `wallMilliseconds` (since 1970).
    case clockSet(ClockSetting)
    /// The watch follows the clock of round `round` and has handled everything that arrived
    /// before it; its nearest device timer is due `nextTimerInMilliseconds` after that clock's
    /// time, nil when none waits (type 0x51).
    case clockAck(round: UInt64, nextTimerInMilliseconds: UInt64?)

    /// The type byte of this frame.
    public var type: FrameType {
        switch self {
        case .hello: return .hello
        case .auth: return .auth
        case .ready: return .ready
        case .state: return .state
        case .message: return .message
        case .reply: return .reply
        case .messageError: return .messageError
        case .messageAck: return .messageAck
        case .ping: return .ping
        case .pong: return .pong
        case .goAway: return .goAway
        case .item: return .item
        case .ack: return .ack
        case .fileChunk: return .fileChunk
        case .fileChunkAck: return .fileChunkAck
        case .fileCancel: return .fileCancel
        case .itemError: return .itemError
        case .clockSet: return .clockSet
        case .clockAck: return .clockAck
        }
    }
}
