#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkJSON
import WireProtocol
import LinkCollections

/// Property-list values written as JSON.
///
/// Strings, numbers, booleans, arrays and objects stand for themselves; an object with the
/// single member `"$data"` (standard base64 with padding) is `Data`, one with the single member
/// `"$date"` (ISO 8601) is a `Date` (`{"$date": null}` one that no timestamp names: not
/// finite, or hundreds of millions of years away). `null` has no property-list equivalent. A dictionary
/// whose only key is `"$data"` or `"$date"` cannot be written in this form.
public enum PlistJSON {
    /// The JSON member that marks `Data`.
    public static let dataKey = "$data"
    /// The JSON member that marks a `Date`.
    public static let dateKey = "$date"

    /// The property-list value that `json` stands for.
    ///
    /// - Parameter path: where `json` sits, used in error messages (`message.items[2].when`).
    /// - Throws: ``PlistJSONError`` naming the path of the first value that is not a
    ///   property-list value.
    public static func propertyList(from json: JSONValue, path: String = "") throws -> PropertyListValue {
        // An object kept as text is read once here, not at each look at its members.
        try propertyList(from: json.materialized, path: { path })
    }

    /// The conversion, with the path made only for an error message: the paths of every
    /// member would otherwise be built, as strings, for nothing.
    private static func propertyList(from json: JSONValue, path: () -> String) throws -> PropertyListValue {
        switch json {
        case .null:
            let path = path()
            throw PlistJSONError(path: path, message: "null at \(describe(path)) is not a property-list type")
        case .bool(let flag):
            return .boolean(flag)
        case .int(let number):
            return .integer(number)
        case .double(let number):
            return .real(number)
        case .string(let text):
            return .string(text)
        case .array(let elements):
            var values: [PropertyListValue] = []
            values.reserveCapacity(elements.count)
            for (position, element) in elements.enumerated() {
                values.append(try propertyList(from: element, path: { "\(path())[\(position)]" }))
            }
            return .array(values)
        case .object(let object):
            if object.count == 1, let (key, member) = object.first(where: { _ in true }) {
                if key == dataKey {
                    return .data(try data(from: member, path: path()))
                }
                if key == dateKey {
                    return .date(try date(from: member, path: path()))
                }
            }
            return .dictionary(Dictionary(uniqueKeysWithValues: try entries(of: object, path: path)))
        }
    }

    /// The property-list dictionary that `json` stands for.
    ///
    /// - Throws: ``PlistJSONError`` when `json` is not an object or holds a value that is not a
    ///   property-list value.
    public static func dictionary(from json: JSONValue, path: String) throws -> [String: PropertyListValue] {
        // A JSON object's keys are distinct as Strings, as a dictionary's are.
        Dictionary(uniqueKeysWithValues: try entries(from: json, path: path))
    }

    /// The entries of the property-list dictionary that `json` stands for, in the object's
    /// order: what ``dictionary(from:path:)`` gives, for ``PropertyListCodec/encode(entries:)``,
    /// without a Swift dictionary between.
    ///
    /// - Throws: ``PlistJSONError`` as ``dictionary(from:path:)`` does.
    public static func entries(from json: JSONValue, path: String) throws -> [(key: String, value: PropertyListValue)] {
        guard case .object(let object) = json else {
            throw PlistJSONError(path: path, message: "\(describe(path)) must be an object (a property-list dictionary), got \(json.typeName)")
        }
        return try entries(of: object.materialized, path: { path })
    }

    /// Property-list dictionary entries written as a JSON object, keys in the order of their
    /// UTF-8 bytes (as ``PropertyListCodec/decodeEntries(_:)`` gives them).
    public static func json(fromEntries entries: [(key: String, value: PropertyListValue)]) -> JSONValue {
        // A property-list dictionary's keys are distinct (the reader refuses a repeated one).
        .object(JSONObject(uniqueKeysWithValues: entries.map { ($0.key, json(from: $0.value)) }))
    }

    /// The JSON object of an encoded property-list dictionary, as ``json(fromEntries:)``
    /// writes its decoded entries; nil when `bytes` do not hold a dictionary.
    ///
    /// A dictionary of the common form (ASCII strings, keys in order) is written straight from
    /// the bytes as compact text, with no value between; others are decoded first.
    public static func json(fromEncodedDictionary bytes: [UInt8]) -> JSONValue? {
        // A small flat dictionary (ASCII strings without anything to escape, integers,
        // booleans: most replies) is read by the loop that checked it and written in one pass.
        if let text = flatDictionaryText(bytes) { return .object(JSONObject(compactText: text)) }
        return walkedOrDecoded(bytes)
    }

