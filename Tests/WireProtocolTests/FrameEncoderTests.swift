import WireProtocol
import XCTest

final class FrameEncoderTests: XCTestCase {
    func testEncodeAppendsToExistingBytes() {
        var buffer: [UInt8] = [0xAA, 0xBB]
        FrameEncoder.encode(.pong(1), into: &buffer)
        XCTAssertEqual(buffer, [0xAA, 0xBB, 0, 0, 0, 9, 0x31, 0, 0, 0, 0, 0, 0, 0, 1])
    }

    func testEncodedLengthMatchesTheBytes() {
        for frame in Fixtures.sampleFrames {
            XCTAssertEqual(FrameEncoder.encodedLength(of: frame), FrameEncoder.encode(frame).count, "\(frame.type.name)")
        }
    }

    func testDetachedPayloadFollowedByTheRestIsTheWholeFrame() {
        let big = (0..<5_000).map { UInt8(truncatingIfNeeded: $0) }
        let frames: [Frame] =
            Fixtures.sampleFrames + [
                .message(id: 7, wantsReply: true, payload: .data(big)),
                .reply(id: 8, payload: .dictionary(big)),
                .item(channel: 1, seq: 9, flags: 0, payload: big),
                .fileChunk(seq: 10, offset: 1 << 20, data: big),
            ]
        for frame in frames {
            var head: [UInt8] = [0xAA]
            let detached = FrameEncoder.encode(frame, into: &head, detachingPayloadOfAtLeast: 4_096)
            XCTAssertEqual(head + (detached ?? []), [0xAA] + FrameEncoder.encode(frame), "\(frame.type.name)")
            let trailing: [UInt8]?
            switch frame {
            case .message(_, _, let payload), .reply(_, let payload): trailing = payload.bytes
            case .item(_, _, _, let payload): trailing = payload
            case .fileChunk(_, _, let data): trailing = data
            default: trailing = nil
            }
            XCTAssertEqual(detached, (trailing?.count ?? 0) >= 4_096 ? trailing : nil, "\(frame.type.name)")
        }
    }

    func testMessageFlags() {
        let flagsOffset = 4 + 1 + 8
        XCTAssertEqual(FrameEncoder.encode(.message(id: 0, wantsReply: false, payload: .dictionary([])))[flagsOffset], 0x00)
        XCTAssertEqual(FrameEncoder.encode(.message(id: 0, wantsReply: true, payload: .dictionary([])))[flagsOffset], 0x01)
        XCTAssertEqual(FrameEncoder.encode(.message(id: 0, wantsReply: false, payload: .data([])))[flagsOffset], 0x02)
        XCTAssertEqual(FrameEncoder.encode(.message(id: 0, wantsReply: true, payload: .data([])))[flagsOffset], 0x03)
        XCTAssertEqual(FrameEncoder.encode(.reply(id: 0, payload: .data([])))[flagsOffset], 0x02)
    }

    func testItemAndAckLayout() {
        let item = FrameEncoder.encode(.item(channel: 2, seq: 0x0102_0304_0506_0708, flags: 0x01, payload: [0xAA, 0xBB]))
        XCTAssertEqual(item, [0, 0, 0, 13, 0x40, 0x02, 1, 2, 3, 4, 5, 6, 7, 8, 0x01, 0xAA, 0xBB])
        let ack = FrameEncoder.encode(.ack(channel: 1, seq: 258))
        XCTAssertEqual(ack, [0, 0, 0, 10, 0x41, 0x01, 0, 0, 0, 0, 0, 0, 1, 2])
    }

    func testLongStringsAreCutAtAScalarBoundary() throws {
        let reason = String(repeating: "é", count: 40_000)
        var decoder = FrameDecoder()
        decoder.append(FrameEncoder.encode(.goAway(code: 1, reason: reason)))
        XCTAssertEqual(try decoder.next(), .goAway(code: 1, reason: String(repeating: "é", count: 32_767)))

        let deviceId = String(repeating: "a", count: 254) + "€"
        XCTAssertFalse(Hello.isValid(deviceId: deviceId))
        decoder.append(FrameEncoder.encode(.hello(Hello(role: .phone, deviceId: deviceId, nonce: Fixtures.phoneNonce))))
        guard case .hello(let hello)? = try decoder.next() else { return XCTFail("expected a HELLO") }
        XCTAssertEqual(hello.deviceId, String(repeating: "a", count: 254))
    }

    func testDeviceIdValidity() {
        XCTAssertFalse(Hello.isValid(deviceId: ""))
        XCTAssertTrue(Hello.isValid(deviceId: "w"))
        XCTAssertTrue(Hello.isValid(deviceId: String(repeating: "x", count: 255)))
        XCTAssertFalse(Hello.isValid(deviceId: String(repeating: "x", count: 256)))
    }

    func testHelloDefaultsToThisBuildsVersions() {
        let hello = Hello(role: .watch, deviceId: "w", nonce: Fixtures.watchNonce)
        XCTAssertEqual(hello.minVersion, LinkProtocol.minVersion)
        XCTAssertEqual(hello.maxVersion, LinkProtocol.maxVersion)
    }
}
