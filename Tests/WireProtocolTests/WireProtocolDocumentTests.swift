import Foundation
import LinkCrypto
import WireProtocol
import XCTest

/// Decodes and re-encodes every hex vector of docs/wire-protocol.md.
final class WireProtocolDocumentTests: XCTestCase {
    struct Vector {
        var name: String
        var bytes: [UInt8]
    }

    static let expectedFrames: [String: Frame] = [
        "hello": .hello(Fixtures.phoneHello),
        "hello-watch": .hello(Fixtures.watchHello),
        "auth": .auth(proof: Fixtures.phoneProof),
        "auth-watch": .auth(proof: Fixtures.watchProof),
        "ready": .ready,
        "state": .state(SessionState(activationState: .activated, appState: .foreground, flags: [.isPaired, .isWatchAppInstalled])),
        "message": .message(id: 1, wantsReply: true, payload: .dictionary(Fixtures.pingPropertyList)),
        "message-data": .message(id: 2, wantsReply: false, payload: .data([0xDE, 0xAD, 0xBE, 0xEF])),
        "reply": .reply(id: 1, payload: .dictionary(Fixtures.okPropertyList)),
        "reply-data": .reply(id: 5, payload: .data([])),
        "message-error": .messageError(id: 3, code: UInt16(WCErrorCode.messageReplyTimedOut.rawValue), description: "reply timed out"),
        "message-ack": .messageAck(id: 2),
        "ping": .ping(0x0102_0304_0506_0708),
        "pong": .pong(0x0102_0304_0506_0708),
        "goaway": .goAway(code: GoAwayCode.authenticationFailed.rawValue, reason: "bad proof"),
        "item": .item(channel: 1, seq: 1, flags: 0, payload: Fixtures.okPropertyList),
        "item-complication": .item(channel: 1, seq: 2, flags: 0x01, payload: Fixtures.okPropertyList),
        "item-context": .item(channel: 2, seq: 0x0102_0304_0506_0708, flags: 0, payload: Fixtures.pingPropertyList),
        "ack": .ack(channel: 1, seq: 2),
        "ack-resume": .ack(channel: 2, seq: 0),
        "file-item": .item(channel: 3, seq: 1, flags: 0, payload: Fixtures.fileHeader.encoded()),
        "file-item-empty": .item(channel: 3, seq: 2, flags: 0, payload: Fixtures.emptyFileHeader.encoded()),
        "file-chunk": .fileChunk(seq: 1, offset: 0, data: Array("hello".utf8)),
        "file-chunk-ack": .fileChunkAck(seq: 1, flags: [], receivedOffset: 5, committedOffset: 0),
        "file-chunk-ack-resume": .fileChunkAck(seq: 7, flags: .resume, receivedOffset: 8_388_608, committedOffset: 8_388_608),
        "file-cancel": .fileCancel(seq: 1),
        "item-error": .itemError(channel: 1, seq: 4, code: UInt16(WCErrorCode.insufficientSpace.rawValue), description: "no room"),
        "clock-set": .clockSet(ClockSetting(round: 3, isManual: true, monotonicMilliseconds: 86_400_000, wallMilliseconds: 1_798_761_540_000)),
        "clock-set-system": .clockSet(ClockSetting(round: 0, isManual: false, monotonicMilliseconds: 5_000, wallMilliseconds: 1_798_761_540_000)),
        "clock-ack": .clockAck(round: 3, nextTimerInMilliseconds: 10_000),
        "clock-ack-idle": .clockAck(round: 4, nextTimerInMilliseconds: nil),
    ]

    static func documentURL(filePath: String = #filePath) -> URL {
        URL(fileURLWithPath: filePath)
            .deletingLastPathComponent()
            .appendingPathComponent("../../docs/wire-protocol.md")
            .standardized
    }