    /// ``json(fromEncodedDictionary:)`` for a dictionary the one-pass writer did not take.
    private static func walkedOrDecoded(_ bytes: [UInt8]) -> JSONValue? {
        // Any other of the common form is walked: what is flat is collected, then handed to a
        // JSONWriter, which writes the rest as the walk goes on.
        let walked = withUnsafeTemporaryAllocation(of: FlatDictionaryEntry.self, capacity: flatDictionaryCapacity) { entries in
            var walker = FlatJSONWalker(entries: entries.baseAddress!, textCapacity: bytes.count + bytes.count / 2)
            guard PropertyListCodec.walkDictionary(bytes, with: &walker) else { return nil as JSONObject? }
            return walker.object()
        }
        if let walked { return .object(walked) }
        guard let entries = try? PropertyListCodec.decodeEntries(bytes) else { return nil }
        return json(fromEntries: entries)
    }

    /// The object of one member, `key`, whose value is the JSON object of an encoded
    /// property-list dictionary (``json(fromEncodedDictionary:)``); nil when `bytes` do not
    /// hold a dictionary. A small flat dictionary is written with its member's key as one
    /// compact text (a reply's `{"reply":{...}}`), which the serializer copies whole.
    public static func jsonObject(member key: String, fromEncodedDictionary bytes: [UInt8]) -> JSONObject? {
        var key = key
        let keyIsPlain = key.withUTF8 { FlatJSONText.isPlain($0) }
        guard keyIsPlain else { return json(fromEncodedDictionary: bytes).map { JSONObject(member: key, $0) } }
        if let text = key.withUTF8({ flatDictionaryText(bytes, member: $0) }) { return JSONObject(compactText: text) }
        // The one-pass writer has had its try.
        return walkedOrDecoded(bytes).map { JSONObject(member: key, $0) }
    }

    /// The compact JSON text of a small flat dictionary with nothing to escape
    /// (``PropertyListCodec/readFlatDictionary(_:into:)``), as the value of the one member
    /// `member` (a key with nothing to escape) when given; nil for any other dictionary.
    private static func flatDictionaryText(_ bytes: [UInt8], member: UnsafeBufferPointer<UInt8>? = nil) -> [UInt8]? {
        bytes.withUnsafeBufferPointer { buffer in
            withUnsafeTemporaryAllocation(of: FlatDictionaryEntry.self, capacity: flatDictionaryCapacity) { entries in
                guard let count = PropertyListCodec.readFlatDictionary(buffer, into: entries) else { return nil }
                return FlatJSONText.plain(UnsafeBufferPointer(rebasing: entries[0..<count]), member: member)
            }
        }
    }

    /// `plist` written as JSON; dictionary keys are sorted so the text is stable.
    public static func json(from plist: PropertyListValue) -> JSONValue {
        switch plist {
        case .string(let text):
            return .string(text)
        case .integer(let number):
            return .int(number)
        case .real(let number):
            return .double(number)
        case .boolean(let flag):
            return .bool(flag)
        case .data(let bytes):
            return .object([dataKey: .string(Data(bytes).base64EncodedString())])
        case .date(let date):
            return .object([dateKey: ISO8601Timestamp.string(ifRepresentable: date).map { .string($0) } ?? .null])
        case .array(let elements):
            return .array(elements.map { json(from: $0) })
        case .dictionary(let dictionary):
            return json(from: dictionary)
        }
    }

    /// `dictionary` written as a JSON object with its keys in the order of their UTF-8 bytes
    /// (as the property list has them).
    public static func json(from dictionary: [String: PropertyListValue]) -> JSONValue {
        json(fromEntries: PropertyListCodec.sortedEntries(dictionary))
    }

    private static func entries(of object: JSONObject, path: () -> String) throws -> [(key: String, value: PropertyListValue)] {
        var entries: [(key: String, value: PropertyListValue)] = []
        entries.reserveCapacity(object.count)
        for (key, member) in object {
            entries.append(
                (
                    key,
                    try propertyList(
                        from: member,
                        path: {
                            let parent = path()
                            return parent.isEmpty ? key : "\(parent).\(key)"
                        })
                ))
        }
        return entries
    }

    private static func data(from member: JSONValue, path: String) throws -> [UInt8] {
        guard case .string(let text) = member else {
            throw PlistJSONError(path: path, message: "$data at \(describe(path)) must be a base64 string, got \(member.typeName)")
        }
        guard let data = Data(base64Encoded: text) else {
            throw PlistJSONError(path: path, message: "$data at \(describe(path)) is not valid base64")
        }
        return [UInt8](data)
    }

    private static func date(from member: JSONValue, path: String) throws -> Date {
        guard case .string(let text) = member else {
            throw PlistJSONError(path: path, message: "$date at \(describe(path)) must be an ISO 8601 string, got \(member.typeName)")
        }
        guard let date = ISO8601Timestamp.date(from: text) else {
            throw PlistJSONError(path: path, message: "$date at \(describe(path)) is not an ISO 8601 date-time with a time zone: \"\(text)\"")
        }
        return date
    }

