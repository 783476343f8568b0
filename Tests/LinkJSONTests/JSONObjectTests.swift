@testable import LinkJSON
import XCTest

/// Objects small and large (past the count where lookups go through an index) behave alike:
/// insertion order, replacement in place, removal, and equality and hashing that ignore order.
final class JSONObjectTests: XCTestCase {
    func testSmallAndLargeObjectsKeepOrderReplaceAndRemove() {
        for size in [3, JSONObject.indexedCount + 5, 1_000] {
            var object = JSONObject()
            for index in 0..<size { object["k\(index)"] = .int(Int64(index)) }
            XCTAssertEqual(object.count, size)
            XCTAssertEqual(object.keys, (0..<size).map { "k\($0)" }, "insertion order, \(size) members")
            object["k1"] = .string("one")
            XCTAssertEqual(object.keys[1], "k1", "a replaced member keeps its place")
            XCTAssertEqual(object["k1"], .string("one"))
            XCTAssertEqual(object.removeValue(forKey: "k0"), .int(0))
            XCTAssertNil(object["k0"])
            XCTAssertFalse(object.contains("k0"))
            XCTAssertEqual(object.count, size - 1)
            XCTAssertEqual(object["k\(size - 1)"], .int(Int64(size - 1)), "found after a removal moved it")
            XCTAssertEqual(object.keys.first, "k1")
            object["k0"] = .null
            XCTAssertEqual(object.keys.last, "k0", "added again at the end")
            XCTAssertEqual(Array(object.map(\.key)), object.keys)
            XCTAssertEqual(object.values.count, size)
        }
    }

    func testAnObjectOfUniqueKeysIsTheObjectOfThoseMembers() {
        for size in [0, 5, JSONObject.indexedCount + 3] {
            let members = (0..<size).map { ("k\($0)", JSONValue.int(Int64($0))) }
            let object = JSONObject(uniqueKeysWithValues: members)
            XCTAssertEqual(object, JSONObject(members))
            XCTAssertEqual(object.keys, members.map(\.0))
            XCTAssertEqual(object["k\(size - 1)"], size > 0 ? .int(Int64(size - 1)) : nil, "found, \(size) members")
            var grown = object
            grown["new"] = true
            XCTAssertEqual(grown.count, size + 1)
            XCTAssertEqual(grown["new"], true)
        }
    }

    /// A literal is the object its members make one by one: a repeated key keeps its first
    /// place and its last value, and a long literal is indexed like any large object.
    func testALiteralIsTheObjectOfItsMembersInOrder() {
        let literal: JSONObject = ["b": 1, "a": 2, "b": 3, "c": 4]
        XCTAssertEqual(literal.keys, ["b", "a", "c"])
        XCTAssertEqual(literal["b"], 3)
        XCTAssertEqual(JSON.serialize(.object(literal)), #"{"b":3,"a":2,"c":4}"#)
        let long: JSONObject = [
            "k0": 0, "k1": 1, "k2": 2, "k3": 3, "k4": 4, "k5": 5, "k6": 6, "k7": 7, "k8": 8, "k9": 9,
            "k10": 10, "k11": 11, "k12": 12, "k13": 13, "k14": 14, "k15": 15, "k16": 16, "k17": 17,
        ]
        XCTAssertGreaterThan(long.count, JSONObject.indexedCount)
        XCTAssertEqual(long, JSONObject((0..<18).map { ("k\($0)", JSONValue.int(Int64($0))) }))
        XCTAssertEqual(JSONObject(member: "k", "v"), ["k": "v"])
        XCTAssertEqual(JSONObject(member: "k", "v").keys, ["k"])
        var grown = long
        grown["k3"] = "three"
        XCTAssertEqual(grown.keys[3], "k3")
        XCTAssertEqual(grown["k17"], 17)
    }

    func testEqualityAndHashIgnoreOrder() {
        for size in [4, 40] {
            let forward = JSONObject((0..<size).map { ("k\($0)", JSONValue.int(Int64($0))) })
            let backward = JSONObject((0..<size).reversed().map { ("k\($0)", JSONValue.int(Int64($0))) })
            XCTAssertEqual(forward, backward)
            XCTAssertEqual(forward.hashValue, backward.hashValue)
            var other = backward
            other["k0"] = .int(-1)
            XCTAssertNotEqual(forward, other)
            other["k0"] = nil
            XCTAssertNotEqual(forward, other, "a member fewer")
            XCTAssertEqual(Set([forward, backward]).count, 1)
        }
        // Keys equal as strings (a composed and a decomposed "é") are one key, as JSON text
        // read by the parser always was.
        var object = JSONObject()
        object["caf\u{E9}"] = 1
        object["cafe\u{301}"] = 2
        XCTAssertEqual(object.count, 1)
        XCTAssertEqual(object["caf\u{E9}"], 2)
    }
}
