import LinkCollections
import TestSupport
import XCTest

final class SequenceMapTests: XCTestCase {
    /// Random inserts, replacements, lookups and removals against `Dictionary` as the model,
    /// with the whole contents compared now and then. Keys come from a small range (long probe
    /// runs, removals in the middle of them), from counters (the intended use) and from the
    /// far ends of the keys allowed (below UInt64.max).
    func testBehavesLikeADictionary() {
        let seed = testSeed(default: 0x5E0)
        var generator = SeededGenerator(seed: seed)
        var map = SequenceMap<String>()
        var model: [UInt64: String] = [:]
        var counter: UInt64 = 1
        for step in 0..<60_000 {
            let key: UInt64
            switch UInt64.random(in: 0..<4, using: &generator) {
            case 0: key = UInt64.random(in: 0..<64, using: &generator)
            case 1: key = counter; counter += 1
            case 2: key = counter &- UInt64.random(in: 0..<40, using: &generator)
            default: key = [0, 1, .max - 1, .max - 2, 1 << 63][Int.random(in: 0..<5, using: &generator)]
            }
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<4:
                let value = "v\(step)"
                XCTAssertEqual(map.insert(value, forKey: key), model.updateValue(value, forKey: key), "seed \(seed) step \(step)")
            case 4..<7:
                XCTAssertEqual(map.removeValue(forKey: key), model.removeValue(forKey: key), "seed \(seed) step \(step)")
            case 7:
                map[key] = nil
                model[key] = nil
            default:
                XCTAssertEqual(map[key], model[key], "seed \(seed) step \(step)")
                XCTAssertEqual(map.contains(key), model[key] != nil, "seed \(seed) step \(step)")
            }
            XCTAssertEqual(map.count, model.count)
            if step % 5_000 == 0 {
                XCTAssertEqual(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }), model, "seed \(seed) step \(step)")
            }
        }
        for key in model.keys { XCTAssertEqual(map[key], model[key], "seed \(seed)") }
        XCTAssertNil(map[.max], "UInt64.max is never a key")
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: map.map { ($0.key, $0.value) }), model, "seed \(seed)")
    }

    /// Removing from the middle of a run of colliding keys leaves the later ones reachable.
    func testRemovalInsideAProbeRunKeepsTheRest() {
        var map = SequenceMap<Int>()
        // Sixteen slots: keys 1...7 spread; add keys until several share a run, then remove
        // each one in turn and check the rest every time.
        let keys: [UInt64] = Array(1...7) + [17, 33, 49, 65, 81, 97]
        for reference in keys {
            map = [:]
            for key in keys { map[key] = Int(key) }
            XCTAssertEqual(map.removeValue(forKey: reference), Int(reference))
            for key in keys where key != reference { XCTAssertEqual(map[key], Int(key), "after removing \(reference)") }
            XCTAssertNil(map[reference])
            XCTAssertEqual(map.count, keys.count - 1)
        }
    }

    func testEmptyAndRemoveAll() {
        var map: SequenceMap<[Int]> = [:]
        XCTAssertTrue(map.isEmpty)
        XCTAssertNil(map[0])
        XCTAssertNil(map.removeValue(forKey: .max))
        for key in 0..<1_000 as Range<UInt64> { map[key] = [Int(key)] }
        XCTAssertEqual(map.count, 1_000)
        map.removeAll(keepingCapacity: true)
        XCTAssertTrue(map.isEmpty)
        XCTAssertNil(map[5])
        XCTAssertEqual(Array(map).count, 0)
        map[5] = [5]
        map.removeAll()
        XCTAssertNil(map[5])
        XCTAssertEqual(map.count, 0)
    }

    /// A value leaves the map when it is removed, not later (closures release what they
    /// captured: a cancelled timer's body, a completion).
    func testRemovedValuesAreReleased() {
        final class Token {}
        weak var weakToken: Token?
        var map = SequenceMap<() -> Void>()
        do {
            let token = Token()
            weakToken = token
            map[7] = { _ = token }
            for key in 8..<40 as Range<UInt64> { map[key] = {} }
        }
        XCTAssertNotNil(weakToken)
        map.removeValue(forKey: 7)
        XCTAssertNil(weakToken)
        XCTAssertEqual(map.count, 32)
    }
}