    private static func describe(_ path: String) -> String {
        path.isEmpty ? "the top level" : path
    }
}

/// Writes the values of a property list, as ``PlistJSON/json(from:)`` maps them, as JSON text.
private struct JSONTextWalker: PropertyListWalker {
    var json: JSONWriter

    init(capacity: Int) {
        json = JSONWriter(reservingCapacity: capacity)
    }

    mutating func beginDictionary(count: Int) { json.beginObject() }
    mutating func key(_ ascii: UnsafeBufferPointer<UInt8>) { json.key(utf8: ascii) }
    mutating func endDictionary() { json.endObject() }
    mutating func beginArray(count: Int) { json.beginArray() }
    mutating func endArray() { json.endArray() }
    mutating func string(_ ascii: UnsafeBufferPointer<UInt8>) { json.string(utf8: ascii) }
    mutating func integer(_ value: Int64) { json.integer(value) }
    mutating func real(_ value: Double) { json.double(value) }
    mutating func boolean(_ value: Bool) { json.bool(value) }

    mutating func data(_ bytes: UnsafeBufferPointer<UInt8>) {
        json.beginObject()
        json.key(PlistJSON.dataKey)
        json.string(Data(bytes).base64EncodedString())
        json.endObject()
    }

    mutating func date(_ value: Date) {
        json.beginObject()
        json.key(PlistJSON.dateKey)
        if let text = ISO8601Timestamp.string(ifRepresentable: value) {
            json.string(text)
        } else {
            json.null()
        }
        json.endObject()
    }
}

/// The JSON text of a flat dictionary's members (``FlatDictionaryEntry``), written in one
/// pass into text of the exact size: for a small one read by the check's loop and for one
/// collected by ``FlatJSONWalker``.
private enum FlatJSONText {
    /// The JSON text of flat members (wrapped as the value of `member`, when given), or nil
    /// when a key or a string needs an escape.
    static func plain(_ entries: UnsafeBufferPointer<FlatDictionaryEntry>, member: UnsafeBufferPointer<UInt8>? = nil) -> [UInt8]? {
        for entry in entries {
            guard isPlain(entry.key) else { return nil }
            if case .asciiString(let string) = entry.value, !isPlain(string) { return nil }
        }
        return write(entries, member: member)
    }

    /// The JSON text of flat members whose keys and strings need no escape: an object, or
    /// `{"member":{...}}` when `member` (a key with nothing to escape) is given.
    static func write(_ entries: UnsafeBufferPointer<FlatDictionaryEntry>, member: UnsafeBufferPointer<UInt8>? = nil) -> [UInt8] {
        let count = entries.count
        var size = 2 + max(0, count - 1)
        if let member { size += member.count + 5 }
        for index in 0..<count {
            size += entries[index].key.count + 3
            switch entries[index].value {
            case .asciiString(let string): size += string.count + 2
            case .integer(let integer): size += JSON.decimalLength(of: integer)
            case .boolean(let flag): size += flag ? 4 : 5
            }
        }
        // Not `[UInt8](repeating:count:)`: its allocation looks the storage's type up at run
        // time (`ByteArrays`).
        return ByteArrays.writing(count: size) { start in
            var out = start
            func put(_ byte: UInt8) {
                out.pointee = byte
                out += 1
            }
            func put(quoted bytes: UnsafeBufferPointer<UInt8>) {
                put(UInt8(ascii: "\""))
                if let base = bytes.baseAddress { out.update(from: base, count: bytes.count) }
                out += bytes.count
                put(UInt8(ascii: "\""))
            }
            if let member {
                put(UInt8(ascii: "{"))
                put(quoted: member)
                put(UInt8(ascii: ":"))
            }
            put(UInt8(ascii: "{"))
            for index in 0..<count {
                if index > 0 { put(UInt8(ascii: ",")) }
                put(quoted: entries[index].key)
                put(UInt8(ascii: ":"))
                switch entries[index].value {
                case .asciiString(let string):
                    put(quoted: string)
                case .integer(let integer):
                    JSON.writeDecimal(integer, to: out)
                    out += JSON.decimalLength(of: integer)
                case .boolean(let flag):
                    for byte in (flag ? "true" : "false").utf8 { put(byte) }
                }
            }
            put(UInt8(ascii: "}"))
            if member != nil { put(UInt8(ascii: "}")) }
            precondition(out == start + size, "the JSON text's size was worked out wrong")
        }
    }

