import CByteScan
@testable import WireProtocol
import XCTest

final class ASCIITests: XCTestCase {
    /// In AVX2 and in SSE2 vectors (CByteScan picks AVX2 where the CPU has it).
    func testFindsTheFirstNonASCIIByteAtEveryPositionAndAlignment() {
        let hadAVX2 = wl_byte_scan_use_avx2(1)
        defer { wl_byte_scan_use_avx2(hadAVX2) }
        for useAVX2: Int32 in [1, 0] {
            wl_byte_scan_use_avx2(useAVX2)
            findsTheFirstNonASCIIByteAtEveryPositionAndAlignment()
        }
    }

    private func findsTheFirstNonASCIIByteAtEveryPositionAndAlignment() {
        // Short lengths through the 8-byte and byte steps; around the vectors' steps (16, 32,
        // 64 and 128 bytes) and the switch to vectors at 64.
        for length in Array(0...40) + [47, 48, 63, 64, 65, 95, 96, 127, 128, 129, 135, 136, 159, 160, 255, 256, 263, 300] {
            for offset in 0..<8 {
                let ascii = [UInt8](repeating: 0x61, count: offset + length)
                ascii.withUnsafeBytes { raw in
                    XCTAssertNil(ASCII.firstNonASCII(UnsafeRawBufferPointer(rebasing: raw[offset...])), "length \(length)")
                }
                for position in 0..<length {
                    var bytes = ascii
                    bytes[offset + position] = 0x80 | UInt8(position & 0x7F)
                    if position + 1 < length { bytes[offset + position + 1] = 0xFF }
                    bytes.withUnsafeBytes { raw in
                        XCTAssertEqual(
                            ASCII.firstNonASCII(UnsafeRawBufferPointer(rebasing: raw[offset...])), position,
                            "length \(length), offset \(offset)")
                    }
                    XCTAssertEqual(ASCII.firstNonASCIIByte(in: bytes[offset...]), 0x80 | UInt8(position & 0x7F))
                }
            }
        }
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

    /// Every way a non-ASCII byte can sit in an ASCII string object is refused: each byte
    /// value alone, valid UTF-8 of two, three and four bytes, and invalid sequences that a
    /// UTF-8 decoder would repair into one U+FFFD of the same length, in short (inline) and
    /// long strings, at the start, the middle and the end.
    func testEveryNonASCIIContentOfAnASCIIStringIsRefused() throws {
        var insertions: [[UInt8]] = (0x80...0xFF).map { [UInt8($0)] }
        insertions += [Array("é".utf8), Array("€".utf8), Array("🙂".utf8), [0xF1, 0x80, 0x80], [0xE1, 0x80], [0xED, 0xA0, 0x80], [0xC0, 0xAF]]
        for insertion in insertions {
            for length in [0, 5, 14, 40, 1_000] {
                for position in Set([0, length / 2, length]) {
                    var content = Array(repeating: UInt8(ascii: "a"), count: length)
                    content.insert(contentsOf: insertion, at: position)
                    guard content.count < 15 else {
                        // A long count follows 0x5F as an integer object of one or two bytes.
                        let count = content.count
                        let marker: [UInt8] = count < 256 ? [0x5F, 0x10, UInt8(count)] : [0x5F, 0x11, UInt8(count >> 8), UInt8(count & 0xFF)]
                        try assertRefused(marker + content, insertion, position)
                        continue
                    }
                    try assertRefused([0x50 | UInt8(content.count)] + content, insertion, position)
                }
            }
        }
    }

    private func assertRefused(_ stringObject: [UInt8], _ insertion: [UInt8], _ position: Int) throws {
        // A dictionary {"k": <the string>}: objects 0 (the dictionary), 1 (key), 2 (value).
        var list = Array("bplist00".utf8)
        var offsets: [Int] = []
        offsets.append(list.count); list += [0xD1, 1, 2]
        offsets.append(list.count); list += [0x51, UInt8(ascii: "k")]
        offsets.append(list.count); list += stringObject
        let table = list.count
        for offset in offsets { list += [UInt8(offset >> 8), UInt8(offset & 0xFF)] }
        list += [0, 0, 0, 0, 0, 0, 2, 1]
        list += [0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0]
        list += (0..<8).map { UInt8(truncatingIfNeeded: table >> (8 * (7 - $0))) }
        XCTAssertThrowsError(try PropertyListCodec.decodeDictionary(list), "\(insertion) at \(position)") { error in
            XCTAssertTrue("\(error)".contains("non-ASCII byte 0x\(String(insertion[0], radix: 16, uppercase: true))"), "\(error)")
        }
    }
}
