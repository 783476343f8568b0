import XCTest
@testable import LinkJSON

final class JSONSerializerTests: XCTestCase {
    func testCompactOutputInInsertionOrder() {
        let value: JSONValue = ["z": 1, "a": [true, nil, "x"], "m": ["k": 1.5]]
        XCTAssertEqual(JSON.serialize(value), #"{"z":1,"a":[true,null,"x"],"m":{"k":1.5}}"#)
        XCTAssertEqual(value.description, JSON.serialize(value))
    }

    /// Objects kept as compact text from the threshold on are left out where they belong, and
    /// put back there give the text written whole; smaller ones and built ones are written.
    func testLargeCompactTextsAreDetachedAtTheirPlaces() {
        let large = JSONObject(compactText: Array(#"{"k":""#.utf8) + Array(repeating: UInt8(ascii: "a"), count: 5_000) + Array(#""}"#.utf8))
        let small = JSONObject(compactText: Array(#"{"s":1}"#.utf8))
        let value: JSONValue = ["a": .object(large), "b": [.object(small), .object(large)], "c": ["d": .object(large)], "e": 1]
        var bytes: [UInt8] = []
        let detached = JSON.serialize(value, into: &bytes, detachingTextsOfAtLeast: 4_096)
        XCTAssertEqual(detached.count, 3)
        var whole: [UInt8] = []
        var start = 0
        for (offset, text) in detached {
            whole += bytes[start..<offset] + text
            start = offset
        }
        whole += bytes[start...]
        XCTAssertEqual(String(decoding: whole, as: UTF8.self), JSON.serialize(value))
        var all: [UInt8] = []
        XCTAssertTrue(JSON.serialize(value, into: &all, detachingTextsOfAtLeast: .max).isEmpty)
        XCTAssertEqual(all, whole)
    }

    /// Strings are scanned 32 and then eight bytes at a time: a byte to escape is found at
    /// every place in and around a word and a block, and the text is the one a byte-by-byte
    /// escape gives.
    func testEveryPlaceOfAByteToEscape() {
        for length in [1, 7, 8, 9, 15, 16, 17, 24, 33, 40, 63, 64, 65, 70] {
            for place in 0..<length {
                for special in ["\"", "\\", "\n", "\u{1}", "\u{1F}", "\u{E9}", " "] {
                    var characters = Array(repeating: "a", count: length)
                    characters[place] = special
                    let text = characters.joined()
                    let expected = "\"" + characters.map { escapedByHand($0) }.joined() + "\""
                    XCTAssertEqual(JSON.serialize(.string(text)), expected, "\(special.debugDescription) at \(place) of \(length)")
                }
            }
        }
    }

    private func escapedByHand(_ character: String) -> String {
        switch character {
        case "\"": return "\\\""
        case "\\": return "\\\\"
        case "\n": return "\\n"
        case "\u{1}": return "\\u0001"
        case "\u{1F}": return "\\u001f"
        default: return character
        }
    }

    func testDoubles() {
        XCTAssertEqual(JSON.serialize(.double(1.5)), "1.5")
        XCTAssertEqual(JSON.serialize(.double(2)), "2.0")
        XCTAssertEqual(JSON.serialize(.double(-0.1)), "-0.1")
        XCTAssertEqual(JSON.serialize(.double(0.1 + 0.2)), "0.30000000000000004")
        XCTAssertEqual(JSON.serialize(.double(.infinity)), "null")
        XCTAssertEqual(JSON.serialize(.double(-.infinity)), "null")
        XCTAssertEqual(JSON.serialize(.double(.nan)), "null")
        for number in [1e16, 1e-7, Double.leastNonzeroMagnitude, 1.7976931348623157e308, 123456.789, -2.5e-10] {
            let text = JSON.serialize(.double(number))
            XCTAssertEqual(try JSON.parse(Array(text.utf8)), .double(number), text)
        }
        XCTAssertEqual(JSON.serialize(.int(Int64.min)), "-9223372036854775808")
    }

    func testIntegers() {
        for number: Int64 in [0, 7, -1, 10, -10, 1_234_567_890, Int64.max, Int64.min, Int64.min + 1] {
            XCTAssertEqual(JSON.serialize(.int(number)), String(number))
        }
    }

    func testStringEscaping() {
        XCTAssertEqual(JSON.serialize("a\"b\\c/d"), #""a\"b\\c/d""#)
        XCTAssertEqual(JSON.serialize("\n\r\t\u{08}\u{0C}"), #""\n\r\t\b\f""#)
        XCTAssertEqual(JSON.serialize("\u{0}\u{1}\u{1F}\u{7F}"), "\"\\u0000\\u0001\\u001f\u{7F}\"")
        XCTAssertEqual(JSON.serialize("é😀"), "\"é😀\"")
    }

    func testSerializeIntoAppends() {
        var bytes = Array("x=".utf8)
        JSON.serialize(["a": 1], into: &bytes)
        XCTAssertEqual(String(decoding: bytes, as: UTF8.self), #"x={"a":1}"#)
    }

    func testRoundTrip() throws {
        let values: [JSONValue] = [
            nil, true, false, 0, -1, .int(Int64.max), .int(Int64.min), 0.5, -1e-300, 2.0,
            "", "plain", "quotes \" and \\ and / and \u{0}\u{1F} and 😀 and \u{2028}",
            [], [:], [[[]]], ["nested": ["deeper": [1, 2.5, "three", nil, ["k": false]]]],
        ]
        for value in values {
            let text = JSON.serialize(value)
            XCTAssertFalse(text.contains("\n"), text)
            XCTAssertEqual(try JSON.parse(Array(text.utf8)), value, text)
        }
    }

    func testRoundTripKeepsKeyOrder() throws {
        let text = #"{"c":1,"b":{"y":2,"x":3},"a":[{"q":1,"p":2}]}"#
        XCTAssertEqual(JSON.serialize(try JSON.parse(Array(text.utf8))), text)
    }
}

final class JSONPrettyPrintTests: XCTestCase {
    func testIndentsMembersAndElementsAndReadsBack() throws {
        let value: JSONValue = ["b": 1, "a": ["x", ["k": true]], "e": [:], "f": []]
        let text = JSON.prettyPrinted(value)
        XCTAssertEqual(
            text,
            """
            {
              "b": 1,
              "a": [
                "x",
                {
                  "k": true
                }
              ],
              "e": {},
              "f": []
            }
            """)
        XCTAssertEqual(try JSON.parse(text), value)
        XCTAssertEqual(JSON.prettyPrinted("a/b"), #""a/b""#)
    }
}
