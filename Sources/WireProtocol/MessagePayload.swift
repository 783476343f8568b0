/// The content of a MESSAGE or REPLY frame.
public enum MessagePayload: Sendable, Hashable {
    /// A message dictionary, as binary property list bytes (see ``PropertyListCodec``).
    case dictionary([UInt8])
    /// Opaque message data (`sendMessageData`).
    case data([UInt8])

    /// The payload bytes as they travel.
    public var bytes: [UInt8] {
        switch self {
        case .dictionary(let bytes), .data(let bytes): return bytes
        }
    }

    /// Whether the payload is opaque data rather than a dictionary.
    public var isData: Bool {
        if case .data = self { return true }
        return false
    }
}
