#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinkJSON
import WireProtocol

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
        var writer = JSONTextWalker(capacity: bytes.count + bytes.count / 2)
        if PropertyListCodec.walkDictionary(bytes, with: &writer) {
            return .object(writer.json.object())
        }
        guard let entries = try? PropertyListCodec.decodeEntries(bytes) else { return nil }
        return json(fromEntries: entries)
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
            entries.append((key, try propertyList(from: member, path: {
                let parent = path()
                return parent.isEmpty ? key : "\(parent).\(key)"
            })))
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
