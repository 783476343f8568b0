#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkJSON
import WireProtocol

extension PlistJSON {
    /// The encoded property-list dictionary that the JSON object `text` stands for, read
    /// straight from the text (no ``JSONValue``, no `String` of a key or value between), when
    /// the object has the common form: keys of ASCII characters, strings without escapes, no
    /// repeated key. The bytes are those of ``entries(from:path:)`` encoded with
    /// ``PropertyListCodec/encode(entries:)``.
    ///
    /// Nil for anything else, valid or not (an escape, a `null`, `$data` that is not base64,
    /// nesting deeper than ``PropertyListCodec/maximumDepth`` ...): the caller converts the
    /// parsed object, which names any error.
    ///
    /// - Parameters:
    ///   - text: one JSON object, as the parser checked it (``JSONObject/jsonText``).
    ///   - stringsArePlain: the parser found every string of `text` ASCII without an escape
    ///     (``JSONObject/jsonTextStringsArePlain``): a string ends at the next quote, found
    ///     without checking the bytes before it again (a 16 KiB message's strings were read
    ///     twice a byte at a word, once by the parser's check and once here).
    public static func encodedDictionary(jsonText text: [UInt8], stringsArePlain: Bool = false) -> [UInt8]? {
        text.withUnsafeBufferPointer { bytes in
            if let flat = encodedFlatDictionary(jsonText: bytes, stringsArePlain: stringsArePlain) { return flat }
            var reader = JSONTextReader(bytes, list: PropertyListBuilder(nodes: bytes.count / 8, bytes: bytes.count))
            reader.skipWhitespace()
            guard reader.peek() == UInt8(ascii: "{"), reader.readDictionary(depth: 0) else { return nil }
            reader.skipWhitespace()
            guard reader.atEnd else { return nil }
            return try? PropertyListCodec.encode(reader.list)
        }
    }
}

extension PlistJSON {
    /// The most members a flat dictionary is read with (on the stack).
    static let flatDictionaryCapacity = FlatDictionaryEntry.maximumCount

    /// The encoded dictionary of a flat JSON object, the form of most messages: at most
    /// ``flatDictionaryCapacity`` members, ASCII keys, each value an ASCII string, an integer
    /// or a boolean, no escape. Written in one pass (``PropertyListCodec/encodeFlatDictionary(_:)``),
    /// the bytes ``encodedDictionary(jsonText:)`` gives; nil for any other object.
    static func encodedFlatDictionary(jsonText bytes: UnsafeBufferPointer<UInt8>, stringsArePlain: Bool = false) -> [UInt8]? {
        withUnsafeTemporaryAllocation(of: FlatDictionaryEntry.self, capacity: flatDictionaryCapacity) { entries in
            var reader = FlatObjectReader(bytes: bytes, stringsArePlain: stringsArePlain)
            var count = 0
            guard
                reader.readMembers({ entry in
                    guard count < flatDictionaryCapacity else { return false }
                    entries.initializeElement(at: count, to: entry)
                    count += 1
                    return true
                })
            else { return nil }
            return PropertyListCodec.encodeFlatDictionary(UnsafeMutableBufferPointer(rebasing: entries[0..<count]))
        }
    }
}

/// Reads the members of a flat JSON object (``PlistJSON/encodedFlatDictionary(jsonText:)``)
/// from text the parser checked.
private struct FlatObjectReader: JSONTextScanning {
    let bytes: UnsafeBufferPointer<UInt8>
    /// The parser found every string ASCII without an escape (``readString()``).
    let stringsArePlain: Bool
    var index = 0

    /// Calls `member` with each member; false as soon as the object is not flat (or `member`
    /// returns false).
    mutating func readMembers(_ member: (FlatDictionaryEntry) -> Bool) -> Bool {
        skipWhitespace()
        guard byte() == UInt8(ascii: "{") else { return false }
        let read = scanContainer(closedBy: UInt8(ascii: "}")) { reader in
            guard let key = reader.readString() else { return false }
            reader.skipWhitespace()
            guard reader.byte() == UInt8(ascii: ":") else { return false }
            reader.index += 1
            reader.skipWhitespace()
            guard let value = reader.readValue() else { return false }
            return member(FlatDictionaryEntry(key: key, value: value))
        }
        return read && atEnd()
    }

