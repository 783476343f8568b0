import LinkCrypto
import WireProtocol
import XCTest

/// The file transfer frames and the file header: malformed bodies are refused naming the
/// field, valid ones at their limits decode; SHA-256 fed in pieces.
final class FileFrameTests: XCTestCase {
    private let seq: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 7]
    private func u64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    func testMalformedFileChunk() {
        assertMalformed(.fileChunk, [0, 0, 0], "body ends inside seq: needs 8 bytes, 3 left")
        assertMalformed(.fileChunk, seq + [0, 0], "body ends inside offset: needs 8 bytes, 2 left")
        assertMalformed(.fileChunk, seq + u64(0), "data is empty: a chunk carries at least 1 byte")
        assertMalformed(
            .fileChunk, seq + u64(UInt64(Int64.max) + 1) + [1],
            "offset is 9223372036854775808, above the largest file size 9223372036854775807")
        assertMalformed(
            .fileChunk, seq + u64(UInt64(Int64.max)) + [1],
            "offset 9223372036854775807 + 1 byte of data ends past byte 9223372036854775807")
    }

    func testMalformedFileChunkAck() {
        let valid = seq + [0x01] + u64(10) + u64(4)
        FrameDecoderVerifier.verify(
            rawFrame(0x43, valid),
            expected: .frames(
                [
                    .fileChunkAck(seq: 7, flags: .resume, receivedOffset: 10, committedOffset: 4)
                ], pendingBytes: 0))
        assertMalformed(.fileChunkAck, seq, "body ends inside flags: needs 1 byte, 0 left")
        assertMalformed(.fileChunkAck, seq + [0x04] + u64(1) + u64(0), "flags has unknown bits 0x04")
        assertMalformed(.fileChunkAck, seq + [0] + u64(1), "body ends inside committedOffset: needs 8 bytes, 0 left")
        assertMalformed(.fileChunkAck, seq + [0] + u64(1) + u64(2), "committedOffset 2 is above receivedOffset 1")
        assertMalformed(.fileChunkAck, valid + [0], "1 trailing byte after committedOffset")
        assertMalformed(
            .fileChunkAck, seq + [0] + u64(.max) + u64(0),
            "receivedOffset is 18446744073709551615, above the largest file size 9223372036854775807")
    }

    func testMalformedFileCancel() {
        assertMalformed(.fileCancel, [1, 2], "body ends inside seq: needs 8 bytes, 2 left")
        assertMalformed(.fileCancel, seq + [0], "1 trailing byte after seq")
    }

    func testMalformedItemError() {
        let code: [UInt8] = [0x1B, 0x67]
        assertMalformed(.itemError, [0] + seq + code + [0, 0], "channel is 0, must be 1...255")
        assertMalformed(.itemError, [1] + seq + [0x1B], "body ends inside code: needs 2 bytes, 1 left")
        assertMalformed(.itemError, [1] + seq + code + [0, 2, 0x41], "body ends inside description: needs 2 bytes, 1 left")
        assertMalformed(.itemError, [1] + seq + code + [0, 0, 9], "1 trailing byte after description")
        XCTAssertFalse(FrameType.itemError.isAllowedBeforeHandshake)
    }

    func testFileFramesAreRefusedBeforeTheHandshake() {
        XCTAssertFalse(FrameType.fileChunk.isAllowedBeforeHandshake)
        XCTAssertFalse(FrameType.fileChunkAck.isAllowedBeforeHandshake)
        XCTAssertFalse(FrameType.fileCancel.isAllowedBeforeHandshake)
    }

    func testAChunkAsLargeAsAFrameAllows() {
        let data = [UInt8](repeating: 0x5A, count: Int(FrameDecoder.defaultMaximumFrameLength) - 1 - 16)
        let frame = Frame.fileChunk(seq: 1, offset: 0, data: data)
        XCTAssertEqual(FrameEncoder.encodedLength(of: frame), 4 + Int(FrameDecoder.defaultMaximumFrameLength))
        let stream = FrameEncoder.encode(frame) + FrameEncoder.encode(.fileCancel(seq: 1))
        let chunks = stride(from: 0, to: stream.count, by: 4096).map { Array(stream[$0..<min($0 + 4096, stream.count)]) }
        XCTAssertEqual(
            FrameDecoderVerifier.feed(chunks, maximumFrameLength: FrameDecoder.defaultMaximumFrameLength, useRawPointers: false),
            .frames([frame, .fileCancel(seq: 1)], pendingBytes: 0))
        let tooLarge = Frame.fileChunk(seq: 1, offset: 0, data: data + [0])
        XCTAssertEqual(
            FrameDecoderVerifier.feed(
                [FrameEncoder.encode(tooLarge)], maximumFrameLength: FrameDecoder.defaultMaximumFrameLength,
                useRawPointers: false),
            .failed(
                framesBefore: [],
                .frameTooLarge(
                    declared: FrameDecoder.defaultMaximumFrameLength + 1,
                    maximum: FrameDecoder.defaultMaximumFrameLength)))
    }

    func testFileHeaderRoundTripsAndRefusesBadFields() throws {
        XCTAssertEqual(try FileHeader(decoding: Fixtures.fileHeader.encoded()), Fixtures.fileHeader)
        let encoded = Fixtures.fileHeader.encoded()
        assertHeaderRefused(Array(encoded.prefix(20)), "body ends inside file header sha256: needs 32 bytes, 12 left")
        assertHeaderRefused(
            u64(UInt64(Int64.max) + 1) + Array(encoded[8...]),
            "file header totalBytes is 9223372036854775808, above 9223372036854775807")
        XCTAssertEqual(
            try FileHeader(decoding: u64(UInt64(Int64.max)) + Array(encoded[8...])).totalBytes, 9_223_372_036_854_775_807,
            "a file of 2^63 - 1 bytes, the largest")
        let digest = Fixtures.fileHeader.sha256
        func header(transferId: [UInt8], name: [UInt8]) -> [UInt8] {
            u64(5) + digest + [0, UInt8(transferId.count)] + transferId + [0, UInt8(name.count)] + name
        }
        XCTAssertEqual(try FileHeader(decoding: header(transferId: Array("a.b_C-9".utf8), name: Array("ü.txt".utf8))).name, "ü.txt")
        assertHeaderRefused(header(transferId: [], name: [0x61]), "file header transferId length is 0, must be 1...64")
        // docs/wire-protocol.md: a transfer id of 1 to 64 bytes, a name of 1 to 200.
        let longestId = [UInt8](repeating: 0x61, count: 64), longestName = [UInt8](repeating: 0x62, count: 200)
        let longest = try FileHeader(decoding: header(transferId: longestId, name: longestName))
        XCTAssertEqual(longest.transferId.utf8.count, 64)
        XCTAssertEqual(longest.name.utf8.count, 200)
        assertHeaderRefused(header(transferId: longestId + [0x61], name: [0x61]), "file header transferId length is 65, must be 1...64")
        assertHeaderRefused(
            header(transferId: Array("../x".utf8), name: [0x61]),
            "file header transferId '../x' has a character other than letters, digits, '-', '_' and '.', or starts with '.'")
        assertHeaderRefused(
            header(transferId: Array("a/b".utf8), name: [0x61]),
            "file header transferId 'a/b' has a character other than letters, digits, '-', '_' and '.', or starts with '.'")
        assertHeaderRefused(
            header(transferId: [0x61], name: Array("a/b".utf8)),
            "file header name 'a/b' is not a plain file name (no '/', no NUL, not '.' or '..')")
        assertHeaderRefused(
            header(transferId: [0x61], name: Array("..".utf8)),
            "file header name '..' is not a plain file name (no '/', no NUL, not '.' or '..')")
        assertHeaderRefused(
            header(transferId: [0x61], name: [0x61, 0]),
            "file header name 'a\0' is not a plain file name (no '/', no NUL, not '.' or '..')")
        assertHeaderRefused(
            header(transferId: [0x61], name: Array(repeating: 0x61, count: 201)),
            "file header name length is 201, must be 1...200")
        assertHeaderRefused(header(transferId: [0x61], name: [0xFF]), "file header name is not valid UTF-8")
    }

    /// NIST FIPS 180-2 example "abc", and the one-million-"a" message fed in uneven pieces.
    func testSHA256MatchesKnownDigestsFedAnyWay() {
        XCTAssertEqual(
            SHA256Digest.hash(Array("abc".utf8)),
            Fixtures.bytes("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"))
        let digest = SHA256Digest()
        var fed = 0
        var size = 1
        while fed < 1_000_000 {
            let count = min(size, 1_000_000 - fed)
            digest.update([UInt8](repeating: 0x61, count: count))
            fed += count
            size = size * 3 + 1
        }
        XCTAssertEqual(digest.byteCountHashed, 1_000_000)
        XCTAssertEqual(digest.finalize(), Fixtures.bytes("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"))
    }

    // MARK: - Helpers

    private func rawFrame(_ type: UInt8, _ body: [UInt8]) -> [UInt8] {
        u32(UInt32(body.count + 1)) + [type] + body
    }

    private func u32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    private func assertMalformed(
        _ type: FrameType, _ body: [UInt8], _ reason: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        FrameDecoderVerifier.verify(
            rawFrame(type.rawValue, body),
            expected: .failed(framesBefore: [], .malformed(type: type.rawValue, reason: reason)),
            file: file, line: line)
    }

    private func assertHeaderRefused(_ bytes: [UInt8], _ reason: String, file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try FileHeader(decoding: bytes), file: file, line: line) { error in
            XCTAssertEqual(error as? FrameDecodingError, .malformed(type: FrameType.item.rawValue, reason: reason), file: file, line: line)
        }
    }
}
