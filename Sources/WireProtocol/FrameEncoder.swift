import LinkCollections

/// Writes frames as bytes: a big-endian `UInt32` length (type byte and body), the type byte, the body.
///
/// Strings with a length limit (a device id, an error description, a GOAWAY reason) are cut at
/// the last whole Unicode scalar that fits. Fixed-size fields (the nonce, the proof) and an
/// empty device id are programming errors and stop the process.
public struct FrameEncoder: Sendable {
    /// Appends the bytes of `frame` to `buffer`.
    public static func encode(_ frame: Frame, into buffer: inout [UInt8]) {
        encode(frame, into: &buffer, includingPayload: true)
    }

    /// Appends the bytes of `frame` to `buffer`, except a trailing payload (of MESSAGE, REPLY
    /// ITEM or FILE_CHUNK) of at least `threshold` bytes, which is returned instead of copied: the frame
    /// is complete once the returned bytes are written right after `buffer`'s (`sendmsg`).
    public static func encode(
        _ frame: Frame, into buffer: inout [UInt8],
        detachingPayloadOfAtLeast threshold: Int
    ) -> [UInt8]? {
        let payload: [UInt8]
        switch frame {
        case .message(_, _, let body), .reply(_, let body): payload = body.bytes
        case .item(_, _, _, let body): payload = body
        case .fileChunk(_, _, let data): payload = data
        case .hello, .auth, .ready, .state, .messageError, .messageAck, .ping, .pong, .goAway, .ack, .fileChunkAck,
            .fileCancel, .itemError, .clockSet, .clockAck:
            encode(frame, into: &buffer, includingPayload: true)
            return nil
        }
        guard payload.count >= threshold else {
            encode(frame, into: &buffer, includingPayload: true)
            return nil
        }
        encode(frame, into: &buffer, includingPayload: false)
        return payload
    }