    /// Each "Vector `name`" line followed by a ```hex fenced block; `#` starts a comment.
    static func loadVectors() throws -> [Vector] {
        let text = try String(contentsOf: documentURL(), encoding: .utf8)
        var vectors: [Vector] = []
        var pendingName: String?
        var hexLines: [Substring]?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if var lines = hexLines {
                if trimmed == "```" {
                    let name = try XCTUnwrap(pendingName, "a hex block without a preceding Vector line")
                    let hex = lines.map { $0.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0] }.joined(separator: " ")
                    let digits = hex.filter { !$0.isWhitespace }
                    XCTAssertTrue(digits.allSatisfy(\.isHexDigit), "vector \(name) has a non-hex character")
                    vectors.append(Vector(name: name, bytes: Fixtures.bytes(hex)))
                    pendingName = nil
                    hexLines = nil
                } else {
                    lines.append(line)
                    hexLines = lines
                }
            } else if trimmed == "```hex" {
                hexLines = []
            } else if trimmed.hasPrefix("Vector `") {
                let afterPrefix = trimmed.dropFirst("Vector `".count)
                pendingName = String(afterPrefix.prefix { $0 != "`" })
            }
        }
        return vectors
    }

    func testEveryVectorDecodesToItsFrameAndEncodesBackIdentically() throws {
        let vectors = try Self.loadVectors()
        XCTAssertEqual(Set(vectors.map(\.name)), Set(Self.expectedFrames.keys), "the document and the test disagree on the vectors")
        XCTAssertEqual(vectors.count, Set(vectors.map(\.name)).count, "a vector name appears twice")
        for vector in vectors {
            let expected = try XCTUnwrap(Self.expectedFrames[vector.name])
            var decoder = FrameDecoder(maximumFrameLength: LinkProtocol.preHandshakeMaximumFrameLength)
            decoder.append(vector.bytes)
            XCTAssertEqual(try decoder.next(), expected, "vector \(vector.name)")
            XCTAssertEqual(decoder.bufferedByteCount, 0, "vector \(vector.name) has bytes after its frame")
            XCTAssertEqual(FrameEncoder.encode(expected), vector.bytes, "vector \(vector.name) re-encoded")
        }
    }

    func testTheVectorsCoverEveryFrameType() throws {
        let covered = Set(try Self.loadVectors().compactMap { Self.expectedFrames[$0.name]?.type })
        XCTAssertEqual(covered, Set(FrameType.allCases))
    }

    func testTheVectorsDecodeAsOneStreamSplitAnyWay() throws {
        let vectors = try Self.loadVectors()
        let stream = vectors.flatMap(\.bytes)
        let frames = try vectors.map { vector in
            try XCTUnwrap(Self.expectedFrames[vector.name], "the vector \(vector.name) of docs/wire-protocol.md has no expected frame in this test")
        }
        FrameDecoderVerifier.verify(stream, expected: .frames(frames, pendingBytes: 0))
    }

    func testTheAuthVectorsAreTheProofsOfTheHelloVectors() {
        XCTAssertEqual(
            PairingProof.compute(
                key: Fixtures.pairingKey, senderRole: .phone,
                senderNonce: Fixtures.phoneNonce, receiverNonce: Fixtures.watchNonce),
            Fixtures.phoneProof)
        XCTAssertEqual(
            PairingProof.compute(
                key: Fixtures.pairingKey, senderRole: .watch,
                senderNonce: Fixtures.watchNonce, receiverNonce: Fixtures.phoneNonce),
            Fixtures.watchProof)
    }

    func testTheFileHeadersOfTheVectorsDecode() throws {
        let vectors = Dictionary(uniqueKeysWithValues: try Self.loadVectors().map { ($0.name, $0.bytes) })
        for (name, header) in [("file-item", Fixtures.fileHeader), ("file-item-empty", Fixtures.emptyFileHeader)] {
            var decoder = FrameDecoder()
            decoder.append(try XCTUnwrap(vectors[name]))
            guard case .item(3, _, 0, let payload)? = try decoder.next() else { return XCTFail("\(name) is not an ITEM on channel 3") }
            XCTAssertEqual(try FileHeader(decoding: payload), header, name)
        }
        XCTAssertEqual(SHA256Digest.hash(Array("hello".utf8)), Fixtures.fileHeader.sha256)
        XCTAssertEqual(SHA256Digest.hash([]), Fixtures.emptyFileHeader.sha256)
    }

    func testTheDictionaryPayloadsOfTheVectorsDecode() throws {
        XCTAssertEqual(
            try PropertyListCodec.decodeDictionary(Fixtures.pingPropertyList),
            ["action": .string("ping"), "count": .integer(1), "urgent": .boolean(true)])
        XCTAssertEqual(try PropertyListCodec.decodeDictionary(Fixtures.okPropertyList), ["ok": .boolean(true)])
    }
}
