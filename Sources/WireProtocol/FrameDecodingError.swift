/// Why a byte stream is not a valid sequence of frames.
public enum FrameDecodingError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// The length prefix declares more than the decoder's maximum frame length.
    case frameTooLarge(declared: UInt32, maximum: UInt32)
    /// The length prefix is 0: there is no type byte.
    case emptyFrame
    /// The type byte names no frame of this protocol version.
    case unknownFrameType(UInt8)
    /// The body does not have the shape its type requires; `reason` names the field.
    case malformed(type: UInt8, reason: String)

    public var description: String {
        switch self {
        case .frameTooLarge(let declared, let maximum):
            return "frame length \(declared) exceeds the maximum of \(maximum) bytes"
        case .emptyFrame:
            return "frame length is 0: a frame needs at least its type byte"
        case .unknownFrameType(let type):
            return "unknown frame type 0x\(hexByte(type))"
        case .malformed(let type, let reason):
            return "malformed \(FrameType.name(ofRawValue: type)) frame: \(reason)"
        }
    }

    /// The code of the GOAWAY frame that ends a link because of this error.
    public var goAwayCode: GoAwayCode {
        switch self {
        case .frameTooLarge: return .frameTooLarge
        case .emptyFrame, .malformed: return .malformedFrame
        case .unknownFrameType: return .unknownFrameType
        }
    }
}