    private static func encode(_ frame: Frame, into buffer: inout [UInt8], includingPayload: Bool) {
        switch frame {
        case .message(let id, let wantsReply, let payload):
            let flags = (wantsReply ? MessageFlags.wantsReply : 0) | (payload.isData ? MessageFlags.isData : 0)
            return appendPayloadFrame(.message, number: id, flags: flags, payload: payload.bytes, includingPayload, to: &buffer)
        case .reply(let id, let payload):
            let flags = payload.isData ? MessageFlags.isData : 0
            return appendPayloadFrame(.reply, number: id, flags: flags, payload: payload.bytes, includingPayload, to: &buffer)
        case .item(let channel, let seq, let flags, let payload):
            return appendPayloadFrame(
                .item, channel: channel, number: seq, flags: flags, payload: payload, includingPayload, to: &buffer)
        default:
            break
        }
        let frameLength = 1 + bodyLength(of: frame)
        precondition(frameLength <= Int(UInt32.max), "frame of \(frameLength) bytes does not fit a 32-bit length")
        reserveCapacity(includingPayload ? 4 + frameLength : 32, in: &buffer)
        buffer.appendBigEndian(UInt32(frameLength))
        buffer.append(frame.type.rawValue)
        switch frame {
        case .hello(let hello):
            precondition(
                hello.nonce.count == LinkProtocol.nonceLength,
                "HELLO nonce must be \(LinkProtocol.nonceLength) bytes, not \(hello.nonce.count)")
            precondition(!hello.deviceId.isEmpty, "HELLO deviceId must not be empty")
            buffer.append(contentsOf: Hello.magic)
            buffer.appendBigEndian(hello.minVersion)
            buffer.appendBigEndian(hello.maxVersion)
            buffer.append(hello.role.rawValue)
            appendString(hello.deviceId, maximum: Hello.maximumDeviceIdLength, to: &buffer)
            buffer.append(contentsOf: hello.nonce)
        case .auth(let proof):
            precondition(
                proof.count == LinkProtocol.proofLength,
                "AUTH proof must be \(LinkProtocol.proofLength) bytes, not \(proof.count)")
            buffer.append(contentsOf: proof)
        case .ready:
            break
        case .state(let state):
            buffer.append(state.activationState.rawValue)
            buffer.append(state.appState.rawValue)
            buffer.append(state.flags.rawValue)
        case .message, .reply, .item:
            preconditionFailure("MESSAGE, REPLY and ITEM frames are written by appendPayloadFrame")
        case .messageError(let id, let code, let description):
            buffer.appendBigEndian(id)
            buffer.appendBigEndian(code)
            appendString(description, maximum: Int(UInt16.max), to: &buffer)
        case .messageAck(let id):
            buffer.appendBigEndian(id)
        case .ping(let value), .pong(let value):
            buffer.appendBigEndian(value)
        case .goAway(let code, let reason):
            buffer.appendBigEndian(code)
            appendString(reason, maximum: Int(UInt16.max), to: &buffer)
        case .ack(let channel, let seq):
            buffer.append(channel)
            buffer.appendBigEndian(seq)
        case .fileChunk(let seq, let offset, let data):
            buffer.appendBigEndian(seq)
            buffer.appendBigEndian(offset)
            if includingPayload { appendPayload(data, to: &buffer) }
        case .fileChunkAck(let seq, let flags, let received, let committed):
            buffer.appendBigEndian(seq)
            buffer.append(flags.rawValue)
            buffer.appendBigEndian(received)
            buffer.appendBigEndian(committed)
        case .fileCancel(let seq):
            buffer.appendBigEndian(seq)
        case .itemError(let channel, let seq, let code, let description):
            buffer.append(channel)
            buffer.appendBigEndian(seq)
            buffer.appendBigEndian(code)
            appendString(description, maximum: Int(UInt16.max), to: &buffer)
        case .clockSet(let setting):
            buffer.appendBigEndian(setting.round)
            buffer.append(setting.isManual ? ClockFrameFlags.manual : 0)
            buffer.appendBigEndian(setting.monotonicMilliseconds)
            buffer.appendBigEndian(setting.wallMilliseconds)
        case .clockAck(let round, let next):
            buffer.appendBigEndian(round)
            buffer.append(next == nil ? 0 : ClockFrameFlags.hasTimer)
            buffer.appendBigEndian(next ?? 0)
        }
    }

    /// The bytes of `frame`.
    public static func encode(_ frame: Frame) -> [UInt8] {
        var buffer: [UInt8] = []
        encode(frame, into: &buffer)
        return buffer
    }

    /// The number of bytes ``encode(_:into:)`` appends for `frame`, length prefix included.
    public static func encodedLength(of frame: Frame) -> Int {
        4 + 1 + bodyLength(of: frame)
    }

    private static func bodyLength(of frame: Frame) -> Int {
        switch frame {
        case .hello(let hello):
            return 4 + 2 + 2 + 1 + 2 + utf8PrefixLength(of: hello.deviceId, maximum: Hello.maximumDeviceIdLength)
                + hello.nonce.count
        case .auth(let proof):
            return proof.count
        case .ready:
            return 0
        case .state:
            return 3
        case .message(_, _, let payload), .reply(_, let payload):
            return 8 + 1 + payload.bytes.count
        case .messageError(_, _, let description):
            return 8 + 2 + 2 + utf8PrefixLength(of: description, maximum: Int(UInt16.max))
        case .messageAck, .ping, .pong:
            return 8
        case .goAway(_, let reason):
            return 2 + 2 + utf8PrefixLength(of: reason, maximum: Int(UInt16.max))
        case .item(_, _, _, let payload):
            return 1 + 8 + 1 + payload.count
        case .ack:
            return 1 + 8
        case .fileChunk(_, _, let data):
            return 8 + 8 + data.count
        case .fileChunkAck:
            return 8 + 1 + 8 + 8
        case .fileCancel:
            return 8
        case .itemError(_, _, _, let description):
            return 1 + 8 + 2 + 2 + utf8PrefixLength(of: description, maximum: Int(UInt16.max))
        case .clockSet:
            return 8 + 1 + 8 + 8
        case .clockAck:
            return 8 + 1 + 8
        }
    }

