import TestSupport
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

    /// Random appends against a plain array that keeps the same budget: the same elements in
    /// the same order, across growth and every wrap of the circle.
    func testKeepsWhatAPlainListWouldWhereverTheCircleWraps() {
        var generator = SeededGenerator(seed: testSeed(default: 299))
        for (capacity, weightCapacity) in [(1, Int.max), (3, 100), (16, 1_000), (40, 300), (100, Int.max)] {
            var ring = RingBuffer<Int>(capacity: capacity, weightCapacity: weightCapacity)
            var model: [(value: Int, weight: Int)] = []
            for value in 0..<2_000 {
                let weight = Int.random(in: 0...60, using: &generator)
                ring.append(value, weight: weight)
                model.append((value, weight))
                if model.count > capacity { model.removeFirst() }
                while model.count > 1, model.reduce(0, { $0 + $1.weight }) > weightCapacity { model.removeFirst() }
                XCTAssertEqual(ring.elements, model.map(\.value), "capacity \(capacity), budget \(weightCapacity), after \(value)")
                XCTAssertEqual(ring.count, model.count)
                XCTAssertEqual(ring.totalWeight, model.reduce(0, { $0 + $1.weight }))
            }
        }
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
