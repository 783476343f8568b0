import TestSupport
import WireProtocol
import XCTest

/// CLOCK_SET and CLOCK_ACK (docs/wire-protocol.md): their bodies at the limits, and every way
/// one is malformed.
final class ClockFrameTests: XCTestCase {
    func testClockFramesRoundTripAtTheirLimits() {
        let frames: [Frame] = [
            .clockSet(ClockSetting(round: 1, isManual: true, monotonicMilliseconds: UInt64(Int64.max), wallMilliseconds: ClockSetting.maximumWallMilliseconds)),
            .clockSet(ClockSetting(round: .max, isManual: false, monotonicMilliseconds: 0, wallMilliseconds: 0)),
            .clockAck(round: 2, nextTimerInMilliseconds: UInt64(Int64.max)),
            .clockAck(round: 2, nextTimerInMilliseconds: 0),
            .clockAck(round: 2, nextTimerInMilliseconds: nil),
        ]
        for frame in frames {
            let bytes = FrameEncoder.encode(frame)
            XCTAssertEqual(bytes.count, FrameEncoder.encodedLength(of: frame))
            FrameDecoderVerifier.verify(bytes, expected: .frames([frame], pendingBytes: 0))
        }
        XCTAssertEqual(FrameEncoder.encode(frames[0]).count, 4 + 1 + 25)
        XCTAssertEqual(FrameEncoder.encode(frames[2]).count, 4 + 1 + 17)
        XCTAssertFalse(FrameType.clockSet.isAllowedBeforeHandshake)
        XCTAssertFalse(FrameType.clockAck.isAllowedBeforeHandshake)
    }

    func testMalformedClockSet() {
        let round: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 3]
        let monotonic: [UInt8] = [0, 0, 0, 0, 0x05, 0x26, 0x5C, 0x00]
        let wall: [UInt8] = [0, 0, 0x01, 0xA2, 0xCE, 0x8A, 0xE9, 0xA0]
        assertMalformed(.clockSet, [], "body ends inside round: needs 8 bytes, 0 left")
        assertMalformed(.clockSet, round, "body ends inside flags: needs 1 byte, 0 left")
        assertMalformed(.clockSet, round + [1] + monotonic, "body ends inside wallMs: needs 8 bytes, 0 left")
        assertMalformed(.clockSet, round + [0x02] + monotonic + wall, "flags has unknown bits 0x02")
        assertMalformed(.clockSet, round + [0x81] + monotonic + wall, "flags has unknown bits 0x80")
        assertMalformed(.clockSet, round + [1] + monotonic + wall + [0], "1 trailing byte after wallMs")
        assertMalformed(
            .clockSet, round + [1] + [0x80, 0, 0, 0, 0, 0, 0, 0] + wall,
            "monotonicMs is 9223372036854775808, above 9223372036854775807")
        assertMalformed(
            .clockSet, round + [1] + monotonic + [0x00, 0x00, 0xE6, 0x77, 0xD2, 0x1F, 0xDC, 0x00],
            "wallMs is 253402300800000, after 9999-12-31T23:59:59.999Z (253402300799999)")
    }

    func testMalformedClockAck() {
        let round: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 3]
        assertMalformed(.clockAck, [0, 0, 0], "body ends inside round: needs 8 bytes, 3 left")
        assertMalformed(.clockAck, round + [1], "body ends inside nextTimerInMs: needs 8 bytes, 0 left")
        assertMalformed(.clockAck, round + [0x04] + [0, 0, 0, 0, 0, 0, 0, 0], "flags has unknown bits 0x04")
        assertMalformed(.clockAck, round + [0] + [0, 0, 0, 0, 0, 0, 0x27, 0x10], "nextTimerInMs is 10000 without the hasTimer flag (must be 0)")
        assertMalformed(
            .clockAck, round + [1] + [0xFF, 0, 0, 0, 0, 0, 0, 0], "nextTimerInMs is 18374686479671623680, above 9223372036854775807")
        assertMalformed(.clockAck, round + [1] + [0, 0, 0, 0, 0, 0, 0, 1] + [9, 9], "2 trailing bytes after nextTimerInMs")
    }

    // MARK: - Helpers

    private func assertMalformed(
        _ type: FrameType, _ body: [UInt8], _ reason: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        let length = UInt32(1 + body.count)
        let bytes = withUnsafeBytes(of: length.bigEndian) { Array($0) } + [type.rawValue] + body
        FrameDecoderVerifier.verify(
            bytes, expected: .failed(framesBefore: [], .malformed(type: type.rawValue, reason: reason)),
            file: file, line: line)
    }
}
