import LinkJSON

/// The arguments of one operation, read with `invalidArgument` errors that name the operation,
/// the argument and what was wrong.
///
/// A member set to `null` counts as absent for the optional readers.
public struct Arguments: Sendable {
    /// The arguments as sent.
    public let object: JSONObject
    /// The operation they belong to, used in error messages.
    public let op: String

    /// Wraps the `args` of a request for `op`.
    public init(_ object: JSONObject, op: String) {
        self.object = object
        self.op = op
    }

    /// The raw value of `key`, if present. Objects inside it may be kept as their text, read
    /// each time their members are (``JSONValue/materialized`` reads them once).
    public func value(_ key: String) -> JSONValue? {
        object[key]
    }

    /// Whether `key` is present and not `null`.
    public func contains(_ key: String) -> Bool {
        if let value = object[key], !value.isNull { return true }
        return false
    }

    /// A required string.
    public func string(_ key: String) throws -> String {
        try required(key, optionalString(key))
    }

    /// A string, or `nil` when absent.
    public func optionalString(_ key: String) throws -> String? {
        try read(key, expected: "a string") { $0.stringValue }
    }

    /// A required boolean.
    public func bool(_ key: String) throws -> Bool {
        try required(key, optionalBool(key))
    }

    /// A boolean, or `nil` when absent.
    public func optionalBool(_ key: String) throws -> Bool? {
        try read(key, expected: "a boolean") { $0.boolValue }
    }

    /// An integer; a number with an integral value is accepted.
    ///
    /// - Parameter range: when given, values outside it are refused, naming the range.
    public func int(_ key: String, range: ClosedRange<Int64>? = nil) throws -> Int64 {
        try required(key, optionalInt(key, range: range))
    }

    /// An integer, or `nil` when absent; see ``int(_:range:)``.
    public func optionalInt(_ key: String, range: ClosedRange<Int64>? = nil) throws -> Int64? {
        guard let number = try read(key, expected: "an integer", { $0.intValue }) else { return nil }
        if let range, !range.contains(number) {
            throw invalid("argument '\(key)' must be in \(range.lowerBound)...\(range.upperBound), got \(number)")
        }
        return number
    }

    /// A required number.
    public func double(_ key: String) throws -> Double {
        try required(key, optionalDouble(key))
    }

    /// A number, or `nil` when absent.
    public func optionalDouble(_ key: String) throws -> Double? {
        try read(key, expected: "a number") { $0.doubleValue }
    }

    /// A required object.
    public func object(_ key: String) throws -> JSONObject {
        try required(key, optionalObject(key))
    }

    /// An object, or `nil` when absent; read from its text at once (see
    /// ``ControlCodec/parseRequest(line:)``).
    public func optionalObject(_ key: String) throws -> JSONObject? {
        try read(key, expected: "an object") { $0.objectValue?.materialized }
    }

    /// Throws as ``optionalObject(_:)`` does when `key` is present and not an object, without
    /// reading an object kept as text: a check of the type alone.
    public func checkIsObject(_ key: String) throws {
        _ = try read(key, expected: "an object") { $0.objectValue.map { _ in () } }
    }

    /// Throws as ``optionalArray(_:)`` does when `key` is present and not an array, without
    /// reading the objects in it.
    public func checkIsArray(_ key: String) throws {
        _ = try read(key, expected: "an array") { $0.arrayValue.map { _ in () } }
    }

    /// A required array.
    public func array(_ key: String) throws -> [JSONValue] {
        try required(key, optionalArray(key))
    }

    /// An array, or `nil` when absent; the objects in it read from their text at once.
    public func optionalArray(_ key: String) throws -> [JSONValue]? {
        try read(key, expected: "an array") { $0.arrayValue != nil ? $0.materialized.arrayValue : nil }
    }

    /// Refuses any argument not in `allowed` (a handful of names: scanned, not hashed), naming
    /// the first one and listing the accepted names.
    public func rejectUnknownKeys(allowed: [String]) throws {
        guard let unknown = object.first(where: { !allowed.contains($0.key) })?.key else { return }
        if allowed.isEmpty {
            throw invalid("unknown argument '\(unknown)' (this operation takes no arguments)")
        }
        throw invalid("unknown argument '\(unknown)' (expected one of: \(allowed.sorted().joined(separator: ", ")))")
    }

    /// An `invalidArgument` error prefixed with the operation name.
    public func invalid(_ message: String) -> ControlError {
        .control(.invalidArgument, "\(op): \(message)")
    }

    private func read<T>(_ key: String, expected: String, _ extract: (JSONValue) -> T?) throws -> T? {
        guard let value = object[key], !value.isNull else { return nil }
        guard let result = extract(value) else {
            throw invalid("argument '\(key)' must be \(expected), got \(value.typeName)")
        }
        return result
    }

    private func required<T>(_ key: String, _ value: T?) throws -> T {
        guard let value else {
            throw invalid("missing required argument '\(key)'")
        }
        return value
    }
}
