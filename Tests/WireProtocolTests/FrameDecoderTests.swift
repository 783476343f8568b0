import WireProtocol
import TestSupport
import XCTest

final class FrameDecoderTests: XCTestCase {
    private func rawFrame(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
        let length = UInt32(1 + body.count)
        return [
            UInt8(length >> 24), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8),
            UInt8(truncatingIfNeeded: length), type,
        ] + body
    }

    private func helloBody(
        magic: [UInt8] = Hello.magic, role: UInt8 = 1, deviceId: [UInt8] = Array("phone-1".utf8),
        deviceIdLength: Int? = nil, nonce: [UInt8] = Fixtures.phoneNonce
    ) -> [UInt8] {
        let length = deviceIdLength ?? deviceId.count
        return magic + [0, 1, 0, 1, role, UInt8(length >> 8), UInt8(length & 0xFF)] + deviceId + nonce
    }

    private func assertFails(
        _ input: [UInt8], with error: FrameDecodingError,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        FrameDecoderVerifier.verify(input, expected: .failed(framesBefore: [], error), file: file, line: line)
    }

    private func assertMalformed(
        _ type: FrameType, _ body: [UInt8], _ reason: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        assertFails(rawFrame(type.rawValue, body), with: .malformed(type: type.rawValue, reason: reason), file: file, line: line)
    }

    // MARK: Framing

    func testEveryFrameKindRoundTripsHoweverTheBytesArrive() {
        var stream: [UInt8] = []
        for frame in Fixtures.sampleFrames {
            FrameEncoder.encode(frame, into: &stream)
        }
        FrameDecoderVerifier.verify(stream, expected: .frames(Fixtures.sampleFrames, pendingBytes: 0))
    }

    func testAnIncompleteFrameWaitsForMoreBytes() throws {
        let bytes = FrameEncoder.encode(.ping(42))
        var decoder = FrameDecoder()
        decoder.append(bytes.dropLast())
        XCTAssertNil(try decoder.next())
        XCTAssertEqual(decoder.bufferedByteCount, bytes.count - 1)
        decoder.append(bytes.suffix(1))
        XCTAssertEqual(try decoder.next(), .ping(42))
        XCTAssertNil(try decoder.next())
        XCTAssertEqual(decoder.bufferedByteCount, 0)
    }

    func testFramesBeforeABadOneAreDelivered() {
        let input = FrameEncoder.encode(.ready) + FrameEncoder.encode(.ping(1)) + rawFrame(0x7E, [])
        FrameDecoderVerifier.verify(input, expected: .failed(framesBefore: [.ready, .ping(1)], .unknownFrameType(0x7E)))
    }

    func testTheDecoderStaysFailed() throws {
        var decoder = FrameDecoder()
        decoder.append(rawFrame(0x7E, []))
        XCTAssertThrowsError(try decoder.next()) { XCTAssertEqual($0 as? FrameDecodingError, .unknownFrameType(0x7E)) }
        decoder.append(FrameEncoder.encode(.ready))
        XCTAssertThrowsError(try decoder.next()) { XCTAssertEqual($0 as? FrameDecodingError, .unknownFrameType(0x7E)) }
        XCTAssertEqual(decoder.bufferedByteCount, 0, "a failed decoder keeps no bytes")
    }

    func testManySmallFramesAndOneLargeFrameStreamThrough() {
        var frames: [Frame] = (0..<5_000).map { Frame.messageAck(id: UInt64($0)) }
        let bodyLength = Int(FrameDecoder.defaultMaximumFrameLength) - 10
        frames.append(.message(id: 9, wantsReply: false, payload: .data((0..<bodyLength).map { UInt8(truncatingIfNeeded: $0) })))
        frames.append(.pong(3))
        var stream: [UInt8] = []
        frames.forEach { FrameEncoder.encode($0, into: &stream) }
        let chunks = stride(from: 0, to: stream.count, by: 4096).map { Array(stream[$0..<min($0 + 4096, stream.count)]) }
        let outcome = FrameDecoderVerifier.feed(chunks, maximumFrameLength: FrameDecoder.defaultMaximumFrameLength, useRawPointers: false)
        XCTAssertEqual(outcome, .frames(frames, pendingBytes: 0))
    }

    // MARK: Length limits

    func testAnOversizedLengthIsRejectedFromTheHeaderAlone() {
        var decoder = FrameDecoder()
        decoder.append([0xFF, 0xFF, 0xFF, 0xFF])
        XCTAssertThrowsError(try decoder.next()) {
            XCTAssertEqual($0 as? FrameDecodingError, .frameTooLarge(declared: 0xFFFF_FFFF, maximum: 1 << 20))
            XCTAssertEqual(($0 as? FrameDecodingError)?.goAwayCode, .frameTooLarge)
        }
        XCTAssertLessThanOrEqual(decoder.bufferedByteCount, 4)
    }

    func testAnOversizedLengthIsRejectedBeforeItsBodyArrives() {
        var decoder = FrameDecoder(maximumFrameLength: LinkProtocol.preHandshakeMaximumFrameLength)
        decoder.append([0x00, 0x00, 0x10])
        XCTAssertNil(try decoder.next())
        decoder.append([0x01, 0x20])
        XCTAssertThrowsError(try decoder.next()) {
            XCTAssertEqual($0 as? FrameDecodingError, .frameTooLarge(declared: 4097, maximum: 4096))
        }
    }

    func testAFrameOfExactlyTheMaximumIsAccepted() {
        let frame = Frame.message(id: 1, wantsReply: false, payload: .data(Array(repeating: 7, count: 4096 - 1 - 9)))
        let bytes = FrameEncoder.encode(frame)
        XCTAssertEqual(bytes.count, 4 + 4096)
        FrameDecoderVerifier.verify(bytes, expected: .frames([frame], pendingBytes: 0), maximumFrameLength: 4096)
        FrameDecoderVerifier.verify(
            bytes, expected: .failed(framesBefore: [], .frameTooLarge(declared: 4096, maximum: 4095)),
            maximumFrameLength: 4095)
    }

    /// docs/wire-protocol.md: frames of at most 4,096 bytes before the handshake is done,
    /// 1 MiB after it (the type byte and body; the 4-byte length not counted).
    func testTheShippedMaximumsAreFourKiBBeforeTheHandshakeAndOneMiBAfter() throws {
        for (decoder, limit) in [
            (FrameDecoder(maximumFrameLength: LinkProtocol.preHandshakeMaximumFrameLength), 4_096),
            (FrameDecoder(), 1_048_576),
        ] {
            let frame = Frame.message(id: 1, wantsReply: false, payload: .data(Array(repeating: 7, count: limit - 1 - 9)))
            let bytes = FrameEncoder.encode(frame)
            XCTAssertEqual(bytes.count, 4 + limit)
            var taking = decoder
            taking.append(bytes)
            XCTAssertEqual(try taking.next(), frame, "a frame of \(limit) bytes")
            var refusing = decoder
            refusing.append([
                UInt8(truncatingIfNeeded: (limit + 1) >> 24), UInt8(truncatingIfNeeded: (limit + 1) >> 16),
                UInt8(truncatingIfNeeded: (limit + 1) >> 8), UInt8(truncatingIfNeeded: limit + 1),
            ])
            XCTAssertThrowsError(try refusing.next()) {
                XCTAssertEqual($0 as? FrameDecodingError, .frameTooLarge(declared: UInt32(limit + 1), maximum: UInt32(limit)))
            }
        }
    }

    func testRaisingTheMaximumAppliesToTheNextHeader() throws {
        let large = Frame.message(id: 1, wantsReply: true, payload: .dictionary(Array(repeating: 1, count: 10_000)))
        let input = FrameEncoder.encode(.ready) + FrameEncoder.encode(large)

        var decoder = FrameDecoder(maximumFrameLength: LinkProtocol.preHandshakeMaximumFrameLength)
        decoder.append(input)
        XCTAssertEqual(try decoder.next(), .ready)
        decoder.maximumFrameLength = FrameDecoder.defaultMaximumFrameLength
        XCTAssertEqual(try decoder.next(), large)

        var strict = FrameDecoder(maximumFrameLength: LinkProtocol.preHandshakeMaximumFrameLength)
        strict.append(input)
        XCTAssertEqual(try strict.next(), .ready)
        XCTAssertThrowsError(try strict.next()) {
            XCTAssertEqual($0 as? FrameDecodingError, .frameTooLarge(declared: 10_010, maximum: 4096))
        }
    }

    // MARK: Malformed frames

    func testAnEmptyFrameIsRejected() {
        assertFails([0, 0, 0, 0], with: .emptyFrame)
        XCTAssertEqual(FrameDecodingError.emptyFrame.goAwayCode, .malformedFrame)
    }

    func testAnUnknownTypeIsRejected() {
        assertFails(rawFrame(0x7E, [1, 2, 3]), with: .unknownFrameType(0x7E))
        assertFails(rawFrame(0x00, []), with: .unknownFrameType(0x00))
        XCTAssertEqual(FrameDecodingError.unknownFrameType(0x7E).goAwayCode, .unknownFrameType)
        XCTAssertEqual(FrameDecodingError.unknownFrameType(0x7E).description, "unknown frame type 0x7E")
    }

    func testMalformedHello() {
        let valid = helloBody()
        assertMalformed(.hello, Array(valid.dropLast()), "body ends inside nonce: needs 32 bytes, 31 left")
        assertMalformed(.hello, valid + [0], "1 trailing byte after nonce")
        assertMalformed(.hello, Array(valid.prefix(8)), "body ends inside role: needs 1 byte, 0 left")
        assertMalformed(.hello, Array("WL".utf8), "body ends inside magic: needs 4 bytes, 2 left")
        assertMalformed(.hello, helloBody(magic: Array("WLN".utf8) + [0]), "magic is 57 4C 4E 00, expected 57 4C 4E 4B (\"WLNK\")")
        assertMalformed(.hello, helloBody(role: 3), "role is 3, expected 1 (phone) or 2 (watch)")
        assertMalformed(.hello, helloBody(role: 0), "role is 0, expected 1 (phone) or 2 (watch)")
        assertMalformed(.hello, helloBody(deviceId: []), "deviceId length is 0, must be 1...255")
        assertMalformed(.hello, helloBody(deviceId: Array(repeating: 0x61, count: 256)), "deviceId length is 256, must be 1...255")
        assertMalformed(.hello, helloBody(deviceIdLength: 200), "body ends inside deviceId: needs 200 bytes, 39 left")
        assertMalformed(.hello, helloBody(deviceId: [0x61, 0xFF]), "deviceId is not valid UTF-8")
        assertMalformed(.hello, helloBody(deviceId: [0xC0, 0xAF]), "deviceId is not valid UTF-8")
        assertMalformed(.hello, helloBody(deviceId: [0xED, 0xA0, 0x80]), "deviceId is not valid UTF-8")
        assertMalformed(.hello, helloBody(deviceId: [0xE2, 0x82]), "deviceId is not valid UTF-8")
    }

    func testAValidHelloAtTheLimits() {
        let deviceId = String(repeating: "ü", count: 127) + "!"
        let body = helloBody(role: 2, deviceId: Array(deviceId.utf8))
        let expected = Frame.hello(Hello(minVersion: 1, maxVersion: 1, role: .watch, deviceId: deviceId, nonce: Fixtures.phoneNonce))
        FrameDecoderVerifier.verify(rawFrame(0x01, body), expected: .frames([expected], pendingBytes: 0))
    }

    func testMalformedAuthAndReady() {
        assertMalformed(.auth, Array(repeating: 1, count: 31), "body ends inside proof: needs 32 bytes, 31 left")
        assertMalformed(.auth, Array(repeating: 1, count: 33), "1 trailing byte after proof")
        assertMalformed(.auth, [], "body ends inside proof: needs 32 bytes, 0 left")
        assertMalformed(.ready, [0, 0], "2 trailing bytes after the type byte (READY has an empty body)")
    }

    func testMalformedState() {
        assertMalformed(.state, [2, 2], "body ends inside flags: needs 1 byte, 0 left")
        assertMalformed(.state, [2, 2, 0, 0], "1 trailing byte after flags")
        assertMalformed(.state, [3, 2, 0], "activationState is 3, expected 0...2")
        assertMalformed(.state, [2, 9, 0], "appState is 9, expected 0...2")
        assertMalformed(.state, [2, 2, 0x3F], "flags has unknown bits 0x20")
        assertMalformed(.state, [2, 2, 0x80], "flags has unknown bits 0x80")
    }

    func testMalformedMessageAndReply() {
        assertMalformed(.message, [0, 0, 0], "body ends inside id: needs 8 bytes, 3 left")
        assertMalformed(.message, [0, 0, 0, 0, 0, 0, 0, 1], "body ends inside flags: needs 1 byte, 0 left")
        assertMalformed(.message, [0, 0, 0, 0, 0, 0, 0, 1, 0x04, 0xAA], "flags has unknown bits 0x04")
        assertMalformed(.reply, [0, 0, 0, 0, 0, 0, 0, 1, 0x01], "flags has unknown bits 0x01")
        assertMalformed(.reply, [0, 0, 0, 0, 0, 0, 0], "body ends inside id: needs 8 bytes, 7 left")
    }

    func testMalformedMessageErrorAckPingPong() {
        let id: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 3]
        assertMalformed(.messageError, id + [0x1B], "body ends inside code: needs 2 bytes, 1 left")
        assertMalformed(.messageError, id + [0x1B, 0x64], "body ends inside description length: needs 2 bytes, 0 left")
        assertMalformed(.messageError, id + [0x1B, 0x64, 0, 10, 0x61, 0x62], "body ends inside description: needs 10 bytes, 2 left")
        assertMalformed(.messageError, id + [0x1B, 0x64, 0, 1, 0x80], "description is not valid UTF-8")
        assertMalformed(.messageError, id + [0x1B, 0x64, 0, 1, 0x61, 0x62], "1 trailing byte after description")
        assertMalformed(.messageAck, id + [0], "1 trailing byte after id")
        assertMalformed(.ping, [1, 2, 3, 4], "body ends inside value: needs 8 bytes, 4 left")
        assertMalformed(.pong, id + id, "8 trailing bytes after value")
    }

    func testMalformedGoAway() {
        assertMalformed(.goAway, [0, 5], "body ends inside reason length: needs 2 bytes, 0 left")
        assertMalformed(.goAway, [0, 5, 0, 3, 0x61], "body ends inside reason: needs 3 bytes, 1 left")
        assertMalformed(.goAway, [0, 5, 0, 1, 0xC3], "reason is not valid UTF-8")
        assertMalformed(.goAway, [0, 5, 0, 0, 0], "1 trailing byte after reason")
    }

    func testMalformedItem() {
        let seq: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 7]
        assertMalformed(.item, [], "body ends inside channel: needs 1 byte, 0 left")
        assertMalformed(.item, [1, 0, 0, 0], "body ends inside seq: needs 8 bytes, 3 left")
        assertMalformed(.item, [1] + seq, "body ends inside flags: needs 1 byte, 0 left")
        assertMalformed(.item, [0] + seq + [0] + Fixtures.okPropertyList, "channel is 0, must be 1...255")
        assertMalformed(.item, [1] + seq + [0x02] + Fixtures.okPropertyList, "flags has unknown bits 0x02")
        assertMalformed(.item, [2] + seq + [0xFF], "flags has unknown bits 0xFE")
    }

    func testMalformedAck() {
        let seq: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 7]
        assertMalformed(.ack, [], "body ends inside channel: needs 1 byte, 0 left")
        assertMalformed(.ack, [1] + seq.dropLast(), "body ends inside seq: needs 8 bytes, 7 left")
        assertMalformed(.ack, [0] + seq, "channel is 0, must be 1...255")
        assertMalformed(.ack, [1] + seq + [0], "1 trailing byte after seq")
        assertMalformed(.ack, [2] + seq + seq, "8 trailing bytes after seq")
        XCTAssertEqual(
            FrameDecodingError.malformed(type: FrameType.ack.rawValue, reason: "channel is 0, must be 1...255").description,
            "malformed ACK frame: channel is 0, must be 1...255")
    }

    func testItemsAndAcksOfAnyNonzeroChannelDecode() {
        let seq: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08]
        let input = rawFrame(0x40, [3] + seq + [0x01]) + rawFrame(0x41, [0xFF] + seq)
        FrameDecoderVerifier.verify(
            input,
            expected: .frames(
                [
                    .item(channel: 3, seq: 0x0102_0304_0506_0708, flags: 0x01, payload: []),
                    .ack(channel: 0xFF, seq: 0x0102_0304_0506_0708),
                ], pendingBytes: 0))
    }

    func testAGoAwayWithAnUnknownCodeDecodes() {
        let input = rawFrame(0x3F, [0xAB, 0xCD, 0, 0])
        FrameDecoderVerifier.verify(input, expected: .frames([.goAway(code: 0xABCD, reason: "")], pendingBytes: 0))
        XCTAssertNil(GoAwayCode(rawValue: 0xABCD))
        XCTAssertEqual(GoAwayCode.name(ofRawValue: 0xABCD), "unknown(43981)")
    }

    func testErrorDescriptionsNameTheProblem() {
        XCTAssertEqual(
            FrameDecodingError.malformed(type: 0x10, reason: "flags has unknown bits 0x20").description,
            "malformed STATE frame: flags has unknown bits 0x20")
        XCTAssertEqual(
            FrameDecodingError.frameTooLarge(declared: 5000, maximum: 4096).description,
            "frame length 5000 exceeds the maximum of 4096 bytes")
        XCTAssertEqual(FrameDecodingError.malformed(type: 0x10, reason: "x").goAwayCode, .malformedFrame)
    }

    // MARK: Hostile input

    /// Random bytes give exactly what the framing rules say, worked out here frame by frame from
    /// the length prefix and type byte: a frame, the error of its header or type, or a wait for more.
    func testRandomBytesGiveWhatTheFramingRulesSay() {
        let seed = testSeed(default: 7)
        var generator = SeededGenerator(seed: seed)
        let knownTypes = Set(FrameType.allCases.map(\.rawValue))
        for round in 0..<2_000 {
            let count = Int.random(in: 0...64, using: &generator)
            var input = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if count >= 5 && Bool.random(using: &generator) {
                input[0] = 0
                input[1] = 0
                input[2] = 0
                input[3] = UInt8(count - 4)
                input[4] = FrameType.allCases.randomElement(using: &generator)!.rawValue
            }
            var decoder = FrameDecoder(maximumFrameLength: 4096)
            decoder.append(input)
            let context = "seed \(seed), round \(round), input \(input)"
            var offset = 0
            while true {
                let outcome = Result { try decoder.next() }
                guard input.count - offset >= 4 else {
                    XCTAssertEqual(try outcome.get(), nil, "a partial header waits: \(context)")
                    break
                }
                let declared = input[offset..<offset + 4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                if declared == 0 {
                    XCTAssertThrowsError(try outcome.get(), context) { XCTAssertEqual($0 as? FrameDecodingError, .emptyFrame, context) }
                    break
                }
                if declared > 4096 {
                    XCTAssertThrowsError(try outcome.get(), context) {
                        XCTAssertEqual($0 as? FrameDecodingError, .frameTooLarge(declared: declared, maximum: 4096), context)
                    }
                    break
                }
                guard input.count - offset - 4 >= Int(declared) else {
                    XCTAssertEqual(try outcome.get(), nil, "a partial body waits: \(context)")
                    break
                }
                let type = input[offset + 4]
                let bytes = Array(input[offset..<offset + 4 + Int(declared)])
                switch outcome {
                case .success(let frame?):
                    XCTAssertTrue(knownTypes.contains(type), context)
                    XCTAssertEqual(frame.type.rawValue, type, context)
                    XCTAssertEqual(FrameEncoder.encode(frame), bytes, "a decoded frame is its bytes: \(context)")
                case .success(nil):
                    XCTFail("a complete frame was not returned: \(context)")
                case .failure(let error):
                    let expected: FrameDecodingError? = knownTypes.contains(type) ? nil : .unknownFrameType(type)
                    if let expected {
                        XCTAssertEqual(error as? FrameDecodingError, expected, context)
                    } else if case .malformed(type, _)? = error as? FrameDecodingError {
                    } else {
                        XCTFail("expected a malformed frame of type \(type), got \(error): \(context)")
                    }
                }
                guard case .success(_?) = outcome else { break }
                offset += 4 + Int(declared)
            }
        }
    }
}