    /// The byte at the current index; 0 at the end (never a byte that matters here: the
    /// parser refuses NUL outside strings).
    private func byte() -> UInt8 {
        index < bytes.count ? bytes[index] : 0
    }

    private mutating func atEnd() -> Bool {
        skipWhitespace()
        return index == bytes.count
    }

    private mutating func readValue() -> FlatDictionaryEntry.Value? {
        switch byte() {
        case UInt8(ascii: "\""):
            return readString().map { .asciiString($0) }
        case UInt8(ascii: "t"):
            return readLiteral("true") ? .boolean(true) : nil
        case UInt8(ascii: "f"):
            return readLiteral("false") ? .boolean(false) : nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return readInteger()
        default:
            return nil
        }
    }

    /// The bytes of an ASCII string without escapes at the current byte (its quote); nil for
    /// any other string. Where the parser found every string so, the string ends at the next
    /// quote (``JSONStringBytes/quote(in:from:)``).
    @inline(__always)
    private mutating func readString() -> UnsafeBufferPointer<UInt8>? {
        guard stringsArePlain else { return readString(asciiOnly: true) }
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        let start = index + 1
        guard let end = JSONStringBytes.quote(in: bytes, from: start) else { return nil }
        index = end + 1
        return UnsafeBufferPointer(rebasing: bytes[start..<end])
    }

    /// An integer that fits `Int64`; nil for a number with a fraction or an exponent, or out
    /// of range (a real in the property list).
    private mutating func readInteger() -> FlatDictionaryEntry.Value? {
        let start = index
        if byte() == UInt8(ascii: "-") { index += 1 }
        while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
            index += 1
        }
        let next = byte()
        if next == UInt8(ascii: ".") || next == UInt8(ascii: "e") || next == UInt8(ascii: "E") { return nil }
        return JSON.integer(UnsafeBufferPointer(rebasing: bytes[start..<index])).map { .integer($0) }
    }
}

/// Reads a JSON value of the common form into a property list; false as soon as it meets
/// anything else.
private struct JSONTextReader: JSONTextScanning {
    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    var list: PropertyListBuilder

    init(_ bytes: UnsafeBufferPointer<UInt8>, list: PropertyListBuilder) {
        self.bytes = bytes
        self.list = list
    }

    var atEnd: Bool { index == bytes.count }

    func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    /// The value at the current byte, a dictionary's value when `depth` is above 0 (where an
    /// object of the single member `$data` or `$date` stands for Data or a Date).
    private mutating func readValue(depth: Int) -> Bool {
        guard let byte = peek() else { return false }
        switch byte {
        case UInt8(ascii: "{"):
            if let special = readSpecialObject() { return special }
            return readDictionary(depth: depth)
        case UInt8(ascii: "["):
            guard depth < PropertyListCodec.maximumDepth else { return false }
            list.beginArray()
            return readContainer(closedBy: UInt8(ascii: "]")) { $0.readValue(depth: depth + 1) }
        case UInt8(ascii: "\""):
            guard let string = readString(asciiOnly: false) else { return false }
            list.string(utf8: string)
            return true
        case UInt8(ascii: "t"):
            return readLiteral("true")
                && {
                    list.boolean(true); return true
                }()
        case UInt8(ascii: "f"):
            return readLiteral("false")
                && {
                    list.boolean(false); return true
                }()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return readNumber()
        default:
            // null among them: not a property-list value.
            return false
        }
    }

    /// An object as a dictionary (the top one included, where `$data` and `$date` are keys
    /// like any other).
    mutating func readDictionary(depth: Int) -> Bool {
        guard depth < PropertyListCodec.maximumDepth else { return false }
        list.beginDictionary()
        return readContainer(closedBy: UInt8(ascii: "}")) { reader in
            // Keys are Strings in a JSONObject, equal by Unicode's canonical equivalence: only
            // ASCII keys are equal exactly when their bytes are.
            guard let key = reader.readString(asciiOnly: false), reader.list.string(utf8: key) else { return false }
            reader.skipWhitespace()
            guard reader.peek() == UInt8(ascii: ":") else { return false }
            reader.index += 1
            reader.skipWhitespace()
            return reader.readValue(depth: depth + 1)
        }
    }

