import XCTest
@testable import LinkJSON

final class JSONValueTests: XCTestCase {
    func testAccessors() {
        let value: JSONValue = ["s": "text", "i": 7, "d": 2.0, "f": 2.5, "b": true, "o": ["k": 1], "a": [1, 2], "n": nil]
        XCTAssertEqual(value["s"]?.stringValue, "text")
        XCTAssertEqual(value["i"]?.intValue, 7)
        XCTAssertEqual(value["d"]?.intValue, 2)
        XCTAssertNil(value["f"]?.intValue)
        XCTAssertEqual(value["f"]?.doubleValue, 2.5)
        XCTAssertEqual(value["i"]?.doubleValue, 7.0)
        XCTAssertEqual(value["b"]?.boolValue, true)
        XCTAssertEqual(value["o"]?.objectValue, ["k": 1])
        XCTAssertEqual(value["a"]?.arrayValue, [1, 2])
        XCTAssertEqual(value["a"]?[1], 2)
        XCTAssertNil(value["a"]?[2])
        XCTAssertEqual(value["n"]?.isNull, true)
        XCTAssertNil(value["missing"])
        XCTAssertNil(value["s"]?["x"])
        XCTAssertNil(value["s"]?.intValue)
        XCTAssertNil(JSONValue.double(1e19).intValue)
        XCTAssertNil(JSONValue.double(.nan).intValue)
        XCTAssertEqual(JSONValue.double(-9_223_372_036_854_775_808.0).intValue, Int64.min)
    }

    func testTypeNames() {
        let names = ([nil, true, 1, 1.5, "s", [], [:]] as [JSONValue]).map(\.typeName)
        XCTAssertEqual(names, ["null", "boolean", "integer", "number", "string", "array", "object"])
    }

    func testObjectKeepsInsertionOrderAndUpdatesInPlace() {
        var object: JSONObject = ["b": 1, "a": 2]
        object["c"] = 3
        object["b"] = 4
        XCTAssertEqual(object.keys, ["b", "a", "c"])
        XCTAssertEqual(object.values, [4, 2, 3])
        XCTAssertEqual(object.count, 3)
        object["a"] = nil
        XCTAssertEqual(object.keys, ["b", "c"])
        XCTAssertEqual(object.removeValue(forKey: "b"), 4)
        XCTAssertNil(object.removeValue(forKey: "b"))
        XCTAssertEqual(Array(object.map(\.key)), ["c"])
        XCTAssertTrue(object.contains("c"))
        XCTAssertFalse(object.isEmpty)
        object["x"] = .null
        XCTAssertEqual(object["x"], .null)
        XCTAssertEqual(object.count, 2)
    }

    func testObjectEqualityIgnoresOrder() {
        let first: JSONObject = ["a": 1, "b": 2]
        let second: JSONObject = ["b": 2, "a": 1]
        XCTAssertEqual(first, second)
        XCTAssertEqual(Set([first, second]).count, 1)
        XCTAssertNotEqual(first, ["a": 1])
        XCTAssertNotEqual(JSONValue.int(1), JSONValue.double(1))
    }
}
