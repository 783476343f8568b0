/// Turns a type byte and a complete body into a ``Frame``.
enum FrameParser {
    static func parse(type rawType: UInt8, body: UnsafeRawBufferPointer) throws(FrameDecodingError) -> Frame {
        try parse(type: rawType, body: body, ownedRest: nil)
    }

    /// A frame whose payload (the rest of the body after `fields`) was read into an array of its
    /// own, which the frame takes as it is. For the types with ``fixedFieldsLength(ofType:)``.
    static func parse(type rawType: UInt8, fields: UnsafeRawBufferPointer, payload: [UInt8]) throws(FrameDecodingError) -> Frame {
        precondition(fixedFieldsLength(ofType: rawType) == fields.count, "fields of the wrong length for type \(rawType)")
        return try parse(type: rawType, body: fields, ownedRest: payload)
    }

    /// The length of the fields before the payload of a frame that carries one (MESSAGE, REPLY,
    /// ITEM, FILE_CHUNK), `nil` for the others.
    static func fixedFieldsLength(ofType rawType: UInt8) -> Int? {
        switch FrameType(rawValue: rawType) {
        case .message, .reply: return 8 + 1  // id, flags
        case .item: return 1 + 8 + 1  // channel, seq, flags
        case .fileChunk: return 8 + 8  // seq, offset
        case .hello, .auth, .ready, .state, .messageError, .messageAck, .ping, .pong, .goAway, .ack, .fileChunkAck,
            .fileCancel, .itemError, .clockSet, .clockAck, nil:
            return nil
        }
    }

