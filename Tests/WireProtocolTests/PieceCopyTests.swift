import WireProtocol
import XCTest

final class PieceCopyTests: XCTestCase {
    private let sizes = [0, 1, 2047, 2048, 2049, 4096, 16_384 + 14, 70_000]

    func testCopyAndArrayGiveTheSourceBytes() {
        for size in sizes {
            let source = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            source.withUnsafeBytes { raw in
                XCTAssertEqual(PieceCopy.array(raw), source, "array of \(size)")
                var destination = [UInt8](repeating: 0xEE, count: size + 2)
                destination.withUnsafeMutableBytes { PieceCopy.copy(raw, to: $0.baseAddress! + 1) }
                XCTAssertEqual(Array(destination[1..<(size + 1)]), source, "copy of \(size)")
                XCTAssertEqual(destination.first, 0xEE, "nothing written before")
                XCTAssertEqual(destination.last, 0xEE, "nothing written after")
            }
        }
    }

    func testAppendKeepsWhatWasThere() {
        for size in sizes {
            let source = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13) }
            var array: [UInt8] = [1, 2, 3]
            source.withUnsafeBytes { PieceCopy.append($0, to: &array) }
            XCTAssertEqual(array, [1, 2, 3] + source, "append of \(size)")
        }
    }
}
