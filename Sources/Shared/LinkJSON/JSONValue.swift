/// A JSON value as the control protocol carries it.
///
/// Integers that fit in `Int64` are kept apart from other numbers, so ids, codes and counts
/// survive a round trip exactly.
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

extension JSONValue {
    /// The member named `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    /// The element at `index` when this is an array and the index is in bounds.
    public subscript(index: Int) -> JSONValue? {
        guard case .array(let array) = self, array.indices.contains(index) else { return nil }
        return array[index]
    }

    /// The string, when this is a string.
    public var stringValue: String? {
        guard case .string(let value) = self else { return nil }
        return value
    }

    /// The integer, when this is an integer or a double with an integral value that fits `Int64`.
    public var intValue: Int64? {
        switch self {
        case .int(let value):
            return value
        case .double(let value):
            guard value.rounded(.towardZero) == value,
                value >= -9_223_372_036_854_775_808.0, value < 9_223_372_036_854_775_808.0
            else { return nil }
            return Int64(value)
        default:
            return nil
        }
    }

    /// The number as a double, when this is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The boolean, when this is a boolean.
    public var boolValue: Bool? {
        guard case .bool(let value) = self else { return nil }
        return value
    }

    /// The object, when this is an object.
    public var objectValue: JSONObject? {
        guard case .object(let value) = self else { return nil }
        return value
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSONValue]? {
        guard case .array(let value) = self else { return nil }
        return value
    }

    /// Whether this is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The JSON name of this value's type, for error messages:
    /// `null`, `boolean`, `integer`, `number`, `string`, `array` or `object`.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .int: return "integer"
        case .double: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

extension JSONValue {
    /// This value with every object inside read from its text, as ``JSON/parse(_:)`` gives it
    /// (see ``JSON/parse(_:keepingObjectsAsTextFrom:)``): for a value whose members are read
    /// more than once.
    public var materialized: JSONValue {
        switch self {
        case .object(let object): return .object(object.materialized)
        case .array(let elements) where elements.contains(where: \.holdsText): return .array(elements.map(\.materialized))
        default: return self
        }
    }

    /// Whether an object in this value is kept as text.
    var holdsText: Bool {
        switch self {
        case .object(let object): return object.holdsText
        case .array(let elements): return elements.contains(where: \.holdsText)
        default: return false
        }
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text of this value.
    public var description: String { JSON.serialize(self) }
}

extension JSONValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .int(value) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements))
    }
}

extension JSONValue: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self = .null }
}
