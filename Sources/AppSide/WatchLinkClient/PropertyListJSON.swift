import Foundation
import LinkControl
import LinkJSON
#if canImport(CoreFoundation) && canImport(Darwin)
import CoreFoundation
#endif

/// Property-list values (`[String: Any]` dictionaries and what they hold) to and from the
/// control protocol's JSON, for the app-side frameworks (`WatchConnectivity`'s payloads,
/// `WatchKit`'s task userInfo).
///
/// Property-list values are strings, numbers, booleans, `Data`, `Date`, arrays and
/// dictionaries with string keys, as Swift values or their Foundation classes (`NSString`,
/// `NSNumber`, `NSData`, `NSDate`, `NSArray`, `NSDictionary`). `Data` travels as
/// `{"$data": base64}` and `Date` as `{"$date": ISO 8601}`. Received numbers come back as
/// `NSNumber` (so `as? Int`, `as? Double` and `as? Bool` read them as on a device), the other
/// values as Swift's `String`, `Data`, `Date`, `[Any]` and `[String: Any]`.
package enum PropertyListJSON {
    /// A value that is not a property-list value: where (`items[2].when`) and what it is.
    package struct Unsupported: Error, Sendable, CustomStringConvertible {
        package let path: String
        package let what: String
        package var description: String {
            "'\(path)' is \(what), not a property-list value (String, Number, Bool, Data, Date, Array or Dictionary)"
        }
    }

    /// `dictionary` as a JSON object.
    ///
    /// - Throws: ``Unsupported`` naming the key of the first value that is not a property-list value.
    package static func json(from dictionary: [String: Any]) throws(Unsupported) -> JSONObject {
        var object = JSONObject()
        for key in dictionary.keys.sorted() {
            guard let value = dictionary[key] else { continue }
            object[key] = try json(from: value, path: key)
        }
        return object
    }

    /// `value` as JSON; `path` names it in errors (`items[2].when`).
    package static func json(from value: Any, path: String) throws(Unsupported) -> JSONValue {
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            return try json(from: number, path: path)
        }
        switch value {
        case let flag as Bool where type(of: value) == Bool.self:
            return .bool(flag)
        case let text as String:
            return .string(text)
        case let text as Substring:
            return .string(String(text))
        case let data as Data:
            return WatchLinkData.json(data)
        case let date as Date:
            return WatchLinkData.json(date)
        default:
            break
        }
        if let number = signedInteger(value) {
            return .int(number)
        }
        if let number = unsignedInteger(value) {
            guard let exact = Int64(exactly: number) else {
                throw unsupported(path, "the integer \(number), outside the range of a 64-bit signed integer")
            }
            return .int(exact)
        }
        if let number = real(value) {
            guard number.isFinite else { throw unsupported(path, "the number \(number), which JSON cannot carry") }
            return .double(number)
        }
        if let dictionary = value as? [String: Any] {
            if dictionary.count == 1, let key = dictionary.keys.first, key == PlistJSON.dataKey || key == PlistJSON.dateKey {
                throw unsupported(
                    path, "a dictionary whose only key is '\(key)', which the control protocol reads as \(key == PlistJSON.dataKey ? "Data" : "a Date")")
            }
            var object = JSONObject()
            for key in dictionary.keys.sorted() {
                guard let member = dictionary[key] else { continue }
                object[key] = try json(from: member, path: "\(path).\(key)")
            }
            return .object(object)
        }
        if let dictionary = value as? NSDictionary {
            for key in dictionary.allKeys where !(key is String) {
                throw unsupported(path, "a dictionary with the key \(key) of type \(type(of: key)) (keys must be strings)")
            }
            throw unsupported(path, "a dictionary that cannot be read as [String: Any]")
        }
        if let array = value as? [Any] {
            var elements: [JSONValue] = []
            elements.reserveCapacity(array.count)
            for (index, element) in array.enumerated() {
                elements.append(try json(from: element, path: "\(path)[\(index)]"))
            }
            return .array(elements)
        }
        throw unsupported(path, "a value of type \(type(of: value))")
    }

    private static func json(from number: NSNumber, path: String) throws(Unsupported) -> JSONValue {
        if isBoolean(number) { return .bool(number.boolValue) }
        switch String(cString: number.objCType) {
        case "f", "d":
            let real = number.doubleValue
            guard real.isFinite else { throw unsupported(path, "the number \(real), which JSON cannot carry") }
            return .double(real)
        case "Q", "L", "I", "S", "C":
            guard let exact = Int64(exactly: number.uint64Value) else {
                throw unsupported(path, "the integer \(number.uint64Value), outside the range of a 64-bit signed integer")
            }
            return .int(exact)
        default:
            return .int(number.int64Value)
        }
    }

    private static func isBoolean(_ number: NSNumber) -> Bool {
        #if canImport(Darwin)
        return CFGetTypeID(number) == CFBooleanGetTypeID()
        #else
        return String(cString: number.objCType) == "c"
        #endif
    }

    private static func signedInteger(_ value: Any) -> Int64? {
        switch value {
        case let number as Int: return Int64(number)
        case let number as Int8: return Int64(number)
        case let number as Int16: return Int64(number)
        case let number as Int32: return Int64(number)
        case let number as Int64: return number
        default: return nil
        }
    }

    private static func unsignedInteger(_ value: Any) -> UInt64? {
        switch value {
        case let number as UInt: return UInt64(number)
        case let number as UInt8: return UInt64(number)
        case let number as UInt16: return UInt64(number)
        case let number as UInt32: return UInt64(number)
        case let number as UInt64: return number
        default: return nil
        }
    }

    private static func real(_ value: Any) -> Double? {
        switch value {
        case let number as Double: return number
        case let number as Float: return Double(number)
        case let number as CGFloat: return Double(number)
        case let number as Decimal: return NSDecimalNumber(decimal: number).doubleValue
        default: return nil
        }
    }

    private static func unsupported(_ path: String, _ what: String) -> Unsupported {
        Unsupported(path: path, what: what)
    }

    // MARK: JSON to property lists

    /// The dictionary a JSON object stands for.
    package static func dictionary(from object: JSONObject) -> [String: Any] {
        var dictionary: [String: Any] = [:]
        dictionary.reserveCapacity(object.count)
        for (key, member) in object {
            dictionary[key] = value(from: member)
        }
        return dictionary
    }

    /// The property-list value a JSON value stands for (`NSNull` for `null`, which no daemon sends).
    package static func value(from json: JSONValue) -> Any {
        switch json {
        case .null:
            return NSNull()
        case .bool(let flag):
            return NSNumber(value: flag)
        case .int(let number):
            return NSNumber(value: number)
        case .double(let number):
            return NSNumber(value: number)
        case .string(let text):
            return text
        case .array(let elements):
            return elements.map { value(from: $0) }
        case .object(let object):
            if let data = WatchLinkData.data(json) { return data }
            if let date = WatchLinkData.date(json) { return date }
            return dictionary(from: object)
        }
    }
}