    /// `ownedRest`, when given, is the body after the fixed fields the reader holds: the
    /// payload, taken as it is instead of being copied out of the body.
    private static func parse(type rawType: UInt8, body: UnsafeRawBufferPointer, ownedRest: [UInt8]?) throws(FrameDecodingError) -> Frame {
        guard let type = FrameType(rawValue: rawType) else {
            throw .unknownFrameType(rawType)
        }
        var reader = FrameBodyReader(type: rawType, body: body)
        let frame: Frame
        switch type {
        case .hello:
            let magic = try reader.readBytes(Hello.magic.count, field: "magic")
            guard magic == Hello.magic else {
                throw reader.malformed("magic is \(magic.map(hexByte).joined(separator: " ")), expected 57 4C 4E 4B (\"WLNK\")")
            }
            let minVersion = try reader.readInteger(UInt16.self, field: "minVersion")
            let maxVersion = try reader.readInteger(UInt16.self, field: "maxVersion")
            let rawRole = try reader.readInteger(UInt8.self, field: "role")
            guard let role = Role(rawValue: rawRole) else {
                throw reader.malformed("role is \(rawRole), expected 1 (phone) or 2 (watch)")
            }
            let deviceId = try reader.readString(field: "deviceId", allowedLengths: 1...Hello.maximumDeviceIdLength)
            let nonce = try reader.readBytes(LinkProtocol.nonceLength, field: "nonce")
            try reader.expectEnd(after: "nonce")
            frame = .hello(Hello(minVersion: minVersion, maxVersion: maxVersion, role: role, deviceId: deviceId, nonce: nonce))
        case .auth:
            let proof = try reader.readBytes(LinkProtocol.proofLength, field: "proof")
            try reader.expectEnd(after: "proof")
            frame = .auth(proof: proof)
        case .ready:
            try reader.expectEnd(after: "the type byte (READY has an empty body)")
            frame = .ready
        case .state:
            let rawActivation = try reader.readInteger(UInt8.self, field: "activationState")
            guard let activationState = ActivationState(rawValue: rawActivation) else {
                throw reader.malformed("activationState is \(rawActivation), expected 0...2")
            }
            let rawApp = try reader.readInteger(UInt8.self, field: "appState")
            guard let appState = AppState(rawValue: rawApp) else {
                throw reader.malformed("appState is \(rawApp), expected 0...2")
            }
            let rawFlags = try reader.readInteger(UInt8.self, field: "flags")
            let unknownFlags = rawFlags & ~DeviceFlags.all.rawValue
            guard unknownFlags == 0 else {
                throw reader.malformed("flags has unknown bits 0x\(hexByte(unknownFlags))")
            }
            try reader.expectEnd(after: "flags")
            frame = .state(SessionState(activationState: activationState, appState: appState, flags: DeviceFlags(rawValue: rawFlags)))
        case .message:
            let id = try reader.readInteger(UInt64.self, field: "id")
            let flags = try reader.readInteger(UInt8.self, field: "flags")
            let unknownFlags = flags & ~(MessageFlags.wantsReply | MessageFlags.isData)
            guard unknownFlags == 0 else {
                throw reader.malformed("flags has unknown bits 0x\(hexByte(unknownFlags))")
            }
            let payload = payload(rest(&reader, ownedRest), isData: flags & MessageFlags.isData != 0)
            frame = .message(id: id, wantsReply: flags & MessageFlags.wantsReply != 0, payload: payload)
        case .reply:
            let id = try reader.readInteger(UInt64.self, field: "id")
            let flags = try reader.readInteger(UInt8.self, field: "flags")
            let unknownFlags = flags & ~MessageFlags.isData
            guard unknownFlags == 0 else {
                throw reader.malformed("flags has unknown bits 0x\(hexByte(unknownFlags))")
            }
            frame = .reply(id: id, payload: payload(rest(&reader, ownedRest), isData: flags & MessageFlags.isData != 0))
        case .messageError:
            let id = try reader.readInteger(UInt64.self, field: "id")
            let code = try reader.readInteger(UInt16.self, field: "code")
            let description = try reader.readString(field: "description")
            try reader.expectEnd(after: "description")
            frame = .messageError(id: id, code: code, description: description)
        case .messageAck:
            let id = try reader.readInteger(UInt64.self, field: "id")
            try reader.expectEnd(after: "id")
            frame = .messageAck(id: id)
        case .ping, .pong:
            let value = try reader.readInteger(UInt64.self, field: "value")
            try reader.expectEnd(after: "value")
            frame = type == .ping ? .ping(value) : .pong(value)
        case .goAway:
            let code = try reader.readInteger(UInt16.self, field: "code")
            let reason = try reader.readString(field: "reason")
            try reader.expectEnd(after: "reason")
            frame = .goAway(code: code, reason: reason)
        case .item:
            let channel = try readChannel(&reader)
            let seq = try reader.readInteger(UInt64.self, field: "seq")
            let flags = try reader.readInteger(UInt8.self, field: "flags")
            let unknownFlags = flags & ~ItemFrameFlags.isCurrentComplicationInfo
            guard unknownFlags == 0 else {
                throw reader.malformed("flags has unknown bits 0x\(hexByte(unknownFlags))")
            }
            frame = .item(channel: channel, seq: seq, flags: flags, payload: rest(&reader, ownedRest))
        case .ack:
            let channel = try readChannel(&reader)
            let seq = try reader.readInteger(UInt64.self, field: "seq")
            try reader.expectEnd(after: "seq")
            frame = .ack(channel: channel, seq: seq)
        case .fileChunk:
            let seq = try reader.readInteger(UInt64.self, field: "seq")
            let offset = try readOffset(&reader, field: "offset")
            let data = rest(&reader, ownedRest)
            guard !data.isEmpty else {
                throw reader.malformed("data is empty: a chunk carries at least 1 byte")
            }
            guard offset <= FileHeader.maximumTotalBytes - UInt64(data.count) else {
                throw reader.malformed("offset \(offset) + \(bytesPhrase(data.count)) of data ends past byte \(FileHeader.maximumTotalBytes)")
            }
            frame = .fileChunk(seq: seq, offset: offset, data: data)
        case .fileChunkAck:
            let seq = try reader.readInteger(UInt64.self, field: "seq")
            let rawFlags = try reader.readInteger(UInt8.self, field: "flags")
            let unknownFlags = rawFlags & ~FileChunkAckFlags.all.rawValue
            guard unknownFlags == 0 else {
                throw reader.malformed("flags has unknown bits 0x\(hexByte(unknownFlags))")
            }
            let received = try readOffset(&reader, field: "receivedOffset")
            let committed = try readOffset(&reader, field: "committedOffset")
            guard committed <= received else {
                throw reader.malformed("committedOffset \(committed) is above receivedOffset \(received)")
            }
            try reader.expectEnd(after: "committedOffset")
            frame = .fileChunkAck(
                seq: seq, flags: FileChunkAckFlags(rawValue: rawFlags),
                receivedOffset: received, committedOffset: committed)
        case .fileCancel:
            let seq = try reader.readInteger(UInt64.self, field: "seq")
            try reader.expectEnd(after: "seq")
            frame = .fileCancel(seq: seq)
        case .itemError:
            let channel = try readChannel(&reader)
            let seq = try reader.readInteger(UInt64.self, field: "seq")
            let code = try reader.readInteger(UInt16.self, field: "code")
            let description = try reader.readString(field: "description")
            try reader.expectEnd(after: "description")
            frame = .itemError(channel: channel, seq: seq, code: code, description: description)
        case .clockSet:
            let round = try reader.readInteger(UInt64.self, field: "round")
            let flags = try reader.readInteger(UInt8.self, field: "flags")
            let unknownFlags = flags & ~ClockFrameFlags.manual
            guard unknownFlags == 0 else {
                throw reader.malformed("flags has unknown bits 0x\(hexByte(unknownFlags))")
            }
            let monotonic = try reader.readInteger(UInt64.self, field: "monotonicMs")
            guard monotonic <= UInt64(Int64.max) else {
                throw reader.malformed("monotonicMs is \(monotonic), above \(Int64.max)")
            }
            let wall = try reader.readInteger(UInt64.self, field: "wallMs")
            guard wall <= ClockSetting.maximumWallMilliseconds else {
                throw reader.malformed("wallMs is \(wall), after 9999-12-31T23:59:59.999Z (\(ClockSetting.maximumWallMilliseconds))")
            }
            try reader.expectEnd(after: "wallMs")
            frame = .clockSet(
                ClockSetting(
                    round: round, isManual: flags & ClockFrameFlags.manual != 0, monotonicMilliseconds: monotonic,
                    wallMilliseconds: wall))
        case .clockAck:
            let round = try reader.readInteger(UInt64.self, field: "round")
            let flags = try reader.readInteger(UInt8.self, field: "flags")
            let unknownFlags = flags & ~ClockFrameFlags.hasTimer
            guard unknownFlags == 0 else {
                throw reader.malformed("flags has unknown bits 0x\(hexByte(unknownFlags))")
            }
            let next = try reader.readInteger(UInt64.self, field: "nextTimerInMs")
            guard next <= UInt64(Int64.max) else {
                throw reader.malformed("nextTimerInMs is \(next), above \(Int64.max)")
            }
            guard flags & ClockFrameFlags.hasTimer != 0 || next == 0 else {
                throw reader.malformed("nextTimerInMs is \(next) without the hasTimer flag (must be 0)")
            }
            try reader.expectEnd(after: "nextTimerInMs")
            frame = .clockAck(round: round, nextTimerInMilliseconds: flags & ClockFrameFlags.hasTimer != 0 ? next : nil)
        }
        return frame
    }

    /// The payload: `ownedRest` when given, else the rest of the body.
    private static func rest(_ reader: inout FrameBodyReader, _ ownedRest: [UInt8]?) -> [UInt8] {
        if let ownedRest { return ownedRest }
        return reader.readRest()
    }

    private static func readChannel(_ reader: inout FrameBodyReader) throws(FrameDecodingError) -> UInt8 {
        let channel = try reader.readInteger(UInt8.self, field: "channel")
        guard channel != 0 else {
            throw reader.malformed("channel is 0, must be 1...255")
        }
        return channel
    }

    /// A byte offset into a file: at most ``FileHeader/maximumTotalBytes``.
    private static func readOffset(_ reader: inout FrameBodyReader, field: String) throws(FrameDecodingError) -> UInt64 {
        let offset = try reader.readInteger(UInt64.self, field: field)
        guard offset <= FileHeader.maximumTotalBytes else {
            throw reader.malformed("\(field) is \(offset), above the largest file size \(FileHeader.maximumTotalBytes)")
        }
        return offset
    }

    private static func payload(_ bytes: [UInt8], isData: Bool) -> MessagePayload {
        isData ? .data(bytes) : .dictionary(bytes)
    }
}
