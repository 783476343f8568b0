@testable import LinkRuntime
import LinkSystem
import TestSupport
import XCTest

final class TimerHeapTests: XCTestCase {
    func testPopsByDeadlineThenSequenceAndSkipsCancelled() {
        var heap = TimerHeap()
        let seed = testSeed(default: 0x4EA9)
        var generator = SeededGenerator(seed: seed)
        var expected: [(deadline: UInt64, sequence: UInt64)] = []
        var popped: [(deadline: UInt64, sequence: UInt64)] = []
        var sequences: [UInt64] = []
        for _ in 0..<5_000 {
            let deadline = UInt64.random(in: 0..<200, using: &generator)
            var sequence: UInt64 = 0
            sequence = heap.schedule(deadline: deadline) { popped.append((deadline, sequence)) }
            sequences.append(sequence)
            expected.append((deadline, sequence))
        }
        var cancelled = Set<UInt64>()
        for sequence in sequences where sequence % 4 == 0 || sequence % 7 == 0 {
            XCTAssertTrue(heap.cancel(sequence))
            XCTAssertFalse(heap.cancel(sequence))
            cancelled.insert(sequence)
        }
        XCTAssertEqual(heap.count, 5_000 - cancelled.count)
        while let body = heap.popExpired(now: .max, sequenceLimit: .max) {
            body()
        }
        XCTAssertTrue(heap.isEmpty)
        expected.removeAll { cancelled.contains($0.sequence) }
        expected.sort { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }
        XCTAssertEqual(popped.map(\.sequence), expected.map(\.sequence), "seed \(seed)")
    }

    func testRespectsNowAndSequenceLimit() {
        var heap = TimerHeap()
        _ = heap.schedule(deadline: 10) {}
        let limit = heap.nextSequence
        _ = heap.schedule(deadline: 5) {}
        XCTAssertEqual(heap.nearestDeadline(), 5)
        XCTAssertNil(heap.popExpired(now: 4, sequenceLimit: .max))
        XCTAssertNil(heap.popExpired(now: 100, sequenceLimit: limit), "scheduled after the limit")
        XCTAssertNotNil(heap.popExpired(now: 100, sequenceLimit: .max))
        XCTAssertNotNil(heap.popExpired(now: 100, sequenceLimit: .max))
        XCTAssertNil(heap.nearestDeadline())
    }
}
