import XCTest
@testable import LinkJSON

final class JSONParserTests: XCTestCase {
    private func parse(_ text: String) throws -> JSONValue {
        try JSON.parse(Array(text.utf8))
    }

    /// Objects kept as text read, compare and are written as parsed ones; their text is the
    /// input's; a change or `materialized` makes them members.
    func testObjectsKeptAsTextAgreeWithParsedOnes() throws {
        let documents = [
            #"{"id":1,"op":"message.send","args":{"wantsReply":true,"message":{ "b" : [1, 2.5e1, {"x": null}], "a":"\u00e9\n" , "a":"last"}}}"#,
            #"[{"k":{}}, [[{"deep":{"er":true}}]], "s", -0, 1E2]"#,
            #"{}"#,
        ]
        for document in documents {
            let full = try JSON.parse(Array(document.utf8))
            for depth in 1...4 {
                let lazy = try JSON.parse(Array(document.utf8), keepingObjectsAsTextFrom: depth)
                XCTAssertEqual(lazy, full, "\(document) from depth \(depth)")
                XCTAssertEqual(JSON.serialize(lazy), JSON.serialize(full))
                XCTAssertEqual(JSON.prettyPrinted(lazy), JSON.prettyPrinted(full))
                XCTAssertEqual(lazy.materialized, full)
                XCTAssertEqual(JSON.serialize(lazy.materialized), JSON.serialize(full))
            }
        }
        let request = try JSON.parse(Array(documents[0].utf8), keepingObjectsAsTextFrom: 3)
        let message = try XCTUnwrap(request["args"]?["message"]?.objectValue)
        XCTAssertEqual(
            message.jsonText.map { String(decoding: $0, as: UTF8.self) },
            #"{ "b" : [1, 2.5e1, {"x": null}], "a":"\u00e9\n" , "a":"last"}"#, "the input's text")
        XCTAssertNil(try XCTUnwrap(request["args"]?.objectValue).jsonText, "shallower objects are built")
        XCTAssertFalse(message.jsonTextStringsArePlain, "a string with an escape")
        for (text, plain) in [
            (#"{"a":"b","c":{"d":["e",1,true,null]}}"#, true), (#"{"a":"b\n"}"#, false), (#"{"caf\#u{E9}":1}"#, false),
            (#"{"a":"\u0041"}"#, false), ("{}", true),
        ] {
            let object = try XCTUnwrap(JSON.parse(Array(#"{"x":\#(text)}"#.utf8), keepingObjectsAsTextFrom: 2)["x"]?.objectValue)
            XCTAssertEqual(object.jsonTextStringsArePlain, plain, text)
            XCTAssertEqual(object.jsonText.map { String(decoding: $0, as: UTF8.self) }, text)
        }
        XCTAssertFalse(try XCTUnwrap(JSON.parse(Array(#"{"x":{"a":1}}"#.utf8))["x"]?.objectValue).jsonTextStringsArePlain, "a built object")
        XCTAssertEqual(message["a"], "last")
        XCTAssertEqual(message.keys, ["b", "a"])
        var changed = message
        changed["c"] = 3
        XCTAssertNil(changed.jsonText)
        XCTAssertEqual(JSON.serialize(.object(changed)), #"{"b":[1,25.0,{"x":null}],"a":"last","c":3}"#)
        XCTAssertNil(message.materialized.jsonText)
    }

    /// An object kept as text is checked by a quick pass that knows only plain strings, numbers
    /// and literals, then by the parser itself when the pass declines: together they must
    /// accept and refuse what the parse of the whole does, with its errors. Each byte of a set
    /// of objects is changed, removed and doubled.
    func testObjectsKeptAsTextAreCheckedAsParsedOnes() throws {
        let nested = String(repeating: "[", count: 60) + String(repeating: "]", count: 60)
        let objects = [
            #"{"key0":"value-000","n":-12.5e+3,"t":true,"f":false,"z":null,"a":[1,{"x":[]}],"e":{}}"#,
            #"{ "s" : "a\"b\u00e9\n" , "u":"é", "d":1e400, "o":01 }"#,
            "{\"deep\":" + nested + "}",
            "{\"deeper\":[" + nested + "]}",
        ]
        var checked = 0
        for object in objects {
            let document = Array(#"{"m":"#.utf8) + Array(object.utf8) + Array("}".utf8)
            var variants = [document]
            for index in document.indices {
                for replacement in [
                    UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "}"), UInt8(ascii: "]"), UInt8(ascii: "0"),
                    UInt8(ascii: "e"), 0x1F, 0xC3, 0xFF,
                ] {
                    var changed = document
                    changed[index] = replacement
                    variants.append(changed)
                }
                var removed = document
                removed.remove(at: index)
                variants.append(removed)
                var doubled = document
                doubled.insert(document[index], at: index)
                variants.append(doubled)
            }
            for variant in variants {
                let full = Result { try JSON.parse(variant) }
                let lazy = Result { try JSON.parse(variant, keepingObjectsAsTextFrom: 2) }
                switch (full, lazy) {
                case (.success(let value), .success(let lazyValue)):
                    XCTAssertEqual(lazyValue, value)
                case (.failure(let error), .failure(let lazyError)):
                    XCTAssertEqual("\(lazyError)", "\(error)", String(decoding: variant, as: UTF8.self))
                default:
                    XCTFail("checked differently: \(String(decoding: variant, as: UTF8.self)): \(full) / \(lazy)")
                }
                checked += 1
            }
        }
        XCTAssertGreaterThan(checked, 4_000)
    }

    /// Strings are scanned 32 and then eight bytes at a time: a quote, an escape, a control
    /// character, valid and invalid UTF-8 are each found at every place in and around a word
    /// and a block.
    func testEveryPlaceOfASpecialByteInAString() throws {
        for length in [1, 7, 8, 9, 15, 16, 17, 24, 33, 40, 63, 64, 65, 70] {
            for place in 0..<length {
                func text(_ special: [UInt8]) -> [UInt8] {
                    var bytes = Array(repeating: UInt8(ascii: "a"), count: length)
                    bytes.replaceSubrange(place..<place + 1, with: special)
                    return [UInt8(ascii: "\"")] + bytes + [UInt8(ascii: "\"")]
                }
                let context = "at \(place) of \(length)"
                let plain = String(repeating: "a", count: place)
                let rest = String(repeating: "a", count: length - place - 1)
                XCTAssertEqual(try JSON.parse(text(Array(#"\""#.utf8))), .string(plain + "\"" + rest), context)
                XCTAssertEqual(try JSON.parse(text(Array(#"\n"#.utf8))), .string(plain + "\n" + rest), context)
                XCTAssertEqual(try JSON.parse(text([0xC3, 0xA9])), .string(plain + "\u{E9}" + rest), context)
                assertFails(text([0x0A]), offset: 1 + place, "control character", file: #filePath, line: #line)
                assertFails(text([0xC3]), offset: 1 + place, "UTF-8", file: #filePath, line: #line)
                // Cut short after the special byte: the string is unterminated.
                assertFails(Array(text([0xC3, 0xA9]).prefix(place + 3)), offset: 0, "unterminated string", file: #filePath, line: #line)
            }
        }
    }

    private func assertFails(
        _ text: String, offset: Int, _ fragment: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        assertFails(Array(text.utf8), offset: offset, fragment, file: file, line: line)
    }

    private func assertFails(
        _ bytes: [UInt8], offset: Int, _ fragment: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        do {
            let value = try JSON.parse(bytes)
            XCTFail("parsed \(value) from \(bytes)", file: file, line: line)
        } catch let error as JSONParseError {
            XCTAssertEqual(error.offset, offset, "\(error)", file: file, line: line)
            XCTAssertTrue(error.message.contains(fragment), "'\(error.message)' lacks '\(fragment)'", file: file, line: line)
            XCTAssertTrue(error.description.hasSuffix("at byte \(offset)"), error.description, file: file, line: line)
            // Objects kept as text are checked as parsed ones are: the same error.
            for depth in 1...3 {
                XCTAssertThrowsError(try JSON.parse(bytes, keepingObjectsAsTextFrom: depth), file: file, line: line) { lazyError in
                    XCTAssertEqual("\(lazyError)", "\(error)", "objects kept as text from depth \(depth)", file: file, line: line)
                }
            }
        } catch {
            XCTFail("unexpected error \(error)", file: file, line: line)
        }
    }

    func testScalars() throws {
        XCTAssertEqual(try parse("null"), .null)
        XCTAssertEqual(try parse("true"), .bool(true))
        XCTAssertEqual(try parse("false"), .bool(false))
        XCTAssertEqual(try parse("\"hi\""), .string("hi"))
        XCTAssertEqual(try parse("0"), .int(0))
        XCTAssertEqual(try parse(" \t\r\n42 \n"), .int(42))
    }

    func testContainers() throws {
        XCTAssertEqual(try parse("[]"), .array([]))
        XCTAssertEqual(try parse("{}"), .object([:]))
        XCTAssertEqual(try parse(" [ 1 , \"a\" , [ ] , { } , null ] "), [1, "a", [], [:], nil])
        let value = try parse(#"{"b": 1, "a": {"c": [true, false]}, "z": null}"#)
        XCTAssertEqual(value, ["b": 1, "a": ["c": [true, false]], "z": nil])
        XCTAssertEqual(value.objectValue?.keys, ["b", "a", "z"])
    }

    func testReadMembersGivesEachMemberOfAPlainObjectOrDeclines() throws {
        var members: [String] = []
        let text = #" {"a" : 1, "b":{"c":{"d":[]}}, "a":"x"} "#
        XCTAssertTrue(
            JSON.readMembers(Array(text.utf8), keepingObjectsAsTextFrom: 3) { key, value in
                members.append("\(String(decoding: key, as: UTF8.self))=\(JSON.serialize(value))")
                return true
            })
        XCTAssertEqual(members, [#"a=1"#, #"b={"c":{"d":[]}}"#, #"a="x""#])
        for declined in [#"[1]"#, #"{"a":1} x"#, #"{"a":1"#, #"{"\u0061":1}"#, "{\"\u{e9}\":1}", #"{"a":tru}"#, ""] {
            XCTAssertFalse(JSON.readMembers(Array(declined.utf8), keepingObjectsAsTextFrom: 3) { _, _ in true }, declined)
        }
        var calls = 0
        XCTAssertFalse(
            JSON.readMembers(Array(#"{"a":1,"b":2}"#.utf8), keepingObjectsAsTextFrom: 3) { _, _ in
                calls += 1; return false
            })
        XCTAssertEqual(calls, 1)
        XCTAssertTrue(
            JSON.readMembers(Array(" {} ".utf8), keepingObjectsAsTextFrom: 3) { _, _ in
                XCTFail("no member"); return true
            })
    }

    func testDuplicateKeysKeepLastValueAndFirstPosition() throws {
        let value = try parse(#"{"a": 1, "b": 2, "a": 3}"#)
        XCTAssertEqual(value["a"], .int(3))
        XCTAssertEqual(value.objectValue?.keys, ["a", "b"])
    }

    func testNumbers() throws {
        XCTAssertEqual(try parse("-0"), .int(0))
        XCTAssertEqual(try parse("-12"), .int(-12))
        XCTAssertEqual(try parse("1.5"), .double(1.5))
        XCTAssertEqual(try parse("-0.25"), .double(-0.25))
        XCTAssertEqual(try parse("1e3"), .double(1000))
        XCTAssertEqual(try parse("1E+2"), .double(100))
        XCTAssertEqual(try parse("25e-1"), .double(2.5))
        XCTAssertEqual(try parse("2.0"), .double(2.0))
        XCTAssertEqual(try parse("9223372036854775807"), .int(Int64.max))
        XCTAssertEqual(try parse("-9223372036854775808"), .int(Int64.min))
        XCTAssertEqual(try parse("9223372036854775808"), .double(9_223_372_036_854_775_808.0))
        XCTAssertEqual(try parse("-9223372036854775809"), .double(-9_223_372_036_854_775_809.0))
        XCTAssertEqual(try parse("123456789012345678901234567890"), .double(1.2345678901234568e29))
        XCTAssertEqual(try parse("5e-324"), .double(.leastNonzeroMagnitude))
    }

    func testInvalidNumbers() {
        assertFails("01", offset: 1, "leading zeros")
        assertFails("-", offset: 1, "expected a digit after '-'")
        assertFails("-a", offset: 1, "expected a digit after '-'")
        assertFails("1.", offset: 2, "expected a digit after the decimal point")
        assertFails("1.e3", offset: 2, "expected a digit after the decimal point")
        assertFails(".5", offset: 0, "unexpected character '.'")
        assertFails("1e", offset: 2, "expected a digit in the exponent")
        assertFails("1e+", offset: 3, "expected a digit in the exponent")
        assertFails("+1", offset: 0, "unexpected character '+'")
        assertFails("1e400", offset: 0, "out of range")
        assertFails("NaN", offset: 0, "unexpected character 'N'")
        assertFails("0x10", offset: 1, "after the JSON value")
    }

    func testEscapes() throws {
        XCTAssertEqual(try parse(#""\"\\\/\b\f\n\r\t""#), .string("\"\\/\u{08}\u{0C}\n\r\t"))
        XCTAssertEqual(try parse(#""\u0041\u00e9\u20AC""#), .string("Aé€"))
        XCTAssertEqual(try parse(#""\u0000""#), .string("\u{0}"))
        XCTAssertEqual(try parse(#""a\u0062c""#), .string("abc"))
    }

    func testSurrogatePairs() throws {
        XCTAssertEqual(try parse(#""\uD83D\uDE00""#), .string("😀"))
        XCTAssertEqual(try parse(#""x\ud834\udd1ey""#), .string("x𝄞y"))
        assertFails(#""\uD83D""#, offset: 1, "lone high surrogate \\uD83D")
        assertFails(#""\uD83Dx""#, offset: 1, "lone high surrogate")
        assertFails(#""\uD83D\u0041""#, offset: 1, "not a low surrogate")
        assertFails(#""ab\uDE00""#, offset: 3, "lone low surrogate \\uDE00")
    }

    func testInvalidStrings() {
        assertFails(#""abc"#, offset: 0, "unterminated string")
        assertFails(#""a\x""#, offset: 2, "invalid escape sequence '\\x'")
        assertFails(#""\u12""#, offset: 1, "expected 4 hexadecimal digits")
        assertFails(#""\u12G4""#, offset: 1, "expected 4 hexadecimal digits")
        assertFails("\"a\nb\"", offset: 2, "control character byte 0x0A in string must be escaped")
        assertFails("\"\t\"", offset: 1, "control character")
        assertFails("'a'", offset: 0, "unexpected character")
    }

    func testUTF8() throws {
        XCTAssertEqual(try parse("\"héllo €😀\""), .string("héllo €😀"))
        assertFails([0x22, 0x61, 0xFF, 0x22], offset: 2, "invalid UTF-8 byte 0xFF")
        assertFails([0x22, 0xC3, 0x22], offset: 1, "invalid UTF-8 sequence")
        assertFails([0x22, 0xC0, 0xAF, 0x22], offset: 1, "invalid UTF-8 byte 0xC0")
        assertFails([0x22, 0xE0, 0x80, 0xAF, 0x22], offset: 1, "invalid UTF-8 sequence")
        assertFails([0x22, 0xED, 0xA0, 0x80, 0x22], offset: 1, "invalid UTF-8 sequence")
        assertFails([0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], offset: 1, "invalid UTF-8 sequence")
        assertFails([0x22, 0xF0, 0x9F, 0x98], offset: 1, "invalid UTF-8 sequence")
        assertFails([0xC3, 0xA9], offset: 0, "unexpected byte 0xC3")
    }

    func testStructureErrors() {
        assertFails("", offset: 0, "empty input")
        assertFails("   ", offset: 3, "found only whitespace")
        assertFails(#"{"a" 1}"#, offset: 5, "expected ':' after object key")
        assertFails(#"{"a": 1,}"#, offset: 8, "expected '\"' to begin object key, found character '}'")
        assertFails(#"{a: 1}"#, offset: 1, "expected '\"' to begin object key")
        assertFails(#"{"a": 1 "b": 2}"#, offset: 8, "expected ',' or '}' after object member")
        assertFails("[1 2]", offset: 3, "expected ',' or ']' after array element")
        assertFails("[1,]", offset: 3, "unexpected character ']', expected a value")
        assertFails("[", offset: 1, "unexpected end of input")
        assertFails(#"{"a":"#, offset: 5, "unexpected end of input, expected a value")
        assertFails(#"{"a": 1"#, offset: 7, "unexpected end of input, expected ',' or '}'")
        assertFails("tru", offset: 0, "expected 'true'")
        assertFails("nul", offset: 0, "expected 'null'")
        assertFails("falsey", offset: 5, "unexpected character 'y' after the JSON value")
        assertFails("{} {}", offset: 3, "after the JSON value")
        assertFails("[1] x", offset: 4, "after the JSON value")
        assertFails("/* c */ 1", offset: 0, "unexpected character '/'")
    }

    func testErrorOffsetOfMissingColonExample() {
        assertFails(#"{"key_name_1" 1}"#, offset: 14, "expected ':' after object key")
        XCTAssertEqual(
            JSONParseError(offset: 12, message: "expected ':' after object key").description,
            "expected ':' after object key at byte 12")
    }

    func testDepthLimit() throws {
        let deepest = String(repeating: "[", count: 64) + String(repeating: "]", count: 64)
        XCTAssertNoThrow(try parse(deepest))
        let tooDeep = String(repeating: "[", count: 65) + String(repeating: "]", count: 65)
        assertFails(tooDeep, offset: 64, "nesting deeper than 64 levels")
        let objects = String(repeating: #"{"a":"#, count: 65) + "1" + String(repeating: "}", count: 65)
        assertFails(objects, offset: 64 * 5, "nesting deeper than 64 levels")
        let huge = String(repeating: "[", count: 100_000)
        assertFails(huge, offset: 64, "nesting deeper")
    }

    func testParsesNonContiguousCollections() throws {
        let bytes = Array(#"{"a": [1, 2]}"#.utf8)
        XCTAssertEqual(try JSON.parse(bytes.lazy.map { $0 }), ["a": [1, 2]])
        XCTAssertEqual(try JSON.parse(bytes[0...]), ["a": [1, 2]])
        XCTAssertEqual(try JSON.parse(#"{"a": [1, 2]}"#), ["a": [1, 2]])
    }
}
