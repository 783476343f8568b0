import LinkCollections
import XCTest

final class ArrayEmptyingTests: XCTestCase {
    private final class Counter { var alive = 0 }

    private final class Tracked {
        let counter: Counter
        init(_ counter: Counter) { self.counter = counter; counter.alive += 1 }
        deinit { counter.alive -= 1 }
    }

    /// Every element is removed and released; the storage stays for the next elements.
    func testEmptiesReleasesAndKeepsTheStorage() {
        let counter = Counter()
        var list: [Tracked] = []
        list.reserveCapacity(8)
        let storage = list.withUnsafeBufferPointer { $0.baseAddress }
        for count in [0, 1, 2, 8] {
            for _ in 0..<count { list.append(Tracked(counter)) }
            XCTAssertEqual(counter.alive, count)
            list.removeAllKeepingStorage()
            XCTAssertTrue(list.isEmpty)
            XCTAssertEqual(counter.alive, 0, "released")
            XCTAssertGreaterThanOrEqual(list.capacity, 8)
            XCTAssertEqual(list.withUnsafeBufferPointer { $0.baseAddress }, storage, "the same storage")
        }
    }
}
