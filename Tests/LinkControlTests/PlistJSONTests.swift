import Foundation
import LinkJSON
import TestSupport
import WireProtocol
import XCTest
@testable import LinkControl

final class PlistJSONTests: XCTestCase {
    private let date = Date(timeIntervalSince1970: 1_700_000_000.25)

    func testEveryKindFromJSON() throws {
        let json: JSONValue = [
            "s": "text", "i": 42, "r": 2.5, "b": true,
            "d": ["$data": "AAEC/w=="], "t": ["$date": "2023-11-14T22:13:20.250Z"],
            "a": [1, "two", ["$data": ""]], "o": ["inner": false],
        ]
        let plist = try PlistJSON.propertyList(from: json)
        XCTAssertEqual(
            plist,
            .dictionary([
                "s": .string("text"), "i": .integer(42), "r": .real(2.5), "b": .boolean(true),
                "d": .data([0, 1, 2, 255]), "t": .date(date),
                "a": .array([.integer(1), .string("two"), .data([])]), "o": .dictionary(["inner": .boolean(false)]),
            ]))
    }

    func testEveryKindToJSON() {
        let plist: [String: PropertyListValue] = [
            "s": .string("text"), "i": .integer(-3), "r": .real(0.5), "b": .boolean(false),
            "d": .data(Array("hi".utf8)), "t": .date(date), "a": .array([.integer(1), .dictionary([:])]),
        ]
        let json = PlistJSON.json(from: plist)
        XCTAssertEqual(
            JSON.serialize(json),
            #"{"a":[1,{}],"b":false,"d":{"$data":"aGk="},"i":-3,"r":0.5,"s":"text","t":{"$date":"2023-11-14T22:13:20.250Z"}}"#)
    }

    func testRoundTrip() throws {
        let plist: PropertyListValue = .dictionary([
            "nested": .array([.data([9, 8, 7]), .date(date), .real(1e-3), .dictionary(["k": .string("v")])]),
            "empty": .array([]), "unicode": .string("😀"),
        ])
        XCTAssertEqual(try PlistJSON.propertyList(from: PlistJSON.json(from: plist)), plist)
        let text = JSON.serialize(PlistJSON.json(from: plist))
        XCTAssertEqual(try PlistJSON.propertyList(from: JSON.parse(Array(text.utf8))), plist)
    }

    func testDateForms() throws {
        for text in ["2023-11-14T22:13:20Z", "2023-11-14T23:13:20+01:00", "2023-11-14T22:13:20.000Z"] {
            XCTAssertEqual(try PlistJSON.propertyList(from: ["$date": .string(text)]), .date(Date(timeIntervalSince1970: 1_700_000_000)), text)
        }
    }

    func testSpecialKeysOnlyWhenAlone() throws {
        XCTAssertEqual(
            try PlistJSON.propertyList(from: ["$data": "AA==", "x": 1]),
            .dictionary(["$data": .string("AA=="), "x": .integer(1)]))
    }

    func testErrorsNameThePath() {
        assertError(
            try PlistJSON.propertyList(from: ["key": nil], path: "message"),
            path: "message.key", message: "null at message.key is not a property-list type")
        assertError(
            try PlistJSON.propertyList(from: nil),
            path: "", message: "null at the top level is not a property-list type")
        assertError(
            try PlistJSON.propertyList(from: ["list": [1, ["x": nil]]], path: "message"),
            path: "message.list[1].x", message: "null at message.list[1].x is not a property-list type")
        assertError(
            try PlistJSON.propertyList(from: ["blob": ["$data": "not base64!"]], path: "message"),
            path: "message.blob", message: "$data at message.blob is not valid base64")
        assertError(
            try PlistJSON.propertyList(from: ["blob": ["$data": 5]], path: "message"),
            path: "message.blob", message: "$data at message.blob must be a base64 string, got integer")
        assertError(
            try PlistJSON.propertyList(from: ["when": ["$date": "yesterday"]], path: "context"),
            path: "context.when", message: "$date at context.when is not an ISO 8601 date-time with a time zone: \"yesterday\"")
        assertError(
            try PlistJSON.propertyList(from: ["when": ["$date": true]], path: "context"),
            path: "context.when", message: "$date at context.when must be an ISO 8601 string, got boolean")
        assertError(
            try PlistJSON.dictionary(from: [1, 2], path: "userInfo"),
            path: "userInfo", message: "userInfo must be an object (a property-list dictionary), got array")
        assertError(
            try PlistJSON.dictionary(from: ["a": ["b": [nil]]], path: "userInfo"),
            path: "userInfo.a.b[0]", message: "null at userInfo.a.b[0] is not a property-list type")
    }

    /// The entries (the control path's way to a property list) are the dictionary's, and
    /// encode to the same bytes; their errors name the same paths.
    func testEntriesAgreeWithTheDictionary() throws {
        let json: JSONValue = ["zeta": 1, "alpha": ["x": [true, 2.5, "s"]], "caf\u{E9}": ["$data": "AAEC"], "mid": "m"]
        let entries = try PlistJSON.entries(from: json, path: "message")
        XCTAssertEqual(entries.map(\.key), ["zeta", "alpha", "caf\u{E9}", "mid"], "the object's order")
        let dictionary = try PlistJSON.dictionary(from: json, path: "message")
        XCTAssertEqual(Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) }), dictionary)
        let bytes = try PropertyListCodec.encode(entries: entries)
        XCTAssertEqual(bytes, try PropertyListCodec.encode(dictionary))
        XCTAssertEqual(PlistJSON.json(fromEntries: try PropertyListCodec.decodeEntries(bytes)), PlistJSON.json(from: dictionary))
        XCTAssertEqual(
            JSON.serialize(PlistJSON.json(fromEntries: try PropertyListCodec.decodeEntries(bytes))),
            #"{"alpha":{"x":[true,2.5,"s"]},"caf\#u{E9}":{"$data":"AAEC"},"mid":"m","zeta":1}"#,
            "keys by their UTF-8 bytes")
        assertError(
            try PlistJSON.entries(from: ["a": ["b": [nil]]], path: "userInfo"),
            path: "userInfo.a.b[0]", message: "null at userInfo.a.b[0] is not a property-list type")
        assertError(
            try PlistJSON.entries(from: "text", path: "message"),
            path: "message", message: "message must be an object (a property-list dictionary), got string")
    }

    /// Lists written by Python's `plistlib` (`FMT_BINARY`): the JSON of an encoded dictionary.
    /// The first has the common form and is written straight from its bytes; the second has
    /// its keys out of order (`sort_keys=False`) and the third a UTF-16 string, so both are
    /// decoded first. All three give the keys by their UTF-8 bytes.
    func testEncodedDictionaryFromPlistlib() throws {
        let vectors: [(hex: String, walked: Bool, json: String)] = [
            (
                "62706c6973743030d60102030405060708090a1112516151625164516e517251745378220a10014200ffa20b0c09d20d0e0f10517951"
                    + "7a13fffffffffffffff951762340040000000000003341c5821440000000081517191b1d1f2125272a2d2e33353740424b0000000000"
                    + "000101000000000000001300000000000000000000000000000054",
                true, #"{"a":"x\"\n","b":1,"d":{"$data":"AP8="},"n":[true,{"y":-7,"z":"v"}],"r":2.5,"t":{"$date":"2023-11-14T22:13:20.000Z"}}"#
            ),
            (
                "62706c6973743030d2010203045162516110015178080d0f11130000000000000101000000000000000500000000000000000000000000000015",
                false, #"{"a":"x","b":1}"#
            ),
            (
                "62706c6973743030d2010203045161516b51786100e9080d0f11130000000000000101000000000000000500000000000000000000000000000016",
                false, #"{"a":"x","k":"\#u{E9}"}"#
            ),
        ]
        for vector in vectors {
            let bytes = try XCTUnwrap(hexBytes(vector.hex))
            var walker = CountingWalker()
            XCTAssertEqual(PropertyListCodec.walkDictionary(bytes, with: &walker), vector.walked, vector.json)
            let json = try XCTUnwrap(PlistJSON.json(fromEncodedDictionary: bytes))
            XCTAssertEqual(JSON.serialize(json), vector.json)
            XCTAssertEqual(json, try JSON.parse(vector.json), "read back, the same object")
            XCTAssertNotNil(json["a"], "members read from the text")
        }
    }

    /// A small flat dictionary written by Python's `plistlib` (`FMT_BINARY`, keys sorted):
    /// `{"action": "ping", "count": 300, "neg": -5, "on": True, "off": False,
    /// "s": "a string longer than fifteen bytes", "big": 2**40}`. It is checked and read by the
    /// check's loop and written as JSON in one pass; the expected text is that dictionary's.
    func testSmallFlatDictionaryFromPlistlib() throws {
        let bytes = try XCTUnwrap(
            hexBytes(
                "62706c6973743030d70102030405060708090a0b0c0d0e56616374696f6e5362696755636f756e74536e6567536f6666526f6e5173"
                    + "5470696e6713000001000000000011012c13fffffffffffffffb08095f10226120737472696e67206c6f6e676572207468616e20"
                    + "6669667465656e20627974657308171e22282c3033353a43464f50510000000000000101000000000000000f00000000000000000000"
                    + "000000000076"))
        let read = bytes.withUnsafeBufferPointer { buffer in
            withUnsafeTemporaryAllocation(of: FlatDictionaryEntry.self, capacity: 16) { PropertyListCodec.readFlatDictionary(buffer, into: $0) }
        }
        XCTAssertEqual(read, 7, "read by the loop")
        XCTAssertNoThrow(try PropertyListCodec.checkDictionary(bytes))
        let json = try XCTUnwrap(PlistJSON.json(fromEncodedDictionary: bytes))
        XCTAssertEqual(
            JSON.serialize(json),
            #"{"action":"ping","big":1099511627776,"count":300,"neg":-5,"off":false,"on":true,"s":"a string longer than fifteen bytes"}"#)
        let reply = try XCTUnwrap(PlistJSON.jsonObject(member: "reply", fromEncodedDictionary: bytes))
        XCTAssertEqual(
            JSON.serialize(.object(reply)),
            #"{"reply":{"action":"ping","big":1099511627776,"count":300,"neg":-5,"off":false,"on":true,"s":"a string longer than fifteen bytes"}}"#)
    }

    /// A flat dictionary of more than 256 bytes (two-byte offsets; the benchmark's 16 KiB
    /// message is one) is read by the same loop as a small one, and written as its entries give.
    func testLargeFlatDictionaryIsReadByTheLoop() throws {
        let dictionary: [String: PropertyListValue] = Dictionary(
            uniqueKeysWithValues: (0..<10).map { key in
                ("k\(key)", PropertyListValue.string(String(repeating: String(UnicodeScalar(UInt8(ascii: "a") + UInt8(key))), count: 1_638)))
            })
        let bytes = try PropertyListCodec.encode(dictionary)
        XCTAssertGreaterThan(bytes.count, 16_000)
        let read = bytes.withUnsafeBufferPointer { buffer in
            withUnsafeTemporaryAllocation(of: FlatDictionaryEntry.self, capacity: 16) { PropertyListCodec.readFlatDictionary(buffer, into: $0) }
        }
        XCTAssertEqual(read, 10, "read by the loop")
        XCTAssertNoThrow(try PropertyListCodec.checkDictionary(bytes))
        XCTAssertEqual(
            PlistJSON.json(fromEncodedDictionary: bytes).map { JSON.serialize($0) },
            JSON.serialize(PlistJSON.json(fromEntries: try PropertyListCodec.decodeEntries(bytes))))
    }

    /// The JSON of an encoded dictionary, written from its bytes or decoded first, is what its
    /// decoded entries give, on valid lists of every kind and on each of their damaged copies
    /// (nil exactly where the entries do not decode).
    func testEncodedDictionaryAgreesWithItsEntries() throws {
        let valid: [[String: PropertyListValue]] = [
            [:], ["a": .string("x\"\\\n\u{1}")], ["k": .array([.integer(1), .real(2.5), .real(-0.0), .boolean(true), .data([1, 2]), .string("plain")])],
            [
                "nested": .dictionary(["x": .date(date), "y": .integer(Int64.min), "z": .array([.dictionary([:]), .array([])])]),
                "long key of more than fifteen": .string("a value of more than fifteen bytes"),
            ],
            ["utf16": .string("\u{E9}\u{1F642}"), "ascii": .string("x")],
            Dictionary(uniqueKeysWithValues: (0..<40).map { ("key\($0)", PropertyListValue.string("value \($0 % 7)")) }),
            // Flat, nothing to escape: read in the check's loop and written in one pass.
            [
                "on": .boolean(true), "off": .boolean(false), "small": .integer(7), "two": .integer(300), "four": .integer(70_000),
                "negative": .integer(-5), "max": .integer(.max), "s": .string("a string longer than fifteen bytes"), "t": .string("on"),
            ],
            // Flat and past 256 bytes: two-byte offsets, still read in the check's loop.
            Dictionary(uniqueKeysWithValues: (0..<5).map { ("k\($0)", PropertyListValue.string(String(repeating: "abcdefgh", count: 9 * ($0 + 1)))) })
                .merging(["n": .integer(300), "t": .boolean(false)]) { $1 },
        ]
        var walked = 0
        for dictionary in valid {
            let encoded = try PropertyListCodec.encode(dictionary)
            var walker = CountingWalker()
            if PropertyListCodec.walkDictionary(encoded, with: &walker) { walked += 1 }
            for index in -1..<encoded.count {
                for replacement: UInt8 in index < 0 ? [0] : [0x00, 0x0F, 0x5F, 0xD1, 0xFF, encoded[index] ^ 0x80] {
                    var bytes = encoded
                    if index >= 0 { bytes[index] = replacement }
                    let expected = (try? PropertyListCodec.decodeEntries(bytes)).map { JSON.serialize(PlistJSON.json(fromEntries: $0)) }
                    XCTAssertEqual(
                        PlistJSON.json(fromEncodedDictionary: bytes).map { JSON.serialize($0) }, expected,
                        "byte \(index) = \(replacement) of \(dictionary)")
                }
            }
        }
        XCTAssertEqual(walked, valid.count - 1, "all but the UTF-16 one are written from their bytes")
    }

    /// A dictionary encoded straight from its JSON text is the one encoded from its parsed
    /// entries; the text is left to the parsed object (nil) exactly in the uncommon cases.
    func testEncodingFromTextAgreesWithTheEntries() throws {
        let cases: [(json: String, fromText: Bool)] = [
            (#"{}"#, true),
            (#"{"k0":"aaaaaaaaaa","k1":"bbbbbbbbbb","k2":"cc"}"#, true),
            (#" { "z" : 1 , "a" : [ true , false , -0 , 9223372036854775807 , 9223372036854775808 , 2.5 , 1E2 , -1e-3 ] } "#, true),
            (#"{"nested":{"b":{"c":[{"d":"x"},[],{}]}},"same":"x","x":"same"}"#, true),
            (#"{"blob":{"$data":"AAEC/w=="},"when":{"$date":"2023-11-14T22:13:20.250Z"},"list":[{"$data":""}]}"#, true),
            (#"{"$data":"top-level keys are keys","$date":5}"#, true),
            (#"{"text":"caf\#u{E9} \#u{1F642}","k":"e\#u{301}"}"#, true),
            (#"{"escaped":"a\nb"}"#, false),
            (#"{"caf\#u{E9}":1}"#, false),
            (#"{"a":1,"a":2}"#, false),
            (#"{"a":null}"#, false),
            (#"{"d":{"$data":"not base64!"}}"#, false),
            (#"{"d":{"$date":"yesterday"}}"#, false),
            (#"{"d":{"$data":"AA==","more":1}}"#, false),
            (#"{"d":{"$data":5}}"#, false),
            (#"{"d":{"$date":"2023-11-14T22:13:20Z"}}"#, true),
        ]
        for (json, fromText) in cases {
            let text = Array(json.utf8)
            let encoded = PlistJSON.encodedDictionary(jsonText: text)
            XCTAssertEqual(encoded != nil, fromText, json)
            let entries = Result { try PlistJSON.entries(from: JSON.parse(text), path: "message") }
            if let encoded {
                XCTAssertEqual(encoded, try PropertyListCodec.encode(entries: entries.get()), json)
            }
        }
        // Nesting past the property-list limit is left to the parsed object, which names it.
        let deep = String(repeating: #"{"a":"#, count: 70) + "1" + String(repeating: "}", count: 70)
        XCTAssertNil(PlistJSON.encodedDictionary(jsonText: Array(deep.utf8)))
        XCTAssertThrowsError(try PropertyListCodec.encode(entries: PlistJSON.entries(from: JSON.parse(Array(deep.utf8)), path: "m")))
    }

    /// The entries a flat dictionary is read into give back what they were made of, and the
    /// most a reader collects fit the 1,024 bytes Swift keeps a temporary allocation on the
    /// stack for.
    func testFlatDictionaryEntriesAreSmallAndGiveBackTheirMembers() {
        XCTAssertLessThanOrEqual(MemoryLayout<FlatDictionaryEntry>.stride * FlatDictionaryEntry.maximumCount, 1_024)
        let key: [UInt8] = Array("key".utf8), string: [UInt8] = Array("a string".utf8)
        key.withUnsafeBufferPointer { key in
            string.withUnsafeBufferPointer { string in
                let values: [FlatDictionaryEntry.Value] = [
                    .asciiString(string), .asciiString(UnsafeBufferPointer(start: nil, count: 0)),
                    .integer(.min), .integer(-1), .integer(.max), .boolean(true), .boolean(false),
                ]
                for value in values {
                    let entry = FlatDictionaryEntry(key: key, value: value)
                    XCTAssertEqual(entry.key.baseAddress, key.baseAddress)
                    XCTAssertEqual(entry.key.count, 3)
                    switch (entry.value, value) {
                    case (.asciiString(let a), .asciiString(let b)): XCTAssertTrue(a.baseAddress == b.baseAddress && a.count == b.count)
                    case (.integer(let a), .integer(let b)): XCTAssertEqual(a, b)
                    case (.boolean(let a), .boolean(let b)): XCTAssertEqual(a, b)
                    default: XCTFail("\(entry.value) is not \(value)")
                    }
                }
                XCTAssertEqual(FlatDictionaryEntry(key: UnsafeBufferPointer(start: nil, count: 0), value: .boolean(true)).key.count, 0)
            }
        }
    }

    /// A flat object (ASCII keys; ASCII strings, integers, booleans; no escape; at most 32
    /// members) is written in one pass to the very bytes its parsed entries encode to: strings
    /// shared with a key or an earlier value, counts and lengths from 15 on, 2-byte offsets,
    /// integers of every size. Every other object is left to the general path (nil).
    func testFlatDictionariesAgreeWithTheirEntries() throws {
        var generator = SeededGenerator(seed: testSeed(default: 53703))
        let alphabet = Array("abcAB0_-".utf8)
        func word(_ length: Int) -> String {
            String(decoding: (0..<length).map { _ in alphabet.randomElement(using: &generator)! }, as: UTF8.self)
        }
        let integers: [Int64] = [0, 1, -1, 14, 15, 255, 256, 65_535, 65_536, 4_294_967_295, 4_294_967_296, .max, .min]
        var flat = 0, duplicates = 0
        for round in 0..<3_000 {
            let count = round < 40 ? round % 34 : Int.random(in: 0...32, using: &generator)
            var members: [String] = []
            var keys = Set<String>()
            for _ in 0..<count {
                let key = word(Int.random(in: 0...(round % 3 == 0 ? 2 : 18), using: &generator))
                keys.insert(key)
                let value: String
                switch Int.random(in: 0..<10, using: &generator) {
                case 0: value = String(integers.randomElement(using: &generator)!)
                case 1: value = String(Int64.random(in: .min ... .max, using: &generator))
                case 2: value = Bool.random(using: &generator) ? "true" : "false"
                case 3: value = "\"" + (keys.randomElement(using: &generator) ?? "") + "\""
                case 4: value = "\"" + word(Int.random(in: 200...400, using: &generator)) + "\""
                default: value = "\"" + word(Int.random(in: 0...20, using: &generator)) + "\""
                }
                let space = round % 5 == 0 ? " \n\t" : ""
                members.append("\(space)\"\(key)\"\(space):\(space)\(value)\(space)")
            }
            let text = Array(("{" + members.joined(separator: ",") + "}").utf8)
            let written = text.withUnsafeBufferPointer { PlistJSON.encodedFlatDictionary(jsonText: $0) }
            if keys.count < count {
                XCTAssertNil(written, "a repeated key is left to the general path: \(String(decoding: text, as: UTF8.self))")
                duplicates += 1
                continue
            }
            let expected = try PropertyListCodec.encode(entries: PlistJSON.entries(from: JSON.parse(text), path: "message"))
            // (Not XCTAssertEqual: a failure would print kilobytes of both.)
            XCTAssertTrue(written == expected, "written differently: \(String(decoding: text, as: UTF8.self))")
            XCTAssertTrue(PlistJSON.encodedDictionary(jsonText: text) == expected, "through encodedDictionary")
            // Read as the parser's check found it: every string ends at its next quote.
            let object = try XCTUnwrap(JSON.parse(Array(#"{"m":"#.utf8) + text + Array("}".utf8), keepingObjectsAsTextFrom: 2)["m"]?.objectValue)
            XCTAssertTrue(object.jsonTextStringsArePlain, "the parser's check finds the strings plain")
            XCTAssertTrue(
                PlistJSON.encodedDictionary(jsonText: text, stringsArePlain: true) == expected, "through encodedDictionary, strings plain")
            flat += 1
        }
        XCTAssertGreaterThan(flat, 1_200)
        XCTAssertGreaterThan(duplicates, 100)

        let notFlat = [
            "{" + (0..<33).map { "\"k\($0)\":1" }.joined(separator: ",") + "}",
            #"{"a":{"b":1}}"#, #"{"a":[1]}"#, #"{"a":null}"#, #"{"a":2.5}"#, #"{"a":1e3}"#,
            #"{"a":9223372036854775808}"#, #"{"a":-9223372036854775809}"#, #"{"a":"line\nbreak"}"#,
            #"{"k\u0041":1}"#, #"{"caf\#u{E9}":1}"#, #"{"a":"caf\#u{E9}"}"#, #"{"a":{"$data":"AA=="}}"#, #"[1]"#, #""x""#,
        ]
        for json in notFlat {
            let text = Array(json.utf8)
            XCTAssertNil(text.withUnsafeBufferPointer { PlistJSON.encodedFlatDictionary(jsonText: $0) }, json)
            // The general path still writes those it can, with the bytes of their entries.
            if let encoded = PlistJSON.encodedDictionary(jsonText: text) {
                XCTAssertEqual(encoded, try PropertyListCodec.encode(entries: PlistJSON.entries(from: JSON.parse(text), path: "m")), json)
            }
        }
        let thirtyTwo = "{" + (0..<32).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        XCTAssertNotNil(Array(thirtyTwo.utf8).withUnsafeBufferPointer { PlistJSON.encodedFlatDictionary(jsonText: $0) })
    }

    /// A reply written straight from its property list is the text of its decoded entries,
    /// whether it is flat (written in one pass) or turns out not to be part way (handed to the
    /// writer with what was collected): integers at both ends, booleans, strings to escape,
    /// more members than are collected, nested values first, last and in the middle.
    func testRepliesAsJSONAgreeWithTheirEntries() throws {
        let flatMembers: [(String, PropertyListValue)] = [
            ("a", .string("x")), ("b", .integer(.min)), ("c", .integer(.max)), ("d", .integer(0)), ("e", .integer(-7)),
            ("f", .boolean(true)), ("g", .boolean(false)), ("h", .string("")), ("i", .string(String(repeating: "w", count: 40))),
        ]
        var cases: [[String: PropertyListValue]] = [
            [:],
            Dictionary(uniqueKeysWithValues: flatMembers),
            Dictionary(uniqueKeysWithValues: (0..<32).map { ("k\(String(format: "%02d", $0))", PropertyListValue.integer(Int64($0))) }),
            Dictionary(uniqueKeysWithValues: (0..<33).map { ("k\(String(format: "%02d", $0))", PropertyListValue.string("v\($0)")) }),
            ["a": .string("say \"hi\""), "b": .string("x")],
            ["a": .string("x"), "b": .string("tab\there"), "c": .integer(1)],
            ["a": .string("back\\slash")],
            ["a\"key": .string("x")],
            ["a": .dictionary([:]), "b": .string("x")],
            ["a": .string("x"), "m": .array([.integer(1), .dictionary(["n": .boolean(true)])]), "z": .integer(2)],
            ["a": .string("x"), "b": .real(2.5)],
            ["a": .string("x"), "b": .data([1, 2, 3]), "c": .date(date)],
            ["z": .dictionary(["y": .dictionary(["x": .string("deep")])])],
        ]
        cases.append(Dictionary(uniqueKeysWithValues: flatMembers + [("j", .array([]))]))
        for dictionary in cases {
            let bytes = try PropertyListCodec.encode(dictionary)
            let expected = JSON.serialize(PlistJSON.json(fromEntries: try PropertyListCodec.decodeEntries(bytes)))
            let written = try XCTUnwrap(PlistJSON.json(fromEncodedDictionary: bytes))
            XCTAssertEqual(JSON.serialize(written), expected, "\(dictionary)")
            // As the one member of a reply's result: the same text inside, whether the flat
            // path writes the member with it or the object is made around it.
            for member in ["reply", "a \"quoted\" key"] {
                let object = try XCTUnwrap(PlistJSON.jsonObject(member: member, fromEncodedDictionary: bytes))
                XCTAssertEqual(
                    JSON.serialize(.object(object)),
                    JSON.serialize(.object([member: .string("")]))
                        .replacingOccurrences(of: #":"""#, with: ":" + expected), "\(member): \(dictionary)")
            }
        }
        XCTAssertNil(PlistJSON.jsonObject(member: "reply", fromEncodedDictionary: Array("not a property list".utf8)))
    }

    /// Keys and strings are checked for what JSON escapes in blocks, eight bytes at a time,
    /// then byte by byte: every length up to past two words and some past two blocks, each
    /// byte to escape at each place (around the blocks' ends in the long ones), and strings to
    /// escape right after plain ones in the property list.
    func testShortStringsToEscapeAreFoundAtEveryPlace() throws {
        let toEscape: [Character] = ["\"", "\\", "\u{01}", "\u{1F}", "\n"]
        var cases: [[String: PropertyListValue]] = []
        for length in Array(0...18) + [63, 64, 65, 100] {
            let plain = String(repeating: "p", count: length)
            cases.append(["k": .string(plain), "l": .string("\"" + plain)])
            cases.append([plain + "k": .string("v"), plain + "l\"": .string("w")])
            // Long strings (scanned in blocks) at the start, around a block's end and at the end.
            let places = length <= 18 ? Array(0..<length) : [0, 31, 32, 40, length - 1]
            for place in places {
                for byte in toEscape {
                    var chars = Array(plain)
                    chars[place] = byte
                    let special = String(chars)
                    cases.append(["k": .string(special)])
                    cases.append([special: .string("v")])
                }
            }
        }
        for dictionary in cases {
            let bytes = try PropertyListCodec.encode(dictionary)
            let expected = JSON.serialize(PlistJSON.json(fromEntries: try PropertyListCodec.decodeEntries(bytes)))
            let written = try XCTUnwrap(PlistJSON.json(fromEncodedDictionary: bytes))
            XCTAssertEqual(JSON.serialize(written), expected, "\(dictionary)")
        }
        XCTAssertGreaterThan(cases.count, 1_500)
    }

    private func hexBytes(_ hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }

    func testDictionaryFromObject() throws {
        XCTAssertEqual(try PlistJSON.dictionary(from: ["a": 1], path: "message"), ["a": .integer(1)])
        XCTAssertEqual(try PlistJSON.dictionary(from: [:], path: "message"), [:])
    }

    private func assertError<T>(
        _ expression: @autoclosure () throws -> T, path: String, message: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try expression(), file: file, line: line) { error in
            guard let error = error as? PlistJSONError else {
                return XCTFail("unexpected \(error)", file: file, line: line)
            }
            XCTAssertEqual(error.path, path, file: file, line: line)
            XCTAssertEqual(error.message, message, file: file, line: line)
            XCTAssertEqual(error.description, message, file: file, line: line)
        }
    }
}

/// Counts what a walk reports.
private struct CountingWalker: PropertyListWalker {
    var values = 0
    mutating func beginDictionary(count: Int) { values += 1 }
    mutating func key(_ ascii: UnsafeBufferPointer<UInt8>) {}
    mutating func endDictionary() {}
    mutating func beginArray(count: Int) { values += 1 }
    mutating func endArray() {}
    mutating func string(_ ascii: UnsafeBufferPointer<UInt8>) { values += 1 }
    mutating func integer(_ value: Int64) { values += 1 }
    mutating func real(_ value: Double) { values += 1 }
    mutating func boolean(_ value: Bool) { values += 1 }
    mutating func data(_ bytes: UnsafeBufferPointer<UInt8>) { values += 1 }
    mutating func date(_ value: Date) { values += 1 }
}