final class FrameDecoderDecodeTests: XCTestCase {
    func testStoppingKeepsTheRestForLater() throws {
        var bytes: [UInt8] = []
        for n in 1...5 { FrameEncoder.encode(.ping(UInt64(n)), into: &bytes) }
        var decoder = FrameDecoder()
        var seen: [Frame] = []
        try bytes.withUnsafeBytes { raw in
            try decoder.decode(raw) { frame in
                seen.append(frame)
                return seen.count < 2
            }
        }
        XCTAssertEqual(seen, [.ping(1), .ping(2)])
        while let frame = try decoder.next() { seen.append(frame) }
        XCTAssertEqual(seen, (1...5).map { .ping(UInt64($0)) })
    }

    func testAFrameSplitAcrossReadsIsCompletedAndTheRestDecodedInPlace() throws {
        var bytes: [UInt8] = []
        FrameEncoder.encode(.item(channel: 1, seq: 1, flags: 0, payload: [UInt8](repeating: 7, count: 5_000)), into: &bytes)
        for n in 2...4 { FrameEncoder.encode(.ping(UInt64(n)), into: &bytes) }
        var decoder = FrameDecoder()
        var seen: [Frame] = []
        try bytes[..<3_000].withUnsafeBytes { raw in
            try decoder.decode(raw) {
                seen.append($0); return true
            }
        }
        XCTAssertEqual(seen, [])
        XCTAssertEqual(decoder.bufferedByteCount, 3_000)
        try bytes[3_000...].withUnsafeBytes { raw in
            try decoder.decode(raw) { frame in
                seen.append(frame)
                return seen.count < 2
            }
        }
        XCTAssertEqual(seen.count, 2, "stopped after the second frame")
        XCTAssertEqual(seen.last, .ping(2))
        while let frame = try decoder.next() { seen.append(frame) }
        XCTAssertEqual(Array(seen.dropFirst()), [.ping(2), .ping(3), .ping(4)])
        XCTAssertEqual(decoder.bufferedByteCount, 0)
    }

