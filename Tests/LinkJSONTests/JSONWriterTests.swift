import XCTest
@testable import LinkJSON

final class JSONWriterTests: XCTestCase {
    /// An object with every kind of value, written value by value.
    private func written() -> JSONObject {
        var writer = JSONWriter()
        writer.beginObject()
        var key = "quote \" backslash \\ newline \n control \u{1}"
        key.withUTF8 { writer.key(utf8: $0) }
        writer.string("caf\u{E9} \u{1F642}")
        writer.key("numbers")
        writer.beginArray()
        writer.integer(Int64.min)
        writer.double(2.5)
        writer.double(1)
        writer.double(.infinity)
        writer.beginArray()
        writer.endArray()
        writer.beginObject()
        writer.endObject()
        writer.endArray()
        writer.key("flags")
        writer.beginObject()
        writer.key("yes")
        writer.bool(true)
        writer.key("no")
        writer.bool(false)
        writer.key("none")
        writer.null()
        writer.endObject()
        writer.endObject()
        return writer.object()
    }

    private let expected: JSONValue = [
        "quote \" backslash \\ newline \n control \u{1}": "caf\u{E9} \u{1F642}",
        "numbers": [.int(Int64.min), 2.5, 1.0, .null, [], [:]],
        "flags": ["yes": true, "no": false, "none": nil],
    ]

    func testTheTextIsTheSerializers() {
        let object = written()
        XCTAssertEqual(JSON.serialize(.object(object)), JSON.serialize(expected))
        XCTAssertEqual(
            JSON.serialize(.object(object)),
            #"{"quote \" backslash \\ newline \n control \u0001":"café 🙂","numbers":[-9223372036854775808,2.5,1.0,null,[],{}],"flags":{"yes":true,"no":false,"none":null}}"#
        )
        XCTAssertEqual(JSON.prettyPrinted(.object(object)), JSON.prettyPrinted(expected))
    }

    func testTheObjectReadsAsItsMembers() throws {
        let object = written()
        XCTAssertEqual(.object(object), expected)
        XCTAssertEqual(expected, .object(object))
        XCTAssertEqual(object.hashValue, try XCTUnwrap(expected.objectValue).hashValue)
        XCTAssertEqual(object.count, 3)
        XCTAssertFalse(object.isEmpty)
        XCTAssertEqual(object.keys, ["quote \" backslash \\ newline \n control \u{1}", "numbers", "flags"])
        XCTAssertEqual(object["flags"]?["yes"], true)
        XCTAssertTrue(object.contains("numbers"))
        XCTAssertEqual(object.map(\.key), object.keys)
    }

    func testAChangedObjectIsWrittenWithItsChange() {
        var object = written()
        object["numbers"] = nil
        object["added"] = 1
        XCTAssertEqual(
            JSON.serialize(.object(object)),
            #"{"quote \" backslash \\ newline \n control \u0001":"café 🙂","flags":{"yes":true,"no":false,"none":null},"added":1}"#)
        var empty = JSONWriter()
        empty.beginObject()
        empty.endObject()
        XCTAssertEqual(JSON.serialize(.object(empty.object())), "{}")
        XCTAssertTrue(empty.object().isEmpty)
    }
}
