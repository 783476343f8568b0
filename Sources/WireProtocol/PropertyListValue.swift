#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A value a property list can hold: what WatchConnectivity lets a dictionary carry.
public enum PropertyListValue: Sendable, Hashable {
    case string(String)
    case integer(Int64)
    case real(Double)
    case boolean(Bool)
    case data([UInt8])
    case date(Date)
    case array([PropertyListValue])
    case dictionary([String: PropertyListValue])

    /// The name of the kind of value, for messages: `"string"`, `"integer"`, ...
    public var kindName: String {
        switch self {
        case .string: return "string"
        case .integer: return "integer"
        case .real: return "real"
        case .boolean: return "boolean"
        case .data: return "data"
        case .date: return "date"
        case .array: return "array"
        case .dictionary: return "dictionary"
        }
    }
}