    func testAnOversizedHeaderIsRejectedWithoutBufferingTheBody() {
        var decoder = FrameDecoder(maximumFrameLength: 4096)
        let header: [UInt8] = [0x00, 0x10, 0x00, 0x01, 0x20]
        XCTAssertThrowsError(try header.withUnsafeBytes { raw in try decoder.decode(raw) { _ in true } }) { error in
            XCTAssertEqual(error as? FrameDecodingError, .frameTooLarge(declared: 0x0010_0001, maximum: 4096))
        }
        XCTAssertEqual(decoder.bufferedByteCount, 0)
    }

    // MARK: A large payload read in place

    private func bytes(_ count: Int, _ seed: UInt8) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) ^ seed }
    }

    func testLargeFramesOfEveryKindHoweverTheyArrive() {
        let frames: [Frame] = [
            .message(id: 1, wantsReply: true, payload: .data(bytes(5_000, 1))),
            .message(id: 2, wantsReply: true, payload: .data(bytes(5_000, 2))),
            .reply(id: 2, payload: .dictionary(bytes(5_000, 3))),
            .reply(id: 3, payload: .dictionary(bytes(5_000, 4))),
            .ping(7),
            .item(channel: 1, seq: 1, flags: 0, payload: bytes(6_000, 5)),
            .item(channel: 2, seq: 2, flags: 0, payload: bytes(6_000, 6)),
            .fileChunk(seq: 1, offset: 0, data: bytes(4_096, 7)),
            .fileChunk(seq: 1, offset: 4_096, data: bytes(4_096, 8)),
            .message(id: 4, wantsReply: false, payload: .dictionary(bytes(4_095, 9))),
            .message(id: 5, wantsReply: false, payload: .data(bytes(5_000, 10))),
        ]
        var stream: [UInt8] = []
        frames.forEach { FrameEncoder.encode($0, into: &stream) }
        FrameDecoderVerifier.verify(stream, expected: .frames(frames, pendingBytes: 0))
    }

    /// Reads `chunk` as a connection would: through readExpectedFrames when the decoder expects a
    /// frame. Returns the frames and whether the first one's payload is the memory read into.
    private func read(
        _ chunk: [UInt8], into decoder: inout FrameDecoder,
        stopAfter limit: Int = .max
    ) throws -> (frames: [Frame], inPlace: Bool) {
        var frames: [Frame] = []
        guard decoder.expectsFrame else {
            try chunk.withUnsafeBytes { raw in
                try decoder.decode(raw) {
                    frames.append($0); return frames.count < limit
                }
            }
            return (frames, false)
        }
        var rest = [UInt8](repeating: 0, count: 65_536)
        var lent: UnsafeMutableRawPointer?
        let count = rest.withUnsafeMutableBytes { rest in
            decoder.readExpectedFrames { parts in
                // The first frame's payload, when the read starts at a frame's start.
                lent = parts.count > 1 ? parts[1].baseAddress : nil
                // A short read here would be a readv that stopped early; the chunk always fits.
                return FrameDecoderVerifier.scatter(chunk, into: Array(parts) + [rest])
            }
        }
        XCTAssertEqual(count, chunk.count)
        try rest.withUnsafeBytes { rest in
            try decoder.decode(expectedFramesRead: chunk.count, rest: rest) {
                frames.append($0); return frames.count < limit
            }
        }
        let first: UnsafeRawPointer? =
            switch frames.first {
            case .message(_, _, let payload)?, .reply(_, let payload)?: payload.bytes.withUnsafeBytes { $0.baseAddress }
            case .item(_, _, _, let payload)?, .fileChunk(_, _, let payload)?: payload.withUnsafeBytes { $0.baseAddress }
            default: nil
            }
        return (frames, first != nil && first == UnsafeRawPointer(lent))
    }

    func testARepeatedLargeFrameIsReadIntoItsOwnPayload() throws {
        var decoder = FrameDecoder()
        XCTAssertFalse(decoder.expectsFrame)
        var expected: [Frame] = []
        var seen: [Frame] = []
        for id in 1...4 {
            let frame = Frame.message(id: UInt64(id), wantsReply: true, payload: .data(bytes(16_384, UInt8(id))))
            expected.append(frame)
            var chunk = FrameEncoder.encode(frame)
            if id == 4 {
                expected.append(.ping(9))
                FrameEncoder.encode(.ping(9), into: &chunk)
            }
            let (frames, inPlace) = try read(chunk, into: &decoder)
            seen += frames
            XCTAssertEqual(inPlace, id > 1, "frame \(id): the first is decoded from the buffer, the next ones in place")
            XCTAssertTrue(decoder.expectsFrame, "frame \(id)")
        }
        XCTAssertEqual(seen, expected)
        XCTAssertEqual(decoder.bufferedByteCount, 0)
    }

    /// A stream of frames like the expected one (one-way messages) is read in place however the
    /// reads cut it: several frames a read once the reads come full, a frame a read ended inside
    /// finished in place by the next, and a frame cut by a read of the buffer taken into place.
    func testAStreamOfLargeFramesIsReadInPlaceAcrossReads() throws {
        var generator = SeededGenerator(seed: 57)
        var decoder = FrameDecoder()
        let frames: [Frame] = (1...60).map { .message(id: UInt64($0), wantsReply: false, payload: .data(bytes(16_384, UInt8($0)))) }
        var stream: [UInt8] = []
        frames.forEach { FrameEncoder.encode($0, into: &stream) }
        var seen: [Frame] = []
        var lentMemory: [UnsafeRawBufferPointer] = []
        var mostFramesLent = 0
        var start = 0
        var reads = 0
        while start < stream.count {
            // Reads of a few bytes to several frames; the first one is read as any bytes are.
            let length = min(stream.count - start, reads < 3 ? 20_000 : Int.random(in: 1...140_000, using: &generator))
            let chunk = Array(stream[start..<start + length])
            start += length
            reads += 1
            guard decoder.expectsFrame else {
                try chunk.withUnsafeBytes { raw in
                    try decoder.decode(raw) {
                        seen.append($0); return true
                    }
                }
                continue
            }
            var rest = [UInt8](repeating: 0, count: 65_536)
            let count = rest.withUnsafeMutableBytes { rest in
                decoder.readExpectedFrames { parts in
                    lentMemory += parts.map { UnsafeRawBufferPointer($0) }
                    mostFramesLent = max(mostFramesLent, (parts.count + 1) / 2)
                    return FrameDecoderVerifier.scatter(chunk, into: Array(parts) + [rest])
                }
            }
            XCTAssertEqual(count, chunk.count)
            try rest.withUnsafeBytes { rest in
                try decoder.decode(expectedFramesRead: chunk.count, rest: rest) {
                    seen.append($0); return true
                }
            }
        }
        XCTAssertEqual(seen, frames)
        XCTAssertEqual(decoder.bufferedByteCount, 0)
        XCTAssertEqual(mostFramesLent, FrameDecoder.maximumExpectedFramesPerRead)
        // Every frame after the first two (read as any bytes) was read where the decoder lent.
        let inPlace = seen.dropFirst(2).filter { frame in
            guard case .message(_, _, let payload) = frame else { return false }
            return payload.bytes.withUnsafeBytes { bytes in
                lentMemory.contains { part in
                    part.baseAddress! >= bytes.baseAddress! && part.baseAddress! < bytes.baseAddress! + bytes.count
                }
            }
        }
        XCTAssertGreaterThan(inPlace.count, 50, "frames read in place")
    }

    /// The length prefix of the frame after a large one, cut between reads and over the
    /// limit, fails once its four bytes are in, as it does in the buffer.
    func testAnOversizedPrefixSplitAfterALargeFrameFailsWhenComplete() throws {
        var decoder = FrameDecoder(maximumFrameLength: 1 << 16)
        var chunk = FrameEncoder.encode(.message(id: 1, wantsReply: false, payload: .data(bytes(5_000, 1))))
        chunk += [0x33, 0x3A]
        let (frames, _) = try read(chunk, into: &decoder)
        XCTAssertEqual(frames.count, 1)
        XCTAssertEqual(decoder.bufferedByteCount, 2)
        XCTAssertThrowsError(try read([0x3B, 0x48], into: &decoder)) { error in
            XCTAssertEqual(error as? FrameDecodingError, .frameTooLarge(declared: 0x333A_3B48, maximum: 1 << 16))
        }
    }

    func testAFrameUnlikeTheExpectedOneIsDecodedFromTheSameBytes() throws {
        var decoder = FrameDecoder()
        let large = Frame.reply(id: 1, payload: .data(bytes(8_000, 1)))
        _ = try read(FrameEncoder.encode(large), into: &decoder)
        XCTAssertTrue(decoder.expectsFrame)
        // Small frames in place of the large one: they land in the head, the payload and the rest.
        let small: [Frame] = (0..<2_000).map { .messageAck(id: UInt64($0)) }
        var chunk: [UInt8] = []
        small.forEach { FrameEncoder.encode($0, into: &chunk) }
        var (frames, inPlace) = try read(chunk, into: &decoder)
        XCTAssertEqual(frames, small)
        XCTAssertFalse(inPlace)
        XCTAssertFalse(decoder.expectsFrame, "a wrong guess is not made again until the next large frame")
        // The same length with another type, and another length with the same type.
        _ = try read(FrameEncoder.encode(large), into: &decoder)
        let sameLength = Frame.message(id: 2, wantsReply: false, payload: .data(bytes(8_000, 2)))
        (frames, inPlace) = try read(FrameEncoder.encode(sameLength), into: &decoder)
        XCTAssertEqual(frames, [sameLength])
        XCTAssertFalse(inPlace)
        _ = try read(FrameEncoder.encode(large), into: &decoder)
        let longer = Frame.reply(id: 3, payload: .data(bytes(8_001, 3)))
        (frames, inPlace) = try read(FrameEncoder.encode(longer), into: &decoder)
        XCTAssertEqual(frames, [longer])
        XCTAssertFalse(inPlace)
        // A read that ends inside the expected frame: the rest completes it from the buffer.
        let split = Frame.reply(id: 4, payload: .data(bytes(8_001, 4)))
        let encoded = FrameEncoder.encode(split)
        (frames, _) = try read(Array(encoded[..<5_000]), into: &decoder)
        XCTAssertEqual(frames, [])
        XCTAssertEqual(decoder.bufferedByteCount, 5_000)
        (frames, _) = try read(Array(encoded[5_000...]), into: &decoder)
        XCTAssertEqual(frames, [split])
        XCTAssertEqual(decoder.bufferedByteCount, 0)
    }

    func testStoppingAfterAFrameReadInPlaceKeepsTheRestForLater() throws {
        var decoder = FrameDecoder()
        let frame = Frame.item(channel: 1, seq: 1, flags: 0, payload: bytes(10_000, 1))
        _ = try read(FrameEncoder.encode(frame), into: &decoder)
        let again = Frame.item(channel: 1, seq: 2, flags: 0, payload: bytes(10_000, 2))
        var chunk = FrameEncoder.encode(again)
        FrameEncoder.encode(.ping(1), into: &chunk)
        FrameEncoder.encode(.ping(2), into: &chunk)
        let (frames, inPlace) = try read(chunk, into: &decoder, stopAfter: 1)
        XCTAssertEqual(frames, [again])
        XCTAssertTrue(inPlace)
        var later: [Frame] = []
        while let next = try decoder.next() { later.append(next) }
        XCTAssertEqual(later, [.ping(1), .ping(2)])
    }

    func testAMalformedFrameInTheExpectedPlaceFailsAsAnywhereElse() throws {
        var decoder = FrameDecoder()
        _ = try read(FrameEncoder.encode(.message(id: 1, wantsReply: false, payload: .data(bytes(5_000, 1)))), into: &decoder)
        var bad = FrameEncoder.encode(.message(id: 2, wantsReply: false, payload: .data(bytes(5_000, 2))))
        bad[4 + 1 + 8] = 0x80
        XCTAssertThrowsError(try read(bad, into: &decoder)) { error in
            XCTAssertEqual(error as? FrameDecodingError, .malformed(type: 0x20, reason: "flags has unknown bits 0x80"))
        }
        XCTAssertFalse(decoder.expectsFrame)
        XCTAssertThrowsError(try decoder.next(), "the decoder stays failed")
    }
}
