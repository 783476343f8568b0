/// One value of an SQLite column or parameter, in SQLite's five storage classes.
public enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])

    /// The integer, if this is `.integer`.
    public var integerValue: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The text, if this is `.text`.
    public var textValue: String? {
        if case .text(let value) = self { return value }
        return nil
    }

    /// The bytes, if this is `.blob`.
    public var blobValue: [UInt8]? {
        if case .blob(let value) = self { return value }
        return nil
    }
}

extension SQLiteValue: ExpressibleByNilLiteral {
    public init(nilLiteral: ()) { self = .null }
}

extension SQLiteValue: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension SQLiteValue: ExpressibleByFloatLiteral {
    public init(floatLiteral value: Double) { self = .real(value) }
}

extension SQLiteValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .text(value) }
}