    /// The elements or members of the array or object at the current byte, each read by
    /// `element`, up to `close`; ends the list's container.
    private mutating func readContainer(closedBy close: UInt8, _ element: (inout JSONTextReader) -> Bool) -> Bool {
        guard scanContainer(closedBy: close, element) else { return false }
        list.end()
        return true
    }

    /// `{"$data": "<base64>"}` or `{"$date": "<ISO 8601>"}` as Data or a Date: true when read,
    /// false when it is one that does not convert, nil (nothing read) for another object.
    private mutating func readSpecialObject() -> Bool? {
        let start = index
        index += 1
        skipWhitespace()
        guard let key = readString(asciiOnly: false) else {
            index = start
            return nil
        }
        let isData = key.elementsEqual(PlistJSON.dataKey.utf8)
        guard isData || key.elementsEqual(PlistJSON.dateKey.utf8) else {
            index = start
            return nil
        }
        skipWhitespace()
        guard peek() == UInt8(ascii: ":") else { return false }
        index += 1
        skipWhitespace()
        guard peek() == UInt8(ascii: "\""), let value = readString(asciiOnly: false) else { return false }
        skipWhitespace()
        guard peek() == UInt8(ascii: "}") else {
            // More members: a dictionary with a "$data" or "$date" key, rare enough to leave
            // to the parsed object.
            return false
        }
        index += 1
        let text = String(decoding: value, as: UTF8.self)
        if isData {
            guard let data = Data(base64Encoded: text) else { return false }
            data.withUnsafeBytes { list.data($0.bindMemory(to: UInt8.self)) }
        } else {
            guard let date = ISO8601Timestamp.date(from: text) else { return false }
            list.date(date)
        }
        return true
    }

    /// A number as the parser reads it: an integer when it has neither fraction nor exponent
    /// and fits `Int64`, a real otherwise.
    private mutating func readNumber() -> Bool {
        let start = index
        var isInteger = true
        scan: while let byte = peek() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"):
                break
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"):
                isInteger = false
            default:
                break scan
            }
            index += 1
        }
        let text = UnsafeBufferPointer(rebasing: bytes[start..<index])
        if isInteger, let integer = JSON.integer(text) {
            list.integer(integer)
            return true
        }
        guard let real = Double(String(decoding: text, as: UTF8.self)), real.isFinite else { return false }
        list.real(real)
        return true
    }
}

/// Reading JSON text the parser checked, a byte at a time: what both readers share.
private protocol JSONTextScanning {
    var bytes: UnsafeBufferPointer<UInt8> { get }
    var index: Int { get set }
}

extension JSONTextScanning {
    mutating func skipWhitespace() {
        while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
            index += 1
        }
    }

    /// The bytes of a string without escapes, at the current byte; nil for one with an escape
    /// (or, when `asciiOnly`, with a byte of 0x80 or more).
    mutating func readString(asciiOnly: Bool) -> UnsafeBufferPointer<UInt8>? {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { return nil }
        index += 1
        let start = index
        while true {
            index = JSONStringBytes.skipPlain(bytes, from: index, nonASCIIIsPlain: !asciiOnly)
            guard index < bytes.count else { return nil }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return UnsafeBufferPointer(rebasing: bytes[start..<index - 1])
            }
            if byte == UInt8(ascii: "\\") || byte < 0x20 || (asciiOnly && byte >= 0x80) { return nil }
            index += 1
        }
    }

    /// The elements or members of the array or object at the current byte (its opening
    /// bracket), each read by `element` from its first byte, up to `close`.
    mutating func scanContainer(closedBy close: UInt8, _ element: (inout Self) -> Bool) -> Bool {
        index += 1
        skipWhitespace()
        if index < bytes.count, bytes[index] == close {
            index += 1
            return true
        }
        while true {
            skipWhitespace()
            guard element(&self) else { return false }
            skipWhitespace()
            guard index < bytes.count else { return false }
            let next = bytes[index]
            index += 1
            if next == close { return true }
            guard next == UInt8(ascii: ",") else { return false }
        }
    }

    mutating func readLiteral(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count,
            UnsafeBufferPointer(rebasing: bytes[index..<index + count]).elementsEqual(UnsafeBufferPointer(start: literal.utf8Start, count: count))
        else { return false }
        index += count
        return true
    }
}
