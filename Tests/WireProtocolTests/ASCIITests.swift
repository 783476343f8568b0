@testable import WireProtocol
import XCTest

final class ASCIITests: XCTestCase {
    func testFindsTheFirstNonASCIIByteAtEveryPositionAndAlignment() {
        for length in 0...40 {
            for offset in 0..<8 {
                let ascii = [UInt8](repeating: 0x61, count: offset + length)
                ascii.withUnsafeBytes { raw in
                    XCTAssertNil(ASCII.firstNonASCII(UnsafeRawBufferPointer(rebasing: raw[offset...])), "length \(length)")
                }
                for position in 0..<length {
                    var bytes = ascii
                    bytes[offset + position] = 0x80 | UInt8(position)
                    if position + 1 < length { bytes[offset + position + 1] = 0xFF }
                    bytes.withUnsafeBytes { raw in
                        XCTAssertEqual(ASCII.firstNonASCII(UnsafeRawBufferPointer(rebasing: raw[offset...])), position,
                                       "length \(length), offset \(offset)")
                    }
                    XCTAssertEqual(ASCII.firstNonASCIIByte(in: bytes[offset...]), 0x80 | UInt8(position))
                }
            }
        }
    }

    func testStrings() {
        XCTAssertTrue(ASCII.isASCII(""))
        XCTAssertTrue(ASCII.isASCII(String(repeating: "v", count: 1_631)))
        XCTAssertFalse(ASCII.isASCII(String(repeating: "v", count: 1_000) + "é"))
        XCTAssertFalse(ASCII.isASCII("🙂" + String(repeating: "v", count: 20)))
    }

    func testLongStringsRoundTripThroughTheBinaryPropertyList() throws {
        let ascii = String(repeating: "abcdefgh", count: 2_048)
        let mixed = String(repeating: "abcdefgh", count: 100) + "ü" + String(repeating: "x", count: 7)
        let encoded = try PropertyListCodec.encode(["a": .string(ascii), "m": .string(mixed)])
        XCTAssertEqual(try PropertyListCodec.decodeDictionary(encoded), ["a": .string(ascii), "m": .string(mixed)])
        // A non-ASCII byte inside an ASCII string object is refused, wherever it is.
        var damaged = try PropertyListCodec.encode(["a": .string(ascii)])
        let at = try XCTUnwrap(damaged.firstIndex(of: UInt8(ascii: "h")))
        damaged[at + 8 * 1_000] = 0xC3
        XCTAssertThrowsError(try PropertyListCodec.decodeDictionary(damaged)) { error in
            XCTAssertTrue("\(error)".contains("non-ASCII byte 0xC3"), "\(error)")
        }
    }
}
