import XCTest
@testable import LinkControl

final class LineFramerTests: XCTestCase {
    private func lines(_ outputs: [LineFramerOutput]) -> [String] {
        outputs.map { output in
            switch output {
            case .line(let bytes): return String(decoding: bytes, as: UTF8.self)
            case .tooLong(let length): return "<tooLong \(length)>"
            }
        }
    }

    private func feedAllAtOnce(_ bytes: [UInt8], limit: Int) -> [LineFramerOutput] {
        var framer = LineFramer(maximumLineLength: limit)
        framer.append(contentsOf: bytes)
        return drain(&framer)
    }

    private func feedByteByByte(_ bytes: [UInt8], limit: Int) -> [LineFramerOutput] {
        var framer = LineFramer(maximumLineLength: limit)
        var outputs: [LineFramerOutput] = []
        for byte in bytes {
            framer.append(contentsOf: [byte])
            outputs += drain(&framer)
            XCTAssertLessThanOrEqual(framer.bufferedByteCount, limit + 1)
        }
        return outputs
    }

    private func drain(_ framer: inout LineFramer) -> [LineFramerOutput] {
        var outputs: [LineFramerOutput] = []
        while let output = framer.next() { outputs.append(output) }
        return outputs
    }

    /// The lines `pieces` make when fed one after the other to the lending `append`, copied.
    private func feedLending(_ pieces: [[UInt8]], limit: Int) -> [LineFramerOutput] {
        var framer = LineFramer(maximumLineLength: limit)
        var outputs: [LineFramerOutput] = []
        for piece in pieces {
            piece.withUnsafeBytes { bytes in
                framer.append(bytes) { output in
                    outputs.append(LineFramerOutput(output))
                    return true
                }
            }
        }
        return outputs
    }

    func testLentLinesAreTheQueuedOnesWhateverTheChunking() {
        let stream = Array("one\ntwo\r\n\n\r\nthree\n123456789\n12345678\r\nfour".utf8)
        let expected = ["one", "two", "three", "<tooLong 9>", "12345678"]
        XCTAssertEqual(lines(feedAllAtOnce(stream, limit: 8)), expected)
        XCTAssertEqual(lines(feedLending([stream], limit: 8)), expected)
        XCTAssertEqual(lines(feedLending(stream.map { [$0] }, limit: 8)), ["one", "two", "three", "<tooLong 9>", "12345678"])
        for split in 0...stream.count {
            XCTAssertEqual(lines(feedLending([Array(stream[..<split]), Array(stream[split...])], limit: 8)), expected, "split at \(split)")
        }
    }

    func testALineRefusedEndsTheFeeding() {
        var framer = LineFramer()
        var seen: [String] = []
        Array("a\nb\nc\n".utf8).withUnsafeBytes { bytes in
            framer.append(bytes) { output in
                guard case .line(let line) = output else {
                    XCTFail("\(output)")
                    return false
                }
                seen.append(String(decoding: line, as: UTF8.self))
                return seen.count < 2
            }
        }
        XCTAssertEqual(seen, ["a", "b"], "nothing after the refused line is handed over")
    }

    func testSplitsLinesTheSameWayWhateverTheChunking() {
        let stream = Array("one\ntwo\r\n\n\r\nthree\nfour".utf8)
        let expected = ["one", "two", "three"]
        XCTAssertEqual(lines(feedAllAtOnce(stream, limit: 100)), expected)
        XCTAssertEqual(lines(feedByteByByte(stream, limit: 100)), expected)
        for split in 0...stream.count {
            var framer = LineFramer(maximumLineLength: 100)
            framer.append(contentsOf: Array(stream[..<split]))
            var outputs = drain(&framer)
            framer.append(contentsOf: Array(stream[split...]))
            outputs += drain(&framer)
            XCTAssertEqual(lines(outputs), expected, "split at \(split)")
            XCTAssertEqual(framer.bufferedByteCount, 4)
        }
    }

    func testLinesAtTheLimit() {
        let stream = Array("12345\n123456\n1234\r\n12345\r\nabc\n".utf8)
        XCTAssertEqual(lines(feedAllAtOnce(stream, limit: 5)), ["12345", "<tooLong 6>", "1234", "12345", "abc"])
        XCTAssertEqual(lines(feedByteByByte(stream, limit: 5)), ["12345", "<tooLong 6>", "1234", "12345", "abc"])
    }

    func testTooLongLineIsReportedOnceAndDiscarded() {
        let stream = Array((String(repeating: "x", count: 50) + "\nok\n").utf8)
        let byteByByte = feedByteByByte(stream, limit: 8)
        XCTAssertEqual(lines(byteByByte), ["<tooLong 10>", "ok"])
        XCTAssertEqual(lines(feedAllAtOnce(stream, limit: 8)), ["<tooLong 50>", "ok"])

        var framer = LineFramer(maximumLineLength: 8)
        framer.append(contentsOf: Array(String(repeating: "y", count: 20).utf8))
        XCTAssertEqual(lines(drain(&framer)), ["<tooLong 20>"])
        XCTAssertTrue(framer.isDiscarding)
        XCTAssertEqual(framer.bufferedByteCount, 0)
        framer.append(contentsOf: Array(String(repeating: "y", count: 20).utf8))
        XCTAssertEqual(drain(&framer), [])
        framer.append(contentsOf: Array("yy\n{\"id\":1}\n".utf8))
        XCTAssertEqual(lines(drain(&framer)), ["{\"id\":1}"])
        XCTAssertFalse(framer.isDiscarding)
    }

    func testTenMebibyteLineThenAValidRequest() throws {
        var framer = LineFramer()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 64 * 1024)
        var outputs: [LineFramerOutput] = []
        for _ in 0..<160 {
            framer.append(contentsOf: chunk)
            outputs += drain(&framer)
            XCTAssertLessThanOrEqual(framer.bufferedByteCount, (1 << 20) + 1)
        }
        framer.append(contentsOf: Array("\n{\"id\": 2, \"op\": \"status\"}\n".utf8))
        outputs += drain(&framer)
        XCTAssertEqual(outputs.count, 2)
        guard case .tooLong(let length) = outputs[0] else { return XCTFail("\(outputs[0])") }
        XCTAssertGreaterThan(length, 1 << 20)
        guard case .line(let line) = outputs[1] else { return XCTFail("\(outputs[1])") }
        XCTAssertEqual(try ControlCodec.parseRequest(line: line).get(), ControlRequest(id: 2, op: "status"))
    }

    func testTenMebibyteLineAllAtOnce() {
        var stream = [UInt8](repeating: UInt8(ascii: "b"), count: 10 << 20)
        stream += Array("\nnext\n".utf8)
        XCTAssertEqual(lines(feedAllAtOnce(stream, limit: 1 << 20)), ["<tooLong \(10 << 20)>", "next"])
    }
}
