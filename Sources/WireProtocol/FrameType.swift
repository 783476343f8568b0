/// The type byte that follows a frame's length.
public enum FrameType: UInt8, Sendable, Hashable, CaseIterable {
    case hello = 0x01
    case auth = 0x02
    case ready = 0x03
    case state = 0x10
    case message = 0x20
    case reply = 0x21
    case messageError = 0x22
    case messageAck = 0x23
    case ping = 0x30
    case pong = 0x31
    case goAway = 0x3F
    case item = 0x40
    case ack = 0x41
    case fileChunk = 0x42
    case fileChunkAck = 0x43
    case fileCancel = 0x44
    case itemError = 0x45
    case clockSet = 0x50
    case clockAck = 0x51

    /// The protocol name of the type, e.g. `"MESSAGE_ERROR"`.
    public var name: String {
        switch self {
        case .hello: return "HELLO"
        case .auth: return "AUTH"
        case .ready: return "READY"
        case .state: return "STATE"
        case .message: return "MESSAGE"
        case .reply: return "REPLY"
        case .messageError: return "MESSAGE_ERROR"
        case .messageAck: return "MESSAGE_ACK"
        case .ping: return "PING"
        case .pong: return "PONG"
        case .goAway: return "GOAWAY"
        case .item: return "ITEM"
        case .ack: return "ACK"
        case .fileChunk: return "FILE_CHUNK"
        case .fileChunkAck: return "FILE_CHUNK_ACK"
        case .fileCancel: return "FILE_CANCEL"
        case .itemError: return "ITEM_ERROR"
        case .clockSet: return "CLOCK_SET"
        case .clockAck: return "CLOCK_ACK"
        }
    }

    /// Whether a frame of this type may arrive before the handshake completes
    /// (HELLO, AUTH, READY and GOAWAY).
    public var isAllowedBeforeHandshake: Bool {
        switch self {
        case .hello, .auth, .ready, .goAway: return true
        case .state, .message, .reply, .messageError, .messageAck, .ping, .pong, .item, .ack,
            .fileChunk, .fileChunkAck, .fileCancel, .itemError, .clockSet, .clockAck:
            return false
        }
    }

    /// The name of a raw type byte: the protocol name, or `"0xNN"` for an unknown one.
    static func name(ofRawValue rawValue: UInt8) -> String {
        FrameType(rawValue: rawValue)?.name ?? "0x" + hexByte(rawValue)
    }
}

func hexByte(_ byte: UInt8) -> String {
    let digits = Array("0123456789ABCDEF")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
}