    /// Grows geometrically: `reserveCapacity` alone allocates exactly what it is asked for,
    /// which would copy the whole buffer on every append.
    private static func reserveCapacity(_ additional: Int, in buffer: inout [UInt8]) {
        let needed = buffer.count + additional
        if buffer.capacity < needed {
            buffer.reserveCapacity(Swift.max(needed, 2 * buffer.capacity))
        }
    }

    /// A MESSAGE, REPLY or ITEM frame, the frames of every message and transfer: its length,
    /// type and fields (ITEM's channel byte, the id or seq, the flags byte) and its payload,
    /// unless `includingPayload` is false, written with one append
    /// (``ByteArrays/append(count:to:_:)``) rather than one for each field, each of which
    /// checked the array's room and uniqueness. The layouts are docs/wire-protocol.md's
    /// (`WireProtocolDocumentTests` checks its examples).
    @inline(__always)
    private static func appendPayloadFrame(
        _ type: FrameType, channel: UInt8? = nil, number: UInt64, flags: UInt8, payload: [UInt8], _ includingPayload: Bool,
        to buffer: inout [UInt8]
    ) {
        let fieldsLength = (channel == nil ? 0 : 1) + 8 + 1
        let frameLength = 1 + fieldsLength + payload.count
        precondition(frameLength <= Int(UInt32.max), "frame of \(frameLength) bytes does not fit a 32-bit length")
        let headLength = 5 + fieldsLength
        let written = headLength + (includingPayload ? payload.count : 0)
        // The one append grows the buffer as appends do (doubling): no reservation of its own.
        ByteArrays.append(count: written, to: &buffer) { base in
            let head = UnsafeMutableRawPointer(base)
            head.storeBytes(of: UInt32(frameLength).bigEndian, as: UInt32.self)
            head.storeBytes(of: type.rawValue, toByteOffset: 4, as: UInt8.self)
            var offset = 5
            if let channel {
                head.storeBytes(of: channel, toByteOffset: offset, as: UInt8.self)
                offset += 1
            }
            head.storeBytes(of: number.bigEndian, toByteOffset: offset, as: UInt64.self)
            head.storeBytes(of: flags, toByteOffset: offset + 8, as: UInt8.self)
            if includingPayload {
                payload.withUnsafeBytes { PieceCopy.copy($0, to: head + headLength) }
            }
        }
    }

    /// Payload bytes go in pieces (``PieceCopy``), like every other copy of them.
    private static func appendPayload(_ payload: [UInt8], to buffer: inout [UInt8]) {
        payload.withUnsafeBytes { PieceCopy.append($0, to: &buffer) }
    }

    private static func appendString(_ string: String, maximum: Int, to buffer: inout [UInt8]) {
        let length = utf8PrefixLength(of: string, maximum: maximum)
        buffer.appendBigEndian(UInt16(length))
        buffer.append(contentsOf: string.utf8.prefix(length))
    }
}

/// The bits of the flags byte of MESSAGE and REPLY frames.
enum MessageFlags {
    static let wantsReply: UInt8 = 1 << 0
    static let isData: UInt8 = 1 << 1
}

/// The bits of the flags byte of CLOCK_SET (`manual`) and CLOCK_ACK (`hasTimer`) frames.
enum ClockFrameFlags {
    static let manual: UInt8 = 1 << 0
    static let hasTimer: UInt8 = 1 << 0
}

/// The bits of the flags byte of ITEM frames.
enum ItemFrameFlags {
    static let isCurrentComplicationInfo: UInt8 = 1 << 0
}
