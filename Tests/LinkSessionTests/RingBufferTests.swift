import XCTest
@testable import LinkSession

final class RingBufferTests: XCTestCase {
    private final class Payload {
        let bytes: Int
        init(_ bytes: Int) { self.bytes = bytes }
    }

    func testKeepsTheNewestWithinCountAndBytes() {
        var ring = RingBuffer<Int>(capacity: 3, weightCapacity: 100)
        for value in 1...5 { ring.append(value, weight: 10) }
        XCTAssertEqual(ring.elements, [3, 4, 5])
        ring.append(6, weight: 91)
        XCTAssertEqual(ring.elements, [6], "over the byte budget: only the newest is kept")
        XCTAssertEqual(ring.totalWeight, 91)
        ring.append(7, weight: 500)
        XCTAssertEqual(ring.elements, [7], "one element is kept even when it alone is over budget")
    }

    func testAnEvictedElementIsReleasedAtOnce() {
        var ring = RingBuffer<Payload>(capacity: 1_000, weightCapacity: 64)
        weak var first: Payload?
        do {
            let payload = Payload(64)
            first = payload
            ring.append(payload, weight: payload.bytes)
        }
        XCTAssertNotNil(first)
        ring.append(Payload(64), weight: 64)
        XCTAssertNil(first, "the evicted payload must not stay alive until the slots are compacted")
        XCTAssertEqual(ring.count, 1)
    }

    func testManyAppendsKeepOnlyTheBudget() {
        var ring = RingBuffer<Payload>(capacity: 10, weightCapacity: .max)
        var released = 0
        var references: [() -> Payload?] = []
        for index in 0..<1_000 {
            let payload = Payload(index)
            references.append { [weak payload] in payload }
            ring.append(payload)
        }
        released = references.filter { $0() == nil }.count
        XCTAssertEqual(released, 990)
        XCTAssertEqual(ring.elements.map(\.bytes), Array(990..<1_000))
    }
}
