import Foundation
import WireProtocol
import TestSupport
import LinkCrypto
import XCTest

final class PropertyListCodecTests: XCTestCase {
    private func roundTrip(_ dictionary: [String: PropertyListValue], file: StaticString = #filePath, line: UInt = #line) throws {
        let bytes = try PropertyListCodec.encode(dictionary)
        XCTAssertEqual(try PropertyListCodec.decodeDictionary(bytes), dictionary, file: file, line: line)
    }

    private func assertDecodingFails(
        _ bytes: [UInt8], containing expected: String,
        file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try PropertyListCodec.decodeDictionary(bytes), file: file, line: line) { error in
            guard let error = error as? PropertyListError else {
                return XCTFail("expected a PropertyListError, got \(error)", file: file, line: line)
            }
            XCTAssertTrue(error.message.contains(expected), "\"\(error.message)\" does not contain \"\(expected)\"", file: file, line: line)
        }
        // The check without decoding refuses it too, with the decoder's reason.
        XCTAssertFalse(PropertyListCodec.isDictionaryByCheck(bytes), "the check takes what the decoder refuses", file: file, line: line)
        XCTAssertThrowsError(try PropertyListCodec.checkDictionary(bytes), file: file, line: line) { error in
            XCTAssertTrue("\(error)".contains(expected), "\(error)", file: file, line: line)
        }
    }

    /// The check without decoding agrees with the decoder on valid lists of every kind of
    /// value and on each of their damaged copies (every byte changed in turn).
    func testTheCheckWithoutDecodingAgreesWithTheDecoder() throws {
        let valid: [[String: PropertyListValue]] = [
            [:], ["a": .string("x")], ["k": .array([.integer(1), .real(2.5), .boolean(true), .data([1, 2]), .string("é🙂")])],
            ["nested": .dictionary(["x": .date(Date(timeIntervalSinceReferenceDate: 5)), "y": .integer(-1)]), "long key of more than fifteen": .string("v")],
            Dictionary(uniqueKeysWithValues: (0..<40).map { ("key\($0)", PropertyListValue.integer(Int64($0))) }),
            // Keys and strings of every short length: those are checked a word at a time.
            Dictionary(uniqueKeysWithValues: (0...16).map { (String(repeating: "k", count: $0), PropertyListValue.string(String(repeating: "v", count: $0))) }),
            ["abcdefgh": .integer(1), "abcdefg": .integer(2), "abcdefgi": .integer(3), "b": .array([.string("0123456789abcd")])],
            // Flat (checked in a loop of its own): booleans, integers of every size, a long string.
            [
                "on": .boolean(true), "off": .boolean(false), "small": .integer(7), "two": .integer(300), "four": .integer(70_000),
                "negative": .integer(-5), "max": .integer(.max), "s": .string("a string longer than fifteen bytes"),
            ],
            // Flat, with keys equal in their first eight bytes, a key that begins another and
            // one with a NUL: the loop orders keys by a word of their first eight bytes, then
            // byte by byte.
            [
                "ab": .integer(1), "ab\u{0}": .integer(2), "abcdefgh": .integer(3), "abcdefgh1": .integer(4),
                "abcdefgh2": .string("x"), "abcdefgi": .boolean(true),
            ],
            // Flat and past 256 bytes: two-byte offsets, still the loop's.
            Dictionary(uniqueKeysWithValues: (0..<5).map { ("k\($0)", PropertyListValue.string(String(repeating: "abcdefgh", count: 9 * ($0 + 1)))) })
                .merging(["n": .integer(300), "t": .boolean(true)]) { $1 },
        ]
        var checked = 0
        for dictionary in valid {
            let encoded = try PropertyListCodec.encode(dictionary)
            XCTAssertTrue(PropertyListCodec.isDictionaryByCheck(encoded))
            XCTAssertEqual(try PropertyListCodec.encode(entries: Array(dictionary)), encoded, "entries in any order, the same bytes")
            for index in encoded.indices {
                for replacement: UInt8 in [0x00, 0x0F, 0x5F, 0xD1, 0xFF, encoded[index] ^ 0x80] {
                    var damaged = encoded
                    damaged[index] = replacement
                    let decoded = Result { try PropertyListCodec.decodeDictionary(damaged) }
                    XCTAssertEqual(
                        PropertyListCodec.isDictionaryByCheck(damaged), (try? decoded.get()) != nil, "byte \(index) = \(replacement) of \(dictionary)")
                    // The entries read without a Swift dictionary agree with it, errors included.
                    let entries = Result { try PropertyListCodec.decodeEntries(damaged) }
                    switch (decoded, entries) {
                    case (.success(let dictionary), .success(let entries)):
                        XCTAssertEqual(entries.map(\.key), PropertyListCodec.sortedEntries(dictionary).map(\.key))
                        XCTAssertEqual(Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) }), dictionary)
                    case (.failure(let error), .failure(let entriesError)):
                        XCTAssertEqual("\(entriesError)", "\(error)", "byte \(index) = \(replacement)")
                    default:
                        XCTFail("byte \(index) = \(replacement): decodeDictionary \(decoded), decodeEntries \(entries)")
                    }
                    checked += 1
                }
            }
        }
        XCTAssertGreaterThan(checked, 1_000)
    }

    /// Lays out hand-made objects as a bplist00 file with 1-byte references and offsets.
    private func handMadePropertyList(_ objects: [[UInt8]], top: UInt64 = 0, referenceSize: UInt8 = 1) -> [UInt8] {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let tableOffset = bytes.count
        precondition(tableOffset < 256 || objects.count < 256, "use small hand-made lists")
        let offsetSize: UInt8 = tableOffset < 256 ? 1 : 2
        for offset in offsets {
            if offsetSize == 2 { bytes.append(UInt8(offset >> 8)) }
            bytes.append(UInt8(truncatingIfNeeded: offset))
        }
        bytes += [0, 0, 0, 0, 0, 0, offsetSize, referenceSize]
        bytes += bigEndian(UInt64(objects.count)) + bigEndian(top) + bigEndian(UInt64(tableOffset))
        return bytes
    }

    private func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) }
    }

    // MARK: Round trips

    func testEveryKindOfValueRoundTrips() throws {
        try roundTrip([
            "ascii": .string("hello"),
            "empty string": .string(""),
            "long": .string(String(repeating: "abc", count: 1_000)),
            "unicode": .string("héllo wörld ✓"),
            "astral": .string("👍🏽 𝄞"),
            "zero": .integer(0),
            "byte": .integer(255),
            "short": .integer(256),
            "short max": .integer(65_535),
            "word": .integer(65_536),
            "word max": .integer(Int64(UInt32.max)),
            "above word": .integer(Int64(UInt32.max) + 1),
            "max": .integer(.max),
            "minus one": .integer(-1),
            "min": .integer(.min),
            "real": .real(0.1),
            "infinity": .real(-.infinity),
            "huge": .real(1e300),
            "tiny": .real(.leastNonzeroMagnitude),
            "yes": .boolean(true),
            "no": .boolean(false),
            "empty data": .data([]),
            "data": .data([0, 1, 2, 0xFF]),
            "big data": .data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }),
            "epoch": .date(Date(timeIntervalSinceReferenceDate: 0)),
            "date": .date(Date(timeIntervalSince1970: 1_700_000_000.25)),
            "old date": .date(Date(timeIntervalSinceReferenceDate: -3_000_000_000.5)),
            "empty array": .array([]),
            "empty dictionary": .dictionary([:]),
            "array": .array([.integer(1), .string("two"), .boolean(true), .array([.real(3.5)]), .dictionary(["k": .data([9])])]),
            "nested": .dictionary(["a": .dictionary(["b": .dictionary(["c": .array([.string("deep")])])])]),
        ])
    }

    func testAnEmptyDictionaryRoundTrips() throws {
        try roundTrip([:])
    }

    func testBooleansAndIntegersStayDistinct() throws {
        let bytes = try PropertyListCodec.encode(["bool": .boolean(true), "int": .integer(1), "false": .boolean(false), "zero": .integer(0)])
        let decoded = try PropertyListCodec.decodeDictionary(bytes)
        XCTAssertEqual(decoded["bool"], .boolean(true))
        XCTAssertEqual(decoded["int"], .integer(1))
        XCTAssertEqual(decoded["false"], .boolean(false))
        XCTAssertEqual(decoded["zero"], .integer(0))
        XCTAssertNotEqual(PropertyListValue.boolean(true), .integer(1))
    }

    func testNegativeZeroKeepsItsSign() throws {
        let decoded = try PropertyListCodec.decodeDictionary(try PropertyListCodec.encode(["z": .real(-0.0)]))
        guard case .real(let value)? = decoded["z"] else { return XCTFail("expected a real") }
        XCTAssertEqual(value.sign, .minus)
    }

    func testEqualStringsAreStoredOnce() throws {
        let text = String(repeating: "x", count: 500)
        let bytes = try PropertyListCodec.encode(["a": .string(text), "b": .array([.string(text), .string(text)])])
        XCTAssertLessThan(bytes.count, 700)
        XCTAssertEqual(try PropertyListCodec.decodeDictionary(bytes)["b"], .array([.string(text), .string(text)]))
    }

    /// Strings are shared when their code points are equal, not when they are equal as Swift
    /// Strings: a composed and a decomposed "é" are two objects, each shared by the keys that
    /// hold it. The expected bytes are Python's plistlib's, an independent writer.
    func testStringsAreSharedAsPlistlibSharesThem() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        // plistlib.dumps({"a": "caf\u00e9", "b": "cafe\u0301", "c": "caf\u00e9", "d": "cafe\u0301"},
        //                fmt=plistlib.FMT_BINARY, sort_keys=True)
        let expected = Fixtures.bytes(
            """
            62706c6973743030d4010203040506050651615162516351646400630061006600\
            e9650063006100660065030108111315171922000000000000010100000000000000\
            070000000000000000000000000000002d
            """)
        let bytes = try PropertyListCodec.encode([
            "a": .string(composed), "b": .string(decomposed), "c": .string(composed),
            "d": .string(decomposed),
        ])
        XCTAssertEqual(bytes, expected)
        let decoded = try PropertyListCodec.decodeDictionary(bytes)
        for (key, string) in [("a", composed), ("b", decomposed), ("c", composed), ("d", decomposed)] {
            guard case .string(let value)? = decoded[key] else { return XCTFail("\(key) is not a string") }
            XCTAssertEqual(Array(value.utf8), Array(string.utf8), "\(key) keeps its bytes")
        }
        // Many strings (the writer's table of strings grows): 150 distinct ones, each twice.
        // plistlib.dumps({"list": ["s%d" % (i % 150) for i in range(300)]}, fmt=plistlib.FMT_BINARY,
        //                sort_keys=True): 1,298 bytes, 153 objects, SHA-256 below.
        let list = try PropertyListCodec.encode(["list": .array((0..<300).map { .string("s\($0 % 150)") })])
        XCTAssertEqual(list.count, 1_298)
        XCTAssertEqual(list[(list.count - 24)...].prefix(8).reduce(0) { $0 << 8 | Int($1) }, 153, "objects in the trailer")
        XCTAssertEqual(SHA256.hash(list), Fixtures.bytes("96461812afde19e39c5fa57019c5cc842fe339455f23c7b3d9fd7727cb018f8c"))
    }

    func testEncodingIsStable() throws {
        // plistlib.dumps({"zeta": 1, "alpha": "a", "mid": False, "é": 2.0}, fmt=plistlib.FMT_BINARY, sort_keys=True)
        let expected = Fixtures.bytes(
            """
            62706c6973743030d4010203040506070855616c706861536d6964547a657461\
            6100e951610810012340000000000000000811171b2023252628000000000000\
            0101000000000000000900000000000000000000000000000031
            """)
        let entries: [(String, PropertyListValue)] = [("zeta", .integer(1)), ("alpha", .string("a")), ("mid", .boolean(false)), ("é", .real(2))]
        // Whatever order the dictionary is built in, the bytes are the same: keys sorted.
        for order in [[0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2], [2, 0, 3, 1]] {
            var dictionary: [String: PropertyListValue] = [:]
            for index in order { dictionary[entries[index].0] = entries[index].1 }
            XCTAssertEqual(try PropertyListCodec.encode(dictionary), expected, "insertion order \(order)")
        }
    }

    func testTheEncoderWritesWhatPythonsPlistlibWrites() throws {
        XCTAssertEqual(
            try PropertyListCodec.encode(["action": .string("ping"), "count": .integer(1), "urgent": .boolean(true)]),
            Fixtures.pingPropertyList)
        XCTAssertEqual(try PropertyListCodec.encode(["ok": .boolean(true)]), Fixtures.okPropertyList)
    }

    func testSixtyFourLevelsOfNestingAreTheLimit() throws {
        var value = PropertyListValue.string("bottom")
        for _ in 0..<63 {
            value = .array([value])
        }
        try roundTrip(["deep": value])
        XCTAssertThrowsError(try PropertyListCodec.encode(["deep": .array([value])])) {
            XCTAssertEqual(($0 as? PropertyListError)?.message, "arrays and dictionaries nest deeper than 64 levels")
        }
    }

    // MARK: Foundation interoperability

    private func isBoolean(_ value: Any?) -> Bool {
        guard let value else { return false }
        #if canImport(Darwin)
        return CFGetTypeID(value as CFTypeRef) == CFBooleanGetTypeID()
        #else
        return type(of: value) == Bool.self
        #endif
    }

    func testFoundationReadsWhatTheEncoderWrites() throws {
        let bytes = try PropertyListCodec.encode([
            "s": .string("héllo 👍🏽"), "i": .integer(-42), "big": .integer(.max), "r": .real(2.5), "b": .boolean(true),
            "one": .integer(1), "d": .data([1, 2, 3]), "t": .date(Date(timeIntervalSinceReferenceDate: 1234.5)),
            "a": .array([.string("x"), .integer(7)]), "n": .dictionary(["k": .boolean(false)]),
        ])
        let object = try PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil)
        let dictionary = try XCTUnwrap(object as? [AnyHashable: Any])
        XCTAssertEqual(dictionary["s"] as? String, "héllo 👍🏽")
        XCTAssertEqual((dictionary["i"] as? NSNumber)?.int64Value, -42)
        XCTAssertEqual((dictionary["big"] as? NSNumber)?.int64Value, .max)
        XCTAssertEqual((dictionary["r"] as? NSNumber)?.doubleValue, 2.5)
        XCTAssertTrue(isBoolean(dictionary["b"]))
        XCTAssertFalse(isBoolean(dictionary["one"]))
        XCTAssertEqual(dictionary["d"] as? Data, Data([1, 2, 3]))
        XCTAssertEqual(dictionary["t"] as? Date, Date(timeIntervalSinceReferenceDate: 1234.5))
        XCTAssertEqual((dictionary["a"] as? [Any])?.first as? String, "x")
        XCTAssertTrue(isBoolean((dictionary["n"] as? [AnyHashable: Any])?["k"]))
    }

    func testTheDecoderReadsWhatFoundationWrites() throws {
        let object: [String: Any] = [
            "s": "héllo 👍🏽", "ascii": "plain", "i": -42, "small": 200, "r": 2.5, "b": true, "f": false,
            "d": Data([1, 2, 3]), "t": Date(timeIntervalSinceReferenceDate: 1234.5),
            "a": ["x", 7, ["nested": true]] as [Any], "e": [String: Any](),
        ]
        let bytes = try PropertyListSerialization.data(fromPropertyList: object, format: .binary, options: 0)
        XCTAssertEqual(
            try PropertyListCodec.decodeDictionary(Array(bytes)),
            [
                "s": .string("héllo 👍🏽"), "ascii": .string("plain"), "i": .integer(-42), "small": .integer(200), "r": .real(2.5),
                "b": .boolean(true), "f": .boolean(false), "d": .data([1, 2, 3]),
                "t": .date(Date(timeIntervalSinceReferenceDate: 1234.5)),
                "a": .array([.string("x"), .integer(7), .dictionary(["nested": .boolean(true)])]), "e": .dictionary([:]),
            ])
    }

    func testAnUnsignedValueAboveInt64MaxIsRefused() throws {
        let bytes = try PropertyListSerialization.data(fromPropertyList: ["u": UInt64.max], format: .binary, options: 0)
        assertDecodingFails(Array(bytes), containing: "18446744073709551615, outside the Int64 range")
    }

    // MARK: Errors

    func testGarbageIsNotAPropertyList() {
        assertDecodingFails([], containing: "not a binary property list")
        assertDecodingFails(Array("hello world, this is not a property list at all".utf8), containing: "not a binary property list")
        assertDecodingFails(Array("bplist00".utf8), containing: "is too short")
        assertDecodingFails(
            Array("bplist15 and more bytes to pass the length check here......".utf8),
            containing: "not a binary property list of version 00: the header is \"bplist15\"")
    }

    func testAnXMLPropertyListIsRefused() throws {
        let xml = try PropertyListSerialization.data(fromPropertyList: ["k": "v"], format: .xml, options: 0)
        assertDecodingFails(Array(xml), containing: "not a binary property list")
    }

    func testATopLevelThatIsNotADictionaryIsRefused() throws {
        let array = try PropertyListSerialization.data(fromPropertyList: [1, 2], format: .binary, options: 0)
        assertDecodingFails(Array(array), containing: "top level is an array, not a dictionary")
        assertDecodingFails(handMadePropertyList([[0x51, 0x61]]), containing: "top level is a string, not a dictionary")
        assertDecodingFails(handMadePropertyList([[0x09]]), containing: "top level is a boolean, not a dictionary")
    }

    func testAKeyThatIsNotAStringIsRefused() {
        let plist = handMadePropertyList([[0xD1, 1, 2], [0x10, 5], [0x09]])
        assertDecodingFails(plist, containing: "dictionary object 0 has a key that is not a string: object 1 is an integer")
    }

    func testUnsupportedTypesAreRefused() {
        assertDecodingFails(handMadePropertyList([[0xD1, 1, 2], [0x51, 0x6B], [0x00]]), containing: "unsupported type null")
        assertDecodingFails(handMadePropertyList([[0xD1, 1, 2], [0x51, 0x6B], [0x80, 0x01]]), containing: "unsupported type UID")
        assertDecodingFails(handMadePropertyList([[0xD1, 1, 2], [0x51, 0x6B], [0xC0]]), containing: "unsupported type set")
        assertDecodingFails(handMadePropertyList([[0xD1, 1, 2], [0x51, 0x6B], [0x70]]), containing: "unknown marker 0x70")
    }

    func testADuplicateKeyIsRefused() {
        let plist = handMadePropertyList([[0xD2, 1, 1, 2, 2], [0x51, 0x6B], [0x09]])
        assertDecodingFails(plist, containing: "has the key \"k\" more than once")
        // Keys are equal as Strings are: "k" in ASCII and in UTF-16 objects, and "é" composed
        // (U+00E9) and decomposed (e, U+0301), are one key each.
        assertDecodingFails(
            handMadePropertyList([[0xD2, 1, 2, 3, 3], [0x51, 0x6B], [0x61, 0x00, 0x6B], [0x09]]),
            containing: "more than once")
        assertDecodingFails(
            handMadePropertyList([[0xD2, 1, 2, 3, 3], [0x61, 0x00, 0xE9], [0x62, 0x00, 0x65, 0x03, 0x01], [0x09]]),
            containing: "more than once")
        // Two different ASCII keys of the same length are two keys.
        XCTAssertNotNil(try? PropertyListCodec.decodeDictionary(handMadePropertyList([[0xD2, 1, 2, 3, 3], [0x51, 0x6B], [0x51, 0x6C], [0x09]])))
        XCTAssertTrue(PropertyListCodec.isDictionaryByCheck(handMadePropertyList([[0xD2, 1, 2, 3, 3], [0x51, 0x6B], [0x51, 0x6C], [0x09]])))
        // Keys in ascending order are distinct; a repeat after the order breaks is still found,
        // and keys out of order but distinct are taken.
        assertDecodingFails(
            handMadePropertyList([[0xD3, 1, 2, 1, 3, 3, 3], [0x51, 0x61], [0x51, 0x62], [0x09]]), containing: "has the key \"a\" more than once")
        assertDecodingFails(
            handMadePropertyList([[0xD3, 1, 2, 3, 4, 4, 4], [0x51, 0x61], [0x51, 0x63], [0x51, 0x63], [0x09]]), containing: "has the key \"c\" more than once")
        let outOfOrder = handMadePropertyList([[0xD3, 1, 2, 3, 4, 4, 4], [0x51, 0x61], [0x51, 0x63], [0x51, 0x62], [0x09]])
        XCTAssertEqual(try PropertyListCodec.decodeDictionary(outOfOrder).keys.sorted(), ["a", "b", "c"])
        XCTAssertTrue(PropertyListCodec.isDictionaryByCheck(outOfOrder))
    }

    /// The flat read gives the keys in the order of their bytes, so it takes only a file that
    /// lists them so: "ab" before "ab\0" (the first eight bytes of a shorter key are read as
    /// a word with zeros after the key, not with the bytes that follow it in the file).
    func testTheFlatReadTakesKeysInTheOrderOfTheirBytesOnly() {
        func flatCount(_ bytes: [UInt8]) -> Int? {
            bytes.withUnsafeBufferPointer { buffer in
                withUnsafeTemporaryAllocation(of: FlatDictionaryEntry.self, capacity: 4) { PropertyListCodec.readFlatDictionary(buffer, into: $0) }
            }
        }
        let descending = handMadePropertyList([[0xD2, 1, 2, 3, 3], [0x53, 0x61, 0x62, 0x00], [0x52, 0x61, 0x62], [0x09]])
        XCTAssertNil(flatCount(descending))
        XCTAssertEqual(try PropertyListCodec.decodeDictionary(descending), ["ab": .boolean(true), "ab\u{0}": .boolean(true)])
        let ascending = handMadePropertyList([[0xD2, 1, 2, 3, 3], [0x52, 0x61, 0x62], [0x53, 0x61, 0x62, 0x00], [0x09]])
        XCTAssertEqual(flatCount(ascending), 2)
    }

    /// A string of 15 bytes or more carries its count in an integer object after its marker.
    /// The flat read takes the counts writers use (one byte, two bytes big-endian) and any
    /// other size of integer the format allows (a four-byte count here), and refuses a count
    /// that runs past the objects, as the decoder does.
    func testTheFlatReadTakesLongStringsByTheirCount() throws {
        func flatStrings(_ bytes: [UInt8]) -> [String: String]? {
            bytes.withUnsafeBufferPointer { buffer in
                withUnsafeTemporaryAllocation(of: FlatDictionaryEntry.self, capacity: 4) { entries in
                    guard let count = PropertyListCodec.readFlatDictionary(buffer, into: entries) else { return nil }
                    var strings: [String: String] = [:]
                    for entry in entries[..<count] {
                        guard case .asciiString(let string) = entry.value else { return nil }
                        strings[String(decoding: entry.key, as: UTF8.self)] = String(decoding: string, as: UTF8.self)
                    }
                    return strings
                }
            }
        }
        let oneByte = String(repeating: "x", count: 20)
        let twoBytes = String(repeating: "y", count: 0x0102)
        let written = try PropertyListCodec.encode(["a": .string(oneByte), "b": .string(twoBytes)])
        XCTAssertEqual(flatStrings(written), ["a": oneByte, "b": twoBytes])

        let fourByteCount: [UInt8] = [0x5F, 0x12, 0, 0, 0, 20] + Array(oneByte.utf8)
        let fourBytes = handMadePropertyList([[0xD1, 1, 2], [0x51, 0x6B], fourByteCount])
        XCTAssertEqual(flatStrings(fourBytes), ["k": oneByte])
        XCTAssertEqual(try PropertyListCodec.decodeDictionary(fourBytes), ["k": .string(oneByte)])

        // Counts one past the string's bytes: the next object's marker (or the offset table)
        // would be read as the string's.
        for (countBytes, size) in [([0x10, 21], 1), ([0x11, 0, 21], 2)] as [([UInt8], Int)] {
            let pastTheEnd = handMadePropertyList([[0xD1, 1, 2], [0x51, 0x6B], [0x5F] + countBytes + Array(oneByte.utf8)])
            XCTAssertNil(flatStrings(pastTheEnd), "a \(size)-byte count")
            XCTAssertThrowsError(try PropertyListCodec.decodeDictionary(pastTheEnd), "a \(size)-byte count")
            XCTAssertFalse(PropertyListCodec.isDictionaryByCheck(pastTheEnd), "a \(size)-byte count")
        }
    }

    func testInvalidStringsAreRefused() {
        assertDecodingFails(handMadePropertyList([[0xD1, 1, 2], [0x51, 0xE9], [0x09]]), containing: "contains the non-ASCII byte 0xE9")
        // The flat loop skips the check of each string when one scan of the objects after the
        // top dictionary's marker found no byte of 0x80 or more; with the top dictionary last,
        // or an integer's byte 0xFF among them, each string is checked on its own.
        assertDecodingFails(handMadePropertyList([[0x51, 0xE9], [0x51, 0x6B], [0xD1, 1, 0]], top: 2), containing: "contains the non-ASCII byte 0xE9")
        XCTAssertFalse(PropertyListCodec.isDictionaryByCheck(handMadePropertyList([[0x51, 0xE9], [0x51, 0x6B], [0xD1, 1, 0]], top: 2)))
        let topLast = handMadePropertyList([[0x51, 0x76], [0x51, 0x6B], [0xD1, 1, 0]], top: 2)
        XCTAssertTrue(PropertyListCodec.isDictionaryByCheck(topLast))
        XCTAssertEqual(try PropertyListCodec.decodeDictionary(topLast), ["k": .string("v")])
        let withHighByte = [[0xD2, 1, 2, 3, 4], [0x51, 0x61], [0x51, 0x62], [0x10, 0xFF], [0x51, 0xE9]] as [[UInt8]]
        assertDecodingFails(handMadePropertyList(withHighByte), containing: "contains the non-ASCII byte 0xE9")
        XCTAssertFalse(PropertyListCodec.isDictionaryByCheck(handMadePropertyList(withHighByte)))
        assertDecodingFails(handMadePropertyList([[0xD1, 1, 2], [0x61, 0xD8, 0x3D], [0x09]]), containing: "not valid UTF-16")
    }

    func testDamagedStructureIsRefused() {
        let valid = handMadePropertyList([[0xD1, 1, 2], [0x51, 0x6B], [0x09]])
        XCTAssertEqual(try PropertyListCodec.decodeDictionary(valid), ["k": .boolean(true)])

        var badOffsetSize = valid
        badOffsetSize[valid.count - 26] = 9
        assertDecodingFails(badOffsetSize, containing: "offset size of 9 bytes")

        var badReferenceSize = valid
        badReferenceSize[valid.count - 25] = 0
        assertDecodingFails(badReferenceSize, containing: "object reference size of 0 bytes")

        var tooManyObjects = valid
        tooManyObjects[valid.count - 17] = 200
        assertDecodingFails(tooManyObjects, containing: "200 objects do not fit the offset table")

        var badTop = valid
        badTop[valid.count - 9] = 3
        assertDecodingFails(badTop, containing: "top object 3 is not one of the 3 objects")

        var badTable = valid
        badTable[valid.count - 1] = 0xF0
        assertDecodingFails(badTable, containing: "offset table at 240 is outside the object area")

        var badOffset = valid
        badOffset[valid.count - 32 - 3] = 0xEE
        assertDecodingFails(badOffset, containing: "object 0 has the offset 238, outside the object area")

        assertDecodingFails(
            handMadePropertyList([[0xD1, 1, 9], [0x51, 0x6B], [0x09]]),
            containing: "object 0 refers to object 9, but there are 3 objects")
    }

    func testLengthsBeyondTheInputAreRefusedWithoutAllocating() {
        let hugeData: [UInt8] = [0x4F, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        assertDecodingFails(handMadePropertyList([[0xD1, 1, 2], [0x51, 0x6B], hugeData]), containing: "runs past the end of the object area")
        let hugeArray: [UInt8] = [0xAF, 0x13, 0x0F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        assertDecodingFails(handMadePropertyList([[0xD1, 1, 2], [0x51, 0x6B], hugeArray]), containing: "runs past the end of the object area")
        let hugeDictionary: [UInt8] = [0xDF, 0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        assertDecodingFails(handMadePropertyList([hugeDictionary]), containing: "runs past the end of the object area")
        let negativeCount: [UInt8] = [0x4F, 0x13, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        assertDecodingFails(handMadePropertyList([[0xD1, 1, 2], [0x51, 0x6B], negativeCount]), containing: "invalid count")
        let hugeUTF16: [UInt8] = [0x6F, 0x13, 0x40, 0, 0, 0, 0, 0, 0, 0]
        assertDecodingFails(handMadePropertyList([[0xD1, 1, 2], [0x51, 0x6B], hugeUTF16]), containing: "runs past the end of the object area")
        assertDecodingFails(handMadePropertyList([[0xD1, 1, 2], [0x51, 0x6B], [0x13, 0x01]]), containing: "runs past the end of the object area")
    }

    func testAContainerThatContainsItselfIsRefused() {
        assertDecodingFails(handMadePropertyList([[0xD1, 1, 2], [0x51, 0x6B], [0xA1, 2]]), containing: "object 2 contains itself")
        assertDecodingFails(handMadePropertyList([[0xD1, 1, 0], [0x51, 0x6B]]), containing: "object 0 contains itself")
    }

    func testNestingDeeperThanTheLimitIsRefused() {
        var objects: [[UInt8]] = [[0xD1, 1, 2], [0x51, 0x6B]]
        for index in 2..<100 {
            objects.append([0xA1, UInt8(index + 1)])
        }
        objects.append([0x09])
        assertDecodingFails(handMadePropertyList(objects), containing: "nest deeper than 64 levels")
    }

    /// The reader's limit exactly: a dictionary holding 63 nested arrays (64 containers) is read,
    /// one more array is refused.
    func testTheReaderTakesSixtyFourLevelsAndRefusesSixtyFive() throws {
        func nested(containers: Int) -> [UInt8] {
            var objects: [[UInt8]] = [[0xD1, 1, 2], [0x51, 0x6B]]
            for index in 2..<(containers + 1) {
                objects.append([0xA1, UInt8(index + 1)])
            }
            objects.append([0x09])
            return handMadePropertyList(objects)
        }
        var depth = 0
        var value = try XCTUnwrap(PropertyListCodec.decodeDictionary(nested(containers: 64))["k"])
        while case .array(let items) = value, let first = items.first {
            depth += 1
            value = first
        }
        XCTAssertEqual(depth, 63)
        XCTAssertEqual(value, .boolean(true))
        assertDecodingFails(nested(containers: 65), containing: "nest deeper than 64 levels")
    }

    func testSharedReferencesCannotExpandWithoutBound() {
        var objects: [[UInt8]] = [[0xD1, 1, 2], [0x51, 0x6B]]
        for index in 2..<60 {
            objects.append([0xA2, UInt8(index + 1), UInt8(index + 1)])
        }
        objects.append([0x09])
        assertDecodingFails(handMadePropertyList(objects), containing: "expands to more than")
    }

    func testCutAndDamagedFilesAreRefusedWithTheirReason() throws {
        let seeds: [[UInt8]] = [
            try PropertyListCodec.encode([
                "s": .string("héllo"), "i": .integer(-1), "a": .array([.data([1, 2]), .date(Date(timeIntervalSinceReferenceDate: 5))]),
                "n": .dictionary(["x": .real(1.5), "y": .boolean(true), "long": .string(String(repeating: "z", count: 40))]),
            ]),
            Fixtures.pingPropertyList,
        ]
        let seed = testSeed(default: 42)
        var generator = SeededGenerator(seed: seed)
        for original in seeds {
            // Every cut of a valid file is refused; the short ones with the reason their length gives.
            for length in 0..<original.count {
                let expected: String
                switch length {
                case 0..<6: expected = "the data does not start with \"bplist00\""
                case 6..<8: expected = "not a binary property list of version 00"
                case 8..<42: expected = "is too short (at least 42 are needed)"
                default: expected = "damaged binary property list: "
                }
                assertDecodingFails(Array(original.prefix(length)), containing: expected)
            }
            for _ in 0..<5_000 {
                var bytes = original
                var damaged: [Int] = []
                for _ in 0..<Int.random(in: 1...4, using: &generator) {
                    let index = Int.random(in: 0..<bytes.count, using: &generator)
                    bytes[index] = UInt8.random(in: 0...255, using: &generator)
                    damaged.append(index)
                }
                do {
                    // Damage the decoder accepts must still be a property list it can write and read back.
                    let decoded = try PropertyListCodec.decodeDictionary(bytes)
                    XCTAssertFalse(bytes[0..<8] != original[0..<8], "a damaged header was accepted (seed \(seed))")
                    // (Compared as bytes: a damaged real may be NaN, which is not equal to itself.)
                    let written = try PropertyListCodec.encode(decoded)
                    XCTAssertEqual(
                        try PropertyListCodec.encode(PropertyListCodec.decodeDictionary(written)), written,
                        "seed \(seed), damage at \(damaged)")
                } catch let error as PropertyListError {
                    XCTAssertFalse(error.message.isEmpty)
                    if bytes[0..<8] != original[0..<8] {
                        XCTAssertTrue(
                            error.message.hasPrefix("not a binary property list"),
                            "a damaged header is named: \(error.message) (seed \(seed))")
                    }
                } catch {
                    XCTFail("expected a PropertyListError, got \(error) (seed \(seed), damage at \(damaged))")
                }
            }
        }
    }

    func testErrorDescriptionIsTheMessage() {
        XCTAssertEqual(PropertyListError("bad").description, "bad")
    }
}
