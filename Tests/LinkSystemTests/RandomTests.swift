import LinkSystem
import XCTest

final class RandomTests: XCTestCase {
    /// `getrandom(2)` fills the whole buffer, and two fills differ.
    func testFillRandomFillsTheWholeBuffer() {
        var first = [UInt8](repeating: 0, count: 70_000)
        var second = first
        first.withUnsafeMutableBytes { SystemCalls.fillRandom($0) }
        second.withUnsafeMutableBytes { SystemCalls.fillRandom($0) }
        XCTAssertNotEqual(first, second)
        // Every 4 KiB piece got bytes (a short read left unfilled would stay zero).
        for start in stride(from: 0, to: first.count, by: 4096) {
            XCTAssertTrue(first[start..<min(start + 4096, first.count)].contains { $0 != 0 }, "piece at \(start)")
        }
    }
}
