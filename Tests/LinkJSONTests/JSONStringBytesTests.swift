import CByteScan
import LinkJSON
import XCTest

final class JSONStringBytesTests: XCTestCase {
    /// The scan stops at the first byte that is not plain wherever it is (in a 32-byte block,
    /// in a word, in the bytes after the last word) and whatever the start: checked against a
    /// byte-by-byte scan for each byte that stops it and for bytes that do not, both with
    /// non-ASCII bytes plain (writing) and not (parsing).
    func testStopsWhereAByteByByteScanStops() {
        let stoppers: [UInt8] = [UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x00, 0x0A, 0x1F, 0x80, 0xC3, 0xFF]
        let plain: [UInt8] = [0x20, 0x21, 0x23, 0x5B, 0x5D, 0x7E, 0x7F]
        var checked = 0
        for length in Array(0...40) + [63, 64, 65, 71, 72, 96, 97, 130] {
            for start in [0, 1, 7, 8, 9, 31, 33] where start <= length {
                for place in start..<max(start, length) {
                    for special in stoppers + plain {
                        var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                        bytes[place] = special
                        for nonASCIIIsPlain in [true, false] {
                            bytes.withUnsafeBufferPointer { buffer in
                                let expected = Self.firstStop(buffer, from: start, nonASCIIIsPlain: nonASCIIIsPlain)
                                let skipped = JSONStringBytes.skipPlainWords(buffer, from: start, nonASCIIIsPlain: nonASCIIIsPlain)
                                // It stops at the byte, or leaves fewer than eight for the caller
                                // to look at one by one, never past the byte.
                                XCTAssertLessThanOrEqual(skipped, expected)
                                XCTAssertTrue(
                                    skipped == expected || length - skipped < 8,
                                    "\(special) at \(place) of \(length) from \(start): \(skipped), not \(expected)")
                                XCTAssertEqual(Self.firstStop(buffer, from: skipped, nonASCIIIsPlain: nonASCIIIsPlain), expected)
                                checked += 1
                            }
                        }
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 100_000)
    }

    /// The same for the whole scan, words and then vectors, in AVX2 and in SSE2 (CByteScan
    /// picks AVX2 where the CPU has it): lengths around the vectors' steps (16, 32, 128 bytes),
    /// each stopper in each place, from several starts. A run of 64 bytes or more (four words,
    /// then at least one vector) is scanned to the exact byte, as is any run CByteScan reads.
    func testTheVectorsStopWhereAByteByByteScanStopsInEitherVectorWidth() {
        let stoppers: [UInt8] = [UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x00, 0x1F, 0x80, 0xFF]
        let plain: [UInt8] = [0x20, 0x7F, 0x5D]
        let hadAVX2 = wl_byte_scan_use_avx2(1)
        defer { wl_byte_scan_use_avx2(hadAVX2) }
        var checked = 0
        for useAVX2: Int32 in [1, 0] {
            wl_byte_scan_use_avx2(useAVX2)
            for length in [17, 31, 32, 33, 48, 64, 95, 96, 97, 127, 128, 129, 160, 191, 192, 200, 300] {
                for start in [0, 1, 5, 33] where start <= length {
                    for place in Array(start..<length).filter({ $0 % 3 == 0 || $0 >= length - 40 }) + [length] {
                        for special in stoppers + plain {
                            var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                            if place < length { bytes[place] = special }
                            for nonASCIIIsPlain in [true, false] {
                                bytes.withUnsafeBufferPointer { buffer in
                                    let expected = Self.firstStop(buffer, from: start, nonASCIIIsPlain: nonASCIIIsPlain)
                                    let skipped = JSONStringBytes.skipPlain(buffer, from: start, nonASCIIIsPlain: nonASCIIIsPlain)
                                    XCTAssertLessThanOrEqual(skipped, expected, "avx2 \(useAVX2)")
                                    XCTAssertTrue(
                                        skipped == expected || (length - start < 64 && length - skipped < 8),
                                        "avx2 \(useAVX2): \(special) at \(place) of \(length) from \(start): \(skipped), not \(expected)")
                                    let vectors = wl_skip_plain(buffer.baseAddress!, start, length, nonASCIIIsPlain ? 1 : 0)
                                    XCTAssertEqual(vectors, expected, "avx2 \(useAVX2): \(special) at \(place) of \(length) from \(start)")
                                    checked += 1
                                }
                            }
                        }
                    }
                }
            }
        }
        XCTAssertGreaterThan(checked, 50_000)
    }

    private static func firstStop(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, nonASCIIIsPlain: Bool) -> Int {
        var index = start
        while index < bytes.count {
            let byte = bytes[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || (!nonASCIIIsPlain && byte >= 0x80) { break }
            index += 1
        }
        return index
    }
}
