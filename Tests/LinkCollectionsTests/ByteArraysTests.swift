import LinkCollections
import XCTest

final class ByteArraysTests: XCTestCase {
    /// `append(count:to:_:)` adds exactly `count` bytes after the ones there, written where the
    /// pointer says: into an empty array, one with room, one that must grow, and none at all.
    func testAppendWritesTheNewBytesAfterTheOld() {
        var bytes: [UInt8] = []
        ByteArrays.append(count: 3, to: &bytes) { base in
            for index in 0..<3 { base[index] = UInt8(index + 1) }
        }
        XCTAssertEqual(bytes, [1, 2, 3])
        bytes.reserveCapacity(64)
        let storage = bytes.withUnsafeBufferPointer { $0.baseAddress }
        ByteArrays.append(count: 2, to: &bytes) { base in
            base[0] = 0xAA
            base[1] = 0xBB
        }
        XCTAssertEqual(bytes, [1, 2, 3, 0xAA, 0xBB])
        XCTAssertEqual(bytes.withUnsafeBufferPointer { $0.baseAddress }, storage, "room there: the same storage")
        let before = bytes
        ByteArrays.append(count: 1_000, to: &bytes) { base in
            for index in 0..<1_000 { base[index] = UInt8(truncatingIfNeeded: index) }
        }
        XCTAssertEqual(Array(bytes.prefix(5)), before, "the old bytes moved with the array")
        XCTAssertEqual(bytes.count, 1_005)
        XCTAssertEqual(Array(bytes.suffix(1_000)), (0..<1_000).map { UInt8(truncatingIfNeeded: $0) })
        ByteArrays.append(count: 0, to: &bytes) { _ in }
        XCTAssertEqual(bytes.count, 1_005)
    }

    /// An array whose storage another array shares is copied first: the other keeps its bytes.
    func testAppendLeavesASharedArrayAlone() {
        var bytes: [UInt8] = [1, 2]
        bytes.reserveCapacity(16)
        let shared = bytes
        ByteArrays.append(count: 1, to: &bytes) { $0[0] = 3 }
        XCTAssertEqual(bytes, [1, 2, 3])
        XCTAssertEqual(shared, [1, 2])
    }
}