    /// Whether JSON takes the ASCII bytes inside quotes as they are. Most keys and strings are
    /// short and scanned in words here; a long one (the walk's) in blocks, in a function of
    /// its own, so that this one calls nothing on its way and saves no registers.
    static func isPlain(_ ascii: UnsafeBufferPointer<UInt8>) -> Bool {
        if ascii.count >= 64 { return isPlainLong(ascii) }
        return isPlain(ascii, from: JSONStringBytes.skipPlainWords(ascii, from: 0, nonASCIIIsPlain: true))
    }

    @inline(never)
    private static func isPlainLong(_ ascii: UnsafeBufferPointer<UInt8>) -> Bool {
        isPlain(ascii, from: JSONStringBytes.skipPlain(ascii, from: 0, nonASCIIIsPlain: true))
    }

    /// Whether the bytes from `index` on, fewer than a word's or from the first that is not
    /// plain, are plain.
    @inline(__always)
    private static func isPlain(_ ascii: UnsafeBufferPointer<UInt8>, from index: Int) -> Bool {
        var index = index
        while index < ascii.count {
            let byte = ascii[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            index += 1
        }
        return true
    }
}

/// Walks a dictionary as ``JSONTextWalker`` writes it: a flat one is collected (its members'
/// bytes borrowed from the property list) and written in one pass, into text of the exact
/// size; at the first value of another kind, or a string with a character to escape, the
/// members collected so far go to a ``JSONTextWalker`` and it writes the rest.
private struct FlatJSONWalker: PropertyListWalker {
    /// The members collected: at most ``PlistJSON/flatDictionaryCapacity`` (on the stack); a
    /// larger dictionary goes to the writer.
    private let entries: UnsafeMutablePointer<FlatDictionaryEntry>
    private var count = 0
    /// A key whose value has not come yet.
    private var pendingKey: UnsafeBufferPointer<UInt8>?
    private let textCapacity: Int
    /// Set once the dictionary is not flat: it writes everything from then on.
    private var writer: JSONTextWalker?

    init(entries: UnsafeMutablePointer<FlatDictionaryEntry>, textCapacity: Int) {
        self.entries = entries
        self.textCapacity = textCapacity
    }

    /// The object walked (the walk must have succeeded).
    func object() -> JSONObject {
        if let writer { return writer.json.object() }
        return JSONObject(compactText: FlatJSONText.write(UnsafeBufferPointer(start: entries, count: count)))
    }

    /// Adds a flat member's value, or hands over to the writer.
    private mutating func add(_ value: FlatDictionaryEntry.Value) {
        guard writer == nil, let key = pendingKey, count < PlistJSON.flatDictionaryCapacity else { return handOver { $0.value(value) } }
        entries.advanced(by: count).initialize(to: FlatDictionaryEntry(key: key, value: value))
        count += 1
        pendingKey = nil
    }

    /// From now on the writer writes: the members collected so far, then `next`.
    private mutating func handOver(_ next: (inout JSONTextWalker) -> Void) {
        if writer == nil {
            var json = JSONTextWalker(capacity: textCapacity)
            json.beginDictionary(count: count)
            for index in 0..<count {
                json.key(entries[index].key)
                json.value(entries[index].value)
            }
            if let pendingKey { json.key(pendingKey) }
            writer = json
        }
        next(&writer!)
    }

    mutating func beginDictionary(count: Int) {
        // The top dictionary begins the walk; any other is a value that is not flat.
        if writer == nil, pendingKey == nil, self.count == 0 { return }
        handOver { $0.beginDictionary(count: count) }
    }

    mutating func key(_ ascii: UnsafeBufferPointer<UInt8>) {
        guard writer == nil, FlatJSONText.isPlain(ascii) else { return handOver { $0.key(ascii) } }
        pendingKey = ascii
    }

    mutating func endDictionary() {
        if writer != nil { writer!.endDictionary() }
    }

    mutating func beginArray(count: Int) { handOver { $0.beginArray(count: count) } }
    mutating func endArray() { handOver { $0.endArray() } }

    mutating func string(_ ascii: UnsafeBufferPointer<UInt8>) {
        guard writer == nil, FlatJSONText.isPlain(ascii) else { return handOver { $0.string(ascii) } }
        add(.asciiString(ascii))
    }

    mutating func integer(_ value: Int64) { add(.integer(value)) }
    mutating func real(_ value: Double) { handOver { $0.real(value) } }
    mutating func boolean(_ value: Bool) { add(.boolean(value)) }
    mutating func data(_ bytes: UnsafeBufferPointer<UInt8>) { handOver { $0.data(bytes) } }
    mutating func date(_ value: Date) { handOver { $0.date(value) } }
}

extension JSONTextWalker {
    /// A flat member's value.
    fileprivate mutating func value(_ value: FlatDictionaryEntry.Value) {
        switch value {
        case .asciiString(let string): self.string(string)
        case .integer(let integer): self.integer(integer)
        case .boolean(let flag): boolean(flag)
        }
    }
}
